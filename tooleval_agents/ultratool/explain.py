"""Why an UltraTool tool-usage answer passed or failed: its steps set against the gold steps as
the scorer aligns them (:mod:`tooleval_agents.evaluators.ultratool.kv`: each gold step with the
first predicted step of the same id, arguments per gold key), so the verdict never contradicts
``tool_usage`` (the viewer's verdict line, :meth:`UltraToolBenchmark.explain`). What the metric
does not score -- the tool's name, extra steps, extra arguments -- is said beside a pass. The
other tasks get the core's verdict on their headline metric."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tooleval_agents.evaluators.parsing import ParsedList, parse_list
from tooleval_agents.evaluators.ultratool.kv import (
    answer_of,
    key_value_similarity,
    match_steps,
    step_usage_score,
    unescape_name,
)
from tooleval_agents.verdict import (
    Verdict,
    at_top,
    injected_fault,
    stopped,
    summed,
    tool_error,
    with_fault,
)

HEADLINE = "tool_usage"
PASSED = "passes tool_usage (arguments per gold step)"


def _text(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _steps(value: Any) -> list[Any]:
    """The predicted list the scorer reads (its answer text parsed as it parses it)."""
    parsed = parse_list(value)
    return parsed.value if isinstance(parsed, ParsedList) else []


def _step_id(item: Any) -> str:
    step = item.get("step") if isinstance(item, Mapping) else None
    return step.strip().split(" ", 1)[0] if isinstance(step, str) else ""


def _tool(item: Any) -> str:
    tool = item.get("tool") if isinstance(item, Mapping) else None
    return unescape_name(tool) if isinstance(tool, str) else ""


def _args(param: Any, gold: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each gold argument marked as the scorer scores it (ok: similarity 1), then the
    predicted arguments the gold lacks (``extra``: not scored)."""
    values: dict[str, Any] = {}
    for key, value in (param.items() if isinstance(param, Mapping) else ()):
        if isinstance(key, str):
            values.setdefault(unescape_name(key), value)
    out = []
    for name, gold_value in gold.items():
        if name not in values:
            out.append({"name": name, "mark": "missing", "pred": "", "gold": _text(gold_value)})
            continue
        same = key_value_similarity(str(gold_value), values[name]) == 1.0
        out.append({"name": name, "mark": "ok" if same else "wrong",
                    "pred": _text(values[name]), "gold": _text(gold_value)})
    out += [{"name": k, "mark": "extra", "pred": _text(v), "gold": ""}
            for k, v in values.items() if k not in gold]
    return out


def step_rows(pred: Sequence[Any], gold: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per gold step (``step``, ``mark`` ok / wrong / missing as the step scores,
    ``score`` 0-100, predicted and gold tool, ``args``), then one ``extra`` row per predicted
    item the scorer did not read (a repeated step id, a step the gold lacks)."""
    matched = match_steps(pred, [dict(g) for g in gold], "param")
    rows = []
    for item, g in zip(matched, gold, strict=True):
        param = g.get("param")
        gold_params: Mapping[str, Any] = param if isinstance(param, Mapping) else {}
        score = 100.0 * step_usage_score(item, dict(g))
        mark = "missing" if item is None else "ok" if score >= 100.0 else "wrong"
        rows.append({"step": _step_id(g), "mark": mark, "score": score,
                     "pred": _tool(item) if item is not None else "", "gold": _tool(g),
                     "args": _args(item.get("param") if item is not None else {},
                                   gold_params)})
    used = {id(m) for m in matched if m is not None}
    rows += [{"step": _step_id(item), "mark": "extra", "score": None, "pred": _tool(item),
              "gold": "", "args": _args(item.get("param") if isinstance(item, Mapping)
                                        else {}, {})}
             for item in pred if id(item) not in used]
    return rows


def _where(row: Mapping[str, Any]) -> str:
    return f"at step {row['step']}" if row["step"] else "(no step id)"


def scored_difference(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """The first gold step that lost points, in words (what ``tool_usage`` counts)."""
    for row in rows:
        if row["mark"] == "missing":
            return f"missing call `{row['gold']}` {_where(row)}"
        if row["mark"] != "wrong":
            continue
        for arg in row["args"]:
            if arg["mark"] == "wrong":
                return (f"wrong value {arg['name']}={arg['pred']} vs {arg['gold']} in "
                        f"`{row['gold']}` {_where(row)}")
            if arg["mark"] == "missing":
                return f"missing argument `{arg['name']}` in `{row['gold']}` {_where(row)}"
        return f"arguments of `{row['gold']}` not read {_where(row)}"
    return None


def unscored_differences(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """What differs from the gold without costing a point: another tool's name, an extra
    call, an extra argument."""
    out = []
    for row in rows:
        if row["mark"] == "extra":
            out.append(f"extra call {_where(row)}")
        elif row["mark"] == "ok" and row["pred"] != row["gold"]:
            out.append(f"tool `{row['pred']}` for `{row['gold']}` {_where(row)}")
        elif row["mark"] == "ok":
            out += [f"extra argument `{a['name']}` {_where(row)}" for a in row["args"]
                    if a["mark"] == "extra"]
    return out


def explain(result: Any) -> Verdict | None:
    """Passed exactly when ``tool_usage`` is at 100 (with what still differs, if anything);
    else the first reason: the answer not read (status, format), an injected tool fault the
    agent did not get past, a failed tool call, then the first gold step that lost points.
    ``None`` for a result without a gold list of steps (the core's verdict answers)."""
    gold = (result.reference_outputs or {}).get("reference")
    if not isinstance(gold, list):
        return None
    gold_steps = [g for g in gold if isinstance(g, Mapping)]
    rows = step_rows(_steps(answer_of(result.outputs or {})), gold_steps)
    score = ((result.score or {}).get("scores") or {}).get(HEADLINE)
    fault = injected_fault(result)
    if at_top(score):
        said = summed(PASSED, [*unscored_differences(rows), stopped(result)])
        return Verdict(True, with_fault(said, fault), rows)
    difference = scored_difference(rows)
    stop = stopped(result)
    if stop is None and fault and not fault[1]:
        return Verdict(False, fault[0] + (f" ({difference})" if difference else ""), rows)
    reason = (stop or tool_error(result) or difference
              or (f"tool_usage = {score:g}" if isinstance(score, (int, float)) else "not scored"))
    return Verdict(False, reason, rows)


__all__ = ["explain", "scored_difference", "step_rows", "unscored_differences"]
