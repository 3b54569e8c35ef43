"""LangChain's OpenAI client against the loopback fake server (:mod:`fake_openai`): scripted
replies with the server's token usage, retries on 429/500, timeouts, streaming, and AppBench
workflows run end to end through ``ChatOpenAI`` and ``resolve_model("openai:...")``.

Nothing but 127.0.0.1 is contacted (a socket guard refuses anything else), and the fake API key
never reaches a file.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from fake_langsmith import loopback_only
from fake_openai import (
    ChatRequest,
    FakeOpenAI,
    Fault,
    FaultShare,
    Reply,
    Usage,
    count_tokens,
)
from helpers import ClockLoop, run_on_clock
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_openai import ChatOpenAI

from tooleval_agents.appbench.names import APP_APIS
from tooleval_agents.appbench.records import AppBenchSample, AppCall
from tooleval_agents.contracts import Split, StrategyContext
from tooleval_agents.evaluators.appbench.parse import gold_answer, parse_answer
from tooleval_agents.graphs.appbench.planning import gold_app_list
from tooleval_agents.graphs.appbench.prompts import PLAN_MARKER, SELECT_MARKER
from tooleval_agents.models.reference import last_input_block
from tooleval_agents.models.specs import resolve_model
from tooleval_agents.registry import get_benchmark, get_strategy
from tooleval_agents.run.runner import as_target

API_KEY = "sk-test-fake-0123456789"


@pytest.fixture(autouse=True)
def _loopback(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID",
                "OPENAI_ORGANIZATION", "OPENAI_PROXY"):
        monkeypatch.delenv(var, raising=False)
    with loopback_only(monkeypatch) as refused:
        yield
    assert refused == [], f"tried to reach {refused}"


def chat(server: FakeOpenAI, **kwargs: Any) -> ChatOpenAI:
    return ChatOpenAI(base_url=server.base_url, api_key=API_KEY,  # type: ignore[arg-type]
                      model="gpt-4o-mini", **{"max_retries": 0, **kwargs})


def assert_usage(message: AIMessage, request: ChatRequest) -> None:
    assert request.usage is not None and message.usage_metadata is not None
    assert message.usage_metadata["input_tokens"] == request.usage.prompt
    assert message.usage_metadata["output_tokens"] == request.usage.completion
    assert message.usage_metadata["total_tokens"] == request.usage.prompt + request.usage.completion


# ----------------------------------------------------------------------------- plain calls

RULES: list[tuple[str, Reply]] = [(r"capital of France", "Paris"),
                                  (r"capital of Italy", "Rome")]


def test_chat_openai_gets_scripted_replies_with_usage() -> None:
    with FakeOpenAI(rules=RULES, api_key=API_KEY) as server:
        model = chat(server)
        rome = model.invoke("What is the capital of Italy?")
        paris = model.invoke("What is the capital of France?")
    assert (rome.content, paris.content) == ("Rome", "Paris")
    assert [r.status for r in server.log] == [200, 200] and all(r.authorized for r in server.log)
    assert_usage(rome, server.log[0])
    assert_usage(paris, server.log[1])
    assert server.log[0].usage == Usage(prompt=count_tokens("What is the capital of Italy?"),
                                        completion=1)
    assert server.log[0].body["model"] == "gpt-4o-mini"
    assert server.usage() == (rome.usage_metadata["input_tokens"]  # type: ignore[index]
                              + paris.usage_metadata["input_tokens"], 2)  # type: ignore[index]


def test_init_chat_model_through_resolve_model() -> None:
    with FakeOpenAI(lambda req: req.last_user.upper(), api_key=API_KEY) as server:
        model = resolve_model("openai:gpt-4o-mini", base_url=server.base_url, api_key=API_KEY,
                              max_retries=0)
        answer = model.invoke("shout this")
    assert isinstance(model, ChatOpenAI)
    assert answer.content == "SHOUT THIS"
    assert isinstance(answer, AIMessage)
    assert_usage(answer, server.log[0])
    assert server.log[0].body["model"] == "gpt-4o-mini" and server.log[0].authorized


def test_wrong_key_and_unscripted_prompt_are_errors() -> None:
    with FakeOpenAI(rules=RULES, api_key=API_KEY) as server:
        bad_key = ChatOpenAI(base_url=server.base_url, api_key="sk-other",  # type: ignore[arg-type]
                             max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            bad_key.invoke("What is the capital of France?")
        with pytest.raises(openai.BadRequestError, match="no scripted reply"):
            chat(server).invoke("What is the capital of Spain?")
    assert [(r.status, r.authorized) for r in server.log] == [(401, False), (400, True)]


def test_streaming_reports_usage() -> None:
    with FakeOpenAI(rules=RULES) as server:
        model = chat(server, streaming=True, stream_usage=True)
        message = model.invoke("What is the capital of France?")
    assert message.content == "Paris" and server.log[0].body["stream"] is True
    assert_usage(message, server.log[0])


# ----------------------------------------------------------------------------- failures

def test_retry_after_429_then_200() -> None:
    with FakeOpenAI(rules=RULES) as server:
        server.fail_next(429)
        message = chat(server, max_retries=2).invoke("What is the capital of France?")
        assert message.content == "Paris"
        assert server.statuses() == [429, 200]
        assert_usage(message, server.log[1])  # the failed attempt reports no usage
        assert server.usage() == (server.log[1].usage.prompt, 1)  # type: ignore[union-attr]

        server.fail_next(500, Fault(503))
        assert chat(server, max_retries=2).invoke("What is the capital of Italy?").content \
            == "Rome"
        assert server.statuses()[2:] == [500, 503, 200]


def test_retries_run_out() -> None:
    with FakeOpenAI(rules=RULES) as server:
        server.fail_next(429)
        with pytest.raises(openai.RateLimitError):
            chat(server, max_retries=0).invoke("What is the capital of France?")
        server.fail_next(429, 429, 429)
        with pytest.raises(openai.RateLimitError):
            chat(server, max_retries=2).invoke("What is the capital of France?")
    assert server.statuses() == [429] * 4


TIMEOUT = 60.0
"""The client's timeout: beyond any real delay, reached only when the test moves the clock."""


