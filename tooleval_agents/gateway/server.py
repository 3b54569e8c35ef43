"""The model gateway: the run's model served to outside agents over HTTP, on ``127.0.0.1``, in
the three wire formats agents speak.

:class:`ModelGateway` listens in a thread of its own (uvicorn, its own event loop: the run's
loop and its signal handling are left alone) and serves, for each example's
:class:`~tooleval_agents.gateway.grants.Grant`, under ``/g/<id>``:

==============================  ==============================================================
``POST /v1/chat/completions``   OpenAI Chat Completions (:mod:`.chat_completions`)
``POST /v1/responses``          OpenAI Responses (:mod:`.responses`)
``POST /v1/messages``           Anthropic Messages (:mod:`.messages`; ``?beta=true`` too)
``GET /v1/models``              the one model served (OpenAI's list, or Anthropic's when the
                                request carries ``anthropic-version``)
==============================  ==============================================================

Each request is checked first -- its Host (the address the gateway listens on: DNS
rebinding), its grant and key (``Authorization: Bearer <key>`` or ``x-api-key: <key>``), its
size (:data:`MAX_BODY`), its JSON (total, nesting bounded) -- then answered by the run's model
(:class:`~tooleval_agents.gateway.model.ServedModel`) in the example's accounting, as JSON or
as the format's server-sent events. Whatever cannot be served gets the format's own error
body with its status (and ``x-should-retry: false``: the run's retry policy already ran), and
is counted on the example (or, when it names none, on the gateway).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import socket
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import uvicorn
from anthropic.types import ModelInfo
from openai.types import Model

from tooleval_agents.errors import ToolevalError
from tooleval_agents.gateway import chat_completions, messages, responses
from tooleval_agents.gateway.grants import Grant, Grants
from tooleval_agents.gateway.model import ServedModel
from tooleval_agents.gateway.wire import (
    GatewayError,
    ModelRequest,
    compact,
    dump,
    json_object,
    recorded,
)
from tooleval_agents.models.accounting import CallStats

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
MAX_BODY = 32 << 20
"""Bytes a request body may have (after decompression): more is 413."""
_PATH = re.compile(r"^/g/([0-9a-f]{16})(/v1/[A-Za-z0-9/._:-]*)$")
FORMATS: dict[str, ModuleType] = {"/v1/chat/completions": chat_completions,
                                  "/v1/responses": responses, "/v1/messages": messages}
RECORDED_HEADERS = ("anthropic-beta", "anthropic-version", "openai-beta")
"""Request headers kept with the call (what an agent asked of the API's version)."""
Send = Callable[[dict[str, Any]], Any]
Receive = Callable[[], Any]


@dataclass
class _Http:
    """One request as the gateway reads it."""

    method: str
    path: str
    query: str
    headers: dict[str, str]

    @classmethod
    def of(cls, scope: dict[str, Any]) -> _Http:
        headers: dict[str, str] = {}
        for name, value in scope.get("headers") or []:
            headers[name.decode("latin-1").lower()] = value.decode("latin-1")
        return cls(str(scope.get("method", "")), str(scope.get("path", "")),
                   (scope.get("query_string") or b"").decode("latin-1"), headers)

    def key(self) -> str | None:
        """The key sent, as Anthropic's ``x-api-key`` or a bearer token."""
        if "x-api-key" in self.headers:
            return self.headers["x-api-key"].strip()
        scheme, _, value = self.headers.get("authorization", "").partition(" ")
        return value.strip() if scheme.lower() == "bearer" and value.strip() else None


class ModelGateway:
    """The run's model served to outside agents (see the module docstring).

    Example::

        gateway = ModelGateway(model, name="reference")
        grant = gateway.grant("ss #0", stats)     # per example: its URL and key
        env = {"OPENAI_BASE_URL": gateway.openai_url(grant), "OPENAI_API_KEY": grant.key}
        ...
        gateway.end(grant)                         # later requests: 404
        gateway.stop()
    """

    def __init__(self, model: Any, *, name: str, host: str = LOOPBACK, port: int = 0) -> None:
        self.served = ServedModel(model, name)
        self.host, self.port = host, port
        self.grants = Grants()
        self._hosts: set[str] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._uvicorn: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    # --- grants (any thread) ----------------------------------------------------------------
    def grant(self, label: str, stats: CallStats | None) -> Grant:
        """A new grant for one example (the gateway starts at the first one)."""
        self.start()
        return self.grants.mint(label, stats)

    def end(self, grant: Grant) -> None:
        self.grants.end(grant)

    def url(self, grant: Grant) -> str:
        """The grant's root: ``ANTHROPIC_BASE_URL`` (the SDK adds ``/v1/messages``)."""
        return f"http://{self.host}:{self.port}/g/{grant.id}"

    def openai_url(self, grant: Grant) -> str:
        """``OPENAI_BASE_URL``: the grant's ``/v1``."""
        return f"{self.url(grant)}/v1"

    # --- lifecycle (any thread) -------------------------------------------------------------
    def start(self) -> None:
        """Bind and serve (once).

        Raises:
            ToolevalError: the address cannot be bound.
        """
        with self._lock:
            if self._thread is None:
                self._launch()
        server, thread = self._uvicorn, self._thread
        assert server is not None and thread is not None
        while not (server.started and self._loop is not None) and thread.is_alive():
            time.sleep(0.002)
        if not server.started:
            raise ToolevalError(f"model gateway: could not start on {self.host}:{self.port}")

    def _launch(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            sock.bind((self.host, self.port))
        except OSError as exc:
            sock.close()
            raise ToolevalError(f"model gateway: cannot listen on {self.host}:{self.port} "
                                f"({exc.strerror or exc})") from None
        self.port = sock.getsockname()[1]
        names = [self.host, "localhost"] if self.host == LOOPBACK else [self.host]
        self._hosts = {f"{name}:{self.port}" for name in names}
        config = uvicorn.Config(self.asgi, lifespan="off", log_config=None, interface="asgi3",
                                timeout_graceful_shutdown=1, proxy_headers=False,
                                access_log=False)
        self._uvicorn = uvicorn.Server(config)
        self._thread = threading.Thread(target=asyncio.run, args=(self._serve(sock),),
                                        name="tooleval-gateway", daemon=True)
        self._thread.start()

    async def _serve(self, sock: socket.socket) -> None:
        assert self._uvicorn is not None
        self._loop = asyncio.get_running_loop()
        await self._uvicorn.serve(sockets=[sock])

    def stop(self) -> None:
        """Stop serving (idempotent)."""
        with self._lock:
            thread, server = self._thread, self._uvicorn
            self._thread = None
        if thread is not None and server is not None:
            server.should_exit = True
            thread.join(timeout=10)

    def __enter__(self) -> ModelGateway:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- HTTP -------------------------------------------------------------------------------
    async def asgi(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        """The ASGI application."""
        if scope["type"] != "http":
            return
        http = _Http.of(scope)
        match = _PATH.match(http.path)
        route = match.group(2).rstrip("/") if match else http.path
        shape = _shape(route, http)
        grant: Grant | None = None
        try:
            if http.headers.get("host") not in self._hosts:
                raise GatewayError("invalid_request", "the Host header names another address "
                                   "than the gateway's", status=421)
            if match is None:
                raise GatewayError("not_found", f"no model endpoint at {http.path[:200]}: "
                                   "each example is served at its own /g/<id>/v1")
            grant = self.grants.check(match.group(1), http.key())
            try:
                await self._route(grant, route, http, receive, send)
            except (GatewayError, asyncio.CancelledError):
                raise
            except Exception as exc:  # a bug of ours: said, counted, and the gateway goes on
                log.exception("model gateway: %s %s failed", http.method, route)
                raise GatewayError("server_error", f"the gateway failed: {type(exc).__name__}: "
                                   f"{exc}"[:500]) from exc
        except GatewayError as err:
            if grant is not None:
                grant.refused(err)
            elif err.kind != "authentication":  # a wrong key is counted on its grant
                self.grants.unknown(err)
            await _respond(send, err.status, shape.error(err), {"x-should-retry": "false"})

    async def _route(self, grant: Grant, route: str, http: _Http, receive: Receive,
                     send: Send) -> None:
        if route == "/v1/models" or route.startswith("/v1/models/"):
            if http.method != "GET":
                raise GatewayError("invalid_request", "models are listed with GET", status=405)
            listed = _models(self.served.name, route, "anthropic-version" in http.headers)
            grant.answered("models")
            await _respond(send, 200, listed)
            return
        shape = FORMATS.get(route)
        if shape is None:
            raise GatewayError("not_found", f"no model endpoint at {route}: the gateway "
                               f"serves {', '.join(FORMATS)} and /v1/models")
        if http.method != "POST":
            raise GatewayError("invalid_request", f"{route} takes POST", status=405)
        request: ModelRequest = shape.parse(json_object(await _body(http, receive)))
        _record_http(request, http)
        message = await self.served.answer(request, grant.stats)
        grant.answered(shape.NAME)
        if request.stream:
            await _stream(send, shape.events(message, request))
        else:
            await _respond(send, 200, shape.answer(message, request))


def _shape(route: str, http: _Http) -> ModuleType:
    """The format an answer (and an error) takes on ``route``."""
    if route == "/v1/messages" or (route.startswith("/v1/models")
                                   and "anthropic-version" in http.headers):
        return messages
    return chat_completions


def _record_http(request: ModelRequest, http: _Http) -> None:
    """What the request's query and version headers said, with its unused fields."""
    if http.query:
        request.unused["?"] = recorded(http.query)
    for name in RECORDED_HEADERS:
        if name in http.headers:
            request.unused[name] = recorded(http.headers[name])


async def _body(http: _Http, receive: Receive) -> bytes:
    """The request body, at most :data:`MAX_BODY` bytes (gzip and deflate are unpacked, to
    the same bound)."""
    declared = http.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise _too_large()
    chunks, size = [], 0
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            raise GatewayError("invalid_request", "the client went away")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise _too_large()
        chunks.append(chunk)
        if not message.get("more_body"):
            break
    body = b"".join(chunks)
    encoding = http.headers.get("content-encoding", "identity").strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "deflate"):
        raise GatewayError("invalid_request", f"content-encoding {encoding!r}: the gateway "
                           "reads gzip, deflate or none", status=415)
    unpack = zlib.decompressobj(zlib.MAX_WBITS | (16 if encoding == "gzip" else 0))
    try:
        plain = unpack.decompress(body, MAX_BODY + 1)
    except zlib.error as exc:
        raise GatewayError("invalid_request", f"the {encoding} body cannot be read: "
                           f"{exc}") from None
    if len(plain) > MAX_BODY:
        raise _too_large()
    return plain


def _too_large() -> GatewayError:
    return GatewayError("too_large", f"the request is larger than {MAX_BODY >> 20} MiB")


def _models(name: str, route: str, anthropic: bool) -> dict[str, Any]:
    """The one model served, as the asking SDK lists models (or describes one)."""
    if route.startswith("/v1/models/") and route.removeprefix("/v1/models/") != name:
        raise GatewayError("not_found", f"the gateway serves one model, {name!r}")
    one = (dump(ModelInfo, {"type": "model", "id": name, "display_name": name,
                            "created_at": "1970-01-01T00:00:00Z", "lifecycle": "active"})
           if anthropic
           else dump(Model, {"id": name, "object": "model", "created": 0,
                             "owned_by": "tooleval"}))
    if route != "/v1/models":
        return one
    if anthropic:
        return {"data": [one], "has_more": False, "first_id": name, "last_id": name}
    return {"object": "list", "data": [one]}


async def _respond(send: Send, status: int, body: dict[str, Any],
                   headers: dict[str, str] | None = None) -> None:
    data = compact(body).encode("utf-8")
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
        *((k.encode(), v.encode()) for k, v in (headers or {}).items())]})
    await send({"type": "http.response.body", "body": data})


async def _stream(send: Send, events: list[bytes]) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [
        (b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-cache")]})
    with contextlib.suppress(OSError):  # a client that went away mid-stream
        await send({"type": "http.response.body", "body": b"".join(events)})


__all__ = ["LOOPBACK", "MAX_BODY", "ModelGateway"]
