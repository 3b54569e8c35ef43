"""What a run spec resolves to before anything runs: the benchmark, split, strategy (or the user's
agent) and options (:class:`_Plan`), and the model under test and the judge, each wrapped once
for retries, rate limit, accounting and the response cache (:class:`_Models`)."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooleval_agents.agents import agent_label, resolve_agent
from tooleval_agents.contracts import (
    ReferenceAnswers,
    Split,
    Strategy,
    StrategyContext,
)
from tooleval_agents.data.inputs import noting
from tooleval_agents.errors import ToolevalError
from tooleval_agents.mcp import require_mcp
from tooleval_agents.mcp.presets import Resolved, preset_named, resolve
from tooleval_agents.mcp.sandbox import AgentSandbox, check_sandbox, check_workdir
from tooleval_agents.models.batch.openai_http import batch_clients, openai_backend
from tooleval_agents.models.batch.queue import BatchQueue
from tooleval_agents.models.cache import SQLiteCache
from tooleval_agents.models.endpoints import endpoint_key, rate_limiter_for
from tooleval_agents.models.reference import AnswerKey
from tooleval_agents.models.retry import (
    RetryingChatModel,
    RetryPolicy,
)
from tooleval_agents.models.scheduling import PrefixScheduler
from tooleval_agents.models.server_identity import (
    ServerIdentity,
    probe_server,
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
from tooleval_agents.redaction import (
    TRANSPORT_ARGS,
    model_params,
    redact_text,
    register_secrets_in,
)
from tooleval_agents.registry import (
    Benchmark,
    agent_strategies,
    agent_strategy,
    benchmarks,
    get_benchmark,
    get_strategy,
    register,
    resolve_options,
    resolve_split,
    served_agent_io,
    strategies,
)
from tooleval_agents.run.identity import NAMED, RunIdentity, run_identity
from tooleval_agents.run.naming import (
    CONNECTION_ARGS,
    answer_args,
    model_label,
    readable_name,
)
from tooleval_agents.run.served import ModelGateways, ToolServers
from tooleval_agents.run.spec import RunSpec
from tooleval_agents.run.usercode import code_identity, command_files
from tooleval_agents.tool_faults import KINDS

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from langchain_core.caches import BaseCache
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import Runnable


log = logging.getLogger(__name__)


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


@dataclass
class _Plan:
    """What a spec resolves to before any model is made or example read."""

    bench: Benchmark
    split: Split
    strategy_name: str
    strat: Strategy
    """The run's own copy of the registered strategy."""
    factory: Callable[..., Any] | None
    agent_name: str | None
    strategy_options: dict[str, Any]
    scoring: dict[str, Any]
    offline: bool
    answers: ReferenceAnswers | None = None
    """Whose gold answers the offline model plays: the strategy itself, or, for an agent
    command, the strategy whose agent part it plays (``None``: no offline model)."""
    preset: Resolved | None = None
    """The agent preset that plays the run, its program found and its version read."""


def _plan(spec: RunSpec) -> _Plan:
    """Resolve the benchmark, split, strategy (or agent) and options; a bad one raises."""
    bench = _benchmark(spec.benchmark)
    split = resolve_split(bench, spec.task, spec.subset)
    if spec.outside_agent:
        return _command_plan(spec, bench, split)
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
                         f"{', '.join(agent_strategies(bench.name, split)) or 'none'}")
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
    return _Plan(bench, split, strategy_name, strat, factory,
                 agent_label(spec.agent) if spec.agent is not None else None,
                 dict(strategy_options), dict(scoring_options), offline,
                 strat if offline and isinstance(strat, ReferenceAnswers) else None)


