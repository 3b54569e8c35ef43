"""The request rewrite every OpenAI-compatible server accepts (``openai_compat``):
an assistant turn with tool calls and no text goes out with a string content, and a
``tool_choice`` model argument reaches exactly the requests that bind tools. Checked on bodies,
and end to end against a loopback server as strict as llama-cpp-python's (null content: HTTP
500) and OpenAI's (``tool_choice`` without tools: HTTP 400)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_langsmith import loopback_only
from fake_openai import ChatRequest, FakeOpenAI, Fault
from langchain_openai import ChatOpenAI
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.models.openai_compat import (
    MARKER,
    Compat,
    rewrite_body,
    rewrite_request,
    split_arguments,
)
from tooleval_agents.models.specs import provider_model
from tooleval_agents.results.rundir import RunDir

CALL = {"role": "assistant", "content": None,
        "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": "f", "arguments": "{}"}}]}
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]


@pytest.mark.parametrize(("mode", "expected"), [
    ("empty", {**CALL, "content": ""}),
    ("omit", {k: v for k, v in CALL.items() if k != "content"}),
    ("keep", CALL),
])
def test_null_content_of_an_assistant_turn(mode: Any, expected: dict[str, Any]) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}, CALL,
                                       {"role": "tool", "tool_call_id": "c1", "content": None}]}
    out = rewrite_body(body, Compat(null_content=mode))
    assert out["messages"][1] == expected
    # Only assistant turns change; the input is not modified.
    assert out["messages"][0] == body["messages"][0] and out["messages"][2]["content"] is None
    assert body["messages"][1]["content"] is None


@pytest.mark.parametrize("mode", ["empty", "omit", "keep"])
def test_a_developer_message_goes_as_the_system_role(mode: Any) -> None:
    # What the gateway passes on from a Responses request's developer message (Codex's
    # instructions): llama-cpp-python's server answered 500 to the role it does not know.
    body = {"messages": [{"role": "developer", "content": "Be brief."},
                         {"role": "user", "content": "hi"}]}
    out = rewrite_body(body, Compat(null_content=mode))
    assert [m["role"] for m in out["messages"]] == ["system", "user"]
    assert out["messages"][0]["content"] == "Be brief."
    assert body["messages"][0]["role"] == "developer"  # the input is not modified


def test_tool_choice_goes_only_with_tools() -> None:
    assert "tool_choice" not in rewrite_body({"messages": [], "tool_choice": "auto"})
    assert "tool_choice" not in rewrite_body({"messages": [], "tools": [], "tool_choice": "auto"})
    kept = rewrite_body({"messages": [], "tools": [*TOOLS, *TOOLS], "tool_choice": "required"})
    assert kept["tool_choice"] == "required"
    assert rewrite_body({"messages": [], "functions": [{}], "tool_choice": "auto"})[
        "tool_choice"] == "auto"


def test_a_required_call_among_one_tool_names_it() -> None:
    # What with_structured_output sends through a wrapping model (a run's judge): a forced call
    # of its one schema tool. Named, llama-cpp-python decodes it under the schema's grammar.
    body = {"messages": [], "tools": TOOLS, "tool_choice": "required"}
    assert rewrite_body(body)["tool_choice"] == {"type": "function", "function": {"name": "f"}}
    assert body["tool_choice"] == "required"  # the input is not modified
    for choice in ("auto", "none", {"type": "function", "function": {"name": "f"}}):
        assert rewrite_body({**body, "tool_choice": choice})["tool_choice"] == choice


def test_tool_choice_for_the_first_rounds_only() -> None:
    body = {"messages": [{"role": "user", "content": "hi"}], "tools": TOOLS,
            "tool_choice": "auto"}
    after = {**body, "messages": [*body["messages"], {**CALL, "content": ""},
                                  {"role": "tool", "tool_call_id": "c1", "content": "{}"}]}
    one, two = Compat(tool_choice_rounds=1), Compat(tool_choice_rounds=2)
    assert rewrite_body(body, one)["tool_choice"] == "auto"
    assert "tool_choice" not in rewrite_body(after, one)
    assert rewrite_body(after, two)["tool_choice"] == "auto"
    assert rewrite_body(after)["tool_choice"] == "auto"  # no limit by default


def test_only_chat_completion_bodies_are_rewritten() -> None:
    body = {"messages": [CALL]}
    chat = httpx.Request("POST", "http://127.0.0.1:1/v1/chat/completions", json=body,
                         headers={"Authorization": "Bearer x"})
    new = rewrite_request(chat)
    assert json.loads(new.content)["messages"][0]["content"] == ""
    assert new.headers["Authorization"] == "Bearer x"
    assert int(new.headers["Content-Length"]) == len(new.content)
    other = httpx.Request("POST", "http://127.0.0.1:1/v1/embeddings", json=body)
    assert rewrite_request(other) is other
    broken = httpx.Request("POST", "http://127.0.0.1:1/v1/chat/completions", content=b"{x")
    assert rewrite_request(broken) is broken  # not JSON: sent as it is (the server says why)
    clean = httpx.Request("POST", "http://127.0.0.1:1/v1/chat/completions",
                          json={"messages": [{"role": "user", "content": "hi"}]})
    assert rewrite_request(clean) is clean


def test_bad_compat_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="null_content='none'"):
        split_arguments({"null_content": "none"})
    for bad in (0, "1", True, 1.5):
        with pytest.raises(ValueError, match="tool_choice_rounds"):
            split_arguments({"tool_choice_rounds": bad})
    assert split_arguments({"tool_choice_rounds": 2, "temperature": 0}) == (
        {"temperature": 0}, {"tool_choice_rounds": 2})
    with pytest.raises(ValueError, match="base_url"):  # OpenAI itself: nothing to rewrite
        provider_model("openai:gpt-4o-mini", {"api_key": "x", "null_content": "omit"})


def test_provider_models_sent_to_a_server_get_the_layer() -> None:
    local = provider_model("openai:local", {"base_url": "http://127.0.0.1:9/v1",
                                            "api_key": "x", "tool_choice": "auto"})
    assert isinstance(local, ChatOpenAI)
    assert local.http_client is not None and local.http_async_client is not None
    assert local.model_kwargs == {"tool_choice": "auto"}
    # OpenAI itself (no base_url) and a user's own client are left alone.
    hosted = provider_model("openai:gpt-4o-mini", {"api_key": "x"})
    assert isinstance(hosted, ChatOpenAI) and hosted.http_client is None
    own = httpx.Client()
    mine = provider_model("openai:local", {"base_url": "http://127.0.0.1:9/v1",
                                           "api_key": "x", "http_client": own,
                                           "http_async_client": httpx.AsyncClient()})
    assert isinstance(mine, ChatOpenAI) and mine.http_client is own


def test_the_settings_are_part_of_the_cache_key() -> None:
    def key(**kw: Any) -> str:
        return provider_model("openai:local", {"base_url": "http://127.0.0.1:9/v1",
                                               "api_key": "x", **kw})._get_llm_string()
    keys = {key(), key(tool_choice="auto"), key(tool_choice="auto", tool_choice_rounds=1),
            key(tool_choice="auto", null_content="omit")}
    assert len(keys) == 4  # an answer cached under other settings is never replayed


def test_settings_carried_in_the_body_are_applied_and_removed() -> None:
    body = {"messages": [CALL], "tools": TOOLS, "tool_choice": "auto",
            MARKER: {"null_content": "omit", "tool_choice_rounds": 1}}
    out = rewrite_body(body)
    assert MARKER not in out and "tool_choice" not in out
    assert "content" not in out["messages"][0]


# --- end to end: a tool-calling run against a strict loopback server ---------------------

def strict_server(request: ChatRequest) -> dict[str, Any] | str | Fault:
    """Refuses what llama-cpp-python's server (null content) and OpenAI (tool_choice without
    tools) refuse; calls the first bound tool once, then answers in text."""
    body = request.body
    if any(m.get("role") == "assistant" and "content" in m and m["content"] is None
           for m in request.messages):
        return Fault(500, message="content: Input should be a valid string")
    if "tool_choice" in body and not body.get("tools"):
        return Fault(400, message="tool_choice is only allowed when tools are specified")
    if not body.get("tools") or any(m.get("role") == "tool" for m in request.messages):
        return "Done."
    name = body["tools"][0]["function"]["name"]
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": name, "arguments": "{}"}}]}


@pytest.fixture()
def _net(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ("OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-local-server")
    with loopback_only(monkeypatch) as refused:
        yield
    assert refused == [], f"tried to reach {refused}"


@pytest.mark.usefixtures("_net")
@pytest.mark.parametrize("agent", [None, "langchain.agents:create_agent"])
def test_a_tool_calling_run_passes_a_strict_server(samples: Path, tmp_path: Path,
                                                   agent: str | None) -> None:
    with FakeOpenAI(strict_server) as server:
        args = ["run", "appbench", "--category", "ss", "--limit", "1", "--data-dir", samples,
                "--no-cache", "--no-progress", "--json", "--out", tmp_path,
                "--model", "openai:local", "--model-arg", f"base_url={server.base_url}",
                "--model-arg", "tool_choice=auto", "--max-concurrency", "1"]
        args += ["--agent", agent] if agent else ["--strategy", "tools"]
        result = CliRunner().invoke(app, args)
        log = list(server.log)
    assert result.exit_code == 0, result.output
    assert [r.status for r in log] == [200] * len(log) and len(log) >= 2
    with_tools = [r for r in log if r.body.get("tools")]
    assert with_tools and all(r.body["tool_choice"] == "auto" for r in with_tools)
    second = log[1].messages
    turn = next(m for m in second if m.get("role") == "assistant")
    assert turn["content"] == "" and turn["tool_calls"][0]["id"] == "call_1"
    run = RunDir(json.loads(result.stdout)["run_dir"])
    (only,) = run.results().values()
    calls = [s for s in only.outputs["trace"] if s.get("kind") == "agent"]
    assert calls and calls[0]["tool_calls"], only.outputs["trace"]
    assert run.read_config().model["params"]["model_kwargs"] == {"tool_choice": "auto"}
    assert all(MARKER not in r.body for r in log)


def calls_while_asked(request: ChatRequest) -> dict[str, Any] | str | Fault:
    """Like llama-cpp-python's chatml-function-calling format, whose prompt shows no tool
    result: a call of the first tool whenever ``tool_choice`` is sent, else text."""
    body = request.body
    if body.get("tools") and body.get("tool_choice"):
        name = body["tools"][0]["function"]["name"]
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{request.n}", "type": "function",
             "function": {"name": name, "arguments": "{}"}}]}
    return "Done."


@pytest.mark.usefixtures("_net")
def test_tool_choice_rounds_end_an_agent_without_a_turn_limit(samples: Path,
                                                               tmp_path: Path) -> None:
    with FakeOpenAI(calls_while_asked) as server:
        result = CliRunner().invoke(app, [
            "run", "appbench", "--category", "ss", "--limit", "1", "--data-dir", samples,
            "--no-cache", "--no-progress", "--json", "--out", tmp_path, "--model",
            "openai:local", "--model-arg", f"base_url={server.base_url}", "--model-arg",
            "tool_choice=auto", "--model-arg", "tool_choice_rounds=1", "--agent",
            "langchain.agents:create_agent", "--max-concurrency", "1"])
        sent = [r.body.get("tool_choice") for r in server.log]
    assert result.exit_code == 0, result.output
    assert sent == ["auto", None]  # one round of calls, then the answer in text
    (only,) = RunDir(json.loads(result.stdout)["run_dir"]).results().values()
    assert only.status == "ok"
    assert [s["tool_calls"] for s in only.outputs["trace"] if s["kind"] == "agent"] == [1]
