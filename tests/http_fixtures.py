"""A loopback (127.0.0.1) static-file HTTP server for tests, with scripted faults.

Usage::

    with serve_directory(shared_data) as server:
        server.fail("/sgd/LICENSE.txt", 503)          # next request answers 503, then the file
        server.replace("/sgd/test/schema.json", b"x")  # always serve these bytes instead
        fetch("sgd", tmp_path, base_url=server.url, progress=False)
        assert server.count("/sgd/") == 8

Only 127.0.0.1 is ever bound; the port is picked by the OS.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Fault:
    """One scripted answer served instead of the file."""

    status: int = 503
    """HTTP status to answer with."""
    body: bytes = b""
    """Response body."""
    drop: bool = False
    """Close the connection without answering (the client sees a reset / protocol error)."""


@dataclass
class StaticServer:
    """A running server: its URL, the requests it saw, and the faults still to serve."""

    root: Path
    """Directory served; URL path ``/a/b`` maps to ``root/a/b``."""
    url: str = ""
    """``http://127.0.0.1:<port>`` (no trailing slash)."""
    requests: list[str] = field(default_factory=list)
    """URL paths of every GET/HEAD, in arrival order."""
    _faults: dict[str, deque[Fault]] = field(default_factory=dict)
    _bodies: dict[str, bytes] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def fail(self, url_path: str, *faults: Fault | int) -> None:
        """Answer the next requests of ``url_path`` with ``faults`` (a status or a Fault),
        in order, before serving the file again."""
        with self._lock:
            queue = self._faults.setdefault(url_path, deque())
            queue.extend(f if isinstance(f, Fault) else Fault(status=f) for f in faults)

    def replace(self, url_path: str, body: bytes) -> None:
        """Serve ``body`` (status 200) for ``url_path`` from now on."""
        with self._lock:
            self._bodies[url_path] = body

    def count(self, prefix: str = "/") -> int:
        """Requests whose path starts with ``prefix``."""
        with self._lock:
            return sum(p.startswith(prefix) for p in self.requests)

    def _next_answer(self, url_path: str) -> Fault | bytes | None:
        with self._lock:
            self.requests.append(url_path)
            queue = self._faults.get(url_path)
            if queue:
                return queue.popleft()
            return self._bodies.get(url_path)


class _Handler(SimpleHTTPRequestHandler):
    state: StaticServer

    def __init__(self, *args: Any, state: StaticServer, **kwargs: Any) -> None:
        self.state = state
        super().__init__(*args, **kwargs)

    def do_GET(self) -> None:
        if self._scripted(send_body=True):
            return
        super().do_GET()

    def do_HEAD(self) -> None:
        if self._scripted(send_body=False):
            return
        super().do_HEAD()

    def _scripted(self, *, send_body: bool) -> bool:
        answer = self.state._next_answer(self.path.split("?", 1)[0])
        if answer is None:
            return False
        if isinstance(answer, Fault) and answer.drop:
            self.close_connection = True
            return True
        status, body = (answer.status, answer.body) if isinstance(answer, Fault) else (200, answer)
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if send_body:
            self.wfile.write(body)
        return True

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass


@contextmanager
def serve_directory(root: Path) -> Iterator[StaticServer]:
    """Serve ``root`` on 127.0.0.1 (free port) in a background thread for the block."""
    state = StaticServer(root=Path(root))
    handler = partial(_Handler, state=state, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
