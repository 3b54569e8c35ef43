"""The run's MCP server: example sessions over streamable HTTP, or one over stdio.

:class:`ToolServer` listens on ``127.0.0.1`` (unless told otherwise) in a thread of its own
(uvicorn, its own event loop: the run's loop and its signal handling are left alone) and serves
each open :class:`~tooleval_agents.mcp.sessions.ExampleSession` at ``/s/<id>/mcp`` with the
official SDK's streamable-HTTP session manager (JSON responses; the SDK's MCP sessions, any
number per example, all on that example's state). Every request is checked first:

* **Host and Origin** (DNS rebinding, as the MCP specification's security notes ask): only the
  address the server listens on, as ``127.0.0.1`` or ``localhost`` when it is the loopback
  (421 / 403 otherwise; the SDK's ``TransportSecuritySettings``);
* **the run's bearer token** (``Authorization: Bearer <token>``, random per server unless
  given; 401 otherwise), which the harness hands to the agent;
* **the session**: a path of no open session is 404; one of a session that has ended is 404
  too, and logged as a late call. A client's MCP sessions end with their example (``DELETE``
  is answered 405, as the protocol lets a server answer).

Calls are answered and logged by the session (:mod:`tooleval_agents.mcp.sessions`); malformed
JSON-RPC, unknown methods and bad arguments get the SDK's protocol errors or an ``isError``
result, and the server goes on serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
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
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import HTTPConnection
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from tooleval_agents.contracts import ToolSession
from tooleval_agents.errors import ToolevalError
from tooleval_agents.mcp.log import CallLog
from tooleval_agents.mcp.sessions import ExampleSession, ToolSchemas, mcp_server
from tooleval_agents.redaction import register_secret
from tooleval_agents.tool_faults import FaultSession

LOOPBACK = "127.0.0.1"
_PATH = re.compile(r"^/s/([A-Za-z0-9_-]{1,64})/mcp/?$")
OnDemand = Callable[[str], Awaitable[ExampleSession | None]]
"""Opens the session a request names when none is open under that id (``tooleval serve``:
the example with that index); ``None``: there is none."""


def _version() -> str:
    try:
        return version("tooleval-agents")
    except PackageNotFoundError:  # a source tree that was not installed
        return "0"


def _error(status: int, code: int, message: str,
           headers: dict[str, str] | None = None) -> Response:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    return Response(json.dumps(body), status_code=status, media_type="application/json",
                    headers=headers)


@dataclass
class _Live:
    session: ExampleSession
    manager: StreamableHTTPSessionManager
    done: asyncio.Event
    task: asyncio.Task[None]


class ToolServer:
    """The MCP server of a run or of ``tooleval serve`` (see the module docstring).

    Example::

        server = ToolServer(log=run_dir / "mcp_calls.jsonl")
        session = await server.open(io.open(inputs), io.messages(inputs), label="ss #0")
        url, token = server.url(session), server.token   # handed to the agent
        ...
        await server.close(session)                        # later calls: 404, logged
        server.stop()
    """

    def __init__(self, *, log: Path | None = None, host: str = LOOPBACK, port: int = 0,
                 token: str | None = None, on_demand: OnDemand | None = None) -> None:
        self.host, self.port = host, port
        self.token = token or secrets.token_urlsafe(24)
        register_secret(self.token)  # masked wherever a run writes it
        self.log = CallLog(log)
        self.on_demand = on_demand
        self._schemas = ToolSchemas()
        self._version = _version()
        self._live: dict[str, _Live] = {}
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
        await self._uvicorn.serve(sockets=[sock])

    def _hosts(self) -> list[str]:
        names = [self.host, "localhost"] if self.host == LOOPBACK else [self.host]
        return [f"{name}:{self.port}" for name in names]

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def url(self, session: ExampleSession | str) -> str:
        """The URL of a session (or of a session id)."""
        sid = session if isinstance(session, str) else session.id
        return f"{self.base_url}/s/{sid}/mcp"

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

    async def close(self, session: ExampleSession) -> None:
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

    async def _open(self, session: ExampleSession) -> None:
        manager = StreamableHTTPSessionManager(
            mcp_server(session, self._schemas, self._version), json_response=True,
            security_settings=self._security)
        ready, done = asyncio.Event(), asyncio.Event()

        async def hold() -> None:
            async with manager.run():
                ready.set()
                await done.wait()

        task = asyncio.create_task(hold())
        await ready.wait()
        self._live[session.id] = _Live(session, manager, done, task)
        self.log.event(session.id, "opened", example=session.label)

    async def _close(self, session_id: str) -> None:
        live = self._live.pop(session_id, None)
        if live is None:
            return
        live.session.open = False
        self._ended.add(session_id)
        live.done.set()
        with contextlib.suppress(Exception):
            await live.task
        self.log.event(session_id, "closed", example=live.session.label,
                       calls=len(live.session.calls))

    async def _close_all(self) -> None:
        for sid in list(self._live):
            await self._close(sid)

    # --- HTTP -------------------------------------------------------------------------------
    async def asgi(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI application (see the module docstring for what it checks)."""
        if scope["type"] != "http":
            return
        assert self._guard is not None
        refused = await self._guard.validate_request(HTTPConnection(scope), is_post=False)
        if refused is None and not self._authorized(HTTPConnection(scope)):
            refused = _error(401, -32001, "unauthorized: send the run's token as "
                             "'Authorization: Bearer <token>'", {"WWW-Authenticate": "Bearer"})
        if refused is not None:
            await refused(scope, receive, send)
            return
        live = await self._live_for(str(scope.get("path", "")))
        if scope.get("method") == "DELETE" and not isinstance(live, Response):
            # A client's MCP session ends with its example (the protocol's answer for a server
            # that keeps them is 405): ending it here raced its event stream.
            live = _error(405, -32600, "the session ends with its example",
                          {"Allow": "GET, POST"})
        if isinstance(live, Response):
            await live(scope, receive, send)
            return
        await live.manager.handle_request(scope, receive, send)

    def _authorized(self, request: HTTPConnection) -> bool:
        given = request.headers.get("authorization", "")
        scheme, _, value = given.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(
            value.strip().encode("utf-8"), self.token.encode("utf-8"))

    async def _live_for(self, path: str) -> _Live | Response:
        match = _PATH.match(path)
        if match is None:
            return _error(404, -32600, "not an MCP endpoint: sessions are at /s/<id>/mcp")
        sid = match.group(1)
        if sid in self._ended:
            self.log.event(sid, "late_call")
            return _error(404, -32600, f"session {sid} has ended")
        live = self._live.get(sid)
        if live is None and self.on_demand is not None:
            session = await self.on_demand(sid)
            if session is not None and sid not in self._live:
                await self._open(session)
            live = self._live.get(sid)
        return live if live is not None else _error(404, -32600, f"no session {sid}")


async def serve_stdio(session: ExampleSession) -> None:
    """Serve one session on standard input and output until the client closes them."""
    server = mcp_server(session, ToolSchemas(), _version())
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


__all__ = ["LOOPBACK", "ToolServer", "serve_stdio"]
