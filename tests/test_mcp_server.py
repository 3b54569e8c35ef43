"""``tooleval serve``'s server (:mod:`tooleval_agents.mcp.server`): the security the MCP
specification asks for, bad input answered without stopping, sessions that never share state,
tools served as they are in the run (definitions, answers, errors, faults), nothing of the
gold, and the stdio transport. Everything on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.utils.function_calling import convert_to_openai_tool
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_helpers import INITIALIZE, McpError, connect, is_error, post, text_of

import tooleval_agents.mcp
from tooleval_agents import agent_io_for, get_benchmark
from tooleval_agents.data.langsmith_datasets import to_examples
from tooleval_agents.errors import ToolevalError
from tooleval_agents.mcp import ADAPTERS_HINT, INSTALL_HINT, require_mcp
from tooleval_agents.mcp.log import read_log
from tooleval_agents.mcp.server import ToolServer
from tooleval_agents.registry import get_strategy
from tooleval_agents.tool_execution import run_tool_call
from tooleval_agents.tool_faults import FaultSession, ToolFaults

SS = {"input": "What is the weather in Oslo on March 3rd?"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ToolServer]:
    with ToolServer(log=tmp_path / "mcp_calls.jsonl") as served:
        yield served


def open_session(server: ToolServer, io: Any, inputs: dict[str, Any], **kw: Any) -> Any:
    return asyncio.run(server.open(io.open(inputs), io.messages(inputs), label="t", **kw))


def test_http_listens_on_loopback_and_checks_host_origin_and_token(server: ToolServer) -> None:
    io = agent_io_for("appbench", subset="ss")
    path = f"/s/{open_session(server, io, SS).id}/mcp"
    assert server.base_url.startswith("http://127.0.0.1:")
    assert post(server, path, INITIALIZE, host="evil.example").status_code == 421
    assert post(server, path, INITIALIZE, origin="http://evil.example").status_code == 403
    unsigned = post(server, path, INITIALIZE, authorization="")
    assert unsigned.status_code == 401 and unsigned.headers["www-authenticate"] == "Bearer"
    assert post(server, path, INITIALIZE, authorization="Bearer not-it").status_code == 401
    same_origin = post(server, path, INITIALIZE, origin=server.base_url)
    assert same_origin.status_code == 200, same_origin.text
    assert same_origin.headers.get("mcp-session-id")
    with pytest.raises(ToolevalError, match="every address"):
        ToolServer(host="0.0.0.0").start()


def test_bad_input_gets_protocol_errors_and_the_server_goes_on(server: ToolServer) -> None:
    io = agent_io_for("appbench", subset="ss")
    first, second = open_session(server, io, SS), open_session(server, io, SS)
    path = f"/s/{first.id}/mcp"
    broken = post(server, path, b"{not json")
    assert broken.status_code == 400 and broken.json()["error"]["code"] == -32700
    assert post(server, path, {"jsonrpc": "2.0", "method": 5}).status_code == 400
    assert post(server, "/s/nosuchsession/mcp", INITIALIZE).status_code == 404
    assert post(server, "/elsewhere", INITIALIZE).status_code == 404
    opened = post(server, path, INITIALIZE)
    sid = opened.headers["mcp-session-id"]
    # Another example's URL with this example's MCP session: no such session there (404 from
    # the SDK's current releases, 400 from older ones: a protocol error either way).
    foreign = post(server, f"/s/{second.id}/mcp",
                   {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, mcp_session_id=sid)
    assert foreign.status_code in (400, 404)

    async def calls() -> list[Any]:
        async with connect(server, first) as client:
            unknown = await client.call_tool("Nope__x", {})
            wrong = await client.call_tool("Weather__getweather", {"town": "Oslo"})
            with pytest.raises(McpError, match="no prompt named"):
                await client.get_prompt("other")
            good = await client.call_tool("Weather__getweather", {"city": "Oslo"})
            return [unknown, wrong, good]

    unknown, wrong, good = asyncio.run(calls())
    assert is_error(unknown) and text_of(unknown) == "Error: there is no tool named 'Nope__x'"
    assert is_error(wrong) and "unknown argument 'town'" in text_of(wrong)
    assert not is_error(good) and json.loads(text_of(good))["city"] == "Oslo"
    asyncio.run(server.close(second))
    ended = post(server, f"/s/{second.id}/mcp", INITIALIZE)
    assert ended.status_code == 404 and "has ended" in ended.text
    assert [c.tool for c in first.calls] == ["Nope__x", "Weather__getweather",
                                             "Weather__getweather"]
    late = [r for r in read_log(server.log.path) if r["kind"] == "late_call"]  # type: ignore[arg-type]
    assert [r["session"] for r in late] == [second.id]


def test_32_concurrent_sessions_keep_their_own_calls(server: ToolServer) -> None:
    io = agent_io_for("appbench", subset="ss")
    sessions = [open_session(server, io, SS) for _ in range(32)]

    async def one(i: int) -> None:
        async with connect(server, sessions[i]) as client:
            for _ in range(3):
                result = await client.call_tool("Weather__getweather", {"city": f"city-{i}"})
                assert json.loads(text_of(result))["city"] == f"city-{i}"

    async def every() -> None:
        await asyncio.gather(*(one(i) for i in range(32)))

    asyncio.run(every())
    for i, session in enumerate(sessions):
        assert [c.arguments for c in session.calls] == [{"city": f"city-{i}"}] * 3
        assert [c.seq for c in session.calls] == [0, 1, 2]
    server.log.close()
    logged: dict[str, list[str]] = {}
    for line in read_log(server.log.path):  # type: ignore[arg-type]
        if line["kind"] == "call":
            logged.setdefault(line["session"], []).append(line["arguments"]["city"])
    assert logged == {s.id: [f"city-{i}"] * 3 for i, s in enumerate(sessions)}


def test_tools_over_mcp_are_the_tools_of_the_run(server: ToolServer, samples: Path) -> None:
    # The definitions a model is bound to, and each call's answer or error, are the same.
    client = pytest.importorskip("tooleval_agents.mcp.client",
                                 reason="-O mcp=true needs langchain-mcp-adapters (mcp<2)")
    bench = get_benchmark("ultratool")
    example = to_examples(bench.split("tool_usage", "en"), samples)[0]
    cases = [(agent_io_for("appbench", subset="ss"), SS),
             (agent_io_for("ultratool", task="tool_usage", subset="en"),
              dict(example.inputs or {}))]

    async def compare(io: Any, inputs: dict[str, Any]) -> int:
        local = {t.name: t for t in io.tools(inputs)}
        session = await server.open(io.open(inputs), io.messages(inputs), label="t")
        async with client.McpToolbox.connect(server.url(session),
                                             server.key(session)) as box:
            served = box.listed()
            assert [t.name for t in served] == list(local)
            for tool in served:
                assert convert_to_openai_tool(tool) == convert_to_openai_tool(local[tool.name])
                for args in ({}, {"x": 1}, _filled(local[tool.name])):
                    call = {"id": "c", "name": tool.name, "args": args}
                    there, here = await run_tool_call(tool, call), \
                        await run_tool_call(local[tool.name], call)
                    assert (there.text, there.status) == (here.text, here.status), args
        return len(served)

    counts = [asyncio.run(compare(io, inputs)) for io, inputs in cases]
    assert counts[0] == 33 and counts[1] > 0


def _filled(tool: Any) -> dict[str, Any]:
    schema = convert_to_openai_tool(tool)["function"]["parameters"]
    return {k: (v.get("enum") or ["x"])[0] if v.get("type") == "string" else 1
            for k, v in (schema.get("properties") or {}).items()}


def test_tool_faults_are_drawn_on_the_server_as_in_the_run(server: ToolServer) -> None:
    io = agent_io_for("appbench", subset="ss")
    spec = ToolFaults(rate=0.5, seed=3)
    session = open_session(server, io, SS, faults=FaultSession(spec, "example"))
    cities = [f"c{i % 5}" for i in range(12)]  # repeats: retries of the same call

    async def served() -> list[tuple[str, bool]]:
        async with connect(server, session) as client:
            results = [await client.call_tool("Weather__getweather", {"city": c})
                       for c in cities]
            return [(text_of(r), is_error(r)) for r in results]

    async def local() -> list[tuple[str, bool]]:
        tool = next(t for t in io.tools(SS) if t.name == "Weather__getweather")
        faults = FaultSession(spec, "example")
        out = []
        for i, c in enumerate(cities):
            message = await run_tool_call(tool, {"id": f"mcp_{i}", "name": tool.name,
                                                 "args": {"city": c}}, faults=faults)
            out.append((message.text, message.status == "error"))
        return out

    answers = asyncio.run(served())
    assert answers == asyncio.run(local())
    assert any(error for _, error in answers) and not all(error for _, error in answers)
    assert [c.fault is not None for c in session.calls] == [
        f"mcp_{i}" in session.faults.faulted_ids for i in range(12)]


def test_stateful_sessions_change_their_tools(server: ToolServer, samples: Path) -> None:
    split = get_benchmark("appbench").split("plan", "ss")
    hierarchical = get_strategy("appbench", "tools_hierarchical").agent_io(split)
    raw_split = get_benchmark("ultratool").split("raw", "en")
    raw = get_strategy("ultratool", "tools").agent_io(raw_split, samples)
    assert hierarchical is not None and raw is not None
    raw_inputs = dict(to_examples(raw_split, samples)[0].inputs or {})

    async def apps() -> tuple[Any, ...]:
        session = await server.open(hierarchical.open(SS), hierarchical.messages(SS), label="h")
        async with connect(server, session) as client:
            before = [t.name for t in (await client.list_tools()).tools]
            refused = await client.call_tool("Weather__getweather", {"city": "Oslo"})
            await client.call_tool("open_Weather", {})
            after = [t.name for t in (await client.list_tools()).tools]
        return before, refused, after

    before, refused, after = asyncio.run(apps())
    assert before == [t for t in before if t.startswith("open_")] and len(before) == 15
    assert is_error(refused) and text_of(refused) == (
        "Error: the Weather app is not open: call open_Weather first, then Weather__getweather")
    assert set(after) - set(before) == {"Weather__getweather"}

    async def created() -> tuple[Any, Any]:
        session = await server.open(raw.open(raw_inputs), raw.messages(raw_inputs), label="r")
        skeleton = {"name": "moon_phase", "description": "The moon's phase on a date.",
                    "arguments": {"type": "object", "properties": {"date": {"type": "string"}},
                                  "required": ["date"]},
                    "results": {"type": "object", "properties": {"phase": {"type": "string"}}}}
        async with connect(server, session) as client:
            made = await client.call_tool("create_tool", skeleton)
            listed = [t.name for t in (await client.list_tools()).tools]
            used = await client.call_tool("moon_phase", {"date": "2024-01-01"})
        assert not is_error(made), text_of(made)
        return listed, used

    listed, used = asyncio.run(created())
    assert "moon_phase" in listed and "phase" in json.loads(text_of(used))


def gold_strings(reference: Any, shown: str) -> set[str]:
    """The gold answer's texts an agent is not given (in neither its inputs nor the tools)."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, str | int | float) and len(str(value)) >= 5:
            found.add(str(value))

    walk(reference)
    return {s for s in found if s not in shown and s.lower() not in shown.lower()}


