"""The results directory of an experiment, ``runs/<experiment>/``: the data contracts and the
only code that reads or writes it.

* ``config.json`` -- what was run (:class:`RunConfig`; never a secret).
* ``examples.jsonl`` -- append-only, one :class:`ExampleResult` per finished attempt; the last
  line of an example wins, so a resume can retry infrastructure errors by appending. Each line
  is sealed (:func:`~tooleval_agents.results.journal.seal`: it ends with a ``line_digest`` of its
  own
  bytes), so a line changed after it was written is found (:meth:`RunDir.edited`): a resume
  runs its example again, re-scoring refuses the run. A line without one (written by an
  older version) is trusted.
* ``summary.json`` -- corpus metrics and counts (:class:`RunSummary`), rewritten at the end.

Everything needed to re-score without calling a model is in ``examples.jsonl`` (outputs) and
the dataset (reference outputs).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, Field

from tooleval_agents.contracts import ExampleScore, Metrics, Part
from tooleval_agents.data.jsonio import atomic_write_text, read_model
from tooleval_agents.errors import DataFormatError, NotARunError
from tooleval_agents.models.tool_calls.counts import ToolCallCounts
from tooleval_agents.results.dirlock import (
    LOCK as LOCK,  # the run directory's files, with CONFIG...
)
from tooleval_agents.results.dirlock import RunLockedError as RunLockedError
from tooleval_agents.results.dirlock import hold_directory
from tooleval_agents.results.journal import JournalFile, repair_torn_tail, seal, seal_state

CONFIG, EXAMPLES, SUMMARY = "config.json", "examples.jsonl", "summary.json"
_ID_PREFIX = b'{"example_id":"'

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
    """Number of examples in the run (after ``--samples`` and ``--limit``)."""
    samples: str | None = None
    """The ``--samples`` selection (split indices), ``None``: from the start of the split."""
    total: int | None = None
    """Number of examples in the whole split (a selection covers n of N)."""
    hash: str
    """sha256 over the selected examples' ids, inputs and reference outputs: a resume on
    changed data is refused."""
    source: str | None = None
    """official / rebuilt / sample."""
    data_dir: str | None = None
    """The data directory the examples were read from (re-scoring reads it again unless told
    otherwise; its dataset hash is checked either way)."""


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
    epochs: int = 1
    """Attempts per example (``--epochs``)."""
    agent: str | None = None
    """The user's agent that played the strategy's agent (``--agent``), by name; ``None``:
    the strategy's own."""
    model: dict[str, Any]
    """``{"spec": ..., "params": {...}}`` with secrets removed; ``server``: what the model's
    server reported about itself (:mod:`tooleval_agents.models.server_identity`)."""
    judge: dict[str, Any] | None = None
    """Judge model, same shape as ``model``; ``from_model`` lists the endpoint arguments it
    took from the model's (same provider, no endpoint of its own)."""
    scoring_options: dict[str, Any] = Field(default_factory=dict)
    """e.g. ``{"scoring": "strict"}``."""
    tool_faults: dict[str, Any] | None = None
    """Seeded tool faults (``--tool-faults``: rate, kinds, seed); ``None``: none."""
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
    cached_input_tokens: int = 0
    """Input tokens the provider served from its prompt cache (part of ``input_tokens``)."""
    model_calls: int = 0
    cache_hits: int = 0
    """Model answers served by the response cache (no tokens, no call)."""
    batched_calls: int = 0
    """Model calls answered through a provider batch (``--batch``; part of ``model_calls``)."""
    batched_input_tokens: int = 0
    batched_output_tokens: int = 0
    batched_cached_input_tokens: int = 0
    """The tokens of the batched calls (part of the totals above), priced at batch rates."""


