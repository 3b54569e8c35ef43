"""The call log of a run directory, ``mcp_calls.jsonl``: every tool call an MCP session
answered, and each session's opening and closing, appended as it happens.

One JSON object a line, ``kind`` first:

* ``{"kind": "session", "event": "opened" | "closed", "session": ID, "example": LABEL,
  "at": ISO}``;
* ``{"kind": "call", "session": ID, "seq": N, "tool": NAME, "arguments": {...},
  "output": TEXT, "error": BOOL, "fault": KIND | null, "at": ISO, "ms": MS}`` -- ``seq``
  numbers a session's calls in the order they arrived, ``output`` is what the agent got back
  (the error text when ``error``), ``fault`` the injected tool fault (``--tool-faults``);
* ``{"kind": "late_call", "session": ID, "at": ISO}`` -- a request for a session that had
  ended (scored nowhere);
* ``{"kind": "foreign_call", "session": ID, "key_of": ID2, "at": ISO}`` -- a request for
  session ``ID`` that carried the key of session ``ID2`` (refused: a key opens its own
  session only; counted on ``ID2``'s example).

No line holds a key: a session's key is derived from the server's secret and never written.

Lines are written before the agent gets its answer and fsynced by a background thread
(:class:`~tooleval_agents.data.journal.JournalFile`, group mode): a crash keeps every
call. The log is a record, not the score: a run scores the calls its session kept in memory,
so a session cut off by a crash (opened, never closed) is in the log and in no result.
Secrets (the run's bearer token, keys the run knows) are masked.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tooleval_agents.data.journal import JournalFile
from tooleval_agents.redaction import known_secrets, redact
from tooleval_agents.results.records import now

CALLS = "mcp_calls.jsonl"
"""The call log's name in a run directory."""
REFUSED = ("late_call", "foreign_call")
"""The kinds of line of a request refused (each its own ``kind``)."""


class CallRecord(BaseModel):
    """One tool call a session answered."""

    session: str
    """The example session's id."""
    seq: int
    """Its position among the session's calls, in the order they arrived (from 0)."""
    tool: str
    arguments: dict[str, Any]
    """The arguments as the agent sent them."""
    output: str
    """What the agent got back: the tool's answer, or the error text."""
    error: bool = False
    """The answer was an error (MCP ``isError``)."""
    fault: str | None = None
    """The tool fault injected into this call (``--tool-faults``), if any."""
    at: str
    """When the call arrived (UTC, ISO 8601)."""
    ms: float = 0.0
    """Milliseconds to answer it."""


class CallLog:
    """Appends the log's lines (thread-safe, as its journal file); ``path`` ``None``: nothing is
    written."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._file = JournalFile(path, sync="group") if path is not None else None
        self._secrets = known_secrets()

    def write(self, line: dict[str, Any]) -> None:
        if self._file is None:
            return
        text = json.dumps(redact(line, shapes=False, names=False, secrets=self._secrets),
                          ensure_ascii=False, default=str)
        self._file.append(text)

    def call(self, record: CallRecord) -> None:
        """A call answered."""
        self.write({"kind": "call", **record.model_dump()})

    def event(self, session: str, event: str, **fields: Any) -> None:
        """A session opened or closed, a request after it ended (``late_call``) or with
        another session's key (``foreign_call``)."""
        head = {"kind": event} if event in REFUSED else {"kind": "session", "event": event}
        self.write({**head, "session": session, **fields, "at": now()})

    def close(self) -> None:
        if self._file is not None:
            self._file.close()


def read_log(path: Path) -> Iterator[dict[str, Any]]:
    """The log's lines as objects (a torn last line, cut by a crash, is skipped)."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                yield value


__all__ = ["CALLS", "REFUSED", "CallLog", "CallRecord", "read_log"]
