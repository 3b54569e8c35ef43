"""AppBench's execution metrics: would the predicted plan actually run (plans run by
:class:`tooleval_agents.appbench.stubs.AppExecutor` with the gold)?

* ``executed_success`` (mean): every predicted call runs without error **and** every gold call is
  reached by a distinct successful call with the gold's concrete argument values. Extra calls
  that run are allowed (a plan may look something up twice); a call that fails is not.
* ``gold_calls_reached`` and ``calls_ok`` (pooled): the two halves of it, call by call.
* labels ``error_kinds``: the error kinds of the plan, comma-separated (empty when none).

Every function is pure; ``score_*`` return :class:`~tooleval_agents.contracts.ExampleScore` and
``aggregate_*`` pool a list of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tooleval_agents.appbench.catalog import load_catalog
from tooleval_agents.appbench.names import tool_name
from tooleval_agents.appbench.records import AppBenchSample, AppCall, Catalog
from tooleval_agents.appbench.stubs import AppExecutor
from tooleval_agents.appbench.stubs import ExecutionTrace as AppTrace
from tooleval_agents.contracts import ExampleScore, Metrics, Part
from tooleval_agents.results.corpus import Scores, as_corpus


def executed_success(trace: AppTrace) -> bool:
    """No call failed and every gold call was reached (see the module doc)."""
    return trace.ok and trace.reached == trace.gold_calls


def score_appbench_trace(trace: AppTrace) -> ExampleScore:
    """Scores of one executed AppBench plan (the executor must have had the gold)."""
    success = executed_success(trace)
    errors = trace.errors
    missed = trace.gold_calls - trace.reached
    comment = "; ".join([*(f"{e.kind}: {e.message}" for e in errors),
                         *([f"{missed} gold call(s) not reached"] if missed else [])])
    return ExampleScore(
        scores={"executed_success": 100.0 * success},
        parts={"gold_calls_reached": Part(hits=trace.reached, total=trace.gold_calls),
               "calls_ok": Part(hits=sum(c.ok for c in trace.calls), total=len(trace.calls))},
        comments={"executed_success": comment or "every call ran and every gold call was reached"},
        labels={"error_kinds": ",".join(sorted({e.kind for e in errors}))},
    )


def score_appbench_execution(sample: AppBenchSample, calls: Sequence[AppCall],
                             catalog: Catalog | None = None) -> ExampleScore:
    """Run predicted calls with the sample's gold trajectory and score them.

    >>> from tooleval_agents.appbench.records import AppBenchOutput
    >>> from tooleval_agents.appbench.lines import parse_call_line as p
    >>> s = AppBenchSample(input="q", output=AppBenchOutput(used_app=["Weather"],
    ...     used_api=[{"getweather": {"city": "Paris"}}], result_arguments=[["city"]],
    ...     api_results=["city = getweather(#city='Paris')"], middle_arguments=[],
    ...     user_aware_arguments={"city": "Paris"}))
    >>> score_appbench_execution(s, [p("Weather: [t = getweather(#city=' paris ')]")]).scores
    {'executed_success': 100.0}
    """
    trace = AppExecutor(catalog or load_catalog(), sample).execute(calls)
    return score_appbench_trace(trace)


def trajectories(trace: AppTrace, executor: AppExecutor) -> tuple[list[dict[str, Any]],
                                                                  list[dict[str, Any]]]:
    """The executed calls and the gold calls as trajectories ``{"name": "App__api", "args":
    {...}}`` with *concrete* argument values (dependencies resolved), so a literal and a
    dependency that carry the same value compare equal."""
    predicted = [{"name": tool_name(c.app or "Unknown", c.call.api.strip().lower()),
                  "args": dict(c.args)} for c in trace.calls]
    gold = [{"name": tool_name(g.app, g.call.api), "args": dict(g.args)} for g in executor.gold]
    return predicted, gold


def execution_failure(n_gold: int, n_calls: int, error: str) -> ExampleScore:
    """The execution score of an example that could not be executed: ``executed_success`` 0,
    its ``n_gold`` gold calls unreached and its ``n_calls`` predicted calls failed, ``error``
    set (the denominators are kept, never shrunk)."""
    return ExampleScore(
        scores={"executed_success": 0.0},
        parts={"gold_calls_reached": Part(hits=0.0, total=float(n_gold)),
               "calls_ok": Part(hits=0.0, total=float(n_calls))},
        comments={"executed_success": f"not executed: {error}"}, error=error)


def aggregate_appbench_execution(scores: Scores) -> Metrics:
    """Corpus figures: mean executed success and the pooled call shares (0-100)."""
    c = as_corpus(scores)
    return {"executed_success": c.mean("executed_success"),
            "gold_calls_reached": c.pooled("gold_calls_reached"),
            "calls_ok": c.pooled("calls_ok")}