class ModelCall(BaseModel):
    """One chat model call of an example."""

    messages: list[str] = Field(default_factory=list)
    """Ids of the messages sent, in order (in the run's ``prompts.jsonl``)."""
    tools: str | None = None
    """Id of the tool definitions bound (``None``: no tools)."""
    output: dict[str, Any] | None = None
    """The answer: ``{"role": "ai", "content": ..., "tool_calls": [...]}`` (``None``: the
    call failed or never answered)."""
    error: str | None = None
    """Why the call failed (the last try's error)."""
    sent_at: float | None = None
    """When its first try left (seconds since the epoch; ``None``: answered by the response
    cache, or written before this was kept): the order requests reached the server in."""


class ResultBase(BaseModel):
    """The small fields of an ``examples.jsonl`` line (its bulky ones are
    :class:`ExampleResult`'s)."""

    example_id: str
    index: int
    """Position in the split (joins with the dataset)."""
    epoch: int = 0
    """Which attempt (``--epochs``); every attempt has its own ``example_id``."""
    status: Status
    error: str | None = None
    """Error message (secrets redacted) for ``model_error`` / ``infra_error``."""
    error_kind: str | None = None
    """e.g. ``rate_limit``, ``server_error``, ``timeout``, ``connection``, ``parse``..."""
    usage: Usage = Field(default_factory=Usage)
    judge_usage: Usage = Field(default_factory=Usage)
    """The judge's calls while scoring this example (apart from the model's)."""
    latency_s: float = 0.0
    retries: int = 0
    """Provider retries spent on this example."""
    attempt: int = 1
    """1 for the first run, +1 per resume that retried it."""
    data_digest: str | None = None
    """:func:`example_digest` of the example's inputs and reference outputs when it ran: a
    resume over changed data is refused, whichever selection ran the example."""
    tool_calls: ToolCallCounts | None = None
    """How an agent's tool calls came back (structured, read from text, unread text calls);
    ``None``: no agent ran."""
    finished_at: str = Field(default_factory=now)


class ExampleResult(ResultBase):
    """One line of ``examples.jsonl``."""

    outputs: dict[str, Any] = Field(default_factory=dict)
    """The workflow's outputs: raw_outputs, prediction, parse_error, trace, usage."""
    score: dict[str, Any] | None = None
    """The :class:`~tooleval_agents.contracts.ExampleScore` dump (scores, parts, comments,
    labels, error)."""
    inputs: dict[str, Any] | None = None
    """The example's inputs (what the strategy was given)."""
    reference_outputs: dict[str, Any] | None = None
    """The example's gold answer."""
    model_calls: list[ModelCall] = Field(default_factory=list)
    """Every chat model call of the example: messages sent (ids in the run's
    ``prompts.jsonl``), tools bound, the answer."""

    @property
    def format_error(self) -> str | None:
        """Why the answer could not be read in its task's format (:func:`format_error_of`)."""
        return format_error_of(self.status, self.outputs.get("parse_error"))


class ScoreHead(BaseModel):
    """What pooling reads of a score dump: an :class:`ExampleScore` without comments and
    evidence."""

    scores: dict[str, float] = Field(default_factory=dict)
    parts: dict[str, Part] = Field(default_factory=dict)
    labels: dict[str, str] = Field(default_factory=dict)
    error: str | None = None

    def example_score(self) -> ExampleScore:
        """As an :class:`ExampleScore` (no comments, no evidence)."""
        return ExampleScore.model_construct(scores=self.scores, parts=self.parts,
                                            labels=self.labels, error=self.error, comments={},
                                            evidence={})


class OutputsHead(BaseModel):
    """What tables read of a result's outputs (the rest is skipped)."""

    parse_error: Any = None


class ResultHead(ResultBase):
    """A result line read without its bulky fields (inputs, references, model calls, all of
    the outputs but ``parse_error``), the score as a :class:`ScoreHead`: what tables and
    comparisons read, validated at a fraction of the cost of a whole :class:`ExampleResult`."""

    score: ScoreHead | None = None
    outputs: OutputsHead = Field(default_factory=OutputsHead)

    @property
    def format_error(self) -> str | None:
        """As :attr:`ExampleResult.format_error`."""
        return format_error_of(self.status, self.outputs.parse_error)


