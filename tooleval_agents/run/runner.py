"""Running an experiment: one strategy with one model over one split, as a LangSmith evaluation.

:func:`run_experiment` (sync, usable from scripts and Jupyter) and :func:`arun_experiment`
(async) build the strategy's workflow around the model, run it as the target of
``langsmith.aevaluate`` with the benchmark's scorer as row evaluator, and keep the results
directory (see :mod:`tooleval_agents.results.rundir`):

* the directory is the one of the run's identity (:mod:`tooleval_agents.run.identity`: what
  it measures, the code of the user's agent or strategy included): ``<out>/<readable name>/``,
  or a numbered sibling (``-v2``) when that one holds a run of something else, said in one
  line; a changed agent is never answered from an old run's results;
* every finished example is appended to ``examples.jsonl`` by the row evaluator as soon as it
  is scored (fsynced by a background thread), so a crash loses nothing that finished;
* ``summary.json`` is computed by our own code over every example the directory holds:
  ``Scorer.aggregate`` over the ``ok``, ``model_error`` and ``agent_error`` examples (a
  workflow failure scores as a wrong answer, never dropped); ``infra_error`` examples
  (provider failures left after retries) are left out of the metrics and counted apart; a
  command whose selection adds nothing to the directory runs and rewrites nothing;
* re-running the same command resumes, and says so ("resumed N of M": a warning, and the
  summary's ``session``): finished examples are not run again (no model call), infrastructure
  errors are retried (``attempt`` + 1); changed data is refused (``fresh=True`` starts over).

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
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooleval_agents.contracts import (
    ReferenceAnswers,
    Scorer,
    ScoringContext,
)
from tooleval_agents.data.datadir import data_dir_or_samples
from tooleval_agents.data.inputs import noting
from tooleval_agents.data.langsmith_datasets import (
    api_key_configured,
    to_examples,
)
from tooleval_agents.errors import ToolevalError
from tooleval_agents.mcp.agent_process import end_all, left_running
from tooleval_agents.mcp.log import CALLS
from tooleval_agents.models.batch.ledger import BATCHES, open_batches
from tooleval_agents.models.reference import AnswerKey
from tooleval_agents.models.server_identity import (
    ServerIdentity,
    endpoint_of,
    replay_note,
)
from tooleval_agents.models.specs import (
    cache_applies,
)
from tooleval_agents.redaction import (
    model_params,
    redact,
    redact_text,
)
from tooleval_agents.registry import (
    Benchmark,
    build_scorer,
    resolve_split,
)
from tooleval_agents.results.dirlock import Held
from tooleval_agents.results.epochs import epoch_id, with_epochs
from tooleval_agents.results.fault_metrics import with_fault_metrics
from tooleval_agents.results.records import UNSEALED_NOTE, DatasetRef, RunConfig
from tooleval_agents.results.rundir import (
    CONFIG,
    EXAMPLES,
    SUMMARY,
    RunDir,
    RunSummary,
    dataset_hash,
)
from tooleval_agents.results.selection import Picked, select, union
from tooleval_agents.results.summary import Spend
from tooleval_agents.run.experiment import (
    HARNESS_KEY,
    _evaluate,
    _Experiment,
    _jsonable,
    _Progress,
    summarize,
)
from tooleval_agents.run.identity import RunIdentity, place_run
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
    model_label,
    package_versions,
    path_safe,
)
from tooleval_agents.run.resume import (
    Resumed,
    ResumeError,
    _undone_on_failure,
    check_server,
    legacy_matches,
    read_prior,
)
from tooleval_agents.run.spec import RunSpec

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable
    from langsmith import Client
    from langsmith.schemas import Example, TracerSession
from tooleval_agents.run.served import ToolServers
from tooleval_agents.run.setup import (
    _build,
    _Models,
    _models,
    _Plan,
    _plan,
    examples_in_flight,
    model_gateways,
    model_label_of,
    read_late,
    run_identity_of,
    run_name,
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
            played = plan.answers
            assert isinstance(played, ReferenceAnswers)  # checked in _plan
            gold.add(played.input_key(plan.split, e.inputs or {}),
                     played.gold_answers(plan.split, e.inputs or {}, e.outputs or {}))

    ds_hash = dataset_hash(examples, visit)
    if answer_key is not None:
        answer_key.update(gold)
    ids = [epoch_id(eid, epoch) for epoch in range(epochs) for eid, _ in base]
    index = {epoch_id(eid, epoch): at for epoch in range(epochs) for eid, at in base}
    return ds_hash, ids, index


def _config(spec: RunSpec, plan: _Plan, models: _Models, name: str, identity: RunIdentity,
            held: _Held, total: int, data: Path) -> RunConfig:
    first = held.examples[0]
    judge = models.judge_inner
    return RunConfig(
        experiment=name, benchmark=plan.bench.name, task=plan.split.task,
        subset=plan.split.subset, strategy=plan.strategy_name,
        strategy_options=redact(_jsonable(plan.strategy_options), names=False),
        epochs=spec.epochs, agent=plan.agent_name, identity=identity.model_dump(),
        agent_cmd=(redact_text(spec.agent_cmd) if spec.agent_cmd is not None else
                   f"--agent-preset {plan.preset.describe()}" if plan.preset is not None
                   else None),
        agent_sandbox=None if not spec.outside_agent else (
            spec.sandbox.record() if spec.sandbox is not None else {"sealed": False}),
        model={"spec": model_label_of(spec), "params": model_params(models.inner),
               **({"server": models.server.record()} if models.server is not None else {})},
        judge=({"spec": model_label(judge), "params": model_params(judge),
                **({"from_model": models.judge_inherited} if models.judge_inherited else {})}
               if judge is not None else None),
        scoring_options=redact(_jsonable(plan.scoring), names=False),
        tool_faults=spec.faults.record() if spec.faults is not None else None,
        dataset=DatasetRef(name=plan.split.name, id=str(first.dataset_id),
                           examples=len(held.examples), samples=held.samples, total=total,
                           hash=held.hash, source=(first.metadata or {}).get("source"),
                           data_dir=str(Path(data).resolve())),
        versions=package_versions())


@dataclass
class _Held:
    """The examples a run directory holds once this command's selection joins it."""

    examples: Sequence[Example]
    samples: str | None
    """Its selection as ``--samples`` reads it (``None``: the first N of the split)."""
    hash: str = ""
    ids: list[str] = field(default_factory=list)
    """Every attempt's id, epoch by epoch."""
    index: dict[str, int] = field(default_factory=dict)
    selected: list[int] = field(default_factory=list)
    """Positions in :attr:`ids` of the attempts this command selected."""


