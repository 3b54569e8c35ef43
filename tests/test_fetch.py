"""``tooleval data fetch`` against a 127.0.0.1 server that serves ../shared/data.

The shared copy has the upstream repositories' paths under one folder per source, so a server
rooted there is a mirror (``<root>/<source>/<path>``). Expected sums, sizes and record counts
come from the SOURCE.md files written when the data was copied, not from the code under test.
"""

from __future__ import annotations

import base64
import filecmp
import hashlib
import json
import re
import threading
from collections.abc import Iterator
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from http_fixtures import Fault, StaticServer, serve_directory
from typer.testing import CliRunner

from tooleval_agents.appbench.loaders import load_category
from tooleval_agents.cli import app
from tooleval_agents.data.download import fetch
from tooleval_agents.data.fetch import (
    BASE_URL_ENV,
    DEFAULT_BASE_URL,
    FetchError,
    load_manifest,
    select_files,
    url_template,
    verify,
)
from tooleval_agents.errors import ChecksumError, ToolevalError
from tooleval_agents.redaction import redact_text
from tooleval_agents.ultratool.loaders import load_raw, load_task

PINNED = {  # from the issue ("Data location") and each SOURCE.md
    "ultratool": ("JoeYing1019/UltraTool", "9f3793c3f9396b840631833ef76fe4f20c057c39"),
    "appbench": ("ruleGreen/AppBench", "81539eec8c46cb03e63f3e30f979fd03998057fb"),
    "sgd": ("google-research-datasets/dstc8-schema-guided-dialogue",
            "e852981ae34990f4358979625854259302feaa78"),
}
quiet_fetch = partial(fetch, progress=False, backoff=0.0)
"""fetch without a progress bar or waits between retries."""


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx honours proxy variables; loopback requests must not go through one."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                 "all_proxy", BASE_URL_ENV):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server(shared_data: Path) -> Iterator[StaticServer]:
    with serve_directory(shared_data) as s:
        yield s


NOT_SHARED = {"apps", "scorer", "train-dialogues", "dev-dialogues", "test-dialogues"}
"""Groups pinned from the upstream snapshot that the shared copy does not hold (AppBench's app
classes, whose dicts it has as derived/apps_apis.json instead; AppBench's official scoring
functions, which only the parity tests run; the SGD dialogue files beyond the three test files
AppBench's gold calls come from)."""


