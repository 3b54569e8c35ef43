"""Why an UltraTool tool-usage answer failed: its tool calls set against the gold calls,
argument by argument (the viewer's verdict line, :meth:`UltraToolBenchmark.explain`). The
other tasks (planning, tool creation, awareness, selection) get the core's generic verdict."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tooleval_agents.verdict import (
    Call,
    Verdict,
    align_calls,
    first_difference,
    generic_verdict,
    stopped,
    tool_error,
)


def _calls(value: Any) -> list[Call] | None:
    """``[(tool, param)]`` of a list of ``{"step", "tool", "param"}`` steps; ``None`` when the
    value is not such a list (an unparsed answer is kept as its text)."""
    if not isinstance(value, list):
        return None
    out: list[Call] = []
    for step in value:
        if isinstance(step, Mapping) and isinstance(step.get("tool"), str):
            param = step.get("param")
            out.append((step["tool"], param if isinstance(param, Mapping) else {}))
    return out


def explain(result: Any) -> Verdict:
    """Tool calls, then the ``tool_usage`` score: passed at 100."""
    gold = _calls((result.reference_outputs or {}).get("reference"))
    if gold is None:
        return generic_verdict(result)
    rows = align_calls(_calls((result.outputs or {}).get("prediction")) or [], gold)
    stop = stopped(result)
    if stop:
        return Verdict(False, stop, rows)
    score = ((result.score or {}).get("scores") or {}).get("tool_usage")
    difference = first_difference(rows)
    if difference is None and score in (None, 100, 100.0):
        return Verdict(True, "passed: every tool call and value as in the gold", rows)
    reason = tool_error(result) or difference or f"tool_usage = {score:g}"
    return Verdict(False, reason, rows)


__all__ = ["explain"]