def _hold(plan: _Plan, models: _Models, every: Sequence[Example], resumed: Resumed,
          selected: Picked[Example], epochs: int) -> _Held:
    """What the directory holds with ``selected`` added (:func:`~tooleval_agents.run.
    selection.union`): its examples' hash, attempt ids and indices, and the offline model's
    answers."""
    examples, samples = union(every, resumed.before, selected)
    held = _Held(examples, samples)
    held.hash, held.ids, held.index = _gold_and_ids(plan, examples, models.answer_key, epochs)
    at = {pos: i for i, pos in enumerate(examples.positions)}
    n = len(examples)
    held.selected = [k * n + at[pos] for k in range(epochs) for pos in selected.positions]
    return held


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
    data, note = data_dir_or_samples(plan.bench, [plan.split], spec.data_dir)
    if note:  # no data named and none fetched: the bundled samples, said as `run` says it
        log.warning("%s", note)
    every = to_examples(plan.split, data)
    selected = select(every, spec.samples, spec.limit)
    if not selected:
        raise ToolevalError(f"{plan.split.name} has no examples in {data}")
    models = await _models(spec, plan)
    servers = ToolServers()  # the MCP server, if the workflow needs one
    gateways = model_gateways(spec, models)  # the model served to an agent command
    with noting() as inputs:  # what the scorer and the workflow read: part of the identity
        scorer = build_scorer(plan.bench, plan.split, plan.scoring,
                              ScoringContext(data_dir=data, judge=models.judge))
        if spec.faults is not None:
            scorer = with_fault_metrics(scorer)
        graph = _build(plan, models, data, servers, gateways)
    identity, unreadable = run_identity_of(spec, plan, models, inputs)
    run_dir = _place(spec, plan, identity, unreadable)
    name = run_dir.path.name
    servers.log_to(run_dir.path / CALLS)
    made = [d for d in (run_dir.path, *run_dir.path.parents) if not d.exists()]
    # A second process on this run stops at once; a failed start leaves nothing behind.
    with run_dir.lock() as taken, _undone_on_failure(run_dir, made), servers, gateways, \
            read_late(inputs, name):
        _say_stale(run_dir, taken)
        if spec.fresh:
            for file in (CONFIG, EXAMPLES, SUMMARY, BATCHES):
                (run_dir.path / file).unlink(missing_ok=True)
        resumed = read_prior(run_dir, every, identity.digest)
        held = _hold(plan, models, every, resumed, selected, spec.epochs)
        config = _config(spec, plan, models, name, identity, held, len(every), data)
        if resumed.old is not None:
            check_server(run_dir.path, resumed.old, config)
            config = config.model_copy(update={"created_at": resumed.old.created_at,
                                               "langsmith": resumed.old.langsmith})
        where = await _destination(spec, plan, client, config, held.examples,
                                   with_epochs(held.examples, spec.epochs), data)
        if where.config != resumed.old:  # a selection that adds nothing rewrites nothing
            run_dir.write_config(where.config)
        done = resumed.done()
        positions = [p for p in held.selected if held.ids[p] not in done]
        _say_resumed(run_dir, held, positions, spec.epochs)
        exp = _experiment(spec, name, plan, scorer, run_dir, resumed, held.index, graph,
                          progress=(len(held.selected), len(held.selected) - len(positions)),
                          upload=where.upload, threaded_scoring=models.judge is not None)
        async with open_batches(models.batches, run_dir.path, name):
            await _execute(exp, spec, where, held.ids, positions,
                           examples_in_flight(spec, models))
        # The summary reads the results back from the file: the run's data (the split's text,
        # the offline model's answers) and bookkeeping go first, so a large run's peak is
        # one of the two, not both.
        endpoint, server, notes = endpoint_of(models.inner), models.server, models.notes
        session = _Session(len(held.selected), len(held.ids), [held.ids[p] for p in positions])
        del every, selected, exp, graph, models, resumed, held
        where.data = []
        return await _finish(spec, name, scorer, run_dir, where, session, started=started,
                             endpoint=endpoint, server=server, notes=notes)


