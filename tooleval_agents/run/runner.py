"""Running an experiment: one strategy with one model over one split, as a LangSmith evaluation.

:func:`run_experiment` (sync, usable from scripts and Jupyter) and :func:`arun_experiment`
(async) build the strategy's workflow around the model, run it as the target of
``langsmith.aevaluate`` with the benchmark's scorer as row evaluator, and keep the results
directory ``<out>/<experiment>/`` (see :mod:`tooleval_agents.results.rundir`):

* every finished example is appended to ``examples.jsonl`` by the row evaluator as soon as it
  is scored (fsynced by a background thread), so a crash loses nothing that finished;
* ``summary.json`` is computed by our own code over every example of the split:
  ``Scorer.aggregate`` over the ``ok`` and ``model_error`` examples (a workflow failure scores
  as a wrong answer, never dropped); ``infra_error`` examples (provider failures left after
  retries) are left out of the metrics and counted apart;
* re-running the same command resumes: finished examples are not run again (no model call),
  infrastructure errors are retried (``attempt`` + 1); changed data or settings are refused
  (``fresh=True`` starts over).

The runner knows no benchmark by name: everything comes from the
:class:`~tooleval_agents.registry.Benchmark` and :class:`~tooleval_agents.contracts.Strategy`
registries.

Models: ``reference`` / ``noisy-reference[:RATE]`` answer from the run's gold answers (an
answer key built from the strategy); ``provider:model`` goes to ``init_chat_model`` (with
``max_retries=0``: :mod:`tooleval_agents.models.retry` is the one retry policy); a chat model
instance
is used as given. Every model is wrapped in
:class:`~tooleval_agents.models.retry.RetryingChatModel`.

Response cache (:mod:`tooleval_agents.models.cache`, ``<cache_dir>/responses.sqlite`` by default):
on
for the offline models and for every model whose temperature is 0 or unset; off when the
temperature is above 0 (sampling on purpose: a rerun should draw new samples). An unset
temperature means the provider's default decoding: caching it makes a rerun replay the recorded
answers, which is what a rerun of an evaluation should do. ``cache=False`` turns it off. A
model with an endpoint of its own is keyed also on what its server reports about itself
(:mod:`tooleval_agents.models.server_identity`): a changed server is asked again, and said to be.

Upload (``upload=True``, or ``None`` with a LangSmith API key configured): the split's dataset is
pushed if absent (and must match the local data if present), the experiment is created with
metadata (model, strategy, language or category...) and runs and feedback go to LangSmith. The
experiment's session id is recorded in ``config.json`` so a resume adds to the same experiment.
Without upload a client built not to phone home is used and nothing leaves the machine.

Example::

    from tooleval_agents.run.runner import run_experiment

    summary = run_experiment("appbench", subset="ss", model="reference", limit=20)
    summary.metrics["success"]   # 100.0: the reference model proves the wiring
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import hashlib
import inspect
import io
import json
import logging
import re
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from langsmith.evaluation.evaluator import RunEvaluator
from pydantic_core import to_jsonable_python

from tooleval_agents.agents import agent_label, resolve_agent
from tooleval_agents.contracts import (
    ExampleScore,
    ReferenceAnswers,
    Scorer,
    Split,
    Strategy,
    StrategyContext,
    feedback,
    resolve_options,
)
from tooleval_agents.data.datadir import resolve_data_dir
from tooleval_agents.data.langsmith_datasets import (
    LangSmithNotConfiguredError,
    api_key_configured,
    push,
    to_examples,
)
from tooleval_agents.data.paths import inside
from tooleval_agents.errors import DataFormatError, ToolevalError
from tooleval_agents.evaluation import ascore_one, score_one
from tooleval_agents.models.cache import SQLiteCache
from tooleval_agents.models.chat_models import ContentChatModel
from tooleval_agents.models.identity import model_name_of, provider_of
from tooleval_agents.models.redaction import (
    TRANSPORT_ARGS,
    known_secrets,
    model_params,
    redact,
    redact_text,
    register_secrets_in,
)
from tooleval_agents.models.reference import AnswerKey
from tooleval_agents.models.retry import (
    CallStats,
    RetryingChatModel,
    RetryPolicy,
    classify,
    collect_stats,
    make_rate_limiter,
)
from tooleval_agents.models.server_identity import (
    ServerIdentity,
    endpoint_of,
    probe_server,
    replay_note,
    server_changed,
    server_notes,
)
from tooleval_agents.models.specs import (
    ENDPOINT_ARGS,
    JUDGE_MAX_TOKENS,
    cache_applies,
    is_offline,
    provider_model,
    resolve_model,
)
from tooleval_agents.models.tool_calls.counts import counts_of
from tooleval_agents.registry import (
    Benchmark,
    benchmarks,
    get_benchmark,
    get_strategy,
    register,
    resolve_split,
    strategies,
)
from tooleval_agents.results.corpus import Columns
from tooleval_agents.results.journal import JournalFile, JournalWriteError
from tooleval_agents.results.rundir import (
    CONFIG,
    EMPTY_OUTPUTS,
    EXAMPLES,
    LOCK,
    SUMMARY,
    DatasetRef,
    ExampleResult,
    RunConfig,
    RunDir,
    RunSummary,
    Status,
    Usage,
    dataset_hash,
    edited_note,
    example_digest,
    result_line,
)
from tooleval_agents.results.rundir import summarize as results_summarize
from tooleval_agents.run.epochs import epoch_id, split_epoch, with_epochs
from tooleval_agents.run.selection import Picked, select
from tooleval_agents.run.spec import RunSpec
from tooleval_agents.run.transcripts import PROMPTS, RECORDER, PromptStore
from tooleval_agents.terminal import printable, shown

if TYPE_CHECKING:
    from langchain_core.caches import BaseCache
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import Runnable
    from langsmith import Client
    from langsmith.schemas import Example, TracerSession


log = logging.getLogger(__name__)

HARNESS_KEY = "tooleval"
"""Key of the harness block (status, error, usage) in the target's outputs."""
FATAL_KINDS = frozenset({"auth", "not_found"})
"""Provider failures that will fail every example the same way: the run stops early."""
_MAX_ERROR = 2000
_PACKAGES = ("tooleval-agents", "langchain-core", "langchain", "langgraph", "langsmith",
             "langchain-openai", "openai", "pydantic")