def _command_plan(spec: RunSpec, bench: Benchmark, split: Split) -> _Plan:
    """An agent command playing the agent part the split serves (:mod:`tooleval_agents.mcp.
    external`): its strategy is :class:`~tooleval_agents.mcp.external.ServedAgent`."""
    from tooleval_agents.mcp.external import AgentCommand, ServedAgent

    require_mcp()
    if spec.strategy_options:
        raise ValueError("strategy options (-O) set the strategy's own agent: an agent "
                         "command takes none")
    name, io_for = served_agent_io(bench, split, spec.strategy)
    preset = (resolve(preset_named(spec.agent_preset), spec.agent_bin)
              if spec.agent_preset is not None else None)
    agent = spec.agent_name or spec.agent_preset or "agent"
    command = AgentCommand(spec.agent_cmd or "", agent, spec.agent_timeout,
                           model_label(spec.model) if spec.model is not None else None,
                           sealed_by(spec), preset)
    _, scoring_options = resolve_options(
        spec.prompts, strategy=(f"strategy {name}", None, None),
        scoring=(f"{bench.name} {split.task} scoring", bench.scoring_options(split),
                 spec.scoring_options))
    offline = isinstance(spec.model, str) and is_offline(spec.model)
    return _Plan(bench, split, name, ServedAgent(bench.name, name, io_for, command), None,
                 agent, {}, dict(scoring_options), offline,
                 _played_answers(bench, name, spec.model) if offline else None, preset)


def _played_answers(bench: Benchmark, name: str, model: Any) -> ReferenceAnswers:
    """The gold answers an offline model plays for an agent command: those of the strategy
    whose agent part the command plays (the model, served by the gateway, is its agent's)."""
    played = copy.copy(strategies(bench.name).get((bench.name, name)))
    if not isinstance(played, ReferenceAnswers):
        raise ValueError(f"the agent command plays {name!r}, which states no gold answers: "
                         f"the offline model {model!r} cannot play it; use a provider model")
    return played


def sealed_by(spec: RunSpec) -> AgentSandbox | None:
    """The sandbox of a run's agent command, its runs root hidden too (``None``: unsealed).

    Raises:
        SandboxUnavailable: no sandbox can be made here (the message says how to fix it).
        UsageError: the working directory (shown to the agent) holds the user's home.
    """
    sandbox = spec.sandbox
    if sandbox is None:
        return None
    check_sandbox()
    check_workdir(Path.cwd(), sandbox)
    return dataclasses.replace(sandbox, hide=(*sandbox.hide, Path(spec.out).resolve()))


@dataclass
class _Models:
    """The model under test and the judge, each wrapped once (retries, rate limit,
    accounting, cache), with what their servers said about themselves."""

    inner: BaseChatModel
    wrapped: RetryingChatModel
    server: ServerIdentity | None
    notes: list[str]
    answer_key: AnswerKey | None
    """The offline model's answers, filled once the workflow is built."""
    judge: BaseChatModel | None = None
    judge_inner: BaseChatModel | None = None
    judge_inherited: list[str] = field(default_factory=list)
    batches: list[BatchQueue] = field(default_factory=list)
    """The batch queues of the model and the judge (``--batch``; one per model: a provider
    batch holds one model's requests)."""
    schedulers: dict[str, PrefixScheduler] = field(default_factory=dict)
    """The run's request schedulers, one per endpoint (the model's and a judge on the same
    server share one: together they keep ``max_concurrency`` requests in flight there)."""

    def scheduler_for(self, chat_model: BaseChatModel, slots: int) -> PrefixScheduler:
        """The scheduler of ``chat_model``'s endpoint (made with ``slots`` the first time)."""
        return self.schedulers.setdefault(endpoint_key(chat_model), PrefixScheduler(slots))


LOOKAHEAD = 16
"""Examples a run keeps open beyond ``max_concurrency`` when its requests are scheduled
(:mod:`tooleval_agents.models.scheduling`): their requests wait their turn, so the next one
sent can be one that shares its prefix with the last (stage-major order at concurrency 1)."""


