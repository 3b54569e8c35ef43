"""UltraTool declared as a :class:`~tooleval_agents.registry.Benchmark`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache, lru_cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

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
from tooleval_agents.data.jsonio import iter_jsonl, parse_json
from tooleval_agents.errors import DataFormatError, DatasetMissingError, ToolevalError
from tooleval_agents.registry import Benchmark
from tooleval_agents.results.corpus import Scores, as_corpus
from tooleval_agents.ultratool.records import TASKS, Lang, UltraToolTask, _Task
from tooleval_agents.verdict import Verdict

if TYPE_CHECKING:  # the report hooks' and the judge's types (pandas, LangChain): checker only
    from tooleval_agents.evaluators.ultratool.judge import UltraToolJudge
    from tooleval_agents.results.compare import RunData
    from tooleval_agents.results.reports import ReportFigure, ReportTable

_PACKAGE = Path(__file__).resolve().parent
"""This package's folder (its bundled samples sit in ``samples/`` when installed)."""

LANGS: tuple[Lang, ...] = ("en", "zh")

# About twice the longest gold answer of each task (zh needs more tokens per character); ``raw``
# is plan_create_use, whose longest stage writes tool skeletons.
MAX_TOKENS = {"planning": 1024, "tool_creation_awareness": 512, "tool_creation": 4096,
              "tool_usage_awareness": 1024, "tool_selection": 512, "tool_usage": 2048,
              "raw": 4096}


TASK_DESCRIPTIONS = {
    "planning": "write a hierarchical plan for a complex user request",
    "tool_creation_awareness": "decide for each plan step whether a new tool must be created "
                               "because the toolset lacks one",
    "tool_creation": "write the skeletons of tools missing from the toolset",
    "tool_usage_awareness": "decide for each plan step whether it needs a tool",
    "tool_selection": "pick the tool for each plan step from a toolset",
    "tool_usage": "fill in the arguments of each step's tool call",
    "raw": "full samples: question, reference plan with tool calls, tools, domain",
}
LANGUAGE_NAMES = {"en": "English", "zh": "Chinese"}


class JudgeScoring(Options):
    """Scoring options of the judged tasks (``planning``, ``tool_creation``)."""

    prompts: Literal["ours", "official"] = "ours"
    """The judge's prompts: ours, or the official templates read from the fetched
    ``evaluation/config.py``
    (:func:`tooleval_agents.evaluators.ultratool.judge.ultratool_judge`)."""