def _place(spec: RunSpec, plan: _Plan, identity: RunIdentity, unreadable: str | None) -> RunDir:
    """The run's directory (:func:`~tooleval_agents.run.identity.place_run`), saying why it
    is not the one its name gives, and what of the run cannot be known."""
    placed = place_run(spec.out, run_name(spec, plan), identity,
                       adopts=lambda old: legacy_matches(old, identity.parts))
    for note in filter(None, (placed.note, unreadable)):
        log.warning("%s", note)
    return RunDir(placed.path)


def _say_stale(run_dir: RunDir, held: Held) -> None:
    """What a run that was killed while it held the directory left: said in one line, and
    its agents' processes that still run (unsealed, off Linux) are ended."""
    if held.stale is None or held.stale == os.getpid():
        return
    try:
        os.kill(held.stale, 0)
        reused = True
    except ProcessLookupError:
        reused = False
    except PermissionError:
        reused = True
    left = [] if reused else left_running(held.stale)
    end_all(left)
    what = ("its PID is now another process's, so what it left cannot be told apart" if reused
            else f"{len(left)} process(es) its agent commands started still ran: ended "
            f"(PID {', '.join(map(str, left[:10]))})" if left
            else "none of its agent commands' processes was left running")
    log.warning("%s: the run before this one (process %d) was stopped without ending (killed, "
                "or it crashed): its lock is taken over and the examples it was running run "
                "again; %s", run_dir.path, held.stale, what)


