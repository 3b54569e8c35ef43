"""One experiment while it runs: the progress display, what a resumed run keeps (:class:`Prior`),
the state shared by the target and the row evaluator (:class:`_Experiment`: model calls, results
appended as they are scored), and the summary over every example."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import io
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_core.exceptions import OutputParserException
from langsmith.evaluation.evaluator import RunEvaluator
from pydantic_core import to_jsonable_python

from tooleval_agents.contracts import (
    EMPTY_OUTPUTS,
    ExampleScore,
    Scorer,
    Split,
    feedback,
)
from tooleval_agents.data.journal import JournalFile, JournalWriteError
from tooleval_agents.evaluation import ascore_one, score_one
from tooleval_agents.models.accounting import CallStats, collect_stats
from tooleval_agents.models.retry import classify
from tooleval_agents.models.scheduling import EndpointClosed
from tooleval_agents.models.tool_calls.counts import counts_of
from tooleval_agents.redaction import (
    known_secrets,
    redact,
    redact_text,
)
from tooleval_agents.results.corpus import Columns
from tooleval_agents.results.epochs import split_epoch
from tooleval_agents.results.records import FAILED, ExampleResult, Status, Usage
from tooleval_agents.results.rundir import EXAMPLES, RunDir, RunSummary, example_digest, result_line
from tooleval_agents.results.summary import BATCHED, summarize_dir
from tooleval_agents.results.transcripts import PromptStore
from tooleval_agents.run.board import ProgressBoard, current_row
from tooleval_agents.run.usercode import user_frame
from tooleval_agents.terminal import shown
from tooleval_agents.tool_faults import ToolFaults, fault_session

if TYPE_CHECKING:
    from langsmith import Client
    from langsmith.schemas import Example, TracerSession


HARNESS_KEY = "tooleval"
"""Key of the harness block (status, error, usage) in the target's outputs."""


FATAL_KINDS = frozenset({"auth", "not_found"})
"""Provider failures that will fail every example the same way: the run stops early."""


_MAX_ERROR = 2000


def _jsonable(value: Any) -> Any:
    return to_jsonable_python(value, fallback=lambda o: repr(o))


def _error_text(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return redact_text(text)[:_MAX_ERROR]


def _not_sent(exc: BaseException) -> bool:
    """Whether a failure is a request the scheduler never sent (:class:`EndpointClosed`)."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None or isinstance(seen, EndpointClosed):
            return seen is not None
        seen = seen.__cause__ or seen.__context__
    return False


def _model_error_kind(exc: BaseException) -> str:
    status = getattr(exc, "status_code", None)
    if status in (400, 422):
        return "bad_request"
    return type(exc).__name__


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and the errors it came from (``raise ... from``, or raised while handling)."""
    seen: set[int] = set()
    todo = [exc]
    while todo and len(seen) < 50:
        err = todo.pop()
        if id(err) in seen:
            continue
        seen.add(id(err))
        yield err
        todo += [e for e in (err.__cause__, err.__context__) if e is not None]


def failure_of(exc: BaseException, stats: CallStats) -> tuple[Status, str, str | None]:
    """Whose failure ended an example: the provider's after retries (``infra_error`` and its
    kind), the model's (``model_error``: a model call failed, or its output could not be
    parsed, and the error is that one or came from it), else the system under test's
    (``agent_error``: the agent's or the strategy's code raised; with where, in the user's
    code)."""
    infra = classify(exc)
    if infra:
        return "infra_error", infra, None
    raised = {id(e) for e in stats.raised}
    if any(id(e) in raised or isinstance(e, OutputParserException) for e in _chain(exc)):
        return "model_error", _model_error_kind(exc), None
    kind = getattr(exc, "error_kind", None)
    if isinstance(kind, str):  # a failure that names itself: an agent command's agent_timeout
        return "agent_error", kind, None
    return "agent_error", type(exc).__name__, user_frame(exc)


@dataclass
class _Progress:
    """A rich progress bar with the running headline metric (stderr), or nothing."""

    enabled: bool
    total: int
    done: int
    title: str
    _bar: Any = None
    _task: Any = None
    _board: ProgressBoard | None = None

    def __enter__(self) -> _Progress:
        on_board = current_row()
        if self.enabled and on_board is not None:  # one of several runs at once: its row
            board, row = on_board
            self._board = board
            self._task = board.start(row, self.title, self.total, self.done)
            return self
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                                 TextColumn("{task.fields[headline]}"),
                                 console=Console(stderr=True), transient=False)
            self._bar.start()
            self._task = self._bar.add_task(shown(self.title), total=self.total,
                                            completed=self.done, headline="")
        return self

    def advance(self, headline: str | None) -> None:
        if self._board is not None:
            self._board.advance(self._task, headline)
        elif self._bar is not None:
            fields = {"headline": shown(headline)} if headline is not None else {}
            self._bar.update(self._task, advance=1, **fields)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


