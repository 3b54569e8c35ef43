"""A grid of runs, checked before anything runs: every split, strategy, model, agent, option
set and tool-fault setting, one run each.

``tooleval run`` with repeated ``--model`` / ``--strategy`` / ``--agent`` / ``--tool-faults``
and swept ``-O k=1,3,5`` plans its runs here, as :func:`tooleval_agents.run_grid` does from
Python: one planner, so both check the same arguments and name the same runs. The benchmark is
read from the registries only (tasks, subsets, default strategies); nothing here knows one.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tooleval_agents.agents import load_agent
from tooleval_agents.contracts import (
    OptionError,
    Split,
    Strategy,
    validate_options,
)
from tooleval_agents.errors import did_you_mean
from tooleval_agents.models.providers import check_provider
from tooleval_agents.registry import (
    Benchmark,
    agent_strategy,
    build_scorer,
    get_benchmark,
    get_strategy,
    resolve_options,
    served_agent_io,
    strategies,
    with_profile,
)
from tooleval_agents.results.selection import parse_samples
from tooleval_agents.run.spec import RunSpec
from tooleval_agents.tool_faults import parse_tool_faults

Cell = tuple[Split, str | None, Any, Any, dict[str, Any]]
"""One run of a grid: ``(split, strategy named or None, model, agent or None, options)``."""


def choose_subsets(bench: Benchmark, task: str, lang: str | None,
                   category: str | None, subset: str | None = None) -> list[str]:
    """The subsets ``--lang`` / ``--category`` / ``--subset`` name for ``task`` (``all``:
    every one of that kind; ``--subset all``: every subset)."""
    if sum(x is not None for x in (lang, category, subset)) > 1:
        raise ValueError("give one of --subset, --lang and --category")
    kinds = {s.subset: s.kind for s in bench.splits() if s.task == task}
    if subset is not None:
        if subset == "all":
            return list(kinds)
        if subset not in kinds:
            raise ValueError(f"{bench.name} {task}: unknown --subset {subset!r}; choose "
                             f"{'|'.join([*sorted(kinds), 'all'])};"
                             f"{did_you_mean(subset, kinds)}".rstrip(";"))
        return [subset]
    available = list(kinds)  # the benchmark's declared (paper) order
    languages = [s for s in available if kinds[s] == "language"]
    categories = [s for s in available if kinds[s] != "language"]
    if lang is None and category is None:
        if len(available) == 1:
            return available
        hints = ([f"--lang {'|'.join([*languages, 'all'])}"] if languages else []) + \
            ([f"--category {'|'.join([*categories, 'all'])}"] if categories else [])
        raise ValueError(f"{bench.name} {task}: choose {' or '.join(hints)}")
    flag, value, pool = (("--lang", lang, languages) if lang is not None
                         else ("--category", category, categories))
    if not pool:
        other = "--category" if flag == "--lang" else "--lang"
        raise ValueError(f"{bench.name} has no {'languages' if flag == '--lang' else 'categories'}"
                         f": use {other} {'|'.join(available)}")
    if value == "all":
        return pool
    if value not in pool:
        raise ValueError(f"{bench.name} {task}: unknown {flag} {value!r}; choose "
                         f"{'|'.join([*pool, 'all'])};{did_you_mean(str(value), pool)}".rstrip(";"))
    return [value]


def choose_tasks(bench: Benchmark, task: str | None, strategy: str | None) -> list[str]:
    """The tasks ``--task`` names (``all``: every task the strategy -- or each task's default
    strategy -- solves)."""
    tasks = sorted({s.task for s in bench.splits()})
    if task is not None and task != "all":
        if task not in tasks:
            hint = ""
            named = strategies(bench.name).get((bench.name, task))
            if named is not None and named.tasks:  # a strategy's name given as a task
                hint = (f" ({task!r} is a strategy: --task {named.tasks[0]} "
                        f"--strategy {task})")
            raise ValueError(f"{bench.name} has no task {task!r}; choose "
                             f"{'|'.join([*tasks, 'all'])}{hint or ';' + did_you_mean(task, tasks)}"
                             .rstrip(";"))
        return [task]
    if task is None:
        if len(tasks) == 1:
            return tasks
        raise ValueError(f"{bench.name}: choose --task {'|'.join([*tasks, 'all'])}")
    known = strategies(bench.name)
    chosen = []
    for t in tasks:
        split = next(s for s in bench.splits() if s.task == t)
        strat = known.get((bench.name, strategy or bench.default_strategy(split)))
        if strat is not None and (strat.tasks is None or t in strat.tasks):
            chosen.append(t)
    if not chosen:
        raise ValueError(f"no {bench.name} task is solved by strategy {strategy!r}")
    return chosen


@dataclass
class Sweep:
    """A grid of runs, checked before anything runs: one run per split, strategy, model,
    agent and option set (and per tool-fault setting)."""

    bench: Benchmark
    plan: list[tuple[Split, str | None]]
    """Each split with the strategy named for it (None: the benchmark's default)."""
    models: list[Any]
    """Model specs (``"reference"``, ``"provider:model"``) or chat models."""
    agents: list[Any]
    """``None`` (the strategy's own agent), or the user's agents as ``run_experiment``
    takes them."""
    grid: list[dict[str, Any]]
    """Each option set (strategy and scoring options together, told apart per split by
    :func:`route_options`)."""
    model_kwargs: dict[str, Any]
    judge_kwargs: dict[str, Any]
    policy: Any
    """The retry policy of every model call (:class:`~tooleval_agents.models.retry.RetryPolicy`)."""
    faults: list[str | None] = field(default_factory=lambda: [None])
    """Each ``--tool-faults`` setting (the grid runs once per setting)."""
    command: bool = False
    """An agent command (``--agent-cmd``) plays each run: no strategy options, no model made."""

    def runs(self) -> list[Cell]:
        return [(split, strat, m, a, opts) for split, strat in self.plan for m in self.models
                for a in self.agents for opts in self.grid]


def unique(values: Sequence[Any]) -> list[Any]:
    """``values`` without repeats, in order (a chat model or a factory counts by identity)."""
    seen: dict[Hashable, Any] = {}
    for value in values:
        seen.setdefault(value if isinstance(value, str) else id(value), value)
    return list(seen.values())


def plan_grid(benchmark: str | Benchmark, *, models: Sequence[Any],
              strategy_names: Sequence[str] | None = None, agents: Sequence[Any] | None = None,
              grid: Sequence[dict[str, Any]] = ({},), task: str | None = None,
              lang: str | None = None, category: str | None = None,
              subset: str | None = None, samples: str | None = None,
              prompts: str | None = None, scoring: str | None = None,
              judge: Any = None, model_kwargs: dict[str, Any] | None = None,
              judge_kwargs: dict[str, Any] | None = None, policy: Any = None,
              tool_faults: Sequence[str] | None = None, agent_cmd: str | None = None) -> Sweep:
    """Every argument of a grid checked, its runs listed; a bad one raises (``KeyError``,
    ``ValueError``, :class:`~tooleval_agents.agents.AgentLoadError`) before any split runs.
    With ``agent_cmd`` (an agent command plays each run), a model is optional (handed to the
    command) and no strategy option is taken."""
    from tooleval_agents.models.specs import check_model_spec  # deferred: LangChain

    bench = benchmark if isinstance(benchmark, Benchmark) else get_benchmark(benchmark)
    if samples is not None:
        parse_samples(samples)
    for faults in tool_faults or ():
        parse_tool_faults(faults)
    chosen: list[str | None] = unique(strategy_names) if strategy_names else [None]
    if judge_kwargs and judge is None:
        raise ValueError("--judge-arg needs --judge")
    named_agents: list[Any] = unique(agents) if agents else [None]
    for name in named_agents:
        if isinstance(name, str):
            load_agent(name)  # a bad --agent fails now, before any split runs
    _check_agent_strategies(bench, chosen, bool(agents))
    plan = [(bench.split(t, s), strat) for strat in chosen
            for t in choose_tasks(bench, task, strat)
            for s in choose_subsets(bench, t, lang, category, subset)]
    for model_spec in models:
        if isinstance(model_spec, str):
            check_model_spec(model_spec)
            if agent_cmd is None:  # else only handed to the agent, which brings its own
                check_provider(model_spec)
    if isinstance(judge, str):
        check_provider(judge)
    for split, named_strategy in plan:
        if agent_cmd is not None:  # what the command plays: the split's served agent part
            served_agent_io(bench, split, named_strategy)
        declared = None if agent_cmd is not None else strategy_of(bench, split,
                                                                  named_strategy, bool(agents))
        _check_split(bench, split, declared, grid, prompts=prompts, scoring=scoring,
                     judged=judge is not None)
    return Sweep(bench, plan, unique(models), named_agents, list(grid), dict(model_kwargs or {}),
                 dict(judge_kwargs or {}), policy,
                 list(dict.fromkeys(tool_faults)) if tool_faults else [None],
                 command=agent_cmd is not None)


def _check_split(bench: Benchmark, split: Split, declared: Strategy | None,
                 grid: Sequence[dict[str, Any]], *, prompts: str | None, scoring: str | None,
                 judged: bool) -> None:
    """Each option set of one split checked: the strategy's options, the prompt set, the
    scoring options (a split only a judge scores fails here without one). ``declared``
    ``None``: an agent command plays the split, which takes no strategy option."""
    for opts in grid:
        own, scoring_opts = route_options(bench, split, declared, opts)
        if declared is None:
            if own:
                raise ValueError(f"-O {', '.join(own)}: an agent command takes no strategy "
                                 "options")
            continue
        validate_options(f"strategy {declared.name}", declared.options, own)
        if prompts is not None:  # a prompt set nobody offers fails now, not per split
            resolve_options(prompts, strategy=(f"strategy {declared.name}",
                                               declared.options, own),
                            scoring=(f"{bench.name} {split.task} scoring",
                                     bench.scoring_options(split), {}))
        try:  # bad scoring options, or a split only a judge scores: now, not later
            build_scorer(bench, split, with_profile(scoring_opts, scoring))
        except ValueError as exc:
            if not judged or isinstance(exc, OptionError):
                raise ValueError(f"{split.name}: {exc}") from None


def strategy_of(bench: Benchmark, split: Split, strategy: str | None, agent: bool) -> Strategy:
    """The strategy a run of ``split`` plays: the one named, else the one a user's agent
    plays, else the benchmark's default."""
    return get_strategy(bench.name, strategy or (agent_strategy(bench.name, split) if agent
                                                 else bench.default_strategy(split)))


def route_options(bench: Benchmark, split: Split, strategy: Strategy | None,
                  options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``-O`` options of a run as (strategy's, scorer's): a key only the split's scorer
    declares (e.g. ``scoring``) is a scoring option; every other key is the strategy's (an
    unknown one is refused there, with the known ones listed). ``strategy`` ``None``: an
    agent command, which takes none."""
    declared = strategy.options if strategy is not None else None
    scorer = bench.scoring_options(split)
    scoring_keys = set(scorer.model_fields) if scorer else set()
    strategy_keys = set(declared.model_fields) if declared else set()
    moved = {k for k in options if k in scoring_keys and k not in strategy_keys}
    return ({k: v for k, v in options.items() if k not in moved},
            {k: v for k, v in options.items() if k in moved})


def _check_agent_strategies(bench: Benchmark, chosen: list[str | None], agent: bool) -> None:
    for name in filter(None, chosen):
        named = strategies(bench.name).get((bench.name, name))
        if agent and named is not None and not named.accepts_agent:
            can = [n for (_, n), s in strategies(bench.name).items() if s.accepts_agent]
            raise ValueError(f"strategy {name!r} runs its own agent and cannot run "
                             f"--agent; strategies that can: {', '.join(can) or 'none'}")


def cell_spec(sweep: Sweep, cell: Cell, settings: dict[str, Any]) -> RunSpec:
    """One run of the grid as a :class:`~tooleval_agents.run.spec.RunSpec`: the cell's split,
    strategy, model, agent and options (told apart as the strategy's and the scorer's), the
    grid's model, judge and retry settings, and ``settings`` (the other fields of a
    ``RunSpec``; their ``scoring_options`` may hold the profile as ``{"scoring": PROFILE}``)."""
    split, strat, model, agent, given = cell
    options, scoring = route_options(
        sweep.bench, split, None if sweep.command else strategy_of(
            sweep.bench, split, strat, agent is not None), given)
    profile = (settings.get("scoring_options") or {}).get("scoring")
    return RunSpec(**{**settings, "benchmark": sweep.bench.name, "task": split.task,
                      "subset": split.subset, "strategy": strat, "agent": agent,
                      "model": model, "strategy_options": options, "retry": sweep.policy,
                      "model_kwargs": sweep.model_kwargs, "judge_kwargs": sweep.judge_kwargs,
                      "scoring_options": with_profile(scoring, profile) or None})
