"""Paths built from data or user text stay inside the folder they belong to (issue 22, item 1).

A plugin's ``sources.json`` entry with ``"path": "../../x/pwned.txt"`` or an absolute path made
``tooleval data fetch`` write outside ``--data-dir`` (exit 0); now the manifest is refused when
it loads, one line naming the source and the path. The same check (``tooleval_agents.data.paths.
inside``) guards every other path made from a name: run directories (benchmark, split, model
and strategy names), report files (table and figure names from a benchmark), the viewer's
folders; symlinks are resolved before checking.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import HANG_GUARD_S
from http_fixtures import serve_directory
from langchain_core.runnables import RunnableLambda

from tooleval_agents import (
    Benchmark,
    ExampleFields,
    ExampleScore,
    Located,
    Part,
    Scorer,
    Split,
    Strategy,
    StrategyContext,
    as_corpus,
)
from tooleval_agents.data.paths import PathEscapeError, inside
from tooleval_agents.errors import ToolevalError
from tooleval_agents.models.chat_models import ScriptedChatModel
from tooleval_agents.results.reports import ReportTable, write_report
from tooleval_agents.results.rundir import CONFIG, EXAMPLES, RunDir
from tooleval_agents.run.runner import experiment_name, run_experiment

REPO = Path(__file__).resolve().parents[1]
BODY = b"pwned\n"

PLUGIN = '''
"""A benchmark whose data sources come from the sources.json beside it (a test plugin)."""
import json
from pathlib import Path

from tooleval_agents import Benchmark, Located, Split


class Evil(Benchmark):
    name = "evil"

    def splits(self):
        return [Split("evil", "qa", "en", "language")]

    def locate(self, split, data_dir):
        return Located(Path(data_dir) / "evil" / "en.jsonl", "official")

    def load(self, split, data_dir):
        return []

    def to_example(self, split, record):
        raise NotImplementedError

    def scorer(self, split, *, options=None):
        raise NotImplementedError

    def default_strategy(self, split):
        return "none"

    def data_sources(self):
        return json.loads(Path(__file__).with_name("sources.json").read_text())


BENCHMARK = Evil()
'''


def _entry(path: str, source: str = "evil") -> dict[str, Any]:
    return {source: {"repo": "someone/evil", "commit": "0" * 40, "licence": "none",
                     "groups": {"data": "the data"}, "default_groups": ["data"],
                     "files": [{"path": path, "size": len(BODY),
                                "sha256": hashlib.sha256(BODY).hexdigest(),
                                "group": "data"}]}}


@pytest.fixture
def plugin(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The plugin installed for subprocesses, a mirror serving the file wherever a URL points,
    and a work folder: ``write(entry)`` sets the manifest."""
    root = tmp_path / "plugin"
    root.mkdir()
    (root / "evilplug.py").write_text(PLUGIN, encoding="utf-8")
    dist = root / "evilplug-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: evilplug\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[tooleval_agents.benchmarks]\n"
                                           "evil = evilplug:BENCHMARK\n")
    mirror = tmp_path / "mirror"
    for where in ("x/pwned.txt", "data/ok.txt"):  # served wherever a path leads
        (mirror / where).parent.mkdir(parents=True, exist_ok=True)
        (mirror / where).write_bytes(BODY)
    work = tmp_path / "work" / "deep"
    work.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(root), *filter(None, [os.environ.get("PYTHONPATH")])])}
    with serve_directory(mirror) as server:
        yield {"root": root, "work": work, "env": env, "server": server, "tmp": tmp_path,
               "write": lambda entry: (root / "sources.json").write_text(json.dumps(entry))}


def fetch(plugin: dict[str, Any], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tooleval_agents.cli", "data", "fetch", "evil", "--data-dir",
         "data", "--base-url", plugin["server"].url + "/{path}", "--no-progress", *args],
        env=plugin["env"], cwd=plugin["work"], capture_output=True, text=True, timeout=HANG_GUARD_S)


def assert_one_line(result: subprocess.CompletedProcess[str], code: int, *needles: str) -> None:
    assert result.returncode == code, result.stderr + result.stdout
    assert "Traceback" not in result.stderr + result.stdout
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    for needle in needles:
        assert needle in errors[0], errors[0]


def written(tmp: Path) -> list[Path]:
    """Every pwned.txt under ``tmp`` but the mirror's own."""
    return [p for p in tmp.rglob("pwned.txt") if "mirror" not in p.parts]


# ------------------------------------------------------------------- the manifest (the issue)

@pytest.mark.parametrize("path", ["../../x/pwned.txt", "ABSOLUTE", "data/../../x/pwned.txt",
                                  "data\\..\\..\\x\\pwned.txt", "data/\0pwned.txt"])
