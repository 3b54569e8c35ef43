"""A client transport of MCP's streamable HTTP for the run's own server: requests by POST,
answers as JSON, no event stream, on keep-alive connections of a small HTTP/1.1 client.

The project's own agents (``-O mcp=true``) reach the run's :class:`~tooleval_agents.mcp.server.
ToolServer` on this machine, which answers every POST with one JSON body. Two things made such
a session cost more than its calls (docs/performance.md, ``benchmarks/mcp_overhead.py``):

* the optional GET stream of server-initiated messages, which the SDK's transport opens for
  every session. The specification lets a client skip it, and this one does: a session whose
  tools change is listed again after each round of calls instead (:class:`~tooleval_agents.
  mcp.client.McpToolbox`);
* the general-purpose HTTP client (0.9 ms of CPU per request on this machine, 25 times the
  request itself): :class:`HttpPool` speaks just what the run's server answers -- HTTP/1.1,
  ``Content-Length`` or chunked bodies, keep-alive -- over asyncio streams.

The official SDK's ``ClientSession`` runs on top unchanged, as on any transport: the handshake,
the protocol version header, the session id, ``tools/list`` and ``tools/call`` are the
protocol's own. What comes back that is not an answer -- an HTTP error, a body that is not
JSON-RPC, a dropped connection, a closed session (404) -- reaches the waiting request as a JSON-RPC
error with the reason, so a call fails with a message rather than hanging.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from mcp.types import (
    INTERNAL_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCRequest,
    JSONRPCResponse,
)

SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"
HEAD_LIMIT = 64 * 1024
"""The most a response's status line and headers may take."""
BODY_LIMIT = 64 * 1024 * 1024
"""The most a response's body may take (a tool list of thousands of tools is a few MB)."""
IDLE_LIMIT = 32
"""Idle connections a pool keeps."""

Streams = tuple[MemoryObjectReceiveStream[SessionMessage | Exception],
                MemoryObjectSendStream[SessionMessage]]


class HttpError(Exception):
    """The server's answer could not be read as HTTP."""


class _Unanswered(Exception):
    """The connection ended before a byte of the answer came."""


@dataclass
class Reply:
    """One HTTP response: its status, headers (names in lower case) and body."""

    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def kind(self) -> str:
        """The media type, in lower case, without parameters."""
        return self.headers.get("content-type", "").split(";")[0].strip().lower()


