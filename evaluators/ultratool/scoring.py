"""Corpus-level scoring of an UltraTool task from test records and raw model outputs.

:func:`score_task` is what the CLI (``tooleval score ultratool``) and the runner call: it parses
every output, scores it with :mod:`tooleval_agents.evaluators.ultratool.kv` (or, for the judged
tasks ``planning`` and ``tool_creation``, hands over to the judge,
:func:`tooleval_agents.evaluators.ultratool.judge.ultratool_judge`), and returns a
:class:`TaskReport` with 0-100 unrounded metrics, counts and the per-example scores.
:func:`load_predictions` reads prediction files, published or ours, and checks they line up with
the test set.

Example::

    records = load_task(data_dir, "tool_usage", "en")
    outputs = load_predictions(path, records)
    report = score_task("tool_usage", records, outputs, lang="en", parser="official")
    round(report.metrics["tool_usage"], 2)  # 83.32 for the published GPT-4 file
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from tooleval_agents.contracts import ExampleScore, Metrics, Part, exact_sum
from tooleval_agents.data.jsonio import parse_json
from tooleval_agents.errors import DataFormatError
from tooleval_agents.evaluators.parsing import (
    OfficialFamily,
    ParsedList,
    ParseFailure,
    ParserMode,
    parse_answer,
    plan_failure_kind,
)
from tooleval_agents.evaluators.ultratool.kv import (
    JSON_FORMAT,
    KV_TASKS,
    KVTask,
    metric_names,
    scorer,
)
from tooleval_agents.evaluators.ultratool.kv import aggregate as aggregate_kv
from tooleval_agents.ultratool.records import Lang, UltraToolTask

TABLE2_COLUMNS: tuple[str, ...] = (
    "planning",
    "tool_creation_awareness_global",
    "tool_creation_awareness_local",
    "tool_creation",
    "tool_usage_awareness_global",
    "tool_usage_awareness_local",
    "tool_selection_global",
    "tool_selection_local",
    "tool_usage",
)
"""The nine numeric columns of the paper's Table 2, whose mean is the *Overall* column."""

class TaskCounts(BaseModel):
    """How many samples, steps and failures a score is based on."""

    samples: int
    """Examples scored (every one counts in every denominator)."""
    steps: int = 0
    """Gold steps pooled by the local metrics (0 for planning)."""
    missing_outputs: int = 0
    """Samples without an output (None: inference failed or absent from the file); scored
    as empty answers."""
    parse_failures: int = 0
    """Outputs from which no list (no numbered plan, for planning) could be read."""
    parse_failure_kinds: dict[str, int] = Field(default_factory=dict)
    """Parse failure kind -> count (``no_list_found``, ``invalid_json``, ...)."""
    repaired: int = 0
    """Outputs read only after structural repairs (brackets, quotes, commas, truncation...)."""
    truncated: int = 0
    """Outputs cut off before the end of their list (their complete items are scored)."""
    error_kinds: dict[str, int] = Field(default_factory=dict)
    """The paper's error types -> number of examples showing them."""
    scoring_errors: int = 0
    """Examples that could not be scored (counted 0, never dropped)."""
    judge_errors: int = 0
    """Judged tasks: judgments missing or unusable (each counts 0)."""
    missing_predictions: int = 0
    """Judged tasks: items with nothing to judge (counted 0)."""


class TaskReport(BaseModel):
    """The result of scoring one UltraTool task."""

    benchmark: Literal["ultratool"] = "ultratool"
    """Always ``ultratool``."""
    task: UltraToolTask
    """The dimension scored."""
    lang: Lang | None = None
    """Language of the test set, when known."""
    parser: ParserMode = "robust"
    """How answers were read: ``robust`` (default) or ``official`` (the paper's post-processing,
    to reproduce published numbers)."""
    metrics: Metrics
    """Metric name -> 0-100, unrounded (e.g. ``tool_usage_awareness_global``)."""
    counts: TaskCounts
    """Samples, steps and failures."""
    examples: list[ExampleScore] = Field(default_factory=list)
    """Per-example scores, in test-set order."""
    notes: list[str] = Field(default_factory=list)
    """How the numbers were obtained, when it needs saying."""

    def summary(self) -> dict[str, Any]:
        """The report without per-example scores (what ``--json`` prints)."""
        return {"benchmark": self.benchmark, "task": self.task, "lang": self.lang,
                "parser": self.parser, "metrics": self.metrics,
                "counts": self.counts.model_dump(), "notes": self.notes}