def format_error_of(status: str, parse_error: Any) -> str | None:
    """The ``parse_error`` of a finished (``ok``) example's outputs: its answer could not be
    read in the task's format (no call line, no JSON list, no tool called), and it is scored
    as it is; ``None`` when it was read, or when the workflow failed (``model_error`` outputs are
    :data:`EMPTY_OUTPUTS`, counted apart)."""
    return str(parse_error) if status == "ok" and parse_error else None


_Line = TypeVar("_Line", bound=ResultBase)

class RunSummary(BaseModel):
    """``summary.json``."""

    experiment: str
    metrics: Metrics
    """Corpus metrics, 0-100 unrounded, over every example (infra errors excluded and
    counted in ``counts``)."""
    counts: dict[str, int]
    """examples, scored, ok, model_errors, infra_errors, retried, cached, scoring_errors,
    format_errors (``ok`` answers that could not be read in the task's format; absent from
    summaries written before it was counted)..."""
    format_error_rate: float | None = None
    """``format_errors`` / ``scored`` (``None``: nothing scored, or an older summary)."""
    not_computed: dict[str, str] = Field(default_factory=dict)
    """Headline metrics the run could not compute, with why (e.g. ``{"planning": "no
    --judge"}``): absent from ``metrics``, never a 0."""
    usage: dict[str, float] = Field(default_factory=dict)
    """Totals and per-example means of tokens and model calls, over every recorded result
    (infra errors included: their tokens were spent; examples not run yet are not)."""
    latency_s: dict[str, float] = Field(default_factory=dict)
    """Mean and percentiles over the scored (non-infra) examples, and the wall time."""
    ci: dict[str, list[float]] = Field(default_factory=dict)
    """95% bootstrap interval ``[low, high]`` of each metric, resampling examples (all
    attempts of one together; :mod:`tooleval_agents.results.intervals`)."""
    cost: dict[str, Any] = Field(default_factory=dict)
    """Dollars (:func:`tooleval_agents.results.costs.run_cost`): ``model_usd``, ``judge_usd``,
    ``total_usd``, ``per_example_usd``, ``per_success_usd``, ``prices_as_of`` and the models
    of ``unknown_price`` (their amounts are ``None``)."""
    epochs: dict[str, Any] = Field(default_factory=dict)
    """With ``--epochs`` above 1: ``{"n": N, "sd": {metric: mean per-example standard
    deviation across attempts}}`` (pass@k and pass^k are among ``metrics``)."""
    notes: list[str] = Field(default_factory=list)
    """What a person must know to read the numbers, each with its likely fix (e.g. no tool call
    came back; the server changed since its answers were cached)."""
    finished_at: str = Field(default_factory=now)
    run_dir: str | None = Field(default=None, exclude=True)
    """The results directory (set on the summary a run returns or :meth:`RunDir.read_summary`
    reads; not written to the file, which may move)."""
    session: dict[str, int] = Field(default_factory=dict, exclude=True)
    """What this call of the runner did, apart from the results it found stored:
    ``resumed`` (attempts already done), ``ran``, ``errors`` (infra errors among those run),
    ``model_calls``, ``cache_hits``; empty on a summary read from the file."""

    def results(self) -> list[ExampleResult]:
        """The latest result of every example of the run, in split order."""
        if self.run_dir is None:
            raise ValueError("this summary has no run directory")
        return sorted(RunDir(self.run_dir).results().values(), key=lambda r: r.index)

    def to_pandas(self) -> Any:
        """One row per example: id, index, status, error kind, latency, tokens, and a column
        per score (``score.<metric>``) and label (``label.<name>``). Needs pandas."""
        import pandas as pd  # deferred: only for users who ask for a frame

        rows = []
        for r in self.results():
            score = r.score or {}
            rows.append({"example_id": r.example_id, "index": r.index, "status": r.status,
                         "error_kind": r.error_kind, "latency_s": r.latency_s,
                         "input_tokens": r.usage.input_tokens,
                         "output_tokens": r.usage.output_tokens,
                         **{f"score.{k}": v for k, v in (score.get("scores") or {}).items()},
                         **{f"label.{k}": v for k, v in (score.get("labels") or {}).items()}})
        return pd.DataFrame(rows)


