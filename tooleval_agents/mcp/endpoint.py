"""One example's MCP sessions over streamable HTTP: opened by ``initialize``, ended by the
client's ``DELETE``, by idleness, by eviction, or with their example.

A client's MCP session (the protocol's, named by the ``Mcp-Session-Id`` header) is the SDK's
streamable-HTTP transport with the example's low-level server running on it; every MCP session
of an example shares that example's state (its :class:`~tooleval_agents.mcp.sessions.
ExampleSession`). :class:`Endpoint` keeps them, bounded:

* at most ``max_sessions`` at once: opening one more ends the one idle longest (no request in
  flight; its client gets 404 and, as the protocol says, initializes again), or answers 503
  when every one is busy. So a client that initializes thousands of times holds a bounded
  amount of memory (the SDK's session manager kept every session it ever made);
* one with no request in flight for ``idle_s`` seconds ends (:meth:`Endpoint.sweep`);
* ``DELETE`` with its id ends it at once (200), as the protocol lets a client do;
* all end when the example's session closes (:meth:`Endpoint.close`).

Only the SDK's public pieces are used (``StreamableHTTPServerTransport``: ``connect``,
``handle_request``, ``terminate``; ``Server.run``), the same on its 1.x and 2.x majors.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass, field
from typing import Any
from uuid import uuid4

import anyio
from anyio.abc import TaskGroup, TaskStatus
from mcp.server.lowlevel import Server
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.transport_security import TransportSecuritySettings
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

MAX_SESSIONS = 32
"""A client's MCP sessions one example keeps at once (:class:`Endpoint`)."""
IDLE_S = 1800.0
"""Seconds an MCP session may go without a request before it ends (the SDK 2.x default)."""
SESSION_HEADER = b"mcp-session-id"


def error_response(status: int, code: int, message: str,
                   headers: dict[str, str] | None = None) -> Response:
    """A JSON-RPC error body (no request id) with an HTTP status."""
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    return Response(json.dumps(body), status_code=status, media_type="application/json",
                    headers=headers)


@dataclass
class _Mcp:
    """One MCP session of the example."""

    transport: StreamableHTTPServerTransport
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    last: float = field(default_factory=time.monotonic)
    """When its last request ended (or it opened)."""
    busy: int = 0
    """Its requests in flight (an open event stream is one)."""


class Endpoint:
    """The MCP sessions of one example (see the module docstring); runs in the server's event
    loop between :meth:`start` and :meth:`close`."""

    def __init__(self, server: Server[Any, Any], options: Any,
                 security: TransportSecuritySettings | None, *,
                 max_sessions: int = MAX_SESSIONS, idle_s: float = IDLE_S) -> None:
        self.server, self.options, self.security = server, options, security
        self.max_sessions, self.idle_s = max_sessions, idle_s
        self.opened = 0
        """MCP sessions opened so far."""
        self._sessions: dict[str, _Mcp] = {}
        self._group: TaskGroup | None = None
        self._done = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def live(self) -> int:
        """MCP sessions open now."""
        return len(self._sessions)

    async def start(self) -> None:
        """Start holding sessions (a task of the running loop until :meth:`close`)."""
        ready = asyncio.Event()

        async def hold() -> None:
            async with anyio.create_task_group() as group:
                self._group = group
                ready.set()
                await self._done.wait()
                group.cancel_scope.cancel()

        self._task = asyncio.create_task(hold())
        await ready.wait()

    async def close(self) -> None:
        """End every MCP session and stop."""
        for sid in list(self._sessions):
            await self._discard(sid)
        self._done.set()
        if self._task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await self._task

    async def sweep(self, now: float | None = None) -> int:
        """End the sessions idle for ``idle_s`` or more; how many ended."""
        now = time.monotonic() if now is None else now
        stale = [sid for sid, s in self._sessions.items()
                 if not s.busy and now - s.last >= self.idle_s]
        for sid in stale:
            await self._discard(sid)
        return len(stale)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one HTTP request of this example's URL."""
        sid = next((v.decode("latin-1") for k, v in scope.get("headers", ())
                    if k == SESSION_HEADER), None)
        if sid is None:
            if scope.get("method") != "POST":
                await error_response(400, -32600, "Bad Request: no Mcp-Session-Id (an MCP "
                                     "session starts with a POST of initialize)")(
                    scope, receive, send)
                return
            await self._open(scope, receive, send)
            return
        mcp = self._sessions.get(sid)
        if mcp is None:
            await error_response(404, -32600, "Session not found")(scope, receive, send)
            return
        mcp.busy += 1
        try:
            await mcp.transport.handle_request(scope, receive, send)
        finally:
            mcp.busy -= 1
            mcp.last = time.monotonic()
        if mcp.transport.is_terminated:  # the client's DELETE
            await self._discard(sid)

    async def _open(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A request without a session id: a new MCP session if it opens one."""
        if self._done.is_set() or self._group is None:  # the example ended meanwhile
            await error_response(404, -32600, "the session has ended")(scope, receive, send)
            return
        if len(self._sessions) >= self.max_sessions:
            idle = [(s.last, sid) for sid, s in self._sessions.items() if not s.busy]
            if not idle:
                await error_response(503, -32603, f"too many MCP sessions busy on this example "
                                     f"({self.max_sessions})")(scope, receive, send)
                return
            await self._discard(min(idle)[1])
        sid = uuid4().hex
        mcp = _Mcp(StreamableHTTPServerTransport(
            mcp_session_id=sid, is_json_response_enabled=True, event_store=None,
            security_settings=self.security))
        self._sessions[sid] = mcp
        self.opened += 1
        status: int | None = None

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        mcp.busy += 1
        try:
            assert self._group is not None
            await self._group.start(self._run, mcp)
            await mcp.transport.handle_request(scope, receive, watch)
        finally:
            mcp.busy -= 1
            mcp.last = time.monotonic()
            if status is None or status >= 400:  # nothing was opened (not an initialize)
                await self._discard(sid)

    async def _run(self, mcp: _Mcp, *, task_status: TaskStatus[None]) -> None:
        """The session's server, until its transport is terminated or it is cancelled."""
        with mcp.scope:
            async with mcp.transport.connect() as (read, write):
                task_status.started()
                with contextlib.suppress(Exception):  # a broken session ends alone
                    await self.server.run(read, write, self.options)

    async def _discard(self, sid: str) -> None:
        """Forget a session (its id answers 404 from now on) and end it."""
        mcp = self._sessions.pop(sid, None)
        if mcp is None:
            return
        if not mcp.transport.is_terminated:
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await mcp.transport.terminate()
        mcp.scope.cancel()


__all__ = ["IDLE_S", "MAX_SESSIONS", "Endpoint", "error_response"]
