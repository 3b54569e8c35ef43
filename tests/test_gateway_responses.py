"""The model gateway's OpenAI Responses route, driven by the official ``openai`` SDK:
function calls out (two at once) and their outputs back, streaming as the SDK accumulates it
and as its typed events, a ``namespace`` tool answered with ``namespace`` and the tool's own
name (Codex's MCP tools), a free-form ``custom`` tool, and what the gateway refuses."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from gateway_helpers import FINAL, QUESTION, WEATHER, scripted, served, transcript
from langchain_core.messages import AIMessage

TOOLS: list[Any] = [{"type": "function", "strict": False, **WEATHER}]
RESULTS = {"Paris": "sunny", "Rome": "rainy"}


def client(url: str, key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url, api_key=key, max_retries=0)


def outputs(calls: list[dict[str, Any]], prefix: str = "") -> list[dict[str, Any]]:
    """The agent's next input: the calls it got back, each with its output."""
    return [*({k: v for k, v in c.items() if k != "status"} for c in calls),
            *({"type": "function_call_output", "call_id": c["call_id"],
               "output": prefix + RESULTS[json.loads(c["arguments"])["city"]]} for c in calls)]


def test_function_calls_both_ways_without_streaming() -> None:
    with served() as s:
        sdk = client(s.openai_url, s.grant.key)
        first = sdk.responses.create(
            model="gpt-anything", instructions="Be brief.", input=QUESTION, tools=TOOLS,
            store=False, include=["reasoning.encrypted_content"], reasoning={"effort": "low"},
            metadata={"k": "v"}, max_output_tokens=256, parallel_tool_calls=True)
        calls = [item.model_dump(exclude_none=True) for item in first.output]
        assert [(c["type"], c["call_id"], c["name"], json.loads(c["arguments"]))
                for c in calls] == [("function_call", "call_paris", "get_weather",
                                     {"city": "Paris"}),
                                    ("function_call", "call_rome", "get_weather",
                                     {"city": "Rome"})]
        assert first.status == "completed" and first.usage is not None
        second = sdk.responses.create(model="gpt-anything", tools=TOOLS, store=False, input=[
            {"role": "user", "content": [{"type": "input_text", "text": QUESTION}]},
            {"type": "reasoning", "id": "rs_1", "summary": []}, *outputs(calls)])
        assert second.output_text == FINAL
        sent = transcript(s.stats)
    assert s.stats.calls == 2 and s.stats.input_tokens == (first.usage.input_tokens
                                                           + second.usage.input_tokens)
    assert [m["role"] for m in sent[0]["messages"]] == ["system", "human"]
    assert [(m["role"], m.get("tool_call_id"), m["content"]) for m in sent[1]["messages"][1:]] \
        == [("ai", None, ""), ("tool", "call_paris", "sunny"), ("tool", "call_rome", "rainy")]
    assert len(sent[1]["messages"][1]["tool_calls"]) == 2  # the two calls: one turn
    assert sent[1]["request"]["dropped"] == {"reasoning": 1}
    assert set(sent[0]["request"]["unused"]) == {"store", "include", "reasoning", "metadata",
                                                 "max_output_tokens", "parallel_tool_calls"}


def test_a_stream_is_the_responses_event_sequence() -> None:
    with served() as s:
        sdk = client(s.openai_url, s.grant.key)
        events = list(sdk.responses.create(model="m", input=QUESTION, tools=TOOLS, stream=True))
        assert [e.type for e in events] == [
            "response.created", "response.in_progress",
            *["response.output_item.added", "response.function_call_arguments.delta",
              "response.function_call_arguments.done", "response.output_item.done"] * 2,
            "response.completed"]
        assert [e.sequence_number for e in events] == list(range(len(events)))
        with sdk.responses.stream(model="m", input=QUESTION, tools=TOOLS) as stream:
            calls = [i.model_dump(exclude_none=True) for i in stream.get_final_response().output]
        with sdk.responses.stream(model="m", tools=TOOLS, input=[
                {"role": "user", "content": QUESTION}, *outputs(calls)]) as stream:
            texts = [e.delta for e in stream if e.type == "response.output_text.delta"]
            final = stream.get_final_response()
        assert "".join(texts) == final.output_text == FINAL
        assert final.usage is not None and final.usage.output_tokens > 0


NAMESPACED = AIMessage("", tool_calls=[
    {"name": "mcp__bench__get_weather", "args": {"city": "Paris"}, "id": "call_paris",
     "type": "tool_call"},
    {"name": "apply_patch", "args": {"input": "*** Begin Patch"}, "id": "call_patch",
     "type": "tool_call"}])


def test_a_namespace_tool_is_answered_with_its_namespace_and_own_name() -> None:
    tools: list[Any] = [
        {"type": "namespace", "name": "mcp__bench__", "description": "The benchmark's tools",
         "tools": [{"type": "function", **WEATHER}]},
        {"type": "custom", "name": "apply_patch", "description": "Edit files"},
        {"type": "web_search"}]  # hosted: recorded, not bound
    with served(scripted(NAMESPACED)) as s:
        sdk = client(s.openai_url, s.grant.key)
        first = sdk.responses.create(model="m", input=QUESTION, tools=tools)
        weather, patch = (item.model_dump(exclude_none=True) for item in first.output)
        assert (weather["type"], weather["namespace"], weather["name"]) == (
            "function_call", "mcp__bench__", "get_weather")
        assert (patch["type"], patch["name"], patch["input"]) == (
            "custom_tool_call", "apply_patch", "*** Begin Patch")
        # Codex sends the namespaced call back as it got it, its output prefixed.
        sdk.responses.create(model="m", tools=tools, input=[
            {"role": "user", "content": QUESTION},
            {k: v for k, v in weather.items() if k != "status"},
            {k: v for k, v in patch.items() if k != "status"},
            {"type": "function_call_output", "call_id": "call_paris",
             "output": "Wall time: 0.1 seconds\nOutput:\nsunny"},
            {"type": "custom_tool_call_output", "call_id": "call_patch", "output": "Done"}])
        bound, again = transcript(s.stats)
    assert [t["function"]["name"] for t in bound["tools"]] == ["mcp__bench__get_weather",
                                                               "apply_patch"]
    assert bound["tools"][1]["function"]["parameters"]["required"] == ["input"]
    assert bound["request"]["unused"] == {"tools": [{"type": "web_search"}]}  # not bound
    assert [(c["name"], c["args"]) for c in again["messages"][1]["tool_calls"]] == [
        ("mcp__bench__get_weather", {"city": "Paris"}),
        ("apply_patch", {"input": "*** Begin Patch"})]  # under the names they were bound as
    assert [m["tool_call_id"] for m in again["messages"][2:]] == ["call_paris", "call_patch"]


@pytest.mark.parametrize("field", ["previous_response_id", "conversation", "background"])
def test_what_needs_stored_responses_is_refused(field: str) -> None:
    with served() as s, pytest.raises(openai.BadRequestError, match="keeps no responses"):
        client(s.openai_url, s.grant.key).responses.create(
            model="m", input=QUESTION, extra_body={field: "resp_1" if field != "background"
                                                  else True})