def _source_md_table(shared_data: Path, source: str) -> dict[str, dict[str, str]]:
    """Rows of the file table in SOURCE.md, keyed by path, columns by header name."""
    rows: dict[str, dict[str, str]] = {}
    header: list[str] | None = None
    for line in (shared_data / source / "SOURCE.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == "path":
            header = cells
        elif header and line.startswith("|") and re.match(r"[\w-]+/|LICENSE", cells[0]):
            rows[cells[0]] = dict(zip(header, cells, strict=True))
    return rows


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- manifest ----------------------------------------------------------------------------------


def test_manifest_pins_the_three_sources_at_the_agreed_commits() -> None:
    manifest = load_manifest()
    assert set(manifest.sources) == set(PINNED)
    for name, (repo, commit) in PINNED.items():
        assert (manifest.sources[name].repo, manifest.sources[name].commit) == (repo, commit)
        assert manifest.sources[name].licence


@pytest.mark.parametrize("source", ["ultratool", "appbench", "sgd"])
def test_manifest_agrees_with_source_md(shared_data: Path, source: str) -> None:
    table = _source_md_table(shared_data, source)
    files = {f.path: f for f in load_manifest().sources[source].files if f.group not in NOT_SHARED}
    assert set(files) == set(table)
    for path, row in table.items():
        if "bytes" in row:  # the tables of official code files give only sha256
            assert files[path].size == int(row["bytes"]), path
        if "sha256" in row:
            assert files[path].sha256 == row["sha256"], path


def test_manifest_matches_the_shared_copy(shared_data: Path) -> None:
    for source, entry in load_manifest().sources.items():
        for f in entry.files:
            local = shared_data / source / f.path
            if f.group in NOT_SHARED:
                continue
            assert local.stat().st_size == f.size, local
            assert _sha(local) == f.sha256, local


def test_groups_and_include_select_files() -> None:
    data = select_files("ultratool")
    both = select_files("ultratool", groups=["data", "predictions"])
    # SOURCE.md: 45 data files (22 under data/) and 3 official code files (the prompt group).
    assert len(data) == 22 + 3 and len(both) == 45
    assert {f.group for f in data} == {"data", "prompts"}
    assert {f.path for f in both if f.size == 0} == {  # the two files empty upstream
        "predictions/Chinese-dataset/gpt-3.5/eval/inferback/inferback_tool_creation_eval.json",
        "predictions/Chinese-dataset/gpt-4/eval/inferback/inferback_planning_eval.json"}
    # an include glob alone reaches optional groups
    preds = select_files("ultratool", include=["predictions/English-dataset/gpt-4/*"])
    assert len(preds) == 5 and all(f.group == "predictions" for f in preds)
    with pytest.raises(ToolevalError, match="no pinned sgd file"):
        select_files("sgd", include=["nothing/*"])
    with pytest.raises(ToolevalError, match="no file group"):
        select_files("appbench", groups=["predictions"])
    assert not any(f.path.startswith("derived/") for f in select_files("appbench"))


def test_url_templates() -> None:
    assert url_template(None) == DEFAULT_BASE_URL
    assert url_template("http://127.0.0.1:1/") == "http://127.0.0.1:1/{source}/{path}"
    for bad in ("http://127.0.0.1:1/{repo}", "http://127.0.0.1:1/{nope}/{path}"):
        with pytest.raises(ToolevalError, match="bad base URL"):
            url_template(bad)


# --- fetching ----------------------------------------------------------------------------------


def test_fetch_whole_appbench_then_load(tmp_path: Path, shared_data: Path,
                                        server: StaticServer) -> None:
    report = quiet_fetch("appbench", tmp_path, base_url=server.url)
    assert [f.status for f in report.files] == ["downloaded"] * (4 + 7)  # + official code
    assert server.count("/appbench/data/test/") == 4 and server.count() == 4 + 7
    for f in report.files:
        assert filecmp.cmp(tmp_path / "appbench" / f.path, shared_data / "appbench" / f.path,
                           shallow=False)
    counts = {c: len(load_category(tmp_path, c)) for c in ("ss", "sm", "ms", "mm")}
    assert counts == {"ss": 200, "sm": 200, "ms": 201, "mm": 200}  # SOURCE.md
    assert not (tmp_path / "appbench" / "derived").exists()
    assert not list(tmp_path.rglob("*.part"))


def test_second_fetch_downloads_nothing(tmp_path: Path, server: StaticServer) -> None:
    quiet_fetch("appbench", tmp_path, base_url=server.url)
    before = server.count()
    report = quiet_fetch("appbench", tmp_path, base_url=server.url)
    assert server.count() == before
    assert {f.status for f in report.files} == {"present"} and report.bytes_downloaded == 0


def test_fetch_replaces_a_damaged_local_file_only(tmp_path: Path, server: StaticServer) -> None:
    quiet_fetch("appbench", tmp_path, base_url=server.url)
    damaged = tmp_path / "appbench" / "data" / "test" / "test_sm.json"
    damaged.write_bytes(damaged.read_bytes()[:-10])
    before = server.count()
    report = quiet_fetch("appbench", tmp_path, base_url=server.url)
    assert server.count() - before == 1
    assert [f.path for f in report.transferred] == ["data/test/test_sm.json"]
    assert report.transferred[0].status == "replaced"
    assert verify("appbench", tmp_path).ok


def test_fetch_ultratool_subset_then_load(tmp_path: Path, server: StaticServer) -> None:
    report = quiet_fetch("ultratool", tmp_path, base_url=server.url,
                         include=["data/English-dataset/test.json",
                                  "data/English-dataset/test_set/planning.json"])
    assert len(report.files) == 2 and server.count() == 2
    assert len(load_raw(tmp_path, "en")) == 1000  # SOURCE.md record counts
    assert len(load_task(tmp_path, "planning", "en")) == 1000


def test_github_shaped_template(tmp_path: Path, shared_data: Path) -> None:
    """The default template's layout ({repo}/{commit}/{path}) served from 127.0.0.1."""
    mirror = tmp_path / "mirror"
    repo, commit = PINNED["sgd"]
    (mirror / repo).mkdir(parents=True)
    (mirror / repo / commit).symlink_to(shared_data / "sgd", target_is_directory=True)
    with serve_directory(mirror) as s:
        template = DEFAULT_BASE_URL.replace("https://raw.githubusercontent.com", s.url)
        quiet_fetch("sgd", tmp_path / "data", base_url=template, include=["LICENSE.txt"])
        assert s.requests == [f"/{repo}/{commit}/LICENSE.txt"]
    assert (tmp_path / "data" / "sgd" / "LICENSE.txt").is_file()


def test_base_url_from_environment(tmp_path: Path, server: StaticServer,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BASE_URL_ENV, server.url + "/{source}/{path}")
    quiet_fetch("sgd", tmp_path, include=["test/schema.json"])
    assert server.requests == ["/sgd/test/schema.json"]


def test_corrupted_download_raises_and_leaves_nothing(tmp_path: Path,
                                                      server: StaticServer) -> None:
    entry = next(f for f in load_manifest().sources["sgd"].files if f.path == "LICENSE.txt")
    server.replace("/sgd/LICENSE.txt", b"tampered licence")
    with pytest.raises(ChecksumError) as err:
        quiet_fetch("sgd", tmp_path, base_url=server.url, include=["LICENSE.txt"])
    message = str(err.value)
    assert "LICENSE.txt" in message and entry.sha256 in message
    assert hashlib.sha256(b"tampered licence").hexdigest() in message
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_sgd_dialogues_of_every_split_on_request() -> None:
    entry = load_manifest().sources["sgd"]
    assert entry.default_groups == ["data"]  # a plain fetch still gets only the data group
    assert {f.group for f in select_files("sgd")} == {"data"}
    paths = [f.path for f in entry.files]
    assert len(paths) == len(set(paths))
    unpinned = entry.unpinned or ""
    for split in ("train", "dev", "test"):
        chosen = select_files("sgd", include=[f"{split}/dialogues_*"])
        assert chosen == [f for f in entry.files if re.fullmatch(
            rf"{split}/dialogues_\d{{3}}\.json", f.path)]
        assert all(f.size > 0 and re.fullmatch("[0-9a-f]{64}", f.sha256) for f in chosen)
        group = select_files("sgd", groups=[f"{split}-dialogues"])
        # test: the three AppBench source files stay in the default group
        assert {f.path for f in chosen} - {f.path for f in group} == (
            {"test/dialogues_003.json", "test/dialogues_004.json", "test/dialogues_024.json"}
            if split == "test" else set())
        # every upstream file of the split is pinned or named as unpinned (SOURCE.md: 44)
        numbers = {int(p[-8:-5]) for p in paths if p.startswith(f"{split}/dialogues_")}
        numbers |= {int(n) for n in re.findall(rf"{split}/dialogues_(\d{{3}})", unpinned)}
        assert numbers == set(range(1, {"train": 127, "dev": 20, "test": 34}[split] + 1))
    assert len(re.findall(r"dialogues_\d{3}\.json", unpinned)) == 44


def test_sgd_dialogue_download_is_checksum_checked(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    (mirror / "sgd" / "train").mkdir(parents=True)
    (mirror / "sgd" / "train" / "dialogues_001.json").write_bytes(b"[]")
    with serve_directory(mirror) as s, pytest.raises(ChecksumError, match="dialogues_001"):
        quiet_fetch("sgd", tmp_path / "data", base_url=s.url,
                    include=["train/dialogues_001.json"])
    assert not (tmp_path / "data" / "sgd" / "train" / "dialogues_001.json").exists()


def test_404_names_the_url(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with serve_directory(empty) as s, pytest.raises(FetchError) as err:
        quiet_fetch("appbench", tmp_path / "data", base_url=s.url, include=["*test_ss.json"])
    assert err.value.status == 404
    assert f"{s.url}/appbench/data/test/test_ss.json" in str(err.value)
    assert "404" in str(err.value)
    assert s.count() == 1  # a 404 is not retried
    assert [p for p in (tmp_path / "data").rglob("*") if p.is_file()] == []


@pytest.mark.parametrize("fault", [Fault(status=503), Fault(drop=True)],
                         ids=["503", "connection-dropped"])
def test_transient_failure_is_retried(tmp_path: Path, server: StaticServer,
                                      fault: Fault) -> None:
    server.fail("/sgd/test/schema.json", fault)
    report = quiet_fetch("sgd", tmp_path, base_url=server.url, include=["test/schema.json"])
    assert server.count("/sgd/test/schema.json") == 2
    assert report.files[0].attempts == 2
    assert verify("sgd", tmp_path, groups=[]).ok


def test_persistent_5xx_gives_up(tmp_path: Path, server: StaticServer) -> None:
    server.fail("/sgd/dev/schema.json", 502, 503, 504)
    with pytest.raises(FetchError, match="after 3 attempts") as err:
        quiet_fetch("sgd", tmp_path, base_url=server.url, include=["dev/schema.json"], retries=2)
    assert err.value.status == 504
    assert server.count() == 3
    assert not (tmp_path / "sgd" / "dev" / "schema.json").exists()


# --- command line ------------------------------------------------------------------------------


def test_cli_fetches_whole_sgd_and_verifies(tmp_path: Path, shared_data: Path,
                                            server: StaticServer) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["data", "fetch", "sgd", "--data-dir", str(tmp_path),
                                 "--base-url", server.url, "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "7 files checked, 7 downloaded" in result.output
    assert "CC BY-SA 4.0" in result.output
    for f in load_manifest().sources["sgd"].files:
        if f.group not in NOT_SHARED:
            assert _sha(tmp_path / "sgd" / f.path) == _sha(shared_data / "sgd" / f.path)
    schema = json.loads((tmp_path / "sgd" / "test" / "schema.json").read_text(encoding="utf-8"))
    assert len(schema) == 21  # SOURCE.md: 21 services in the test schema

    again = runner.invoke(app, ["data", "fetch", "sgd", "--data-dir", str(tmp_path),
                                "--base-url", server.url, "--json"])
    assert again.exit_code == 0
    assert {f["status"] for f in json.loads(again.output)["files"]} == {"present"}
    assert server.count() == 7

    ok = runner.invoke(app, ["data", "verify", "sgd", "--data-dir", str(tmp_path)])
    assert ok.exit_code == 0, ok.output


def test_cli_include_reaches_predictions(tmp_path: Path, server: StaticServer) -> None:
    result = CliRunner().invoke(app, [
        "data", "fetch", "ultratool", "--data-dir", str(tmp_path), "--base-url", server.url,
        "--no-progress", "--include", "predictions/English-dataset/gpt-4/planning.json"])
    assert result.exit_code == 0, result.output
    assert server.requests == ["/ultratool/predictions/English-dataset/gpt-4/planning.json"]


def test_cli_verify_reports_damage(tmp_path: Path, server: StaticServer) -> None:
    quiet_fetch("appbench", tmp_path, base_url=server.url)
    target = tmp_path / "appbench" / "data" / "test" / "test_ss.json"
    data = bytearray(target.read_bytes())
    data[100] ^= 1  # same size, different sum
    target.write_bytes(bytes(data))
    (tmp_path / "appbench" / "data" / "test" / "test_mm.json").unlink()

    report = verify("appbench", tmp_path)
    status = {f.path: f.status for f in report.files}
    assert status["data/test/test_ss.json"] == "wrong_sha256"
    assert status["data/test/test_mm.json"] == "missing"
    assert not report.ok
    result = CliRunner().invoke(app, ["data", "verify", "appbench", "--data-dir",
                                      str(tmp_path), "--json"])
    assert result.exit_code == 1
    assert "tooleval data fetch appbench" in result.output


def test_cli_errors_are_clear(tmp_path: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(app, ["data", "fetch", "nosuch", "--data-dir", str(tmp_path)])
    assert bad.exit_code == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    with serve_directory(empty) as s:
        result = runner.invoke(app, ["data", "fetch", "sgd", "--data-dir", str(tmp_path),
                                     "--base-url", s.url, "--no-progress"])
    assert result.exit_code == 1
    assert "404" in result.output and "/sgd/" in result.output


class _Recorder(BaseHTTPRequestHandler):
    """404 for everything except ``/redirect/...`` (a redirect to ftp://), recording the
    Authorization header of each request."""

    seen: ClassVar[list[str | None]] = []

    def do_GET(self) -> None:
        type(self).seen.append(self.headers.get("Authorization"))
        if self.path.startswith("/redirect/"):
            self.send_response(302)
            self.send_header("Location", "ftp://127.0.0.1/file")
        else:
            self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                 "all_proxy", BASE_URL_ENV):
        monkeypatch.delenv(name, raising=False)
    _Recorder.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("base", ["127.0.0.1:8000/mirror", "ftp://127.0.0.1/", "{path}"])
def test_base_url_needs_an_http_scheme(base: str, tmp_path: Path) -> None:
    with pytest.raises(ToolevalError, match="http:// or https://"):
        url_template(base)
    with pytest.raises(ToolevalError, match="http:// or https://"):
        fetch("sgd", tmp_path, base_url=base, progress=False)


def test_negative_retries_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="retries"):
        fetch("sgd", tmp_path, base_url="http://127.0.0.1:1/", progress=False, retries=-1)


def test_credentials_are_sent_but_never_shown(tmp_path: Path, recorder: str) -> None:
    password = "s3cret-Passw0rd"
    base = f"http://alice:{password}@{recorder}/"
    assert url_template(base) == f"http://{recorder}/{{source}}/{{path}}"
    with pytest.raises(FetchError) as err:
        fetch("sgd", tmp_path, base_url=base, include=["LICENSE.txt"], progress=False)
    assert err.value.status == 404
    assert password not in str(err.value) and password not in err.value.url
    assert f"http://{recorder}/sgd/LICENSE.txt" in str(err.value)
    token = base64.b64encode(f"alice:{password}".encode()).decode()
    assert _Recorder.seen == [f"Basic {token}"]
    assert redact_text(f"oops {password}") == "oops <redacted>"


def test_other_http_errors_become_fetch_errors(tmp_path: Path, recorder: str) -> None:
    with pytest.raises(FetchError, match="UnsupportedProtocol"):
        fetch("sgd", tmp_path, base_url=f"http://{recorder}/redirect/{{path}}",
              include=["LICENSE.txt"], progress=False, backoff=0.0)
