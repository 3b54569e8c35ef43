"""A loopback HTTP server that answers the LangSmith endpoints the Python SDK calls.

No official offline LangSmith exists; tests of dataset pushes and experiment uploads point a
real :class:`langsmith.Client` at this server instead. It keeps datasets, examples, sessions
(projects), runs and feedback in memory and records every request, so a test can assert what was
sent. Unknown routes answer 404 and are recorded in :attr:`FakeLangSmith.unknown`: a test should
assert that list is empty (a new SDK calling a new route then fails loudly).

Usage::

    with FakeLangSmith() as server:
        client = server.client()
        client.create_dataset("d")
        assert server.writes() == [("POST", "/datasets")]
        assert not server.unknown

Routes are matched with or without an ``/api/v1`` prefix. ``/info`` advertises the multipart
examples endpoints (like LangSmith cloud) unless ``multipart=False``, which makes the SDK fall
back to ``/examples/bulk``. Trace compression is advertised only with ``zstd=True``; otherwise
run uploads arrive as plain multipart (and the SDK logs that compression is off).
"""

from __future__ import annotations

import json
import re
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

TENANT_ID = "00000000-0000-4000-8000-0000000000aa"
FAKE_API_KEY = "fake-key-for-tests"

Json = Any


def _now() -> str:
    return datetime.now(UTC).isoformat()


@dataclass
class Recorded:
    """One request the server received."""

    method: str
    path: str
    """Path without the query string (and without an ``/api/v1`` prefix)."""
    query: dict[str, list[str]]
    status: int = 0
    """Status the server answered."""
    headers: dict[str, str] = field(default_factory=dict)
    """Request headers, with the API key header replaced by ``<redacted>``."""
    body: bytes = b""


class _Error(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def _multipart(content_type: str, body: bytes) -> list[tuple[str, str, bytes]]:
    """``(name, content type, payload)`` of each part of a multipart/form-data body."""
    msg = BytesParser(policy=HTTP).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body)
    if not msg.is_multipart():
        raise _Error(422, "expected a multipart body")
    parts = []
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        parts.append((str(name), part.get_content_type(), bytes(payload or b"")))
    return parts


def _first(query: dict[str, list[str]], key: str) -> str | None:
    values = query.get(key)
    return values[0] if values else None


def _page(items: list[dict[str, Any]], query: dict[str, list[str]]) -> list[dict[str, Any]]:
    offset = int(_first(query, "offset") or 0)
    limit = int(_first(query, "limit") or 100)
    return items[offset:offset + limit]