T = TypeVar("T")


class ResumeError(ToolevalError):
    """The results directory holds a run that cannot be continued with these settings."""


# ----------------------------------------------------------------------------- naming, hashing

def model_label(model: str | BaseChatModel) -> str:
    """What a model is called in experiment names: the spec, or ``<provider>:<model name>``
    (:func:`~tooleval_agents.models.identity.provider_of`), as a spec would name it."""
    if isinstance(model, str):
        return model
    name = model_name_of(model)
    if isinstance(model, ContentChatModel):
        return model.model_name
    kind = provider_of(model)
    return f"{kind}:{name}" if name else kind


def path_safe(text: str) -> str:
    """``text`` usable as one path component (``openai:gpt-4o`` -> ``openai_gpt-4o``)."""
    cleaned = re.sub(r"[^A-Za-z0-9._=+-]+", "_", text).strip("._")
    return cleaned or "model"


def experiment_name(split: Split, strategy: str, model: str) -> str:
    """``<benchmark>-<task>-<subset>-<strategy>-<model>``, safe as a directory name."""
    return f"{split.name}-{path_safe(strategy)}-{path_safe(model)}"


CONNECTION_ARGS = frozenset({"timeout", "request_timeout", "max_retries", "streaming"})
"""Model arguments about the connection, not the answers (left out of a run's identity, with
the endpoint and transport ones)."""


def identity_suffix(**parts: Any) -> str:
    """``-<8 hex>`` naming what else changes a run's results (strategy and scoring options,
    model and judge arguments but their endpoints, transport and connection settings;
    secrets masked first), ``""`` when none is set: runs that differ only there get their own
    directories, default runs keep a plain name.

    >>> identity_suffix(strategy_options={}, model_kwargs=None)
    ''
    >>> identity_suffix(strategy_options={"k": 3}) != identity_suffix(strategy_options={"k": 5})
    True
    """
    apart = {*ENDPOINT_ARGS, *TRANSPORT_ARGS, *CONNECTION_ARGS}
    given = {k: {a: x for a, x in v.items() if a not in apart}
             if k.endswith("kwargs") and isinstance(v, Mapping) else v for k, v in parts.items()}
    given = {k: v for k, v in given.items() if v}
    if not given:
        return ""
    text = json.dumps(redact(_jsonable(given)), sort_keys=True, default=str)
    return "-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def package_versions() -> dict[str, str]:
    """Versions of the packages that decide a run's behaviour, and Python's."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0]}
    for name in _PACKAGES:
        with contextlib.suppress(PackageNotFoundError):
            out[name] = version(name)
    return out


# ----------------------------------------------------------------------------- resolving

WORKFLOW_OUTPUTS = ("raw_outputs", "prediction", "parse_error", "trace", "usage")
"""What a workflow's final state keeps in the results (the rest is its scratch space)."""


def as_target(workflow: Runnable[Any, Any]) -> Callable[..., Any]:
    """A workflow as a ``langsmith.evaluate`` target: example inputs in, the workflow's
    :data:`WORKFLOW_OUTPUTS` out."""

    async def target(inputs: dict[str, Any]) -> dict[str, Any]:
        state = await workflow.ainvoke({"inputs": inputs}, {"callbacks": [RECORDER]})
        return {k: state.get(k) for k in WORKFLOW_OUTPUTS}

    return target


def _agent_strategies(benchmark: str, split: Split) -> list[str]:
    return [name for (_, name), s in strategies(benchmark).items()
            if s.accepts_agent and (s.tasks is None or split.task in s.tasks)]


def agent_strategy(benchmark: str, split: Split) -> str:
    """The strategy a user's agent plays when none is named: the benchmark's first one that
    accepts an agent for the split's task."""
    found = _agent_strategies(benchmark, split)
    if not found:
        raise ValueError(f"no {benchmark} strategy for task {split.task!r} runs a user's "
                         "agent (--agent)")
    return found[0]