class UltraToolBenchmark(Benchmark):
    """Six dimensions x two languages; ``raw`` (``test.json``) is listed as a task too."""

    name = "ultratool"
    title = "UltraTool"

    def describe(self, split: Split) -> str:
        return (f"{split.task} ({LANGUAGE_NAMES.get(split.subset, split.subset)}): "
                f"{TASK_DESCRIPTIONS.get(split.task, split.task)}")

    def shared_metadata(self, split: Split, data_dir: Path,
                        count: int) -> list[dict[str, Any]] | None:
        """Each sample's domain, from ``test.json`` of the same language (line i of every
        UltraTool file of a language is one sample); ``None`` when it is absent or of another
        length."""
        if split.task == "raw":
            return None  # the raw records carry their domain
        raw = self.split("raw", split.subset)
        try:
            path = self.locate(raw, data_dir).path
            domains = _domains(path, path.stat().st_mtime_ns, path.stat().st_size,
                               str(Path(data_dir).resolve()), split.subset)
        except (ToolevalError, OSError):
            return None
        return [{"domain": d} for d in domains] if len(domains) == count else None

    def splits(self) -> list[Split]:
        return [Split(self.name, t, lang, "language") for t in (*TASKS, "raw") for lang in LANGS]

    def locate(self, split: Split, data_dir: Path) -> Located:
        # Deferred, like every UltraTool module the registry does not need: the readers import
        # the rebuilder (rapidfuzz), which a run of another benchmark has no use for.
        from tooleval_agents.ultratool import loaders
        from tooleval_agents.ultratool.rebuild import rebuilt_path

        lang: Lang = split.subset  # type: ignore[assignment]
        if split.task == "raw":
            path = loaders.raw_path(data_dir, lang)
        else:
            task: UltraToolTask = split.task  # type: ignore[assignment]
            path = loaders.task_path(data_dir, task, lang)
            if task in loaders.REBUILT_TASKS and not path.is_file():
                return Located(rebuilt_path(data_dir, task, lang), "rebuilt")
        if not path.is_file():
            raise DatasetMissingError("ultratool", path, Path(data_dir))
        return Located(path, source_of(data_dir))

    def load(self, split: Split, data_dir: Path) -> Sequence[Any]:
        # The file load_task reads (official, else rebuilt), its records validated when read.
        from tooleval_agents.ultratool import loaders

        lang: Lang = split.subset  # type: ignore[assignment]
        located = self.locate(split, data_dir)
        if split.task == "raw":
            return loaders.read_raw_file(located.path, lang, located.source)
        return loaders.read_task_file(located.path, split.task,  # type: ignore[arg-type]
                                      lang, located.source)

    def explain(self, split: Split, result: Any) -> Verdict | None:
        if split.task != "tool_usage":
            return None  # the core's verdict on the task's headline metric
        from tooleval_agents.ultratool.explain import explain  # the scorer's (rapidfuzz)

        return explain(result)

    def default_strategy(self, split: Split) -> str:
        return "plan_create_use" if split.task == "raw" else "one_shot"

    def max_tokens(self, split: Split) -> int | None:
        return MAX_TOKENS.get(split.task)

    def add_commands(self, groups: Mapping[str, Any]) -> None:
        from tooleval_agents.ultratool import build_cli, cli  # deferred: Typer, only for the CLI

        groups["data build"].command("ultratool")(cli.build)
        groups["build"].command("ultratool")(build_cli.build)
        groups["score"].command("ultratool")(cli.score)
        groups["judge"].command("agreement")(cli.agreement)

    def report_tables(self, runs: Sequence[RunData]) -> list[ReportTable]:
        from tooleval_agents.ultratool.report import UltraToolLayout  # deferred: pandas, matplotlib

        return UltraToolLayout().tables(runs)

    def report_figures(self, runs: Sequence[RunData], out_dir: Path) -> list[ReportFigure]:
        from tooleval_agents.ultratool.report import UltraToolLayout  # deferred: pandas, matplotlib

        return UltraToolLayout().figures(runs, out_dir)

    def answer_formats(self) -> dict[str, tuple[tuple[str, ...], Any]]:
        from tooleval_agents.ultratool.corruptions import FORMATS

        return dict(FORMATS)  # json_steps, plan_text

    def samples_dir(self) -> Path | None:
        """The hand-written samples: ``samples/`` of the installed package (a wheel), else
        ``datasets/`` of the source checkout."""
        return find_samples("ultratool", _PACKAGE / "samples", _PACKAGE.parents[1] / "datasets")

    def data_sources(self) -> dict[str, Any]:
        """ultratool: pinned upstream files (``sources.json``)."""
        return _sources()

    def strategies(self) -> list[Strategy]:
        # Deferred: the workflows import LangGraph and the prompts.
        from tooleval_agents.graphs.ultratool.plan_create_use import PlanCreateUse
        from tooleval_agents.graphs.ultratool.protocol import UltraToolOneShot
        from tooleval_agents.graphs.ultratool.tools import UltraToolTools

        return [UltraToolOneShot(), PlanCreateUse(), UltraToolTools()]

    def agent_io(self, split: Split) -> AgentIO | None:
        """``tool_usage`` / ``tool_selection``: the example's toolset as tools, the ``tools``
        strategy's words, the agent's calls read back as the answer
        (:func:`tooleval_agents.graphs.ultratool.tools.agent_io`); the other tasks take no agent."""
        if split.task not in ("tool_usage", "tool_selection"):
            return None
        from tooleval_agents.graphs.ultratool.tools import (
            agent_io,  # deferred: LangGraph and the tools
        )

        return agent_io(split)

    def scoring_options(self, split: Split) -> type[Options] | None:
        """The judged tasks take the judge's prompt set (``prompts``)."""
        return JudgeScoring if split.task in ("planning", "tool_creation") else None

    def scorer(self, split: Split, *, options: dict[str, Any] | None = None,
               context: ScoringContext | None = None) -> Scorer:
        """Key-value metrics for the four key-value tasks; for planning the offline structure
        metrics, plus the LLM judge when ``context.judge`` is a chat model; tool creation
        needs the judge. ``options["prompts"]``: the judge's prompt set (``official``: read
        from ``context.data_dir``)."""
        context = context or ScoringContext()
        task = split.task
        if task in ("tool_creation_awareness", "tool_usage_awareness", "tool_selection",
                    "tool_usage"):
            from tooleval_agents.evaluators.ultratool import kv as ultratool_kv
            kv_score = ultratool_kv.scorer(task)  # type: ignore[arg-type]
            if task in ("tool_usage", "tool_selection"):
                return _tool_call_scorer(task, kv_score)
            return Scorer(score=kv_score,
                          aggregate=lambda scores: ultratool_kv.aggregate(task, scores),  # type: ignore[arg-type]
                          headline=ultratool_kv.metric_names(task)[:2],  # type: ignore[arg-type]
                          higher_is_better=ultratool_kv.metric_names(task))  # type: ignore[arg-type]
        if task in ("planning", "tool_creation"):
            from tooleval_agents.evaluators.ultratool.judge import ultratool_judge

            # The official templates are read only for a live judge (nothing else asks).
            official = (context.judge is not None and
                        JudgeScoring.model_validate(options or {}).prompts == "official")
            judge = ultratool_judge(task, lang=split.subset,  # type: ignore[arg-type]
                                    model=context.judge, data_dir=context.data_dir,
                                    prompts="official" if official else "ours")
            make = _planning_scorer if task == "planning" else _tool_creation_scorer
            return make(judge)
        if task == "raw":
            # The raw samples are solved end to end by the plan_create_use workflow.
            from tooleval_agents.evaluators.trajectory import COUNT_METRICS
            from tooleval_agents.evaluators.ultratool import plan_create_use as pcu
            return Scorer(score=pcu.score_plan_create_use,
                          aggregate=pcu.aggregate_plan_create_use, headline=pcu.HEADLINE,
                          count_metrics=COUNT_METRICS, higher_is_better=pcu.HIGHER_IS_BETTER,
                          lower_is_better=pcu.LOWER_IS_BETTER)
        raise KeyError(f"ultratool task {task!r} has no scorer")

    def to_example(self, split: Split, record: Any) -> ExampleFields:
        official = record.official()
        reference_keys = {"reference"} if isinstance(record, _Task) else {"plan", "tools"}
        # benchmark, task, language, index and source are added by to_examples.
        metadata = {"domain": official.get("domain")} if split.task == "raw" else {}
        return ExampleFields(
            inputs={k: v for k, v in official.items() if k not in reference_keys},
            outputs={k: v for k, v in official.items() if k in reference_keys},
            metadata=metadata,
        )


