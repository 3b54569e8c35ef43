"""The judge goes where the user says (issue: a local ``base_url`` for ``--model`` only sent the
judge to the public endpoint, and the run exited 0 with every judge metric 0 over nothing)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from fake_judges import DIMENSIONS, VERDICT, is_judge
from fake_langsmith import openai_on_loopback
from fake_openai import ChatRequest, FakeOpenAI, Fault
from helpers import cli
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.evaluators.ultratool.judge.judge import judge_plan
from tooleval_agents.models.specs import judge_model
from tooleval_agents.results.rundir import RunDir
from tooleval_agents.run.setup import judge_arguments


@pytest.fixture(autouse=True)
def _loopback(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with openai_on_loopback(monkeypatch, "sk-test-judge-endpoint"):
        yield


run_cli = partial(cli, "run")
"""``tooleval run ARGS``."""


def test_judge_arguments_default_to_temperature_0_and_inherit_the_endpoint() -> None:
    local = {"base_url": "http://127.0.0.1:8765/v1", "temperature": 0.7}
    assert judge_arguments("openai:m", local, "openai:j", None) == (
        {"temperature": 0, "base_url": "http://127.0.0.1:8765/v1"}, ["base_url"])
    # The judge's own endpoint and temperature win; nothing is taken from the model then.
    own = {"base_url": "http://127.0.0.1:9/v1", "temperature": 0.2}
    assert judge_arguments("openai:m", local, "openai:j", own) == (own, [])
    # Another provider, or a model instance: the model's endpoint means nothing to the judge.
    assert judge_arguments("anthropic:m", local, "openai:j", None) == ({"temperature": 0}, [])
    assert judge_arguments("reference", None, "openai:j", None) == ({"temperature": 0}, [])


def test_judge_arg_points_the_judge_at_a_local_server(samples: Path, tmp_path: Path) -> None:
    with FakeOpenAI(lambda req: VERDICT) as server:
        url = server.base_url
        result = run_cli("ultratool", "--task", "planning", "--lang", "en", "--model",
                         "reference", "--judge", "openai:local-judge", "--judge-arg",
                         f"base_url={url}", "--data-dir", samples, "--out",
                         tmp_path, "--no-cache", "--no-progress", "--json")
        requests = list(server.log)
    assert result.exit_code == 0, result.output
    assert requests and all(r.body["model"] == "local-judge" for r in requests)
    assert all(r.body.get("temperature") == 0 for r in requests)  # the judge's default
    report = json.loads(result.stdout)
    assert report["counts"]["judged"] == report["counts"]["examples"] > 0
    assert report["metrics"]["planning"] == pytest.approx(80.0)
    config = RunDir(report["run_dir"]).read_config()
    assert config.judge is not None
    params = json.dumps(config.judge["params"])
    assert url in params and '"temperature": 0' in params
    assert "sk-test-judge-endpoint" not in Path(report["run_dir"], "config.json").read_text()


def test_same_provider_judge_uses_the_model_endpoint_and_says_so(samples: Path,
                                                                 tmp_path: Path) -> None:
    def respond(req: ChatRequest) -> str:
        return VERDICT if is_judge(req) else "1. Find the file\n2. Open it"

    with FakeOpenAI(respond) as server:
        result = run_cli("ultratool", "--task", "planning", "--lang", "en", "--model",
                         "openai:local-model", "--model-arg", f"base_url={server.base_url}",
                         "--judge", "openai:local-judge", "--limit", "2", "--data-dir",
                         samples, "--out", tmp_path, "--no-cache", "--no-progress",
                         "--max-concurrency", "1", "--json")
        models = [r.body["model"] for r in server.log]
    assert result.exit_code == 0, result.output
    assert "uses the model's base_url" in result.stderr
    assert models.count("local-judge") == 2 and models.count("local-model") == 2
    config = RunDir(json.loads(result.stdout)["run_dir"]).read_config()
    assert config.judge is not None and config.judge["from_model"] == ["base_url"]


def test_no_example_judged_exits_non_zero_with_the_cause(samples: Path, tmp_path: Path) -> None:
    with FakeOpenAI(lambda req: VERDICT) as server:
        dead = server.base_url
    # The server is closed: every judge call is refused.
    result = run_cli("ultratool", "--task", "planning", "--lang", "en", "--model", "reference",
                     "--judge", "openai:gone", "--judge-arg", f"base_url={dead}",
                     "--max-attempts", "1", "--limit", "2", "--data-dir", samples, "--out",
                     tmp_path, "--no-cache", "--no-progress")
    assert result.exit_code == 3, result.output  # nothing judged
    assert "no example could be judged" in result.stderr
    assert "tooleval score --run" in result.stderr and "Traceback" not in result.output

    # The hint works: the stored outputs are re-judged at the right endpoint, no model call.
    run_dir = next(tmp_path.iterdir())
    with FakeOpenAI(lambda req: VERDICT) as server:
        again = CliRunner().invoke(app, [
            "score", "--run", str(run_dir), "--judge", "openai:local-judge", "--judge-arg",
            f"base_url={server.base_url}", "--data-dir", str(samples), "--json"])
        judged_calls = len(server.log)
    assert again.exit_code == 0, again.output
    rescored = json.loads(again.stdout)["summary"]
    assert rescored["counts"]["judged"] == 2 and judged_calls == 2
    assert rescored["metrics"]["planning"] == pytest.approx(80.0)


def test_judge_arg_without_judge_is_refused(samples: Path, tmp_path: Path) -> None:
    result = run_cli("ultratool", "--task", "planning", "--lang", "en", "--model", "reference",
                     "--judge-arg", "base_url=http://127.0.0.1:1/v1", "--data-dir", samples,
                     "--out", tmp_path)
    assert result.exit_code != 0 and "--judge-arg needs --judge" in result.output


def test_a_server_refusing_structured_output_is_asked_for_text() -> None:
    # llama-cpp-python's server answers 500 to response_format json_schema (langchain-openai's
    # structured output): every judgment failed against a local judge. Now the item is asked
    # again for a plain-text answer, with the JSON layout in the prompt.
    text = json.dumps([{"Reason": "ok", f"{d.replace('_', ' ').title()} Score": 7}
                       for d in DIMENSIONS] + [{"Reason": "ok", "Overall Score": 7}])

    def local_server(req: ChatRequest) -> Any:
        if "response_format" in req.body or "tools" in req.body:
            return Fault(500, retry_after_ms=None, message="1 validation error: ('body', "
                         "'response_format', 'type'): Input should be 'text' or 'json_object'")
        return text

    with FakeOpenAI(local_server) as server:
        judge = judge_model("openai:local", {"base_url": server.base_url, "api_key": "x"})
        judgment = judge_plan(judge, question="Q?", reference="1. a", prediction="1. b",
                              lang="en", max_retries=0)
        assert [r.status for r in server.log] == [500, 200]
    assert judgment.ok and judgment.score100() == 70.0 and judgment.attempts == 1