def _benchmark(benchmark: str | Benchmark) -> Benchmark:
    if isinstance(benchmark, str):
        return get_benchmark(benchmark)
    if benchmarks().get(benchmark.name) is not benchmark:
        register(benchmark)  # examples are built through the registry
    return benchmark


def _provider(spec: str) -> str:
    return spec.split(":", 1)[0] if ":" in spec else ""


def judge_arguments(model: str | BaseChatModel, model_kwargs: dict[str, Any] | None,
                    judge: str, judge_kwargs: dict[str, Any] | None
                    ) -> tuple[dict[str, Any], list[str]]:
    """The judge's ``init_chat_model`` arguments, and the names of those taken from the model's.

    A judge is deterministic unless told otherwise (``temperature`` 0). When the judge names
    the same provider as the model and no endpoint of its own, it is sent where the model is
    (``base_url`` and the other :data:`ENDPOINT_ARGS` the model was given): a judge
    ``openai:NAME`` next to a local ``--model-arg base_url=...`` must not go to the public API.

    >>> judge_arguments("openai:m", {"base_url": "http://127.0.0.1:8765/v1"}, "openai:j", None)
    ({'temperature': 0, 'base_url': 'http://127.0.0.1:8765/v1'}, ['base_url'])
    """
    out = {"temperature": 0, **(judge_kwargs or {})}
    inherited: list[str] = []
    if (isinstance(model, str) and _provider(model) and _provider(model) == _provider(judge)
            and not any(k in out for k in ENDPOINT_ARGS)):
        for key in ENDPOINT_ARGS:
            if key in (model_kwargs or {}):
                out[key] = (model_kwargs or {})[key]
                inherited.append(key)
    return out, inherited


def _open_cache(cache: bool | str | Path | BaseCache) -> BaseCache | None:
    from langchain_core.caches import BaseCache

    if cache is False or cache is None:
        return None
    if isinstance(cache, BaseCache):
        return cache
    if cache is True:
        return SQLiteCache()
    return SQLiteCache(Path(cache))


async def _identify(model: BaseChatModel, cache: BaseCache | None
                    ) -> tuple[ServerIdentity | None, list[str]]:
    """What the model's server reports about itself (:mod:`tooleval_agents.models.server_identity`;
    ``None`` without an explicit endpoint), and what to say if it changed since the cache saw
    it."""
    server = await asyncio.to_thread(probe_server, model)
    return server, server_notes(server, cache) if cache is not None else []


def _key_part(server: ServerIdentity | None) -> str | None:
    """The server's part of the response cache key (none when it reported nothing)."""
    return server.digest if server is not None and server.informative else None


def _jsonable(value: Any) -> Any:
    return to_jsonable_python(value, fallback=lambda o: repr(o))


