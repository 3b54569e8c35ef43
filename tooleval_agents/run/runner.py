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
import logging
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooleval_agents.contracts import (
    ExampleScore,
    ReferenceAnswers,
    Scorer,
    ScoringContext,
)
from tooleval_agents.data.datadir import resolve_data_dir
from tooleval_agents.data.langsmith_datasets import (
    api_key_configured,
    to_examples,
)
from tooleval_agents.data.paths import inside
from tooleval_agents.errors import ToolevalError
from tooleval_agents.models.batch.ledger import BATCHES, open_batches
from tooleval_agents.models.redaction import (
    model_params,
    redact,
)
from tooleval_agents.models.reference import AnswerKey
from tooleval_agents.models.server_identity import (
    ServerIdentity,
    endpoint_of,
    replay_note,
)
from tooleval_agents.models.specs import (
    cache_applies,
)
from tooleval_agents.registry import (
    Benchmark,
    build_scorer,
    resolve_split,
)
from tooleval_agents.results.rundir import (
    CONFIG,
    EMPTY_OUTPUTS,
    EXAMPLES,
    SUMMARY,
    DatasetRef,
    RunConfig,
    RunDir,
    RunSummary,
    dataset_hash,
)
from tooleval_agents.run.epochs import epoch_id, with_epochs
from tooleval_agents.run.experiment import (
    HARNESS_KEY,
    Prior,
    _evaluate,
    _Experiment,
    _jsonable,
    _Progress,
    summarize,
)
from tooleval_agents.run.faults import with_fault_metrics
from tooleval_agents.run.langsmith_io import (
    experiment_description,
    experiment_metadata,
    experiment_session,
    offline_client,
    outage,
    remote_examples,
    upload_client,
)
from tooleval_agents.run.loop import run_sync
from tooleval_agents.run.naming import (
    experiment_name,
    identity_suffix,
    model_label,
    package_versions,
    path_safe,
)
from tooleval_agents.run.resume import (
    ResumeError,
    _check_resumable,
    _edited_ids,
    _prior_config,
    _undone_on_failure,
)
from tooleval_agents.run.selection import Picked, select
from tooleval_agents.run.spec import RunSpec

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable
    from langsmith import Client
    from langsmith.schemas import Example, TracerSession
from tooleval_agents.run.setup import (
    _build,
    _Models,
    _models,
    _Plan,
    _plan,
    examples_in_flight,
)

log = logging.getLogger(__name__)


# ----------------------------------------------------------------------------- resolving

WORKFLOW_OUTPUTS = ("raw_outputs", "prediction", "parse_error", "trace", "usage")
"""What a workflow's final state keeps in the results (the rest is its scratch space)."""


def as_target(workflow: Runnable[Any, Any]) -> Callable[..., Any]:
    """A workflow as a ``langsmith.evaluate`` target: example inputs in, the workflow's
    :data:`WORKFLOW_OUTPUTS` out."""

    async def target(inputs: dict[str, Any]) -> dict[str, Any]:
        state = await workflow.ainvoke({"inputs": inputs})
        return {k: state.get(k) for k in WORKFLOW_OUTPUTS}

    return target


# ----------------------------------------------------------------------------- entry points


def _gold_and_ids(plan: _Plan, examples: Sequence[Example], answer_key: AnswerKey | None,
                  epochs: int) -> tuple[str, list[str], dict[str, int]]:
    """One pass over the selection (a lazy split makes each example once here): its hash,
    every attempt's id (epoch by epoch, as with_epochs makes them) with its split index, and
    the offline model's answers. After build: a strategy may need its context (e.g. the data
    directory) to state the gold answers of its prompts."""
    base: list[tuple[str, int]] = []
    gold = AnswerKey()

    def visit(e: Example) -> None:
        base.append((str(e.id), int((e.metadata or {}).get("index", len(base)))))
        if answer_key is not None:
            assert isinstance(plan.strat, ReferenceAnswers)  # checked in _plan
            gold.add(plan.strat.input_key(plan.split, e.inputs or {}),
                     plan.strat.gold_answers(plan.split, e.inputs or {}, e.outputs or {}))

    ds_hash = dataset_hash(examples, visit)
    if answer_key is not None:
        answer_key.update(gold)
    ids = [epoch_id(eid, epoch) for epoch in range(epochs) for eid, _ in base]
    index = {epoch_id(eid, epoch): at for epoch in range(epochs) for eid, at in base}
    return ds_hash, ids, index


