"""``tooleval run``: run a strategy with a model over benchmark splits, as LangSmith experiments.

The command knows no benchmark by name: tasks, subsets and default strategies come from the
registries. ``--lang`` and ``--category`` both choose the split's subset: ``--lang`` among the
benchmark's language subsets, ``--category`` among the others.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from tooleval_agents.agents import AgentLoadError, load_agent
from tooleval_agents.cli.advice import infra_advice, infra_kinds, judge_advice, local_server_hint
from tooleval_agents.cli.base import (
    CacheOption,
    DataDirOption,
    JsonOption,
    MaxConcurrencyOption,
    ProgressOption,
    ScoringOption,
    app,
    err_console,
    error_text,
    fail,
    print_json,
    with_profile,
)
from tooleval_agents.cli.cost_options import (
    BatchArg,
    BatchSizeArg,
    BatchWaitArg,
    MaxRunsArg,
    batch_settings,
)
from tooleval_agents.cli.options import option_grid, parse_pairs
from tooleval_agents.cli.run_output import headline_of, row_of, show_run, show_sweep
from tooleval_agents.contracts import (
    OptionError,
    Split,
    Strategy,
    resolve_options,
    validate_options,
)
from tooleval_agents.data.datadir import data_dir_or_samples
from tooleval_agents.errors import ToolevalError, did_you_mean
from tooleval_agents.models.redaction import redact_text
from tooleval_agents.models.tool_calls.counts import format_unmeasured, tool_calls_unmeasured
from tooleval_agents.registry import (
    Benchmark,
    agent_strategy,
    build_scorer,
    get_benchmark,
    get_strategy,
    strategies,
)
from tooleval_agents.results.rundir import RunDir
from tooleval_agents.run.faults import parse_tool_faults
from tooleval_agents.run.selection import parse_samples
from tooleval_agents.terminal import shown


def one_line(exc: BaseException) -> str:
    """An error as one line for a person: secrets masked; the first line of another library's
    error, all of ours (written for a person: the way out is on its later lines, e.g. the
    fetch command of missing data); what to do when it is LangSmith's (unreachable, or a
    rejected key)."""
    lines = redact_text(error_text(exc)).strip().splitlines() or [type(exc).__name__]
    text = " ".join(s.strip() for s in lines) if isinstance(exc, ToolevalError) else lines[0]
    if type(exc).__name__.startswith("LangSmith"):
        text += (" -- LangSmith could not be used: check LANGSMITH_ENDPOINT and "
                 "LANGSMITH_API_KEY, or run with --no-upload to keep the run local")
    return text[:1000]


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
    """A run command's grid, checked before anything runs: one run per split, strategy,
    model, agent and swept option set."""

    bench: Benchmark
    plan: list[tuple[Split, str | None]]
    """Each split with the strategy named for it (None: the benchmark's default)."""
    models: list[str]
    agents: list[str | None]
    grid: list[dict[str, Any]]
    model_kwargs: dict[str, Any]
    judge_kwargs: dict[str, Any]
    policy: Any
    """The retry policy of every model call (:class:`~tooleval_agents.models.retry.RetryPolicy`)."""
    faults: list[str | None] = field(default_factory=lambda: [None])
    """Each ``--tool-faults`` setting (the grid runs once per setting)."""

    def runs(self) -> list[tuple[Split, str | None, str, str | None, dict[str, Any]]]:
        return [(split, strat, m, a, opts) for split, strat in self.plan for m in self.models
                for a in self.agents for opts in self.grid]


def plan_sweep(benchmark: str, *, models: list[str], strategy_names: list[str] | None,
               agents: list[str] | None, options: list[str] | None, task: str | None,
               lang: str | None, category: str | None, subset: str | None,
               samples: str | None, prompts: str | None, scoring: str | None,
               judge: str | None, judge_args: list[str] | None, model_args: list[str] | None,
               max_attempts: int, timeout: float,
               tool_faults: list[str] | None = None) -> Sweep:
    """Every argument of a run command checked, the grid expanded; a bad one raises
    (``KeyError``, ``ValueError``, ``AgentLoadError``) before any split runs."""
    from tooleval_agents.models.retry import RetryPolicy
    from tooleval_agents.models.specs import check_model_spec

    bench = get_benchmark(benchmark)
    grid = option_grid(options, "--option")
    if samples is not None:
        parse_samples(samples)
    for faults in tool_faults or ():
        parse_tool_faults(faults)
    chosen: list[str | None] = (list(dict.fromkeys(strategy_names)) if strategy_names
                                else [None])
    judge_kwargs = parse_pairs(judge_args, "--judge-arg")
    if judge_kwargs and judge is None:
        raise ValueError("--judge-arg needs --judge")
    named_agents: list[str | None] = list(dict.fromkeys(agents)) if agents else [None]
    for name in filter(None, named_agents):
        load_agent(name)  # a bad --agent fails now, before any split runs
    _check_agent_strategies(bench, chosen, bool(agents))
    plan = [(bench.split(t, s), strat) for strat in chosen
            for t in choose_tasks(bench, task, strat)
            for s in choose_subsets(bench, t, lang, category, subset)]
    for model_spec in models:
        check_model_spec(model_spec)
    for split, named_strategy in plan:
        declared = strategy_of(bench, split, named_strategy, bool(agents))
        for opts in grid:
            own, scoring_opts = route_options(bench, split, declared, opts)
            validate_options(f"strategy {declared.name}", declared.options, own)
            if prompts is not None:  # a prompt set nobody offers fails now, not per split
                resolve_options(prompts, strategy=(f"strategy {declared.name}",
                                                   declared.options, own),
                                scoring=(f"{bench.name} {split.task} scoring",
                                         bench.scoring_options(split), {}))
            try:  # bad scoring options, or a split only a judge scores: now, not later
                build_scorer(bench, split, with_profile(scoring_opts, scoring))
            except ValueError as exc:
                if judge is None or isinstance(exc, OptionError):
                    raise ValueError(f"{split.name}: {exc}") from None
    return Sweep(bench, plan, list(dict.fromkeys(models)), named_agents, grid,
                 parse_pairs(model_args, "--model-arg"), judge_kwargs,
                 RetryPolicy(max_attempts=max_attempts, timeout=timeout),
                 list(dict.fromkeys(tool_faults)) if tool_faults else [None])


def strategy_of(bench: Benchmark, split: Split, strategy: str | None, agent: bool) -> Strategy:
    """The strategy a run of ``split`` plays: the one named, else the one a user's agent
    plays, else the benchmark's default."""
    return get_strategy(bench.name, strategy or (agent_strategy(bench.name, split) if agent
                                                 else bench.default_strategy(split)))


def route_options(bench: Benchmark, split: Split, strategy: Strategy,
                  options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``-O`` options of a run as (strategy's, scorer's): a key only the split's scorer
    declares (e.g. ``scoring``) is a scoring option; every other key is the strategy's (an
    unknown one is refused there, with the known ones listed)."""
    declared = strategy.options
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


def print_notes(sweep: Sweep, judge: str | None, max_concurrency: int) -> None:
    """What the user should know before the runs start (a local server, a judge that
    borrows the model's endpoint)."""
    notes = [local_server_hint(sweep.model_kwargs, max_concurrency)]
    if judge is not None:
        from tooleval_agents.run.setup import judge_arguments

        _, inherited = judge_arguments(sweep.models[0], sweep.model_kwargs, judge,
                                       sweep.judge_kwargs)
        if inherited:
            notes.append(f"the judge {judge} uses the model's {', '.join(inherited)} (same "
                         "provider, no --judge-arg endpoint of its own)")
    for note in filter(None, notes):
        err_console.print(f"[yellow]note:[/] {shown(note)}", highlight=False)


def run_one(sweep: Sweep, run: tuple[Split, str | None, str, str | None, dict[str, Any]],
            settings: dict[str, Any], *, show: bool) -> tuple[dict[str, Any], int]:
    """One run of the grid: its row (``experiment`` None when the split could not run, its
    error said in one line) and 1 when it left examples unscored, else 0."""
    from tooleval_agents.run.runner import run_experiment

    try:
        summary = run_experiment(sweep.bench.name, **cell_arguments(sweep, run, settings))
    except KeyboardInterrupt:
        raise interrupted() from None
    except OptionError as exc:  # a bad argument only the split's data shows (--samples)
        raise fail(f"{run[0].name}: {error_text(exc)}", 2) from None
    except Exception as exc:  # one split's failure (data, provider, LangSmith) is a line
        return failed_row(run[0], exc), 0
    return finished_row(sweep, run, settings, summary, show=show)


def interrupted() -> typer.Exit:
    """What Ctrl-C ends a run command with (said on stderr): exit 130."""
    err_console.print("[yellow]interrupted:[/] finished examples are saved; run the "
                      "same command again to resume.")
    return typer.Exit(130)


def cell_arguments(sweep: Sweep, run: tuple[Split, str | None, str, str | None, dict[str, Any]],
                   settings: dict[str, Any]) -> dict[str, Any]:
    """``run_experiment`` keyword arguments of one run of the grid (after the benchmark)."""
    split, strat, model_spec, user_agent, given = run
    options, scoring = route_options(
        sweep.bench, split, strategy_of(sweep.bench, split, strat, user_agent is not None), given)
    return {"task": split.task, "subset": split.subset, "strategy": strat,
            "agent": user_agent, "model": model_spec, "strategy_options": options,
            "retry": sweep.policy, "model_kwargs": sweep.model_kwargs,
            "judge_kwargs": sweep.judge_kwargs,
            **{k: v for k, v in settings.items() if k not in SWEEP_SETTINGS},
            "scoring_options": with_profile(
                scoring, (settings["scoring_options"] or {}).get("scoring")) or None}


SWEEP_SETTINGS = ("max_runs",)
"""Settings of the command that are not a run's."""


def failed_row(split: Split, exc: BaseException) -> dict[str, Any]:
    """The row of a run that could not run, its error said on stderr in one line."""
    message = one_line(exc)
    err_console.print(f"[bold red]error:[/] {shown(f'{split.name}: {message}')}",
                      highlight=False)
    return {"experiment": None, "benchmark": split.benchmark, "task": split.task,
            "subset": split.subset, "error": message}


def finished_row(sweep: Sweep, run: tuple[Split, str | None, str, str | None, dict[str, Any]],
                 settings: dict[str, Any], summary: Any, *,
                 show: bool) -> tuple[dict[str, Any], int]:
    """The row of a run that ran, and 1 when it left examples unscored (advice on stderr)."""
    split, _, model_spec, user_agent, _ = run
    options = cell_arguments(sweep, run, settings)["strategy_options"]
    out = settings["out"]
    config = RunDir(out / summary.experiment).read_config()
    row = row_of(split, summary, out, config.strategy, model_spec)
    row["split_examples"] = config.dataset.total
    if user_agent is not None:
        row["agent"] = user_agent
    if options:
        row["strategy_options"] = options
    unscored, advice = _unscored(row, summary)
    if show:
        show_run(row, headline_of(sweep.bench, split, [row]))
    for text in filter(None, advice):  # stderr: --json keeps stdout clean
        err_console.print(f"[yellow]{shown(f'{split.name}: {text}')}[/]", highlight=False)
    return row, unscored


def _unscored(row: dict[str, Any], summary: Any) -> tuple[int, list[str | None]]:
    """Whether a run left examples without a score (provider errors left, a judge that
    judged nothing, tool calls written as text and not read), and what to tell the user."""
    left = int(summary.counts.get("infra_errors", 0))
    advice = None
    unscored = 0
    if left:
        kinds, first = infra_kinds(Path(row["run_dir"]))
        row["infra_error_kinds"] = dict(kinds)
        advice = infra_advice(left, kinds, first)
        unscored = 1
    judge_note = judge_advice(summary.counts, Path(row["run_dir"]))
    if judge_note and not summary.counts.get("judged"):
        unscored = 1  # a judged task whose judge answered nothing has no score at all
    if tool_calls_unmeasured(summary.counts) or format_unmeasured(summary.counts):
        unscored = 1  # calls written as text and none read, or no answer read at all
    return unscored, [advice, judge_note, *summary.notes]


# The run command's own options (the shared ones are in cli/base.py).
BenchmarkArg = Annotated[str, typer.Argument(help="A registered benchmark.")]
ModelArg = Annotated[list[str], typer.Option(
        "--model", help="reference, noisy-reference[:RATE], or provider:model "
        "(e.g. openai:gpt-4o-mini). Repeatable: one run per model.")]
TaskArg = Annotated[str | None, typer.Option(
        "--task", help="Task, or all (default: the benchmark's only task).")]
LangArg = Annotated[str | None, typer.Option(
        "--lang", help="Language subset of the benchmark, or all (a wrong value lists the "
        "choices).")]
CategoryArg = Annotated[str | None, typer.Option(
        "--category", help="Category (non-language) subset of the benchmark, or all (a wrong "
        "value lists the choices).")]
SubsetArg = Annotated[str | None, typer.Option(
        "--subset", help="Any subset (language or category), or all.")]
StrategyArg = Annotated[list[str] | None, typer.Option(
        "--strategy", help="Strategy (default: the benchmark's protocol for the split). "
        "Repeatable: one run per strategy.")]
OptionArg = Annotated[list[str] | None, typer.Option(
        "--option", "-O", help="Strategy option KEY=VALUE (repeatable), e.g. -O k=3; "
        "-O k=3,4,5 runs one run per value.")]
PromptsArg = Annotated[str | None, typer.Option(
        "--prompts", help="Prompt set of the strategy and of the judge, where they offer "
        "several: ours (default) or official (the upstream templates, read from the files "
        "`tooleval data fetch` got; a missing one is named with the command that gets it).")
    ]
AgentArg = Annotated[list[str] | None, typer.Option(
        "--agent", help="Your agent: module.path:factory or path/to/file.py:factory, where "
        "factory(model, tools) returns a runnable over {'messages': [...]} (e.g. "
        "langchain.agents:create_agent). It plays a tool-calling strategy (default: the "
        "benchmark's first that accepts an agent). Repeatable: one run per agent.")]
JudgeArg = Annotated[str | None, typer.Option(
        "--judge", help="Judge model for LLM-judged metrics (provider:model). Temperature 0 "
        "unless --judge-arg says otherwise; with the model's provider and no endpoint of its "
        "own it uses the model's endpoint (--model-arg base_url=...).")]
JudgeArgsArg = Annotated[list[str] | None, typer.Option(
        "--judge-arg", help="init_chat_model argument KEY=VALUE for the judge (repeatable), "
        "e.g. --judge-arg base_url=http://127.0.0.1:8765/v1.")]
LimitArg = Annotated[int | None, typer.Option(
        "--limit", min=1, help="Only the first N examples of each split (of --samples when "
        "given). A larger --limit later extends the run: finished examples are kept.")
    ]
SamplesArg = Annotated[str | None, typer.Option(
        "--samples", help="Split indices and ranges to run, e.g. 10-20,37.")]
EpochsArg = Annotated[int, typer.Option(
        "--epochs", min=1, help="Attempts per example: the summary adds pass@k and pass^k "
        "of success-type metrics and the spread across attempts.")]
RpsArg = Annotated[float | None, typer.Option(
        "--rps", min=0.001, help="Model requests per second (default: unlimited).")]
MaxAttemptsArg = Annotated[int, typer.Option(
        "--max-attempts", min=1, help="Tries per model call on 429/5xx/timeouts/resets.")]
TimeoutArg = Annotated[float, typer.Option(
        "--timeout", min=0.001, help="Seconds a model call may take.")]
ModelArgsArg = Annotated[list[str] | None, typer.Option(
        "--model-arg", help="init_chat_model argument KEY=VALUE (repeatable), e.g. "
        "--model-arg temperature=0 --model-arg base_url=http://... (keys belong in the "
        "environment, e.g. OPENAI_API_KEY). With a base_url also tool_choice=auto, "
        "tool_choice_rounds=N, null_content=empty|omit|keep (README: A local model).")]
OutArg = Annotated[Path, typer.Option("--out", help="Results root directory.")]
UploadArg = Annotated[bool | None, typer.Option(
        "--upload/--no-upload", help="Send the experiment to LangSmith (default: when "
        "LANGSMITH_API_KEY is set).", show_default=False)]
FreshArg = Annotated[bool, typer.Option(
        "--fresh", help="Discard a previous run in the same directory instead of resuming.")
    ]
ToolFaultsArg = Annotated[list[str] | None, typer.Option(
        "--tool-faults", help="Seeded tool faults rate=R,kinds=K1+K2,seed=S (kinds: error, "
        "timeout, rate_limit, malformed, empty; rate=0: none). Repeatable: one run each.")
    ]
AllMetricsArg = Annotated[bool, typer.Option(
        "--all-metrics", help="With several runs, also print each run's table of every "
        "metric (the table across runs has the headline metrics).")]


@app.command("run")
def run_command(
    benchmark: BenchmarkArg,
    model: ModelArg,
    task: TaskArg = None,
    lang: LangArg = None,
    category: CategoryArg = None,
    subset: SubsetArg = None,
    strategy: StrategyArg = None,
    option: OptionArg = None,
    prompts: PromptsArg = None,
    agent: AgentArg = None,
    judge: JudgeArg = None,
    judge_arg: JudgeArgsArg = None,
    scoring: ScoringOption = None,
    limit: LimitArg = None,
    samples: SamplesArg = None,
    epochs: EpochsArg = 1,
    max_concurrency: MaxConcurrencyOption = 8,
    max_runs: MaxRunsArg = 1,
    batch: BatchArg = False,
    batch_size: BatchSizeArg = 100,
    batch_wait: BatchWaitArg = 30.0,
    rps: RpsArg = None,
    max_attempts: MaxAttemptsArg = 6,
    timeout: TimeoutArg = 300.0,
    model_arg: ModelArgsArg = None,
    out: OutArg = Path("runs"),
    upload: UploadArg = None,
    fresh: FreshArg = False,
    tool_faults: ToolFaultsArg = None,
    cache: CacheOption = True,
    progress: ProgressOption = None,
    data_dir: DataDirOption = None,
    all_metrics: AllMetricsArg = False,
    json_out: JsonOption = False,
) -> None:
    """Run (or resume) an experiment per split, with results in
    `OUT/<benchmark>-<task>-<subset>-<strategy>-<model>[-<hash>]/` (config.json,
    examples.jsonl, summary.json; the hash names strategy and scoring options, model and judge
    arguments when given).

    Repeated --model, --strategy, --agent, --tool-faults and swept options (-O k=3,4,5) run
    the grid, one run each, in turn (--max-runs N: N at once), then print their comparison.

    Re-running the same command resumes: finished examples are kept (no model call), provider
    failures (429, 5xx, timeouts, unreadable replies) are retried, and a result line edited
    after it was written runs again. Infrastructure errors are counted apart from wrong
    answers. A failed write (a full disk) stops the run at once, naming the file. Nothing
    leaves the machine unless uploading.

    Exit status (as every command's): 0 when every example was scored; 1 when a split could
    not run (its error says why); 2 for a bad argument (nothing ran); 3 when examples were
    left unscored by provider errors (retry them by running the same command again; after a
    rejected key or an unknown model, fix those first), when the judge could judge no
    example (re-judge with `tooleval score --run DIR --judge ...`), or when a tool-calling run
    got no tool call while answers hold calls written as text (-O tool_calls=auto reads them);
    130 when interrupted.

    A model served on this machine (llama.cpp, llama-cpp-python) usually answers one request
    at a time: use --max-concurrency 1 there, or queued requests wait out --timeout.
    """
    try:
        sweep = plan_sweep(
            benchmark, models=model, strategy_names=strategy, agents=agent, options=option,
            task=task, lang=lang, category=category, subset=subset, samples=samples,
            prompts=prompts, scoring=scoring, judge=judge, judge_args=judge_arg,
            model_args=model_arg, max_attempts=max_attempts, timeout=timeout,
            tool_faults=tool_faults)
    except (KeyError, ValueError, AgentLoadError) as exc:  # a bad argument: a usage error
        raise fail(error_text(exc), 2) from None
    batching = batch_settings(sweep.models, batch, batch_size, batch_wait)
    print_notes(sweep, judge, max_concurrency)
    data_dir = _data_dir(sweep, data_dir)
    settings = {"samples": samples, "epochs": epochs, "judge": judge, "limit": limit,
                "max_concurrency": max_concurrency, "max_runs": max_runs, "rps": rps,
                "batch": batching, "out": out, "upload": upload,
                "data_dir": data_dir, "prompts": prompts, "cache": cache, "fresh": fresh,
                "scoring_options": {"scoring": scoring} if scoring else None,
                "progress": sys.stderr.isatty() if progress is None else progress}
    run_all(sweep, settings, json_out=json_out, all_metrics=all_metrics)


def _data_dir(sweep: Sweep, given: Path | None) -> Path:
    """The data directory of the runs (the bundled samples when nothing is fetched, said)."""
    data_dir, note = data_dir_or_samples(sweep.bench, dict.fromkeys(s for s, _ in sweep.plan),
                                         given)
    if note:
        err_console.print(f"[yellow]note:[/] {shown(note)}", highlight=False)
    return data_dir


def run_all(sweep: Sweep, settings: dict[str, Any], *, json_out: bool,
            all_metrics: bool) -> None:
    """Every run of the grid, one after the other or up to ``max_runs`` at once, then the
    table across them (or JSON); exit 1 when a split could not run, 3 when examples were left
    unscored."""
    rows: list[dict[str, Any]] = []
    failed = unscored = 0
    runs = [(f, r) for f in sweep.faults for r in sweep.runs()]
    show = not json_out and (all_metrics or len(runs) == 1)
    if settings.get("max_runs", 1) > 1 and len(runs) > 1:
        done = _at_once(sweep, runs, settings, show=show)
    else:
        done = [run_one(sweep, run, {**settings, "tool_faults": faults}, show=show)
                for faults, run in runs]
    for (faults, _), (row, left_unscored) in zip(runs, done, strict=True):
        if faults is not None:
            row["tool_faults"] = faults
        rows.append(row)
        failed += row.get("experiment") is None
        unscored += left_unscored
    if not json_out and len(rows) > 1:
        show_sweep(sweep.bench, rows)
    if json_out:
        print_json(rows[0] if len(rows) == 1 else rows)
    if failed:
        raise typer.Exit(1)
    if unscored:
        raise typer.Exit(3)


def _at_once(sweep: Sweep,
             runs: list[tuple[str | None, tuple[Split, str | None, str, str | None,
                                                dict[str, Any]]]],
             settings: dict[str, Any], *, show: bool) -> list[tuple[dict[str, Any], int]]:
    """The grid's runs up to ``--max-runs`` at once (:mod:`tooleval_agents.cli.run_many`), their
    rows in the grid's order (tables printed after all of them, as a sequential sweep would)."""
    from tooleval_agents.cli.run_many import run_at_once

    cells = [(" ".join(filter(None, (split.name, strat, model, agent, faults))),
              sweep.bench.name, cell_arguments(sweep, (split, strat, model, agent, opts),
                                               {**settings, "tool_faults": faults}))
             for faults, (split, strat, model, agent, opts) in runs]
    try:
        outcomes = run_at_once(cells, max_runs=settings["max_runs"],
                               progress=bool(settings["progress"]))
    except KeyboardInterrupt:
        raise interrupted() from None
    except OptionError as exc:  # a bad argument only a split's data shows (--samples)
        raise fail(error_text(exc), 2) from None
    return [(failed_row(run[0], outcome), 0) if isinstance(outcome, Exception) else
            finished_row(sweep, run, {**settings, "tool_faults": faults}, outcome, show=show)
            for (faults, run), outcome in zip(runs, outcomes, strict=True)]