@dataclass(frozen=True, slots=True)
class Prior:
    """What a resumed run keeps of a result already on file."""

    status: Status
    attempt: int
    index: int
    data_digest: str | None


@dataclass
class _Experiment:
    """Everything resolved for one run, and the per-example bookkeeping."""

    name: str
    split: Split
    scorer: Scorer
    run_dir: RunDir
    prior: dict[str, Prior]
    workflow: Callable[[dict[str, Any]], Coroutine[Any, Any, dict[str, Any]]]
    progress: _Progress
    index: dict[str, int] = field(default_factory=dict)
    columns: Columns = field(default_factory=lambda: Columns(values=False))
    """The running sums of every scored example (prior and new), for the progress headline:
    constant memory, not the scores."""
    fresh: dict[str, ExampleScore] = field(default_factory=dict)
    """Scores not yet turned into LangSmith feedback (one per example in flight)."""
    finished: set[str] = field(default_factory=set)
    """Example ids recorded by this invocation."""
    upload: bool = False
    """Runs go to LangSmith (the workflow is traced)."""
    secrets: list[str] = field(default_factory=known_secrets)
    """Secret values masked in stored outputs (looked up once per run)."""
    threaded_scoring: bool = False
    """Score in a worker thread (the scorer calls a judge model)."""
    faults: ToolFaults | None = None
    """Seeded tool faults injected into the workflow's tool calls (:mod:`.faults`)."""
    fatal: str | None = None
    """Set by an ``auth`` / ``not_found`` failure: the remaining examples are not run."""
    halted: JournalWriteError | None = None
    """Set by the first failed write of a result or a prompt: no model call starts after it,
    the workflows in flight are cancelled, and the run ends with this error."""
    writer: JournalFile = field(init=False)
    """Appends results to examples.jsonl (fsynced by a background thread)."""
    prompts: PromptStore = field(init=False)
    """The run's content-addressed store of messages and tool definitions."""
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _headline_at: float = 0.0
    _running: set[asyncio.Task[Any]] = field(default_factory=set)
    """The tasks running a workflow now (cancelled when the run halts)."""

    def __post_init__(self) -> None:
        self.prompts = PromptStore(self.run_dir.path, secrets=self.secrets)
        # Group commit: a line is written before the evaluator returns, fsynced by a thread
        # (waiting for each fsync held the example's concurrency slot); the prompts a line
        # refers to are fsynced first.
        self.writer = JournalFile(self.run_dir.path / EXAMPLES, sync="group",
                                  sync_first=(self.prompts.file,))

    # --- target: run the workflow, never raise ----------------------------------------
    async def target(self, inputs: dict[str, Any]) -> dict[str, Any]:
        if self.fatal is not None or self.halted is not None:
            return {HARNESS_KEY: {"status": "infra_error", "error_kind": "aborted",
                                  "error": f"not run: {self.fatal or self.halted}",
                                  "latency_s": 0.0, "stats": {}}}
        status: Status = "ok"
        error = kind = where = None
        outputs: dict[str, Any] = {}
        start = time.perf_counter()
        inputs, epoch = split_epoch(inputs)
        task = asyncio.current_task()
        with collect_stats() as stats, self._tracing(), \
                fault_session(self.faults, inputs, epoch) as faults:
            stats.epoch = epoch
            if task is not None:
                self._running.add(task)
            try:
                outputs = dict(await self.workflow(inputs))
                if faults is not None:  # the injected faults, for the viewer and the metrics
                    outputs["trace"] = [*(outputs.get("trace") or []), *faults.records()]
            except asyncio.CancelledError:
                if not self._halted_in(task):
                    raise
                status, kind = "infra_error", "aborted"
                error = f"not run: {self.halted or self.fatal}"
            except Exception as exc:  # every failure is recorded, none ends the run
                status, kind, where = failure_of(exc, stats)
                error = _error_text(exc)
                if _not_sent(exc):  # waited its turn behind a refused key: never sent
                    status, kind, where = "infra_error", "aborted", None
                    error = f"not run: {error}"
                elif status == "infra_error" and kind in FATAL_KINDS and self.fatal is None:
                    self.fatal = error
                    self._stop_others(task)
            finally:
                self._running.discard(task)
        latency = time.perf_counter() - start
        return {**_jsonable(outputs), HARNESS_KEY: {
            "status": status, "error": error, "error_kind": kind, "error_at": where,
            "latency_s": latency,
            "stats": _stats_dict(stats), "transcript": _jsonable(list(stats.transcript.values()))}}

    def _tracing(self) -> contextlib.AbstractContextManager[None]:
        """Inside the workflow, tracing only when uploading: offline nothing would be sent,
        and LangChain's tracer costs milliseconds per example. Offline the workflow does not
        see ``aevaluate``'s run either (``parent=False``): LangChain would copy its metadata
        into every step's callback manager for no reader."""
        if self.upload:
            return contextlib.nullcontext()
        from langsmith.run_helpers import tracing_context

        return tracing_context(enabled=False, parent=False)

    def halt(self, error: JournalWriteError) -> None:
        """Stop the run at its first failed write: a result that cannot be kept is not worth
        a model call. The workflows in flight are cancelled; the run raises ``error``."""
        if self.halted is None:
            self.halted = error
            for task in list(self._running):
                task.cancel()

    def _stop_others(self, task: asyncio.Task[Any] | None) -> None:
        """A failure that fails every call alike (a refused key, an unknown model): the
        examples in flight -- those waiting their turn to send too -- stop as not run."""
        for other in list(self._running):
            if other is not task:
                other.cancel()

    def _halted_in(self, task: asyncio.Task[Any] | None) -> bool:
        """Whether ``task`` was cancelled by :meth:`halt` or a fatal failure alone (then it
        goes on, recorded as not run)."""
        if (self.halted is None and self.fatal is None) or task is None or \
                task.cancelling() != 1:
            return False
        task.uncancel()
        return True

    # --- row evaluator: score, append, give LangSmith its feedback ----------------------
    async def evaluate(self, run: Any, example: Example) -> dict[str, Any]:
        if self.halted is not None:  # nothing can be kept: not scored (no judge call)
            return {"results": []}
        outputs = dict(getattr(run, "outputs", None) or {})
        harness = outputs.pop(HARNESS_KEY, None)
        try:
            if self.scorer.ascore is not None:
                result = await self.ascore(example, outputs, harness)
            elif self.threaded_scoring:  # a judge calls a model: keep the loop free meanwhile
                result = await asyncio.to_thread(self.score, example, outputs, harness)
            else:  # pure scoring is CPU work: a thread would only add a hop
                result = self.score(example, outputs, harness)
            # On file when the evaluator returns (the next example may count on it).
            self.record(result)
        except JournalWriteError as exc:  # examples.jsonl or prompts.jsonl
            self.halt(exc)
            return {"results": []}
        self.progress.advance(self._headline())
        return {"results": result_feedback(result, self.fresh.pop(result.example_id, None))}

    def finish(self, example: Example, outputs: dict[str, Any],
               harness: dict[str, Any] | None) -> ExampleResult:
        """Score one example and append its result (thread-safe)."""
        result = self.score(example, outputs, harness)
        self.fresh.pop(result.example_id, None)  # no feedback goes to LangSmith for it
        self.record(result)
        return result

    def record(self, result: ExampleResult) -> None:
        """Append one result to examples.jsonl (thread-safe)."""
        self.writer.append(result_line(result))
        with self._lock:
            self.finished.add(result.example_id)

    async def ascore(self, example: Example, outputs: dict[str, Any],
                     harness: dict[str, Any] | None) -> ExampleResult:
        """:meth:`score` with the scorer's async ``ascore`` (it calls a judge: the run's
        timeout and concurrency bound those calls too)."""
        value: ExampleScore | None = None
        status = harness.get("status") if isinstance(harness, dict) else "infra_error"
        with collect_stats() as judge:
            if status != "infra_error" and self.scorer.ascore is not None:
                answer = outputs if status == "ok" else dict(EMPTY_OUTPUTS)
                value = await ascore_one(self.scorer, split_epoch(example.inputs)[0], answer,
                                         example.outputs or {})
        return self.score(example, outputs, harness, value, judge)

    def score(self, example: Example, outputs: dict[str, Any],
              harness: dict[str, Any] | None,
              value: ExampleScore | None = None,
              judge: CallStats | None = None) -> ExampleResult:
        """One example's result: status, score (unless an infrastructure error; ``value``
        when already scored, with the judge calls it took in ``judge``), usage."""
        eid = str(example.id)
        inputs, epoch = split_epoch(example.inputs)
        if not isinstance(harness, dict):
            harness = {"status": "infra_error", "error_kind": "harness",
                       "error": "the workflow produced no result", "latency_s": 0.0,
                       "stats": {}}
        status: Status = harness["status"]
        error = harness.get("error")
        score: dict[str, Any] | None = None
        if status != "infra_error":
            answer = outputs if status == "ok" else dict(EMPTY_OUTPUTS)
            if value is None:
                with collect_stats() as judge:  # a judged scorer's model calls
                    value = score_one(self.scorer, inputs, answer, example.outputs or {})
            score = value.model_dump(mode="json")
            with self._lock:
                self.tally(value)
                self.fresh[eid] = value
        stats = harness.get("stats") or {}
        prev = self.prior.get(eid)
        result = ExampleResult(
            example_id=eid, index=self.index[eid], status=status,
            outputs=redact(outputs, shapes=False, names=False, secrets=self.secrets),
            score=score, error=error,
            error_kind=harness.get("error_kind"), error_at=harness.get("error_at"),
            usage=answers_usage(stats), spent=paid_usage(stats),
            judge_usage=answers_usage(_stats_dict(judge) if judge is not None else {}),
            judge_spent=paid_usage(_stats_dict(judge) if judge is not None else {}),
            latency_s=float(harness.get("latency_s") or 0.0),
            retries=int(stats.get("retries", 0)),
            attempt=prev.attempt + 1 if prev is not None else 1,
            epoch=epoch,
            inputs=redact(inputs, shapes=False, names=False, secrets=self.secrets),
            reference_outputs=example.outputs or {},
            model_calls=self.prompts.calls(harness.get("transcript") or []),
            data_digest=example_digest(inputs, example.outputs or {}),
            tool_calls=counts_of(outputs), usage_reported=stats.get("usage_reported"))
        return result

    def tally(self, score: ExampleScore) -> None:
        """Count one scored example in the progress headline (caller holds the lock)."""
        self.columns.add(score)

    def _headline(self) -> str | None:
        now = time.monotonic()
        if not self.progress.enabled or now - self._headline_at < 0.5:
            return None
        self._headline_at = now
        if not self.columns or not self.scorer.headline:
            return ""
        try:
            with self._lock:
                metrics = self.scorer.aggregate(self.columns.corpus())
        except Exception:
            return ""
        return "  ".join(f"{k} {v:.1f}" for k in self.scorer.headline
                         if (v := metrics.get(k)) is not None)