def overall(metrics: Mapping[str, float | None]) -> float | None:
    """The paper's *Overall*: the mean of the nine Table 2 columns; None unless all are present.

    >>> overall({c: 50.0 for c in TABLE2_COLUMNS})
    50.0
    >>> overall({"tool_usage": 80.0}) is None
    True
    """
    values = [metrics.get(c) for c in TABLE2_COLUMNS]
    if any(v is None for v in values):  # a column not run, or n/a
        return None
    return exact_sum(v for v in values if v is not None) / len(TABLE2_COLUMNS)


def _official(record: Any) -> dict[str, Any]:
    if isinstance(record, dict):
        return record
    official = getattr(record, "official", None)
    if callable(official):
        result = official()
        if isinstance(result, dict):
            return result
    raise TypeError(f"expected an UltraTool record or its official dict, got {type(record)}")


def _structurally_repaired(parsed: ParsedList) -> bool:
    return bool(set(parsed.repairs) - {"python_literal", "surrounding_text"})


def _failed_example(task: KVTask, n_steps: int, error: str) -> ExampleScore:
    """An example that could not be scored: 0 in every metric, still in every denominator."""
    parts = {name: Part(hits=0.0, total=1.0) for name in metric_names(task)}
    if task == "tool_usage":
        parts["tool_usage"] = Part(hits=0.0, total=float(n_steps))
    else:
        parts[f"{task}_local"] = Part(hits=0.0, total=float(n_steps))
    return ExampleScore(scores={name: 0.0 for name in metric_names(task)}, parts=parts,
                        error=error)


def score_kv_task(task: KVTask, records: Sequence[Any], outputs: Sequence[Any], *,
                  lang: Lang | None = None, parser: ParserMode = "robust") -> TaskReport:
    """Score a key-value task (awareness, selection, usage); see :func:`score_task`."""
    score = scorer(task)
    family: OfficialFamily = "param" if task == "tool_usage" else "aware"
    examples: list[ExampleScore] = []
    steps = 0
    failures: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    repaired = truncated = scoring_errors = 0
    for record, output in zip(records, outputs, strict=True):
        official = _official(record)
        reference = official.get("reference")
        n_steps = len(reference) if isinstance(reference, list) else 0
        steps += n_steps
        parsed = parse_answer(output, mode=parser, family=family)
        if isinstance(parsed, ParseFailure):
            failures[parsed.kind] += 1
        else:
            repaired += bool(parsed.repairs) and _structurally_repaired(parsed)
            truncated += parsed.truncated
        try:
            # The scorers read the toolset from the inputs, never the reference.
            result = score(official, {"output": output}, {"reference": reference}, parsed=parsed)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            # A malformed record must not stop the run: 0 here, reported in the counts.
            scoring_errors += 1
            result = _failed_example(task, n_steps, f"{type(exc).__name__}: {exc}")
            if isinstance(parsed, ParseFailure):
                result.parts[JSON_FORMAT] = Part(hits=0.0, total=1.0)
            else:
                result.parts[JSON_FORMAT] = Part(hits=1.0, total=1.0)
        kinds = result.labels.get("error_kinds")
        if kinds:
            errors.update(filter(None, kinds.split(",")))
        examples.append(result)
    counts = TaskCounts(samples=len(examples), steps=steps,
                        missing_outputs=sum(o is None for o in outputs),
                        parse_failures=sum(failures.values()),
                        parse_failure_kinds=dict(failures), repaired=repaired,
                        truncated=truncated, error_kinds=dict(errors),
                        scoring_errors=scoring_errors)
    notes = ["parser=official: the paper's post-processing, defects included (use only to "
             "compare with published numbers)"] if parser == "official" else []
    return TaskReport(task=task, lang=lang, parser=parser, metrics=aggregate_kv(task, examples),
                      counts=counts, examples=examples, notes=notes)


