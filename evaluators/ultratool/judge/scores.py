"""Judgments as example scores and corpus metrics: the planning dimensions and the overall score
(means over judged examples), tool creation hits over gold steps, and the LangSmith feedback of
a judged example."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tooleval_agents.contracts import ExampleScore, Metrics, Part
from tooleval_agents.evaluators.ultratool.judge.prompts import (
    DIMENSIONS,
    OVERALL,
    JudgeTask,
)
from tooleval_agents.evaluators.ultratool.judge.verdicts import JUDGE_ERROR, Judgment
from tooleval_agents.results.corpus import Scores, as_corpus


def _metric(task: JudgeTask, key: str) -> str:
    return task if key == OVERALL else f"{task}_{key}"


def planning_example_score(judgment: Judgment) -> ExampleScore:
    """A planning judgment as 0-100 scores: ``planning`` (overall x10) and ``planning_<dim>``.

    A judge error sets ``error``; its valid scores (if any) are kept, the others are absent and
    so count 0 in :func:`aggregate_planning`.
    """
    keys = [d.key for d in DIMENSIONS["planning"]] + [OVERALL]
    if judgment.error is not None:
        partial = {_metric("planning", k): judgment.score100(k) for k in keys}
        return ExampleScore(scores={k: v for k, v in partial.items() if v is not None},
                            error=judgment.error, labels={"judge": "error"})
    if judgment.missing_prediction:
        return ExampleScore(scores={_metric("planning", k): 0.0 for k in keys},
                            comments={"planning": "no plan in the output: not judged, counts 0"},
                            labels={"judge": "missing_prediction"})
    return ExampleScore(
        scores={_metric("planning", k): judgment.score100(k) or 0.0 for k in keys},
        comments={_metric("planning", k): r for k, r in judgment.reasons.items()},
        labels={"judge": "ok"},
    )


def aggregate_planning(scores: Scores) -> Metrics:
    """Means over *all* examples: a judge error or a missing plan counts 0.

    Also ``planning_judge_errors`` (a count of examples, not 0-100) and ``planning_judged``
    (mean overall x10 over the examples without a judge error), so judge failures are visible,
    not hidden in the mean.
    """
    keys = [_metric("planning", d.key) for d in DIMENSIONS["planning"]] + ["planning"]
    c = as_corpus(scores)
    out = {k: c.mean(k) for k in keys}
    out["planning_judge_errors"] = c.errors
    out["planning_judged"] = c.na_where(not c.computed("planning"), c.ratio(
        c.score("planning", ok_only=True), c.n - c.errors))
    return out


def tool_creation_example_score(judgments: Sequence[Judgment]) -> ExampleScore:
    """One example's created tools (one judgment per gold step) as pooled parts.

    Every gold step is in the denominator: a missing tool or a judge error counts 0 (errors are
    also reported in ``error``). Example-level ``scores`` are the means over the gold steps.
    """
    keys = [d.key for d in DIMENSIONS["tool_creation"]] + [OVERALL]
    parts = {_metric("tool_creation", k): Part(total=float(len(judgments))) for k in keys}
    errors = [f"{j.step or '?'}: {j.error}" for j in judgments if j.error is not None]
    for j in judgments:
        for k in keys:  # a missing tool scores 0; an absent or invalid score adds nothing
            parts[_metric("tool_creation", k)].hits += (j.score100(k) or 0.0) / 100.0
    missing = sum(1 for j in judgments if j.missing_prediction)
    # Nothing created for any gold step: nothing went to the judge (as for an empty plan).
    label = "error" if errors else "missing_prediction" if judgments and missing == len(
        judgments) else "ok"
    result = ExampleScore(parts=parts, labels={"judge": label})
    if errors:
        result.error = "; ".join(errors)
    elif judgments:
        result.scores = {k: 100.0 * p.hits / p.total for k, p in parts.items()}
        result.comments = {"tool_creation": f"{len(judgments)} gold steps, {missing} without a "
                                            "created tool (count 0)"}
    return result


def aggregate_tool_creation(scores: Scores) -> Metrics:
    """Pooled over all gold steps (the paper's *local* level): 100 * sum(overall/10) / steps.

    Also ``tool_creation_judge_errors``: a count of examples with a failed judgment, not 0-100.
    """
    keys = [_metric("tool_creation", d.key) for d in DIMENSIONS["tool_creation"]]
    c = as_corpus(scores)
    out = {k: c.pooled(k) for k in [*keys, "tool_creation"]}
    out["tool_creation_judge_errors"] = c.errors
    return out


def _metric_keys(task: JudgeTask) -> list[str]:
    return [_metric(task, d.key) for d in DIMENSIONS[task]] + [task]


def judge_metrics(task: JudgeTask) -> tuple[str, ...]:
    """The judge's 0-100 scores of a task (each dimension, overall; for planning also the mean
    over the judged examples): a better system has them higher (``Scorer.higher_is_better``).
    The counts of judge errors have no direction."""
    return (*_metric_keys(task), *(("planning_judged",) if task == "planning" else ()))


TOOL_CREATION_HITS = "tool_creation_hits"
"""Feedback key: an example's sum of overall/10 over its gold steps (pool with the steps)."""


TOOL_CREATION_STEPS = "tool_creation_steps"
"""Feedback key: an example's number of gold steps."""


def judge_feedback(result: ExampleScore, task: JudgeTask | None = None) -> list[dict[str, Any]]:
    """LangSmith feedback of a judged example.

    Without an error: the scores. With one: a ``judge_error`` item (score None, the error as
    comment) and, when ``task`` is given, every metric key of the task with the value the
    aggregate counts for it (a valid partial score, else the pooled share, else 0; the error
    is the comment of the overall key), so LangSmith's mean matches the aggregate. For
    ``tool_creation`` every row also has ``tool_creation_hits`` and ``tool_creation_steps``
    (see the module docstring for pooling them).
    """
    if result.error is None:
        out = [{"key": k, "score": v, "comment": result.comments.get(k)}
               for k, v in result.scores.items()]
    elif task is None:
        out = []
    else:
        out = []
        for key in _metric_keys(task):
            value = result.scores.get(key)
            part = result.parts.get(key)
            if value is None:
                value = 100.0 * part.hits / part.total if part is not None and part.total else 0.0
            out.append({"key": key, "score": value,
                        "comment": f"{JUDGE_ERROR}: {result.error}" if key == task else None})
    if task == "tool_creation":
        pooled_part = result.parts.get("tool_creation") or Part()
        out += [{"key": TOOL_CREATION_HITS, "score": pooled_part.hits},
                {"key": TOOL_CREATION_STEPS, "score": pooled_part.total}]
    if result.error is not None:
        out.append({"key": JUDGE_ERROR, "score": None, "comment": result.error})
    return out


