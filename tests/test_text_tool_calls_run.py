"""Runs against a server that writes tool calls as text (issue 21): with the default
``native`` reading the run says that tool calling did not happen and exits 3; with
``-O tool_calls=text`` or ``auto`` those calls are read, run on the stubs and scored -- for the
built-in agents and for ``--agent langchain.agents:create_agent``. The offline models play the
text protocol too, so its wiring is proven without a server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from fake_langsmith import loopback_only
from fake_openai import ChatRequest, FakeOpenAI
from helpers import cli as tooleval
from typer.testing import CliRunner

from tooleval_agents.appbench.loaders import load_category
from tooleval_agents.cli import app
from tooleval_agents.models.tool_calls.counts import (
    NO_CALL,
    STRUCTURED,
    TEXT,
    UNREAD,
    CallTally,
    ToolCallCounts,
    tool_call_notes,
    tool_calls_unmeasured,
)
from tooleval_agents.results.rundir import RunDir
from tooleval_agents.run.runner import run_experiment
from tooleval_agents.viewer import build_site


@pytest.fixture
def _loopback(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-text-calls")
    with loopback_only(monkeypatch) as refused:
        yield
    assert refused == [], f"tried to reach {refused}"


def text_caller(samples: Path) -> Any:
    """A server that answers the first SS sample's request with its gold call in a fenced
    JSON block (as Qwen2.5-Coder-1.5B did), then with a one-line summary."""
    sample = load_category(samples, "ss", "sample")[0]
    [gold] = sample.calls
    call = {"name": f"{gold.app}__{gold.api}", "arguments": gold.literal_args}

    def respond(request: ChatRequest) -> str:
        if any(m.get("role") == "tool" or (m.get("role") == "user" and str(
                m.get("content")).startswith("<tool_response>")) for m in request.messages):
            return "Done."
        return f"I will call the API.\n```json\n{json.dumps(call)}\n```"

    return respond


cli = partial(tooleval, "run")
"""``tooleval run ARGS``."""


def run_args(samples: Path, out: Path, server: FakeOpenAI, *extra: str) -> list[Any]:
    return ["appbench", "--category", "ss", "--limit", 1, "--model", "openai:qwen",
            "--model-arg", f"base_url={server.base_url}", "--data-dir", samples,
            "--out", out, "--no-upload", "--no-progress", "--no-cache", "--max-concurrency", 1,
            *extra]


def only_summary(out: Path) -> Any:
    [run_dir] = [p for p in out.iterdir() if (p / "summary.json").is_file()]
    return RunDir(run_dir)


@pytest.mark.usefixtures("_loopback")
def test_native_reading_says_no_call_came_back_and_exits_3(samples: Path, tmp_path: Path) -> None:
    with FakeOpenAI(text_caller(samples)) as server:
        result = cli(*run_args(samples, tmp_path, server, "--strategy", "tools"))
    assert result.exit_code == 3, result.output
    assert "tool calls written as text that were not read" in result.output
    assert "-O tool_calls=auto" in result.output and "--jinja" in result.output
    run_dir = only_summary(tmp_path)
    summary = run_dir.read_summary()
    assert summary.counts[STRUCTURED] == 0 and summary.counts[TEXT] == 0
    assert summary.counts[UNREAD] == 1 and summary.counts[NO_CALL] == 1
    assert any("not read" in n for n in summary.notes)
    [result_line] = run_dir.results().values()
    assert result_line.tool_calls == ToolCallCounts(structured=0, text=0, unread=1)
    assert "written as text: -O tool_calls=auto reads them" in result_line.outputs["parse_error"]
    site = build_site([tmp_path], tmp_path / "site")  # the run's page shows the note
    assert site.runs == 1
    assert "tool calls written as text that were not read" in \
        (tmp_path / "site" / "data" / "runs.js").read_text(encoding="utf-8")


@pytest.mark.usefixtures("_loopback")
@pytest.mark.parametrize("mode", ["text", "auto"])
@pytest.mark.parametrize("agent", [None, "langchain.agents:create_agent"])
def test_text_and_auto_read_the_calls_and_score_them(samples: Path, tmp_path: Path, mode: str,
                                                     agent: str | None) -> None:
    extra = ["-O", f"tool_calls={mode}", *(["--agent", agent] if agent else
                                           ["--strategy", "tools"])]
    with FakeOpenAI(text_caller(samples)) as server:
        result = cli(*run_args(samples, tmp_path, server, *extra))
        first = server.log[0].body
    assert result.exit_code == 0, result.output
    assert ("tools" in first) == (mode == "auto")
    run_dir = only_summary(tmp_path)
    summary = run_dir.read_summary()
    assert summary.metrics["executed_success"] == 100.0
    assert summary.metrics["trajectory_strict"] == 100.0
    assert (summary.counts[STRUCTURED], summary.counts[TEXT], summary.counts[UNREAD]) == (0, 1, 0)
    assert any("no structured tool call came back" in n for n in summary.notes)
    [line] = run_dir.results().values()
    calls = [r for r in line.outputs["trace"] if r["kind"] == "tool_call"]
    assert [(c["source"], c["error"]) for c in calls] == [("text", False)]
    config = run_dir.read_config()
    assert config.strategy_options == {"tool_calls": mode}


def test_the_option_is_part_of_the_run_identity_and_listed(samples: Path,
                                                           tmp_path: Path) -> None:
    dirs = {mode: Path(run_experiment(
        "appbench", subset="ss", strategy="tools", model="reference", limit=2,
        data_dir=samples, out=tmp_path, upload=False, progress=False, cache=False,
        strategy_options={"tool_calls": mode} if mode != "default" else None).run_dir or "")
        for mode in ("default", "text", "auto")}
    assert len(set(dirs.values())) == 3
    listed = json.loads(CliRunner().invoke(app, ["list", "strategies", "--json"]).output)
    options = {(r["benchmark"], r["strategy"]): r["options"] for r in listed}
    for strategy in (("appbench", "tools"), ("appbench", "tools_hierarchical"),
                     ("ultratool", "tools")):
        assert "tool_calls ('native' | 'text' | 'auto', default 'native')" in options[strategy]
    bad = cli("appbench", "--category", "ss", "--strategy", "tools", "--model", "reference",
              "-O", "tool_calls=prompt", "--data-dir", samples, "--out", tmp_path)
    assert bad.exit_code != 0 and "option 'tool_calls'" in bad.output
    assert "'native', 'text' or 'auto'" in bad.output


@pytest.mark.parametrize(("benchmark", "options"), [
    ("appbench", {"subset": "mm", "strategy": "tools_hierarchical"}),
    ("appbench", {"subset": "sm", "agent": "langchain.agents:create_agent"}),
    ("ultratool", {"task": "tool_usage", "subset": "en", "strategy": "tools"}),
    ("ultratool", {"task": "raw", "subset": "zh", "strategy": "tools"}),
])
def test_the_offline_models_play_the_text_protocol(samples: Path, tmp_path: Path,
                                                   benchmark: str,
                                                   options: dict[str, Any]) -> None:
    def go(model: str, mode: str) -> Any:
        return run_experiment(benchmark, model=model, limit=3, data_dir=samples,
                              out=tmp_path / mode, upload=False, progress=False, cache=False,
                              strategy_options={"tool_calls": mode}, **options)

    gold = go("reference", "text")
    assert gold.counts["model_errors"] == 0
    assert gold.counts[TEXT] > 0 and gold.counts[STRUCTURED] == 0
    native = go("reference", "native")
    assert gold.metrics == native.metrics
    # the same corruptions whichever way the calls travel
    assert go("noisy-reference:0.5", "text").metrics == go("noisy-reference:0.5", "auto").metrics


def test_what_a_run_says_about_its_calls() -> None:
    tally = CallTally()
    assert tally.counts() == {} and tool_call_notes({}) == []
    tally.add(None)  # an example no agent ran (a text strategy, a failed workflow)
    assert tally.counts() == {}
    for counts in (ToolCallCounts(unread=2), ToolCallCounts()):
        tally.add(counts)
    text_only = tally.counts()
    assert text_only == {STRUCTURED: 0, TEXT: 0, UNREAD: 2, NO_CALL: 2}
    assert tool_calls_unmeasured(text_only)
    [note] = tool_call_notes(text_only)
    assert note.startswith("no tool call came back in 2 example(s), but 2 answer(s)")
    nothing = {STRUCTURED: 0, TEXT: 0, UNREAD: 0, NO_CALL: 3}
    assert not tool_calls_unmeasured(nothing)
    assert "no answer holds one written as text" in tool_call_notes(nothing)[0]
    assert "-O tool_calls=text" in tool_call_notes(nothing)[0]
    mixed = {STRUCTURED: 4, TEXT: 0, UNREAD: 1, NO_CALL: 0}
    assert not tool_calls_unmeasured(mixed)
    assert tool_call_notes(mixed) == ["1 answer(s) hold tool calls written as text that were "
                                      "not read: -O tool_calls=auto reads them (those "
                                      "that are valid JSON)."]
    assert tool_call_notes({STRUCTURED: 3, TEXT: 0, UNREAD: 0, NO_CALL: 0}) == []