def examples_in_flight(spec: RunSpec, models: _Models) -> int:
    """How many examples a run works on at once: ``max_concurrency`` requests in flight, and
    :data:`LOOKAHEAD` more examples to choose the next request from when they are scheduled;
    with ``--batch``, enough to fill a batch."""
    batch = spec.batching
    if batch is not None and models.batches:
        return max(spec.max_concurrency, batch.size)
    return spec.max_concurrency + (LOOKAHEAD if models.schedulers else 0)


def _batched(spec: RunSpec, model_spec: str, kwargs: dict[str, Any], max_tokens: int | None,
             what: str) -> tuple[BaseChatModel, BatchQueue]:
    """A provider model whose async calls go through a new batch queue (``--batch``)."""
    batch = spec.batching
    assert batch is not None
    queue = BatchQueue(batch)
    url = next((kwargs[k] for k in ENDPOINT_ARGS if isinstance(kwargs.get(k), str)), None)
    model = provider_model(model_spec, {**kwargs, **batch_clients(queue, url)},
                           max_tokens=max_tokens)
    backend = openai_backend(model)
    if backend is None:
        raise ValueError(f"--batch: {what} {model_spec} has no batch interface here (OpenAI "
                         "and OpenAI-compatible models: the Batch API)")
    queue.backend = backend
    return model, queue


def _policy(spec: RunSpec, batched: bool) -> RetryPolicy:
    """The retry policy of a model; a batched call has no timeout of its own (its batch
    answers within the provider's window)."""
    policy = spec.retry or RetryPolicy()
    return dataclasses.replace(policy, timeout=None) if batched else policy


async def _models(spec: RunSpec, plan: _Plan) -> _Models:
    kwargs = dict(spec.model_kwargs or {})
    register_secrets_in(kwargs)
    answer_key: AnswerKey | None = None
    inner: BaseChatModel
    batches: list[BatchQueue] = []
    if spec.batching is not None and not isinstance(spec.model, str):
        raise ValueError("--batch needs a model spec (provider:model): a chat model instance "
                         "is called as it was made")
    if spec.batching is not None and (plan.offline or spec.outside_agent):
        raise ValueError(f"--batch: the model {spec.model!r} cannot wait for a batch (an "
                         "offline model answers at once; an agent command waits for each "
                         "answer); batches are for provider models run in the process")
    if spec.outside_agent and spec.model is None:  # the agent's own: none called here
        from tooleval_agents.mcp.external import AgentsOwnModel  # deferred: the mcp extra

        inner = AgentsOwnModel(model_name="agent")
    elif plan.offline:
        answer_key = AnswerKey()
        inner = resolve_model(str(spec.model), answer_key=answer_key)
    elif isinstance(spec.model, str) and spec.batching is not None:
        inner, queue = _batched(spec, spec.model,
                                {**plan.strat.model_defaults(plan.strategy_options), **kwargs},
                                plan.bench.max_tokens(plan.split), "model")
        batches.append(queue)
    elif isinstance(spec.model, str):
        inner = provider_model(spec.model,
                               {**plan.strat.model_defaults(plan.strategy_options), **kwargs},
                               max_tokens=plan.bench.max_tokens(plan.split))
    else:
        assert spec.model is not None  # RunSpec checks it
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
    models = _Models(inner, RetryingChatModel(
        inner=inner, policy=_policy(spec, bool(batches)),
        limiter=rate_limiter_for(inner, spec.rps),
        response_cache=response_cache, server_identity=_key_part(server)), server, notes,
        answer_key, batches=batches)
    if not plan.offline and not batches and not spec.outside_agent:  # a server to order for
        models.wrapped.scheduler = models.scheduler_for(inner, spec.max_concurrency)
    if spec.judge is not None:
        await _add_judge(spec, models, response_cache_for)
    return models