@dataclass
class HttpPool:
    """Keep-alive HTTP/1.1 connections to one ``host:port`` (one request at a time on each;
    requests at once open more), every request with ``headers``; ``timeout`` bounds each."""

    host: str
    port: int
    headers: dict[str, str]
    timeout: float
    _idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = field(default_factory=list)

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> Reply:
        """POST ``body`` to ``path``. A kept connection the server had closed before answering
        anything (an idle one it timed out) is tried once more on a new one."""
        while True:
            reused = bool(self._idle)
            reader, writer = self._idle.pop() if reused else await asyncio.open_connection(
                self.host, self.port, limit=HEAD_LIMIT)
            try:
                async with asyncio.timeout(self.timeout):
                    writer.write(self._request(path, body, headers))
                    reply = await _read_reply(reader)
            except _Unanswered:
                writer.close()
                if reused:
                    continue
                raise HttpError(f"{self.host}:{self.port} closed the connection without "
                                "answering") from None
            except (ConnectionError, asyncio.IncompleteReadError) as exc:
                writer.close()
                raise HttpError(f"the connection to {self.host}:{self.port} was lost "
                                f"({type(exc).__name__})") from None
            except BaseException:  # cancelled, timed out, unreadable: never kept half-read
                writer.close()
                raise
            if reply.headers.get("connection", "").lower() == "close" or \
                    len(self._idle) >= IDLE_LIMIT:
                writer.close()
            else:
                self._idle.append((reader, writer))
            return reply

    @property
    def idle(self) -> int:
        """Connections kept open for the next request."""
        return len(self._idle)

    def _request(self, path: str, body: bytes, headers: dict[str, str]) -> bytes:
        lines = [f"POST {path} HTTP/1.1", f"Host: {self.host}:{self.port}",
                 f"Content-Length: {len(body)}"]
        lines += [f"{k}: {v}" for k, v in {**self.headers, **headers}.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body

    def close(self) -> None:
        """Close the idle connections."""
        for _, writer in self._idle:
            writer.close()
        self._idle.clear()


async def _read_reply(reader: asyncio.StreamReader) -> Reply:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            raise _Unanswered from None
        raise
    except asyncio.LimitOverrunError:
        raise HttpError(f"the response's headers are over {HEAD_LIMIT} bytes") from None
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise HttpError(f"not an HTTP/1.1 response: {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return Reply(int(parts[1]), headers, await _read_body(reader, headers))


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        chunks: list[bytes] = []
        size = 0
        while True:
            line = await reader.readuntil(b"\r\n")
            length = line.split(b";")[0].strip()
            try:
                n = int(length, 16)
                if n < 0:
                    raise ValueError
            except ValueError:
                raise HttpError(f"a chunk size that is not a number: {length[:20]!r}") from None
            size += n
            if size > BODY_LIMIT:
                raise HttpError(f"the response's body is over {BODY_LIMIT} bytes")
            if n == 0:
                await reader.readuntil(b"\r\n")  # no trailers from our server: the last CRLF
                return b"".join(chunks)
            chunks.append(await reader.readexactly(n))
            await reader.readexactly(2)
    length_text = headers.get("content-length")
    if length_text is None:
        raise HttpError("a response with neither Content-Length nor chunked encoding")
    if not length_text.isdigit() or int(length_text) > BODY_LIMIT:
        raise HttpError(f"a Content-Length that cannot be read: {length_text[:20]!r}")
    return await reader.readexactly(int(length_text))


class _Posting:
    """One MCP session's POSTs: its id and protocol version once the handshake gave them."""

    def __init__(self, url: str, pool: HttpPool,
                 answers: MemoryObjectSendStream[SessionMessage | Exception],
                 headers: dict[str, str] | None = None) -> None:
        parts = urlsplit(url)
        self.path = parts.path + (f"?{parts.query}" if parts.query else "")
        self.pool, self.answers = pool, answers
        self.headers = {"Accept": "application/json, text/event-stream",
                        "Content-Type": "application/json", **(headers or {})}

    async def send(self, message: JSONRPCMessage) -> None:
        request = message.root if isinstance(message.root, JSONRPCRequest) else None
        body = message.model_dump_json(by_alias=True, exclude_none=True).encode("utf-8")
        try:
            answer = self._read(await self.pool.post(self.path, body, self.headers), request)
        except (OSError, HttpError, TimeoutError, ValueError) as exc:
            if request is None:
                await self.answers.send(exc)
                return
            answer = _failed(request, f"MCP request {request.method} failed: {exc}")
        if answer is not None:
            await self.answers.send(SessionMessage(answer))

    def _read(self, reply: Reply, request: JSONRPCRequest | None) -> JSONRPCMessage | None:
        if request is None:  # a notification: nothing comes back (202)
            return None
        if reply.status >= 400:
            return _failed(request, f"MCP request {request.method}: HTTP {reply.status}"
                           f"{_reason(reply.body)}")
        if reply.kind != "application/json":  # the run's server answers POSTs as JSON
            return _failed(request, f"MCP request {request.method}: the server answered "
                           f"{reply.kind or 'no content type'} (HTTP {reply.status})")
        # json.loads then validate: pydantic's own JSON path is ~6x slower on this union.
        answer = JSONRPCMessage.model_validate(json.loads(reply.body))
        if request.method == "initialize" and isinstance(answer.root, JSONRPCResponse):
            sid = reply.headers.get(SESSION_HEADER)
            if sid:
                self.headers[SESSION_HEADER] = sid
            version = answer.root.result.get("protocolVersion")
            if isinstance(version, str):
                self.headers[VERSION_HEADER] = version
        return answer


def _reason(body: bytes) -> str:
    """The error message of a JSON-RPC error body, as ``: message`` (else nothing)."""
    try:
        value = json.loads(body)
    except ValueError:
        return ""
    error = value.get("error") if isinstance(value, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return f": {message}" if isinstance(message, str) and message else ""


def _failed(request: JSONRPCRequest, message: str) -> JSONRPCMessage:
    return JSONRPCMessage(JSONRPCError(jsonrpc="2.0", id=request.id,
                                       error=ErrorData(code=INTERNAL_ERROR, message=message)))


def pool_for(url: str, headers: dict[str, str], timeout: float) -> HttpPool:
    """A pool to the server of ``url`` (``http://host:port/...``)."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"not a plain-HTTP URL of the run's server: {url}")
    return HttpPool(parts.hostname, parts.port or 80, headers, timeout)


@contextlib.asynccontextmanager
async def json_http_client(url: str, pool: HttpPool,
                           headers: dict[str, str] | None = None) -> AsyncIterator[Streams]:
    """The read and write streams of one MCP session at ``url`` over ``pool`` (the pool's
    headers and ``headers``, the session's key among them, go with every request; the pool
    stays open after)."""
    answers_in, answers_out = anyio.create_memory_object_stream[SessionMessage | Exception](64)
    sent_in, sent_out = anyio.create_memory_object_stream[SessionMessage](64)
    posting = _Posting(url, pool, answers_in, headers)

    async def write(group: TaskGroup) -> None:
        async with sent_out:
            async for message in sent_out:
                if isinstance(message.message.root, JSONRPCRequest):
                    group.start_soon(posting.send, message.message)  # calls run at once
                else:
                    await posting.send(message.message)  # a notification keeps its place

    async with anyio.create_task_group() as group, answers_in, answers_out, sent_in:
        group.start_soon(write, group)
        try:
            yield answers_out, sent_in
        finally:
            group.cancel_scope.cancel()


__all__ = ["HttpError", "HttpPool", "Reply", "json_http_client", "pool_for"]