def test_a_manifest_path_leaving_the_data_directory_is_refused(plugin: dict[str, Any],
                                                               path: str) -> None:
    path = str(plugin["tmp"] / "x" / "pwned.txt") if path == "ABSOLUTE" else path
    plugin["write"](_entry(path))
    result = fetch(plugin)
    assert_one_line(result, 1, "data source 'evil'", repr(path), "sources.json")
    assert written(plugin["tmp"]) == []
    assert not (plugin["work"] / "data").exists()


def test_a_source_name_leaving_the_data_directory_is_refused(plugin: dict[str, Any]) -> None:
    plugin["write"](_entry("x/pwned.txt", source="../evil"))
    result = fetch(plugin)  # the manifest loads before the source is looked up
    assert_one_line(result, 1, "data source '../evil'", "'..' is not allowed")
    assert written(plugin["tmp"]) == []


def test_a_safe_manifest_still_fetches(plugin: dict[str, Any]) -> None:
    plugin["write"](_entry("data/ok.txt"))
    result = fetch(plugin)
    assert result.returncode == 0, result.stderr
    assert (plugin["work"] / "data" / "evil" / "data" / "ok.txt").read_bytes() == BODY


def test_a_link_inside_the_source_folder_cannot_lead_a_download_out(
        plugin: dict[str, Any]) -> None:
    # The manifest is clean, but the data directory holds a link that leads out of it: the
    # path is checked with links resolved. The source folder itself may be a link (another
    # disk): that is where its files belong.
    plugin["write"](_entry("x/pwned.txt"))
    outside = plugin["tmp"] / "outside"
    outside.mkdir()
    source = plugin["work"] / "data" / "evil"
    source.mkdir(parents=True)
    (source / "x").symlink_to(outside, target_is_directory=True)
    result = fetch(plugin)
    assert_one_line(result, 1, "evil file path 'x/pwned.txt'", "symbolic link")
    assert written(plugin["tmp"]) == []

    (source / "x").unlink()
    source.rmdir()
    disk = plugin["tmp"] / "disk"
    disk.mkdir()
    source.symlink_to(disk, target_is_directory=True)
    assert fetch(plugin).returncode == 0
    assert (disk / "x" / "pwned.txt").read_bytes() == BODY


# ------------------------------------------------------------------- the helper

@pytest.mark.parametrize(("parts", "reason"), [
    (("../x",), "'..' is not allowed"), (("a", "../../x"), "'..' is not allowed"),
    (("/etc/passwd",), "absolute path"), (("a\0b",), "NUL"), (("",), "empty"),
    ((".",), "the folder itself"), (("C:\\x",), "absolute path"),
])
def test_inside_refuses_what_leaves_the_root(tmp_path: Path, parts: tuple[str, ...],
                                             reason: str) -> None:
    with pytest.raises(PathEscapeError, match=reason) as caught:
        inside(tmp_path, *parts, what="run name")
    assert str(caught.value).startswith("run name ")
    assert isinstance(caught.value, ToolevalError)


