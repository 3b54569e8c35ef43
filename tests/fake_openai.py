"""A loopback (127.0.0.1) OpenAI-compatible chat server for tests, with scripted faults.

It implements ``POST /v1/chat/completions`` well enough for ``langchain_openai.ChatOpenAI`` and
``init_chat_model("openai:...")``: replies are chosen by looking at the request's messages
(never by arrival order, so they are right under concurrency), every reply carries ``usage``
(``prompt_tokens`` / ``completion_tokens``), and streaming requests get server-sent events.

Usage::

    with FakeOpenAI(rules=[(r"capital of France", "Paris")]) as server:
        model = ChatOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        assert model.invoke("What is the capital of France?").content == "Paris"
        assert server.usage() == (server.log[0].usage.prompt, server.log[0].usage.completion)

Faults (HTTP errors and stalls) are scripted three ways, checked in this order:

* ``server.fail_next(429, Fault(500), ...)``: the next requests answer these, in order;
* ``FaultShare(share, fault, by="counter")``: request number ``n`` (0-based) fails when
  ``floor((n + 1) * share) > floor(n * share)``, i.e. exactly ``share`` of the requests, spread
  evenly;
* ``FaultShare(share, fault, by="content")``: the requests whose prompt hashes (SHA-256) below
  ``share`` fail on their first ``attempts`` tries and then succeed, so which examples fail does
  not depend on arrival order.

A ``Fault`` with ``stall=True`` holds its answer until the test releases it
(:meth:`FakeOpenAI.release`) or the server stops, so only a client timeout ends the wait
(:meth:`FakeOpenAI.wait_stalled` waits for stalled requests to arrive); ``status=200`` with a
stall answers normally once released. Error answers carry
``retry-after-ms`` (10 ms by default) so the OpenAI client's retries are quick. Besides HTTP
errors, a fault may be a broken reply (``kind``): ``MALFORMED`` (HTTP 200, the JSON cut off),
``EMPTY_CHOICES`` (HTTP 200, ``"choices": []``) or ``RESET`` (the connection closed with a TCP
reset, no answer); ``CONTEXT_OVERFLOW`` is the 400 a server sends for a prompt longer than its
context window.

``GET /v1/models`` lists :attr:`FakeOpenAI.models` and ``GET /props`` answers
:attr:`FakeOpenAI.props` (llama.cpp's server description; 404 when ``None``).

Every request is logged (:attr:`FakeOpenAI.log`) with its messages, the reply and the usage
reported; the ``Authorization`` header is only compared, never stored. Only 127.0.0.1 is ever
bound; the port is picked by the OS.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Reply = str | dict[str, Any]
"""Answer text, or a whole assistant ``message`` object (e.g. with ``tool_calls``)."""
Responder = Callable[["ChatRequest"], "Reply | Fault"]
"""Picks the reply (or a fault) for a request."""


@dataclass(frozen=True)
class Fault:
    """A scripted failure."""

    status: int = 429
    """HTTP status (200 with ``stall`` = a normal answer, once released)."""
    stall: bool = False
    """Hold the answer until :meth:`FakeOpenAI.release` or the server stops."""
    retry_after_ms: int | None = 10
    """``retry-after-ms`` header of an error answer (``None``: no header, client backoff)."""
    message: str = "scripted failure"
    """Error message in the body."""
    kind: Literal["http", "malformed", "empty_choices", "raw", "reset"] = "http"
    """``http``: answer ``status`` with an error body (200: the normal answer); ``malformed``:
    HTTP 200 with JSON cut off mid-way; ``empty_choices``: HTTP 200, a completion whose
    ``choices`` is empty; ``raw``: HTTP 200 with ``body`` as it is; ``reset``: close the
    connection with a TCP reset, no answer."""
    body: str = ""
    """``raw`` only: the body sent."""


MALFORMED = Fault(status=200, kind="malformed")
EMPTY_CHOICES = Fault(status=200, kind="empty_choices")
RESET = Fault(status=0, kind="reset")
CONTEXT_OVERFLOW = Fault(status=400, retry_after_ms=None, message=(
    "This model's maximum context length is 8192 tokens. However, your messages resulted in "
    "9000 tokens. Please reduce the length of the messages. (context_length_exceeded)"))


@dataclass(frozen=True)
class FaultShare:
    """Fail a fixed share of the requests, deterministically (see the module docstring)."""

    share: float
    """Fraction of requests (``counter``) or of distinct prompts (``content``) that fail."""
    fault: Fault = field(default_factory=Fault)
    """What the failing requests get."""
    by: Literal["counter", "content"] = "counter"
    """Choose failing requests by arrival number or by prompt content."""
    attempts: int = 1
    """``content`` only: how many tries of a chosen prompt fail before it succeeds."""


@dataclass(frozen=True)
class Usage:
    """Token counts the server reported for one answer."""

    prompt: int
    completion: int


def count_tokens(text: str) -> int:
    """The server's token count: words and punctuation marks (at least 1)."""
    return max(1, len(re.findall(r"\w+|[^\w\s]", text)))