def _run_name(spec: RunSpec, plan: _Plan) -> str:
    return experiment_name(plan.split, plan.strategy_name if plan.agent_name is None
                           else f"{plan.strategy_name}+{plan.agent_name}",
                           model_label(spec.model)) + identity_suffix(
        strategy_options=plan.strategy_options, scoring_options=plan.scoring,
        model_kwargs=spec.model_kwargs, epochs=spec.epochs if spec.epochs > 1 else None,
        judge=None if spec.judge is None else model_label(spec.judge),
        judge_kwargs=spec.judge_kwargs if spec.judge is not None else None,
        tool_faults=spec.faults.record() if spec.faults is not None else None)


def _config(spec: RunSpec, plan: _Plan, models: _Models, name: str,
            examples: Sequence[Example], total: int, ds_hash: str, data: Path) -> RunConfig:
    first = examples[0]
    judge = models.judge_inner
    return RunConfig(
        experiment=name, benchmark=plan.bench.name, task=plan.split.task,
        subset=plan.split.subset, strategy=plan.strategy_name,
        strategy_options=redact(_jsonable(plan.strategy_options), names=False),
        epochs=spec.epochs, agent=plan.agent_name,
        model={"spec": model_label(spec.model), "params": model_params(models.inner),
               **({"server": models.server.record()} if models.server is not None else {})},
        judge=({"spec": model_label(judge), "params": model_params(judge),
                **({"from_model": models.judge_inherited} if models.judge_inherited else {})}
               if judge is not None else None),
        scoring_options=redact(_jsonable(plan.scoring), names=False),
        tool_faults=spec.faults.record() if spec.faults is not None else None,
        dataset=DatasetRef(name=plan.split.name, id=str(first.dataset_id),
                           examples=len(examples), samples=spec.samples, total=total,
                           hash=ds_hash, source=(first.metadata or {}).get("source"),
                           data_dir=str(Path(data).resolve())),
        versions=package_versions())


@dataclass
class _Resumed:
    """What a run directory already holds (empty for a new run)."""

    config: RunConfig
    prior: dict[str, Prior] = field(default_factory=dict)
    scores: list[ExampleScore] = field(default_factory=list)
    edited: set[str] = field(default_factory=set)
    """Changed after they were written: run again, not trusted."""


def _resume(run_dir: RunDir, config: RunConfig, every: Sequence[Example]) -> _Resumed:
    old = _prior_config(run_dir)
    if old is None:
        return _Resumed(config)
    run_dir.repair_torn_tail()
    found = _Resumed(config, edited=_edited_ids(run_dir))
    for result in run_dir.iter_results():  # one at a time: only what resume needs
        found.prior[result.example_id] = Prior(result.status, result.attempt, result.index,
                                               result.data_digest)
        if result.status != "infra_error" and result.example_id not in found.edited:
            found.scores.append(ExampleScore.model_validate(result.score or {}))
    _check_resumable(run_dir.path, old, config, every,
                     {k: v for k, v in found.prior.items() if k not in found.edited})
    found.config = config.model_copy(update={"created_at": old.created_at,
                                             "langsmith": old.langsmith})
    return found


@dataclass
class _Destination:
    """Where the run's traces go: LangSmith (an experiment session), or nowhere."""

    client: Client
    upload: bool
    data: Sequence[Example]
    """The examples as the target gets them (LangSmith's copies when uploading)."""
    config: RunConfig
    metadata: dict[str, Any]
    session: TracerSession | None = None


