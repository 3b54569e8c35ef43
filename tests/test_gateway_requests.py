"""What the model gateway refuses, and how: another example's key, no key, an ended example, a
wrong Host, malformed, oversized and unreadable bodies, a failing model -- each answered in the
provider's own error shape with its status, counted on the example it named (or on the
gateway), and the gateway goes on serving."""

from __future__ import annotations

import gzip
import json

import httpx
import openai
import pytest
from gateway_helpers import QUESTION, WEATHER, served, transcript

import tooleval_agents.gateway.server as gateway_server
from tooleval_agents.models.accounting import CallStats
from tooleval_agents.models.chat_models import ScriptedChatModel
from tooleval_agents.models.retry import RetryingChatModel, RetryPolicy

ASK = {"model": "m", "messages": [{"role": "user", "content": QUESTION}]}


def openai_error(response: httpx.Response) -> dict[str, object]:
    body = response.json()
    assert set(body) == {"error"} and {"message", "type", "param", "code"} <= set(body["error"])
    assert response.headers["x-should-retry"] == "false"
    return body["error"]


def test_another_examples_key_is_refused_and_counted_on_the_example() -> None:
    with served() as s:
        other = s.gateway.grant("example 1", CallStats())
        refused = s.post("/chat/completions", ASK, key=other.key)
        assert refused.status_code == 401
        error = openai_error(refused)
        assert error["code"] == "invalid_api_key" and "another" in str(error["message"])
        assert s.post("/chat/completions", ASK, key="").status_code == 401  # no key at all
        with pytest.raises(openai.AuthenticationError):  # as the SDK sees it
            openai.OpenAI(base_url=s.openai_url, api_key=other.key,
                          max_retries=0).chat.completions.create(**ASK)  # type: ignore[call-overload]
        assert s.grant.errors == {"401 authentication": 3} and s.stats.calls == 0
        assert other.errors == {} and s.post("/chat/completions", ASK).status_code == 200
        assert s.grant.requests == {"chat.completions": 1}


def test_an_ended_example_an_unknown_one_and_a_wrong_host_are_refused() -> None:
    with served() as s:
        s.gateway.end(s.grant)
        ended = s.post("/chat/completions", ASK)
        assert ended.status_code == 404 and "ended" in str(openai_error(ended)["message"])
        base = f"http://{s.gateway.host}:{s.gateway.port}"
        unknown = httpx.post(f"{base}/g/{'0' * 16}/v1/chat/completions", json=ASK)
        assert unknown.status_code == 404 and httpx.post(f"{base}/v1/chat/completions",
                                                         json=ASK).status_code == 404
        live = s.gateway.grant("example 1", CallStats())
        rebound = httpx.post(f"{s.gateway.openai_url(live)}/chat/completions", json=ASK,
                             headers={"authorization": f"Bearer {live.key}",
                                      "host": "evil.example:80"})
        assert rebound.status_code == 421  # DNS rebinding: another name for this address
        assert s.gateway.grants.unattributed == {"404 not_found": 3, "421 invalid_request": 1}


BAD_BODIES = [
    (b"{not json", 400, "not JSON"),
    (b"[1, 2]", 400, "JSON object"),
    (b"\xff\xfe{}", 400, "UTF-8"),
    (b'{"a": ' + b"[" * 300 + b"]" * 300 + b"}", 400, "nested deeper"),
    (json.dumps({"model": "m"}).encode(), 400, "messages"),
    (json.dumps({**ASK, "n": 3}).encode(), 400, "n:"),
    (json.dumps({"model": "m", "messages": [{"role": "robot", "content": "hi"}]}).encode(),
     400, "role"),
    (json.dumps({"model": "m", "messages": "hi"}).encode(), 400, "array"),
    (json.dumps({**ASK, "tools": [{"type": "function", "function": {"name": ""}}]}).encode(),
     400, "name"),
    (json.dumps({"model": "m", "messages": [{"role": "user", "content": [
        {"type": "input_audio", "input_audio": {}}]}]}).encode(), 400, "input_audio"),
]


@pytest.mark.parametrize(("body", "status", "says"), BAD_BODIES,
                         ids=[says for _, _, says in BAD_BODIES])
def test_a_malformed_request_gets_the_providers_error_shape(body: bytes, status: int,
                                                          says: str) -> None:
    with served() as s:
        response = s.post("/chat/completions", body)
        assert response.status_code == status and says in str(openai_error(response)["message"])
        assert sum(s.grant.errors.values()) == 1 and s.stats.calls == 0
        assert s.post("/chat/completions", ASK).status_code == 200  # it goes on serving


def test_oversized_requests_are_refused_before_they_are_read(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gateway_server, "MAX_BODY", 4096)
    big = json.dumps({**ASK, "messages": [{"role": "user", "content": "x" * 10_000}]}).encode()
    with served() as s:
        assert s.post("/chat/completions", big).status_code == 413
        chunked = httpx.post(f"{s.openai_url}/chat/completions", content=iter([big[:3000],
                                                                               big[3000:]]),
                             headers={"authorization": f"Bearer {s.grant.key}"})
        assert chunked.status_code == 413  # no Content-Length: counted as it arrives
        bomb = gzip.compress(json.dumps({**ASK, "pad": "0" * 1_000_000}).encode())
        assert len(bomb) < 4096
        packed = s.post("/chat/completions", bomb, content_encoding="gzip")
        assert packed.status_code == 413  # bounded after decompression too
        assert openai_error(packed)["code"] == "request_too_large"
        small = gzip.compress(json.dumps(ASK).encode())
        assert s.post("/chat/completions", small, content_encoding="gzip").status_code == 200
        assert s.post("/chat/completions", small, content_encoding="br").status_code == 415
        assert s.grant.errors == {"413 too_large": 3, "415 invalid_request": 1}


def test_a_conversation_a_model_garbled_is_served_not_refused() -> None:
    broken = {"model": "m", "messages": [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\": \"Par"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "Error: bad arguments"}],
        "tools": [{"type": "function", "function": WEATHER}]}
    with served() as s:
        assert s.post("/chat/completions", broken).status_code == 200
        (sent,) = transcript(s.stats)
        assert sent["messages"][1]["role"] == "ai" and sent["messages"][2]["role"] == "tool"


def test_a_model_failure_is_the_providers_server_error_and_not_retried_by_the_sdk() -> None:
    failing = RetryingChatModel(inner=ScriptedChatModel(rules=[]), policy=RetryPolicy(
        max_attempts=1))  # no rule matches: the model raises LookupError
    with served(failing) as s:
        sdk = openai.OpenAI(base_url=s.openai_url, api_key=s.grant.key)  # its own retries on
        with pytest.raises(openai.BadRequestError, match="no scripted reply"):
            sdk.chat.completions.create(**ASK)  # type: ignore[call-overload]
        assert s.grant.errors == {"400 invalid_request": 1}  # one request: x-should-retry
        (sent,) = transcript(s.stats)
        assert "LookupError" in sent["error"] and sent["request"]["format"] == "chat.completions"
        assert len(s.stats.raised) == 1  # the example knows its model call failed


def test_methods_and_routes_the_gateway_does_not_serve() -> None:
    with served() as s:
        headers = {"authorization": f"Bearer {s.grant.key}"}
        assert httpx.get(f"{s.openai_url}/chat/completions", headers=headers).status_code == 405
        assert s.post("/embeddings", ASK).status_code == 404
        assert httpx.get(f"{s.openai_url}/models/other", headers=headers).status_code == 404
        assert httpx.get(f"{s.openai_url}/models/scripted", headers=headers).json()["id"] \
            == "scripted"
