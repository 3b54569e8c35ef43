"""A provider reply that cannot be read is an infrastructure error (issue 22, item 6): HTTP 200
with malformed JSON or an empty ``choices`` list (and the other shapes LangChain's OpenAI
client cannot read) is retried, counted apart from wrong answers and run again by a resume --
it was recorded as a ``model_error``, scored 0, never retried, exit 0."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_langsmith import loopback_only
from fake_openai import (
    CONTEXT_OVERFLOW,
    EMPTY_CHOICES,
    MALFORMED,
    RESET,
    ChatRequest,
    FakeOpenAI,
    Fault,
    Reply,
)
from langchain_openai import ChatOpenAI
from pydantic import BaseModel
from toy_benchmark import echo_answer, register_toy, write_toy
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.models.accounting import collect_stats
from tooleval_agents.models.failures import BadResponseError, classify, unreadable_reply
from tooleval_agents.models.retry import RETRYABLE, RetryingChatModel, RetryPolicy
from tooleval_agents.results.rundir import EXAMPLES

KEY = "sk-test-bad-replies-000000"
BASE = {"id": "x", "object": "chat.completion", "created": 1, "model": "m"}
SHAPES = {  # HTTP 200 bodies LangChain's OpenAI client cannot read, each raising differently
    "not JSON at all": "<html>upstream error</html>",
    "choices null": json.dumps({**BASE, "choices": None}),
    "no choices key": json.dumps(BASE),
    "choices not a list": json.dumps({**BASE, "choices": "abc"}),
    "a choice without message": json.dumps({**BASE, "choices": [{"index": 0}]}),
    "message without role": json.dumps({**BASE, "choices": [{"index": 0, "message": {
        "content": "hi"}, "finish_reason": "stop"}]}),
    "an error object": json.dumps({"error": {"message": "upstream failed",
                                             "type": "server_error"}}),
    "not an object": json.dumps(["a list"]),
}


@pytest.fixture(autouse=True)
def _loopback(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(var, raising=False)
    register_toy(monkeypatch)
    with loopback_only(monkeypatch) as refused:
        yield
    assert refused == [], f"tried to reach {refused}"


def wrapped(server: FakeOpenAI, attempts: int = 2) -> RetryingChatModel:
    inner = ChatOpenAI(base_url=server.base_url, api_key=KEY,  # type: ignore[arg-type]
                       model="fake", max_retries=0)
    return RetryingChatModel(inner=inner, policy=RetryPolicy(
        max_attempts=attempts, base_delay=0.001, jitter=False, timeout=None))


@pytest.mark.parametrize("fault", [MALFORMED, EMPTY_CHOICES,
                                   *(Fault(200, kind="raw", body=b) for b in SHAPES.values())],
                         ids=["malformed", "empty choices", *SHAPES])
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_an_unreadable_reply_is_retried(fault: Fault, mode: str) -> None:
    with FakeOpenAI(default="the answer") as server:
        model = wrapped(server)
        server.fail_next(fault)
        with collect_stats() as stats:
            answer = (model.invoke("hi") if mode == "sync"
                      else asyncio.run(model.ainvoke("hi")))
        assert answer.content == "the answer"
        assert stats.kinds == ["bad_response"] and stats.retries == 1 and stats.calls == 1
        assert server.statuses() == [200, 200]


@pytest.mark.parametrize("fault", [MALFORMED, EMPTY_CHOICES], ids=["malformed", "empty"])
def test_when_retries_run_out_it_is_a_bad_response(fault: Fault) -> None:
    with FakeOpenAI(lambda req: fault) as server:
        with pytest.raises(BadResponseError) as failed:
            wrapped(server, attempts=3).invoke("hi")
        assert len(server.log) == 3
    assert classify(failed.value) == "bad_response" and "bad_response" in RETRYABLE
    assert "reply" in str(failed.value)


def test_other_faults_keep_their_kinds() -> None:
    with FakeOpenAI(default="ok") as server:
        model = wrapped(server, attempts=1)
        for fault, kind in ((RESET, "connection"), (CONTEXT_OVERFLOW, "context_overflow"),
                            (Fault(500), "server_error"), (Fault(429), "rate_limit")):
            server.fail_next(fault)
            with pytest.raises(Exception) as failed:
                model.invoke("hi")
            assert classify(failed.value) == kind


class Answer(BaseModel):
    value: int


def test_the_models_own_failures_are_not_bad_replies() -> None:
    try:
        Answer.model_validate_json('{"value": "not a number"}')
    except ValueError as exc:  # a structured answer that does not validate: the model's
        assert unreadable_reply(exc) is None
    assert unreadable_reply(LookupError("reference model: unknown example input")) is None
    assert unreadable_reply(TypeError("_agenerate() got an unexpected keyword argument "
                                      "'tools'")) is None
    assert unreadable_reply(ValueError("the answer cannot be parsed")) is None
    assert unreadable_reply(AttributeError("raised by hand")) is None


# ----------------------------------------------------------------------------- a whole run

def responder(broken: dict[int, Fault]) -> Any:
    """Toy answers; the items in ``broken`` always get their fault."""

    def respond(req: ChatRequest) -> Reply | Fault:
        answer = echo_answer(req.prompt)
        item = int(answer.split("-")[1]) if answer != "?" else -1
        return broken.get(item, answer)

    return respond


def test_a_run_counts_them_apart_and_a_resume_runs_them_again(tmp_path: Path) -> None:
    data = write_toy(tmp_path / "data")
    out = tmp_path / "runs"
    args = ["run", "toy", "--lang", "en", "--model", "openai:fake-model", "--out", str(out),
            "--data-dir", str(data), "--no-cache", "--max-attempts", "3", "--json"]
    with FakeOpenAI(responder({2: MALFORMED, 4: EMPTY_CHOICES}), api_key=KEY) as server:
        result = CliRunner().invoke(app, [*args, "--model-arg", f"base_url={server.base_url}",
                                          "--model-arg", f"api_key={KEY}"])
        tries = len(server.log)
    assert result.exit_code == 3, result.output  # was 0: two wrong answers
    row = json.loads(result.stdout)
    assert row["counts"]["infra_errors"] == 2 and row["counts"]["model_errors"] == 0
    assert row["metrics"] == {"accuracy": 100.0}  # was 66.7: scored as wrong
    assert row["infra_error_kinds"] == {"bad_response": 2}
    assert tries == 4 + 2 * 3  # the two broken examples were retried
    assert "failed on the provider side" in result.output
    lines = [json.loads(ln) for ln in (out / row["experiment"] / EXAMPLES).read_text()
             .splitlines()]
    broken = [r for r in lines if r["status"] != "ok"]
    assert {r["error_kind"] for r in broken} == {"bad_response"} and len(broken) == 2
    assert all(r["score"] is None and r["retries"] == 2 for r in broken)

    with FakeOpenAI(responder({}), api_key=KEY) as server:
        result = CliRunner().invoke(app, [*args, "--model-arg", f"base_url={server.base_url}",
                                          "--model-arg", f"api_key={KEY}"])
        assert len(server.log) == 2  # the resume ran exactly the two again
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout)
    assert row["counts"]["ok"] == 6 and row["counts"]["infra_errors"] == 0