class _RowEvaluator(RunEvaluator):
    """The row evaluator handed to ``aevaluate``: a ``RunEvaluator`` rather than a function,
    which LangSmith would wrap in a traced function (two thread hops per example)."""

    def __init__(self, experiment: _Experiment) -> None:
        self.experiment = experiment

    def evaluate_run(self, run: Any, example: Example | None = None,
                     evaluator_run_id: uuid.UUID | None = None) -> Any:
        raise NotImplementedError("the runner evaluates asynchronously (aevaluate)")

    async def aevaluate_run(self, run: Any, example: Example | None = None,
                            evaluator_run_id: uuid.UUID | None = None) -> Any:
        if example is None:
            raise ValueError("the tooleval evaluator needs the example")
        return await self.experiment.evaluate(run, example)

    @property
    def feedback_keys(self) -> list[str]:
        return list(self.experiment.scorer.headline)


def _stats_dict(stats: CallStats) -> dict[str, Any]:
    return {"calls": stats.calls, "retries": stats.retries, "failures": stats.failures,
            "cache_hits": stats.cache_hits, "input_tokens": stats.input_tokens,
            "output_tokens": stats.output_tokens, "cached_input_tokens": stats.cached_input_tokens,
            "replayed_input_tokens": stats.replayed_input_tokens,
            "replayed_output_tokens": stats.replayed_output_tokens,
            "replayed_cached_input_tokens": stats.replayed_cached_input_tokens,
            "unknown_usage": stats.unknown_usage, "kinds": list(stats.kinds),
            "usage_reported": stats.usage_reported, **{k: getattr(stats, k) for k in BATCHED}}


