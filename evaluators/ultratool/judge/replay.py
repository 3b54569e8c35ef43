"""Judge-based UltraTool scores without a model: re-score recorded judgments; and the
``planning`` / ``tool_creation`` entry points the UltraTool scorer calls.

Recorded judgments come in two JSON Lines formats, told apart per line:

* the official ``eval/planning_eval.json``: ``{"data": {"data": record, "init output": str},
  "eval": [7 dicts]}``, line i = sample i; the scores are read by key (``Accuracy Score`` ...
  ``Overall Score`` in English, ``准确性分数`` ... ``总分`` in Chinese), not by position;
* our own :class:`~tooleval_agents.evaluators.ultratool.judge.judge.Judgment` records (see
:func:`write_judgments`), aligned by
  their ``index`` (and ``step`` for tool creation).

Counting rule (every sample stays in the denominator): ``planning`` = mean over *all* samples of
overall x 10. Each recorded score is used when it is a number in 1-10; a missing, non-numeric or
out-of-range score is never clamped: it counts 0 for its own metric and the judgment is reported
as a judge error (``planning_judge_errors``; ``planning_judged`` is the mean over the samples
without one). This per-score rule is what reproduces the paper: line 221 of the zh GPT-3.5 file
has every dimension scored 0 (out of range) but a valid overall 1; the official scorer averaged
the raw values, giving 69.50, and counting that whole judgment as 0 would give 69.49. With it,
the published judgments give exactly the Table 2 cells 69.50 / 76.39 (zh GPT-3.5 / GPT-4) and
69.74 / 74.07 (en), and the Table 4 per-dimension means.

Example::

    report = replay_planning(data_dir / "ultratool/predictions/English-dataset/gpt-4/eval/"
                             "planning_eval.json")
    round(report.metrics["planning"], 2)  # 74.07
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal, TypeVar

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field, ValidationError

from tooleval_agents.contracts import ExampleScore, Metrics, Part
from tooleval_agents.data.jsonio import iter_jsonl, parse_json
from tooleval_agents.errors import DataFormatError
from tooleval_agents.evaluators.ultratool.judge.judge import (
    JudgeTask,
    Judgment,
    aggregate_planning,
    aggregate_tool_creation,
    ajudge_plan,
    ajudge_tool,
    created_tools,
    detect_lang,
    judge_plan,
    judge_tool,
    judgment_from_object,
    match_created,
    planning_example_score,
    tool_creation_example_score,
)
from tooleval_agents.evaluators.ultratool.planning_structure import (
    aggregate_plan_structure,
    prediction_text,
    score_plan_structure,
)
from tooleval_agents.results.corpus import as_corpus
from tooleval_agents.ultratool.records import Lang, ToolSkeleton, step_id

ReportMode = Literal["replay", "judge", "structure_only"]
"""Where the judge scores come from: recorded judgments, a live judge, or none at all."""

STRUCTURE_ONLY_NOTE = ("no judge and no recorded judgments: the judge metric is absent (not 0); "
                       "only the offline metrics are reported")


class JudgeReport(BaseModel):
    """Corpus result of a judged task."""

    task: JudgeTask
    """``planning`` or ``tool_creation``."""
    mode: ReportMode
    """``replay``, ``judge`` or ``structure_only`` (no judge metric at all)."""
    lang: Lang | None = None
    """Language of the samples, when known."""
    n: int
    """Samples scored (the denominator of per-sample means)."""
    metrics: Metrics = Field(default_factory=dict)
    """Metric name -> value; judge metrics are x10 scores (0-100)."""
    judge_errors: int = 0
    """Items whose judgment is missing, unparseable or out of range (each counts 0)."""
    missing_predictions: int = 0
    """Items with nothing to judge (empty plan, no created tool): counted 0, not judged."""
    judgments: list[Judgment] = Field(default_factory=list)
    """Every judgment (planning: one per sample; tool creation: one per gold step)."""
    examples: list[ExampleScore] = Field(default_factory=list)
    """Per-sample scores (judge and offline metrics merged)."""
    notes: list[str] = Field(default_factory=list)
    """How the numbers were obtained."""


class PlanningReport(JudgeReport):
    """Planning: ``planning`` (mean overall x10), ``planning_<dimension>``, structure metrics."""

    task: JudgeTask = "planning"


class ToolCreationReport(JudgeReport):
    """Tool creation: ``tool_creation`` pooled over gold steps, ``tool_creation_<dimension>``."""

    task: JudgeTask = "tool_creation"


class RecordedJudgment(BaseModel):
    """A judgment read from a file, with what the official format also stores."""

    line: int
    """1-based line in the file."""
    official: bool
    """Read from the official ``{data, eval}`` format (aligned by line, not by ``index``)."""
    judgment: Judgment
    """The judgment (``error`` set when the line is unusable)."""
    question: str | None = None
    """The judged question (official format)."""
    reference: str | None = None
    """The gold plan (official format)."""
    prediction: str | None = None
    """The judged model output (official format)."""


def _get(obj: Any, *keys: str) -> Any:
    for key in keys:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def read_judgments(path: Path, task: JudgeTask = "planning",
                   lang: Lang | None = None) -> list[RecordedJudgment]:
    """Read recorded judgments (official ``planning_eval.json`` lines or :class:`Judgment` lines).

    A line that is not valid JSON, has neither format or holds unusable scores becomes a
    judgment with ``error`` (naming file and line), so it counts 0 instead of vanishing.

    Raises:
        DataFormatError: the file is not UTF-8 text.
    """
    path = Path(path)
    out: list[RecordedJudgment] = []
    for number, text in iter_jsonl(path):
        where = f"{path.name}:{number}"
        try:
            obj = parse_json(text)
        except json.JSONDecodeError as exc:
            out.append(_broken(number, task, lang, f"{where}: invalid JSON ({exc.msg})"))
            continue
        if isinstance(obj, dict) and "eval" in obj:
            question = _get(obj, "data", "data", "input")
            # The judge's keys tell the language (English questions can hold Chinese names).
            line_lang = lang or detect_lang(*_keys(obj["eval"]))
            judgment = judgment_from_object(obj["eval"], task, lang=line_lang,
                                            raw=json.dumps(obj["eval"], ensure_ascii=False))
            update: dict[str, Any] = {"index": len(out)}
            if judgment.error:
                update["error"] = f"{where}: {judgment.error}"
            prediction = _get(obj, "data", "init output")
            out.append(RecordedJudgment(
                line=number, official=True, judgment=judgment.model_copy(update=update),
                question=question if isinstance(question, str) else None,
                reference=_str_or_none(_get(obj, "data", "data", "reference")),
                prediction=prediction if isinstance(prediction, str) else None))
        elif isinstance(obj, dict) and obj.get("task") == task:
            try:
                judgment = Judgment.model_validate(obj)
            except ValidationError as exc:
                msg = exc.errors(include_url=False)[0]["msg"]
                out.append(_broken(number, task, lang, f"{where}: invalid judgment ({msg})",
                                   index=obj.get("index"), step=obj.get("step")))
                continue
            out.append(RecordedJudgment(line=number, official=False, judgment=judgment))
        else:
            out.append(_broken(number, task, lang,
                               f"{where}: neither an official {{data, eval}} line nor a "
                               f"{task} Judgment"))
    return out


def _keys(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [str(k) for k in node]
    if isinstance(node, list):
        return [k for item in node for k in _keys(item)]
    return []


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _broken(line: int, task: JudgeTask, lang: Lang | None, error: str, index: Any = None,
            step: Any = None) -> RecordedJudgment:
    return RecordedJudgment(line=line, official=False, judgment=Judgment(
        task=task, lang=lang or "en", error=error,
        index=index if isinstance(index, int) else None,
        step=step if isinstance(step, str) else None))


def write_judgments(path: Path, judgments: Sequence[Judgment]) -> None:
    """Write judgments as JSON Lines (UTF-8), readable by :func:`read_judgments`."""
    Path(path).write_text(
        "".join(j.model_dump_json() + "\n" for j in judgments), encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# Planning


def _merge(a: ExampleScore, b: ExampleScore | None) -> ExampleScore:
    return a if b is None else a.merge(b)


def _planning_report(mode: ReportMode, lang: Lang | None, judgments: Sequence[Judgment] | None,
                     structure: Sequence[ExampleScore] | None, notes: list[str]) -> PlanningReport:
    metrics: Metrics = {}
    judge_scores = [planning_example_score(j) for j in judgments] if judgments is not None else []
    if judgments is not None:
        metrics.update(aggregate_planning(judge_scores))
    if structure is not None:
        metrics.update(aggregate_plan_structure(structure))
    n = len(judgments) if judgments is not None else len(structure or [])
    if judge_scores:
        paired: Sequence[ExampleScore | None] = structure if structure is not None else [None] * n
        examples = [_merge(j, s) for j, s in zip(judge_scores, paired, strict=True)]
    else:
        examples = list(structure or [])
    return PlanningReport(
        mode=mode, lang=lang, n=n, metrics=metrics, notes=notes, examples=examples,
        judgments=list(judgments or []),
        judge_errors=sum(1 for j in judgments or [] if j.error is not None),
        missing_predictions=sum(1 for j in judgments or [] if j.missing_prediction))


def replay_planning(path: Path, *, lang: Lang | None = None) -> PlanningReport:
    """Re-score a file of recorded planning judgments (no model involved).

    For official files, the structure metrics of the judged outputs (``init output`` against
    the reference) are reported too. See the module docstring for how errors count.
    """
    entries = read_judgments(Path(path), "planning", lang)
    judgments = [e.judgment for e in entries]
    structure: list[ExampleScore] | None = None
    if entries and all(e.official and e.reference is not None for e in entries):
        structure = [score_plan_structure(e.prediction, e.reference or "") for e in entries]
    langs = {j.lang for j in judgments if j.error is None}
    found_lang: Lang | None = lang or (next(iter(langs)) if len(langs) == 1 else None)
    notes = [f"replayed {len(entries)} recorded judgments from {Path(path).name}; a missing or "
             "unusable judgment counts 0 (see planning_judge_errors, planning_judged)"]
    return _planning_report("replay", found_lang, judgments, structure, notes)


PlanningRecordLike = Any
"""A :class:`~tooleval_agents.ultratool.records.PlanningRecord` or its official dict."""


def _plan_fields(record: PlanningRecordLike) -> tuple[str, str]:
    if isinstance(record, dict):
        return str(record.get("input", "")), str(record.get("reference", ""))
    return str(record.input), str(record.reference)


def _check_lengths(records: Sequence[Any], outputs: Sequence[Any]) -> None:
    if len(records) != len(outputs):
        raise ValueError(f"{len(records)} records but {len(outputs)} outputs: they must be "
                         "aligned one to one (use None for a missing output)")


def _replayed_planning(path: Path, records: Sequence[PlanningRecordLike],
                       lang: Lang) -> list[Judgment]:
    entries = read_judgments(Path(path), "planning", lang)
    if entries and all(not e.official and e.judgment.index is not None for e in entries):
        by_index = {e.judgment.index: e.judgment for e in entries}
        return [by_index.get(i) or Judgment(task="planning", lang=lang,
                                            error=f"no recorded judgment for sample {i}")
                for i in range(len(records))]
    if len(entries) != len(records):
        raise DataFormatError(path, f"{len(entries)} recorded judgments for {len(records)} "
                              "records; line i must be the judgment of sample i")
    for i, (entry, record) in enumerate(zip(entries, records, strict=True)):
        question, _ = _plan_fields(record)
        if entry.question is not None and entry.question.strip() != question.strip():
            raise DataFormatError(path, f"judged question differs from record {i}",
                                  line=entry.line, field="data.data.input")
    return [e.judgment for e in entries]


def score_planning(records: Sequence[PlanningRecordLike], outputs: Sequence[Any], *,
                   judge: BaseChatModel | None = None, judgments_path: Path | None = None,
                   lang: Lang, max_retries: int = 2, max_concurrency: int = 4,
                   structured: bool = True,
                   judgments_out: Path | None = None) -> PlanningReport:
    """Score UltraTool planning outputs.

    * ``judgments_path``: replay recorded judgments (official or ours), aligned with ``records``;
    * ``judge``: judge live (``max_concurrency`` threads), optionally saving the judgments to
      ``judgments_out`` for later replay;
    * neither: only the offline structure metrics, ``mode="structure_only"``, no ``planning``
      metric at all (absent, not 0).

    The structure metrics (:mod:`tooleval_agents.evaluators.ultratool.planning_structure`) are
    reported in every mode.

    Args:
        records: planning records (or their official dicts) in test-set order.
        outputs: per record, the model output (a string, a dict holding it, or None).
        lang: language of the samples (prompt language).
    """
    _check_lengths(records, outputs)
    if judge is not None and judgments_path is not None:
        raise ValueError("give either judge or judgments_path, not both")
    fields = [_plan_fields(r) for r in records]
    predictions = [prediction_text(o) for o in outputs]
    structure = [score_plan_structure(p, ref) for p, (_, ref) in zip(predictions, fields,
                                                                      strict=True)]
    if judgments_path is not None:
        judgments = _replayed_planning(Path(judgments_path), records, lang)
        notes = [f"replayed judgments from {Path(judgments_path).name}"]
        return _planning_report("replay", lang, judgments, structure, notes)
    if judge is None:
        return _planning_report("structure_only", lang, None, structure, [STRUCTURE_ONLY_NOTE])

    def one(i: int) -> Judgment:
        question, reference = fields[i]
        return judge_plan(judge, question=question, reference=reference,
                          prediction=predictions[i], lang=lang, max_retries=max_retries,
                          structured=structured, index=i)

    with ThreadPoolExecutor(max_workers=max(1, max_concurrency)) as pool:
        judgments = list(pool.map(one, range(len(records))))
    if judgments_out is not None:
        write_judgments(Path(judgments_out), judgments)
    return _planning_report("judge", lang, judgments, structure, _judge_notes(judge, max_retries))


T = TypeVar("T")


async def _bounded(factories: Sequence[Callable[[], Awaitable[T]]], limit: int) -> list[T]:
    semaphore = asyncio.Semaphore(max(1, limit))

    async def run(factory: Callable[[], Awaitable[T]]) -> T:
        async with semaphore:
            return await factory()

    return list(await asyncio.gather(*(run(f) for f in factories)))


def _judge_notes(judge: BaseChatModel, max_retries: int) -> list[str]:
    return [f"judged live by {type(judge).__name__} with up to {max_retries} retries; a judge "
            "error counts 0 and is reported in the *_judge_errors metric"]


async def ascore_planning(records: Sequence[PlanningRecordLike], outputs: Sequence[Any], *,
                          judge: BaseChatModel | None = None,
                          judgments_path: Path | None = None, lang: Lang, max_retries: int = 2,
                          max_concurrency: int = 4, structured: bool = True,
                          judgments_out: Path | None = None) -> PlanningReport:
    """Async :func:`score_planning` (live judging with ``max_concurrency`` concurrent calls)."""
    if judge is None:
        return score_planning(records, outputs, judgments_path=judgments_path, lang=lang)
    _check_lengths(records, outputs)
    if judgments_path is not None:
        raise ValueError("give either judge or judgments_path, not both")
    fields = [_plan_fields(r) for r in records]
    predictions = [prediction_text(o) for o in outputs]
    structure = [score_plan_structure(p, ref) for p, (_, ref) in zip(predictions, fields,
                                                                      strict=True)]

    def factory(i: int) -> Callable[[], Awaitable[Judgment]]:
        question, reference = fields[i]
        return lambda: ajudge_plan(judge, question=question, reference=reference,
                                   prediction=predictions[i], lang=lang,
                                   max_retries=max_retries, structured=structured, index=i)

    judgments = await _bounded([factory(i) for i in range(len(records))], max_concurrency)
    if judgments_out is not None:
        write_judgments(Path(judgments_out), judgments)
    return _planning_report("judge", lang, judgments, structure, _judge_notes(judge, max_retries))


# ---------------------------------------------------------------------------------------------
# Tool creation


class _GoldTool(BaseModel):
    index: int
    step: str
    reference_tool: Any
    created_tool: Any


def _gold_tools(records: Sequence[Any], outputs: Sequence[Any]) -> list[list[_GoldTool]]:
    out: list[list[_GoldTool]] = []
    for i, (record, output) in enumerate(zip(records, outputs, strict=True)):
        gold = record.official()["reference"] if hasattr(record, "official") else \
            (record.get("reference") if isinstance(record, dict) else None)
        predicted = created_tools(output)
        items = [g for g in gold or [] if isinstance(g, dict)]
        out.append([_GoldTool(index=i, step=str(g.get("step", "")), reference_tool=g.get("tool"),
                              created_tool=match_created(str(g.get("step", "")), predicted))
                    for g in items])
    return out


def _has_tool(created: Any) -> bool:
    return isinstance(created, dict) and bool(created)


def _tool_report(mode: ReportMode, lang: Lang | None, grouped: Sequence[Sequence[Judgment]],
                 notes: list[str]) -> ToolCreationReport:
    examples = [tool_creation_example_score(g) for g in grouped]
    flat = [j for g in grouped for j in g]
    return ToolCreationReport(
        mode=mode, lang=lang, n=len(grouped), metrics=aggregate_tool_creation(examples),
        judgments=flat, examples=examples, notes=notes,
        judge_errors=sum(1 for j in flat if j.error is not None),
        missing_predictions=sum(1 for j in flat if j.missing_prediction))


def _structure_only_tools(gold: Sequence[Sequence[_GoldTool]],
                          lang: Lang | None) -> ToolCreationReport:
    examples: list[ExampleScore] = []
    for items in gold:
        answered = [g for g in items if _has_tool(g.created_tool)]
        valid = 0
        for g in answered:
            try:
                ToolSkeleton.model_validate(g.created_tool)
                valid += 1
            except ValidationError:
                pass
        total = float(len(items))
        examples.append(ExampleScore(parts={
            "tool_creation_answered": Part(hits=float(len(answered)), total=total),
            "tool_creation_schema_valid": Part(hits=float(valid), total=total)}))
    c = as_corpus(examples)
    metrics = {k: c.pooled(k) for k in ("tool_creation_answered", "tool_creation_schema_valid")}
    return ToolCreationReport(mode="structure_only", lang=lang, n=len(gold), metrics=metrics,
                              examples=examples, notes=[
                                  STRUCTURE_ONLY_NOTE,
                                  "tool_creation_answered: share of gold steps with a created "
                                  "tool; tool_creation_schema_valid: share whose tool has name, "
                                  "description, arguments and results"])


def _missing_tool(g: _GoldTool, lang: Lang) -> Judgment:
    return Judgment(task="tool_creation", lang=lang, missing_prediction=True, index=g.index,
                    step=g.step)


def score_tool_creation(records: Sequence[Any], outputs: Sequence[Any], *,
                        judge: BaseChatModel | None = None, judgments_path: Path | None = None,
                        lang: Lang, max_retries: int = 2, max_concurrency: int = 4,
                        structured: bool = True,
                        judgments_out: Path | None = None) -> ToolCreationReport:
    """Score UltraTool tool-creation outputs, one judgment per gold step.

    Each gold step is matched to the first predicted ``{step, tool}`` with the same step id; a
    missing or non-dict tool counts 0 without judging. Replay reads our Judgment records keyed by
    ``(index, step id)``. With neither judge nor judgments: ``tool_creation_answered`` and
    ``tool_creation_schema_valid`` only (``mode="structure_only"``).

    Args:
        records: tool-creation records (or their official dicts) in test-set order.
        outputs: per record, the predicted list, model text holding it, or None.
        lang: language of the samples.
    """
    _check_lengths(records, outputs)
    if judge is not None and judgments_path is not None:
        raise ValueError("give either judge or judgments_path, not both")
    gold = _gold_tools(records, outputs)
    if judgments_path is not None:
        entries = read_judgments(Path(judgments_path), "tool_creation", lang)
        recorded = {(e.judgment.index, step_id(e.judgment.step or "")): e.judgment
                    for e in entries if e.judgment.index is not None}
        grouped = [[_missing_tool(g, lang) if not _has_tool(g.created_tool) else
                    recorded.get((g.index, step_id(g.step))) or Judgment(
                        task="tool_creation", lang=lang, index=g.index, step=g.step,
                        error=f"no recorded judgment for sample {g.index} step {g.step!r}")
                    for g in items] for items in gold]
        return _tool_report("replay", lang, grouped,
                            [f"replayed judgments from {Path(judgments_path).name}"])
    if judge is None:
        return _structure_only_tools(gold, lang)

    flat = [g for items in gold for g in items]

    def one(g: _GoldTool) -> Judgment:
        return judge_tool(judge, step=g.step, reference_tool=g.reference_tool,
                          created_tool=g.created_tool, lang=lang, max_retries=max_retries,
                          structured=structured, index=g.index)

    with ThreadPoolExecutor(max_workers=max(1, max_concurrency)) as pool:
        judged = list(pool.map(one, flat))
    return _finish_tools(gold, judged, lang, judge, max_retries, judgments_out)


def _finish_tools(gold: Sequence[Sequence[_GoldTool]], judged: Sequence[Judgment], lang: Lang,
                  judge: BaseChatModel, max_retries: int,
                  judgments_out: Path | None) -> ToolCreationReport:
    if judgments_out is not None:
        write_judgments(Path(judgments_out), judged)
    grouped: list[list[Judgment]] = []
    position = 0
    for items in gold:
        grouped.append(list(judged[position: position + len(items)]))
        position += len(items)
    return _tool_report("judge", lang, grouped, _judge_notes(judge, max_retries))


async def ascore_tool_creation(records: Sequence[Any], outputs: Sequence[Any], *,
                               judge: BaseChatModel | None = None,
                               judgments_path: Path | None = None, lang: Lang,
                               max_retries: int = 2, max_concurrency: int = 4,
                               structured: bool = True,
                               judgments_out: Path | None = None) -> ToolCreationReport:
    """Async :func:`score_tool_creation`."""
    if judge is None:
        return score_tool_creation(records, outputs, judgments_path=judgments_path, lang=lang)
    _check_lengths(records, outputs)
    if judgments_path is not None:
        raise ValueError("give either judge or judgments_path, not both")
    gold = _gold_tools(records, outputs)
    flat = [g for items in gold for g in items]

    def factory(g: _GoldTool) -> Callable[[], Awaitable[Judgment]]:
        return lambda: ajudge_tool(judge, step=g.step, reference_tool=g.reference_tool,
                                   created_tool=g.created_tool, lang=lang,
                                   max_retries=max_retries, structured=structured, index=g.index)

    judged = await _bounded([factory(g) for g in flat], max_concurrency)
    return _finish_tools(gold, judged, lang, judge, max_retries, judgments_out)


def replay_tool_creation(path: Path, *, lang: Lang | None = None) -> ToolCreationReport:
    """Re-score recorded tool-creation judgments grouped by sample index.

    Only the recorded items count: gold steps the file does not mention are unknown here (pass
    the records to :func:`score_tool_creation` with ``judgments_path`` to count them as 0).
    """
    entries = read_judgments(Path(path), "tool_creation", lang)
    groups: dict[int, list[Judgment]] = {}
    for e in entries:
        key = e.judgment.index if e.judgment.index is not None else -e.line
        groups.setdefault(key, []).append(e.judgment)
    return _tool_report("replay", lang, list(groups.values()),
                        [f"replayed {len(entries)} recorded judgments from {Path(path).name}"])
