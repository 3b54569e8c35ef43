"""Scores of the UltraTool ``plan_create_use`` workflow on the ``raw`` split: planning structure
of the predicted plan against the gold plan, plus how its calls executed on the simulated tools.

Per example (:func:`score_plan_create_use`):

* the offline planning metrics of :mod:`tooleval_agents.evaluators.ultratool.planning_structure`
(``plan_numbering_valid``,
  ``plan_step_count_ratio``, ``plan_step_count_diff``, ``plan_rouge_l``) of
  ``prediction["plan"]`` against the gold plan's step texts, one per line;
* the execution metrics of :mod:`~tooleval_agents.evaluators.ultratool.execution` from the run's
  ``trace`` (one dict per executed call, as the workflow recorded it; records with a ``kind``, which
  agent runs add, are not calls): pooled ``valid_calls``, ``strict_calls``, ``resolved_references``,
  ``named_references``; per example ``tool_set_f1`` (called tool names against the gold plan's)
  and ``executable``;
* the trajectory matches of :mod:`tooleval_agents.evaluators.trajectory` (``trajectory_strict`` ...)
  of the predicted calls' tool names against the gold plan's, in order (arguments are not compared:
  gold arguments hold ``<...>`` references), and for agent runs the tool errors, calls and
  turns (:func:`~tooleval_agents.evaluators.trajectory.score_tool_use`).

Two rules differ from :func:`~tooleval_agents.evaluators.ultratool.execution.score_ultratool_trace`,
so nothing scores by doing nothing: a plan without any call is ``executable`` 0 when the gold plan
calls tools, and a trace that does not match the predicted calls (missing, or of another length) is
an error whose calls all count as invalid (the denominator is the number of predicted calls,
never shrunk).

Scoring reads only the stored outputs, so a finished run is re-scored without any model or
data directory.

Example::

    score = score_plan_create_use(inputs, outputs, reference_outputs)
    score.scores["tool_set_f1"], score.parts["valid_calls"]
    aggregate_plan_create_use([score, ...])["valid_calls"]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from tooleval_agents.contracts import ExampleScore, Metrics, Part
from tooleval_agents.evaluators.base import langsmith_evaluators
from tooleval_agents.evaluators.trajectory import HIGHER_IS_BETTER as TRAJECTORY_HIGHER
from tooleval_agents.evaluators.trajectory import LOWER_IS_BETTER as TRAJECTORY_LOWER
from tooleval_agents.evaluators.trajectory import (
    aggregate_trajectory,
    score_tool_use,
    score_trajectory,
)
from tooleval_agents.evaluators.ultratool.execution import HIGHER_IS_BETTER as EXECUTION_HIGHER
from tooleval_agents.evaluators.ultratool.execution import (
    aggregate_ultratool_execution,
    called_tool,
    gold_tools,
    score_ultratool_trace,
)
from tooleval_agents.evaluators.ultratool.planning_structure import (
    HIGHER_IS_BETTER as STRUCTURE_HIGHER,
)
from tooleval_agents.evaluators.ultratool.planning_structure import (
    LOWER_IS_BETTER as STRUCTURE_LOWER,
)
from tooleval_agents.evaluators.ultratool.planning_structure import (
    aggregate_plan_structure,
    score_plan_structure,
)
from tooleval_agents.results.corpus import Scores, as_corpus
from tooleval_agents.ultratool.records import PlanStep
from tooleval_agents.ultratool.stubs import CallTrace, ExecutionTrace

HEADLINE: tuple[str, ...] = ("executable", "valid_calls", "tool_set_f1", "plan_rouge_l")
HIGHER_IS_BETTER = (*STRUCTURE_HIGHER, *EXECUTION_HIGHER, *TRAJECTORY_HIGHER)
"""The metrics of a raw plan a better system has higher (its scorer's ``higher_is_better``)."""
LOWER_IS_BETTER = (*STRUCTURE_LOWER, *TRAJECTORY_LOWER)
"""... and lower (the step-count difference, the agent's failed tool calls)."""
"""The metrics shown first."""


def gold_plan_text(reference_outputs: dict[str, Any]) -> str:
    """The gold plan as text: its step texts, one per line."""
    return "\n".join(str(s["step"]) for s in reference_outputs.get("plan", []))


def gold_tool_names(reference_outputs: dict[str, Any]) -> set[str]:
    """Names of the tools the gold plan calls:
    :func:`~tooleval_agents.evaluators.ultratool.execution.gold_tools` of the reference's plan steps
    (the one rule, shared with the execution metrics)."""
    return gold_tools([PlanStep.model_validate(raw) for raw in reference_outputs.get("plan", [])])


def gold_calls(reference_outputs: dict[str, Any]) -> list[dict[str, Any]]:
    """The gold plan's calls as a trajectory (tool names, in step order)."""
    steps = [PlanStep.model_validate(raw) for raw in reference_outputs.get("plan", [])]
    return [{"name": called_tool(s), "args": {}} for s in steps if s.kind == "tool_call"]


def _prediction(outputs: dict[str, Any]) -> tuple[str, list[Any]]:
    pred = outputs.get("prediction")
    if not isinstance(pred, dict):
        return "", []
    plan = pred.get("plan")
    calls = pred.get("calls")
    return (plan if isinstance(plan, str) else "", calls if isinstance(calls, list) else [])


def _trace(outputs: dict[str, Any], calls: int) -> tuple[ExecutionTrace, str | None]:
    raw = outputs.get("trace")
    if not isinstance(raw, list):
        return ExecutionTrace(), "the outputs hold no execution trace"
    raw = [c for c in raw if not (isinstance(c, dict) and "kind" in c)]
    try:
        trace = ExecutionTrace(calls=[CallTrace.model_validate(c) for c in raw])
    except ValidationError as exc:
        return ExecutionTrace(), f"unreadable execution trace: {str(exc).splitlines()[0]}"
    if len(trace.calls) != calls:
        return trace, f"the trace has {len(trace.calls)} call(s), the prediction {calls}"
    return trace, None


def score_plan_create_use(inputs: dict[str, Any], outputs: dict[str, Any],
                          reference_outputs: dict[str, Any]) -> ExampleScore:
    """Planning structure + execution scores of one ``plan_create_use`` run (module doc).

    >>> ref = {"plan": [{"step": "1. Get it", "tool": "null"},
    ...                 {"step": "1.1 Query", "tool": "rate(currency='GBP')"}], "tools": []}
    >>> call = {"step": "1.1", "tool": "rate", "args": {"currency": "GBP"}, "result": {}}
    >>> out = {"prediction": {"plan": "1. Get it\\n1.1 Query", "calls": [{}], "created_tools": []},
    ...        "trace": [call]}
    >>> s = score_plan_create_use({"question": "q"}, out, ref)
    >>> s.scores["plan_rouge_l"], s.scores["tool_set_f1"], s.parts["valid_calls"].hits
    (100.0, 100.0, 1.0)
    """
    plan, calls = _prediction(outputs or {})
    gold = gold_tool_names(reference_outputs)
    structure = score_plan_structure(plan, gold_plan_text(reference_outputs))
    trace, error = _trace(outputs or {}, len(calls))
    execution = score_ultratool_trace(trace, gold)
    scores = {**structure.scores, **execution.scores}
    comments = {**structure.comments, **execution.comments}
    parts = dict(execution.parts)
    if error is not None:
        for key in ("valid_calls", "strict_calls"):
            parts[key] = Part(hits=0, total=max(len(calls), len(trace.calls)))
        scores["executable"] = 0.0
        comments["executable"] = error
    elif not trace.calls and gold:
        scores["executable"] = 0.0
        comments["executable"] = f"no call made; the gold plan calls {len(gold)} tool(s)"
    names: list[dict[str, Any]] = [{"name": c.get("tool"), "args": {}} for c in calls
             if isinstance(c, dict) and isinstance(c.get("tool"), str)]
    return ExampleScore(scores=scores, parts=parts, comments=comments, error=error).merge(
        score_trajectory(names, gold_calls(reference_outputs), args="ignore"),
        score_tool_use(outputs.get("trace") if isinstance(outputs, dict) else None))


def aggregate_plan_create_use(scores: Scores) -> Metrics:
    """Corpus figures (0-100, ``plan_step_count_diff`` a mean count): means of the planning
    metrics, pooled call and reference shares, mean ``tool_set_f1`` and ``executable``, the
    trajectory matches and (agent runs) tool errors, calls and turns."""
    c = as_corpus(scores)
    return {**aggregate_plan_structure(c), **aggregate_ultratool_execution(c),
            **aggregate_trajectory(c)}


def create_plan_create_use_evaluators() -> tuple[Callable[..., list[dict[str, Any]]],
                                                 Callable[..., list[dict[str, Any]]]]:
    """LangSmith row and summary evaluators of the two functions above.

    Example::

        row, summary = create_plan_create_use_evaluators()
        evaluate(target, data=examples, evaluators=[row], summary_evaluators=[summary])
    """
    return langsmith_evaluators("plan_create_use", score_plan_create_use,
                                aggregate_plan_create_use)
