"""The results directory of an experiment, ``runs/<experiment>/``: the data contracts and the
only code that reads or writes it.

* ``config.json`` -- what was run (:class:`RunConfig`; never a secret).
* ``examples.jsonl`` -- append-only, one :class:`ExampleResult` per finished attempt; the last
  line of an example wins, so a resume can retry infrastructure errors by appending. Each line
  is sealed (:func:`~tooleval_agents.data.journal.seal`: it ends with a ``line_digest`` of its
  own
  bytes), so a line changed after it was written is found (:meth:`RunDir.edited`): a resume
  runs its example again, re-scoring refuses the run. A line without one (written by an
  older version) is trusted.
* ``summary.json`` -- corpus metrics and counts (:class:`RunSummary`) over every example the
  directory holds, rewritten at the end of a run that added to them; it records the digest of
  the results it describes, so a reader knows a stale one (:meth:`RunDir.summary_is_current`).

Everything needed to re-score without calling a model is in ``examples.jsonl`` (outputs) and
the dataset (reference outputs).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, Field

from tooleval_agents.contracts import Metrics
from tooleval_agents.data.journal import JournalFile, repair_torn_tail, seal, seal_state
from tooleval_agents.data.jsonio import atomic_write_text, read_model, writing
from tooleval_agents.errors import DataFormatError, NotARunError
from tooleval_agents.results.dirlock import (
    LOCK as LOCK,  # the run directory's files, with CONFIG...
)
from tooleval_agents.results.dirlock import Held, hold_directory
from tooleval_agents.results.dirlock import RunLockedError as RunLockedError
from tooleval_agents.results.records import (
    ExampleResult,
    ResultBase,
    ResultHead,
    RunConfig,
    now,
)

CONFIG, EXAMPLES, SUMMARY = "config.json", "examples.jsonl", "summary.json"
DAMAGED = "examples.damaged.jsonl"
"""Where a resume sets aside the lines of ``examples.jsonl`` that are no result
(:meth:`RunDir.set_aside_damaged`)."""
REPAIR = (f". A damaged line: run the same `tooleval run` command to set it aside (in {DAMAGED}) "
          "and run its example again")
"""What a reader that meets a damaged line tells the user to do."""
_ID_PREFIX = b'{"example_id":"'
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
    """Totals and per-example means of the answers' tokens and model calls (:class:`Usage`:
    the same on a cold and a warm cache), over every recorded result (infra errors included:
    their tokens were spent; examples not run yet are not)."""
    spent: dict[str, Any] = Field(default_factory=dict)
    """What was paid for the results the directory holds, over every session that wrote them
    (:data:`~tooleval_agents.results.summary.SPENT_KEYS`: provider calls, their tokens, cache
    hits, the judge's; ``usd``)."""
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
    session: dict[str, Any] = Field(default_factory=dict)
    """What the run's last session did apart from the results it found: ``resumed`` N ``of``
    M attempts it selected, ``held`` (the directory's), ``ran``, ``errors`` (infra errors),
    and what it paid (as :attr:`spent`); empty on a summary a reader recomputed."""
    recomputed: bool = Field(default=False, exclude=True)
    """Computed again by a reader: ``summary.json`` is missing or stale (not written;
    :func:`~tooleval_agents.results.rescore.current_summary`)."""
    results_digest: str | None = None
    """sha256 of the ``examples.jsonl`` it describes (:meth:`RunDir.summary_is_current`)."""

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

    def lock(self) -> contextlib.AbstractContextManager[Held]:
        """Hold the directory for this process while it runs (:func:`~tooleval_agents.
        dirlock.hold_directory`): a second process on the same run stops at once; what it
        yields says whether a killed holder left its lock."""
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

    def trusted(self) -> tuple[dict[str, ExampleResult], str | None]:
        """:meth:`results` without the examples whose latest line was changed after it was
        written (:meth:`edited`: a hand-made line is no example of the run, an edited one not
        what the model answered), and a note naming those left out (``None``: none were)."""
        results = self.results()
        edited = self.edited()
        for _, example_id in edited:
            results.pop(example_id, None)
        if not edited:
            return results, None
        return results, (f"{edited_note(self.path / EXAMPLES, edited)}: left out (the same "
                         "`tooleval run` command runs their examples again)")

    def latest(self) -> dict[str, tuple[int, int]]:
        """Where the latest line of each example is (id -> line number, byte offset), found
        without keeping any result: what :meth:`iter_results` reads from."""
        out: dict[str, tuple[int, int]] = {}
        for number, offset, raw in self._lines():
            out[self._id_of(number, raw)] = (number, offset)
        return out

    def edited(self) -> list[tuple[int, str]]:
        """``(line number, example id)`` of each example whose latest line was changed after
        it was written (its seal does not match: :func:`~tooleval_agents.data.journal.seal`;
        or it has none, after a sealed line: no older version wrote it), in file order. A
        changed line that a later line of its example replaced is left out."""
        latest: dict[str, tuple[int, bool]] = {}
        sealed = False
        for number, _, raw in self._lines():
            state = seal_state(raw)
            latest[self._id_of(number, raw)] = (
                number, state == "edited" or (state == "unsealed" and sealed))
            sealed = sealed or state == "intact"
        return sorted((number, eid) for eid, (number, bad) in latest.items() if bad)

    def damaged(self) -> list[int]:
        """The numbers of the lines that are no result at all (not UTF-8, not JSON, not a
        result's fields): what :meth:`set_aside_damaged` moves out."""
        out = []
        for number, _, raw in self._lines():
            try:
                self._parse(number, raw, ExampleResult)
            except DataFormatError:
                out.append(number)
        return out

    def set_aside_damaged(self) -> list[int]:
        """Move the damaged lines (:meth:`damaged`) of ``examples.jsonl`` to
        ``examples.damaged.jsonl`` (appended, as they were) and write the file again without
        them; their examples then have no result, so a resume runs them again. Call it while
        holding the directory (:meth:`lock`). Returns the lines' numbers (none: nothing
        changed)."""
        bad = set(self.damaged())
        if not bad:
            return []
        file = self.path / EXAMPLES
        kept: list[bytes] = []
        moved: list[bytes] = []
        with file.open("rb") as fh:
            for number, raw in enumerate(fh, start=1):
                (moved if number in bad else kept).append(raw)
        aside = JournalFile(self.path / DAMAGED, sync="each")
        try:
            aside.append(*(line.rstrip(b"\n") for line in moved))
        finally:
            aside.close()
        tmp = file.with_name(f".{EXAMPLES}.repair")
        with writing(file):
            try:
                tmp.write_bytes(b"".join(kept))
                os.replace(tmp, file)
            finally:
                tmp.unlink(missing_ok=True)
        return sorted(bad)

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
            raise DataFormatError(file, f"not UTF-8 text ({exc.reason}){REPAIR}",
                                  line=number) from exc
        try:
            return model.model_validate_json(text)
        except ValueError as exc:
            raise DataFormatError(file, str(exc).splitlines()[0] + REPAIR, line=number) from exc

    def repair_torn_tail(self) -> bool:
        """Cut a last line a crash left half-written (no trailing newline), so appends start
        on a fresh line; the same line :meth:`results` ignores. True when something was cut.
        """
        return repair_torn_tail(self.path / EXAMPLES)

    def write_summary(self, summary: RunSummary) -> None:
        atomic_write_text(self.path / SUMMARY, summary.model_dump_json(indent=2))

    def read_summary(self) -> RunSummary:
        """The stored ``summary.json``, as written (it may describe an earlier state of the
        run: see :meth:`summary_is_current`)."""
        summary = read_model(self.path / SUMMARY, RunSummary)
        return summary.model_copy(update={"run_dir": str(self.path)})

    def results_digest(self) -> str:
        """sha256 of the lines of ``examples.jsonl`` the run wrote, as they are now
        (:attr:`RunSummary.results_digest`): a line changed after it was written, or added by
        hand after sealed ones (:meth:`edited`), is no result of the run and left out, so the
        summary of what the run wrote stays current beside it; the changed line's own
        example no longer is, and so the digest changes."""
        digest = hashlib.sha256()
        sealed = False
        for _, _, raw in self._lines():
            state = seal_state(raw)
            if state == "intact" or (state == "unsealed" and not sealed):
                digest.update(raw)
            sealed = sealed or state == "intact"
        return digest.hexdigest()

    def summary_is_current(self, summary: RunSummary) -> bool:
        """Whether ``summary`` describes the results the directory holds now. One written
        before summaries kept :attr:`~RunSummary.results_digest` is current when it counts
        as many recorded examples as the file holds."""
        if summary.results_digest is not None:
            return summary.results_digest == self.results_digest()
        counts = summary.counts
        recorded = counts.get("examples", 0) - counts.get("not_run", 0)
        return recorded == len(self.latest())


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