@pytest.mark.parametrize(("benchmark", "task", "subset"),
                         [("appbench", "plan", "mm"), ("ultratool", "tool_usage", "zh")])
def test_nothing_served_reveals_a_gold_answer(server: ToolServer, samples: Path, benchmark: str,
                                              task: str, subset: str) -> None:
    split = get_benchmark(benchmark).split(task, subset)
    io = agent_io_for(benchmark, task=task, subset=subset)
    checked = 0

    async def served_texts(inputs: dict[str, Any]) -> tuple[str, str]:
        session = await server.open(io.open(inputs), io.messages(inputs), label="g")
        async with connect(server, session) as client:
            tools = (await client.list_tools()).tools
            given = json.dumps([t.model_dump(mode="json") for t in tools], ensure_ascii=False)
            prompt = await client.get_prompt("task")
            request = (await client.read_resource("tooleval://example/request")).contents
            answers = [text_of(await client.call_tool(t.name, {})) for t in tools]
        served = [m.content.text for m in prompt.messages] + [c.text for c in request]
        return given, "\n".join([*served, *answers])  # type: ignore[attr-defined]

    for example in to_examples(split, samples):
        inputs, reference = dict(example.inputs or {}), example.outputs or {}
        given, served = asyncio.run(served_texts(inputs))
        hidden = gold_strings(reference, json.dumps(inputs, ensure_ascii=False) + given)
        leaked = sorted(s for s in hidden if s in served)
        assert not leaked, (example.id, leaked[:5])
        assert json.dumps(reference, ensure_ascii=False) not in served
        checked += bool(hidden)
    assert checked  # the check had gold texts to look for