def score_judged_task(task: Literal["planning", "tool_creation"], records: Sequence[Any],
                      outputs: Sequence[Any], *, lang: Lang | None,
                      judgments: Path | None = None) -> TaskReport:
    """Planning / tool creation through the judge (replaying ``judgments`` if given; without
    them only its offline metrics are reported)."""
    # Deferred: the judge loads LangChain, which the key-value tasks never need.
    from tooleval_agents.evaluators.ultratool.judge import ultratool_judge

    if lang is None:
        raise ValueError(f"scoring {task} needs the language (en or zh) for the judge prompts")
    report = ultratool_judge(task, lang=lang, judgments=judgments).score(records, outputs)
    failures: Counter[str] = Counter()
    steps = repaired = truncated = 0
    if task == "planning":
        for output in outputs:
            kind = plan_failure_kind(output)
            if kind is not None:
                failures[kind] += 1
    else:
        for record, output in zip(records, outputs, strict=True):
            reference = _official(record).get("reference")
            steps += len(reference) if isinstance(reference, list) else 0
            parsed = parse_answer(output)
            if isinstance(parsed, ParseFailure):
                failures[parsed.kind] += 1
            else:
                repaired += _structurally_repaired(parsed)
                truncated += parsed.truncated
    errors: Counter[str] = Counter(
        kind for ex in report.examples
        for kind in filter(None, ex.labels.get("error_kinds", "").split(",")))
    counts = TaskCounts(samples=int(report.n), steps=steps,
                        missing_outputs=sum(o is None for o in outputs),
                        parse_failures=sum(failures.values()),
                        parse_failure_kinds=dict(failures), repaired=repaired,
                        truncated=truncated, error_kinds=dict(errors),
                        judge_errors=int(report.judge_errors),
                        missing_predictions=int(report.missing_predictions))
    metrics = dict(report.metrics)
    if task == "tool_creation":
        metrics.setdefault(JSON_FORMAT, 100.0 * (1 - counts.parse_failures / len(outputs))
                           if outputs else 0.0)
    return TaskReport(task=task, lang=lang, metrics=metrics, counts=counts,
                      examples=list(report.examples), notes=list(report.notes))


def score_task(task: UltraToolTask, records: Sequence[Any], outputs: Sequence[Any], *,
               lang: Lang | None = None, parser: ParserMode = "robust",
               judgments: Path | None = None) -> TaskReport:
    """Score raw model outputs of one UltraTool task against its test records.

    Args:
        task: the dimension.
        records: test records (pydantic records or their official dicts), in test-set order.
        outputs: the model's raw answer per record (text; None or "" for no answer), aligned.
        lang: language of the test set (required for the judged tasks).
        parser: ``robust`` (default) or ``official`` (the paper's post-processing, defects
            included: use it to compare with published numbers).
        judgments: planning / tool creation only: recorded judgments to replay.

    Raises:
        ValueError: records and outputs differ in length.
        NotImplementedError: a judged task while the judge module is unavailable.
    """
    if len(records) != len(outputs):
        raise ValueError(f"{len(records)} test records but {len(outputs)} outputs: they must be "
                         "aligned one to one")
    if task in ("planning", "tool_creation"):
        return score_judged_task(task, records, outputs, lang=lang, judgments=judgments)
    if task not in KV_TASKS:
        raise ValueError(f"unknown UltraTool task {task!r}")
    if judgments is not None:
        raise ValueError("judgments apply to planning and tool_creation only")
    return score_kv_task(task, records, outputs, lang=lang, parser=parser)


