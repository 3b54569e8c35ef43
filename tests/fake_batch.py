"""A loopback (127.0.0.1) server of OpenAI's Batch API for tests: files, batches, their results.

It implements what the ``openai`` SDK's ``files`` and ``batches`` resources call --
``POST /v1/files`` (multipart upload), ``GET /v1/files/{id}/content``, ``POST /v1/batches``,
``GET /v1/batches/{id}``, ``GET /v1/batches`` and ``POST /v1/batches/{id}/cancel`` -- and
``POST /v1/chat/completions`` for calls sent one by one. A batch's requests are answered by
``responder(body)`` (a reply text or message dict, e.g. ``reference_server.answer``) when the
batch is *released*: at once (``hold=False``), or when the test calls :meth:`release`. How it
ends is scripted per batch by ``mode``:

* ``complete``: every request answered, in the output file;
* ``half_fail``: every second request fails (a 500 error line in the error file);
* ``expire``: the first half answered, the rest ``batch_expired`` in the error file, the batch
  ``expired``;
* ``fail``: the batch is refused as a whole (``failed``, validation errors, no files).

:attr:`created` counts the batches created (a resumed run must not add one); every call is in
:attr:`log`. Only 127.0.0.1 is bound; the port is picked by the OS.
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Mode = Literal["complete", "half_fail", "expire", "fail"]


@dataclass
class FakeBatch:
    id: str
    input_file_id: str
    mode: Mode
    metadata: dict[str, Any]
    status: str = "validating"
    output_file_id: str | None = None
    error_file_id: str | None = None
    created_at: int = field(default_factory=lambda: int(time.time()))

    def json(self, counts: dict[str, int]) -> dict[str, Any]:
        return {"id": self.id, "object": "batch", "endpoint": "/v1/chat/completions",
                "errors": ({"object": "list", "data": [{"code": "invalid_request",
                                                        "message": "scripted refusal"}]}
                           if self.status == "failed" else None),
                "input_file_id": self.input_file_id, "completion_window": "24h",
                "status": self.status, "output_file_id": self.output_file_id,
                "error_file_id": self.error_file_id, "created_at": self.created_at,
                "in_progress_at": None, "expires_at": self.created_at + 86400,
                "finalizing_at": None, "completed_at": None, "failed_at": None,
                "expired_at": None, "cancelling_at": None, "cancelled_at": None,
                "request_counts": counts, "metadata": self.metadata}


def _usage(body: dict[str, Any], text: str) -> dict[str, int]:
    prompt = sum(len(str(m.get("content") or "").split()) for m in body.get("messages") or [])
    return {"prompt_tokens": max(1, prompt), "completion_tokens": max(1, len(text.split())),
            "total_tokens": max(1, prompt) + max(1, len(text.split()))}


def completion(body: dict[str, Any], reply: str | dict[str, Any], n: int) -> dict[str, Any]:
    """A chat completion answering ``body`` with ``reply``."""
    message = ({"role": "assistant", "content": reply} if isinstance(reply, str)
               else {"role": "assistant", **reply})
    text = message.get("content") or json.dumps(message.get("tool_calls") or [])
    return {"id": f"chatcmpl-batch-{n}", "object": "chat.completion", "created": 1_700_000_000,
            "model": str(body.get("model") or "fake"),
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
            "usage": _usage(body, text)}


class FakeBatchAPI:
    """A running fake Batch API (a context manager): see the module docstring."""

    def __init__(self, responder: Callable[[dict[str, Any]], str | dict[str, Any]], *,
                 mode: Mode = "complete", hold: bool = False) -> None:
        self.responder = responder
        self.mode: Mode = mode
        """How the batches created from now on end."""
        self.hold = hold
        """Batches stay ``in_progress`` until :meth:`release` (else they end when polled)."""
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, FakeBatch] = {}
        self.log: list[tuple[str, str]] = []
        """``(method, path)`` of every request."""
        self.direct = 0
        """Chat completions sent one by one (not in a batch)."""
        self._ids = itertools.count()
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._server: ThreadingHTTPServer | None = None

    @property
    def created(self) -> int:
        with self._lock:
            return len(self.batches)

    @property
    def requests_in_batches(self) -> int:
        """Requests of every batch created (one sent twice counts twice)."""
        with self._lock:
            return sum(len(self.files[b.input_file_id].splitlines())
                       for b in self.batches.values())

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def release(self) -> None:
        """Let held batches end (they end at their next status check)."""
        self._released.set()

    def __enter__(self) -> FakeBatchAPI:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    # -- the API -----------------------------------------------------------------------

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids)}"

    def _upload(self, content_type: str, raw: bytes) -> dict[str, Any]:
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
        data = b""
        for part in message.iter_parts():
            if part.get_param("name", header="content-disposition") == "file":
                data = part.get_payload(decode=True) or b""
        with self._lock:
            fid = self._new_id("file")
            self.files[fid] = data
        return {"id": fid, "object": "file", "bytes": len(data), "created_at": 0,
                "filename": "batch.jsonl", "purpose": "batch", "status": "processed"}

    def _counts(self, batch: FakeBatch) -> dict[str, int]:
        total = len(self.files.get(batch.input_file_id, b"").splitlines())
        return {"total": total, "completed": 0, "failed": 0}

    def _finish(self, batch: FakeBatch) -> None:
        """Answer a released batch's requests as its mode says."""
        if batch.mode == "fail":
            batch.status = "failed"
            return
        lines = [json.loads(x) for x in self.files[batch.input_file_id].splitlines() if x.strip()]
        out, errors = [], []
        for i, line in enumerate(lines):
            cid, body = line["custom_id"], line["body"]
            if batch.mode == "half_fail" and i % 2 == 1:
                errors.append({"id": f"req-{i}", "custom_id": cid, "response": {
                    "status_code": 500, "request_id": f"r{i}",
                    "body": {"error": {"message": "scripted failure", "type": "server_error",
                                       "param": None, "code": None}}}, "error": None})
            elif batch.mode == "expire" and i >= len(lines) // 2:
                errors.append({"id": f"req-{i}", "custom_id": cid, "response": None, "error": {
                    "code": "batch_expired",
                    "message": "This request could not be executed before the completion "
                               "window expired."}})
            else:
                try:
                    reply = self.responder(body)
                except Exception as exc:  # the request is refused, as a provider would
                    errors.append({"id": f"req-{i}", "custom_id": cid, "response": {
                        "status_code": 400, "request_id": f"r{i}", "body": {"error": {
                            "message": str(exc)[:300], "type": "invalid_request_error",
                            "param": None, "code": None}}}, "error": None})
                    continue
                out.append({"id": f"req-{i}", "custom_id": cid, "response": {
                    "status_code": 200, "request_id": f"r{i}",
                    "body": completion(body, reply, i)}, "error": None})
        for rows, attr in ((out, "output_file_id"), (errors, "error_file_id")):
            if rows:
                fid = self._new_id("file")
                self.files[fid] = "".join(json.dumps(r) + "\n" for r in rows).encode()
                setattr(batch, attr, fid)
        batch.status = "expired" if batch.mode == "expire" else "completed"

    def _status(self, bid: str) -> dict[str, Any] | None:
        with self._lock:
            batch = self.batches.get(bid)
            if batch is None:
                return None
            if batch.status in ("validating", "in_progress"):
                if self.hold and not self._released.is_set():
                    batch.status = "in_progress"
                else:
                    self._finish(batch)
            return batch.json(self._counts(batch))

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, payload: Any, raw: bytes | None = None) -> None:
                data = raw if raw is not None else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/octet-stream" if raw is not None
                                 else "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _missing(self) -> None:
                self._send(404, {"error": {"message": f"no {self.path}", "type": "not_found"}})

            def do_GET(self) -> None:
                path = self.path.split("?")[0].rstrip("/")
                api.log.append(("GET", path))
                parts = path.split("/")
                if path.startswith("/v1/files/") and path.endswith("/content"):
                    data = api.files.get(parts[3])
                    self._send(200, None, data) if data is not None else self._missing()
                elif path == "/v1/batches":
                    with api._lock:
                        rows = [b.json(api._counts(b)) for b in api.batches.values()]
                    self._send(200, {"object": "list", "data": rows[::-1], "has_more": False,
                                     "first_id": None, "last_id": None})
                elif path.startswith("/v1/batches/"):
                    found = api._status(parts[3])
                    self._send(200, found) if found is not None else self._missing()
                else:
                    self._missing()

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                path = self.path.split("?")[0].rstrip("/")
                api.log.append(("POST", path))
                if path == "/v1/files":
                    self._send(200, api._upload(self.headers.get("Content-Type", ""), raw))
                elif path == "/v1/batches":
                    body = json.loads(raw)
                    with api._lock:
                        batch = FakeBatch(api._new_id("batch"), body["input_file_id"],
                                          api.mode, body.get("metadata") or {})
                        api.batches[batch.id] = batch
                    self._send(200, batch.json(api._counts(batch)))
                elif path.startswith("/v1/batches/") and path.endswith("/cancel"):
                    with api._lock:
                        batch = api.batches[path.split("/")[3]]
                        batch.status = "cancelled"
                    self._send(200, batch.json(api._counts(batch)))
                elif path == "/v1/chat/completions":
                    body = json.loads(raw)
                    with api._lock:
                        api.direct += 1
                    self._send(200, completion(body, api.responder(body), api.direct))
                else:
                    self._missing()

        return Handler


__all__ = ["FakeBatch", "FakeBatchAPI", "completion"]