def _tool_call_scorer(task: str, kv_score: Any) -> Scorer:
    """Tool usage / selection: the key-value metrics, plus the trajectory of the answer's tool
    steps against the gold's (arguments compared for tool usage) and, for agent runs, their
    tool calls and errors."""
    from tooleval_agents.evaluators.parsing import ParseFailure, parse_list
    from tooleval_agents.evaluators.trajectory import (
        COUNT_METRICS,
        HIGHER_IS_BETTER,
        LOWER_IS_BETTER,
        aggregate_trajectory,
        score_tool_use,
        score_trajectory,
        steps_trajectory,
    )
    from tooleval_agents.evaluators.ultratool import kv as ultratool_kv

    with_args = task == "tool_usage"

    def score(inputs: dict[str, Any], outputs: dict[str, Any],
              reference_outputs: dict[str, Any]) -> ExampleScore:
        result: ExampleScore = kv_score(inputs, outputs, reference_outputs)
        prediction = outputs.get("prediction", outputs.get("output"))
        if isinstance(prediction, str):  # a raw answer (published predictions)
            parsed = parse_list(prediction)
            prediction = [] if isinstance(parsed, ParseFailure) else parsed.value
        return result.merge(
            score_trajectory(steps_trajectory(prediction, with_args=with_args),
                             steps_trajectory(reference_outputs.get("reference"),
                                              with_args=with_args),
                             args="normalised" if with_args else "ignore"),
            score_tool_use(outputs.get("trace")))

    return Scorer(score=score,
                  aggregate=lambda scores: {**ultratool_kv.aggregate(task, scores),  # type: ignore[arg-type]
                                            **aggregate_trajectory(scores)},
                  headline=ultratool_kv.metric_names(task)[:2],  # type: ignore[arg-type]
                  count_metrics=COUNT_METRICS,
                  higher_is_better=(*ultratool_kv.metric_names(task),  # type: ignore[arg-type]
                                    *HIGHER_IS_BETTER),
                  lower_is_better=LOWER_IS_BETTER)


