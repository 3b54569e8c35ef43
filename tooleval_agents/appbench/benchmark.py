"""AppBench declared as a :class:`~tooleval_agents.registry.Benchmark`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tooleval_agents.appbench import loaders
from tooleval_agents.appbench.corruptions import FORMATS
from tooleval_agents.appbench.names import CATEGORIES, Category
from tooleval_agents.contracts import (
    AgentIO,
    ExampleFields,
    ExampleScore,
    Located,
    Metrics,
    Options,
    Scorer,
    ScoringContext,
    Split,
    Strategy,
)
from tooleval_agents.data.datadir import find_samples, source_of
from tooleval_agents.errors import DatasetMissingError
from tooleval_agents.registry import Benchmark
from tooleval_agents.results.corpus import as_corpus
from tooleval_agents.verdict import Verdict

if TYPE_CHECKING:  # the report hooks' types (pandas, matplotlib) only for the checker
    from tooleval_agents.results.compare import RunData
    from tooleval_agents.results.reports import ReportFigure, ReportTable

_PACKAGE = Path(__file__).resolve().parent
"""This package's folder (its bundled samples sit in ``samples/`` when installed)."""

TASK = "plan"
CATEGORY_NAMES = {"ss": "single app, single API", "sm": "single app, multiple APIs",
                  "ms": "multiple apps, one API each", "mm": "multiple apps, multiple APIs"}


class AppBenchScoring(Options):
    """AppBench's scoring options."""

    scoring: Literal["strict", "paper"] = "strict"
    """``paper``: the official script, bug for bug; ``strict``: multiset hits, normalised
    values, dependencies checked, nothing dropped from a denominator."""
    graph: bool | None = None
    """The graph metrics (node/edge F1, graph EM, topological order) and the robust parse
    counts; default: with ``strict`` only (``paper`` computes only what the paper reports)."""