def answers_usage(stats: dict[str, Any]) -> Usage:
    """The answers' usage of an example's :class:`CallStats` (as :func:`_stats_dict`): made
    and replayed answers alike, replayed ones with the tokens recorded when they were made
    (those made through a batch this session are counted as batched)."""
    return Usage(input_tokens=stats.get("input_tokens", 0)
                 + stats.get("replayed_input_tokens", 0),
                 output_tokens=stats.get("output_tokens", 0)
                 + stats.get("replayed_output_tokens", 0),
                 cached_input_tokens=stats.get("cached_input_tokens", 0)
                 + stats.get("replayed_cached_input_tokens", 0),
                 model_calls=stats.get("calls", 0) + stats.get("cache_hits", 0),
                 cache_hits=stats.get("cache_hits", 0),
                 unknown_usage=stats.get("unknown_usage", 0),
                 **{k: stats.get(k, 0) for k in BATCHED})


def paid_usage(stats: dict[str, Any]) -> Usage:
    """What this session paid of an example's :class:`CallStats`: provider calls and tokens
    (those that went through a batch apart, at batch prices)."""
    return Usage(input_tokens=stats.get("input_tokens", 0),
                 output_tokens=stats.get("output_tokens", 0),
                 cached_input_tokens=stats.get("cached_input_tokens", 0),
                 model_calls=stats.get("calls", 0), cache_hits=stats.get("cache_hits", 0),
                 **{k: stats.get(k, 0) for k in BATCHED})


