"""The chat model that reads tool calls written as text (issue 21), against an OpenAI-compatible
server on 127.0.0.1 that answers as Qwen2.5-Coder-1.5B did on a local server: the call in a
fenced JSON block, never in ``tool_calls``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_langsmith import loopback_only
from fake_openai import ChatRequest, FakeOpenAI
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from tooleval_agents.agents import agent_record, trajectory
from tooleval_agents.graphs.tool_agent import react_agent
from tooleval_agents.models.accounting import collect_stats
from tooleval_agents.models.cache import SQLiteCache
from tooleval_agents.models.chat_models import ScriptedChatModel
from tooleval_agents.models.retry import RetryingChatModel
from tooleval_agents.models.tool_calls import SOURCE_KEY
from tooleval_agents.models.tool_calls.protocol import history_as_text, history_from_text
from tooleval_agents.models.tool_calls.reader import TextToolCallReader, read_tool_calls


@tool
def get_weather(city: str, date: str) -> str:
    """The weather of a city on a date (yyyy-mm-dd)."""
    return json.dumps({"city": city, "date": date, "sky": "sunny"})


def fenced(name: str, args: dict[str, Any]) -> str:
    return f'```json\n{json.dumps({"name": name, "arguments": args})}\n```'


def qwen_like(request: ChatRequest) -> str:
    """Writes the call as text until a tool answer is in the conversation (either form)."""
    answered = any(m.get("role") == "tool" or (
        m.get("role") == "user" and str(m.get("content")).startswith("<tool_response>"))
        for m in request.messages)
    if answered:
        return "It will be sunny in Paris."
    return "I'll check.\n" + fenced("get_weather", {"city": "Paris", "date": "2019-03-07"})


@pytest.fixture
def _loopback(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with loopback_only(monkeypatch) as refused:
        yield
    assert refused == [], f"tried to reach {refused}"


def chat(server: FakeOpenAI, **kw: Any) -> ChatOpenAI:
    return ChatOpenAI(model="qwen", base_url=server.base_url, api_key="sk-test",
                      max_retries=0, temperature=0, **kw)


def test_native_mode_is_the_model_itself() -> None:
    model = ScriptedChatModel(rules=[], default="x")
    assert read_tool_calls(model, "native") is model
    assert isinstance(read_tool_calls(model, "auto"), TextToolCallReader)


def test_auto_reads_text_calls_and_keeps_structured_ones() -> None:
    text = "Let me look.\n" + fenced("get_weather", {"city": "Paris", "date": "2019-03-07"})
    structured = AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": "Oslo",
                                                                              "date": "x"},
                                            "id": "call_9"}])
    model = ScriptedChatModel(rules=[("Oslo", structured)], default=text)
    bound = TextToolCallReader(inner=model, mode="auto").bind_tools([get_weather])
    answer = bound.invoke([HumanMessage("weather in Paris?")])
    assert answer.tool_calls == [{"name": "get_weather", "id": "text_1_0", "type": "tool_call",
                                  "args": {"city": "Paris", "date": "2019-03-07"}}]
    assert answer.response_metadata[SOURCE_KEY] == "text"
    assert answer.content == text  # the answer stays as written
    kept = bound.invoke([HumanMessage("weather in Oslo?")])
    assert kept.tool_calls[0]["id"] == "call_9" and SOURCE_KEY not in kept.response_metadata
    # no call written: the answer is left alone
    plain = TextToolCallReader(inner=ScriptedChatModel(rules=[], default="Sunny."), mode="auto")
    assert plain.bind_tools([get_weather]).invoke("hi").tool_calls == []


@pytest.mark.usefixtures("_loopback")
def test_text_mode_describes_the_tools_and_sends_no_api_tools() -> None:
    with FakeOpenAI(qwen_like) as server:
        reader = TextToolCallReader(inner=chat(server), mode="text")
        bound = reader.bind_tools([get_weather], tool_choice="required",
                                  parallel_tool_calls=False)
        answer = asyncio.run(bound.ainvoke([HumanMessage("Weather in Paris on March 7?")]))
        [request] = server.log
    assert [c["name"] for c in answer.tool_calls] == ["get_weather"]
    assert not {"tools", "tool_choice", "parallel_tool_calls"} & set(request.body)
    system = request.messages[0]
    assert system["role"] == "system" and "<tools>" in system["content"]
    described = json.loads(system["content"].split("<tools>\n")[1].split("\n</tools>")[0])
    assert described["name"] == "get_weather" and "city" in described["parameters"]["properties"]


@pytest.mark.usefixtures("_loopback")
def test_auto_mode_binds_tools_natively() -> None:
    with FakeOpenAI(qwen_like) as server:
        bound = TextToolCallReader(inner=chat(server), mode="auto").bind_tools([get_weather])
        answer = bound.invoke([HumanMessage("Weather in Paris on March 7?")])
        [request] = server.log
    assert request.body["tools"][0]["function"]["name"] == "get_weather"
    assert answer.tool_calls[0]["args"] == {"city": "Paris", "date": "2019-03-07"}


@pytest.mark.usefixtures("_loopback")
@pytest.mark.parametrize("mode", ["text", "auto"])
def test_create_agent_gets_the_calls_and_the_answers_go_back_as_text(mode: str) -> None:
    with FakeOpenAI(qwen_like) as server:
        agent = create_agent(TextToolCallReader(inner=chat(server), mode=mode), [get_weather])
        state = agent.invoke({"messages": [HumanMessage("Weather in Paris on March 7?")]})
        log = list(server.log)
    records = trajectory(state["messages"])
    assert [(r.name, r.source, r.error) for r in records] == [("get_weather", "text", False)]
    assert json.loads(records[0].output or "")["sky"] == "sunny"
    assert state["messages"][-1].text == "It will be sunny in Paris."
    second = log[1].messages
    assistant = next(m for m in second if m["role"] == "assistant")
    assert "tool_calls" not in assistant and "```json" in assistant["content"]
    assert not any(m["role"] == "tool" for m in second)
    answer = second[-1]
    assert answer["role"] == "user" and answer["content"].startswith("<tool_response>")
    assert '"sky": "sunny"' in answer["content"]
    record = agent_record(state["messages"], records)
    assert (record["structured_calls"], record["text_calls"], record["unread_text_calls"]) == \
        (0, 1, 0)


def test_a_text_call_of_an_unknown_tool_fails_as_a_call() -> None:
    model = ScriptedChatModel(rules=[("no tool named", "Sorry.")],
                              default=fenced("get_wether", {"city": "Paris"}))
    agent = react_agent(TextToolCallReader(inner=model, mode="text"), [get_weather])
    state = asyncio.run(agent.ainvoke({"messages": [HumanMessage("Weather?")]}))
    [record] = trajectory(state["messages"])
    assert (record.name, record.error, record.source) == ("get_wether", True, "text")
    assert "no tool named 'get_wether'" in (record.output or "")


def test_native_answers_that_hold_text_calls_are_counted_unread() -> None:
    model = ScriptedChatModel(rules=[], default=fenced("get_weather", {"city": "Paris"}))
    agent = react_agent(model, [get_weather])
    state = asyncio.run(agent.ainvoke({"messages": [HumanMessage("Weather?")]}))
    record = agent_record(state["messages"], trajectory(state["messages"]))
    assert (record["tool_calls"], record["unread_text_calls"]) == (0, 1)


@pytest.mark.usefixtures("_loopback")
def test_the_transcript_holds_what_the_server_was_sent_once_per_turn() -> None:
    with FakeOpenAI(qwen_like) as server:
        agent = react_agent(TextToolCallReader(inner=RetryingChatModel(inner=chat(server)),
                                               mode="text"), [get_weather])

        async def go() -> list[dict[str, Any]]:
            with collect_stats() as stats:
                await agent.ainvoke({"messages": [HumanMessage("Weather in Paris?")]})
            assert stats.calls == 2
            return list(stats.transcript.values())

        recorded = asyncio.run(go())
    assert len(recorded) == 2
    assert recorded[0]["tools"] is None  # text mode: nothing bound through the API
    assert recorded[0]["messages"][0]["role"] == "system"
    assert recorded[1]["messages"][-1]["content"].startswith("<tool_response>")


@pytest.mark.usefixtures("_loopback")
def test_a_rerun_replays_every_turn_from_the_cache(tmp_path: Path) -> None:
    cache = SQLiteCache(tmp_path / "c.sqlite")
    with FakeOpenAI(qwen_like) as server:

        def once() -> list[Any]:
            inner = RetryingChatModel(inner=chat(server), cache=cache)
            agent = react_agent(TextToolCallReader(inner=inner, mode="auto"), [get_weather])
            return asyncio.run(agent.ainvoke({"messages": [HumanMessage("Paris?")]}))["messages"]

        first = once()
        requests = len(server.log)
        second = once()
        assert len(server.log) == requests == 2  # the second run asked nothing
    assert [m.content for m in first] == [m.content for m in second]
    assert trajectory(first)[0].id == trajectory(second)[0].id == "text_1_0"


def test_the_offline_history_round_trip() -> None:
    call = AIMessage('<tool_call>{"name": "f", "arguments": {"x": 1}, "id": "call_0"}</tool_call>',
                     tool_calls=[{"name": "f", "args": {"x": 1}, "id": "call_0"}],
                     response_metadata={SOURCE_KEY: "text"})
    history = [HumanMessage("go"), call,
               ToolMessage('{"y": 2}', tool_call_id="call_0", name="f"),
               ToolMessage("Error: bad", tool_call_id="call_0", name="f", status="error")]
    sent = history_as_text(history)
    assert [m.type for m in sent] == ["human", "ai", "human"]
    back = history_from_text(sent)
    assert [m.type for m in back] == ["human", "ai", "tool", "tool"]
    assert back[1].tool_calls[0]["id"] == "call_0"
    assert json.loads(back[2].content) == {"y": 2}
    assert back[3].status == "error" and back[3].content == "Error: bad"
