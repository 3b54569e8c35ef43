"""The results directory of an experiment, ``runs/<experiment>/``: the data contracts and the
only code that reads or writes it.

* ``config.json`` -- what was run (:class:`RunConfig`; never a secret).
* ``examples.jsonl`` -- append-only, one :class:`ExampleResult` per finished attempt; the last
  line of an example wins, so a resume can retry infrastructure errors by appending.
* ``summary.json`` -- corpus metrics and counts (:class:`RunSummary`), rewritten at the end.

Everything needed to re-score without calling a model is in ``examples.jsonl`` (outputs) and
the dataset (reference outputs).
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from tooleval_agents.errors import DataFormatError
from tooleval_agents.jsonio import atomic_write_text, iter_jsonl

CONFIG, EXAMPLES, SUMMARY = "config.json", "examples.jsonl", "summary.json"

Status = Literal["ok", "model_error", "infra_error"]
"""``ok``: the workflow finished (its answer may still be wrong); ``model_error``: the workflow
failed for a reason of the model or its output (counted as a wrong answer); ``infra_error``:
a provider failure left after retries (429, 5xx, timeout...), counted apart and retried on
resume."""


EMPTY_OUTPUTS: dict[str, Any] = {"raw_outputs": [], "prediction": "", "parse_error": None,
                                  "trace": [], "usage": None}
"""What a failed workflow (``model_error``) answered: scored like an empty answer (the error
message stays out of it, or a scorer reading "the only string" would take it for the
answer)."""


def now() -> str:
    """UTC timestamp, ISO 8601."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class DatasetRef(BaseModel):
    """Which examples the run is over."""

    name: str
    """Dataset (split) name, e.g. ``appbench-plan-ss``."""
    id: str | None = None
    """LangSmith dataset id (the offline uuid5 when not uploaded)."""
    examples: int
    """Number of examples in the run (after ``--limit``)."""
    hash: str
    """sha256 over the examples' ids, inputs and reference outputs: a resume on changed data
    is refused."""
    source: str | None = None
    """official / rebuilt / sample."""


class RunConfig(BaseModel):
    """``config.json``: everything that identifies the experiment. Never holds a secret."""

    experiment: str
    """Experiment name, ``<benchmark>-<task>-<subset>-<strategy>-<model>``."""
    benchmark: str
    task: str
    subset: str
    """Language or category."""
    strategy: str
    strategy_options: dict[str, Any] = Field(default_factory=dict)
    model: dict[str, Any]
    """``{"spec": ..., "params": {...}}`` with secrets removed."""
    judge: dict[str, Any] | None = None
    """Judge model, same shape as ``model``."""
    scoring_options: dict[str, Any] = Field(default_factory=dict)
    """e.g. ``{"scoring": "strict"}``."""
    dataset: DatasetRef
    versions: dict[str, str] = Field(default_factory=dict)
    """Package versions (tooleval-agents, langchain-core, langgraph, langsmith...)."""
    created_at: str = Field(default_factory=now)
    langsmith: dict[str, Any] | None = None
    """Experiment/session id and URL when uploaded."""


class Usage(BaseModel):
    """Token usage of one example (cache hits add no tokens and no model calls)."""

    input_tokens: int = 0
    output_tokens: int = 0
    model_calls: int = 0
    cache_hits: int = 0
    """Model answers served by the response cache (no tokens, no call)."""


class ExampleResult(BaseModel):
    """One line of ``examples.jsonl``."""

    example_id: str
    index: int
    """Position in the split (joins with the dataset)."""
    status: Status
    outputs: dict[str, Any] = Field(default_factory=dict)
    """The workflow's outputs: raw_outputs, prediction, parse_error, trace, usage."""
    score: dict[str, Any] | None = None
    """The ``evaluators.base.ExampleScore`` dump (scores, parts, comments, labels, error)."""
    error: str | None = None
    """Error message (secrets redacted) for ``model_error`` / ``infra_error``."""
    error_kind: str | None = None
    """e.g. ``rate_limit``, ``server_error``, ``timeout``, ``connection``, ``parse``..."""
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    retries: int = 0
    """Provider retries spent on this example."""
    attempt: int = 1
    """1 for the first run, +1 per resume that retried it."""
    finished_at: str = Field(default_factory=now)