async def _add_judge(spec: RunSpec, models: _Models,
                     response_cache_for: Callable[[BaseChatModel], BaseCache | None]) -> None:
    if isinstance(spec.judge, str) and is_offline(spec.judge):
        raise ValueError(f"judge {spec.judge!r}: the offline models cannot judge; use a "
                         "provider model (provider:model)")
    if isinstance(spec.judge, str):
        jkw, models.judge_inherited = judge_arguments(spec.model or "", spec.model_kwargs,
                                                      spec.judge,
                                                      spec.judge_kwargs)
        register_secrets_in(jkw)
        if spec.batching is not None:
            judge, queue = _batched(spec, spec.judge, jkw, JUDGE_MAX_TOKENS, "judge")
            models.batches.append(queue)
        else:
            judge = provider_model(spec.judge, jkw, max_tokens=JUDGE_MAX_TOKENS)
    else:
        assert spec.judge is not None
        judge = spec.judge
    models.judge_inner = judge
    judge_cache = response_cache_for(judge)
    judge_server, judge_notes = await _identify(judge, judge_cache)
    models.notes += [n for n in judge_notes if n not in models.notes]
    # The judge gets the same retry policy (its failures would become scoring errors).
    batched = spec.batching is not None and isinstance(spec.judge, str)
    models.judge = RetryingChatModel(
        inner=judge, policy=_policy(spec, batched),
        response_cache=judge_cache, server_identity=_key_part(judge_server),
        scheduler=None if batched else models.scheduler_for(judge, spec.max_concurrency))


def model_gateways(spec: RunSpec, models: _Models) -> ModelGateways:
    """The run's gateway: serving the wrapped model when an agent command runs with
    ``--model``, else one that serves nothing."""
    serving = spec.outside_agent and spec.model is not None
    return ModelGateways(models.wrapped if serving else None, model_label_of(spec))


def _build(plan: _Plan, models: _Models, data: Path,
           tool_server: ToolServers | None = None,
           gateways: ModelGateways | None = None) -> Runnable[Any, Any]:
    try:
        return plan.strat.build(StrategyContext(
            model=models.wrapped, split=plan.split, data_dir=data,
            options=dict(plan.strategy_options), agent=plan.factory, tool_server=tool_server,
            model_gateway=gateways if gateways is not None and gateways.serving else None))
    except Exception as exc:
        if plan.factory is None:
            raise
        # The user's factory ran inside build: its failure is theirs, said in one line.
        raise ToolevalError(f"agent {plan.agent_name}: building it failed: "
                            f"{type(exc).__name__}: {exc}") from exc




# ----------------------------------------------------------------------------- what is measured


def run_name(spec: RunSpec, plan: _Plan) -> str:
    """The run's readable directory name (:func:`~tooleval_agents.run.naming.readable_name`)."""
    faults = spec.faults
    settings: dict[str, Any] = {
        **plan.strategy_options, **plan.scoring, **answer_args(spec.model_kwargs),
        "judge": model_label(spec.judge) if spec.judge is not None else None,
        **{f"judge.{k}": v for k, v in answer_args(spec.judge_kwargs).items()
           if spec.judge is not None and k != "temperature"},
        "epochs": spec.epochs if spec.epochs > 1 else None,
        "faults": faults.rate if faults is not None else None,
        "fault_seed": faults.seed if faults is not None and faults.seed else None,
        "fault_kinds": list(faults.kinds) if faults is not None and faults.kinds != KINDS
        else None}
    return readable_name(plan.split, plan.strategy_name, model_label_of(spec),
                         agent=plan.agent_name, settings=settings)


def model_label_of(spec: RunSpec) -> str:
    """The model a run names: its spec, or ``external`` when an agent command brings its own
    (``--agent-cmd`` without ``--model``)."""
    return model_label(spec.model) if spec.model is not None else "external"


