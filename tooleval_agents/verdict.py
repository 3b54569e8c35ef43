"""Why an example passed or failed, in one line, and its predicted calls set against the gold.

The viewer puts this at the top of an example's page. A benchmark that knows its answers
(AppBench call lines, UltraTool tool calls) explains them through
:meth:`~tooleval_agents.registry.Benchmark.explain`; :func:`generic_verdict` is the fallback,
read from what every result stores (status, parse error, scores, tool calls).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

Call = tuple[str, Mapping[str, Any]]
"""One call: its name and its arguments."""


@dataclass(frozen=True)
class Verdict:
    """``passed``; ``reason``: the first thing wrong, in words; ``rows``: predicted vs gold,
    call by call (see :func:`align_calls`)."""

    passed: bool
    reason: str
    rows: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _text(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _args(pred: Mapping[str, Any], gold: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    for name in [*gold, *(k for k in pred if k not in gold)]:
        if name not in pred:
            mark = "missing"
        elif name not in gold:
            mark = "extra"
        else:
            same = str(pred[name]).strip().lower() == str(gold[name]).strip().lower()
            mark = "ok" if same else "wrong"
        out.append({"name": name, "mark": mark,
                    "pred": _text(pred[name]) if name in pred else "",
                    "gold": _text(gold[name]) if name in gold else ""})
    return out


def align_calls(pred: Sequence[Call], gold: Sequence[Call]) -> list[dict[str, Any]]:
    """Predicted calls matched to gold calls of the same name, in gold order; a gold call with
    no match is ``missing``, a predicted one left over ``extra``. Each row: ``mark`` (ok,
    wrong, missing, extra), ``pred``/``gold`` names and ``args`` (name, mark, pred, gold)."""
    left = list(range(len(pred)))
    rows = []
    for g_name, g_args in gold:
        hit = next((i for i in left if pred[i][0].lower() == g_name.lower()), None)
        if hit is None:
            rows.append({"mark": "missing", "pred": "", "gold": g_name,
                         "args": _args({}, g_args)})
            continue
        left.remove(hit)
        args = _args(pred[hit][1], g_args)
        mark = "ok" if all(a["mark"] == "ok" for a in args) else "wrong"
        rows.append({"mark": mark, "pred": pred[hit][0], "gold": g_name, "args": args})
    rows += [{"mark": "extra", "pred": pred[i][0], "gold": "", "args": _args(pred[i][1], {})}
             for i in left]
    return rows


def first_difference(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """The first row that is not ``ok``, in words: ``missing call `findevents```,
    ``wrong value city='LA' vs 'Los Angeles' in `findevents```, ..."""
    for row in rows:
        if row["mark"] == "missing":
            return f"missing call `{row['gold']}`"
        if row["mark"] == "extra":
            return f"extra call `{row['pred']}`"
        for arg in row["args"]:
            if arg["mark"] == "wrong":
                return (f"wrong value {arg['name']}={arg['pred']} vs {arg['gold']} "
                        f"in `{row['gold']}`")
            if arg["mark"] != "ok":
                return f"{arg['mark']} argument `{arg['name']}` in `{row['gold']}`"
    return None


def stopped(result: Any) -> str | None:
    """What kept the answer from being read: an infra/model error, a format error."""
    if result.status != "ok":
        kind = result.error_kind or result.status
        return f"{result.status.replace('_', ' ')} ({kind}): {(result.error or '')[:200]}"
    parse_error = (result.outputs or {}).get("parse_error")
    return f"format error: {parse_error}" if parse_error else None


def tool_error(result: Any) -> str | None:
    """The first tool call of the trace that failed, in words."""
    for step in (result.outputs or {}).get("trace") or []:
        if isinstance(step, Mapping) and step.get("kind") == "tool_call" and step.get("error"):
            return f"tool error in `{step.get('name')}`: {str(step.get('output'))[:200]}"
    return None


def generic_verdict(result: Any) -> Verdict:
    """Status, parse error; passed when every score is at its maximum (100 for percentages,
    else 1); else a failed tool call (the trace), else the first score below its maximum."""
    stop = stopped(result)
    if stop:
        return Verdict(False, stop)
    scores = (result.score or {}).get("scores") or {}
    numbers = {k: v for k, v in scores.items() if isinstance(v, (int, float))}
    top = 100.0 if any(v > 1 for v in numbers.values()) else 1.0
    low = next((k for k, v in numbers.items() if v < top), None)
    if low is None:
        return Verdict(True, "every score at its maximum" if numbers else "no scores")
    return Verdict(False, tool_error(result) or f"{low} = {numbers[low]:g} (of {top:g})")

__all__ = ["Call", "Verdict", "align_calls", "first_difference", "generic_verdict", "stopped",
           "tool_error"]
