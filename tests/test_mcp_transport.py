"""The client transport of the project's own agents over MCP (:mod:`tooleval_agents.mcp.transport`):
the SDK's ``ClientSession`` on it against the run's server (handshake, session id and protocol
version headers, no GET stream, calls at once), what a failed request answers, and the small
HTTP client against a raw server on 127.0.0.1 that answers in every way it must read or refuse."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.shared.exceptions import McpError

from tooleval_agents import agent_io_for
from tooleval_agents.mcp.client import McpClient
from tooleval_agents.mcp.server import ToolServer
from tooleval_agents.mcp.transport import HttpError, HttpPool, json_http_client, pool_for

SS = {"input": "What is the weather in Oslo on March 3rd?"}
WEATHER = "Weather__getweather"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ToolServer]:
    with ToolServer(log=tmp_path / "mcp_calls.jsonl") as served:
        yield served


class Seen:
    """Every request the server's ASGI app is given: method, path, headers."""

    def __init__(self, server: ToolServer) -> None:
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.clients: set[tuple[str, int]] = set()
        inner = server.asgi

        async def asgi(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                headers = {k.decode(): v.decode() for k, v in scope["headers"]}
                self.requests.append((scope["method"], scope["path"], headers))
                self.clients.add(tuple(scope["client"]))
            await inner(scope, receive, send)

        server.asgi = asgi  # type: ignore[method-assign]


async def _session(server: ToolServer) -> Any:
    io = agent_io_for("appbench", subset="ss")
    return await server.open(io.open(SS), io.messages(SS), label="t")


def _pool(server: ToolServer, session: Any, key: str | None = None) -> HttpPool:
    return pool_for(server.base_url,
                    {"Authorization": f"Bearer {key or server.key(session)}"}, 30)


def test_the_sdk_session_runs_the_protocol_on_it_without_a_get_stream(tmp_path: Path) -> None:
    server = ToolServer(log=tmp_path / "mcp_calls.jsonl")
    seen = Seen(server)

    async def main() -> tuple[Any, list[str], list[Any]]:
        session = await _session(server)
        pool = _pool(server, session)
        async with (json_http_client(server.url(session), pool) as (read, write),
                    ClientSession(read, write) as client):
            init = await client.initialize()
            names = [t.name for t in (await client.list_tools()).tools]
            args = {"city": "Oslo", "date": "2024-03-03"}
            results = await asyncio.gather(*(client.call_tool(WEATHER, args) for _ in range(5)))
        pool.close()
        return init, names, results

    with server:
        init, names, results = asyncio.run(main())
    assert init.serverInfo.name == "tooleval" and WEATHER in names
    assert all(not r.isError and "temperature" in r.content[0].text for r in results)
    methods = [m for m, _, _ in seen.requests]
    assert methods == ["POST"] * 8, methods  # initialize, initialized, list, 5 calls; no GET
    first, *later = [h for _, _, h in seen.requests]
    assert "mcp-session-id" not in first
    sid = {h["mcp-session-id"] for h in later}
    assert len(sid) == 1 and all(h["mcp-protocol-version"] == init.protocolVersion
                                 for h in later)
    (path,) = {p for _, p, _ in seen.requests}  # the example's session, with its own key
    key = server.key(path.split("/")[2])
    assert all(h["authorization"] == f"Bearer {key}" for h in [first, *later])
    calls = [json.loads(line) for line in (tmp_path / "mcp_calls.jsonl").open()]
    assert sum(c["kind"] == "call" for c in calls) == 5


def test_a_refused_or_ended_session_fails_the_request_with_its_reason(
        server: ToolServer) -> None:
    async def main() -> tuple[str, str]:
        session = await _session(server)
        unsigned = _pool(server, session, key="not-it")
        async with (json_http_client(server.url(session), unsigned) as (read, write),
                    ClientSession(read, write) as client):
            with pytest.raises(McpError) as refused:
                await client.initialize()
        pool = _pool(server, session)
        async with (json_http_client(server.url(session), pool) as (read, write),
                    ClientSession(read, write) as client):
            await client.initialize()
            await server.close(session)
            with pytest.raises(McpError) as ended:
                await client.list_tools()
        return str(refused.value), str(ended.value)

    refused, ended = asyncio.run(main())
    assert "HTTP 401" in refused and "unauthorized" in refused
    assert "HTTP 404" in ended and "has ended" in ended


def test_toolboxes_of_a_run_share_connections_and_tools(tmp_path: Path) -> None:
    server = ToolServer(log=tmp_path / "mcp_calls.jsonl")
    seen = Seen(server)
    client = McpClient()

    async def main() -> list[Any]:
        tools = []
        for _ in range(3):
            session = await _session(server)
            async with client.connect(server.url(session), server.key(session)) as box:
                tools.append(box.tool(WEATHER))
                answer = await tools[-1].ainvoke({"city": "Oslo", "date": "2024-03-03"})
                assert "temperature" in answer
            await server.close(session)
        client.close()
        return tools

    with server:
        first, second, third = asyncio.run(main())
    assert first is second is third  # made once per definition, each call on its own session
    assert len(seen.requests) == 3 * 4 and len(seen.clients) == 1  # one kept connection
    calls = [json.loads(line) for line in (tmp_path / "mcp_calls.jsonl").open()]
    assert len({c["session"] for c in calls if c["kind"] == "call"}) == 3


# --- the HTTP client against a raw server -------------------------------------------------
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@contextlib.asynccontextmanager
async def _raw(handler: Handler) -> AsyncIterator[HttpPool]:
    """A pool on a raw server on 127.0.0.1 whose connections ``handler`` answers."""
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await handler(reader, writer)
        finally:
            writer.close()

    raw = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = raw.sockets[0].getsockname()[1]
    pool = HttpPool("127.0.0.1", port, {"X-Test": "1"}, timeout=30)
    try:
        yield pool
    finally:
        pool.close()
        raw.close()


async def _request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    return head + await reader.readexactly(length)


def _answers(*replies: bytes, keep: bool = True) -> Handler:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for reply in replies:
            await _request(reader)
            writer.write(reply)
            await writer.drain()
            if not keep:
                return
        await reader.read()

    return handler


def _post(handler: Handler, times: int = 1) -> list[Any]:
    """``times`` POSTs in a row: each reply, or the error reading it."""
    async def main() -> list[Any]:
        out: list[Any] = []
        async with _raw(handler) as pool:
            for _ in range(times):
                try:
                    out.append(await pool.post("/p", b'{"a": 1}', {"Y": "2"}))
                except HttpError as exc:
                    out.append(exc)
        return out

    return asyncio.run(main())


def test_bodies_by_length_and_by_chunks_on_one_kept_connection() -> None:
    sized = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n"
             b'{"x":1}')
    chunked = (b"HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"3\r\n{\"y\r\n4;ext=1\r\n\":2}\r\n0\r\n\r\n")
    first, second = _post(_answers(sized, chunked), times=2)
    assert (first.status, first.kind, first.body) == (200, "application/json", b'{"x":1}')
    assert (second.status, second.body) == (202, b'{"y":2}')


def test_a_connection_the_server_closed_is_tried_again_on_a_new_one() -> None:
    reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    replies = [r.body for r in _post(_answers(reply, keep=False), times=3)]
    assert replies == [b"ok", b"ok", b"ok"]


def test_the_request_carries_the_pool_and_call_headers() -> None:
    got: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        got.append(await _request(reader))
        writer.write(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()

    (reply,) = _post(handler)
    assert reply.status == 204
    head, _, body = got[0].partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /p HTTP/1.1" and body == b'{"a": 1}'
    assert {"Content-Length: 8", "X-Test: 1", "Y: 2"} <= set(lines[1:])


@pytest.mark.parametrize(("reply", "reason"), [
    (b"SMTP ready\r\n\r\n", "not an HTTP/1.1 response"),
    (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{}", "neither Content-Length"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n", "Content-Length that cannot be read"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n", "cannot be read"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "not a number"),
    (b"HTTP/1.1 200 OK\r\nX: " + b"y" * 70_000 + b"\r\n\r\n", "headers are over"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "was lost"),
    (b"", "without answering"),
])
def test_an_answer_it_cannot_read_is_an_error_with_the_reason(reply: bytes,
                                                               reason: str) -> None:
    (error,) = _post(_answers(reply, keep=False))
    assert isinstance(error, HttpError) and reason in str(error)


def test_only_plain_http_urls_make_a_pool() -> None:
    assert pool_for("http://127.0.0.1:8123/s/a/mcp", {}, 1.0).port == 8123
    with pytest.raises(ValueError, match="plain-HTTP"):
        pool_for("https://127.0.0.1/s/a/mcp", {}, 1.0)
