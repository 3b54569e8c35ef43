"""The model gateway's Anthropic Messages route, driven by the official ``anthropic`` SDK (the
beta route Claude Code takes too): tool_use out (two at once) and tool_result back, streaming
as the SDK accumulates it and as raw events, usage, what the request carried recorded, errors
in Anthropic's own shape."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from gateway_helpers import FINAL, QUESTION, WEATHER, served, transcript

from tooleval_agents.models.accounting import CallStats

TOOLS = [{"name": WEATHER["name"], "description": WEATHER["description"],
          "input_schema": WEATHER["parameters"]}]


def client(url: str, key: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key=key, max_retries=0)


def second_turn(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    results = {"Paris": "sunny", "Rome": "rainy"}
    return [{"role": "user", "content": QUESTION},
            {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm",
                                               "signature": "x"}, *calls]},
            {"role": "user", "content": [
                *({"type": "tool_result", "tool_use_id": c["id"],
                   "content": [{"type": "text", "text": results[c["input"]["city"]]}]}
                  for c in calls),
                {"type": "text", "text": "Go on.", "cache_control": {"type": "ephemeral"}}]}]


def test_tool_use_both_ways_without_streaming() -> None:
    with served() as s:
        sdk = client(s.url, s.grant.key)
        first = sdk.messages.create(
            model="claude-anything", max_tokens=1024, tools=TOOLS,  # type: ignore[arg-type]
            system=[{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
            messages=[{"role": "user", "content": QUESTION}],
            metadata={"user_id": "u1"}, thinking={"type": "disabled"},
            extra_body={"temperature": 0.2})  # an older field this SDK no longer names
        assert first.stop_reason == "tool_use" and first.model == "claude-anything"
        calls = [b.model_dump() for b in first.content if b.type == "tool_use"]
        assert [(c["id"], c["name"], c["input"]) for c in calls] == [
            ("call_paris", "get_weather", {"city": "Paris"}),
            ("call_rome", "get_weather", {"city": "Rome"})]
        second = sdk.messages.create(model="claude-anything", max_tokens=1024,
                                     tools=TOOLS,  # type: ignore[arg-type]
                                     messages=second_turn(calls))  # type: ignore[arg-type]
        assert [b.type for b in second.content] == ["text"] and second.stop_reason == "end_turn"
        assert second.content[0].text == FINAL  # type: ignore[union-attr]
        sent = transcript(s.stats)
    assert s.stats.calls == 2 and s.stats.input_tokens == (
        first.usage.input_tokens + second.usage.input_tokens)
    assert s.stats.output_tokens == first.usage.output_tokens + second.usage.output_tokens
    assert [m["role"] for m in sent[0]["messages"]] == ["system", "human"]
    assert sent[0]["messages"][0]["content"] == "Be brief."
    assert [(m["role"], m.get("tool_call_id"), m["content"]) for m in sent[1]["messages"][2:]] \
        == [("tool", "call_paris", "sunny"), ("tool", "call_rome", "rainy"),
            ("human", None, "Go on.")]
    assert sent[1]["messages"][1]["tool_calls"][1]["args"] == {"city": "Rome"}
    assert sent[1]["request"]["dropped"] == {"thinking": 1}  # not shown to the model
    unused = sent[0]["request"]["unused"]
    assert unused.pop("anthropic-version")  # the API version the SDK asked for, recorded
    assert unused == {"max_tokens": 1024, "metadata": {"user_id": "u1"}, "temperature": 0.2,
                      "thinking": {"type": "disabled"}}


def test_the_beta_route_streams_anthropics_event_sequence() -> None:
    with served() as s:
        sdk = client(s.url, s.grant.key)
        raw = list(sdk.beta.messages.create(
            model="m", max_tokens=64, tools=TOOLS, stream=True,  # type: ignore[arg-type]
            messages=[{"role": "system", "content": "Be brief."},  # type: ignore[misc,list-item]
                      {"role": "user", "content": QUESTION}],
            context_management={"edits": []}, betas=["context-management-2025-06-27"],
            extra_query={"beta": "true"}))  # as Claude Code sends it
        assert [e.type for e in raw] == [
            "message_start", *["content_block_start", "content_block_delta",
                               "content_block_stop"] * 2, "message_delta", "message_stop"]
        # The SDK's accumulating helper reads the tool calls out of the deltas.
        with sdk.messages.stream(model="m", max_tokens=64, tools=TOOLS,  # type: ignore[arg-type]
                                 messages=[{"role": "user", "content": QUESTION}]) as stream:
            final = stream.get_final_message()
        calls = [b.model_dump() for b in final.content if b.type == "tool_use"]
        assert [c["input"] for c in calls] == [{"city": "Paris"}, {"city": "Rome"}]
        assert final.stop_reason == "tool_use" and final.usage.input_tokens > 0
        with sdk.messages.stream(model="m", max_tokens=64, tools=TOOLS,  # type: ignore[arg-type]
                                 messages=second_turn(calls)) as stream:  # type: ignore[arg-type]
            assert "".join(stream.text_stream) == FINAL
        sent = transcript(s.stats)
    assert sent[0]["messages"][0] == {"role": "system", "content": "Be brief."}
    assert sent[0]["request"]["unused"]["?"] == "beta=true"
    assert "context-management" in sent[0]["request"]["unused"]["anthropic-beta"]
    assert sent[0]["request"]["unused"]["context_management"] == {"edits": []}
    assert [c["request"]["stream"] for c in sent] == [True, True, True]


def test_errors_are_anthropics_shape() -> None:
    with served() as s:
        other = s.gateway.grant("example 1", CallStats())
        with pytest.raises(anthropic.AuthenticationError) as refused:
            client(s.url, other.key).messages.create(
                model="m", max_tokens=8, messages=[{"role": "user", "content": "hi"}])
        assert refused.value.body == {"type": "error", "error": {
            "type": "authentication_error", "message": refused.value.body["error"]["message"]}}
        with pytest.raises(anthropic.BadRequestError) as bad:
            client(s.url, s.grant.key).messages.create(
                model="m", max_tokens=8, messages=[{"role": "user", "content": [
                    {"type": "document", "source": {"type": "text", "data": "x",
                                                    "media_type": "text/plain"}}]}])
        assert bad.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]
        assert "document" in str(bad.value)
        malformed = s.post("/messages", b"{", x_api_key=s.grant.key)
        assert malformed.status_code == 400 and malformed.json()["type"] == "error"
        listed = client(s.url, s.grant.key).models.list()
        assert [m.id for m in listed.data] == ["scripted"]
        assert s.grant.errors == {"401 authentication": 1, "400 invalid_request": 2}