class RunSummary(BaseModel):
    """``summary.json``."""

    experiment: str
    metrics: dict[str, float]
    """Corpus metrics, 0-100 unrounded, over every example (infra errors excluded and
    counted in ``counts``)."""
    counts: dict[str, int]
    """examples, scored, ok, model_errors, infra_errors, retried, cached..."""
    usage: dict[str, float] = Field(default_factory=dict)
    """Totals and per-example means of tokens and model calls."""
    latency_s: dict[str, float] = Field(default_factory=dict)
    finished_at: str = Field(default_factory=now)


class RunDir:
    """Reads and writes one results directory."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    def write_config(self, config: RunConfig) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.path / CONFIG, config.model_dump_json(indent=2))

    def read_config(self) -> RunConfig:
        file = self.path / CONFIG
        if not file.is_file():
            raise FileNotFoundError(f"{self.path} is not a run directory (no {CONFIG})")
        return RunConfig.model_validate_json(file.read_text(encoding="utf-8"))

    def append(self, result: ExampleResult) -> None:
        """Append one finished example; flushed and fsynced so a crash loses at most the
        line being written."""
        self.path.mkdir(parents=True, exist_ok=True)
        line = result.model_dump_json() + "\n"
        with (self.path / EXAMPLES).open("a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())

    def results(self) -> dict[str, ExampleResult]:
        """Latest result per example id. A torn last line (crash mid-write) is ignored; any
        other bad line is an error naming file and line."""
        file = self.path / EXAMPLES
        if not file.is_file():
            return {}
        lines = list(iter_jsonl(file))
        out: dict[str, ExampleResult] = {}
        for pos, (number, text) in enumerate(lines):
            try:
                result = ExampleResult.model_validate_json(text)
            except ValueError as exc:
                if pos == len(lines) - 1 and not text.endswith("\n"):
                    break
                raise DataFormatError(file, str(exc).splitlines()[0], line=number) from exc
            out[result.example_id] = result
        return out

    def write_summary(self, summary: RunSummary) -> None:
        atomic_write_text(self.path / SUMMARY, summary.model_dump_json(indent=2))

    def read_summary(self) -> RunSummary:
        return RunSummary.model_validate_json((self.path / SUMMARY).read_text(encoding="utf-8"))


def summarize(experiment: str, aggregate: Callable[[Sequence[Any]], dict[str, float]],
              results: Sequence[ExampleResult], *, examples: int,
              wall_s: float | None = None) -> RunSummary:
    """The one summary computation (the runner's and re-scoring's): metrics pooled by
    ``aggregate`` over the stored scores of every non-infra result; infra errors, examples not
    run yet, retries and cache hits counted apart; token usage and latency.

    Raises:
        ValueError: a non-infra result without a stored score.
    """
    from evaluators.base import ExampleScore

    scored = [r for r in results if r.status != "infra_error"]
    missing = [r.example_id for r in scored if r.score is None]
    if missing:
        raise ValueError(f"example {missing[0]} has no stored score: re-score the run")
    scores = [ExampleScore.model_validate(r.score) for r in scored]
    counts = {
        "examples": examples,
        "scored": len(scored),
        "ok": sum(r.status == "ok" for r in results),
        "model_errors": sum(r.status == "model_error" for r in results),
        "infra_errors": sum(r.status == "infra_error" for r in results),
        "not_run": examples - len(results),
        "retried": sum(r.retries > 0 or r.attempt > 1 for r in results),
        "cached": sum(r.usage.cache_hits > 0 and r.usage.model_calls == 0 for r in results),
        "scoring_errors": sum(s.error is not None for s in scores),
    }
    totals = {k: float(sum(getattr(r.usage, k) for r in results))
              for k in ("input_tokens", "output_tokens", "model_calls", "cache_hits")}
    usage = {**totals, **{f"{k}_per_example": (totals[k] / len(results) if results else 0.0)
                          for k in ("input_tokens", "output_tokens", "model_calls")}}
    lat = sorted(r.latency_s for r in scored)
    latency: dict[str, float] = {}
    if lat:
        latency = {"mean": statistics.fmean(lat), "p50": lat[len(lat) // 2],
                   "p95": lat[min(len(lat) - 1, int(0.95 * len(lat)))], "max": lat[-1]}
    if wall_s is not None:
        latency["wall"] = wall_s
    metrics = {k: float(v) for k, v in aggregate(scores).items()} if scores else {}
    return RunSummary(experiment=experiment, metrics=metrics, counts=counts, usage=usage,
                      latency_s=latency)


def dumps(obj: Any) -> str:
    """Compact JSON for hashing (sorted keys, UTF-8)."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str)