def test_stdio_serves_one_example(tmp_path: Path, samples: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tooleval_agents", "serve", "appbench", "--category", "ss", "--transport",
              "stdio", "--example", "1", "--out", str(tmp_path), "--data-dir",
              str(samples)], env=dict(os.environ))

    async def talk() -> tuple[list[str], str, str]:
        async with (stdio_client(params) as (read, write),
                    ClientSession(read, write) as client):
            await client.initialize()
            names = [t.name for t in (await client.list_tools()).tools]
            prompt = (await client.get_prompt("task")).messages[0].content.text  # type: ignore[union-attr]
            answer = text_of(await client.call_tool("Weather__getweather", {"city": "Oslo"}))
            return names, prompt, answer

    names, prompt, answer = asyncio.run(talk())
    assert len(names) == 33 and "Request: " in prompt
    assert json.loads(answer)["city"] == "Oslo"
    log = list(read_log(tmp_path / "serve-appbench-plan-ss" / "mcp_calls.jsonl"))
    assert [(r["session"], r["tool"]) for r in log if r["kind"] == "call"] == [
        ("1", "Weather__getweather")]
    assert re.search(r"Request: .+", prompt)


def test_a_missing_sdk_is_one_line_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    require_mcp()  # installed here
    monkeypatch.setattr(tooleval_agents.mcp, "find_spec",
                        lambda name: None if name == "langchain_mcp_adapters" else object())
    require_mcp()  # serving needs no adapters
    with pytest.raises(ToolevalError) as raised:
        require_mcp(adapters=True)
    assert str(raised.value) == f"MCP needs langchain_mcp_adapters: {ADAPTERS_HINT}"
    monkeypatch.setattr(tooleval_agents.mcp, "find_spec",
                        lambda name: None if name == "mcp" else object())
    with pytest.raises(ToolevalError) as raised:
        require_mcp()
    assert str(raised.value) == f"MCP needs mcp: {INSTALL_HINT}"