class FakeLangSmith:
    """In-memory LangSmith on 127.0.0.1 (a ``ThreadingHTTPServer`` in a daemon thread)."""

    def __init__(self, *, multipart: bool = True, zstd: bool = False,
                 api_key: str = FAKE_API_KEY) -> None:
        self.multipart = multipart
        self.zstd = zstd
        """Advertise zstd-compressed run uploads (needs the ``zstandard`` package)."""
        self.api_key = api_key
        self.lock = threading.RLock()
        self.requests: list[Recorded] = []
        self.unknown: list[Recorded] = []
        """Requests no route matched (answered 404)."""
        self.datasets: dict[str, dict[str, Any]] = {}
        self.examples: dict[str, dict[str, Any]] = {}
        self.sessions: dict[str, dict[str, Any]] = {}
        self.runs: dict[str, dict[str, Any]] = {}
        self.feedback: dict[str, dict[str, Any]] = {}
        # Every tenant has a default project; the SDK reads the tenant id from GET /sessions.
        self._add_session({"name": "default"})
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._routes: list[tuple[str, re.Pattern[str], Callable[..., Json]]] = [
            (m, re.compile(f"^{p}$"), h) for m, p, h in self._route_table()]

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> FakeLangSmith:
        server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, daemon=True,
                                        name="fake-langsmith")
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeLangSmith:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def client(self, **kwargs: Any) -> Any:
        """A ``langsmith.Client`` for this server: no tracing thread, nothing sampled."""
        from langsmith import Client

        kwargs.setdefault("api_key", self.api_key)
        kwargs.setdefault("auto_batch_tracing", False)
        return Client(api_url=self.url, **kwargs)

    # ------------------------------------------------------------------ assertions
    def writes(self, since: int = 0) -> list[tuple[str, str]]:
        """``(method, path)`` of every non-GET request from request number ``since`` on."""
        with self.lock:
            return [(r.method, r.path) for r in self.requests[since:] if r.method != "GET"]

    def example_writes(self, since: int = 0) -> list[tuple[str, str]]:
        """Writes that create, change or delete examples."""
        return [(m, p) for m, p in self.writes(since) if "example" in p]

    def dataset_examples(self, name: str) -> list[dict[str, Any]]:
        """Stored examples of the dataset called ``name``."""
        with self.lock:
            ds = next(d for d in self.datasets.values() if d["name"] == name)
            return [e for e in self.examples.values() if e["dataset_id"] == ds["id"]]

    # ------------------------------------------------------------------ store helpers
    def _add_session(self, body: dict[str, Any]) -> dict[str, Any]:
        sid = str(body.get("id") or uuid.uuid4())
        session = {"id": sid, "name": body.get("name") or sid, "description":
                   body.get("description"), "extra": body.get("extra"),
                   "start_time": body.get("start_time") or _now(),
                   "end_time": body.get("end_time"), "tenant_id": TENANT_ID,
                   "reference_dataset_id": body.get("reference_dataset_id"), "run_count": 0}
        self.sessions[sid] = session
        return session

    def _dataset_view(self, ds: dict[str, Any]) -> dict[str, Any]:
        count = sum(1 for e in self.examples.values() if e["dataset_id"] == ds["id"])
        return {**ds, "example_count": count}

    def _dataset(self, dataset_id: str) -> dict[str, Any]:
        if dataset_id not in self.datasets:
            raise _Error(404, f"dataset {dataset_id} not found")
        return self.datasets[dataset_id]

    def _put_example(self, dataset_id: str, eid: str, *, inputs: Any, outputs: Any,
                     metadata: Any, split: Any = None, created_at: Any = None) -> dict[str, Any]:
        self._dataset(dataset_id)
        if eid in self.examples:
            raise _Error(409, f"example {eid} already exists")
        splits = split if isinstance(split, list) else [split or "base"]
        now = _now()
        example = {"id": eid, "dataset_id": dataset_id, "inputs": inputs or {},
                   "outputs": outputs, "metadata": {**(metadata or {}), "dataset_split": splits},
                   "created_at": created_at or now, "modified_at": now, "source_run_id": None,
                   "attachment_urls": None}
        self.examples[eid] = example
        return example

    def _patch_example(self, eid: str, body: dict[str, Any]) -> dict[str, Any]:
        if eid not in self.examples:
            raise _Error(404, f"example {eid} not found")
        example = self.examples[eid]
        for key in ("inputs", "outputs"):
            if body.get(key) is not None:
                example[key] = body[key]
        if body.get("metadata") is not None:
            # LangSmith keeps splits in metadata.dataset_split.
            splits = example["metadata"].get("dataset_split", ["base"])
            example["metadata"] = {**body["metadata"], "dataset_split": splits}
        if body.get("split") is not None:
            split = body["split"]
            example["metadata"]["dataset_split"] = split if isinstance(split, list) else [split]
        if body.get("dataset_id"):
            example["dataset_id"] = str(body["dataset_id"])
        example["modified_at"] = _now()
        return example

    def _upsert_run(self, rid: str, values: dict[str, Any]) -> None:
        run = self.runs.setdefault(rid, {"id": rid})
        run.update({k: v for k, v in values.items() if v is not None})
        sid = run.get("session_id")
        if sid is None and run.get("session_name"):
            sid = next((s["id"] for s in self.sessions.values()
                        if s["name"] == run["session_name"]), None)
            if sid is None:
                sid = self._add_session({"name": run["session_name"]})["id"]
            run["session_id"] = sid

    def _add_feedback(self, body: dict[str, Any]) -> dict[str, Any]:
        fid = str(body.get("id") or uuid.uuid4())
        now = _now()
        fb = {"created_at": now, "modified_at": now, "run_id": None, "trace_id": None,
              **body, "id": fid}
        self.feedback[fid] = fb
        return fb

    # ------------------------------------------------------------------ routes
    def _route_table(self) -> list[tuple[str, str, Callable[..., Json]]]:
        u = "[0-9a-fA-F-]{36}"
        return [
            ("GET", "/info", self.get_info),
            ("GET", "/datasets", self.list_datasets),
            ("POST", "/datasets", self.create_dataset),
            ("GET", f"/datasets/(?P<id>{u})", self.read_dataset),
            ("PATCH", f"/datasets/(?P<id>{u})", self.update_dataset),
            ("DELETE", f"/datasets/(?P<id>{u})", self.delete_dataset),
            ("GET", "/examples", self.list_examples),
            ("POST", "/examples", self.create_example),
            ("POST", "/examples/bulk", self.create_examples_bulk),
            ("PATCH", "/examples/bulk", self.update_examples_bulk),
            ("DELETE", "/examples", self.delete_examples),
            ("GET", f"/examples/(?P<id>{u})", self.read_example),
            ("PATCH", f"/examples/(?P<id>{u})", self.update_example),
            ("DELETE", f"/examples/(?P<id>{u})", self.delete_example),
            ("POST", f"/(?:v1/)?platform/datasets/(?P<id>{u})/examples",
             self.create_examples_multipart),
            ("PATCH", f"/(?:v1/)?platform/datasets/(?P<id>{u})/examples",
             self.update_examples_multipart),
            ("GET", "/sessions", self.list_sessions),
            ("POST", "/sessions", self.create_session),
            ("GET", f"/sessions/(?P<id>{u})", self.read_session),
            ("PATCH", f"/sessions/(?P<id>{u})", self.update_session),
            ("DELETE", f"/sessions/(?P<id>{u})", self.delete_session),
            ("POST", "/runs", self.create_run),
            ("POST", "/runs/batch", self.batch_runs),
            ("POST", "/runs/multipart", self.multipart_runs),
            ("GET", f"/runs/(?P<id>{u})", self.read_run),
            ("PATCH", f"/runs/(?P<id>{u})", self.update_run),
            ("GET", "/feedback", self.list_feedback),
            ("POST", "/feedback", self.create_feedback),
            ("GET", f"/feedback/(?P<id>{u})", self.read_feedback),
            ("PATCH", f"/feedback/(?P<id>{u})", self.update_feedback),
        ]

    def get_info(self, req: Recorded, body: Json, **_: str) -> Json:
        flags = ({"dataset_examples_multipart_enabled": True, "examples_multipart_enabled": True}
                 if self.multipart else {})
        flags["zstd_compression_enabled"] = self.zstd
        return {"version": "0.10.0", "license_expiration_time": None,
                "batch_ingest_config": {"use_multipart_endpoint": True, "size_limit": 100,
                                        "size_limit_bytes": 20_971_520,
                                        "scale_up_qsize_trigger": 1000,
                                        "scale_up_nthreads_limit": 16,
                                        "scale_down_nempty_trigger": 4},
                "instance_flags": flags}

    # datasets
    def list_datasets(self, req: Recorded, body: Json, **_: str) -> Json:
        items = list(self.datasets.values())
        if (name := _first(req.query, "name")) is not None:
            items = [d for d in items if d["name"] == name]
        if (part := _first(req.query, "name_contains")) is not None:
            items = [d for d in items if part in d["name"]]
        if ids := req.query.get("id"):
            items = [d for d in items if d["id"] in ids]
        return [self._dataset_view(d) for d in _page(items, req.query)]

    def create_dataset(self, req: Recorded, body: Json, **_: str) -> Json:
        if any(d["name"] == body["name"] for d in self.datasets.values()):
            raise _Error(409, f"dataset {body['name']} already exists")
        now = _now()
        ds = {"id": str(body.get("id") or uuid.uuid4()), "name": body["name"],
              "description": body.get("description"), "data_type": body.get("data_type", "kv"),
              "created_at": now, "modified_at": now, "tenant_id": TENANT_ID,
              "inputs_schema_definition": body.get("inputs_schema_definition"),
              "outputs_schema_definition": body.get("outputs_schema_definition"),
              "transformations": body.get("transformations"),
              "metadata": (body.get("extra") or {}).get("metadata"), "session_count": 0,
              "last_session_start_time": None}
        self.datasets[ds["id"]] = ds
        return self._dataset_view(ds)

    def read_dataset(self, req: Recorded, body: Json, id: str) -> Json:
        return self._dataset_view(self._dataset(id))

    def update_dataset(self, req: Recorded, body: Json, id: str) -> Json:
        ds = self._dataset(id)
        for key in ("name", "description", "metadata", "inputs_schema_definition",
                    "outputs_schema_definition", "transformations"):
            if key in body:
                ds[key] = body[key]
        ds["modified_at"] = _now()
        return self._dataset_view(ds)

    def delete_dataset(self, req: Recorded, body: Json, id: str) -> Json:
        self._dataset(id)
        del self.datasets[id]
        for eid in [e["id"] for e in self.examples.values() if e["dataset_id"] == id]:
            del self.examples[eid]
        return {}

    # examples
    def list_examples(self, req: Recorded, body: Json, **_: str) -> Json:
        items = list(self.examples.values())
        if (ds := _first(req.query, "dataset")) is not None:
            items = [e for e in items if e["dataset_id"] == ds]
        if ids := req.query.get("id"):
            items = [e for e in items if e["id"] in ids]
        if (meta := _first(req.query, "metadata")) is not None:
            want = json.loads(meta)
            items = [e for e in items
                     if all(e["metadata"].get(k) == v for k, v in want.items())]
        if splits := req.query.get("splits"):
            items = [e for e in items
                     if set(splits) & set(e["metadata"].get("dataset_split", []))]
        items.sort(key=lambda e: (e["created_at"], e["id"]))
        return _page(items, req.query)

    def read_example(self, req: Recorded, body: Json, id: str) -> Json:
        if id not in self.examples:
            raise _Error(404, f"example {id} not found")
        return self.examples[id]

    def create_example(self, req: Recorded, body: Json, **_: str) -> Json:
        return self._put_example(str(body["dataset_id"]), str(body.get("id") or uuid.uuid4()),
                                 inputs=body.get("inputs"), outputs=body.get("outputs"),
                                 metadata=body.get("metadata"), split=body.get("split"),
                                 created_at=body.get("created_at"))

    def create_examples_bulk(self, req: Recorded, body: Json, **_: str) -> Json:
        return [self.create_example(req, item) for item in body]

    def update_examples_bulk(self, req: Recorded, body: Json, **_: str) -> Json:
        for item in body:
            self._patch_example(str(item["id"]), item)
        return {"message": f"{len(body)} examples updated", "count": len(body)}

    def update_example(self, req: Recorded, body: Json, id: str) -> Json:
        self._patch_example(id, body)
        return {"message": "Example updated successfully"}

    def delete_example(self, req: Recorded, body: Json, id: str) -> Json:
        if self.examples.pop(id, None) is None:
            raise _Error(404, f"example {id} not found")
        return {}

    def delete_examples(self, req: Recorded, body: Json, **_: str) -> Json:
        for eid in req.query.get("example_ids", []):
            self.examples.pop(eid, None)
        return {}

    def _multipart_examples(self, req: Recorded) -> dict[str, dict[str, Any]]:
        content_type = req.headers.get("content-type", "")
        grouped: dict[str, dict[str, Any]] = {}
        for name, _ctype, payload in _multipart(content_type, req.body):
            eid, _, suffix = name.partition(".")
            entry = grouped.setdefault(eid, {})
            if suffix.startswith("attachment"):
                entry.setdefault("attachments", {})[suffix] = payload
            else:
                entry[suffix or "body"] = json.loads(payload)
        return grouped

    def create_examples_multipart(self, req: Recorded, body: Json, id: str) -> Json:
        grouped = self._multipart_examples(req)
        for eid, parts in grouped.items():
            main = parts.get("body", {})
            self._put_example(id, eid, inputs=parts.get("inputs"), outputs=parts.get("outputs"),
                              metadata=main.get("metadata"), split=main.get("split"),
                              created_at=main.get("created_at"))
        return {"count": len(grouped), "example_ids": list(grouped), "as_of": _now()}

    def update_examples_multipart(self, req: Recorded, body: Json, id: str) -> Json:
        grouped = self._multipart_examples(req)
        for eid, parts in grouped.items():
            self._patch_example(eid, {**parts.get("body", {}), "inputs": parts.get("inputs"),
                                      "outputs": parts.get("outputs")})
        return {"count": len(grouped), "example_ids": list(grouped), "as_of": _now()}

    # sessions (projects, experiments)
    def list_sessions(self, req: Recorded, body: Json, **_: str) -> Json:
        items = list(self.sessions.values())
        if names := req.query.get("name"):
            items = [s for s in items if s["name"] in names]
        if (part := _first(req.query, "name_contains")) is not None:
            items = [s for s in items if part in s["name"]]
        if ids := req.query.get("id"):
            items = [s for s in items if s["id"] in ids]
        if refs := req.query.get("reference_dataset"):
            items = [s for s in items if str(s.get("reference_dataset_id")) in refs]
        return _page(items, req.query)

    def create_session(self, req: Recorded, body: Json, **_: str) -> Json:
        existing = next((s for s in self.sessions.values() if s["name"] == body.get("name")),
                        None)
        if existing is not None:
            if _first(req.query, "upsert") in ("true", "True"):
                return existing
            raise _Error(409, f"session {body.get('name')} already exists")
        return self._add_session(body)

    def read_session(self, req: Recorded, body: Json, id: str) -> Json:
        if id not in self.sessions:
            raise _Error(404, f"session {id} not found")
        session = self.sessions[id]
        return {**session, "run_count": sum(1 for r in self.runs.values()
                                            if r.get("session_id") == id)}

    def update_session(self, req: Recorded, body: Json, id: str) -> Json:
        session = self.read_session(req, body, id)
        self.sessions[id].update({k: v for k, v in body.items() if v is not None})
        return {**session, **self.sessions[id]}

    def delete_session(self, req: Recorded, body: Json, id: str) -> Json:
        self.read_session(req, body, id)
        del self.sessions[id]
        return {}

    # runs
    def create_run(self, req: Recorded, body: Json, **_: str) -> Json:
        self._upsert_run(str(body["id"]), body)
        return {}

    def update_run(self, req: Recorded, body: Json, id: str) -> Json:
        self._upsert_run(id, body)
        return {}

    def read_run(self, req: Recorded, body: Json, id: str) -> Json:
        if id not in self.runs:
            raise _Error(404, f"run {id} not found")
        return self.runs[id]

    def batch_runs(self, req: Recorded, body: Json, **_: str) -> Json:
        for key in ("post", "patch"):
            for run in body.get(key) or []:
                self._upsert_run(str(run["id"]), run)
        return {}

    def multipart_runs(self, req: Recorded, body: Json, **_: str) -> Json:
        data = req.body
        encoding = req.headers.get("content-encoding")
        if encoding == "zstd":
            import zstandard

            data = zstandard.ZstdDecompressor().decompressobj().decompress(data)
        elif encoding:
            raise _Error(415, f"content encoding {encoding} is not supported")
        for name, _ctype, payload in _multipart(req.headers.get("content-type", ""), data):
            kind, _dot, rest = name.partition(".")
            if kind == "attachment":
                rid, _dot, att = rest.partition(".")
                self.runs.setdefault(rid, {"id": rid}).setdefault("attachments", {})[att] = payload
                continue
            value = json.loads(payload)
            if kind == "feedback":
                self._add_feedback(value)
                continue
            rid, _dot, sub = rest.partition(".")
            self._upsert_run(rid, {sub: value} if sub else value)
        return {}

    # feedback
    def create_feedback(self, req: Recorded, body: Json, **_: str) -> Json:
        return self._add_feedback(body)

    def list_feedback(self, req: Recorded, body: Json, **_: str) -> Json:
        items = list(self.feedback.values())
        if runs := req.query.get("run"):
            items = [f for f in items if str(f.get("run_id")) in runs]
        if keys := req.query.get("key"):
            items = [f for f in items if f.get("key") in keys]
        if sessions := req.query.get("session"):
            items = [f for f in items if str(f.get("session_id")) in sessions]
        return _page(items, req.query)

    def read_feedback(self, req: Recorded, body: Json, id: str) -> Json:
        if id not in self.feedback:
            raise _Error(404, f"feedback {id} not found")
        return self.feedback[id]

    def update_feedback(self, req: Recorded, body: Json, id: str) -> Json:
        fb = self.read_feedback(req, body, id)
        fb.update(body)
        return fb

    # ------------------------------------------------------------------ HTTP
    def _dispatch(self, req: Recorded) -> tuple[int, Json]:
        path = req.path
        for method, pattern, handler in self._routes:
            match = pattern.match(path)
            if method == req.method and match:
                body: Json = None
                if req.body and "json" in req.headers.get("content-type", "application/json"):
                    body = json.loads(req.body)
                with self.lock:
                    try:
                        return 200, handler(req, body, **match.groupdict())
                    except _Error as exc:
                        return exc.status, {"detail": exc.detail}
        with self.lock:
            self.unknown.append(req)
        return 404, {"detail": f"fake LangSmith has no route {req.method} {path}"}

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # else ~40 ms per request (delayed ACK)

            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                pass

            def _read_body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    chunks = []
                    while True:
                        size = int(self.rfile.readline().strip().split(b";")[0], 16)
                        if size == 0:
                            self.rfile.readline()
                            break
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline()
                    return b"".join(chunks)
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _handle(self) -> None:
                split = urlsplit(self.path)
                path = re.sub(r"^/api/v1(?=/)", "", split.path.rstrip("/") or "/")
                headers = {k.lower(): ("<redacted>" if k.lower() == "x-api-key" else v)
                           for k, v in self.headers.items()}
                req = Recorded(self.command, path, parse_qs(split.query, keep_blank_values=True),
                               headers=headers, body=self._read_body())
                with fake.lock:
                    fake.requests.append(req)
                if self.headers.get("x-api-key") != fake.api_key:
                    status, payload = 401, {"detail": "invalid API key"}
                else:
                    status, payload = fake._dispatch(req)
                req.status = status
                data = json.dumps(payload, default=str).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _handle

        return Handler