def test_inside_resolves_links(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "root" / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(PathEscapeError, match="symbolic link"):
        inside(tmp_path / "root", "link/file.txt")
    assert inside(tmp_path / "root", "a/b.txt") == tmp_path / "root" / "a" / "b.txt"
    (tmp_path / "linked_root").symlink_to(tmp_path / "root")  # a linked root is fine
    assert inside(tmp_path / "linked_root", "a.txt") == tmp_path / "linked_root" / "a.txt"


# ------------------------------------------------------------------- run directories, reports

class _Ask(Strategy):
    benchmark, name = "names", "ask"

    def build(self, ctx: StrategyContext) -> Any:
        async def ask(state: dict[str, Any]) -> dict[str, Any]:
            reply = await ctx.model.ainvoke(state["inputs"]["question"])
            return {"raw_outputs": [reply.text], "prediction": reply.text}
        return RunnableLambda(ask)


class _Names(Benchmark):
    """A benchmark whose subset and report table names are whatever it is given."""

    name = "names"

    def __init__(self, subset: str = "en", table: str = "names_table") -> None:
        self.subset, self.table = subset, table

    def splits(self) -> list[Split]:
        return [Split("names", "qa", self.subset, "language")]

    def locate(self, split: Split, data_dir: Path) -> Located:
        return Located(Path(data_dir) / "names.jsonl", "official")

    def load(self, split: Split, data_dir: Path) -> list[Any]:
        return [{"question": "Capital of France?", "answer": "Paris"}]

    def to_example(self, split: Split, record: Any) -> ExampleFields:
        return ExampleFields({"question": record["question"]}, {"answer": record["answer"]})

    def scorer(self, split: Split, *, options: dict[str, Any] | None = None) -> Scorer:
        def score(inputs: dict[str, Any], outputs: dict[str, Any],
                  reference: dict[str, Any]) -> ExampleScore:
            hit = outputs.get("prediction") == reference["answer"]
            return ExampleScore(scores={"exact": 100.0 * hit},
                                parts={"exact": Part(hits=hit, total=1)})
        return Scorer(score=score, aggregate=lambda s: {"exact": as_corpus(s).pooled("exact")},
                      headline=("exact",))

    def default_strategy(self, split: Split) -> str:
        return "ask"

    def strategies(self) -> list[Strategy]:
        return [_Ask()]

    def report_tables(self, runs: Any) -> list[ReportTable]:
        import pandas as pd

        return [ReportTable(self.table, "a table", pd.DataFrame({"run": [r.label for r in runs]}))]


@pytest.fixture
def names(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    from tooleval_agents import registry

    def use(bench: _Names) -> _Names:
        monkeypatch.setitem(registry._REGISTRY, "names", bench)
        return bench
    yield use


def _model(name: str) -> ScriptedChatModel:
    return ScriptedChatModel(rules=[(r"France", "Paris")], default="?", model_name=name)


@pytest.mark.parametrize("model_name", ["../../pwned", "/tmp/pwned", "a/\0/../b", ".."])
def test_a_model_name_makes_a_run_directory_inside_out(names: Any, tmp_path: Path,
                                                       model_name: str) -> None:
    names(_Names())
    out = tmp_path / "deep" / "runs"
    summary = run_experiment("names", model=_model(model_name), data_dir=tmp_path,
                             out=out, progress=False, cache=False, upload=False)
    run_dir = Path(summary.run_dir or "")
    assert run_dir.parent == out and (run_dir / EXAMPLES).is_file()
    assert [p.name for p in tmp_path.iterdir()] == ["deep"]  # nothing beside the output root
    assert set(os.listdir(tmp_path / "deep")) == {"runs"}


@pytest.mark.parametrize("subset", ["../../pwned", "a/../../pwned", "x/../../../pwned"])
def test_a_split_name_leaving_out_is_refused_before_anything_is_written(
        names: Any, tmp_path: Path, subset: str) -> None:
    names(_Names(subset=subset))
    out = tmp_path / "deep" / "runs"
    with pytest.raises(PathEscapeError, match="run name"):
        run_experiment("names", model=_model("m"), data_dir=tmp_path, out=out,
                       progress=False, cache=False, upload=False)
    assert list(tmp_path.rglob("*")) == []


def test_a_split_name_with_a_slash_stays_inside_out(names: Any, tmp_path: Path) -> None:
    names(_Names(subset="/tmp/pwned"))
    out = tmp_path / "runs"
    summary = run_experiment("names", model=_model("m"), data_dir=tmp_path, out=out,
                             progress=False, cache=False, upload=False)
    assert Path(summary.run_dir or "").resolve().is_relative_to(out.resolve())
    assert not Path("/tmp/pwned-ask-m").exists()


def test_experiment_names_are_one_folder_name() -> None:
    split = Split("b", "t", "s")
    name = experiment_name(split, "../../strat\0", "openai:../../\0x/y")
    assert "/" not in name and "\0" not in name and ".." not in name.split("-")


def test_a_report_table_name_cannot_leave_the_report_folder(names: Any,
                                                            tmp_path: Path) -> None:
    bench = names(_Names())
    summary = run_experiment("names", model=_model("m"), data_dir=tmp_path,
                             out=tmp_path / "runs", progress=False, cache=False, upload=False)
    report = tmp_path / "deep" / "report"
    write_report([Path(summary.run_dir or "")], report)  # a benchmark's own table: fine
    assert (report / "names_table.csv").is_file()
    bench.table = "../../pwned"
    with pytest.raises(PathEscapeError, match=r"report table '\.\./\.\./pwned\.csv'"):
        write_report([Path(summary.run_dir or "")], report)
    assert not (tmp_path / "pwned.csv").exists()


def test_ids_and_names_in_a_run_directory_do_not_lead_the_viewer_out(names: Any,
                                                                    tmp_path: Path) -> None:
    names(_Names())
    summary = run_experiment("names", model=_model("m"), data_dir=tmp_path,
                             out=tmp_path / "runs", progress=False, cache=False, upload=False)
    run_dir = Path(summary.run_dir or "")
    config = json.loads((run_dir / CONFIG).read_text())
    config["experiment"] = "../../../pwned"
    (run_dir / CONFIG).write_text(json.dumps(config))
    line = json.loads((run_dir / EXAMPLES).read_text())
    line["example_id"] = "../../../pwned\0"
    (run_dir / EXAMPLES).write_text(json.dumps(line) + "\n")
    assert list(RunDir(run_dir).results()) == ["../../../pwned\0"]
    site = tmp_path / "deep" / "site"
    result = subprocess.run([sys.executable, "-m", "tooleval_agents.cli", "view",
                             str(run_dir), "--out", str(site)],
                            capture_output=True, text=True, timeout=HANG_GUARD_S, cwd=REPO)
    assert result.returncode == 0, result.stderr
    inside_site = {p for p in site.rglob("*")}
    assert all(p.is_relative_to(site) for p in inside_site)
    assert [p for p in tmp_path.rglob("*pwned*")] == []