async def _destination(spec: RunSpec, plan: _Plan, client: Client | None, config: RunConfig,
                       examples: Sequence[Example], attempts: Sequence[Example],
                       data: Path) -> _Destination:
    split = plan.split
    metadata = experiment_metadata(config, split.kind)
    if not (api_key_configured() if spec.upload is None else spec.upload):
        return _Destination(client or offline_client(), False, attempts, config, metadata)
    if spec.epochs > 1:
        raise ValueError("--epochs above 1 runs offline only for now: add --no-upload "
                         "(the runs can be compared and viewed locally)")
    client = client or upload_client()
    try:
        remote = await asyncio.to_thread(remote_examples, client, split, data, list(examples))
        session = await asyncio.to_thread(
            experiment_session, client, config.experiment, remote[0].dataset_id, metadata,
            config.langsmith, experiment_description(config))
    except Exception as exc:
        # Local first: an unreachable or refusing LangSmith never stops a run.
        why = outage(exc)
        if why is None:
            raise
        log.warning("LangSmith unavailable (%s); run %s stays local and is not uploaded "
                    "(send it later: tooleval upload %s)", why, config.experiment,
                    Path(spec.out) / config.experiment)
        config = config.model_copy(update={"langsmith": {"uploaded": False, "error": why}})
        return _Destination(offline_client(), False, attempts, config, metadata)
    config = config.model_copy(update={
        "langsmith": {"session_id": str(session.id), "session_name": session.name,
                      "dataset_id": str(session.reference_dataset_id), "url": session.url},
        "dataset": config.dataset.model_copy(update={"id": str(session.reference_dataset_id)})})
    return _Destination(client, True, remote, config, metadata, session)


async def arun_experiment(spec: RunSpec | str | Benchmark, /, *, client: Client | None = None,
                          **options: Any) -> RunSummary:
    """Run (or resume) one experiment; see :func:`run_experiment`."""
    if not isinstance(spec, RunSpec):
        spec = RunSpec(benchmark=spec, **options)
    elif options:
        raise TypeError("give a RunSpec or keyword options, not both")
    started = time.perf_counter()
    plan = _plan(spec)
    data = resolve_data_dir(spec.data_dir)
    every = to_examples(plan.split, data)
    examples = select(every, spec.samples, spec.limit)
    if not examples:
        raise ToolevalError(f"{plan.split.name} has no examples in {data}")
    models = await _models(spec, plan)
    scorer = build_scorer(plan.bench, plan.split, plan.scoring,
                          ScoringContext(data_dir=data, judge=models.judge))
    if spec.faults is not None:
        scorer = with_fault_metrics(scorer)
    graph = _build(plan, models, data)
    ds_hash, ids, index = _gold_and_ids(plan, examples, models.answer_key, spec.epochs)
    name = _run_name(spec, plan)
    run_dir = RunDir(inside(spec.out, name, what="run name"))
    made = [d for d in (run_dir.path, *run_dir.path.parents) if not d.exists()]
    # A second process on this run stops at once; a failed start leaves nothing behind.
    with run_dir.lock(), _undone_on_failure(run_dir, made):
        if spec.fresh:
            for file in (CONFIG, EXAMPLES, SUMMARY, BATCHES):
                (run_dir.path / file).unlink(missing_ok=True)
        resumed = _resume(run_dir, _config(spec, plan, models, name, examples, len(every),
                                           ds_hash, data), every)
        where = await _destination(spec, plan, client, resumed.config, examples,
                                   with_epochs(examples, spec.epochs), data)
        run_dir.write_config(where.config)
        positions = _pending(resumed, ids)
        exp = _experiment(spec, name, plan, scorer, run_dir, resumed, index, graph,
                          progress=(len(ids), len(ids) - len(positions)), upload=where.upload,
                          threaded_scoring=models.judge is not None)
        async with open_batches(models.batches, run_dir.path, name):
            await _execute(exp, spec, where, ids, positions, examples_in_flight(spec, models))
        # The summary reads the results back from the file: the run's data (the split's text,
        # the offline model's answers) and bookkeeping go first, so a large run's peak is
        # one of the two, not both.
        endpoint, server, notes = endpoint_of(models.inner), models.server, models.notes
        del every, examples, exp, graph, models, resumed
        where.data = []
        summary = await _finish(spec, name, scorer, ids, run_dir, where,
                                started=started, endpoint=endpoint, server=server,
                                notes=notes)
        return summary.model_copy(update={"session": _session_work(run_dir, ids, positions)})


