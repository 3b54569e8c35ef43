"""Regression tests for the review findings: bad data, markup in error text, plugins, parsers
that dropped text, URLs with credentials, deep JSON, offline model specs, shared helpers."""

from __future__ import annotations

import base64
import contextlib
import copy
import hashlib
import json
import threading
import time
import warnings
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, ClassVar

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from typer.testing import CliRunner

from tooleval_agents import ScoringContext, registry
from tooleval_agents.appbench import records as appbench_records
from tooleval_agents.appbench.lines import parse_call_line
from tooleval_agents.appbench.loaders import load_file
from tooleval_agents.cli import app
from tooleval_agents.data.datadir import samples_dir, source_of
from tooleval_agents.data.download import fetch
from tooleval_agents.data.fetch import BASE_URL_ENV, FetchError, url_template
from tooleval_agents.data.jsonio import atomic_write_text, sha256_file
from tooleval_agents.errors import DataFormatError, ToolevalError
from tooleval_agents.models.corruptions import draw
from tooleval_agents.models.redaction import redact_text
from tooleval_agents.models.reference import (
    DEFAULT_NOISE_RATE,
    AnswerKey,
    NoisyReferenceChatModel,
    parse_offline_spec,
)
from tooleval_agents.models.specs import resolve_model
from tooleval_agents.ultratool.benchmark import BENCHMARK as ULTRATOOL
from tooleval_agents.ultratool.calls import parse_call
from tooleval_agents.ultratool.loaders import load_example
from tooleval_agents.ultratool.records import ToolSkeleton
from tooleval_agents.ultratool.stubs import execute_plan

# --- 1. AppBench gold lines --------------------------------------------------------------------


def _appbench_file(tmp_path: Path, shared_data: Path, line: str | None = None) -> Path:
    """The first three SS samples, the second one's first gold line replaced by ``line``."""
    src = shared_data / "appbench" / "data" / "test" / "test_ss.json"
    items = json.loads(src.read_text(encoding="utf-8"))[:3]
    if line is not None:
        items[1]["output"]["api_results"][0] = line
    path = tmp_path / "appbench" / "data" / "test" / "test_ss.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


def test_bad_gold_line_is_reported_at_load_with_file_record_and_line(
        tmp_path: Path, shared_data: Path) -> None:
    path = _appbench_file(tmp_path, shared_data, "Weather: [x = getweather(#city='a')")
    with pytest.raises(DataFormatError) as err:
        load_file(path, "ss")
    assert err.value.path == path
    assert err.value.field == "[1].output.api_results.0"
    assert "not an API call line" in str(err.value)