class RunDir:
    """Reads and writes one results directory."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """Hold the directory for this process while it runs (:func:`~tooleval_agents.
        dirlock.hold_directory`): a second process on the same run stops at once."""
        return hold_directory(self.path)

    def write_config(self, config: RunConfig) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.path / CONFIG, config.model_dump_json(indent=2))

    def read_config(self) -> RunConfig:
        """The run's ``config.json`` (:class:`DataFormatError` naming it when damaged)."""
        file = self.path / CONFIG
        if not file.is_file():
            raise NotARunError(f"{self.path} is not a run directory (no {CONFIG})")
        return read_model(file, RunConfig)

    def append(self, result: ExampleResult) -> None:
        """Append one finished example (sealed, fsynced: a crash loses at most the line being
        written).

        Raises:
            JournalWriteError: the line could not be written (the file is left as it was).
        """
        journal = JournalFile(self.path / EXAMPLES, sync="each")
        try:
            journal.append(result_line(result))
        finally:
            journal.close()

    def results(self) -> dict[str, ExampleResult]:
        """Latest result per example id.

        The file is read as bytes: a last line without its newline (a crash mid-write, which
        may end inside a multi-byte UTF-8 character of, say, Chinese output) is dropped before
        decoding, as :meth:`repair_torn_tail` would cut it. Every other line must be UTF-8
        JSON of an :class:`ExampleResult`.

        Raises:
            DataFormatError: a complete line that is not UTF-8 or not a valid result (file
                and 1-based line number in the message).
        """
        out: dict[str, ExampleResult] = {}
        for number, _, raw in self._lines():
            result = self._parse(number, raw, ExampleResult)
            out[result.example_id] = result
        return out

    def latest(self) -> dict[str, tuple[int, int]]:
        """Where the latest line of each example is (id -> line number, byte offset), found
        without keeping any result: what :meth:`iter_results` reads from."""
        out: dict[str, tuple[int, int]] = {}
        for number, offset, raw in self._lines():
            out[self._id_of(number, raw)] = (number, offset)
        return out

    def edited(self) -> list[tuple[int, str]]:
        """``(line number, example id)`` of each example whose latest line was changed after
        it was written (its seal does not match: :func:`~tooleval_agents.results.journal.seal`), in
        file order. A changed line that a later line of its example replaced is left out."""
        latest: dict[str, tuple[int, bool]] = {}
        for number, _, raw in self._lines():
            latest[self._id_of(number, raw)] = (number, seal_state(raw) == "edited")
        return sorted((number, eid) for eid, (number, bad) in latest.items() if bad)

    def _id_of(self, number: int, raw: bytes) -> str:
        # Our own lines start with the id; anything else is parsed (and checked) whole.
        if raw.startswith(_ID_PREFIX) and (end := raw.find(b'"', len(_ID_PREFIX))) > 0:
            return raw[len(_ID_PREFIX):end].decode("utf-8", "replace")
        return self._parse(number, raw, ResultHead).example_id

    def iter_results(self, order: Iterable[str] | None = None) -> Iterator[ExampleResult]:
        """The latest result of each example, one at a time (a run too large to hold whole):
        in ``order`` (example ids; one without a result is skipped), else in the order the
        examples first appear in the file.

        Raises:
            DataFormatError: as :meth:`results`, for the lines read.
        """
        return self._iter(ExampleResult, order)

    def iter_heads(self, order: Iterable[str] | None = None) -> Iterator[ResultHead]:
        """As :meth:`iter_results`, each line read as a :class:`ResultHead` (its bulky fields
        skipped, not validated)."""
        return self._iter(ResultHead, order)

    def _iter(self, model: type[_Line], order: Iterable[str] | None) -> Iterator[_Line]:
        where = self.latest()
        if not where:
            return
        with (self.path / EXAMPLES).open("rb") as fh:
            for example_id in where if order is None else order:
                if (at := where.get(example_id)) is not None:
                    fh.seek(at[1])
                    yield self._parse(at[0], fh.readline(), model)

    def _lines(self) -> Iterator[tuple[int, int, bytes]]:
        """(1-based number, byte offset, bytes) of every complete non-blank line, streamed; a
        torn last line (no newline) is left out."""
        file = self.path / EXAMPLES
        if not file.is_file():
            return
        offset = 0
        with file.open("rb") as fh:
            for number, raw in enumerate(fh, start=1):
                if not raw.endswith(b"\n"):
                    return
                if raw.strip():
                    yield number, offset, raw
                offset += len(raw)

    def _parse(self, number: int, raw: bytes, model: type[_Line]) -> _Line:
        file = self.path / EXAMPLES
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataFormatError(file, f"not UTF-8 text ({exc.reason})", line=number) from exc
        try:
            return model.model_validate_json(text)
        except ValueError as exc:
            raise DataFormatError(file, str(exc).splitlines()[0], line=number) from exc

    def repair_torn_tail(self) -> bool:
        """Cut a last line a crash left half-written (no trailing newline), so appends start
        on a fresh line; the same line :meth:`results` ignores. True when something was cut.
        """
        return repair_torn_tail(self.path / EXAMPLES)

    def write_summary(self, summary: RunSummary) -> None:
        atomic_write_text(self.path / SUMMARY, summary.model_dump_json(indent=2))

    def read_summary(self) -> RunSummary:
        summary = read_model(self.path / SUMMARY, RunSummary)
        return summary.model_copy(update={"run_dir": str(self.path)})


