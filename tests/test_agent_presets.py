"""The agents people use, prewired (``--agent-preset``): Claude Code, Codex CLI and the OpenAI
Agents SDK's example agent, each on the run's model through the gateway and on the example's
MCP session; and that example run by ``--agent-cmd``.

* With ``--model reference`` each scores success 100 on the AppBench SS samples; the gateway
  counted every model call and its tokens, which the agent's own usage (its structured output)
  matches example by example; its version is part of the run's identity; the same command
  again is resumed with nothing paid.
* With ``noisy-reference:0.3`` each makes, example by example, the calls the in-process
  ``tools`` strategy makes -- but where the noisy model calls a wrong tool, drawn among the
  tools the request lists: Codex lists five tools of its own beside the session's, so its
  wrong tool can be another one (same arguments, same place).
* With another MCP token than the example's, each ends every example in ``agent_no_tools``
  (Claude Code runs on without its tools and exits 0; Codex, its server required, exits 1;
  the example exits 3 saying its session did not open), never a quiet 0, and the run exits 1
  saying so.
* Each reaches 127.0.0.1 only: under strace, no connection elsewhere and no DNS query.

The programs: :mod:`agent_clis` (skipped with the reason where they are not installed,
required in CI).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_clis import agent_program, outside_reached, traced, wrong_token
from typer.testing import CliRunner, Result

from tooleval_agents.cli import app
from tooleval_agents.results.rundir import RunDir

PRESETS = ["claude-code", "codex", "openai-agents"]
REPO = Path(__file__).resolve().parents[1]


def run(preset: str, program: Path, samples: Path, out: Path, *args: str) -> Result:
    return CliRunner().invoke(app, [
        "run", "appbench", "--category", "ss", "--agent-preset", preset, "--agent-bin",
        str(program), "--data-dir", str(samples), "--out", str(out), "--no-cache", "--json",
        "--max-concurrency", "2", *args])


def process(result: Any) -> dict[str, Any]:
    return next(t for t in result.outputs["trace"] if t["kind"] == "agent_process")


def calls(run_dir: str | Path) -> dict[int, list[tuple[str, Any]]]:
    """Each example's tool calls (name, arguments), in order."""
    return {r.index: [(t["name"], t["args"]) for t in r.outputs.get("trace") or []
                      if t.get("kind") == "tool_call"]
            for r in RunDir(run_dir).results().values()}


@pytest.mark.parametrize("preset", PRESETS)
def test_a_preset_on_the_reference_model_scores_100_counted_by_the_gateway(
        preset: str, samples: Path, tmp_path: Path) -> None:
    program = agent_program(preset)
    first = run(preset, program, samples, tmp_path / "runs", "--model", "reference")
    assert first.exit_code == 0, first.output
    row = json.loads(first.stdout)
    assert row["metrics"]["success"] == 100.0 and row["counts"]["scored"] == 6
    assert row["counts"]["agent_errors"] == 0
    run_dir = Path(row["run_dir"])
    assert run_dir.name == f"appbench-plan-ss-tools+{preset}-reference"
    config = RunDir(run_dir).read_config()
    version = config.identity["parts"]["agent_cmd"]["preset"]["version"]
    assert version[0].isdigit() and config.agent_cmd is not None and version in config.agent_cmd
    # The gateway counted the calls and their tokens; the agent's own figures agree.
    usage = row["usage"]
    assert usage["model_calls"] >= 12 and usage["input_tokens"] > 0  # a call, then an answer
    for result in RunDir(run_dir).results().values():
        record = process(result)
        assert record["preset"] == preset and record["version"] == version
        assert record["listed"] >= 1 and record["calls"] >= 1 and record["exit_code"] == 0
        gateway = next(t for t in result.outputs["trace"] if t["kind"] == "model_gateway")
        assert sum(gateway["requests"].values()) == result.usage.model_calls >= 2
        assert gateway["errors"] == {}
        assert record["agent_usage"]["input_tokens"] == result.usage.input_tokens > 0
        assert record["agent_usage"]["output_tokens"] == result.usage.output_tokens
        assert all(c.request and c.request["model"] == "reference" for c in result.model_calls)
    # The same command again: resumed, nothing run, nothing paid.
    again = run(preset, program, samples, tmp_path / "runs", "--model", "reference")
    assert again.exit_code == 0, again.output
    repeat = json.loads(again.stdout)
    assert repeat["session"]["resumed"] == 6 and repeat["session"]["model_calls"] == 0
    assert repeat["run_dir"] == row["run_dir"] and repeat["metrics"] == row["metrics"]


