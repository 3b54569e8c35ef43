"""The UltraTool judge's one entry: :func:`ultratool_judge` gives a judge for one task
(``planning`` or ``tool_creation``) in one of its modes, and every caller (the benchmark's
scorer, ``tooleval score``, ``tooleval ultratool judge-agreement``) goes through it:

* live (``model``): a LangChain chat model judges each plan or created tool;
* replay (``judgments``): recorded judgments (the official ``eval/*.json`` or ours) are
  re-scored without a model;
* neither: corpus scores hold the offline metrics only (no judge metric: absent, not 0).

Example::

    judge = ultratool_judge("planning", lang="en", judgments=path)
    report = judge.score(records, outputs)        # replayed: report.metrics["planning"]
    live = ultratool_judge("planning", lang="en", model=ChatOpenAI(model="gpt-4o"))
    live.score_example(inputs, outputs, reference_outputs)   # one example, as the runner does
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel

from tooleval_agents.contracts import ExampleScore, Metrics
from tooleval_agents.data.datadir import resolve_data_dir
from tooleval_agents.evaluators.ultratool.judge.agreement import AgreementReport, judge_agreement
from tooleval_agents.evaluators.ultratool.judge.judge import (
    ajudge_plan,
    ajudge_tool,
    judge_plan,
    judge_tool,
    tools_to_judge,
)
from tooleval_agents.evaluators.ultratool.judge.official import official_judge_prompts
from tooleval_agents.evaluators.ultratool.judge.prompts import JudgePrompt, JudgeTask
from tooleval_agents.evaluators.ultratool.judge.replay import (
    JudgeReport,
    ReportMode,
    ascore_planning,
    ascore_tool_creation,
    replay_planning,
    replay_tool_creation,
    score_planning,
    score_tool_creation,
)
from tooleval_agents.evaluators.ultratool.judge.scores import (
    aggregate_planning,
    aggregate_tool_creation,
    planning_example_score,
    tool_creation_example_score,
)
from tooleval_agents.evaluators.ultratool.planning_structure import prediction_text
from tooleval_agents.results.corpus import Scores
from tooleval_agents.ultratool.records import Lang

Prompts = Literal["ours", "official"]
"""The live judge's prompts: ours, or the official templates read from the fetched
``evaluation/config.py`` (:mod:`tooleval_agents.evaluators.ultratool.judge.official`)."""


@dataclass(frozen=True)
class UltraToolJudge:
    """A judge for one task and language (see :func:`ultratool_judge`)."""

    task: JudgeTask
    lang: Lang | None = None
    model: BaseChatModel | None = None
    """The live judge; None: replay or structure-only."""
    judgments: Path | None = None
    """Recorded judgments to replay (with ``model``: the ones :meth:`agreement` compares)."""
    prompt_set: JudgePrompt | None = None
    """The live judge's prompts; None: ours."""
    max_retries: int = 2
    structured: bool = True

    @property
    def mode(self) -> ReportMode:
        """Where the judge scores come from (a live judge wins for one example)."""
        if self.model is not None:
            return "judge"
        return "replay" if self.judgments is not None else "structure_only"

    def _live(self) -> BaseChatModel:
        if self.model is None:
            raise ValueError(f"{self.task} is scored by an LLM judge: pass a judge model "
                             "(--judge provider:model) or re-score recorded judgments")
        return self.model

    def _options(self) -> dict[str, Any]:
        return {"lang": self.lang, "max_retries": self.max_retries,
                "structured": self.structured, "prompt_set": self.prompt_set}

    # One example, judged live (the runner's scorer).

    def score_example(self, inputs: dict[str, Any], outputs: dict[str, Any],
                      reference_outputs: dict[str, Any]) -> ExampleScore:
        """The judge's scores of one example (a plan, or every gold step's created tool)."""
        model = self._live()
        if self.task == "planning":
            return planning_example_score(judge_plan(
                model, question=inputs["input"], reference=reference_outputs["reference"],
                prediction=prediction_text(outputs), **self._options()))
        # The official first-match rule pairs each gold step with its created tool.
        return tool_creation_example_score([
            judge_tool(model, step=pair.step, reference_tool=pair.reference_tool,
                       created_tool=pair.created_tool, **self._options())
            for pair in tools_to_judge(outputs, reference_outputs)])

    async def ascore_example(self, inputs: dict[str, Any], outputs: dict[str, Any],
                             reference_outputs: dict[str, Any]) -> ExampleScore:
        """Async :meth:`score_example`."""
        model = self._live()
        if self.task == "planning":
            return planning_example_score(await ajudge_plan(
                model, question=inputs["input"], reference=reference_outputs["reference"],
                prediction=prediction_text(outputs), **self._options()))
        return tool_creation_example_score([
            await ajudge_tool(model, step=pair.step, reference_tool=pair.reference_tool,
                              created_tool=pair.created_tool, **self._options())
            for pair in tools_to_judge(outputs, reference_outputs)])

    def aggregate(self, scores: Scores) -> Metrics:
        """The judge's corpus metrics of per-example scores."""
        return (aggregate_planning if self.task == "planning" else aggregate_tool_creation)(scores)

    # A corpus: records and their outputs (``tooleval score``).

    def score(self, records: Sequence[Any], outputs: Sequence[Any], *, max_concurrency: int = 4,
              judgments_out: Path | None = None) -> JudgeReport:
        """Score a task's outputs, aligned with its records: replayed, judged live
        (``max_concurrency`` threads; ``judgments_out`` keeps the judgments for a later
        replay) or structure-only, by :attr:`mode`."""
        fn = score_planning if self.task == "planning" else score_tool_creation
        return fn(list(records), list(outputs), **self._corpus(max_concurrency, judgments_out))

    async def ascore(self, records: Sequence[Any], outputs: Sequence[Any], *,
                     max_concurrency: int = 4, judgments_out: Path | None = None) -> JudgeReport:
        """Async :meth:`score` (``max_concurrency`` concurrent judge calls)."""
        fn = ascore_planning if self.task == "planning" else ascore_tool_creation
        return await fn(list(records), list(outputs),
                        **self._corpus(max_concurrency, judgments_out))

    def _corpus(self, max_concurrency: int, judgments_out: Path | None) -> dict[str, Any]:
        if self.lang is None:
            raise ValueError(f"scoring {self.task} needs the language (en or zh) for the judge "
                             "prompts")
        return {"judge": self.model, "judgments_path": self.judgments, "lang": self.lang,
                "max_retries": self.max_retries, "max_concurrency": max_concurrency,
                "structured": self.structured, "judgments_out": judgments_out}

    def replay(self) -> JudgeReport:
        """Re-score the recorded judgments alone, without the records (the official planning
        files hold the judged plans: their structure metrics are reported too)."""
        if self.judgments is None:
            raise ValueError("replay needs recorded judgments")
        fn = replay_planning if self.task == "planning" else replay_tool_creation
        return fn(self.judgments, lang=self.lang)

    async def agreement(self, *, limit: int = 50, concurrency: int = 4, n_boot: int = 1000,
                        seed: int = 0, on_judged: Callable[[int, int], None] | None = None,
                        ) -> AgreementReport:
        """Judge the first ``limit`` usable recorded plans again live and correlate the two
        judges per dimension (planning; ``on_judged(done, total)`` after each judgment)."""
        if self.task != "planning" or self.judgments is None:
            raise ValueError("agreement compares recorded planning judgments with a live judge")
        return await judge_agreement(self.judgments, self._live(), limit=limit, lang=self.lang,
                                     concurrency=concurrency, n_boot=n_boot, seed=seed,
                                     prompt_set=self.prompt_set, on_judged=on_judged)


def ultratool_judge(task: JudgeTask, *, lang: Lang | None = None,
                    model: BaseChatModel | None = None, judgments: Path | None = None,
                    prompts: Prompts = "ours", data_dir: Path | None = None,
                    max_retries: int = 2, structured: bool = True) -> UltraToolJudge:
    """The UltraTool judge of ``task``: live with ``model``, replaying ``judgments``, or
    neither (see the module docstring). ``prompts="official"`` reads the official templates
    from ``data_dir`` (the data directory, resolved as every command resolves it);
    ``max_retries`` more attempts after an unusable answer; ``structured``: ask for a schema
    when the model supports it."""
    if task not in ("planning", "tool_creation"):
        raise ValueError(f"the UltraTool judge scores planning or tool_creation, not {task!r}")
    prompt_set = (official_judge_prompts(resolve_data_dir(data_dir)) if prompts == "official"
                  else None)
    return UltraToolJudge(task=task, lang=lang, model=model,
                          judgments=None if judgments is None else Path(judgments),
                          prompt_set=prompt_set, max_retries=max_retries, structured=structured)


__all__ = ["Prompts", "UltraToolJudge", "ultratool_judge"]