def result_line(result: ExampleResult) -> bytes:
    """The ``examples.jsonl`` line of a result (sealed, without its newline)."""
    return seal(result.model_dump_json())


def edited_note(file: Path | str, edited: Sequence[tuple[int, str]], *, shown: int = 3) -> str:
    """One line naming the changed lines of :meth:`RunDir.edited` (the first ``shown``).

    >>> edited_note("x.jsonl", [(4, "e3"), (9, "e8")], shown=1)[9:]
    '2 result lines were changed after they were written (line 4: example e3, and 1 more)'
    """
    listed = ", ".join(f"line {n}: example {eid}" for n, eid in edited[:shown])
    more = f", and {len(edited) - shown} more" if len(edited) > shown else ""
    lines = ("result line was changed after it was" if len(edited) == 1
             else "result lines were changed after they were")
    return f"{file}: {len(edited)} {lines} written ({listed}{more})"


class _ExampleLike(Protocol):
    """What :func:`dataset_hash` reads of a LangSmith ``Example``."""

    @property
    def id(self) -> Any: ...
    @property
    def inputs(self) -> Any: ...
    @property
    def outputs(self) -> Any: ...


def dataset_hash(examples: Iterable[_ExampleLike],
                 visit: Callable[[Any], None] | None = None) -> str:
    """sha256 over the examples' ids, inputs and reference outputs, in order
    (:attr:`DatasetRef.hash`): the same ids over other data, or the same data in another
    order, hash differently. ``visit`` sees each example as it is hashed (what else a caller
    reads of a lazy split rides on the same pass)."""
    digest = hashlib.sha256()
    for ex in examples:
        if visit is not None:
            visit(ex)
        digest.update(dumps([str(ex.id), ex.inputs, ex.outputs]).encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def example_digest(inputs: Any, reference_outputs: Any) -> str:
    """A short digest of one example's data (:attr:`ExampleResult.data_digest`)."""
    return hashlib.sha256(dumps([inputs, reference_outputs]).encode("utf-8")).hexdigest()[:16]


def dumps(obj: Any) -> str:
    """Compact JSON for hashing (sorted keys, UTF-8)."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str)