@pytest.mark.parametrize("preset", PRESETS)
def test_on_the_noisy_model_a_preset_makes_the_calls_the_tools_strategy_makes(
        preset: str, samples: Path, tmp_path: Path) -> None:
    program = agent_program(preset)
    out = tmp_path / "runs"
    outside = run(preset, program, samples, out, "--model", "noisy-reference:0.3")
    assert outside.exit_code == 0, outside.output
    here: dict[str, dict[int, list[tuple[str, Any]]]] = {}
    for model in ("noisy-reference:0.3", "reference"):  # in the process
        done = CliRunner().invoke(app, [
            "run", "appbench", "--category", "ss", "--strategy", "tools", "--model", model,
            "--data-dir", str(samples), "--out", str(out), "--no-cache", "--json"])
        assert done.exit_code == 0, done.output
        here[model] = calls(json.loads(done.stdout)["run_dir"])
    there, noisy, gold = calls(json.loads(outside.stdout)["run_dir"]), \
        here["noisy-reference:0.3"], here["reference"]
    assert there.keys() == noisy.keys() and len(there) == 6
    assert noisy != gold  # the noise changed some calls
    for index, made in there.items():
        assert len(made) == len(noisy[index]), index
        for (name, args), (want, want_args), (right, _) in zip(
                made, noisy[index], gold[index] + [("", {})] * len(made), strict=False):
            assert args == want_args, index
            # A wrong tool is drawn among the tools the request lists: the preset's own
            # tools (Codex's) can change which; a right call is the same call.
            assert name == want or (want != right and name != right), (index, name, want)
    if preset != "codex":  # it lists the session's tools only: every call the same
        assert there == noisy


@pytest.mark.parametrize("preset", PRESETS)
def test_a_wrong_mcp_token_is_an_agent_that_never_reached_its_tools(
        preset: str, samples: Path, tmp_path: Path) -> None:
    program = wrong_token(agent_program(preset), tmp_path)
    done = run(preset, program, samples, tmp_path / "runs", "--model", "reference",
               "--limit", "2")
    assert done.exit_code == 1, done.output  # nothing of the agent was measured
    assert "never reached its tools on any example (agent_no_tools 2)" in done.stderr
    row = json.loads(done.stdout)
    results = list(RunDir(row["run_dir"]).results().values())
    assert [(r.status, r.error_kind) for r in results] == [("agent_error", "agent_no_tools")] * 2
    said = {"claude-code": "Claude Code reports its MCP server",
            "codex": "required MCP servers failed to initialize",
            "openai-agents": "its MCP session did not open"}[preset]
    assert all(said in (r.error or "") for r in results)


@pytest.mark.parametrize("preset", PRESETS)
def test_a_preset_reaches_the_loopback_only(preset: str, samples: Path,
                                            tmp_path: Path) -> None:
    program = traced(agent_program(preset), tmp_path)
    done = run(preset, program, samples, tmp_path / "runs", "--model", "reference",
               "--limit", "1")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["metrics"]["success"] == 100.0
    reached, traces = outside_reached(tmp_path)
    assert traces >= 2  # its --version, then its run
    assert reached == []


def test_the_agents_sdk_example_as_an_agent_command_scores_100(samples: Path,
                                                                tmp_path: Path) -> None:
    python = agent_program("openai-agents")
    command = f"{python} {REPO / 'examples' / 'openai_agents_sdk.py'} --api chat"
    args = ["run", "appbench", "--category", "ss", "--model", "reference", "--agent-cmd",
            command, "--agent-name", "agents-sdk", "--data-dir", str(samples), "--out",
            str(tmp_path / "runs"), "--no-cache", "--json", "--max-concurrency", "2"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    row = json.loads(first.stdout)
    assert row["metrics"]["success"] == 100.0 and row["counts"]["agent_errors"] == 0
    for result in RunDir(row["run_dir"]).results().values():
        record = process(result)  # its usage file: the SDK's own count, as the gateway's
        assert record["agent_usage"]["input_tokens"] == result.usage.input_tokens > 0
        assert record["agent_usage"]["model_calls"] == result.usage.model_calls >= 2
        assert {c.request["format"] for c in result.model_calls
                if c.request} == {"chat.completions"}
    again = json.loads(CliRunner().invoke(app, args).stdout)
    assert again["session"]["resumed"] == 6 and again["session"]["model_calls"] == 0
