"""The model gateway's OpenAI Chat Completions route, driven by the official ``openai`` SDK:
tool calls out (two at once) and their results back, streaming and not, usage as the model
reported it, every call in the example's transcript with what the request carried."""

from __future__ import annotations

import json
from typing import Any

from gateway_helpers import FINAL, QUESTION, WEATHER, served, transcript
from openai import OpenAI

TOOLS = [{"type": "function", "function": WEATHER}]


def client(url: str, key: str) -> OpenAI:
    return OpenAI(base_url=url, api_key=key, max_retries=0)


def second_turn(calls: list[Any]) -> list[dict[str, Any]]:
    """The conversation after the model's calls: its message and each call's result."""
    results = {"Paris": "sunny", "Rome": "rainy"}
    return [{"role": "user", "content": QUESTION},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": c["id"], "type": "function", "function": c["function"]} for c in calls]},
            *({"role": "tool", "tool_call_id": c["id"],
               "content": results[json.loads(c["function"]["arguments"])["city"]]}
              for c in calls)]


def test_tool_calls_both_ways_without_streaming() -> None:
    with served() as s:
        sdk = client(s.openai_url, s.grant.key)
        first = sdk.chat.completions.create(
            model="anything", messages=[{"role": "user", "content": QUESTION}], tools=TOOLS,
            temperature=0.7, metadata={"run": "x"}, store=False, reasoning_effort="low")
        choice = first.choices[0]
        assert choice.finish_reason == "tool_calls" and choice.message.content is None
        calls = [c.model_dump() for c in choice.message.tool_calls or []]
        assert [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
                for c in calls] == [("call_paris", "get_weather", {"city": "Paris"}),
                                    ("call_rome", "get_weather", {"city": "Rome"})]
        assert first.model == "anything" and first.object == "chat.completion"
        second = sdk.chat.completions.create(model="anything", messages=second_turn(calls),
                                             tools=TOOLS)
        assert second.choices[0].message.content == FINAL
        assert second.choices[0].finish_reason == "stop"
        sent = transcript(s.stats)
    # The example's accounting: two calls paid, their tokens what the answers said.
    assert s.stats.calls == 2
    assert s.stats.input_tokens == first.usage.prompt_tokens + second.usage.prompt_tokens
    assert s.stats.output_tokens == (first.usage.completion_tokens
                                     + second.usage.completion_tokens) > 0
    # The transcript: the tool bound, the results as tool messages with their call ids.
    assert sent[0]["tools"] == TOOLS and sent[0]["output"]["tool_calls"][0]["id"] == "call_paris"
    assert [(m["role"], m.get("tool_call_id"), m["content"]) for m in sent[1]["messages"][2:]] \
        == [("tool", "call_paris", "sunny"), ("tool", "call_rome", "rainy")]
    assert sent[1]["output"]["content"] == FINAL
    # What the request carried and the gateway did not apply is recorded, never refused.
    assert sent[0]["request"]["format"] == "chat.completions"
    assert sent[0]["request"]["model"] == "anything"
    assert sent[0]["request"]["unused"] == {"temperature": 0.7, "metadata": {"run": "x"},
                                            "store": False, "reasoning_effort": "low"}


def test_a_stream_is_the_providers_chunk_sequence() -> None:
    with served() as s:
        sdk = client(s.openai_url, s.grant.key)
        chunks = list(sdk.chat.completions.create(
            model="m", messages=[{"role": "user", "content": QUESTION}], tools=TOOLS,
            stream=True, stream_options={"include_usage": True}))
        calls: dict[int, dict[str, str]] = {}
        for chunk in chunks:
            for choice in chunk.choices:
                for delta in choice.delta.tool_calls or []:
                    got = calls.setdefault(delta.index, {"id": "", "name": "", "args": ""})
                    got["id"] += delta.id or ""
                    got["name"] += (delta.function.name or "") if delta.function else ""
                    got["args"] += (delta.function.arguments or "") if delta.function else ""
        assert chunks[0].choices[0].delta.role == "assistant"
        assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
        assert [(c["id"], c["name"], json.loads(c["args"])) for c in calls.values()] == [
            ("call_paris", "get_weather", {"city": "Paris"}),
            ("call_rome", "get_weather", {"city": "Rome"})]
        usage = chunks[-1].usage  # the last chunk: usage, no choice
        assert chunks[-1].choices == [] and usage is not None
        assert usage.prompt_tokens == s.stats.input_tokens > 0
        # The SDK's own accumulating helper reads the same answer, text this time.
        calls_sent = [{"id": c["id"], "function": {"name": c["name"], "arguments": c["args"]}}
                      for c in calls.values()]
        with sdk.chat.completions.stream(model="m", messages=second_turn(calls_sent),
                                         tools=TOOLS) as stream:
            final = stream.get_final_completion()
        assert final.choices[0].message.content == FINAL
        assert [c["request"]["stream"] for c in transcript(s.stats)] == [True, True]


def test_models_lists_the_one_model_served() -> None:
    with served(name="reference") as s:
        listed = client(s.openai_url, s.grant.key).models.list()
        assert [m.id for m in listed.data] == ["reference"]
        assert s.grant.requests["models"] == 1