def result_feedback(result: ExampleResult, score: Any = None) -> list[dict[str, Any]]:
    """LangSmith feedback of one result; ``score``: its ExampleScore, when at hand."""
    if result.status == "infra_error":
        return [{"key": "infra_error", "value": result.error_kind, "comment": result.error}]
    out = feedback(score if isinstance(score, ExampleScore)
                   else ExampleScore.model_validate(result.score or {}))
    if result.status in FAILED:
        out.append({"key": result.status, "value": result.error_kind,
                    "comment": result.error})
    return out


def summarize(name: str, scorer: Scorer, examples: int, run_dir: RunDir, *,
              wall_s: float | None = None, epochs: int = 1, model: str | None = None,
              judge: str | None = None) -> RunSummary:
    """Corpus metrics and counts over every example the run directory holds (``examples``:
    the attempts of its selection; :func:`~tooleval_agents.results.summary.summarize_dir`)."""
    return summarize_dir(run_dir, scorer.aggregate, experiment=name, examples=examples,
                         wall_s=wall_s, epochs=epochs, headline=scorer.headline, model=model,
                         judge=judge, not_computed=scorer.not_computed)


async def _evaluate(exp: _Experiment, pending: Sequence[Example], pending_ids: Sequence[str],
                    *, client: Client, session: TracerSession | None, upload: bool,
                    max_concurrency: int, metadata: dict[str, Any]) -> None:
    """Run the pending examples (``pending_ids``: their ids) through ``aevaluate``; every one
    ends up recorded."""
    await _aevaluate(exp, pending, client=client, session=session, upload=upload,
                     max_concurrency=max_concurrency, metadata=metadata)
    # Anything aevaluate dropped is recorded, never lost (found by id: only those are made).
    for at, example_id in enumerate(pending_ids):
        if example_id not in exp.finished and exp.halted is None:
            example = pending[at]
            await asyncio.to_thread(exp.finish, example, {}, {
                "status": "infra_error", "error_kind": "harness",
                "error": "no result came back from the evaluation", "latency_s": 0.0,
                "stats": {}})