def _session_work(run_dir: RunDir, ids: list[str], positions: list[int]) -> dict[str, int]:
    """This session's work, told apart from the stored results a resume found (the summary's
    counts and usage cover both)."""
    ran = [ids[p] for p in positions]
    done = {"resumed": len(ids) - len(ran), "ran": len(ran), "errors": 0, "model_calls": 0,
            "cache_hits": 0}
    for result in run_dir.iter_results(ran):
        done["errors"] += result.status == "infra_error"
        done["model_calls"] += result.usage.model_calls
        done["cache_hits"] += result.usage.cache_hits
    return done


def _pending(resumed: _Resumed, ids: list[str]) -> list[int]:
    """Positions of the attempts not finished before (an edited line runs again)."""
    done = {eid for eid, r in resumed.prior.items() if r.status != "infra_error"
            and eid not in resumed.edited}
    return [p for p, eid in enumerate(ids) if eid not in done]


def _experiment(spec: RunSpec, name: str, plan: _Plan, scorer: Scorer, run_dir: RunDir,
                resumed: _Resumed, index: dict[str, int], graph: Runnable[Any, Any], *,
                progress: tuple[int, int], upload: bool,
                threaded_scoring: bool) -> _Experiment:
    exp = _Experiment(
        name=name, split=plan.split, scorer=scorer, run_dir=run_dir,
        prior=resumed.prior, workflow=as_target(graph),
        progress=_Progress(sys.stderr.isatty() if spec.progress is None else spec.progress,
                           *progress, name),
        upload=upload, threaded_scoring=threaded_scoring, index=index, faults=spec.faults)
    for score in resumed.scores:
        exp.tally(score)
    resumed.scores.clear()
    return exp


async def _execute(exp: _Experiment, spec: RunSpec, where: _Destination, ids: list[str],
                   positions: list[int], in_flight: int) -> None:
    """Run the attempts at ``positions`` (positions, not examples: each pending example is
    made when its batch starts)."""
    if not positions:
        return
    pending = Picked(where.data, positions)
    try:
        await _evaluate(exp, pending, [ids[p] for p in positions], client=where.client,
                        session=where.session, upload=where.upload,
                        max_concurrency=in_flight, metadata=where.metadata)
    finally:
        try:
            exp.writer.close()  # raises a failed fsync
        finally:
            exp.prompts.close()
    if exp.halted is not None:
        raise exp.halted
    if where.upload:
        await asyncio.to_thread(where.client.flush)


async def _finish(spec: RunSpec, name: str, scorer: Scorer, ids: list[str], run_dir: RunDir,
                  where: _Destination, *, started: float, endpoint: Any,
                  server: ServerIdentity | None, notes: list[str]) -> RunSummary:
    config = where.config
    summary = summarize(name, scorer, ids, run_dir, wall_s=time.perf_counter() - started,
                        epochs=spec.epochs, model=model_label(spec.model),
                        judge=config.judge["spec"] if config.judge else None)
    summary.notes[:0] = [*notes, *replay_note(endpoint, server,
                                              summary.usage.get("cache_hits", 0.0))]
    run_dir.write_summary(summary)
    summary = summary.model_copy(update={"run_dir": str(run_dir.path)})
    if where.session is not None:
        with contextlib.suppress(Exception):  # the run is complete locally either way
            await asyncio.to_thread(
                where.client.update_project, where.session.id, end_time=datetime.now(UTC),
                metadata={**where.metadata, "metrics": summary.metrics,
                          "counts": summary.counts})
    return summary


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