# ----------------------------------------------------------------------------- network guard

@contextmanager
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Refuse (and record) every outgoing connection that is not to 127.0.0.1 / ::1, and make
    sure proxies and LangSmith tracing are off. Yields the list of refused addresses."""
    refused: list[Any] = []
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def _allowed(address: Any) -> bool:
        if isinstance(address, tuple):
            return str(address[0]) in ("127.0.0.1", "::1", "localhost")
        return True  # AF_UNIX paths stay local

    def connect(sock: socket.socket, address: Any) -> None:
        if not _allowed(address):
            refused.append(address)
            raise ConnectionRefusedError(f"test network guard: {address!r} is not loopback")
        real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> int:
        if not _allowed(address):
            refused.append(address)
            return 111
        return real_connect_ex(sock, address)

    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    for var in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING",
                "LANGSMITH_TRACING_V2"):
        monkeypatch.setenv(var, "false")
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    yield refused


@contextmanager
def openai_on_loopback(monkeypatch: pytest.MonkeyPatch, api_key: str,
                       *unset: str) -> Iterator[None]:
    """An OpenAI client that can only reach this machine: no base URL, organisation, project
    or proxy from the environment (nor the variables ``unset``), a fake ``api_key``, and every
    connection elsewhere refused -- and a failure if one was tried."""
    for var in ("OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_PROXY", *unset):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", api_key)
    with loopback_only(monkeypatch) as refused:
        yield
    assert refused == [], f"tried to reach {refused}"
