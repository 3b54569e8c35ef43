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
import logging
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooleval_agents.agents import agent_label, resolve_agent
from tooleval_agents.contracts import (
    ExampleScore,
    ReferenceAnswers,
    ScoringContext,
    Split,
    Strategy,
    StrategyContext,
    resolve_options,
)
from tooleval_agents.data.datadir import resolve_data_dir
from tooleval_agents.data.langsmith_datasets import (
    api_key_configured,
    to_examples,
)
from tooleval_agents.data.paths import inside
from tooleval_agents.errors import ToolevalError
from tooleval_agents.models.cache import SQLiteCache
from tooleval_agents.models.redaction import (
    model_params,
    redact,
    register_secrets_in,
)
from tooleval_agents.models.reference import AnswerKey
from tooleval_agents.models.retry import (
    RetryingChatModel,
    RetryPolicy,
    make_rate_limiter,
)
from tooleval_agents.models.server_identity import (
    ServerIdentity,
    endpoint_of,
    probe_server,
    replay_note,
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
from tooleval_agents.registry import (
    Benchmark,
    benchmarks,
    build_scorer,
    get_benchmark,
    get_strategy,
    register,
    resolve_split,
    strategies,
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
from tooleval_agents.run.langsmith_io import (
    _offline_client,
    _remote_examples,
    _session,
    _upload_client,
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
from tooleval_agents.run.transcripts import RECORDER

if TYPE_CHECKING:
    from langchain_core.caches import BaseCache
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import Runnable
    from langsmith import Client
    from langsmith.schemas import Example, TracerSession

log = logging.getLogger(__name__)



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
    scorer = build_scorer(bench, split, scoring, ScoringContext(data_dir=data, judge=judge_model))
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
                await asyncio.to_thread(
                    client.update_project, session.id, end_time=datetime.now(UTC),
                    metadata={**metadata, "metrics": summary.metrics, "counts": summary.counts})
        return summary


# ----------------------------------------------------------------------------- sync wrapper


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
