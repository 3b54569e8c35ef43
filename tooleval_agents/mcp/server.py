"""The run's MCP server: example sessions over streamable HTTP, or one over stdio.

:class:`ToolServer` listens on ``127.0.0.1`` (unless told otherwise) in a thread of its own
(uvicorn, its own event loop: the run's loop and its signal handling are left alone) and serves
each open :class:`~tooleval_agents.mcp.sessions.ExampleSession` at ``/s/<id>/mcp``, its MCP
sessions kept by an :class:`~tooleval_agents.mcp.endpoint.Endpoint` (JSON responses; a bounded
number per example, all on that example's state; ``DELETE`` ends one; idle ones end). Every
request is checked first:

* **Host and Origin** (DNS rebinding, as the MCP specification's security notes ask): only the
  address the server listens on, as ``127.0.0.1`` or ``localhost`` when it is the loopback
  (421 / 403 otherwise; the SDK's ``TransportSecuritySettings``);
* **the session's own key** (``Authorization: Bearer <key>``, :mod:`~tooleval_agents.mcp.keys`:
  minted for that session alone from the server's secret), which the harness hands to that
  example's agent only. No key, or not one of this server's: 401. Another session's key: 401
  too, logged as a ``foreign_call`` and counted on the session whose key it is;
* **the session**: a path of no open session is 404; one of a session that has ended is 404
  too, and logged as a late call. An example is opened once, however many of its first
  requests arrive at once (``tooleval serve`` opens an example at its first request, under its
  canonical index only: ``/s/00`` is not ``/s/0``).

Calls are answered and logged by the session (:mod:`tooleval_agents.mcp.sessions`); malformed
JSON-RPC, bad arguments get the SDK's protocol errors or an ``isError`` result, an unknown
method -32601, a body over :data:`MAX_BODY` 413, and the server goes on serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import secrets
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import uvicorn
from langchain_core.messages import BaseMessage
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import HTTPConnection
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from tooleval_agents.contracts import ServedSession, ToolSession
from tooleval_agents.errors import ToolevalError
from tooleval_agents.mcp.endpoint import IDLE_S, MAX_SESSIONS, Endpoint, error_response
from tooleval_agents.mcp.keys import SessionKeys
from tooleval_agents.mcp.log import CallLog
from tooleval_agents.mcp.sdk import client_methods, initialization_options
from tooleval_agents.mcp.sessions import ExampleSession, ToolSchemas, mcp_server
from tooleval_agents.redaction import register_secret
from tooleval_agents.tool_faults import FaultSession

LOOPBACK = "127.0.0.1"
MAX_BODY = 8 << 20
"""Bytes a request's body may have (a tool call's arguments are a few kB): more is 413."""
_PATH = re.compile(r"^/s/([A-Za-z0-9_-]{1,64})/mcp/?$")
_UNAUTHORIZED = {"WWW-Authenticate": "Bearer"}
OnDemand = Callable[[str], Awaitable[ExampleSession | None]]
"""Opens the session a request names when none is open under that id (``tooleval serve``:
the example with that index); ``None``: there is none."""


def _version() -> str:
    try:
        return version("tooleval-agents")
    except PackageNotFoundError:  # a source tree that was not installed
        return "0"


@dataclass
class _Live:
    session: ExampleSession
    endpoint: Endpoint


class ToolServer:
    """The MCP server of a run or of ``tooleval serve`` (see the module docstring).

    Example::

        server = ToolServer(log=run_dir / "mcp_calls.jsonl")
        session = await server.open(io.open(inputs), io.messages(inputs), label="ss #0")
        url, key = server.url(session), server.key(session)   # handed to its agent only
        ...
        await server.close(session)                            # later calls: 404, logged
        server.stop()

    ``secret``: what the sessions' keys are derived from (random unless given);
    ``max_sessions`` and ``idle_timeout``: the bounds on each example's MCP sessions
    (:class:`~tooleval_agents.mcp.endpoint.Endpoint`).
    """

    def __init__(self, *, log: Path | None = None, host: str = LOOPBACK, port: int = 0,
                 secret: str | None = None, on_demand: OnDemand | None = None,
                 max_sessions: int = MAX_SESSIONS, idle_timeout: float = IDLE_S) -> None:
        self.host, self.port = host, port
        self.keys = SessionKeys(secret)
        register_secret(self.keys.secret)  # masked wherever a run writes it
        self.log = CallLog(log)
        self.on_demand = on_demand
        self.max_sessions, self.idle_timeout = max_sessions, idle_timeout
        self.foreign = 0
        """Requests refused because they carried another session's key."""
        self._schemas = ToolSchemas()
        self._version = _version()
        self._methods = client_methods()
        self._live: dict[str, _Live] = {}
        self._opening: dict[str, asyncio.Future[_Live | None]] = {}
        self._ended: set[str] = set()
        self._guard: TransportSecurityMiddleware | None = None
        self._security: TransportSecuritySettings | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._uvicorn: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    # --- lifecycle (any thread) -------------------------------------------------------------
    def start(self) -> None:
        """Bind and start serving (once; at the first :meth:`open` otherwise).

        Raises:
            ToolevalError: the address cannot be bound.
        """
        if self.host in ("0.0.0.0", "::", ""):  # every address: no Host could be checked
            raise ToolevalError(f"MCP server: --host {self.host or repr('')} listens on every "
                                "address; name the one clients reach it by (its Host header "
                                "is checked)")
        with self._lock:
            if self._thread is None:
                self._launch()
        server, thread = self._uvicorn, self._thread
        assert server is not None and thread is not None
        while not (server.started and self._loop is not None) and thread.is_alive():
            time.sleep(0.002)
        if not server.started:
            raise ToolevalError(f"MCP server: could not start on {self.host}:{self.port}")

    @property
    def started(self) -> bool:
        return self._uvicorn is not None and self._uvicorn.started and self._loop is not None

    def _launch(self) -> None:
        """Bind, then serve in a thread of its own (the caller holds the lock)."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        # Accepted connections inherit it: without, a response's second write waited
        # for the client's delayed ACK (40 ms per request).
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            sock.bind((self.host, self.port))
        except OSError as exc:
            sock.close()
            raise ToolevalError(f"MCP server: cannot listen on {self.host}:{self.port} "
                                f"({exc.strerror or exc})") from None
        self.port = sock.getsockname()[1]
        self._security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=self._hosts(),
            allowed_origins=[f"http://{h}" for h in self._hosts()])
        self._guard = TransportSecurityMiddleware(self._security)
        # No proxy in front (X-Forwarded-* is not trusted) and no access log: each cost a
        # share of a request that is itself a fraction of a millisecond.
        config = uvicorn.Config(self.asgi, lifespan="off", log_config=None, interface="asgi3",
                                timeout_graceful_shutdown=1, proxy_headers=False,
                                access_log=False)
        self._uvicorn = uvicorn.Server(config)
        self._thread = threading.Thread(target=asyncio.run, args=(self._serve(sock),),
                                        name="tooleval-mcp", daemon=True)
        self._thread.start()

    async def _serve(self, sock: socket.socket) -> None:
        """The server thread's loop (``asyncio.run``: what is left of it is wound down)."""
        assert self._uvicorn is not None
        self._loop = asyncio.get_running_loop()
        sweeper = asyncio.create_task(self._sweep_idle())
        try:
            await self._uvicorn.serve(sockets=[sock])
        finally:
            sweeper.cancel()

    async def _sweep_idle(self) -> None:
        """End the MCP sessions idle past the bound, every quarter of it (at most a minute)."""
        every = min(max(self.idle_timeout / 4, 0.05), 60.0)
        while True:
            await asyncio.sleep(every)
            for live in list(self._live.values()):
                await live.endpoint.sweep()

    def _hosts(self) -> list[str]:
        names = [self.host, "localhost"] if self.host == LOOPBACK else [self.host]
        return [f"{name}:{self.port}" for name in names]

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def url(self, session: ServedSession | str) -> str:
        """The URL of a session (or of a session id)."""
        sid = session if isinstance(session, str) else session.id
        return f"{self.base_url}/s/{sid}/mcp"

    def key(self, session: ServedSession | str) -> str:
        """The key that opens a session (or a session id), and no other: handed to that
        example's agent alone (``Authorization: Bearer <key>``)."""
        return self.keys.key(session if isinstance(session, str) else session.id)

    def mcp_sessions(self, session: ExampleSession | str) -> int:
        """The MCP sessions a client holds open on an example's session now (0: not open)."""
        live = self._live.get(session if isinstance(session, str) else session.id)
        return live.endpoint.live if live is not None else 0

    def stop(self) -> None:
        """Close every session, stop serving, close the log (idempotent)."""
        with self._lock:
            thread, loop, server = self._thread, self._loop, self._uvicorn
            self._thread = None
        if thread is not None and loop is not None and server is not None:
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self._close_all(), loop).result(timeout=10)
            server.should_exit = True
            thread.join(timeout=10)
        self.log.close()

    def __enter__(self) -> ToolServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- sessions (from any event loop) ----------------------------------------------------
    def session(self, tools: ToolSession, messages: list[BaseMessage], *, label: str,
                faults: FaultSession | None = None,
                session_id: str | None = None) -> ExampleSession:
        """A session of one example on this server, not open yet (its id random unless
        given)."""
        return ExampleSession(id=session_id or secrets.token_hex(8), label=label, tools=tools,
                              messages=list(messages), log=self.log, faults=faults)

    async def open(self, tools: ToolSession, messages: list[BaseMessage], *, label: str,
                   faults: FaultSession | None = None) -> ExampleSession:
        """A new session of one example, served until :meth:`close`."""
        if not self.started:
            await asyncio.to_thread(self.start)
        session = self.session(tools, messages, label=label, faults=faults)
        await self._in_loop(self._open(session))
        return session

    async def close(self, session: ServedSession) -> None:
        """End a session: its MCP sessions are closed, later requests answered 404 and
        logged as late calls."""
        if self._loop is not None and not self._loop.is_closed():
            await self._in_loop(self._close(session.id))

    async def _in_loop(self, coro: Awaitable[Any]) -> Any:
        assert self._loop is not None
        here = asyncio.get_running_loop()
        if here is self._loop:
            return await coro
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self._loop))  # type: ignore[arg-type]

    async def _open(self, session: ExampleSession) -> _Live:
        server = mcp_server(session, self._schemas, self._version)
        endpoint = Endpoint(server, initialization_options(server, session.tools.dynamic),
                            self._security, max_sessions=self.max_sessions,
                            idle_s=self.idle_timeout)
        await endpoint.start()
        live = self._live[session.id] = _Live(session, endpoint)
        self.log.event(session.id, "opened", example=session.label)
        return live

    async def _close(self, session_id: str) -> None:
        live = self._live.pop(session_id, None)
        if live is None:
            return
        live.session.open = False
        self._ended.add(session_id)
        await live.endpoint.close()
        self.log.event(session_id, "closed", example=live.session.label,
                       calls=len(live.session.calls))

    async def _close_all(self) -> None:
        for sid in list(self._live):
            await self._close(sid)

    async def _on_demand(self, sid: str) -> _Live | None:
        """The session ``on_demand`` opens for ``sid``, opened once however many requests
        ask at the same time (each waits for the one opening)."""
        if self.on_demand is None:
            return None
        opening = self._opening.get(sid)
        if opening is None:
            opening = self._opening[sid] = asyncio.ensure_future(self._demand(sid))
            opening.add_done_callback(lambda _: self._opening.pop(sid, None))
        return await asyncio.shield(opening)

    async def _demand(self, sid: str) -> _Live | None:
        assert self.on_demand is not None
        session = await self.on_demand(sid)
        if session is None or sid in self._ended:
            return None
        return self._live.get(sid) or await self._open(session)

    # --- HTTP -------------------------------------------------------------------------------
    async def asgi(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI application (see the module docstring for what it checks)."""
        if scope["type"] != "http":
            return
        assert self._guard is not None
        answer = await self._guard.validate_request(HTTPConnection(scope), is_post=False)
        match = _PATH.match(str(scope.get("path", "")))
        if answer is None and match is None:
            answer = error_response(404, -32600, "not an MCP endpoint: sessions are at "
                                    "/s/<id>/mcp")
        if answer is None:
            assert match is not None
            answer = self._refused(HTTPConnection(scope), match.group(1))
        live: _Live | None = None
        if answer is None:
            live, answer = await self._live_for(match.group(1)) if match else (None, None)
        if answer is None and scope.get("method") == "POST":
            receive, answer = await self._read_body(receive)
        if answer is not None or live is None:
            await (answer or error_response(404, -32600, "no session"))(scope, receive, send)
            return
        await live.endpoint.handle(scope, receive, send)

    def _refused(self, request: HTTPConnection, sid: str) -> Response | None:
        """401 unless the request carries the key of session ``sid``: another session's key
        is a foreign call, logged and counted on that session."""
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        owner = self.keys.owner(value.strip()) if scheme.lower() == "bearer" else None
        if owner == sid:
            return None
        if owner is None:
            return error_response(401, -32001, "unauthorized: send the session's key as "
                                  "'Authorization: Bearer <key>'", _UNAUTHORIZED)
        self.foreign += 1
        caller = self._live.get(owner)
        if caller is not None:
            caller.session.foreign += 1
        self.log.event(sid, "foreign_call", key_of=owner)
        return error_response(401, -32001, "unauthorized: this key opens another example's "
                              "session, not this one (each session takes its own key)",
                              _UNAUTHORIZED)

    async def _live_for(self, sid: str) -> tuple[_Live | None, Response | None]:
        if sid in self._ended:
            self.log.event(sid, "late_call")
            return None, error_response(404, -32600, f"session {sid} has ended")
        live = self._live.get(sid) or await self._on_demand(sid)
        if live is None:
            return None, error_response(404, -32600, f"no session {sid}")
        return live, None

    async def _read_body(self, receive: Receive) -> tuple[Receive, Response | None]:
        """The request's body, read whole (at most :data:`MAX_BODY` bytes: 413), and a
        ``receive`` that hands it on; a request of an unknown method is answered -32601."""
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return receive, error_response(400, -32600, "the request ended early")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_BODY:
                return receive, error_response(413, -32600, f"the request's body is over "
                                               f"{MAX_BODY} bytes")
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        unknown = self._unknown_method(body)
        given = False

        async def replay() -> Message:
            nonlocal given
            if given:
                return await receive()
            given = True
            return {"type": "http.request", "body": body, "more_body": False}

        return replay, unknown

    def _unknown_method(self, body: bytes) -> Response | None:
        """-32601 for a JSON-RPC request whose method no client may send."""
        try:
            value = json.loads(body)
        except (ValueError, RecursionError):  # the SDK answers it (-32700)
            return None
        method = value.get("method") if isinstance(value, dict) else None
        if not isinstance(method, str) or "id" not in value or method in self._methods:
            return None
        request_id = value["id"] if isinstance(value["id"], str | int) else None
        return Response(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {
            "code": -32601, "message": f"Method not found: {method[:100]}"}}),
            media_type="application/json")


async def serve_stdio(session: ExampleSession) -> None:
    """Serve one session on standard input and output until the client closes them."""
    server = mcp_server(session, ToolSchemas(), _version())
    async with stdio_server() as (read, write):
        await server.run(read, write, initialization_options(server, session.tools.dynamic))


__all__ = ["LOOPBACK", "ToolServer", "serve_stdio"]
