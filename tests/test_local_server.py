"""What a local OpenAI-compatible server (llama.cpp, llama-cpp-python) taught: context-window
errors are their own kind, answers have a default length cap, billed failures count, and a
loopback endpoint with several requests in flight gets a hint."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fake_langsmith import loopback_only
from fake_openai import ChatRequest, FakeOpenAI, Fault
from helpers import cli

from tooleval_agents.cli.advice import local_server_hint
from tooleval_agents.models.accounting import CallStats
from tooleval_agents.models.failures import classify, reported_usage
from tooleval_agents.registry import get_benchmark
from tooleval_agents.results.rundir import RunDir

# What the servers say (llama.cpp's C++ server, llama-cpp-python, vLLM / OpenAI).
OVERFLOW_MESSAGES = [
    "the request exceeds the available context size, try increasing it",
    "Requested tokens (5120) exceed context window of 4096",
    "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.",
]


class _StatusError(Exception):
    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status_code = status
        self.code = code


@pytest.mark.parametrize("message", OVERFLOW_MESSAGES)
def test_context_overflow_is_its_own_infra_kind(message: str) -> None:
    assert classify(_StatusError(400, message)) == "context_overflow"
    try:  # seen through a ``raise ... from`` chain, as LangChain wraps provider errors
        raise ValueError("model call failed") from _StatusError(400, message)
    except ValueError as exc:
        assert classify(exc) == "context_overflow"


def test_other_bad_requests_stay_model_errors() -> None:
    assert classify(_StatusError(400, "invalid 'tools': unknown type")) is None
    assert classify(_StatusError(400, "bad", code="context_length_exceeded")) == \
        "context_overflow"


def test_failed_tries_add_the_tokens_the_provider_reported() -> None:
    cut = Exception("length limit reached")
    cut.completion = SimpleNamespace(  # type: ignore[attr-defined]
        usage=SimpleNamespace(prompt_tokens=120, completion_tokens=64))
    body = Exception("server says no")
    body.body = {"usage": {"prompt_tokens": 7, "completion_tokens": 0}}  # type: ignore[attr-defined]
    assert reported_usage(cut) == (120, 64) and reported_usage(body) == (7, 0)
    assert reported_usage(TimeoutError()) is None  # unknown: nothing is made up
    stats = CallStats()
    stats.failed(None, False, cut)
    stats.failed("timeout", True, TimeoutError())
    assert (stats.input_tokens, stats.output_tokens, stats.failures) == (120, 64, 2)


def test_local_server_hint() -> None:
    hint = local_server_hint({"base_url": "http://127.0.0.1:8765/v1"}, 8)
    assert hint is not None and "--max-concurrency 1" in hint
    assert local_server_hint({"base_url": "http://localhost:8765/v1"}, 4) is not None
    assert local_server_hint({"base_url": "http://127.0.0.1:8765/v1"}, 1) is None
    assert local_server_hint({"base_url": "https://api.example.com/v1"}, 8) is None
    assert local_server_hint({}, 8) is None


def test_every_split_has_a_default_answer_cap() -> None:
    for name in ("ultratool", "appbench"):
        bench = get_benchmark(name)
        for split in bench.splits():
            cap = bench.max_tokens(split)
            assert cap is not None and 256 <= cap <= 8192, split.name


# --- end to end against the loopback server ---------------------------------------------------

@pytest.fixture()
def _net(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ("OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-local-server")
    with loopback_only(monkeypatch) as refused:
        yield
    assert refused == [], f"tried to reach {refused}"


run_cli = partial(cli, "run")
"""``tooleval run ARGS``."""


def _cap(request: ChatRequest) -> Any:
    return request.body.get("max_completion_tokens", request.body.get("max_tokens"))


@pytest.mark.usefixtures("_net")
def test_default_cap_is_sent_and_a_user_cap_wins(samples: Path, tmp_path: Path) -> None:
    common = ["appbench", "--category", "ss", "--strategy", "flat", "--limit", "1",
              "--data-dir", samples, "--no-cache", "--no-progress", "--json",
              "--max-concurrency", "1"]
    with FakeOpenAI(lambda req: "Restaurants: [x = findrestaurants(#city='X')]") as server:
        url = server.base_url
        first = run_cli(*common, "--model", "openai:local", "--model-arg", f"base_url={url}",
                        "--out", tmp_path / "a")
        second = run_cli(*common, "--model", "openai:local", "--model-arg", f"base_url={url}",
                         "--model-arg", "max_tokens=77", "--out", tmp_path / "b")
        caps = [_cap(r) for r in server.log]
        legacy = [r.body.get("max_tokens") for r in server.log]
    assert first.exit_code == 0 and second.exit_code == 0, first.output + second.output
    assert caps == [1024, 77]
    # llama-cpp-python's server ignores max_completion_tokens: the older field goes too.
    assert legacy == [1024, 77]
    assert "--max-concurrency" not in first.stderr  # concurrency 1: no hint
    config = RunDir(json.loads(first.stdout)["run_dir"]).read_config()
    assert config.model["params"].get("max_tokens") == 1024


@pytest.mark.usefixtures("_net")
def test_context_overflow_is_counted_apart_and_a_resume_runs_it_again(
        samples: Path, tmp_path: Path) -> None:
    answer = "Restaurants: [x = findrestaurants(#city='X')]"
    common = ["appbench", "--category", "ss", "--strategy", "flat", "--limit", "2",
              "--data-dir", samples, "--no-cache", "--no-progress", "--out", tmp_path,
              "--max-concurrency", "2"]
    with FakeOpenAI(lambda req: Fault(400, message=OVERFLOW_MESSAGES[0])) as server:
        url = server.base_url
        result = run_cli(*common, "--model", "openai:local", "--model-arg", f"base_url={url}")
        overflow_calls = len(server.log)
    assert result.exit_code == 3, result.output  # examples left unscored
    assert overflow_calls == 2  # no retry: a longer wait does not make the prompt fit
    assert "context window" in result.stderr and "--n_ctx" in result.stderr
    assert "--max-concurrency 1" in result.stderr  # loopback server, 2 in flight
    assert "Traceback" not in result.output
    run_dir = next(tmp_path.iterdir())
    kinds = {r.error_kind for r in RunDir(run_dir).results().values()}
    assert kinds == {"context_overflow"}

    with FakeOpenAI(lambda req: answer) as server:  # the context was raised
        again = run_cli(*common, "--model", "openai:local", "--model-arg",
                        f"base_url={server.base_url}", "--json")
        assert len(server.log) == 2
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["counts"]["infra_errors"] == 0
