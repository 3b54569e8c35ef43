"""Why an AppBench answer failed: its call lines set against the gold calls, app and
arguments (the viewer's verdict line, :meth:`AppBenchBenchmark.explain`)."""

from __future__ import annotations

from typing import Any

from tooleval_agents.appbench.lines import _APP_PREFIX, parse_call_line, split_calls
from tooleval_agents.verdict import Verdict, align_calls, first_difference, stopped, tool_error

_DEPENDS = "← "
"""Shown before a dependent argument's source (``#location=location``): the gold stores the
resolved value, so such an argument is compared by name only."""


def predicted_calls(text: str) -> list[tuple[str | None, str, dict[str, str]]]:
    """``(app, api, args)`` of each call line the answer holds; lines that parse as no call
    are left out (the scorer's parse error already says so)."""
    out = []
    for line in (text or "").splitlines():
        m = _APP_PREFIX.match(line)
        app, body = (m.group(1).strip(), m.group(2)) if m else (None, line)
        for piece in split_calls(body):
            try:
                call = parse_call_line(piece)
            except ValueError:
                continue
            args = {**call.literal_args,
                    **{k: _DEPENDS + v for k, v in call.dependent_args.items()}}
            out.append((app or call.app, call.api, args))
    return out


def _gold_calls(reference: dict[str, Any]) -> list[tuple[str, str, dict[str, str]]]:
    apps = list(reference.get("used_app") or [])
    out = []
    for i, entry in enumerate(reference.get("used_api") or []):
        for api, args in (entry or {}).items():
            out.append((apps[i] if i < len(apps) else "", api, dict(args or {})))
    return out


def explain(result: Any) -> Verdict:
    """Passed when ``success`` is at 100; else the first reason: an answer not read (status,
    format), a wrong app, a failed tool call, then the first missing, extra or wrong call or
    value."""
    pred = predicted_calls(str((result.outputs or {}).get("prediction") or ""))
    gold = _gold_calls(result.reference_outputs or {})
    rows = align_calls([(api, args) for _, api, args in pred],
                       [(api, args) for _, api, args in gold])
    for row in rows:  # a dependent argument: the gold holds its resolved value
        for arg in row["args"]:
            if arg["pred"].startswith("'" + _DEPENDS):
                arg["pred"] = arg["pred"][1:-1]
                arg["mark"] = "ok" if arg["mark"] == "wrong" else arg["mark"]
        if row["mark"] == "wrong" and all(a["mark"] == "ok" for a in row["args"]):
            row["mark"] = "ok"
    stop = stopped(result)
    success = ((result.score or {}).get("scores") or {}).get("success")
    if stop:
        return Verdict(False, stop, rows)
    if success == 100:
        return Verdict(True, "passed: every call and value as in the gold", rows)
    error = tool_error(result)  # an agent's failed call is what it then worked around
    if error:
        return Verdict(False, error, rows)
    pred_apps = [app for app, _, _ in pred if app]
    gold_apps = [app for app, _, _ in gold]
    wrong_app = next((a for a in pred_apps if a not in gold_apps), None)
    if wrong_app:
        return Verdict(False, f"wrong app `{wrong_app}` (gold: {', '.join(gold_apps)})", rows)
    # calls and values as in the gold, yet failed: the order of the dependencies, say
    said = ((result.score or {}).get("comments") or {}).get("success")
    return Verdict(False, first_difference(rows) or f"success: {said or success}", rows)

__all__ = ["explain", "predicted_calls"]