def test_stall_times_out_then_retry_succeeds() -> None:
    # The client's own timeout and retries (async: httpx times reads on the loop's clock; one
    # loop for both calls, as LangChain's OpenAI clients keep their pools on the loop).
    async def ask(clock: ClockLoop, server: FakeOpenAI, retries: int, stalls: int) -> Any:
        call = asyncio.ensure_future(chat(server, max_retries=retries, timeout=TIMEOUT).ainvoke(
            "What is the capital of France?"))
        await clock.run_in_executor(None, server.wait_stalled, stalls)
        clock.advance(TIMEOUT)  # the stalled request's time is up
        return await call

    async def both(clock: ClockLoop, server: FakeOpenAI) -> None:
        server.fail_next(Fault(status=200, stall=True))  # held until the server stops
        message = await ask(clock, server, 1, 1)
        assert message.content == "Paris"
        assert len(server.log) == 2 and server.log[0].fault is not None
        assert [r.status for r in server.log] == [0, 200]  # the stalled answer never went out
        server.fail_next(Fault(status=200, stall=True))
        with pytest.raises(openai.APITimeoutError):
            await ask(clock, server, 0, 2)
        assert len(server.log) == 3

    with FakeOpenAI(rules=RULES) as server:
        run_on_clock(lambda clock: both(clock, server))


def test_counter_share_fails_an_exact_fraction() -> None:
    with FakeOpenAI(rules=RULES, faults=[FaultShare(0.5, Fault(429))]) as server:
        model = chat(server, max_retries=2)
        answers = [model.invoke("What is the capital of Italy?").content for _ in range(6)]
    assert answers == ["Rome"] * 6
    # request n fails when floor((n+1)/2) > floor(n/2): every second one, each retried once
    assert server.statuses() == [200] + [429, 200] * 5


def test_content_share_is_the_same_under_concurrency() -> None:
    prompts: list[Any] = [f"Echo item {i}" for i in range(24)]

    def run(concurrency: int) -> tuple[list[str], set[str]]:
        share = FaultShare(0.3, Fault(429), by="content", attempts=1)
        with FakeOpenAI(lambda req: req.last_user.split()[-1], faults=[share]) as server:
            model = chat(server, max_retries=2)
            answers = asyncio.run(model.abatch(prompts, config={"max_concurrency": concurrency}))
        failed = {r.prompt for r in server.log if r.status == 429}
        assert len(server.log) == len(prompts) + len(failed)  # each chosen prompt failed once
        return [str(a.content) for a in answers], failed

    sequential, failed_seq = run(1)
    concurrent, failed_conc = run(6)
    assert sequential == concurrent == [str(i) for i in range(24)]
    assert failed_seq == failed_conc and 0 < len(failed_seq) < len(prompts)


# ----------------------------------------------------------------------------- AppBench

SPLIT = Split("appbench", "plan", "mm")


def appbench_samples(samples: Path, split: Split = SPLIT) -> list[AppBenchSample]:
    return list(get_benchmark("appbench").load(split, samples))  # type: ignore[arg-type]


def gold_responder(pool: list[AppBenchSample]) -> Any:
    """Answers like a perfect model: the gold answer of the sample whose instruction is in the
    prompt's last ``<input>`` block, for the stage the prompt's marker names."""
    by_input = {s.input.strip(): s for s in pool}

    def respond(req: ChatRequest) -> Reply:
        block = last_input_block(req.prompt)
        sample = by_input.get((block or "").strip())
        if sample is None:
            raise AssertionError(f"unknown example in prompt: {block!r}")
        if PLAN_MARKER in req.prompt:
            return gold_answer(sample)
        if SELECT_MARKER in req.prompt:
            return gold_app_list(sample)
        raise AssertionError("no stage marker in the prompt")

    return respond


def call_key(call: AppCall) -> tuple[Any, ...]:
    return (call.app, call.api, call.returns, call.literal_args, call.dependent_args)


