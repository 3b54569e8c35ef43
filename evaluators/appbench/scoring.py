"""Score AppBench answers over a corpus: ``score_appbench(samples, outputs, scoring=...)``, and
the LangSmith row/summary evaluators.

Two profiles (``scoring``):

* ``strict`` (default, :mod:`tooleval_agents.evaluators.appbench.strict`): multiset F1, calls
  aligned one to one, dependencies checked against the calls that precede them;
* ``paper`` (:mod:`tooleval_agents.evaluators.appbench.paper`): the official ``evaluation.py`` bug
  for bug.

Both report ``app_f1``, ``api_f1``, ``success``, ``app_em``, ``api_em`` (paper Table 3 / 11),
the Table-4 error analysis (:mod:`tooleval_agents.evaluators.appbench.errors`, judged the profile's
way) and, with ``strict`` or ``graph=True``, the graph metrics
(:mod:`tooleval_agents.evaluators.appbench.graph_metrics`, always on
the robust parse; ``paper`` alone skips them and the robust parse), each 0-100 and
unrounded; plus success by the gold's (parallel, sequential) scale (paper Figure 4; every cell
is reported with its sample count - the paper left out cells under 10 samples).

Scoring one example never raises on a malformed reference or answer: it gives a failure
(:func:`failure_score`, ``error`` set) that keeps the example in every denominator, its gold
calls (``len(api_results)``) in the recall totals with no hit.

Which text is scored (:func:`answer_text`): ``strict`` reads our canonical ``prediction`` (the
parsed calls re-rendered); ``paper`` reads the raw model answer ``raw_outputs[-1]`` when the
outputs hold it, as the official script saw it (it reads ``- **Weather**: [...]`` as app
``- **Weather**``, which the re-rendering would have cleaned).

Gold-as-prediction (:func:`tooleval_agents.evaluators.appbench.parse.gold_answer`) scores 100 on
every strict metric. Under ``paper`` it gives app F1 100 / 45.15 / 36.61 (SS / SM / MS): the
official hit cap of one per sample. MM: the notes' 27.47 needs ``|pred| = |gold| = 728``
(``used_app``), which is the official pairing
:func:`~tooleval_agents.evaluators.appbench.parse.official_gold_answer` (MM #10: 5 of its 7 lines);
all 7 lines give ``2*200/(730+728)`` = 27.43. MM #10 also fails ``paper`` success under either
rendering (5 ``used_app`` vs 7 gold lines), so gold success is 99.5 on MM.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from tooleval_agents.appbench.records import AppBenchOutput, AppBenchSample
from tooleval_agents.contracts import ExampleScore, Metrics, Part
from tooleval_agents.evaluators.appbench.errors import (
    DEPENDENT_ARGS,
    aggregate_errors,
    error_counts,
)
from tooleval_agents.evaluators.appbench.graph_metrics import (
    GRAPH_METRICS,
    aggregate_graph,
    graph_scores,
)
from tooleval_agents.evaluators.appbench.paper import (
    PaperResult,
    paper_example,
    paper_gold,
    paper_result,
    score_paper,
)
from tooleval_agents.evaluators.appbench.paper_read import read_answer
from tooleval_agents.evaluators.appbench.strict import (
    score_strict,
    score_strict_calls,
    strict_calls,
)
from tooleval_agents.evaluators.base import langsmith_evaluators
from tooleval_agents.evaluators.metrics_common import corpus_f1
from tooleval_agents.evaluators.trajectory import HIGHER_IS_BETTER as TRAJECTORY_HIGHER
from tooleval_agents.evaluators.trajectory import LOWER_IS_BETTER as TRAJECTORY_LOWER
from tooleval_agents.results.corpus import Columns, Corpus, Scores, Sum, as_corpus

Scoring = Literal["paper", "strict"]
MAIN_METRICS = ("app_f1", "api_f1", "success", "app_em", "api_em")
_OUTPUT_KEYS = ("output", "answer", "text", "content", "prediction")


class ScaleCell(BaseModel):
    """Success of the samples whose gold plan has one (parallel, sequential) scale."""

    parallel: int
    """Number of weakly connected components of the gold DAG."""
    sequential: float
    """Mean component size of the gold DAG."""
    samples: int
    """Samples in the cell."""
    success: float
    """Success rate of the cell, 0-100."""


class AppBenchReport(BaseModel):
    """The corpus scores of one set of answers."""

    benchmark: Literal["appbench"] = "appbench"
    """Always ``appbench``."""
    category: str | None = None
    """``ss`` / ``sm`` / ``ms`` / ``mm`` when known."""
    scoring: Scoring
    """The profile used."""
    metrics: Metrics
    """Metric name -> 0..100, unrounded."""
    counts: dict[str, int]
    """Samples, dropped ones, empty answers, unparsed pieces, calls, value errors."""
    by_scale: list[ScaleCell] = Field(default_factory=list)
    """Success per gold (parallel, sequential) scale, sorted."""
    examples: list[ExampleScore] = Field(default_factory=list)
    """Per-sample scores, in sample order (dropped samples left out)."""


def _f1(c: Corpus, name: str) -> Sum:
    """Pooled F1: the precision and recall parts share their hits (one count per example);
    n/a when nothing was expected or predicted."""
    return corpus_f1(c, c.hits(f"{name}_precision"), c.total(f"{name}_precision"),
                     c.total(f"{name}_recall"))


def failure_score(n_gold: int, error: str, *, scoring: Scoring = "strict",
                  graph: bool | None = None) -> ExampleScore:
    """The score of an example that could not be scored: every metric 0, ``error`` set, and
    the parts that can be sized kept in the pools: ``n_gold`` gold calls (``len(api_results)``)
    in the app, API and node recall totals with no hit, nothing predicted. Edge parts are left
    out (the gold edges are unknown), so an all-error corpus reads 0, not 100. Without graph
    metrics (``graph``: see :func:`score_example`) the node parts and graph scores are left out.

    >>> r = failure_score(2, "bad reference")
    >>> r.parts["api_recall"].total, r.scores["success"], r.error
    (2.0, 0.0, 'bad reference')
    """
    graphs = _with_graph(scoring, graph)
    parts = {f"{name}_{side}": Part(hits=0.0, total=float(n_gold) if side == "recall" else 0.0)
             for name in ("app", "api", "node") if graphs or name != "node"
             for side in ("precision", "recall")}
    return ExampleScore(
        scores=dict.fromkeys((*MAIN_METRICS, *(GRAPH_METRICS if graphs else ())), 0.0),
        parts=parts,
        comments={"success": f"not scored: {error}"}, error=error,
        labels={"scoring": scoring, "pred_calls": "0", "gold_calls": str(n_gold),
                "unparsed": "0"})


def _gold_size(sample: object) -> int:
    try:
        return len(sample.output.api_results)  # type: ignore[attr-defined]
    except Exception:  # a sample too broken to say: nothing to keep
        return 0


def _with_graph(scoring: Scoring, graph: bool | None) -> bool:
    return scoring == "strict" if graph is None else graph


def score_example(sample: AppBenchSample, output: object, *,
                  scoring: Scoring = "strict", graph: bool | None = None) -> ExampleScore:
    """One answer scored: the profile's metrics and error analysis, and with ``graph`` the
    graph metrics (on the robust parse) and the parse counts.

    ``graph=None`` (default): on for ``strict``; off for ``paper``, which then computes only
    what the paper reports (no robust parse of the answer: ``pred_calls`` counts the API
    strings the official reading finds, ``unparsed`` those of them without a readable API
    name); the gold's scales (success by scale, paper Figure 4) are labelled either way.

    >>> from tooleval_agents.appbench.records import AppBenchOutput
    >>> s = AppBenchSample(input="q", output=AppBenchOutput(used_app=["Weather"],
    ...     used_api=[{"getweather": {"city": "Paris"}}], result_arguments=[["temperature"]],
    ...     api_results=["temperature = getweather(#city='Paris')"], middle_arguments=[],
    ...     user_aware_arguments={"city": "Paris"}))
    >>> r = score_example(s, "Weather: [temperature = getweather(#city='Paris')]")
    >>> r.scores["success"], r.scores["node_f1"], r.labels["parallel_scale"]
    (100.0, 100.0, '1')
    """
    if scoring not in ("paper", "strict"):
        raise ValueError(f"scoring must be 'paper' or 'strict', not {scoring!r}")
    graphs = _with_graph(scoring, graph)
    try:
        if scoring == "paper" and not graphs:  # what the paper reports, nothing else
            gold_read = paper_gold(sample)
            return paper_example(gold_read, paper_result(gold_read, output))
        if graphs:
            pred, gold, unparsed = strict_calls(sample, output)
            base = score_paper(sample, output) if scoring == "paper" else \
                score_strict_calls(pred, gold, unparsed)
            extra = graph_scores(pred, gold)
            labels = {"pred_calls": str(len(pred) - unparsed), "unparsed": str(unparsed)}
        else:  # strict without graph metrics
            base = score_strict(sample, output)
            gold_read = paper_gold(sample)
            gold = sample.calls
            extra = ExampleScore(labels={"parallel_scale": str(gold_read.parallel),
                                         "sequential_scale": str(gold_read.sequential)})
            labels = {"pred_calls": str(len(read_answer(output)[1]))}
    except Exception as exc:  # a malformed sample: recorded with its denominators, never raised
        return failure_score(_gold_size(sample), f"could not score: {type(exc).__name__}: "
                             f"{str(exc)[:300]}", scoring=scoring, graph=graphs)
    return base.merge(extra, ExampleScore(labels={
        "scoring": scoring, **labels, "gold_calls": str(len(gold))}))


def reference_sample(inputs: Any, reference_outputs: Any) -> AppBenchSample:
    """The sample of a LangSmith/runner example: ``inputs["input"]`` and the gold ``output``
    object as ``reference_outputs``.

    Raises:
        ValueError: the reference is not an AppBench output (a pydantic ``ValidationError``).
    """
    question = inputs.get("input", "") if isinstance(inputs, dict) else ""
    return AppBenchSample(input=str(question or ""),
                          output=AppBenchOutput.model_validate(reference_outputs))


def reference_size(reference_outputs: Any) -> int:
    """Gold calls of a possibly malformed reference: ``len(api_results)`` when it is a list."""
    calls = reference_outputs.get("api_results") if isinstance(reference_outputs, dict) else None
    return len(calls) if isinstance(calls, list) else 0


def score_outputs(inputs: Any, outputs: Any, reference_outputs: Any, *,
                  scoring: Scoring = "strict", graph: bool | None = None) -> ExampleScore:
    """One run's outputs scored against its reference (:func:`answer_text` picks the text);
    a malformed reference gives a :func:`failure_score`, never an exception."""
    try:
        sample = reference_sample(inputs, reference_outputs)
    except ValueError as exc:
        return failure_score(reference_size(reference_outputs),
                             f"reference_outputs is not an AppBench output: {exc}",
                             scoring=scoring, graph=graph)
    return score_example(sample, answer_text(outputs, scoring=scoring), scoring=scoring,
                         graph=graph)


HIGHER_IS_BETTER = ("success", "app_f1", "api_f1", "app_em", "api_em", "executed_success",
                    "gold_calls_reached", "calls_ok", "node_f1", "edge_f1", "graph_em",
                    "pred_topological", *TRAJECTORY_HIGHER)
"""The AppBench metrics a better system has higher (its scorer's ``higher_is_better``)."""
LOWER_IS_BETTER = ("key_error_independent", "key_error_dependent", "value_error_independent",
                   "value_error_dependent", *TRAJECTORY_LOWER)
"""... and lower: the shares of examples with an error (Table 4), the agent's failed tool
calls. The shares of value errors by kind (``value_error_time_share``...) say what the errors
are, not how many, and the counts per example how much an agent did: no direction."""


def aggregate(scores: Scores) -> Metrics:
    """Corpus metrics: F1s pooled (micro), success and EMs as means over all samples, then the
    error analysis and graph metrics."""
    c = as_corpus(scores)
    out = {"app_f1": _f1(c, "app"), "api_f1": _f1(c, "api")}
    out.update({k: c.mean(k) for k in ("success", "app_em", "api_em")})
    out.update(aggregate_errors(c))
    out.update(aggregate_graph(c))
    return out


def by_scale(scores: Sequence[ExampleScore]) -> list[ScaleCell]:
    """Success per gold (parallel, sequential) scale (paper Figure 4)."""
    cells: dict[tuple[int, float], list[ExampleScore]] = defaultdict(list)
    for s in scores:
        if "parallel_scale" in s.labels:
            key = (int(s.labels["parallel_scale"]), float(s.labels["sequential_scale"]))
            cells[key].append(s)
    return [ScaleCell(parallel=p, sequential=q, samples=len(v),
                      success=as_corpus(v).mean("success") or 0.0)  # a cell has samples
            for (p, q), v in sorted(cells.items())]


def _summary(scores: Scores) -> Metrics:
    out = aggregate(scores)
    if isinstance(scores, Corpus):  # the success per scale is by label: the scores are needed
        return out
    for cell in by_scale(scores):
        out[f"success_p{cell.parallel}_s{cell.sequential:g}"] = cell.success
    return out


def score_appbench(samples: Sequence[AppBenchSample], outputs: Sequence[str | None], *,
                   scoring: Scoring = "strict", drop_errors: bool = False,
                   category: str | None = None, graph: bool | None = None) -> AppBenchReport:
    """Score answers aligned with the samples (``outputs[i]`` answers ``samples[i]``);
    ``graph``: the graph metrics (default: with ``strict`` only; see :func:`score_example`).

    ``None`` marks an answer whose inference failed: it scores as an empty answer, in every
    denominator. ``drop_errors=True`` (``paper`` only) leaves such samples out instead, as the
    official run did (SS N=196); ``counts["dropped"]`` says how many.

    ``paper`` without graph metrics is scored in one pass over plain numbers (each sample's gold
    read once and kept: :func:`~tooleval_agents.evaluators.appbench.paper.paper_gold`); the report
    is the one the general path gives, field for field.

    Raises:
        ValueError: lengths differ, an unknown profile, or ``drop_errors`` with ``strict``.
    """
    if len(samples) != len(outputs):
        raise ValueError(f"{len(outputs)} outputs for {len(samples)} samples: they must be "
                         "aligned one to one (use an empty string for a missing answer)")
    if scoring not in ("paper", "strict"):
        raise ValueError(f"scoring must be 'paper' or 'strict', not {scoring!r}")
    if drop_errors and scoring != "paper":
        raise ValueError("drop_errors is the official scorer's behaviour: use it with "
                         "scoring='paper'; strict keeps every sample")
    if category is None and samples and samples[0].meta is not None:
        category = samples[0].meta.task
    if scoring == "paper" and not _with_graph(scoring, graph):
        fast = _score_paper_corpus(samples, outputs, drop_errors)
        if fast is not None:
            examples, dropped, empty, metrics, cells, tallies = fast
            return AppBenchReport.model_construct(
                category=category, scoring=scoring, metrics=metrics,
                counts={"samples": len(samples), "scored": len(examples), "dropped": dropped,
                        "empty_answers": empty, **tallies},
                by_scale=cells, examples=examples)
    examples, dropped, empty = [], 0, 0
    for sample, output in zip(samples, outputs, strict=True):
        if output is None and drop_errors:
            dropped += 1
            continue
        if not isinstance(output, str) or not output.strip():
            empty += 1
        examples.append(score_example(sample, output or "", scoring=scoring, graph=graph))
    counts = {
        "samples": len(samples),
        "scored": len(examples),
        "dropped": dropped,
        "empty_answers": empty,
        "unparsed_lines": sum(int(e.labels.get("unparsed", 0)) for e in examples),
        "pred_calls": sum(int(e.labels.get("pred_calls", 0)) for e in examples),
        "gold_calls": sum(int(e.labels.get("gold_calls", 0)) for e in examples),
        **error_counts(examples),
    }
    return AppBenchReport(category=category, scoring=scoring, metrics=aggregate(examples),
                          counts=counts, by_scale=by_scale(examples), examples=examples)


def _score_paper_corpus(
    samples: Sequence[AppBenchSample], outputs: Sequence[str | None], drop_errors: bool,
) -> tuple[list[ExampleScore], int, int, Metrics, list[ScaleCell], dict[str, int]] | None:
    """``paper`` without graph metrics over a corpus in one pass: each example's score, and
    the corpus sums, success by scale and counts from the same plain numbers (the records are
    not read back). ``None`` when an example could not be scored (the general path then
    aggregates its failure score)."""
    examples: list[ExampleScore] = []
    dropped = empty = 0
    results: list[PaperResult] = []
    cells: dict[tuple[int, float], list[int]] = {}
    apps = lines = 0
    for sample, output in zip(samples, outputs, strict=True):
        if output is None and drop_errors:
            dropped += 1
            continue
        if not isinstance(output, str) or not output.strip():
            empty += 1
        try:
            gold = paper_gold(sample)
            r = paper_result(gold, output or "")
        except Exception:
            return None
        examples.append(paper_example(gold, r))
        results.append(r)
        apps += len(gold.apps)
        lines += gold.lines
        cell = cells.get((gold.parallel, gold.sequential))
        if cell is None:
            cell = cells[gold.parallel, gold.sequential] = [0, 0]
        cell[0] += 1
        cell[1] += r.success

    (pred, unnamed, pred_apps, app_hits, api_hits, success, app_em, api_em, _, key_ind,
     key_dep, val_ind, val_dep, wrong, wrong_time, wrong_space, judged, dependent) = (
        [sum(column) for column in zip(*results, strict=True)] if results
        else [0] * len(PaperResult._fields))
    sums: dict[tuple[str, str], float] = {
        ("errors", ""): 0.0,
        ("hits", "app_precision"): float(app_hits),
        ("total", "app_precision"): float(pred_apps),
        ("hits", "app_recall"): float(app_hits), ("total", "app_recall"): float(apps),
        ("hits", "api_precision"): float(api_hits), ("total", "api_precision"): float(pred),
        ("hits", "api_recall"): float(api_hits), ("total", "api_recall"): float(lines),
        ("hits", "value_error_time_share"): float(wrong_time),
        ("total", "value_error_time_share"): float(wrong),
        ("hits", "value_error_space_share"): float(wrong_space),
        ("total", "value_error_space_share"): float(wrong),
        ("hits", DEPENDENT_ARGS): float(dependent), ("total", DEPENDENT_ARGS): float(judged),
    }
    for name, count in (("success", success), ("app_em", app_em), ("api_em", api_em),
                        ("key_error_independent", key_ind), ("key_error_dependent", key_dep),
                        ("value_error_independent", val_ind),
                        ("value_error_dependent", val_dep)):
        sums["score", name] = sums["score_ok", name] = 100.0 * count
    metrics = aggregate(Columns.from_totals(len(examples), sums).corpus())
    scale_cells = [ScaleCell.model_construct(parallel=p, sequential=q, samples=n,
                                             success=100.0 * ok / n)
                   for (p, q), (n, ok) in sorted(cells.items())]
    tallies = {"unparsed_lines": unnamed, "pred_calls": pred, "gold_calls": lines,
               "value_error_args": wrong, "value_error_time_args": wrong_time,
               "value_error_space_args": wrong_space}
    return examples, dropped, empty, metrics, scale_cells, tallies


def answer_text(outputs: Any, *, scoring: Scoring = "strict") -> str:
    """The answer text of a run's outputs: the first string under ``output``, ``answer``,
    ``text``, ``content`` or ``prediction``, else the only string value, else ``""``.

    With ``scoring="paper"`` the raw model answer ``raw_outputs[-1]`` (a workflow's last model
    text) comes first when there is one: the official scorer read the raw answer, not our
    cleaned re-rendering in ``prediction``.

    >>> out = {"raw_outputs": ["- **Weather**: [t = getweather()]"],
    ...        "prediction": "Weather: [t = getweather()]"}
    >>> answer_text(out), answer_text(out, scoring="paper")
    ('Weather: [t = getweather()]', '- **Weather**: [t = getweather()]')
    """
    if isinstance(outputs, str):
        return outputs
    if not isinstance(outputs, dict):
        return ""
    raw = outputs.get("raw_outputs")
    if scoring == "paper" and isinstance(raw, list) and raw and isinstance(raw[-1], str):
        return raw[-1]
    for key in _OUTPUT_KEYS:
        if isinstance(outputs.get(key), str):
            return str(outputs[key])
    strings = [v for v in outputs.values() if isinstance(v, str)]
    return strings[0] if len(strings) == 1 else ""


def create_appbench_evaluators(
    *, scoring: Scoring = "strict",
) -> tuple[Callable[..., list[dict[str, Any]]], Callable[..., list[dict[str, Any]]]]:
    """LangSmith row and summary evaluators for AppBench.

    ``inputs`` holds ``input``; ``reference_outputs`` is the sample's ``output`` object (as
    :meth:`AppBenchBenchmark.to_example` uploads it); ``outputs`` holds the answer text (see
    :func:`answer_text`; ``paper`` reads ``raw_outputs[-1]`` when present). The summary adds
    ``success_p{P}_s{S}`` per gold scale. A malformed reference gives ``scoring_error``
    feedback and zeros, its gold calls kept in the summary's recall totals.

    Example::

        row, summary = create_appbench_evaluators(scoring="paper")
        evaluate(target, data="appbench-mm", evaluators=[row], summary_evaluators=[summary])
    """
    if scoring not in ("paper", "strict"):
        raise ValueError(f"scoring must be 'paper' or 'strict', not {scoring!r}")

    def score(inputs: dict[str, Any], outputs: dict[str, Any],
              reference_outputs: dict[str, Any]) -> ExampleScore:
        return score_outputs(inputs, outputs, reference_outputs, scoring=scoring)

    return langsmith_evaluators(f"appbench_{scoring}", score, _summary)
