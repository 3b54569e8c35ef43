"""The retrying wrapper through LangChain's public interfaces (issue 23, item 5): one traced
run per call whatever the retries, its own response-cache key from public data, LangSmith
metadata of the inner model, tools and structured output through the wrapper, and each call in
the example's transcript."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any
from uuid import UUID

import openai
import pytest
from fake_langsmith import FakeLangSmith
from fake_openai import FakeOpenAI, Fault
from helpers import wait_until
from langchain_core.caches import InMemoryCache
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.load import dumpd
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool
from langchain_core.tracers.langchain import wait_for_all_tracers
from langchain_openai import ChatOpenAI
from langsmith import tracing_context
from pydantic import BaseModel

from tooleval_agents.contracts import GoldAnswer
from tooleval_agents.graphs.state import usage_of
from tooleval_agents.models.accounting import collect_stats
from tooleval_agents.models.cache import SQLiteCache
from tooleval_agents.models.chat_models import ScriptedChatModel
from tooleval_agents.models.identity import answers_key, model_name_of, provider_of
from tooleval_agents.models.reference import AnswerKey, ReferenceChatModel
from tooleval_agents.models.retry import RetryingChatModel, RetryPolicy
from tooleval_agents.redaction import model_params
from tooleval_agents.results.transcripts import PromptStore, read_prompts
from tooleval_agents.run.naming import model_label

NO_WAIT = RetryPolicy(max_attempts=4, base_delay=0.0, max_delay=0.0, jitter=False,
                      timeout=None)
SECRET = "sk-test-SECRET123"


class Starts(BaseCallbackHandler):
    """Counts chat model runs and keeps their LangSmith metadata."""

    def __init__(self) -> None:
        self.metadata: list[dict[str, Any]] = []

    def on_chat_model_start(self, serialized: dict[str, Any],
                            messages: list[list[BaseMessage]], *, run_id: UUID,
                            **kwargs: Any) -> None:
        self.metadata.append(dict(kwargs.get("metadata") or {}))


def _openai(server: FakeOpenAI, **kwargs: Any) -> ChatOpenAI:
    return ChatOpenAI(**{"model": "gpt-4o-mini", "base_url": server.base_url,
                         "api_key": SECRET, "max_retries": 0, "temperature": 0, **kwargs})


def test_retries_make_one_run_with_the_inner_models_metadata() -> None:
    with FakeOpenAI(default="fine") as server:
        server.fail_next(Fault(429), Fault(500))
        model = RetryingChatModel(inner=_openai(server), policy=NO_WAIT)
        starts = Starts()
        with collect_stats() as stats:
            answer = model.invoke("hi", {"callbacks": [starts]})
        assert answer.content == "fine" and len(server.log) == 3
    assert (stats.calls, stats.retries, stats.kinds) == (1, 2, ["rate_limit", "server_error"])
    assert len(starts.metadata) == 1  # the tries are not runs of their own
    meta = starts.metadata[0]
    assert meta["ls_provider"] == "openai" and meta["ls_model_name"] == "gpt-4o-mini"
    assert meta["ls_temperature"] == 0 and meta["ls_model_type"] == "chat"
    assert len(stats.transcript) == 1  # one call in the transcript, with its answer
    call = next(iter(stats.transcript.values()))
    assert call["output"]["content"] == "fine" and "error" not in call


def test_langsmith_sees_one_llm_run_per_call_so_tokens_count_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGSMITH_API_KEY", "fake-key-for-tests")
    with FakeOpenAI(default="traced") as server, FakeLangSmith() as smith:
        server.fail_next(Fault(503))
        model = RetryingChatModel(inner=_openai(server), policy=NO_WAIT)
        client = smith.client()
        with tracing_context(enabled=True, client=client, project_name="p"):
            assert model.invoke("hi").content == "traced"
        wait_for_all_tracers()
        client.flush()
        runs = _llm_runs_once_ended(smith)
        assert len(server.log) == 2
    assert len(runs) == 1, runs  # LangSmith rolls child LLM usage up: a nested run would add
    extra = runs[0].get("extra") or {}
    assert extra.get("metadata", {}).get("ls_provider") == "openai"


def _llm_runs_once_ended(smith: FakeLangSmith) -> list[dict[str, Any]]:
    """The LLM runs LangSmith received, once the wrapper's run has ended (the tracer posts in
    the background; tries made during the run would have been posted before its end)."""
    def runs() -> list[dict[str, Any]]:
        with smith.lock:
            return [dict(r) for r in smith.runs.values() if r.get("run_type") == "llm"]

    wait_until(lambda: any(r.get("name") == "RetryingChatModel" and r.get("end_time")
                           for r in runs()), "the wrapper's run to end in LangSmith")
    return runs()


def test_tools_and_structured_output_through_the_wrapper_against_a_server() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    class Verdict(BaseModel):
        verdict: str

    def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": None, "tool_calls": [{
            "id": f"call_{name}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}]}

    rules = [("add 1 and 2", call("add", {"a": 1, "b": 2})),
             ("judge", call("Verdict", {"verdict": "yes"}))]
    with FakeOpenAI(rules=rules) as server:
        server.fail_next(Fault(429))
        model = RetryingChatModel(inner=_openai(server), policy=NO_WAIT)
        with collect_stats() as stats:
            called = model.bind_tools([add]).invoke("add 1 and 2")
            judged = model.with_structured_output(Verdict).invoke("judge")
        sent = [r.body for r in server.log]
    assert called.tool_calls[0]["name"] == "add" and called.tool_calls[0]["args"] == {
        "a": 1, "b": 2}
    assert judged == Verdict(verdict="yes")
    assert stats.retries == 1 and stats.calls == 2
    assert [t["function"]["name"] for t in sent[-2]["tools"]] == ["add"]
    # with_structured_output: the schema as the one tool, which the model must call.
    assert [t["function"]["name"] for t in sent[-1]["tools"]] == ["Verdict"]
    assert sent[-1]["tool_choice"] == "required"


def test_the_wrappers_cache_is_any_basecache_keyed_on_public_data() -> None:
    cache = InMemoryCache()
    with FakeOpenAI(default="pong") as server:
        first = RetryingChatModel(inner=_openai(server, timeout=30), response_cache=cache)
        # Another key, timeout and retry count: the same answers.
        second = RetryingChatModel(inner=ChatOpenAI(
            model="gpt-4o-mini", base_url=server.base_url, api_key="sk-other-999",
            max_retries=5, timeout=60, temperature=0), response_cache=cache)
        warmer = RetryingChatModel(inner=_openai(server, temperature=0.7), response_cache=cache)
        with collect_stats() as stats:
            answers = [first.invoke("ping"), second.invoke("ping"), warmer.invoke("ping"),
                       first.bind_tools([{"type": "function", "function": {
                           "name": "f", "parameters": {"type": "object"}}}]).invoke("ping")]
        assert len(server.log) == 3  # the temperature and the bound tools are other requests
    assert [a.content for a in answers] == ["pong"] * 4
    assert answers[1].usage_metadata is not None
    assert dict(answers[1].usage_metadata).get("total_cost") == 0
    assert stats.calls == 3
    prompt, llm = first.cache_key([HumanMessage("ping")])
    assert SECRET not in prompt + llm and "gpt-4o-mini" in llm


def test_a_cache_given_as_cache_is_the_wrappers_own() -> None:
    """LangChain's cache= on the wrapper would key on the wrapper's parameters (the model's
    name only): it becomes the wrapper's response cache, keyed on the inner model's."""
    cache = InMemoryCache()
    with FakeOpenAI(default="pong") as server:
        cold = RetryingChatModel(inner=_openai(server), cache=cache)
        warm = RetryingChatModel(inner=_openai(server, temperature=0.9), cache=cache)
        again = RetryingChatModel(inner=_openai(server), cache=cache)
        assert cold.response_cache is cache and cold.cache is False
        for model in (cold, warm, again):
            model.invoke("ping")
        assert len(server.log) == 2  # the warm model is another model; the third a hit


def test_sqlite_hits_through_the_wrapper_are_counted_and_cost_nothing(tmp_path: Path) -> None:
    cache = SQLiteCache(tmp_path / "c.sqlite")
    inner = ScriptedChatModel(rules=[(".", "hello")])
    model = RetryingChatModel(inner=inner, response_cache=cache)

    async def go() -> list[AIMessage]:
        return [await model.ainvoke("hi"), await model.ainvoke("hi")]

    with collect_stats() as stats:
        first, second = asyncio.run(go())
    assert inner.calls == 1 and stats.cache_hits == 1 and stats.calls == 1
    # The wrapper writes each call into the transcript, a cache hit too: no callback needed.
    calls = list(stats.transcript.values())
    assert [c["messages"][0]["content"] for c in calls] == ["hi", "hi"]
    assert [c["output"]["content"] for c in calls] == ["hello", "hello"]
    assert usage_of(first)["model_calls"] == 1
    assert usage_of(second) == usage_of(first)  # the answer's tokens, as recorded
    # what was paid: one call; the replay's tokens are the answer's, counted apart
    assert stats.input_tokens == usage_of(first)["input_tokens"]
    assert stats.replayed_input_tokens == usage_of(first)["input_tokens"] > 0
    # Another answer key is another model: no hit.
    other = RetryingChatModel(inner=ScriptedChatModel(rules=[(".", "bye")]),
                              response_cache=cache)
    assert other.invoke("hi").content == "bye"


def test_model_identity_from_public_fields() -> None:
    model = ChatOpenAI(model="gpt-4o-mini", api_key=SECRET, temperature=0,
                       default_headers={"Authorization": f"Bearer {SECRET}"})
    assert provider_of(model) == "openai" and model_name_of(model) == "gpt-4o-mini"
    assert model_label(model) == "openai:gpt-4o-mini"
    assert model_label(ScriptedChatModel(rules=[])) == "scripted"
    key = answers_key(model)
    assert SECRET not in key and "ChatOpenAI" in key and "gpt-4o-mini" in key
    assert model_params(ScriptedChatModel(rules=[(".", "x")]))["model_name"] == "scripted"
    wrapped = RetryingChatModel(inner=model)
    assert wrapped.model_name == "gpt-4o-mini"


def test_the_reference_models_answer_key_stays_out_of_each_runs_record() -> None:
    key = AnswerKey()
    for i in range(200):
        key.add(f"question {i}", [GoldAnswer("m", "answer " * 50, "plan_text")])
    model = RetryingChatModel(inner=ReferenceChatModel(answer_key=key))
    # LangChain writes the model's serialised form (its repr) into every call's run.
    assert len(json.dumps(dumpd(model))) < 2000
    assert "answer answer" not in repr(model)


def test_prompt_store_appends_through_one_handle(tmp_path: Path) -> None:
    store = PromptStore(tmp_path)
    ids = [store.put({"role": "human", "content": f"q{i}"}) for i in range(3)]
    assert store.put({"role": "human", "content": "q0"}) == ids[0]  # stored once
    assert list(read_prompts(tmp_path)) == ids  # flushed: readable at once
    store.close()
    later = store.put({"role": "human", "content": "q3"})  # opens again
    store.close()
    assert list(read_prompts(tmp_path)) == [*ids, later]
    assert PromptStore(tmp_path).put({"role": "human", "content": "q1"}) == ids[1]


def test_errors_still_classify_through_the_public_call() -> None:
    with FakeOpenAI(default="x") as server:
        server.fail_next(Fault(401))
        model = RetryingChatModel(inner=_openai(server), policy=NO_WAIT)
        with collect_stats() as stats, pytest.raises(openai.AuthenticationError):
            model.invoke("hi")
    assert stats.kinds == ["auth"] and stats.retries == 0 and len(server.log) == 1
    [call] = stats.transcript.values()  # the failed call is in the transcript with its error
    assert "AuthenticationError: Error code: 401" in call["error"] and "output" not in call