def _error_text(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return redact_text(text)[:_MAX_ERROR]


def _model_error_kind(exc: BaseException) -> str:
    status = getattr(exc, "status_code", None)
    if status in (400, 422):
        return "bad_request"
    return type(exc).__name__


# ----------------------------------------------------------------------------- the experiment

@dataclass
class _Progress:
    """A rich progress bar with the running headline metric (stderr), or nothing."""

    enabled: bool
    total: int
    done: int
    title: str
    _bar: Any = None
    _task: Any = None

    def __enter__(self) -> _Progress:
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
        if self._bar is not None:
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
    """The running sums of every scored example (prior and new), for the progress headline of
    a vectorized scorer: constant memory, not the scores."""
    kept: list[ExampleScore] = field(default_factory=list)
    """The scores themselves, for a scorer whose aggregate needs them."""
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
        error = kind = None
        outputs: dict[str, Any] = {}
        start = time.perf_counter()
        inputs, epoch = split_epoch(inputs)
        task = asyncio.current_task()
        with collect_stats() as stats, self._tracing():
            stats.epoch = epoch
            if task is not None:
                self._running.add(task)
            try:
                outputs = dict(await self.workflow(inputs))
            except asyncio.CancelledError:
                if not self._halted_in(task):
                    raise
                status, kind, error = "infra_error", "aborted", f"not run: {self.halted}"
            except Exception as exc:  # every failure is recorded, none ends the run
                infra = classify(exc)
                status = "infra_error" if infra else "model_error"
                kind = infra or _model_error_kind(exc)
                error = _error_text(exc)
                if infra in FATAL_KINDS and self.fatal is None:
                    self.fatal = error
            finally:
                self._running.discard(task)
        latency = time.perf_counter() - start
        return {**_jsonable(outputs), HARNESS_KEY: {
            "status": status, "error": error, "error_kind": kind, "latency_s": latency,
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

    def _halted_in(self, task: asyncio.Task[Any] | None) -> bool:
        """Whether ``task`` was cancelled by :meth:`halt` alone (then it goes on)."""
        if self.halted is None or task is None or task.cancelling() != 1:
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
        return {"results": _feedback(result, self.fresh.pop(result.example_id, None))}

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
            error_kind=harness.get("error_kind"),
            usage=Usage(input_tokens=stats.get("input_tokens", 0),
                        output_tokens=stats.get("output_tokens", 0),
                        cached_input_tokens=stats.get("cached_input_tokens", 0),
                        model_calls=stats.get("calls", 0),
                        cache_hits=stats.get("cache_hits", 0)),
            judge_usage=Usage() if judge is None else Usage(
                input_tokens=judge.input_tokens, output_tokens=judge.output_tokens,
                cached_input_tokens=judge.cached_input_tokens, model_calls=judge.calls,
                cache_hits=judge.cache_hits),
            latency_s=float(harness.get("latency_s") or 0.0),
            retries=int(stats.get("retries", 0)),
            attempt=prev.attempt + 1 if prev is not None else 1,
            epoch=epoch,
            inputs=redact(inputs, shapes=False, names=False, secrets=self.secrets),
            reference_outputs=example.outputs or {},
            model_calls=self.prompts.calls(harness.get("transcript") or []),
            data_digest=example_digest(inputs, example.outputs or {}),
            tool_calls=counts_of(outputs))
        return result

    def tally(self, score: ExampleScore) -> None:
        """Count one scored example in the progress headline (caller holds the lock)."""
        if self.scorer.vectorized:
            self.columns.add(score)
        else:
            self.kept.append(score)

    def _headline(self) -> str | None:
        now = time.monotonic()
        if not self.progress.enabled or now - self._headline_at < 0.5:
            return None
        self._headline_at = now
        if not (self.columns or self.kept) or not self.scorer.headline:
            return ""
        try:
            with self._lock:
                scores: Any = (self.columns.corpus() if self.scorer.vectorized
                               else list(self.kept))
                metrics = self.scorer.aggregate(scores)
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
            "kinds": list(stats.kinds)}


def _feedback(result: ExampleResult, score: Any = None) -> list[dict[str, Any]]:
    """LangSmith feedback of one result; ``score``: its ExampleScore, when at hand."""
    if result.status == "infra_error":
        return [{"key": "infra_error", "value": result.error_kind, "comment": result.error}]
    out = feedback(score if isinstance(score, ExampleScore)
                   else ExampleScore.model_validate(result.score or {}))
    if result.status == "model_error":
        out.append({"key": "model_error", "value": result.error_kind,
                    "comment": result.error})
    return out


# ----------------------------------------------------------------------------- summary

def summarize(name: str, scorer: Scorer, ids: Sequence[str], run_dir: RunDir, *,
              wall_s: float | None = None, epochs: int = 1, model: str | None = None,
              judge: str | None = None) -> RunSummary:
    """Corpus metrics and counts over every example (every attempt, ``ids``) of the run (see
    the module docstring), its results read one at a time."""
    return results_summarize(name, scorer.aggregate, run_dir.iter_heads(ids),
                             examples=len(ids), wall_s=wall_s, epochs=epochs,
                             headline=scorer.headline, model=model, judge=judge,
                             vectorized=scorer.vectorized)


# ----------------------------------------------------------------------------- LangSmith

def _offline_client() -> Client:
    from langsmith import Client

    # Built not to phone home (notes: the default client POSTs traces and can hang at exit).
    return Client(api_key="offline", info={}, tracing_sampling_rate=0.0,
                  auto_batch_tracing=False)


def _upload_client() -> Client:
    from langsmith import Client

    if not api_key_configured():
        raise LangSmithNotConfiguredError(
            "upload needs a LangSmith API key: set LANGSMITH_API_KEY (and LANGSMITH_ENDPOINT "
            "for a self-hosted or regional LangSmith), or run with --no-upload")
    return Client()


def _remote_examples(client: Client, split: Split, data_dir: Path,
                     examples: Sequence[Example]) -> list[Example]:
    """The split's dataset in LangSmith (pushed if absent); it must hold the run's examples
    unchanged, else the experiment would compare against other references."""
    from langsmith.utils import LangSmithNotFoundError

    try:
        dataset = client.read_dataset(dataset_name=split.name)
    except LangSmithNotFoundError:
        [pushed] = push([split], data_dir, client=client)
        if pushed.error:
            raise ToolevalError(f"could not push dataset {split.name}: {pushed.error}") from None
        dataset = client.read_dataset(dataset_name=split.name)
    remote = {str(e.id): e for e in client.list_examples(dataset_id=dataset.id)}
    missing = [e for e in examples if str(e.id) not in remote]
    changed = [e for e in examples if str(e.id) in remote and
               ((remote[str(e.id)].inputs or {}) != e.inputs
                or (remote[str(e.id)].outputs or {}) != (e.outputs or {}))]
    if missing or changed:
        raise ToolevalError(
            f"LangSmith dataset {split.name!r} does not match the local data ({len(missing)} "
            f"examples missing, {len(changed)} changed): update it with `tooleval data push "
            f"{split.benchmark}` (same --data-dir) or run with --no-upload")
    return [remote[str(e.id)] for e in examples]


def _session(client: Client, name: str, dataset_id: Any, metadata: dict[str, Any],
             previous: dict[str, Any] | None, description: str) -> TracerSession:
    """The run's experiment: the one recorded in config.json when resuming, else a new one
    named after the run (with a suffix if LangSmith already has that name)."""
    from langsmith.utils import LangSmithConflictError, LangSmithNotFoundError

    if previous and previous.get("session_id"):
        try:
            return client.read_project(project_id=str(previous["session_id"]))
        except LangSmithNotFoundError:
            log.warning("experiment %s is gone from LangSmith; creating a new one",
                        printable(previous.get("session_id")))
    for candidate in (name, f"{name}-{uuid.uuid4().hex[:6]}", f"{name}-{uuid.uuid4().hex[:6]}"):
        try:
            return client.create_project(candidate, reference_dataset_id=dataset_id,
                                         metadata=metadata, description=description)
        except LangSmithConflictError:
            continue
    raise ToolevalError(f"could not create a LangSmith experiment named {name!r}")


# ----------------------------------------------------------------------------- entry points

async def arun_experiment(spec: RunSpec | str | Benchmark, /, *, client: Client | None = None,
                          **options: Any) -> RunSummary:
    """Run (or resume) one experiment; see :func:`run_experiment`."""
    if not isinstance(spec, RunSpec):
        spec = RunSpec(benchmark=spec, **options)
    elif options:
        raise TypeError("give a RunSpec or keyword options, not both")

    started = time.perf_counter()
    bench = _benchmark(spec.benchmark)
    split = resolve_split(bench, spec.task, spec.subset)
    factory = resolve_agent(spec.agent) if spec.agent is not None else None
    strategy_name = spec.strategy or (agent_strategy(bench.name, split) if factory is not None
                                      else bench.default_strategy(split))
    # The run's own copy: a strategy may keep what its build read (an official prompt set) to
    # state its gold answers; the registered object stays as it was for other runs and callers.
    strat: Strategy = copy.copy(get_strategy(bench.name, strategy_name))
    if strat.tasks is not None and split.task not in strat.tasks:
        raise ValueError(f"strategy {strategy_name!r} does not solve {bench.name} task "
                         f"{split.task!r} (it solves {list(strat.tasks)})")
    if factory is not None and not strat.accepts_agent:
        raise ValueError(f"strategy {strategy_name!r} runs its own agent and cannot run "
                         f"--agent; strategies that can: "
                         f"{', '.join(_agent_strategies(bench.name, split)) or 'none'}")
    agent_name = agent_label(spec.agent) if spec.agent is not None else None
    strategy_options, scoring_options = resolve_options(
        spec.prompts, strategy=(f"strategy {strategy_name}", strat.options,
                                spec.strategy_options),
        scoring=(f"{bench.name} {split.task} scoring", bench.scoring_options(split),
                 spec.scoring_options))
    offline = isinstance(spec.model, str) and is_offline(spec.model)
    if offline and not isinstance(strat, ReferenceAnswers):
        raise ValueError(f"strategy {strategy_name!r} cannot run with the offline model "
                         f"{spec.model!r}: it does not state its gold answers (input_key and "
                         "gold_answers); use a provider model")
    data = resolve_data_dir(spec.data_dir)
    every = to_examples(split, data)
    examples = select(every, spec.samples, spec.limit)
    if not examples:
        raise ToolevalError(f"{split.name} has no examples in {data}")
    attempts = with_epochs(examples, spec.epochs)

    # The model under test, wrapped once: retries, rate limit, accounting, cache.
    kwargs = dict(spec.model_kwargs or {})
    register_secrets_in(kwargs)
    label = model_label(spec.model)
    answer_key: AnswerKey | None = None
    if offline:
        answer_key = AnswerKey()  # filled once the workflow is built (see below)
        inner = resolve_model(spec.model, answer_key=answer_key)
    elif isinstance(spec.model, str):
        inner = provider_model(spec.model, {**strat.model_defaults(strategy_options), **kwargs},
                               max_tokens=bench.max_tokens(split))
    else:
        inner = spec.model
    register_secrets_in({k: getattr(inner, k) for k in type(inner).model_fields
                         if "key" in k or "token" in k})
    # One cache (one SQLite connection) for the model and the judge; closed when the run's
    # objects are released.
    shared: list[BaseCache | None] = []

    def response_cache_for(chat_model: BaseChatModel) -> BaseCache | None:
        if spec.cache is False or not cache_applies(chat_model):
            return None
        if not shared:
            shared.append(_open_cache(spec.cache))
        return shared[0]

    response_cache = response_cache_for(inner)
    server, notes = await _identify(inner, response_cache)
    wrapped = RetryingChatModel(
        inner=inner, policy=spec.retry or RetryPolicy(),
        limiter=make_rate_limiter(spec.rps) if spec.rps else None,
        response_cache=response_cache, server_identity=_key_part(server))

    judge_model: BaseChatModel | None = None
    judge_inner: BaseChatModel | None = None
    judge_inherited: list[str] = []
    if spec.judge is not None:
        if isinstance(spec.judge, str) and is_offline(spec.judge):
            raise ValueError(f"judge {spec.judge!r}: the offline models cannot judge; use a "
                             "provider model (provider:model)")
        if isinstance(spec.judge, str):
            jkw, judge_inherited = judge_arguments(spec.model, spec.model_kwargs, spec.judge,
                                                   spec.judge_kwargs)
            register_secrets_in(jkw)
            judge_model = provider_model(spec.judge, jkw, max_tokens=JUDGE_MAX_TOKENS)
        else:
            judge_model = spec.judge
        judge_inner = judge_model
        judge_cache = response_cache_for(judge_model)
        judge_server, judge_notes = await _identify(judge_model, judge_cache)
        notes += [n for n in judge_notes if n not in notes]
        # The judge gets the same retry policy (its failures would become scoring errors).
        judge_model = RetryingChatModel(
            inner=judge_model, policy=spec.retry or RetryPolicy(),
            response_cache=judge_cache, server_identity=_key_part(judge_server))
    scoring = dict(scoring_options)
    scorer = bench.scorer(split, options={**scoring, "data_dir": data, **(
        {"judge": judge_model} if judge_model is not None else {})})
    try:
        graph = strat.build(StrategyContext(model=wrapped, split=split, data_dir=data,
                                            options=dict(strategy_options), agent=factory))
    except Exception as exc:
        if factory is None:
            raise
        # The user's factory ran inside build: its failure is theirs, said in one line.
        raise ToolevalError(f"agent {agent_name}: building it failed: {type(exc).__name__}: "
                            f"{exc}") from exc
    # One pass over the selection (a lazy split makes each example once here): its hash, each
    # example's id and split index, and the offline model's answers. After build: a strategy
    # may need its context (e.g. the data directory) to state the gold answers of its prompts.
    base: list[tuple[str, int]] = []
    gold = AnswerKey()

    def visit(e: Example) -> None:
        base.append((str(e.id), int((e.metadata or {}).get("index", len(base)))))
        if answer_key is not None:
            assert isinstance(strat, ReferenceAnswers)  # checked above
            gold.add(strat.input_key(split, e.inputs or {}),
                     strat.gold_answers(split, e.inputs or {}, e.outputs or {}))

    ds_hash = dataset_hash(examples, visit)
    if answer_key is not None:
        answer_key.update(gold)
    # Every attempt's id, epoch by epoch, as with_epochs makes them.
    ids = [epoch_id(eid, epoch) for epoch in range(spec.epochs) for eid, _ in base]
    index = {epoch_id(eid, epoch): at for epoch in range(spec.epochs) for eid, at in base}
    first = examples[0]

    name = experiment_name(split, strategy_name if agent_name is None
                           else f"{strategy_name}+{agent_name}", label) + identity_suffix(
        strategy_options=strategy_options, scoring_options=scoring,
        model_kwargs=spec.model_kwargs, epochs=spec.epochs if spec.epochs > 1 else None,
        judge=None if spec.judge is None else model_label(
            spec.judge), judge_kwargs=spec.judge_kwargs if spec.judge is not None else None)
    run_dir = RunDir(inside(spec.out, name, what="run name"))
    made = [d for d in (run_dir.path, *run_dir.path.parents) if not d.exists()]
    # A second process on this run stops at once; a failed start leaves nothing behind.
    with run_dir.lock(), _undone_on_failure(run_dir, made):
        if spec.fresh:
            for file in (CONFIG, EXAMPLES, SUMMARY):
                (run_dir.path / file).unlink(missing_ok=True)
        config = RunConfig(
            experiment=name, benchmark=bench.name, task=split.task, subset=split.subset,
            strategy=strategy_name,
            strategy_options=redact(_jsonable(strategy_options), names=False),
            epochs=spec.epochs,
            agent=agent_name,
            model={"spec": label, "params": model_params(inner),
                   **({"server": server.record()} if server is not None else {})},
            judge=({"spec": model_label(judge_inner), "params": model_params(judge_inner),
                    **({"from_model": judge_inherited} if judge_inherited else {})}
                   if judge_inner is not None else None),
            scoring_options=redact(_jsonable(scoring), names=False),
            dataset=DatasetRef(name=split.name, id=str(first.dataset_id),
                               examples=len(examples), samples=spec.samples,
                               total=len(every), hash=ds_hash,
                               source=(first.metadata or {}).get("source"),
                               data_dir=str(Path(data).resolve())),
            versions=package_versions())
        prior: dict[str, Prior] = {}
        prior_scores: list[ExampleScore] = []
        edited: set[str] = set()  # changed after they were written: run again, not trusted
        if (old := _prior_config(run_dir)) is not None:
            run_dir.repair_torn_tail()
            edited = _edited_ids(run_dir)
            for result in run_dir.iter_results():  # one at a time: only what resume needs
                prior[result.example_id] = Prior(result.status, result.attempt, result.index,
                                                 result.data_digest)
                if result.status != "infra_error" and result.example_id not in edited:
                    prior_scores.append(ExampleScore.model_validate(result.score or {}))
            _check_resumable(run_dir.path, old, config, every,
                             {k: v for k, v in prior.items() if k not in edited})
            config = config.model_copy(update={"created_at": old.created_at,
                                               "langsmith": old.langsmith})

        # Where runs go: LangSmith, or nowhere.
        do_upload = api_key_configured() if spec.upload is None else spec.upload
        data_for_run: Sequence[Example] = attempts
        session: TracerSession | None = None
        metadata = {"benchmark": bench.name, "task": split.task, "subset": split.subset,
                    split.kind: split.subset, "strategy": strategy_name,
                    "model": label, "judge": config.judge["spec"] if config.judge else None,
                    "scoring": scoring.get("scoring"), "dataset_hash": ds_hash,
                    "tooleval_experiment": name}
        if do_upload:
            if spec.epochs > 1:
                raise ValueError("--epochs above 1 runs offline only for now: add --no-upload "
                                 "(the runs can be compared and viewed locally)")
            client = client or _upload_client()
            data_for_run = await asyncio.to_thread(_remote_examples, client, split, data,
                                                   list(examples))
            session = await asyncio.to_thread(
                _session, client, name, data_for_run[0].dataset_id, metadata, config.langsmith,
                f"{bench.name} {split.task} ({split.subset}), strategy {strategy_name}, "
                f"model {label}; run by tooleval-agents")
            config = config.model_copy(update={
                "langsmith": {"session_id": str(session.id), "session_name": session.name,
                              "dataset_id": str(session.reference_dataset_id), "url": session.url},
                "dataset": config.dataset.model_copy(
                    update={"id": str(session.reference_dataset_id)})})
        else:
            client = client or _offline_client()
        run_dir.write_config(config)

        done = {eid for eid, r in prior.items() if r.status != "infra_error"
                and eid not in edited}
        # Positions, not examples: each pending example is made when its batch starts.
        positions = [p for p, eid in enumerate(ids) if eid not in done]
        pending = Picked(data_for_run, positions)
        exp = _Experiment(
            name=name, split=split, scorer=scorer, run_dir=run_dir,
            prior=prior, workflow=as_target(graph),
            progress=_Progress(sys.stderr.isatty() if spec.progress is None else spec.progress,
                               len(ids), len(ids) - len(pending), name),
            upload=do_upload, threaded_scoring=judge_model is not None, index=index)
        for score in prior_scores:
            exp.tally(score)
        del prior_scores

        if pending:
            try:
                await _evaluate(exp, pending, [ids[p] for p in positions], client=client,
                                session=session,
                                upload=do_upload, max_concurrency=spec.max_concurrency,
                                metadata=metadata)
            finally:
                try:
                    exp.writer.close()  # raises a failed fsync
                finally:
                    exp.prompts.close()
            if exp.halted is not None:
                raise exp.halted
            if do_upload:
                await asyncio.to_thread(client.flush)

        # The summary reads the results back from the file: the run's data (the split's text,
        # the offline model's answers) and bookkeeping go first, so a large run's peak is
        # one of the two, not both.
        endpoint = endpoint_of(inner)
        del every, examples, attempts, data_for_run, pending, exp, graph, wrapped, inner
        answer_key = None
        summary = summarize(name, scorer, ids, run_dir,
                            wall_s=time.perf_counter() - started, epochs=spec.epochs,
                            model=label, judge=config.judge["spec"] if config.judge else None)
        summary.notes[:0] = [*notes, *replay_note(endpoint, server,
                                                  summary.usage.get("cache_hits", 0.0))]
        run_dir.write_summary(summary)
        summary = summary.model_copy(update={"run_dir": str(run_dir.path)})
        if session is not None:
            with contextlib.suppress(Exception):  # the run is complete locally either way
                from datetime import UTC, datetime

                await asyncio.to_thread(
                    client.update_project, session.id, end_time=datetime.now(UTC),
                    metadata={**metadata, "metrics": summary.metrics, "counts": summary.counts})
        return summary


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
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                # aevaluate prints the experiment name and warns that upload_results=False is
                # beta: neither belongs on our stdout.
                warnings.simplefilter("ignore")
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


def _prior_config(run_dir: RunDir) -> RunConfig | None:
    """The config of the run the directory holds (``None``: a new run). Results without a
    readable config are refused: run again, every example would be run and billed twice."""
    todo = "Start over with --fresh (its results are discarded), or move the directory away."
    if not (run_dir.path / CONFIG).is_file():
        results = run_dir.path / EXAMPLES
        if results.is_file() and results.stat().st_size:
            raise ResumeError(f"{results} holds results but {run_dir.path} has no {CONFIG}: "
                              f"they cannot be checked against this run's data and settings. "
                              f"{todo}")
        return None
    try:
        return run_dir.read_config()
    except DataFormatError as exc:
        raise ResumeError(f"{exc}: the run cannot be resumed without it. {todo}") from exc


@contextlib.contextmanager
def _undone_on_failure(run_dir: RunDir, made: Sequence[Path]) -> Iterator[None]:
    """A run that fails before its first result, in a directory it made (``made``: the
    folders it created, innermost first), leaves nothing behind: its files, then its folders,
    are removed (a half-made directory would look like a run)."""
    try:
        yield
    except BaseException:
        if made and not (run_dir.path / EXAMPLES).exists():
            for name in (CONFIG, PROMPTS, SUMMARY, LOCK):
                with contextlib.suppress(OSError):
                    (run_dir.path / name).unlink(missing_ok=True)
            for folder in made:  # a folder holding anything else stays
                with contextlib.suppress(OSError):
                    folder.rmdir()
        raise


def _edited_ids(run_dir: RunDir) -> set[str]:
    """The examples whose latest line was changed after it was written (said in one warning
    line): a resume runs them again rather than trusting them."""
    edited = run_dir.edited()
    if edited:
        log.warning("%s: their examples run again", edited_note(run_dir.path / EXAMPLES, edited))
    return {eid for _, eid in edited}


def _check_resumable(path: Path, old: RunConfig, new: RunConfig, every: Sequence[Example],
                     prior: Mapping[str, Prior]) -> None:
    # Every example the directory holds, and the old selection, taken from today's data, must
    # be the data they ran on; the new selection may then differ (a larger --limit extends).
    digests = {str(e.id): example_digest(e.inputs or {}, e.outputs or {}) for e in every
               if str(e.id) in prior}  # one pass, a digest kept per example the run holds
    changed = next((r for eid, r in prior.items() if r.data_digest is not None
                    and digests.get(eid) != r.data_digest), None)
    before: Sequence[Example]
    try:
        before = select(every, old.dataset.samples)[:old.dataset.examples]
    except ValueError:
        before = []
    found = dataset_hash(before)
    if changed is not None:
        raise ResumeError(
            f"{path} holds a run over other data (example {changed.index} is not what it ran "
            "on: the data files or the split changed). Start over with --fresh, or keep it "
            "and choose another --out.")
    if len(before) != old.dataset.examples or found != old.dataset.hash:
        raise ResumeError(
            f"{path} holds a run over other data (its {old.dataset.examples} examples hash to "
            f"{old.dataset.hash[:12]}, the same examples here to {found[:12]}: the data files "
            "or the split changed). Start over with --fresh, or keep it and choose another "
            "--out.")
    differs = [what for what, a, b in (
        ("model", old.model.get("spec"), new.model.get("spec")),
        ("strategy", old.strategy, new.strategy),
        ("agent", old.agent, new.agent),
        ("strategy options", old.strategy_options, new.strategy_options),
        ("scoring options", old.scoring_options, new.scoring_options),
        ("judge", (old.judge or {}).get("spec"), (new.judge or {}).get("spec")),
        ("model server: its model file, chat template or build changed",
         server_changed(old.model, new.model), False),
    ) if a != b]
    if differs:
        raise ResumeError(f"{path} holds a run with other settings ({', '.join(differs)}). "
                          "Start over with --fresh, or choose another --out.")


# ----------------------------------------------------------------------------- sync wrapper

_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def _runner_loop() -> asyncio.AbstractEventLoop:
    """One event loop for every sync call in this process, in a daemon thread: LangChain's
    provider clients keep async HTTP pools bound to the loop that made them, so a second
    ``asyncio.run`` would find them closed."""
    global _loop
    with _loop_lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="tooleval-runner",
                                      daemon=True)
            thread.start()
            _loop = loop
        return _loop


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine on the runner's event loop and wait for it (Ctrl-C cancels it)."""
    loop = _runner_loop()
    if threading.current_thread().name == "tooleval-runner":
        coro.close()
        raise RuntimeError("run_experiment called from inside a run: await arun_experiment")
    try:  # scheduled inside: an interrupt that lands as the run starts winds it down too
        return asyncio.run_coroutine_threadsafe(coro, loop).result()
    except KeyboardInterrupt:
        # Cancelling the future alone returns at once while LangSmith's own tasks run on; they
        # then die at interpreter shutdown with tracebacks. Wind every task down first.
        winding = asyncio.run_coroutine_threadsafe(_cancel_tasks(_WIND_DOWN_S), loop)
        with contextlib.suppress(Exception):
            winding.result(timeout=_WIND_DOWN_S + 1)
        raise


