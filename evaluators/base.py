"""What every evaluator family shares: per-example results with pooled parts, and the one
adapter that turns a family into LangSmith row and summary evaluators.

A family provides two pure functions:

* ``score(inputs, outputs, reference_outputs) -> ExampleScore`` for one example, and
* ``aggregate(list[ExampleScore]) -> Metrics`` for the corpus (pooled metrics such as
  local accuracy are sums of parts, not means of per-example scores).

:func:`langsmith_evaluators` wraps them; nothing else talks to LangSmith's evaluator protocol.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tooleval_agents.contracts import AggregateFn, ScoreFn, Scorer
from tooleval_agents.evaluation import scorer_evaluators

__all__ = ["langsmith_evaluators"]


def langsmith_evaluators(
    name: str, score: ScoreFn, aggregate: AggregateFn
) -> tuple[Callable[..., list[dict[str, Any]]], Callable[..., list[dict[str, Any]]]]:
    """A row evaluator and a summary evaluator for ``langsmith.evaluate``.

    Example::

        row, summary = langsmith_evaluators("tool_usage", score_tool_usage, aggregate_tool_usage)
        evaluate(target, data=examples, evaluators=[row], summary_evaluators=[summary])

    (:func:`tooleval_agents.evaluation.scorer_evaluators`: a scorer that raises gives
    ``scoring_error`` feedback; the summary pools the row scores.)
    """
    return scorer_evaluators(Scorer(score=score, aggregate=aggregate), name=name)
