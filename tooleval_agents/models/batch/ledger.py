"""A run's record of the provider batches it sent: ``batches.jsonl`` in the run directory.

Each line is one event, appended (and fsynced) before the step it records is trusted:

* ``prepared``: the requests of a batch were uploaded (the input file's id and, per request,
  its ``custom_id`` and the digest of its body), about to be submitted;
* ``submitted``: the provider accepted the batch (its id);
* ``ended``: the batch reached a final status (``completed``, ``failed``, ``expired``,
  ``cancelled``), with its output and error files and the requests that failed, each with its
  error kind.

A resumed run asks for the same requests again (the same prompts give the same bodies): a
request already in a batch of the ledger is answered from that batch -- polled while it runs,
read from its output file once it ended -- instead of being sent again, so nothing is
submitted or paid for twice. A request that failed or expired in its batch is sent anew. A
batch prepared but never recorded as submitted (a process killed in between) is looked up by
its input file before anything is sent again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooleval_agents.data.journal import JournalFile, repair_torn_tail
from tooleval_agents.data.jsonio import parse_json

BATCHES = "batches.jsonl"
"""The ledger's file name in a run directory."""


def body_digest(body: dict[str, Any]) -> str:
    """The digest of a request body (canonical JSON)."""
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@dataclass
class BatchRecord:
    """What the ledger knows of one batch."""

    file: str
    """The input file's id."""
    provider: str
    requests: dict[str, str] = field(default_factory=dict)
    """``custom_id`` -> digest of the request body."""
    batch: str | None = None
    """The provider's batch id (``None``: prepared, not known to be submitted)."""
    status: str | None = None
    """The final status once ended."""
    failed: dict[str, str] = field(default_factory=dict)
    """``custom_id`` -> error kind of the requests that came back failed or expired."""
    output_file: str | None = None
    error_file: str | None = None


class BatchLedger:
    """The ledger of one run directory (thread-safe; see the module docstring)."""

    def __init__(self, run_dir: Path | str) -> None:
        self.path = Path(run_dir) / BATCHES
        self._lock = threading.Lock()
        self.records: dict[str, BatchRecord] = {}
        """By input file id, in the order they were prepared."""
        self._claimed: set[str] = set()
        self._counts: dict[str, int] = {}
        if self.path.is_file():
            repair_torn_tail(self.path)
            for line in self.path.read_text(encoding="utf-8").splitlines():
                self._replay(line)
        self._file = JournalFile(self.path, sync="each")

    def _replay(self, line: str) -> None:
        try:
            event = parse_json(line)
        except ValueError:
            return
        if not isinstance(event, dict):
            return
        kind, file = event.get("event"), str(event.get("file", ""))
        if kind == "prepared":
            requests = {str(k): str(v) for k, v in (event.get("requests") or {}).items()}
            self.records[file] = BatchRecord(file, str(event.get("provider", "")), requests)
            for digest in requests.values():
                self._counts[digest] = self._counts.get(digest, 0) + 1
        elif file in self.records and kind == "submitted":
            self.records[file].batch = str(event.get("batch"))
        elif file in self.records and kind == "ended":
            record = self.records[file]
            record.batch = str(event.get("batch") or record.batch)
            record.status = str(event.get("status"))
            record.failed = {str(k): str(v) for k, v in (event.get("failed") or {}).items()}
            record.output_file = event.get("output_file")
            record.error_file = event.get("error_file")

    def _append(self, event: dict[str, Any]) -> None:
        line = json.dumps({**event, "at": round(time.time(), 3)}, ensure_ascii=False)
        self._file.append(line)
        self._replay(line)

    def claim(self, digest: str, provider: str) -> tuple[BatchRecord, str] | None:
        """An earlier batch's request with this body, not claimed yet in this session and not
        failed there: its record and ``custom_id`` (now claimed), or ``None``."""
        with self._lock:
            for record in self.records.values():
                if record.provider != provider:
                    continue
                for cid, known in record.requests.items():
                    if known == digest and cid not in self._claimed and \
                            cid not in record.failed:
                        self._claimed.add(cid)
                        return record, cid
        return None

    def release(self, custom_id: str) -> None:
        """Let a later call with the same body claim ``custom_id`` again (its call failed
        before it heard the batch's answer)."""
        with self._lock:
            self._claimed.discard(custom_id)

    def new_id(self, digest: str) -> str:
        """A ``custom_id`` for a new request with this body (unique in the ledger)."""
        with self._lock:
            n = self._counts.get(digest, 0)
            self._counts[digest] = n + 1
            cid = f"{digest}-{n}"
            self._claimed.add(cid)
            return cid

    def prepared(self, file: str, provider: str, requests: dict[str, str]) -> None:
        with self._lock:
            self._append({"event": "prepared", "file": file, "provider": provider,
                          "requests": requests})

    def submitted(self, file: str, batch: str) -> None:
        with self._lock:
            self._append({"event": "submitted", "file": file, "batch": batch})

    def ended(self, file: str, batch: str, status: str, failed: dict[str, str],
              output_file: str | None, error_file: str | None) -> None:
        with self._lock:
            self._append({"event": "ended", "file": file, "batch": batch, "status": status,
                          "failed": failed, "output_file": output_file,
                          "error_file": error_file})

    def close(self) -> None:
        self._file.close()


@contextlib.asynccontextmanager
async def open_batches(queues: Sequence[Any], run_dir: Path, label: str) -> AsyncIterator[None]:
    """The run's batch queues (:class:`~tooleval_agents.models.batch.queue.BatchQueue`)
    recording into ``run_dir``'s ledger while the run goes; on the way out they stop waiting
    (what was sent stays in the ledger for a resume). Nothing without queues."""
    if not queues:
        yield
        return
    ledger = BatchLedger(run_dir)
    for queue in queues:
        queue.open(ledger, label)
    try:
        yield
    finally:
        try:
            for queue in queues:
                await queue.aclose()
        finally:
            ledger.close()


__all__ = ["BATCHES", "BatchLedger", "BatchRecord", "body_digest", "open_batches"]