_WIND_DOWN_S = 10.0


async def _cancel_tasks(timeout: float) -> None:
    """Cancel every other task on the runner loop and wait (up to ``timeout`` s) for them to
    end; their errors are read here, so none is reported later as never retrieved."""
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=timeout)
    for task in tasks:
        if task.done() and not task.cancelled():
            task.exception()


def run_experiment(spec: RunSpec | str | Benchmark, /, *, client: Client | None = None,
                   **options: Any) -> RunSummary:
    """Run (or resume) a strategy with a model over one split; returns the run's summary.

    ``spec`` is a :class:`~tooleval_agents.run.spec.RunSpec`, or a benchmark name with the
    RunSpec fields as keyword options (``model`` is required). Results go to
    ``<out>/<benchmark>-<task>-<subset>-<strategy>-<model>/`` (config.json, examples.jsonl,
    summary.json). Calling it again with the same settings resumes; ``client`` is a LangSmith
    client (default: offline, or from the environment to upload).

    Raises:
        ResumeError: the results directory holds a run over other data or settings.
        ToolevalError, ValueError, KeyError: unknown names, missing data, bad options.
        TypeError: an option RunSpec does not have.

    Works from sync code and from Jupyter (a running loop is left alone: the run has its own
    loop thread); inside async code, ``await arun_experiment(...)``.

    Example::

        run_experiment("appbench", subset="ss", model="reference", limit=20)
    """
    return run_sync(arun_experiment(spec, client=client, **options))


__all__ = ["EMPTY_OUTPUTS", "HARNESS_KEY", "ResumeError", "RunSpec", "arun_experiment",
           "as_target", "cache_applies",
           "dataset_hash", "experiment_name", "model_label", "path_safe", "resolve_split",
           "run_experiment", "run_sync", "summarize"]