def _planning_scorer(judge: UltraToolJudge) -> Scorer:
    """The plan's structure metrics, and the judge's when a judge model is given."""
    from tooleval_agents.evaluators.ultratool.judge import judge_metrics
    from tooleval_agents.evaluators.ultratool.planning_structure import (
        HIGHER_IS_BETTER,
        LOWER_IS_BETTER,
        aggregate_plan_structure,
        prediction_text,
        score_plan_structure,
    )

    def score(inputs: dict[str, Any], outputs: dict[str, Any],
              reference_outputs: dict[str, Any]) -> ExampleScore:
        result = score_plan_structure(prediction_text(outputs), reference_outputs["reference"])
        if judge.model is None:
            return result
        return result.merge(judge.score_example(inputs, outputs, reference_outputs))

    async def ascore(inputs: dict[str, Any], outputs: dict[str, Any],
                     reference_outputs: dict[str, Any]) -> ExampleScore:
        result = score_plan_structure(prediction_text(outputs), reference_outputs["reference"])
        return result.merge(await judge.ascore_example(inputs, outputs, reference_outputs))

    def aggregate(scores: Scores) -> Metrics:
        c = as_corpus(scores)
        out = aggregate_plan_structure(c)
        if judge.model is not None:
            out.update(judge.aggregate(c))
        return out

    live = judge.model is not None
    return Scorer(score=score, aggregate=aggregate, ascore=ascore if live else None,
                  headline=("planning",) if live else ("plan_rouge_l",),
                  higher_is_better=(*HIGHER_IS_BETTER, *judge_metrics("planning")),
                  lower_is_better=LOWER_IS_BETTER,
                  # The paper's planning score is the judge's: without one it is not a 0.
                  not_computed={} if live else {"planning": "no --judge"})


def _tool_creation_scorer(judge: UltraToolJudge) -> Scorer:
    """The judge's scores of each gold step's created tool: a judge model is needed."""
    from tooleval_agents.evaluators.ultratool.judge import judge_metrics

    if judge.model is None:
        raise ValueError("tool_creation is scored by an LLM judge: pass a judge model "
                         "(--judge provider:model) or re-score recorded judgments")
    return Scorer(score=judge.score_example, aggregate=judge.aggregate,
                  ascore=judge.ascore_example, headline=("tool_creation",),
                  higher_is_better=judge_metrics("tool_creation"))


@lru_cache(maxsize=4)
def _domains(path: Path, mtime_ns: int, size: int, data_dir: str, lang: str) -> list[Any]:
    """The ``domain`` of each line of ``test.json`` (read once per language and file version,
    not per task; only that field is read: validating 1000 whole samples for it cost half a
    second of every UltraTool run's start). A malformed line: ``DataFormatError``."""
    out = []
    for number, text in iter_jsonl(path):
        try:
            record = parse_json(text)
        except json.JSONDecodeError as exc:
            raise DataFormatError(path, f"invalid JSON ({exc.msg})", line=number) from exc
        out.append(record.get("domain") if isinstance(record, dict) else None)
    return out


@cache
def _sources() -> dict[str, Any]:
    return json.loads(files(__package__).joinpath("sources.json").read_text(encoding="utf-8"))


BENCHMARK = UltraToolBenchmark()