# --------------------------------------------------------------------------------------------
# Prediction files.

def _answer(value: Any, path: Path, line: int) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list) and value and isinstance(value[0], str):
        return value[0]  # upstream's open-model files store a list of sampled outputs
    raise DataFormatError(path, f"expected the model output as a string, got "
                                f"{type(value).__name__}", line=line)


def load_predictions(path: Path, records: Sequence[Any]) -> list[str | None]:
    """Read model outputs aligned with ``records`` (None = no output for that sample).

    Accepted formats:

    * the published one: JSON Lines of ``{"data": test record, "init output": str}``, line i =
      record i (``data`` must equal the record: a different one means a misaligned file);
    * ours: JSON Lines of ``{"index": int, "output": str | null}`` in any order; an index the
      file does not give is a missing output (scored as an empty answer, never dropped);
    * a JSON array of strings (or nulls), element i = record i.

    Raises:
        DataFormatError: with the 1-based line (JSON Lines) of the first bad entry: invalid
            JSON, another shape, a bad or repeated index, a record mismatch; or a positional
            file whose length differs from the number of records.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataFormatError(path, f"not UTF-8 text ({exc.reason})") from exc
    if text.lstrip().startswith("["):
        return _load_array(path, text, records)
    outputs: dict[int, str | None] = {}
    fmt: str | None = None
    n_lines = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        n_lines += 1
        try:
            obj = parse_json(line)
        except json.JSONDecodeError as exc:
            raise DataFormatError(path, f"invalid JSON ({exc.msg})", line=number) from exc
        if not isinstance(obj, dict):
            raise DataFormatError(path, "expected a JSON object per line", line=number)
        line_fmt = "published" if "init output" in obj else "ours" if "output" in obj else None
        if line_fmt is None:
            raise DataFormatError(path, "expected {\"data\", \"init output\"} or "
                                        "{\"index\", \"output\"}", line=number)
        if fmt is not None and line_fmt != fmt:
            raise DataFormatError(path, "mixes the published and our prediction formats",
                                  line=number)
        fmt = line_fmt
        if fmt == "published":
            index = n_lines - 1
            if index < len(records) and "data" in obj and \
                    obj["data"] != _official(records[index]):
                raise DataFormatError(path, f"the prediction's data differs from test record "
                                            f"{index} (misaligned or for another task/language)",
                                      line=number, field="data")
            outputs[index] = _answer(obj["init output"], path, number)
        else:
            raw_index = obj.get("index")
            if not isinstance(raw_index, int) or isinstance(raw_index, bool) or \
                    not 0 <= raw_index < len(records):
                raise DataFormatError(path, f"index must be an integer in 0..{len(records) - 1}",
                                      line=number, field="index")
            if raw_index in outputs:
                raise DataFormatError(path, f"index {raw_index} appears twice", line=number,
                                      field="index")
            outputs[raw_index] = _answer(obj["output"], path, number)
    if n_lines == 0:
        raise DataFormatError(path, "no predictions in the file")
    if fmt == "published" and n_lines != len(records):
        raise DataFormatError(path, f"{n_lines} predictions for {len(records)} test records: "
                              "line i must be the prediction for record i")
    return [outputs.get(i) for i in range(len(records))]


def _load_array(path: Path, text: str, records: Sequence[Any]) -> list[str | None]:
    try:
        items = parse_json(text)
    except json.JSONDecodeError as exc:
        raise DataFormatError(path, f"invalid JSON ({exc.msg})", line=exc.lineno) from exc
    if not isinstance(items, list):
        raise DataFormatError(path, "expected a JSON array of strings")
    if len(items) != len(records):
        raise DataFormatError(path, f"{len(items)} predictions for {len(records)} test records")
    for i, item in enumerate(items):
        if item is not None and not isinstance(item, str):
            raise DataFormatError(path, f"expected a string or null, got "
                                        f"{type(item).__name__}", field=f"[{i}]")
    return items
