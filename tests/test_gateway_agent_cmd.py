"""An outside agent on the run's own model (``--agent-cmd`` with ``--model``): a small agent on
the ``openai`` SDK and the official MCP client (``examples/openai_agent.py``) gets no model of
its own, only the gateway's URL and the example's key, and with ``--model reference`` scores
success 100 on the AppBench SS samples; the gateway counted its tokens, every model call is in
its example's transcript, a rerun is resumed with nothing paid, a run on a warm response cache
pays nothing and counts the same tokens, and the Responses API (streamed) gives the same."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import needs_bwrap
from test_agent_cmd import results
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.results.transcripts import read_prompts
from tooleval_agents.run.runner import run_experiment

REPO = Path(__file__).resolve().parents[1]
AGENT = f"{sys.executable} {REPO / 'examples' / 'openai_agent.py'}"


def gateway_records(run_dir: Path) -> list[dict[str, Any]]:
    return [next(t for t in r.outputs["trace"] if t["kind"] == "model_gateway")
            for r in results(run_dir)]


def test_an_openai_sdk_agent_on_the_reference_model_scores_100_and_is_counted(
        samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-users-own")  # replaced: never reaches it
    cache = tmp_path / "responses.sqlite"
    args = dict(subset="ss", model="reference", agent_cmd=AGENT, agent_name="openai-sdk",
                data_dir=samples, out=tmp_path / "runs", cache=cache, progress=False,
                upload=False, max_concurrency=2)
    summary = run_experiment("appbench", **args)  # type: ignore[arg-type]
    assert summary.metrics["success"] == 100.0 and summary.counts["scored"] == 6
    assert summary.counts.get("agent_errors", 0) == 0
    run_dir = Path(summary.run_dir)  # type: ignore[arg-type]
    assert run_dir.name == "appbench-plan-ss-tools+openai-sdk-reference"
    # The gateway counted the model's tokens, call by call: no usage file was written.
    calls = summary.usage["model_calls"]
    assert calls >= 12 and summary.usage["input_tokens"] > 0  # a call turn and an answer each
    assert summary.session["model_calls"] == calls and summary.session["cache_hits"] == 0
    records = gateway_records(run_dir)
    assert sum(r["requests"]["chat.completions"] for r in records) == calls
    assert all(r["errors"] == {} for r in records)
    prompts = read_prompts(run_dir)
    for result in results(run_dir):  # every call in its example's transcript
        (process,) = (t for t in result.outputs["trace"] if t["kind"] == "agent_process")
        assert process["usage_reported"] is False and process["exit_code"] == 0
        assert result.model_calls and all(c.request and c.request["format"] == "chat.completions"
                                          and c.request["model"] == "reference"
                                          for c in result.model_calls)
        first = [prompts[m] for m in result.model_calls[0].messages]
        assert first[0]["role"] == "human" and "Request: " in first[0]["content"]
        assert result.usage.model_calls == len(result.model_calls)
    assert "sk-the-users-own" not in (run_dir / "examples.jsonl").read_text()
    # The same command again: resumed, nothing run, nothing paid.
    again = run_experiment("appbench", **args)  # type: ignore[arg-type]
    assert again.session["resumed"] == 6 and again.session["model_calls"] == 0
    assert again.metrics == summary.metrics
    # Again from scratch on the warm cache: the answers replayed, nothing paid, each
    # example's tokens what they were.
    cold = {r.index: r.usage for r in results(run_dir)}
    warm = run_experiment("appbench", **{**args, "fresh": True})  # type: ignore[arg-type]
    assert warm.metrics["success"] == 100.0 and warm.session["model_calls"] == 0
    assert warm.session["cache_hits"] == calls
    for result in results(run_dir):
        assert result.usage.cache_hits == result.usage.model_calls
        assert (result.usage.input_tokens, result.usage.output_tokens) == (
            cold[result.index].input_tokens, cold[result.index].output_tokens)


def test_the_responses_api_streamed_gives_the_same_score(samples: Path,
                                                          tmp_path: Path) -> None:
    run = CliRunner().invoke(app, [
        "run", "appbench", "--category", "sm", "--model", "reference", "--agent-cmd",
        f"{AGENT} --api responses --stream", "--agent-name", "openai-responses",
        "--data-dir", str(samples), "--out", str(tmp_path / "runs"), "--no-cache", "--json",
        "--max-concurrency", "2"])
    assert run.exit_code == 0, run.output
    row = json.loads(run.stdout)
    assert row["metrics"]["success"] == 100.0 and row["counts"]["scored"] == 5
    records = gateway_records(Path(row["run_dir"]))
    assert all(set(r["requests"]) == {"responses"} for r in records)
    assert row["usage"]["model_calls"] == sum(r["requests"]["responses"] for r in records)
    streamed = [c.request for r in results(row["run_dir"]) for c in r.model_calls]
    assert streamed and all(c is not None and c["stream"] for c in streamed)


ENV_DUMP = ("printf '%s\\n' {openai_base_url} \"$OPENAI_BASE_URL\" {anthropic_base_url} "
            "\"$ANTHROPIC_BASE_URL\" {api_key} \"$OPENAI_API_KEY\" \"$ANTHROPIC_API_KEY\" "
            "\"${ANTHROPIC_AUTH_TOKEN:-unset}\" {model} > {out}; cat > /dev/null; echo done")


def test_the_agent_gets_the_gateway_as_placeholders_and_standard_variables(
        samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "the-users-token")
    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.example.invalid/v1")
    seen = tmp_path / "seen.txt"
    summary = run_experiment("appbench", subset="ss", limit=1, model="noisy-reference:0.3",
                             agent_cmd=ENV_DUMP.replace("{out}", str(seen)), data_dir=samples,
                             out=tmp_path / "runs", cache=False, progress=False, upload=False)
    (openai_url, env_openai, anthropic_url, env_anthropic, key, env_key, env_anthropic_key,
     auth_token, model) = seen.read_text().splitlines()
    assert openai_url == env_openai == f"{anthropic_url}/v1" and anthropic_url == env_anthropic
    assert openai_url.startswith("http://127.0.0.1:") and "/g/" in openai_url
    assert key == env_key == env_anthropic_key and key.startswith("sk-tooleval-")
    assert auth_token == "unset" and model == "noisy-reference:0.3"
    # The agent called no model: nothing counted, and it is said ("not reported", never 0);
    # and it never opened its MCP session: agent_no_tools, not a weak answer.
    (result,) = results(summary.run_dir)  # type: ignore[arg-type]
    assert (result.status, result.error_kind) == ("agent_error", "agent_no_tools")
    assert result.usage.model_calls == 0 and result.usage_reported is False
    # Without --model the agent brings its own: its environment is left as it was.
    plain = run_experiment("appbench", subset="ss", limit=1,
                           agent_cmd=ENV_DUMP.replace("{out}", str(seen)), data_dir=samples,
                           out=tmp_path / "runs", cache=False, progress=False, upload=False)
    lines = seen.read_text().splitlines()
    assert lines[0] == "" and lines[1] == "https://api.example.invalid/v1"
    assert lines[7] == "the-users-token" and lines[8] == ""
    assert Path(plain.run_dir).name.endswith("-external")  # type: ignore[arg-type]


def test_a_provider_failure_behind_the_gateway_is_the_examples_infra_error(
        samples: Path, tmp_path: Path) -> None:
    from tooleval_agents.models.retry import RetryPolicy

    closed = "http://127.0.0.1:9/v1"  # the discard port: nothing listens
    summary = run_experiment(
        "appbench", subset="ss", limit=1, model="openai:gpt-4o-mini",
        model_kwargs={"base_url": closed, "api_key": "sk-local"}, agent_cmd=AGENT,
        data_dir=samples, out=tmp_path / "runs", cache=False, progress=False, upload=False,
        retry=RetryPolicy(max_attempts=1))
    (result,) = results(summary.run_dir)  # type: ignore[arg-type]
    assert (result.status, result.error_kind) == ("infra_error", "connection")
    assert summary.counts.get("infra_errors") == 1  # left out of the metrics, retried on resume


def calls_of(run_dir: Path | str) -> dict[int, list[tuple[str, Any]]]:
    return {r.index: [(t["name"], t["args"]) for t in r.outputs["trace"]
                      if t["kind"] == "tool_call"] for r in results(run_dir)}


def test_noisy_reference_through_the_gateway_makes_the_in_process_calls(
        samples: Path, tmp_path: Path) -> None:
    args = dict(subset="ss", model="noisy-reference:0.3", data_dir=samples,
                out=tmp_path / "runs", cache=False, progress=False, upload=False,
                max_concurrency=2)
    inside = run_experiment("appbench", strategy="tools", **args)  # type: ignore[arg-type]
    outside = run_experiment("appbench", agent_cmd=AGENT, agent_name="openai-sdk",
                             **args)  # type: ignore[arg-type]
    # The same seeded corruptions of each example's gold plan, played turn by turn.
    expected = calls_of(inside.run_dir)  # type: ignore[arg-type]
    assert calls_of(outside.run_dir) == expected  # type: ignore[arg-type]
    assert outside.metrics["success"] == inside.metrics["success"] < 100.0


def test_a_sealed_agent_reaches_the_gateway_and_its_session_only(samples: Path,
                                                                   tmp_path: Path) -> None:
    """Under ``--agent-sandbox`` the agent's loopback has its session's port and the
    gateway's, relayed: the same score, every call counted by the gateway."""
    needs_bwrap()
    summary = run_experiment("appbench", subset="ss", model="reference", agent_cmd=AGENT,
                             agent_name="openai-sdk", agent_sandbox=True, data_dir=samples,
                             out=tmp_path / "runs", cache=False, progress=False, upload=False,
                             max_concurrency=2)
    assert summary.metrics["success"] == 100.0 and summary.counts["scored"] == 6
    assert summary.counts.get("agent_errors", 0) == 0
    records = gateway_records(Path(summary.run_dir))  # type: ignore[arg-type]
    assert sum(r["requests"]["chat.completions"] for r in records) == \
        summary.usage["model_calls"] >= 12
