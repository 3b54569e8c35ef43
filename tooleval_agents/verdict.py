"""Why an example passed or failed, in one line, and its predicted calls set against the gold.

The viewer puts this at the top of an example's page. A benchmark that knows its answers
(AppBench call lines, UltraTool tool calls) explains them through
:meth:`~tooleval_agents.registry.Benchmark.explain`; :func:`generic_verdict` is the fallback,
read from what every result stores (status, parse error, scores, tool calls).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
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
    for step in _trace(result):
        if step.get("kind") == "tool_call" and step.get("error"):
            return f"tool error in `{step.get('name')}`: {str(step.get('output'))[:200]}"
    return None


def _trace(result: Any) -> list[Mapping[str, Any]]:
    trace = (result.outputs or {}).get("trace")
    return [s for s in trace if isinstance(s, Mapping)] if isinstance(trace, list) else []


def _fate(fault: Mapping[str, Any], faults: Sequence[Mapping[str, Any]],
          summary: Mapping[str, Any]) -> tuple[int | None, bool | None]:
    """How many attempts the agent made at a faulted call and whether one went through
    (``None``: not recorded). The trace's summary says so per position; in a trace written
    before it did, a persistent fault failed every attempt (one record each), and a transient
    one is known only when it is the example's only faulted call."""
    position = fault.get("position")
    known = (summary.get("positions") or {}).get(str(position))
    if isinstance(known, Mapping):
        return int(known.get("attempts") or 1), bool(known.get("answered"))
    at = [f for f in faults if f.get("position") == position]
    if not fault.get("transient"):
        return len(at), False
    if len({f.get("position") for f in faults}) == 1 and "retries" in summary:
        retries = int(summary.get("retries") or 0)
        return int(fault.get("attempt") or 0) + 1 + retries, None if retries else False
    return None, None


def _fate_text(attempts: int | None, answered: bool | None) -> str:
    if answered:
        return "a later attempt went through"
    if attempts is None:
        return "whether the agent retried it is not recorded"
    if attempts <= 1:
        return "the agent did not retry"
    if answered is None:
        return f"the agent retried it {attempts - 1} time(s); whether one went through is " \
               "not recorded"
    return f"the agent retried it {attempts - 1} time(s), and every attempt failed"


def injected_fault(result: Any, *, name: Callable[[str], str] = str) -> tuple[str, bool] | None:
    """The example's injected tool fault (``--tool-faults``, the trace's ``tool_fault``
    records) in words, and whether the agent got past it: ``("injected `malformed` fault in
    `getweather`; the agent did not retry", False)``. The first fault of a call that never
    went through is named, else the first one; ``None``: no fault was injected. ``name``
    shortens a tool's name as the verdict's rows show it."""
    trace = _trace(result)
    faults = [s for s in trace if s.get("kind") == "tool_fault"]
    if not faults:
        return None
    summary = next((s for s in trace if s.get("kind") == "tool_faults"), {})
    fates = [_fate(f, faults, summary) for f in faults]
    at = next((i for i, (_, answered) in enumerate(fates) if not answered), 0)
    fault = faults[at]
    text = (f"injected `{fault.get('fault')}` fault in `{name(str(fault.get('tool')))}`; "
            f"{_fate_text(*fates[at])}")
    return text, bool(fates[at][1])


def at_top(value: Any) -> bool:
    """Whether a per-example score (0-100) is at its maximum."""
    return isinstance(value, (int, float)) and value >= 100.0


def summed(passed: str, differences: Sequence[str | None], *, shown: int = 2) -> str:
    """A passing verdict's reason: ``passed`` alone, or with what still differs from the gold
    (``passes tool_usage ...; differs: extra call at step 1.3``)."""
    found = [d for d in differences if d]
    if not found:
        return passed
    more = f" (and {len(found) - shown} more)" if len(found) > shown else ""
    return f"{passed}; differs: {'; '.join(found[:shown])}{more}"


def with_fault(reason: str, fault: tuple[str, bool] | None) -> str:
    """A passing verdict's reason, and the injected fault the example met, if any."""
    return f"{reason}; {fault[0]}" if fault else reason


def headline_verdict(result: Any, headline: Sequence[str]) -> Verdict | None:
    """Passed exactly when the first headline metric is at 100; the other headline metrics
    below 100, a format error or an injected fault the agent got past said beside it. ``None``:
    the example has no such score."""
    scores = (result.score or {}).get("scores") or {}
    if not headline or not isinstance(scores.get(headline[0]), (int, float)):
        return None
    key = headline[0]
    fault = injected_fault(result)
    if at_top(scores[key]):
        others = [f"{m} = {scores[m]:g} (of 100)" for m in headline[1:]
                  if isinstance(scores.get(m), (int, float)) and not at_top(scores[m])]
        return Verdict(True, with_fault(summed(f"passes {key}", [*others, stopped(result)]),
                                        fault))
    reason = (stopped(result) or (fault[0] if fault and not fault[1] else None)
              or tool_error(result) or f"{key} = {scores[key]:g} (of 100)")
    return Verdict(False, reason)


def generic_verdict(result: Any, headline: Sequence[str] = ()) -> Verdict:
    """Judged on the split's first ``headline`` metric when the example has it
    (:func:`headline_verdict`); else status, parse error, and passed when every score is at
    its maximum (100 for percentages, else 1), else an injected fault, a failed tool call (the
    trace), else the first score below its maximum."""
    judged = headline_verdict(result, headline)
    if judged is not None:
        return judged
    stop = stopped(result)
    if stop:
        return Verdict(False, stop)
    scores = (result.score or {}).get("scores") or {}
    numbers = {k: v for k, v in scores.items() if isinstance(v, (int, float))}
    top = 100.0 if any(v > 1 for v in numbers.values()) else 1.0
    low = next((k for k, v in numbers.items() if v < top), None)
    if low is None:
        return Verdict(True, "every score at its maximum" if numbers else "no scores")
    fault = injected_fault(result)
    return Verdict(False, (fault[0] if fault and not fault[1] else None) or tool_error(result)
                   or f"{low} = {numbers[low]:g} (of {top:g})")

__all__ = ["Call", "Verdict", "align_calls", "at_top", "first_difference", "generic_verdict",
           "headline_verdict", "injected_fault", "stopped", "summed", "tool_error",
           "with_fault"]
