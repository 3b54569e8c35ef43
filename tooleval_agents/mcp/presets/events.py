"""Reading a preset's output: one JSON event a line (Claude Code's ``stream-json``, Codex's
``--json``). Total and linear: a line that is not a JSON object is counted, never a crash."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from tooleval_agents.data.jsonio import parse_json

MAX_SAFE = 2**53
"""A count above this is not a count (a JSON reader elsewhere could not hold it exactly)."""


class Counts(Protocol):
    unread: int


def events(text: str, counts: Counts) -> Iterator[dict[str, Any]]:
    """The JSON objects of ``text``, one a line; each other non-blank line adds one to
    ``counts.unread``."""
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            value = parse_json(line)
        except ValueError:
            value = None
        if isinstance(value, dict):
            yield value
        else:
            counts.unread += 1


def integer(value: Any) -> int | None:
    """A non-negative count (``None`` for anything else: a bool, a float, a negative, one
    beyond :data:`MAX_SAFE`).

    >>> integer(3), integer(True), integer(-1), integer(2**60), integer("3")
    (3, None, None, None, None)
    """
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_SAFE:
        return value
    return None


__all__ = ["MAX_SAFE", "events", "integer"]