def _model_part(model: str | BaseChatModel, inner: BaseChatModel | None,
                kwargs: dict[str, Any] | None) -> dict[str, Any]:
    """A model as a run's identity knows it: the spec and the arguments that change its
    answers, or an instance's class and parameters (without endpoints and secrets)."""
    if isinstance(model, str):
        return {"spec": model, "args": answer_args(kwargs)}
    apart = {*ENDPOINT_ARGS, *TRANSPORT_ARGS, *CONNECTION_ARGS, "answers"}
    params = model_params(inner if inner is not None else model)
    return {"spec": model_label(model), "class": type(model).__qualname__,
            "params": {k: v for k, v in params.items() if k not in apart}}


@contextlib.contextmanager
def read_late(inputs: Mapping[str, str], name: str) -> Iterator[None]:
    """Note what the run reads once its identity is fixed (as its examples run): an input read
    then that the identity does not hold, or holds at another digest, is said in one line (a
    change to it would not be noticed; every reader of ours reads at build time)."""
    with noting() as later:
        yield
    missed = sorted(k for k, v in later.items() if inputs.get(k) != v)
    if missed:
        log.warning("%s: read %s as it ran, after its identity was fixed: a change to %s "
                    "would not be noticed", name, ", ".join(missed[:3]),
                    "it" if len(missed) == 1 else "them")


def run_identity_of(spec: RunSpec, plan: _Plan, models: _Models,
                    inputs: Mapping[str, str] | None = None) -> tuple[RunIdentity, str | None]:
    """What the run measures (:func:`~tooleval_agents.run.identity.run_identity`), and what to
    say when part of it cannot be read (a compiled graph whose code is out of reach).
    ``inputs``: what building its workflow and scorer read (:mod:`tooleval_agents.data.inputs`:
    official prompt files, demonstrations, toolsets), each file by its digest."""
    note = None
    agent: dict[str, Any] | None = None
    if spec.agent is not None:
        read = code_identity(plan.factory if isinstance(spec.agent, str) else spec.agent)
        agent = {NAMED: plan.agent_name, **read.record()}
        if not read.readable:
            note = (f"agent {plan.agent_name}: nothing of its code could be read, so a change "
                    "to it will not be noticed (the run's identity knows it by name): pass its "
                    "factory, or a module path:factory, instead")
    strategy_files = code_identity(plan.strat).files
    bench_files = code_identity(plan.bench).files
    return run_identity({
        "split": plan.split.name,
        "benchmark": {"name": plan.bench.name, "files": bench_files} if bench_files else None,
        "strategy": {"name": plan.strategy_name, "files": strategy_files} if strategy_files
        else plan.strategy_name,
        "agent": agent,
        # Sealed or not is part of what is measured: the sandbox decides what the agent can
        # reach (an agent that reads the gold or calls a host scores otherwise); an unsealed
        # run keeps the identity it had before sandboxes.
        "agent_cmd": None if not spec.outside_agent else {
            NAMED: plan.agent_name,
            **({"command": redact_text(spec.agent_cmd), "files": command_files(spec.agent_cmd)}
               if spec.agent_cmd is not None else {}),
            # A preset: its version and wiring (not where its program is).
            **({"preset": plan.preset.identity()} if plan.preset is not None else {}),
            **({} if spec.sandbox is None else {"sandbox": spec.sandbox.record()}),
            # The model is the run's, served to the agent (not a name it was handed).
            **({"model": "gateway"} if spec.model is not None else {})},
        "agent_version": spec.agent_version,
        "inputs": dict(sorted((inputs or {}).items())),
        "model": None if spec.model is None else _model_part(spec.model, models.inner,
                                                             spec.model_kwargs),
        "judge": None if spec.judge is None else _model_part(
            spec.judge, models.judge_inner, spec.judge_kwargs),
        "strategy_options": plan.strategy_options, "scoring_options": plan.scoring,
        "epochs": spec.epochs if spec.epochs > 1 else None,
        "tool_faults": spec.faults.record() if spec.faults is not None else None,
    }), note
