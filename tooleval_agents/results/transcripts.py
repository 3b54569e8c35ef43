"""What the model was sent and what it answered, for every model call of an example, whatever
the strategy or agent: the transcript a viewer shows.

The model wrapper (:class:`~tooleval_agents.models.retry.RetryingChatModel`) writes each call
(its messages, the tools bound, the answer or the error; cache hits too) into the example's
:class:`~tooleval_agents.models.accounting.CallStats` (a context variable: concurrent
examples do not mix); whatever strategy or agent calls the model under test, its calls are there.

Messages and tool definitions are stored once per run directory in ``prompts.jsonl``
(:class:`PromptStore`, content-addressed: a system prompt or an API catalog shared by 800
examples is written once); an example's line holds their ids
(:class:`~tooleval_agents.results.records.ModelCall`).
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

from tooleval_agents.data.journal import JournalFile
from tooleval_agents.data.jsonio import parse_json
from tooleval_agents.redaction import redact
from tooleval_agents.results.records import ModelCall

PROMPTS = "prompts.jsonl"


def _digest(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def read_prompts(run_dir: Path | str) -> dict[str, Any]:
    """A run directory's stored messages and tool definitions by id (a torn last line, left
    by a killed run, is skipped)."""
    out: dict[str, Any] = {}
    path = Path(run_dir) / PROMPTS
    if not path.is_file():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = parse_json(line)
        except ValueError:
            continue
        if isinstance(row, dict) and "id" in row:
            out[str(row["id"])] = row.get("value")
    return out


class PromptStore:
    """A run directory's ``prompts.jsonl``: ``{"id", "value"}`` lines, each value once.

    Appended through a :class:`~tooleval_agents.data.journal.JournalFile` (a torn last line is
    cut
    before the first append; a failed write raises
    :class:`~tooleval_agents.data.journal.JournalWriteError` and ends the store); :meth:`close`
    when done."""

    def __init__(self, run_dir: Path | str, *, secrets: list[str] | None = None) -> None:
        self.path = Path(run_dir) / PROMPTS
        self.secrets = secrets
        self.file = JournalFile(self.path, sync="none")
        """The file (the runner fsyncs it before the result lines that refer to it)."""
        self._lock = threading.Lock()
        self._known: set[str] = set(read_prompts(run_dir))

    def read(self) -> dict[str, Any]:
        """Every stored value by id (:func:`read_prompts`)."""
        return read_prompts(self.path.parent)

    def put(self, value: Any) -> str:
        """Store ``value`` (secrets masked) unless stored already; its id."""
        clean = redact(value, shapes=False, names=False, secrets=self.secrets)
        key = _digest(clean)
        with self._lock:
            if key not in self._known:
                self.file.append(json.dumps({"id": key, "value": clean}, ensure_ascii=False))
                self._known.add(key)
        return key

    def close(self) -> None:
        """Close the file (a later :meth:`put` opens it again)."""
        self.file.close()

    def calls(self, recorded: list[dict[str, Any]]) -> list[ModelCall]:
        """Recorded calls (:meth:`~tooleval_agents.models.accounting.CallStats.record_call`)
        with their messages and tools stored here."""
        out = []
        for call in recorded:
            tools = call.get("tools")
            output = call.get("output")
            out.append(ModelCall(
                messages=[self.put(m) for m in call.get("messages") or []],
                tools=self.put(tools) if tools else None,
                output=redact(output, shapes=False, names=False, secrets=self.secrets)
                if output is not None else None,
                error=call.get("error"), sent_at=call.get("sent_at"),
                request=redact(call["request"], shapes=False, names=False,
                               secrets=self.secrets) if call.get("request") else None))
        return out


__all__ = [
    "PROMPTS",
    "PromptStore",
    "read_prompts",
]