class AppBenchBenchmark(Benchmark):
    """One task (plan API calls across apps), four categories: ss, sm, ms, mm."""

    name = "appbench"
    title = "AppBench"

    def describe(self, split: Split) -> str:
        return (f"{split.task} ({CATEGORY_NAMES.get(split.subset, split.subset)}): plan the "
                "apps, APIs and arguments that fulfil a user instruction")

    def splits(self) -> list[Split]:
        return [Split(self.name, TASK, c) for c in CATEGORIES]

    def locate(self, split: Split, data_dir: Path) -> Located:
        path = loaders.test_path(data_dir, split.subset)  # type: ignore[arg-type]
        if not path.is_file():
            raise DatasetMissingError("appbench", path, Path(data_dir))
        return Located(path, source_of(data_dir))

    def load(self, split: Split, data_dir: Path) -> Sequence[Any]:
        category: Category = split.subset  # type: ignore[assignment]
        located = self.locate(split, data_dir)
        return loaders.read_file(located.path, category, located.source)

    def explain(self, split: Split, result: Any) -> Verdict | None:
        from tooleval_agents.appbench.explain import explain  # the strict scorer's pairing

        return explain(result)

    def default_strategy(self, split: Split) -> str:
        return "hierarchical"

    def max_tokens(self, split: Split) -> int | None:
        return 1024  # a plan is a few call lines; app selection a list of names

    def report_tables(self, runs: Sequence[RunData]) -> list[ReportTable]:
        from tooleval_agents.appbench.report import AppBenchLayout  # deferred: pandas, matplotlib

        return AppBenchLayout().tables(runs)

    def report_figures(self, runs: Sequence[RunData], out_dir: Path) -> list[ReportFigure]:
        from tooleval_agents.appbench.report import AppBenchLayout  # deferred: pandas, matplotlib

        return AppBenchLayout().figures(runs, out_dir)

    def add_commands(self, groups: Mapping[str, Any]) -> None:
        # deferred: Typer, only for the CLI
        from tooleval_agents.appbench import build_cli, cli, export_cli

        groups["score"].command("appbench")(cli.appbench)
        groups["build"].command("appbench")(build_cli.build_appbench)
        groups["export"].command("appbench")(export_cli.export_appbench)

    def answer_formats(self) -> dict[str, tuple[tuple[str, ...], Any]]:
        return dict(FORMATS)  # app_list, call_lines

    def samples_dir(self) -> Path | None:
        """The hand-written samples: ``samples/`` of the installed package (a wheel), else
        ``datasets/`` of the source checkout."""
        return find_samples("appbench", _PACKAGE / "samples", _PACKAGE.parents[1] / "datasets")

    def data_sources(self) -> dict[str, Any]:
        """appbench and sgd: pinned upstream files (``sources.json``)."""
        return _sources()

    def strategies(self) -> list[Strategy]:
        from tooleval_agents.graphs.appbench.planning import (
            STRATEGIES,  # deferred: LangGraph and the prompts
        )
        from tooleval_agents.graphs.appbench.tools import (
            STRATEGIES as TOOL_STRATEGIES,  # deferred: LangGraph
        )

        return [*STRATEGIES, *TOOL_STRATEGIES]

    def scoring_options(self, split: Split) -> type[Options]:
        return AppBenchScoring

    def agent_io(self, split: Split) -> AgentIO:
        """Every API as a tool, the ``tools`` strategy's request, the agent's calls read back
        as call lines (:func:`tooleval_agents.graphs.appbench.tools.agent_io`)."""
        from tooleval_agents.appbench.catalog import load_catalog
        from tooleval_agents.graphs.appbench.tools import (
            agent_io,  # deferred: LangGraph and the tools
        )

        return agent_io(load_catalog())

    def scorer(self, split: Split, *, options: dict[str, Any] | None = None,
               context: ScoringContext | None = None) -> Scorer:
        """``options["scoring"]``: ``"strict"`` (default) or ``"paper"``; ``options["graph"]``:
        the graph metrics (default: with ``strict`` only).

        The profile scores :func:`tooleval_agents.evaluators.appbench.scoring.answer_text` of the
        outputs (``paper``: the raw answer ``raw_outputs[-1]``, as the official script saw it); the
        executed success always runs the canonical ``prediction``, and the trajectory matches
        compare its executed calls (concrete values) with the gold's
        (:mod:`tooleval_agents.evaluators.trajectory`); agent runs add their tool calls and errors.
        Never raises on a malformed reference or answer: the example gets a failure score that keeps
        its gold calls in every denominator (``error`` set).
        """
        from tooleval_agents.appbench.catalog import load_catalog
        from tooleval_agents.appbench.stubs import AppExecutor
        from tooleval_agents.evaluators.appbench.execution import (
            aggregate_appbench_execution,
            execution_failure,
            score_appbench_trace,
            trajectories,
        )
        from tooleval_agents.evaluators.appbench.parse import parse_answer
        from tooleval_agents.evaluators.appbench.scoring import (
            HIGHER_IS_BETTER,
            LOWER_IS_BETTER,
            aggregate,
            answer_text,
            failure_score,
            reference_sample,
            reference_size,
            score_example,
        )
        from tooleval_agents.evaluators.trajectory import (
            COUNT_METRICS,
            aggregate_trajectory,
            score_tool_use,
            score_trajectory,
            trajectory_failure,
        )

        chosen = AppBenchScoring.model_validate(options or {})
        scoring, graph = chosen.scoring, chosen.graph
        catalog = load_catalog()

        def score(inputs: dict[str, Any], outputs: dict[str, Any],
                  reference_outputs: dict[str, Any]) -> Any:
            try:
                sample = reference_sample(inputs, reference_outputs)
            except ValueError as exc:
                n_gold = reference_size(reference_outputs)
                error = f"reference_outputs is not an AppBench output: {exc}"
                result = failure_score(n_gold, error, scoring=scoring, graph=graph)
                executed = execution_failure(n_gold, 0, error).merge(trajectory_failure(error))
            else:
                result = score_example(sample, answer_text(outputs, scoring=scoring),
                                       scoring=scoring, graph=graph)
                # Executed success: the canonical calls run on the stubs with the gold.
                calls = parse_answer(answer_text(outputs)).calls
                try:
                    executor = AppExecutor(catalog, sample)
                    trace = executor.execute(calls)
                    executed = score_appbench_trace(trace).merge(
                        score_trajectory(*trajectories(trace, executor)),
                        ExampleScore(evidence={"execution": trace.model_dump(mode="json")}))
                except Exception as exc:  # recorded with its denominators, never raised
                    error = f"could not execute: {type(exc).__name__}: {str(exc)[:300]}"
                    executed = execution_failure(len(sample.output.api_results), len(calls),
                                                 error).merge(trajectory_failure(error))
            return result.merge(executed, score_tool_use(outputs.get("trace")))

        def aggregate_all(scores: Any) -> Metrics:
            c = as_corpus(scores)  # once: each family would otherwise sum a list again
            return {**aggregate(c), **aggregate_appbench_execution(c), **aggregate_trajectory(c)}

        return Scorer(score=score, aggregate=aggregate_all,
                      headline=("success", "executed_success", "app_f1", "api_f1"),
                      count_metrics=COUNT_METRICS,
                      higher_is_better=HIGHER_IS_BETTER, lower_is_better=LOWER_IS_BETTER)

    def resources(self, data_dir: Path) -> list[dict[str, Any]]:
        """The app/API catalog: built from ``<data_dir>/sgd`` when the SGD schemas are there,
        else the shipped ``catalog.json`` (itself built from the pinned SGD schemas)."""
        from tooleval_agents.appbench.catalog import CATALOG_PATH, load_catalog

        sgd = Path(data_dir) / "sgd"
        from_sgd = (sgd / "test" / "schema.json").is_file()
        catalog = load_catalog(data_dir if from_sgd else None)
        return [{"name": "catalog", "apps": len(catalog.apps),
                 "apis": sum(len(a.apis) for a in catalog.apps.values()),
                 "source": "built from SGD schemas" if from_sgd else "shipped",
                 "path": str(sgd if from_sgd else CATALOG_PATH)}]

    def to_example(self, split: Split, record: Any) -> ExampleFields:
        # Deferred: networkx (0.15 s) is loaded only when AppBench examples are made, not by
        # every command that lists the registered benchmarks.
        from tooleval_agents.appbench.depgraph import scales

        parallel, sequential = scales(record.calls)
        return ExampleFields(
            inputs={"input": record.input},
            outputs=record.output.model_dump(mode="json"),
            metadata={  # benchmark, task, category, index and source: added by to_examples
                "apps": sorted(set(record.output.used_app)),
                "parallel_scale": parallel,
                "sequential_scale": sequential,
            },
        )


@cache
def _sources() -> dict[str, Any]:
    return json.loads(files(__package__).joinpath("sources.json").read_text(encoding="utf-8"))


BENCHMARK = AppBenchBenchmark()