def requests_of(server: FakeOpenAI, sample: AppBenchSample) -> list[ChatRequest]:
    return [r for r in server.ok()
            if (last_input_block(r.prompt) or "").strip() == sample.input.strip()]


def check_run(server: FakeOpenAI, pool: list[AppBenchSample], states: list[dict[str, Any]],
              calls_per_example: int) -> tuple[int, int]:
    """Every prediction parses to the gold calls and every example's usage equals the tokens
    the server reported for its requests; returns the usage summed over the run."""
    total_in = total_out = 0
    for sample, state in zip(pool, states, strict=True):
        assert state["parse_error"] is None
        predicted = parse_answer(state["prediction"]).calls
        assert [call_key(c) for c in predicted] == [call_key(c) for c in sample.calls]
        mine = requests_of(server, sample)
        assert len(mine) == calls_per_example
        usage = [r.usage for r in mine if r.usage is not None]
        expected = {"input_tokens": sum(u.prompt for u in usage),
                    "output_tokens": sum(u.completion for u in usage),
                    "model_calls": calls_per_example}
        assert state["usage"] == expected
        total_in += expected["input_tokens"]
        total_out += expected["output_tokens"]
    return total_in, total_out


def build(strategy: str, model: BaseChatModel, samples: Path, split: Split = SPLIT) -> Any:
    return get_strategy("appbench", strategy).build(
        StrategyContext(model=model, split=split, data_dir=samples))


def test_appbench_flat_through_chat_openai(samples: Path, tmp_path: Path) -> None:
    pool = appbench_samples(samples)
    assert len(pool) >= 4
    with FakeOpenAI(gold_responder(pool), api_key=API_KEY) as server:
        model = chat(server, max_retries=2, temperature=0)
        graph = build("flat", model, samples)
        states = [graph.invoke({"inputs": {"input": s.input}}) for s in pool]
    assert all(r.authorized and r.body["temperature"] == 0 for r in server.log)
    total = check_run(server, pool, states, calls_per_example=1)
    assert total == server.usage() and total[0] > 1000 * len(pool)  # the 15-app catalog

    # the gold answers score perfectly with the project's AppBench scorer
    scorer = get_benchmark("appbench").scorer(SPLIT)
    scores = [scorer.score({"input": s.input}, st, s.output.model_dump(mode="json"))
              for s, st in zip(pool, states, strict=True)]
    assert scorer.aggregate(scores)["success"] == 100.0

    # what a run would store (outputs, request log, model config) holds no API key
    outputs = [{k: st.get(k) for k in ("prediction", "parse_error", "usage", "raw_outputs")}
               for st in states]
    (tmp_path / "outputs.json").write_text(json.dumps(outputs), encoding="utf-8")
    (tmp_path / "requests.json").write_text(json.dumps([r.body for r in server.log]),
                                            encoding="utf-8")
    (tmp_path / "model.json").write_text(json.dumps(model.to_json(), default=str),
                                         encoding="utf-8")
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert API_KEY.encode() not in path.read_bytes(), path


def test_appbench_through_resolve_model_with_rate_limits(samples: Path) -> None:
    """``resolve_model("openai:...")``, concurrent examples, 429s on the first try of about half
    the prompts (4 of these 11): retries hide them, and failed attempts add no tokens."""
    # MS and MM samples: the flat prompt does not depend on the category, one graph serves both
    pool = appbench_samples(samples, Split("appbench", "plan", "ms")) + appbench_samples(samples)
    share = FaultShare(0.5, Fault(429), by="content", attempts=1)
    with FakeOpenAI(gold_responder(pool), api_key=API_KEY, faults=[share]) as server:
        model = resolve_model("openai:gpt-4o-mini", base_url=server.base_url, api_key=API_KEY,
                              max_retries=2, temperature=0)
        graph = build("flat", model, samples)
        states = graph.batch([{"inputs": {"input": s.input}} for s in pool],
                             config={"max_concurrency": 4})
    rate_limited = [r for r in server.log if r.status == 429]
    assert rate_limited and len(server.log) == len(pool) + len(rate_limited)
    total = check_run(server, pool, states, calls_per_example=1)
    assert total == server.usage()


def test_appbench_hierarchical_two_calls_per_example(samples: Path) -> None:
    pool = appbench_samples(samples)
    with FakeOpenAI(gold_responder(pool)) as server:
        graph = build("hierarchical", chat(server), samples)
        target = as_target(graph)

        async def run_all() -> list[dict[str, Any]]:
            return list(await asyncio.gather(*(target({"input": s.input}) for s in pool)))

        outputs = asyncio.run(run_all())
    check_run(server, pool, outputs, calls_per_example=2)
    # the planning prompt shows exactly the apps the model selected (here the gold apps)
    by_input = {s.input.strip(): s for s in pool}
    plan_prompts = [r.prompt for r in server.ok() if PLAN_MARKER in r.prompt]
    assert len(plan_prompts) == len(pool)
    for prompt in plan_prompts:
        sample = by_input[(last_input_block(prompt) or "").strip()]
        shown = {app for app in APP_APIS if f"App {app}:" in prompt}
        assert shown == set(json.loads(gold_app_list(sample))) == set(sample.output.used_app)
