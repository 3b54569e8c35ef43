"""Why an AppBench answer passed or failed: its call lines set against the gold calls as the
strict scorer pairs and judges them (:mod:`tooleval_agents.evaluators.appbench.strict`: the gold
lines of ``api_results``, calls paired by API, each gold argument judged, a dependency by the
returned argument it names and the call that returns it), so the verdict never contradicts
``success`` (the viewer's verdict line, :meth:`AppBenchBenchmark.explain`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tooleval_agents.appbench.lines import AppCall
from tooleval_agents.evaluators.appbench.errors import ArgOutcome
from tooleval_agents.evaluators.appbench.parse import normalise_name, parse_answer
from tooleval_agents.evaluators.appbench.scoring import answer_text, reference_sample
from tooleval_agents.evaluators.appbench.strict import align, judge_arguments, strict_calls
from tooleval_agents.verdict import (
    Verdict,
    at_top,
    first_difference,
    injected_fault,
    stopped,
    summed,
    tool_error,
    with_fault,
)

_DEPENDS = "← "
"""Shown before a dependency's returned-argument name (``#location=location``)."""
_MARKS = {"ok": "ok", "value_error": "wrong", "key_error": "missing"}


def _shown(call: AppCall, key: str) -> str:
    """An argument of a call as written: a literal quoted, a dependency after an arrow."""
    for name, value in call.literal_args.items():
        if normalise_name(name) == key:
            return repr(value)
    for name, value in call.dependent_args.items():
        if normalise_name(name) == key:
            return _DEPENDS + value
    return ""


def _args(raw_pred: AppCall | None, raw_gold: AppCall, pred: AppCall | None, gold: AppCall,
          outcomes: Sequence[ArgOutcome]) -> list[dict[str, Any]]:
    out = []
    for o in outcomes:
        shown = _shown(raw_pred, o.key) if raw_pred is not None else ""
        want = _shown(raw_gold, o.key)
        if o.status == "value_error" and o.kind == "dependent" and shown == want:
            shown += " (from another call)"  # the right name, returned by the wrong call
        out.append({"name": o.key, "mark": _MARKS.get(o.status, "wrong"), "pred": shown,
                    "gold": want})
    if pred is not None and raw_pred is not None:
        out += [{"name": k, "mark": "extra", "pred": _shown(raw_pred, k), "gold": ""}
                for k in sorted(pred.arg_names - gold.arg_names)]
    return out


def call_rows(text: str, reference: Any, inputs: Any = None) -> tuple[list[dict[str, Any]],
                                                                       list[str]]:
    """One row per gold call (``mark`` ok / wrong / missing, predicted and gold API and
    ``app``, ``args``), then one ``extra`` row per predicted call left unpaired; and the
    wrong apps of paired calls (``Music`` for ``Events``). A reference that is not an
    AppBench gold gives no rows."""
    try:
        sample = reference_sample(inputs or {}, reference)
    except ValueError:
        return [], []
    pred, gold, _ = strict_calls(sample, text)
    parsed = parse_answer(text)
    raw = [*parsed.calls, *(None for _ in parsed.unparsed)]
    pairs = align(pred, gold)
    outcomes, _ = judge_arguments(pred, gold, pairs)
    by_gold = {j: i for i, j in pairs.items()}
    rows, wrong_apps = [], []
    for j, g in enumerate(gold):
        i = by_gold.get(j)
        p = pred[i] if i is not None else None
        args = _args(raw[i] if i is not None else None, sample.calls[j], p, g,
                     [o for o in outcomes if o.call == j])
        same_app = p is None or p.app == g.app  # a call line naming no app has the wrong one
        if not same_app and i is not None:
            app = raw[i].app if raw[i] is not None else p.app  # type: ignore[union-attr]
            wrong_apps.append(f"`{app}` for `{sample.calls[j].app}` in `{g.api}`")
        mark = "missing" if p is None else \
            "ok" if same_app and all(a["mark"] == "ok" for a in args) else "wrong"
        rows.append({"mark": mark, "pred": p.api if p is not None else "", "gold": g.api,
                     "app": sample.calls[j].app or "", "args": args})
    rows += [{"mark": "extra", "pred": c.api if c.api != "?" else (c.raw or "?")[:80],
              "gold": "", "app": c.app or "", "args": []}
             for i, c in enumerate(pred) if i not in pairs]
    return rows, wrong_apps


def _api(tool: str) -> str:
    """A faulted tool's API as the rows name it (``Weather__getweather``, ``Weather.getweather``
    -> ``getweather``)."""
    return tool.rsplit("__", 1)[-1].rsplit(".", 1)[-1]


def explain(result: Any) -> Verdict:
    """Passed exactly when ``success`` is at 100 (with what the rows still show as different,
    if anything); else the first reason: an answer not read (status, format), an injected tool
    fault the agent did not get past, a failed tool call, a wrong app, then the first missing,
    extra or wrong call or value."""
    rows, wrong_apps = call_rows(answer_text(result.outputs or {}),
                                 result.reference_outputs or {}, getattr(result, "inputs", None))
    stop = stopped(result)
    score = result.score or {}
    success = (score.get("scores") or {}).get("success")
    fault = injected_fault(result, name=_api)
    difference = first_difference(rows)
    if at_top(success):
        differences = [f"wrong app {wrong_apps[0]}" if wrong_apps else None, difference, stop]
        head = "passes success" if any(differences) else \
            "passed: every call and value as in the gold"
        return Verdict(True, with_fault(summed(head, differences), fault), rows)
    if stop:
        return Verdict(False, stop, rows)
    if fault and not fault[1]:
        return Verdict(False, fault[0] + (f" ({difference})" if difference else ""), rows)
    error = tool_error(result)  # an agent's failed call is what it then worked around
    if error:
        return Verdict(False, error, rows)
    if wrong_apps:
        return Verdict(False, f"wrong app {wrong_apps[0]}", rows)
    said = (score.get("comments") or {}).get("success")
    return Verdict(False, difference or f"success: {said or success}", rows)


__all__ = ["call_rows", "explain"]