def _say_resumed(run_dir: RunDir, held: _Held, positions: list[int], epochs: int) -> None:
    """Every resume says so: ``resumed N of M`` (a warning, and the summary's ``session``)."""
    selected, resumed = len(held.selected), len(held.selected) - len(positions)
    if not resumed:
        return
    unit = "attempts" if epochs > 1 else "examples"
    rest = (f"{len(positions)} to run" if positions else "nothing to run")
    if len(held.ids) > selected:
        rest += (f"; the directory holds {len(held.ids)} {unit}, and its summary is over all "
                 "of them")
    log.warning("%s: resumed %d of %d %s from %s (%s)", run_dir.path.name, resumed, selected,
                unit, run_dir.path, rest)


@dataclass
class _Session:
    """What this call of the runner did, apart from the results it found stored."""

    selected: int
    """Attempts this command selected."""
    held: int
    """Attempts the directory holds."""
    ran: list[str]
    """The attempts it ran."""

    def work(self, run_dir: RunDir, *, model: str | None, judge: str | None) -> dict[str, Any]:
        """``resumed`` N ``of`` M selected, ``held``, ``ran``, ``errors`` and what was paid
        (:class:`~tooleval_agents.results.summary.Spend`)."""
        spend = Spend()
        errors = 0
        for result in run_dir.iter_heads(self.ran) if self.ran else ():
            errors += result.status == "infra_error"
            spend.add(result)
        return {"resumed": self.selected - len(self.ran), "of": self.selected,
                "held": self.held, "ran": len(self.ran), "errors": errors,
                **spend.priced(model=model, judge=judge)}


def _experiment(spec: RunSpec, name: str, plan: _Plan, scorer: Scorer, run_dir: RunDir,
                resumed: Resumed, index: dict[str, int], graph: Runnable[Any, Any], *,
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


async def _finish(spec: RunSpec, name: str, scorer: Scorer, run_dir: RunDir,
                  where: _Destination, session: _Session, *, started: float, endpoint: Any,
                  server: ServerIdentity | None, notes: list[str]) -> RunSummary:
    """The directory's summary: the stored one when this session added nothing to what it
    describes (a smaller selection rewrites nothing), else computed over every result."""
    config = where.config
    judge = config.judge["spec"] if config.judge else None
    work = session.work(run_dir, model=model_label_of(spec), judge=judge)
    stored = run_dir.read_summary() if (run_dir.path / SUMMARY).is_file() else None
    if not session.ran and stored is not None and run_dir.summary_is_current(stored):
        return stored.model_copy(update={"session": work})
    summary = summarize(name, scorer, session.held, run_dir,
                        wall_s=time.perf_counter() - started, epochs=spec.epochs,
                        model=model_label_of(spec), judge=judge)
    summary.notes[:0] = [*([UNSEALED_NOTE] if config.unsealed else []), *notes,
                         *replay_note(endpoint, server, work["cache_hits"])]
    summary = summary.model_copy(update={"session": work})
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
    ``<out>/<benchmark>-<task>-<subset>-<strategy>[+<agent>]-<model>[-<key>=<value>...]/``
    (config.json, examples.jsonl, summary.json), or a numbered sibling when that directory
    holds a run of something else (e.g. an edited agent). Calling it again with the same
    settings and code resumes (the summary's ``session`` says ``resumed`` N ``of`` M, and a
    warning); ``client`` is a LangSmith client (default: offline, or from the environment to
    upload).

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


__all__ = ["HARNESS_KEY", "ResumeError", "RunSpec", "arun_experiment",
           "as_target", "cache_applies",
           "dataset_hash", "experiment_name", "model_label", "path_safe", "resolve_split",
           "run_experiment", "run_sync", "summarize"]