@dataclass
class ChatRequest:
    """One request as the server saw it (its log entry)."""

    n: int
    """Arrival number, from 0."""
    body: dict[str, Any]
    """The JSON request body (model, messages, temperature...)."""
    authorized: bool
    """Whether the bearer token matched the server's ``api_key`` (always true without one)."""
    status: int = 0
    """Status answered."""
    reply: Reply | None = None
    """What was answered (``None`` for an error)."""
    usage: Usage | None = None
    """Usage reported with a successful answer."""
    fault: Fault | None = None
    """The fault served, if any."""
    at: float = field(default_factory=time.time)
    """Arrival time (``time.time()``)."""

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def prompt(self) -> str:
        """All message texts joined by newlines (text parts of multi-part contents)."""
        return "\n".join(_text_of(m.get("content")) for m in self.messages)

    @property
    def last_user(self) -> str:
        users = [m for m in self.messages if m.get("role") == "user"]
        return _text_of(users[-1].get("content")) if users else ""


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _content_fraction(text: str) -> float:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64


class FakeOpenAI:
    """A running fake server (a context manager): see the module docstring."""

    def __init__(self, responder: Responder | None = None, *,
                 rules: Sequence[tuple[str, Reply | Callable[[str], Reply]]] = (),
                 default: Reply | None = None, api_key: str | None = None,
                 faults: Sequence[FaultShare] = (),
                 usage: Callable[[ChatRequest, str], Usage] | None = None,
                 models: Sequence[dict[str, Any]] = (),
                 props: dict[str, Any] | None = None) -> None:
        """``responder`` picks replies from the whole request; otherwise ``rules`` are
        ``(regex, reply)`` pairs searched (DOTALL) in the prompt text, a reply may be a
        callable of the prompt; ``default`` answers when none matches (else 400). With
        ``api_key``, other bearer tokens get 401. ``usage`` overrides the token counts.
        ``models`` is what ``GET /v1/models`` lists, ``props`` what llama.cpp's ``GET /props``
        answers (``None``: 404, as other servers); both may be changed while it runs (a
        restarted server)."""
        self._responder = responder
        self._rules = [(re.compile(p, re.S), r) for p, r in rules]
        self._default = default
        self._api_key = api_key
        self._shares = list(faults)
        self._usage = usage
        self._queue: deque[Fault] = deque()
        self._content_failures: dict[tuple[int, str], int] = {}
        self._lock = threading.Lock()
        self.log: list[ChatRequest] = []
        """Every request, in arrival order."""
        self.models: list[dict[str, Any]] = list(models)
        """``GET /v1/models`` entries."""
        self.props = props
        """``GET /props`` answer (``None``: 404)."""
        self.gets: list[str] = []
        """Paths of the GET requests, in arrival order."""
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._released = threading.Event()
        self._stalls = threading.Condition()
        self._stalled = 0

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> FakeOpenAI:
        server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        server.daemon_threads = True  # a stalled answer must not block shutdown
        server.block_on_close = False
        self._server = server
        # a short poll interval: shutdown() waits for it (the default is half a second)
        self._thread = threading.Thread(target=server.serve_forever, args=(0.02,),
                                        daemon=True, name="fake-openai")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._released.set()  # a held answer ends with the server
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``, the ``base_url`` for OpenAI clients."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting and inspection -------------------------------------------------------

    def release(self) -> None:
        """Let every stalled answer, held now or later, go out."""
        self._released.set()

    def wait_stalled(self, n: int = 1) -> None:
        """Wait until ``n`` requests in all have stalled (an event, not a time: a stalled
        answer is held until released, so nothing is racing it)."""
        with self._stalls:
            self._stalls.wait_for(lambda: self._stalled >= n)

    def _stall(self) -> None:
        with self._stalls:
            self._stalled += 1
            self._stalls.notify_all()
        self._released.wait()

    def fail_next(self, *faults: Fault | int) -> None:
        """Answer the next requests with these faults (a status or a Fault), in order."""
        with self._lock:
            self._queue.extend(f if isinstance(f, Fault) else Fault(status=f) for f in faults)

    def ok(self) -> list[ChatRequest]:
        """Requests answered 200."""
        with self._lock:
            return [r for r in self.log if r.status == 200]

    def statuses(self) -> list[int]:
        with self._lock:
            return [r.status for r in self.log]

    def usage(self) -> tuple[int, int]:
        """``(prompt, completion)`` tokens summed over successful answers."""
        done = [r.usage for r in self.ok() if r.usage is not None]
        return sum(u.prompt for u in done), sum(u.completion for u in done)

    # -- request handling ---------------------------------------------------------------

    def _fault_for(self, req: ChatRequest) -> Fault | None:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            for i, rule in enumerate(self._shares):
                if rule.by == "counter":
                    if int((req.n + 1) * rule.share) > int(req.n * rule.share):
                        return rule.fault
                elif _content_fraction(req.prompt) < rule.share:
                    key = (i, hashlib.sha256(req.prompt.encode()).hexdigest())
                    seen = self._content_failures.get(key, 0)
                    if seen < rule.attempts:
                        self._content_failures[key] = seen + 1
                        return rule.fault
        return None

    def _reply_for(self, req: ChatRequest) -> Reply | Fault | None:
        if self._responder is not None:
            return self._responder(req)
        prompt = req.prompt
        for pattern, reply in self._rules:
            if pattern.search(prompt):
                return reply(prompt) if callable(reply) else reply
        return self._default

    def _usage_for(self, req: ChatRequest, text: str) -> Usage:
        if self._usage is not None:
            return self._usage(req, text)
        return Usage(prompt=count_tokens(req.prompt), completion=count_tokens(text))

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the OpenAI client's pool expects
            disable_nagle_algorithm = True  # else small answers wait ~40 ms for delayed ACKs

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None,
                      ) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _error(self, status: int, message: str, headers: dict[str, str] | None = None,
                       ) -> None:
                kind = {401: "invalid_request_error", 429: "rate_limit_exceeded"}.get(
                    status, "server_error" if status >= 500 else "invalid_request_error")
                self._send(status, {"error": {"message": message, "type": kind,
                                              "param": None, "code": None}}, headers)

            def do_GET(self) -> None:
                path = self.path.split("?")[0].rstrip("/")
                with fake._lock:
                    fake.gets.append(path)
                if fake._api_key is not None and \
                        self.headers.get("Authorization", "") != f"Bearer {fake._api_key}":
                    self._error(401, "Incorrect API key provided.")
                elif path == "/v1/models":
                    self._send(200, {"object": "list", "data": fake.models})
                elif path == "/props" and fake.props is not None:
                    self._send(200, fake.props)
                else:
                    self._error(404, f"no route {self.path}")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path.split("?")[0].rstrip("/") != "/v1/chat/completions":
                    self._error(404, f"no route {self.path}")
                    return
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self._error(400, "request body is not JSON")
                    return
                token = self.headers.get("Authorization", "")
                with fake._lock:
                    req = ChatRequest(
                        n=len(fake.log), body=body,
                        authorized=fake._api_key is None or token == f"Bearer {fake._api_key}")
                    fake.log.append(req)
                # the client may give up (timeout) while an answer stalls
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._answer(req)

            def _answer(self, req: ChatRequest) -> None:
                if not req.authorized:
                    req.status = 401
                    self._error(401, "Incorrect API key provided.")
                    return
                fault = fake._fault_for(req)
                reply = fake._reply_for(req) if fault is None else None
                if isinstance(reply, Fault):
                    fault, reply = reply, None
                if fault is not None:
                    req.fault = fault
                    if fault.stall:
                        fake._stall()
                    if fault.kind != "http":
                        self._broken(req, fault)
                        return
                    if fault.status != 200:
                        req.status = fault.status
                        headers = ({"retry-after-ms": str(fault.retry_after_ms)}
                                   if fault.retry_after_ms is not None else {})
                        self._error(fault.status, fault.message, headers)
                        return
                    reply = fake._reply_for(req)
                    if isinstance(reply, Fault):
                        reply = None
                if reply is None:
                    req.status = 400
                    self._error(400, "fake server: no scripted reply for this prompt: "
                                f"{req.prompt[-200:]!r}")
                    return
                message: dict[str, Any] = (
                    {"role": "assistant", "content": reply, "refusal": None}
                    if isinstance(reply, str) else {"role": "assistant", **reply})
                text = message.get("content") or json.dumps(message.get("tool_calls") or [])
                usage = fake._usage_for(req, text)
                req.reply, req.usage, req.status = reply, usage, 200
                usage_json = {"prompt_tokens": usage.prompt,
                              "completion_tokens": usage.completion,
                              "total_tokens": usage.prompt + usage.completion}
                model = str(req.body.get("model") or "fake-model")
                if req.body.get("stream"):
                    self._stream(req, message, usage_json, model)
                    return
                self._send(200, {
                    "id": f"chatcmpl-fake-{req.n}", "object": "chat.completion",
                    "created": 1_700_000_000, "model": model, "system_fingerprint": None,
                    "choices": [{"index": 0, "message": message, "logprobs": None,
                                 "finish_reason": "tool_calls" if message.get("tool_calls")
                                 else "stop"}],
                    "usage": usage_json})

            def _broken(self, req: ChatRequest, fault: Fault) -> None:
                kind = fault.kind
                if kind == "reset":  # SO_LINGER 0: close() sends RST, not FIN
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                               struct.pack("ii", 1, 0))
                    self.close_connection = True
                    for stream in (self.rfile, self.wfile, self.connection):
                        stream.close()  # the socket closes once its files are closed too
                    self.wfile = io.BytesIO()  # what the handler flushes after us
                    return
                req.status = 200
                if kind == "raw":
                    self._send_bytes(fault.body.encode())
                    return
                if kind == "empty_choices":
                    self._send(200, {"id": f"chatcmpl-fake-{req.n}", "object": "chat.completion",
                                     "created": 1_700_000_000, "model": "fake-model",
                                     "choices": [], "usage": {"prompt_tokens": 1,
                                                              "completion_tokens": 0,
                                                              "total_tokens": 1}})
                    return
                self._send_bytes(b'{"id": "chatcmpl-fake-%d", "object": "chat.completion", '
                                 b'"choices": [{"index": 0, "message": {"role": "assistant", '
                                 b'"cont' % req.n)

            def _send_bytes(self, data: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, req: ChatRequest, message: dict[str, Any],
                        usage: dict[str, int], model: str) -> None:
                base = {"id": f"chatcmpl-fake-{req.n}", "object": "chat.completion.chunk",
                        "created": 1_700_000_000, "model": model}
                chunks = [
                    {**base, "choices": [{"index": 0, "delta": {
                        "role": "assistant", "content": message.get("content") or ""},
                        "finish_reason": None}]},
                    {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                ]
                if (req.body.get("stream_options") or {}).get("include_usage"):
                    chunks.append({**base, "choices": [], "usage": usage})
                data = b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks)
                data += b"data: [DONE]\n\n"
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


__all__ = ["CONTEXT_OVERFLOW", "EMPTY_CHOICES", "MALFORMED", "RESET", "ChatRequest", "FakeOpenAI",
           "Fault", "FaultShare", "Reply", "Responder", "Usage", "count_tokens"]
