"""The bytes a streamed answer goes out as, in each wire format, pinned: the events, their
order, their fields and the JSON text they are written in are what the gateway sent before
its streams were made cheaper to build (ids and clock fixed), and the same events pass the
installed SDK's typed models (:data:`~tooleval_agents.gateway.wire.STRICT`)."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from gateway_helpers import WEATHER
from langchain_core.messages import AIMessage

from tooleval_agents.gateway import chat_completions, messages, responses, wire

ANSWER = AIMessage(
    "Paris: ☀, Rome: \"rainy\"", tool_calls=[
        {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_paris",
         "type": "tool_call"},
        {"name": "bench__get_weather", "args": {"city": "Zürich", "days": [1, 2]},
         "id": "call_zurich", "type": "tool_call"}],
    usage_metadata={"input_tokens": 120, "output_tokens": 30, "total_tokens": 150,
                    "input_token_details": {"cache_read": 20}},
    response_metadata={"finish_reason": "tool_calls"})
"""An answer with text (outside ASCII and with quotes) and two calls, one to a namespaced
tool."""
USER = [{"role": "user", "content": "Weather?"}]
BODIES: dict[str, tuple[Any, dict[str, Any]]] = {
    "chat.completions": (chat_completions, {
        "model": "m", "stream": True, "stream_options": {"include_usage": True},
        "messages": USER, "tools": [{"type": "function", "function": WEATHER},
                                    {"type": "function", "function": {
                                        **WEATHER, "name": "bench__get_weather"}}]}),
    "responses": (responses, {
        "model": "m", "stream": True, "input": "Weather?", "tools": [
            {"type": "function", **WEATHER},
            {"type": "namespace", "name": "bench", "tools": [
                {"type": "function", **WEATHER}]}]}),
    "messages": (messages, {
        "model": "m", "stream": True, "max_tokens": 100, "messages": USER, "tools": [
            {"name": n, "input_schema": WEATHER["parameters"]}
            for n in ("get_weather", "bench__get_weather")]})}
GOLDEN = Path(__file__).parent / "fixtures" / "gateway_streams.json"
"""Each format's stream of :data:`ANSWER` as the gateway sent it (main at 4a8416d), ids
numbered in their order of appearance."""


def streamed(name: str, monkeypatch: pytest.MonkeyPatch, *, strict: bool) -> str:
    """The stream of :data:`ANSWER` in format ``name``, clock fixed, each id made by the
    gateway written ``<idN>`` in its order of appearance (the order the gateway draws them in
    is not the wire's business; where each one appears is)."""
    counter = itertools.count()
    monkeypatch.setattr(wire, "secrets", SimpleNamespace(
        token_hex=lambda n: f"{next(counter):0{2 * n}x}"))
    clock = SimpleNamespace(time=lambda: 1700000000.25)
    monkeypatch.setattr(chat_completions, "time", clock)
    monkeypatch.setattr(responses, "time", clock)
    monkeypatch.setattr(wire, "STRICT", strict)
    module, body = BODIES[name]
    text = b"".join(module.events(ANSWER, module.parse(body))).decode()
    seen: dict[str, str] = {}
    return re.sub(r"[0-9a-f]{24}", lambda m: seen.setdefault(m.group(), f"<id{len(seen)}>"),
                  text)


@pytest.mark.parametrize("name", sorted(BODIES))
def test_a_stream_goes_out_byte_for_byte_as_before(name: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))[name]
    assert streamed(name, monkeypatch, strict=False) == expected


@pytest.mark.parametrize("name", sorted(BODIES))
def test_a_stream_is_what_the_sdk_types_say(name: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The same events, checked and dumped by the SDK's typed models: equal as JSON."""

    def events(text: str) -> list[tuple[str, Any]]:
        out = []
        for block in text.strip().split("\n\n"):
            lines = dict(line.split(": ", 1) for line in block.split("\n"))
            data = lines["data"]
            out.append((lines.get("event", ""), data if data == "[DONE]" else json.loads(data)))
        return out

    assert events(streamed(name, monkeypatch, strict=True)) == events(
        streamed(name, monkeypatch, strict=False))