def test_gold_calls_are_parsed_once_and_follow_the_content(
        tmp_path: Path, shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    [sample, *_] = load_file(_appbench_file(tmp_path, shared_data), "ss")
    twin = sample.model_copy()
    parsed: list[str] = []
    real = appbench_records.parse_call_line

    def counting(text: str) -> Any:
        parsed.append(text)
        return real(text)

    monkeypatch.setattr(appbench_records, "parse_call_line", counting)
    first = sample.calls
    assert sample.calls == first
    assert len(parsed) == len(sample.output.api_results)  # second access: no parsing
    assert sample == twin  # the cache does not make equal samples differ
    line = "weather = getweather(#city='Oslo')"
    changed = sample.model_copy(update={"output": sample.output.model_copy(
        update={"api_results": [line], "used_app": ["Weather"]})})
    assert [(c.app, c.api, c.literal_args) for c in changed.calls] == [
        ("Weather", "getweather", {"city": "Oslo"})]
    assert sample.calls == first


def test_returned_list_is_identifiers_only() -> None:
    with pytest.raises(ValueError, match="not an API call line"):
        parse_call_line("Weather: [x = getweather(#city='a')")
    call = parse_call_line("a ,b= findbus(#from_city='X')")
    assert call.returns == ["a", "b"]


@pytest.mark.parametrize("text", [
    "A" + " " * 50_000 + "x",
    "x" + " " * 50_000 + "= f()",
    "Weather: [x" + " " * 50_000 + "y",
    "a" + " " * 50_000 + ":",
    "A:" + " " * 50_000 + "[" + " " * 50_000,
    "f(" + " " * 50_000 + "#a=" + " " * 50_000,
], ids=["word-spaces", "returns-spaces", "app-spaces", "colon", "bracket", "args"])
def test_long_runs_of_spaces_parse_in_linear_time(text: str) -> None:
    start = time.perf_counter()
    with contextlib.suppress(ValueError):
        parse_call_line(text)
    assert time.perf_counter() - start < 0.25  # quadratic regexes took seconds on 20k spaces


def test_positional_appbench_argument_is_kept() -> None:
    call = parse_call_line("Weather: [w = getweather('Paris', #date='2024-01-01')]")
    assert call.literal_args == {"date": "2024-01-01"}
    assert call.unparsed == "'Paris'"
    assert parse_call_line("w = getweather(#city='Paris')").unparsed is None


# --- 2 and 5. CLI output -----------------------------------------------------------------------


def test_fail_prints_brackets_literally() -> None:
    result = CliRunner().invoke(app, ["data", "push", "x[/bold]y[dim]"])
    assert result.exit_code == 1
    assert "unknown benchmark 'x[/bold]y[dim]'" in " ".join(result.output.split())


def test_data_info_shows_markup_like_errors_and_survives_a_bad_schema(
        tmp_path: Path, shared_data: Path) -> None:
    _appbench_file(tmp_path, shared_data, "[/x] not a call")
    schema = tmp_path / "sgd" / "test" / "schema.json"
    schema.parent.mkdir(parents=True)
    schema.write_text('{"not": "a list"}', encoding="utf-8")
    result = CliRunner().invoke(app, ["data", "info", "--data-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    text = "".join(result.output.split())
    assert "notanAPIcallline:'[/x]notacall'" in text
    assert "expectedaJSONarrayofservices" in text
    result = CliRunner().invoke(app, ["data", "info", "--data-dir", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)["resources"]
    assert row["benchmark"] == "appbench" and row["source"] == "invalid"
    assert "expected a JSON array of services" in row["error"]


# --- 3. Entry points ---------------------------------------------------------------------------


def test_broken_plugin_is_skipped_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    group = registry.ENTRY_POINT_GROUP
    eps = [EntryPoint("broken", "no_such_module_for_tooleval_tests:BENCH", group),
           EntryPoint("ultratool", "tooleval_agents.ultratool.benchmark:BENCHMARK", group),
           EntryPoint("appbench", "tooleval_agents.appbench.benchmark:BENCHMARK", group)]
    monkeypatch.setattr(registry, "entry_points", lambda group: eps)
    monkeypatch.setattr(registry, "_REGISTRY", {})
    monkeypatch.setattr(registry, "_LOADED", False)
    with pytest.warns(RuntimeWarning, match="'broken'.*failed to load"):
        found = registry.benchmarks()
    assert set(found) == {"ultratool", "appbench"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        registry.benchmarks()  # loaded once: no second warning


# --- 4. UltraTool calls ------------------------------------------------------------------------


def test_ultratool_text_before_the_first_name_is_kept() -> None:
    call = parse_call("f('positional', a='2')")
    assert call is not None and call.args == {"a": "2"} and call.unparsed == "'positional'"
    quoted = parse_call("set_reminder(\"event\"='Running', reminder_date='tomorrow')",
                        {"event", "reminder_date"})
    assert quoted is not None and quoted.unparsed is None
    assert quoted.args == {"event": "Running", "reminder_date": "tomorrow"}
    undeclared = parse_call("set_reminder(\"event\"='Running', reminder_date='tomorrow')",
                            {"reminder_date"})
    assert undeclared is not None and undeclared.args == {"reminder_date": "tomorrow"}
    assert undeclared.unparsed == "\"event\"='Running'"


def test_simulated_tool_rejects_a_call_with_unread_text() -> None:
    tool = ToolSkeleton.model_validate({
        "name": "f", "description": "d",
        "arguments": {"properties": {"a": {"type": "string"}}},
        "results": {"properties": {"ok": {"type": "boolean"}}}})
    trace = execute_plan([("1 Do", parse_call("f('positional', a='2')", {"a"})),
                          ("2 Do", parse_call("f(a='2')", {"a"}))], [tool])
    bad, good = trace.calls
    assert bad.error is not None and "'positional'" in bad.error and bad.result is None
    assert good.error is None
    assert trace.valid_calls == 1


# --- 6. Fetching -------------------------------------------------------------------------------


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


# --- 7. UltraTool demonstrations ---------------------------------------------------------------


def test_bad_demonstration_names_the_field(tmp_path: Path, shared_data: Path) -> None:
    rel = Path("ultratool/data/English-dataset/example/planning.json")
    data = json.loads((shared_data / rel).read_text(encoding="utf-8"))
    data["reference"] = 5
    (tmp_path / rel).parent.mkdir(parents=True)
    (tmp_path / rel).write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DataFormatError) as err:
        load_example(tmp_path, "planning", "en")
    assert err.value.field == "reference" and err.value.path == tmp_path / rel


# --- 8. Planning scorer ------------------------------------------------------------------------


def test_planning_score_keeps_the_judge_labels() -> None:
    scorer = ULTRATOOL.scorer(ULTRATOOL.split("planning", "en"), context=ScoringContext(
        judge=FakeListChatModel(responses=["no scores"])))
    result = scorer.score({"input": "q"}, {"prediction": "1. Search\n2. Book"},
                          {"reference": "1. Search\n2. Book"})
    assert result.labels.get("judge") == "error" and result.error is not None


# --- 9. Corruptions and offline model specs ----------------------------------------------------


def test_deeply_nested_json_falls_back_instead_of_raising() -> None:
    text = "[" * 700 + "1" + "]" * 700
    with pytest.raises(RecursionError):  # json.loads reads it; a deep copy recurses too far
        copy.deepcopy(json.loads(text))
    for seed in range(5):
        out = draw(text, "json_object", rate=1.0, seed=seed)
        assert out.text != text


@pytest.mark.parametrize("spec", ["noisy-reference:", "noisy-reference:0,3", "reference:0.3",
                                  "noisy-reference:abc"])
def test_malformed_offline_specs_are_refused(spec: str) -> None:
    with pytest.raises(ValueError, match="noisy-reference:RATE"):
        parse_offline_spec(spec)
    with pytest.raises(ValueError, match="noisy-reference:RATE"):
        resolve_model(spec, answer_key=AnswerKey())


def test_one_default_noise_rate() -> None:
    assert parse_offline_spec("noisy-reference") == ("noisy-reference", DEFAULT_NOISE_RATE)
    model = resolve_model("noisy-reference", answer_key=AnswerKey())
    assert isinstance(model, NoisyReferenceChatModel) and model.rate == DEFAULT_NOISE_RATE
    assert NoisyReferenceChatModel().rate == DEFAULT_NOISE_RATE


# --- 10. Shared helpers ------------------------------------------------------------------------


def test_atomic_write_text_and_sha256_file(tmp_path: Path) -> None:
    target = tmp_path / "new" / "dir" / "out.json"
    atomic_write_text(target, "ünïcode\n")
    atomic_write_text(target, "second ünïcode\n")
    assert target.read_bytes() == "second ünïcode\n".encode()
    assert [p.name for p in target.parent.iterdir()] == ["out.json"]  # no temporary left
    assert sha256_file(target) == hashlib.sha256("second ünïcode\n".encode()).hexdigest()


def test_source_of(tmp_path: Path) -> None:
    assert source_of(samples_dir()) == "sample"
    assert source_of(tmp_path) == "official"
