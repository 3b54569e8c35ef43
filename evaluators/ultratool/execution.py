"""UltraTool's execution metrics: would the predicted plan actually run against the simulated
tools (plans run by :func:`tooleval_agents.ultratool.stubs.execute_plan`)?

* ``valid_calls`` (pooled): share of calls that run (known tool, known argument names, required
  arguments present, literals of the declared type). ``strict_calls`` also counts free text given
  for a typed or enumerated argument as invalid (a warning in the trace).
* ``resolved_references`` (pooled): share of ``<...>`` references with an earlier output to
  resolve to; ``named_references`` only those resolved by name (see the stub module).
* ``tool_set_f1`` (mean): F1 of the set of called tool names against the gold plan's.
* ``executable`` (mean): 100 when every call is valid and every reference resolved.

Every function is pure; ``score_*`` return :class:`~tooleval_agents.contracts.ExampleScore` and
``aggregate_*`` pool a list of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tooleval_agents.contracts import ExampleScore, Metrics, Part
from tooleval_agents.evaluators.metrics_common import f1
from tooleval_agents.results.corpus import Scores, as_corpus
from tooleval_agents.ultratool.calls import parse_call
from tooleval_agents.ultratool.records import PlanStep, RawSample, ToolSkeleton
from tooleval_agents.ultratool.stubs import ExecutionTrace as ToolTrace
from tooleval_agents.ultratool.stubs import PlanItem, execute_plan


def call_validity(trace: ToolTrace, *, strict: bool = False) -> Part:
    """Valid calls out of all calls (``strict``: warnings count as invalid)."""
    hits = trace.strict_calls if strict else trace.valid_calls
    return Part(hits=hits, total=len(trace.calls))


def reference_resolution(trace: ToolTrace, *, by_name_only: bool = False) -> Part:
    """Resolved references out of all references."""
    hits = trace.resolved_by_name if by_name_only else trace.resolved
    return Part(hits=hits, total=trace.references)


def tool_set_f1(predicted: Iterable[str], gold: Iterable[str]) -> float:
    """F1 (0-100) of the set of tool names called against the gold set; two empty sets give 100.

    >>> round(tool_set_f1(["a", "b", "b"], ["b", "c"]), 2)
    50.0
    """
    p, g = set(predicted), set(gold)
    return f1(len(p & g), len(p), len(g), empty=100.0)


def gold_tools(sample: RawSample | Sequence[PlanStep]) -> set[str]:
    """Names of the tools the gold plan (of a sample, or its steps) calls: the parsed call's
    name, else the text before ``(`` of a call that does not parse (never dropped: the gold
    set must not shrink).

    >>> sorted(gold_tools([PlanStep(step="1. Get", tool="null"),
    ...                    PlanStep(step="1.1 Q", tool="rate(x=1)"),
    ...                    PlanStep(step="1.2 R", tool="convert(<rate")]))
    ['convert', 'rate']
    """
    steps = sample.plan if isinstance(sample, RawSample) else sample
    names = set()
    for step in steps:
        if step.kind != "tool_call":
            continue
        names.add(called_tool(step))
    return names


def called_tool(step: PlanStep) -> str:
    """The tool a gold ``tool_call`` step calls: the parsed call's name, else the text before
    ``(``."""
    call = step.call or parse_call(step.tool)
    return call.name if call is not None else step.tool.split("(", 1)[0].strip()


def score_ultratool_trace(trace: ToolTrace, gold: Iterable[str]) -> ExampleScore:
    """Scores of one executed plan against the gold plan's tool names."""
    valid, strict = call_validity(trace), call_validity(trace, strict=True)
    refs, named = reference_resolution(trace), reference_resolution(trace, by_name_only=True)
    problems = [f"{c.step} {c.tool}: {c.error}" for c in trace.calls if c.error]
    problems += [f"{c.step} {c.tool}: unresolved {r}" for c in trace.calls
                 for r in c.unresolved_references]
    executable = valid.hits == valid.total and refs.hits == refs.total
    return ExampleScore(
        scores={"tool_set_f1": tool_set_f1(trace.tools, gold), "executable": 100.0 * executable},
        parts={"valid_calls": valid, "strict_calls": strict, "resolved_references": refs,
               "named_references": named},
        comments={"executable": "; ".join(problems) or f"{len(trace.calls)} call(s) ran"},
    )


def score_ultratool_execution(sample: RawSample, plan: Sequence[PlanItem],
                              tools: Sequence[ToolSkeleton] | None = None) -> ExampleScore:
    """Run a predicted plan against the sample's tools (or ``tools``) and score it.

    >>> from tooleval_agents.ultratool.stubs import plan_items
    >>> tool = {"name": "rate", "description": "Exchange rate.", "arguments": {"properties": {
    ...     "currency": {"type": "string"}}}, "results": {"properties": {"rate": {}}}}
    >>> s = RawSample(question="q", domain="d", tools=[tool], plan=[
    ...     {"step": "1. Get the rate", "tool": "rate(currency='GBP')"},
    ...     {"step": "2. Convert at <rate>", "tool": "rate(currency=<rate>)"}])
    >>> r = score_ultratool_execution(s, plan_items(s.plan))
    >>> r.scores, r.parts["resolved_references"].hits
    ({'tool_set_f1': 100.0, 'executable': 100.0}, 1.0)
    """
    trace = execute_plan(plan, sample.tools if tools is None else tools)
    return score_ultratool_trace(trace, gold_tools(sample))


HIGHER_IS_BETTER = ("executable", "valid_calls", "strict_calls", "resolved_references",
                    "named_references", "tool_set_f1")
"""The execution metrics of a raw plan a better system has higher."""


def aggregate_ultratool_execution(scores: Scores) -> Metrics:
    """Corpus figures: pooled shares and mean per-example scores (0-100)."""
    c = as_corpus(scores)
    return {
        **{k: c.pooled(k) for k in ("valid_calls", "strict_calls", "resolved_references",
                                    "named_references")},
        **{k: c.mean(k) for k in ("tool_set_f1", "executable")},
    }
