"""``tooleval view --serve``: the site on 127.0.0.1, written again while a run writes.

The site stays static: a thread serves its folder (:mod:`http.server`), and :meth:`LiveSite.poll`
rebuilds it when a run's files changed (their modification times, checked every few seconds
by the caller), so a reload of the page shows the examples written since. The site it writes
says it is served (``live``): while a run is going, the run list and run pages reload themselves
at the same pace and show each running run's progress (examples done of those planned).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tooleval_agents.results.dirlock import holder
from tooleval_agents.results.rundir import CONFIG
from tooleval_agents.viewer import Site, build_site

WATCHED = (CONFIG, "examples.jsonl", "summary.json")
"""The files of a run whose change means the site is stale."""


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # one line per request is noise
        pass


class LiveSite:
    """The site for ``paths`` in ``out``, served on ``127.0.0.1:port`` (0: any free port)."""

    def __init__(self, paths: Sequence[Path | str], out: Path | str, port: int = 0,
                 every: float = 3.0) -> None:
        self.paths = list(paths)
        self.out = Path(out)
        self.every = every
        self.site: Site = build_site(self.paths, self.out, live=every)
        self._seen = self._stamps()
        handler = functools.partial(_Quiet, directory=str(self.out))
        self.server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/index.html"

    def _stamps(self) -> dict[str, int]:
        stamps = {}
        for raw in self.paths:
            root = Path(raw)
            for name in WATCHED:
                for path in ([root / name] if (root / CONFIG).is_file() else root.rglob(name)):
                    if path.is_file():
                        stamps[str(path)] = path.stat().st_mtime_ns
                    if name == CONFIG:  # a run that starts, ends or is killed changes state
                        stamps[f"{path.parent}#running"] = holder(path.parent) is not None
        return stamps

    def poll(self) -> bool:
        """Rebuild the site when a run was added or changed since the last build; ``True``
        when it did."""
        now = self._stamps()
        if now == self._seen:
            return False
        self.site = build_site(self.paths, self.out, live=self.every)
        self._seen = now
        return True

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)


__all__ = ["LiveSite"]