async def _aevaluate(exp: _Experiment, pending: Sequence[Example], *, client: Client,
                     session: TracerSession | None, upload: bool, max_concurrency: int,
                     metadata: dict[str, Any]) -> None:
    async def target(inputs: dict[str, Any]) -> dict[str, Any]:
        return await exp.target(inputs)

    # LangSmith inspects the target's signature three times per example; a stated one is
    # returned as is.
    target.__signature__ = inspect.signature(target)  # type: ignore[attr-defined]
    await _consume(exp, target, pending, client=client, session=session, upload=upload,
                   max_concurrency=max_concurrency, metadata=metadata)


_QUIET: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}


def _quiet_lock() -> asyncio.Lock:
    """One lock per event loop around :func:`_quiet`: stdout and the warning filters are the
    process's, and runs that go at once (``--max-runs``) must not interleave their saving
    and restoring."""
    return _QUIET.setdefault(asyncio.get_running_loop(), asyncio.Lock())


@contextlib.asynccontextmanager
async def _quiet() -> Any:
    # aevaluate prints the experiment name and warns that upload_results=False is beta:
    # neither belongs on our stdout.
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


BATCH = 256
"""Examples per ``aevaluate`` call at least: LangSmith keeps every row of a call (run, example,
feedback) until the call ends, so a run holds one batch of them, not all."""


async def _consume(exp: _Experiment, target: Callable[..., Any], pending: Sequence[Example], *,
                   client: Client, session: TracerSession | None, upload: bool,
                   max_concurrency: int, metadata: dict[str, Any]) -> None:
    from langsmith.evaluation import aevaluate

    # Each batch ends with its slowest examples while the slots idle: 16 examples per slot
    # keeps that tail small.
    size = max(BATCH, 16 * max_concurrency)
    with exp.progress:
        for start in range(0, len(pending), size):
            if exp.halted is not None:  # a write failed: no batch starts after it
                break
            async with _quiet_lock(), _quiet():
                results = await aevaluate(
                    target, data=list(pending[start:start + size]),  # made batch by batch
                    evaluators=[_RowEvaluator(exp)],
                    client=client, max_concurrency=max_concurrency, upload_results=upload,
                    experiment=session,
                    experiment_prefix=None if session is not None else exp.name,
                    metadata=metadata, blocking=False)
            async for _row in results:
                pass  # rows arrive in completion order; results are joined on example id
            del results
