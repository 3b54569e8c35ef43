"""``tooleval run``: run a strategy with a model over benchmark splits, as LangSmith experiments.

The command knows no benchmark by name: tasks, subsets and default strategies come from the
registries. ``--lang`` and ``--category`` both choose the split's subset: ``--lang`` among the
benchmark's language subsets, ``--category`` among the others.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from tooleval_agents.agents import AgentLoadError
from tooleval_agents.cli.advice import infra_advice, infra_kinds, judge_advice, local_server_hint
from tooleval_agents.cli.agent_cmd import (
    command_failures,
    command_settings,
    models_of,
    sandbox_of,
)
from tooleval_agents.cli.base import (
    FLAG,
    CacheOption,
    DataDirOption,
    JsonOption,
    MaxConcurrencyOption,
    ProgressOption,
    ScoringOption,
    Terminated,
    app,
    data_or_samples,
    err_console,
    error_text,
    fail,
    in_panel,
    print_json,
)
from tooleval_agents.cli.cost_options import (
    BatchArg,
    BatchSizeArg,
    BatchWaitArg,
    MaxRunsArg,
    batch_settings,
)
from tooleval_agents.cli.options import option_grid, parse_pairs
from tooleval_agents.cli.run_output import (
    count_metrics_of,
    headline_of,
    row_of,
    show_run,
    show_sweep,
)
from tooleval_agents.contracts import OptionError, Split
from tooleval_agents.errors import ToolevalError
from tooleval_agents.models.tool_calls.counts import format_unmeasured, tool_calls_unmeasured
from tooleval_agents.redaction import redact_text
from tooleval_agents.results.rundir import RunDir, RunSummary
from tooleval_agents.run.grid import Cell, Sweep, cell_spec, plan_grid
from tooleval_agents.run.spec import RunSpec
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


def plan_sweep(benchmark: str, *, models: list[str] | None, strategy_names: list[str] | None,
               agents: list[str] | None, options: list[str] | None, task: str | None,
               lang: str | None, category: str | None, subset: str | None,
               samples: str | None, prompts: str | None, scoring: str | None,
               judge: str | None, judge_args: list[str] | None, model_args: list[str] | None,
               max_attempts: int, timeout: float,
               tool_faults: list[str] | None = None, agent_cmd: str | None = None,
               agent_preset: str | None = None) -> Sweep:
    """Every argument of a run command parsed and checked, the grid expanded
    (:func:`~tooleval_agents.run.grid.plan_grid`); a bad one raises (``KeyError``,
    ``ValueError``, ``AgentLoadError``) before any split runs."""
    from tooleval_agents.models.retry import RetryPolicy

    return plan_grid(
        benchmark, models=models_of(models, agent_cmd, agents, model_args, agent_preset),
        strategy_names=strategy_names, agents=agents,
        agent_cmd=agent_cmd if agent_preset is None else f"--agent-preset {agent_preset}",
        grid=option_grid(options, "--option"), task=task, lang=lang, category=category,
        subset=subset, samples=samples, prompts=prompts, scoring=scoring, judge=judge,
        judge_kwargs=parse_pairs(judge_args, "--judge-arg"),
        model_kwargs=parse_pairs(model_args, "--model-arg"),
        policy=RetryPolicy(max_attempts=max_attempts, timeout=timeout), tool_faults=tool_faults)


def print_notes(sweep: Sweep, judge: str | None, max_concurrency: int) -> None:
    """What the user should know before the runs start (a local server, a judge that
    borrows the model's endpoint)."""
    notes = [local_server_hint(sweep.model_kwargs, max_concurrency)]
    if judge is not None:
        from tooleval_agents.run.setup import judge_arguments

        _, inherited = judge_arguments(sweep.models[0] or "", sweep.model_kwargs, judge,
                                       sweep.judge_kwargs)
        if inherited:
            notes.append(f"the judge {judge} uses the model's {', '.join(inherited)} (same "
                         "provider, no --judge-arg endpoint of its own)")
    for note in filter(None, notes):
        err_console.print(f"[yellow]note:[/] {shown(note)}", highlight=False)


def run_one(sweep: Sweep, run: Cell, settings: dict[str, Any], *,
            show: bool) -> tuple[dict[str, Any], int]:
    """One run of the grid: its row (``experiment`` None when the split could not run, its
    error said in one line) and its exit status (:func:`_unscored`: 1 when every example's
    agent failed, 3 when it left examples unscored, else 0)."""
    from tooleval_agents.run.runner import run_experiment

    spec = cell_spec(sweep, run, settings)
    try:
        summary = run_experiment(spec)
    except KeyboardInterrupt as exc:
        raise interrupted(exc) from None
    except OptionError as exc:  # a bad argument only the split's data shows (--samples)
        raise fail(f"{run[0].name}: {error_text(exc)}", 2) from None
    except Exception as exc:  # one split's failure (data, provider, LangSmith) is a line
        return failed_row(run[0], exc), 0
    return finished_row(sweep, run, spec, summary, show=show)


def interrupted(exc: KeyboardInterrupt | None = None) -> typer.Exit:
    """What Ctrl-C ends a run command with (said on stderr): exit 130; SIGTERM
    (:class:`~tooleval_agents.cli.base.Terminated`): 143."""
    how, code = ("stopped (SIGTERM)", 143) if isinstance(exc, Terminated) else (
        "interrupted", 130)
    err_console.print(f"[yellow]{how}:[/] finished examples are saved; run the same "
                      "command again to resume.")
    return typer.Exit(code)


def failed_row(split: Split, exc: BaseException) -> dict[str, Any]:
    """The row of a run that could not run, its error said on stderr in one line."""
    message = one_line(exc)
    err_console.print(f"[bold red]error:[/] {shown(f'{split.name}: {message}')}",
                      highlight=False)
    return {"experiment": None, "benchmark": split.benchmark, "task": split.task,
            "subset": split.subset, "error": message}


def finished_row(sweep: Sweep, run: Cell, spec: RunSpec, summary: RunSummary, *,
                 show: bool) -> tuple[dict[str, Any], int]:
    """The row of a run that ran, and its exit status (advice on stderr)."""
    split, _, _, user_agent, _ = run
    out = Path(spec.out)
    config = RunDir(summary.run_dir or out / summary.experiment).read_config()
    row = row_of(split, summary, out, config.strategy, config.model.get("spec") or "")
    row["split_examples"] = config.dataset.total
    if user_agent is not None or spec.outside_agent:
        row["agent"] = user_agent or config.agent
    if spec.strategy_options:
        row["strategy_options"] = spec.strategy_options
    code, advice = _unscored(row, summary)
    if show:
        show_run(row, headline_of(sweep.bench, split, [row]),
                 count_metrics_of(sweep.bench, split, spec.faults is not None))
    for text in filter(None, advice):  # stderr: --json keeps stdout clean
        err_console.print(f"[yellow]{shown(f'{split.name}: {text}')}[/]", highlight=False)
    if code == 1:
        err_console.print(f"[bold red]error:[/] {shown(f'{split.name}: {row[AGENT_FAILED]}')}",
                          highlight=False)
    return row, code


AGENT_FAILED = "agent_failed"
"""A row's line when every example ended in ``agent_error`` (the run measured nothing)."""


def _unscored(row: dict[str, Any], summary: Any) -> tuple[int, list[str | None]]:
    """The exit status a run calls for, and what to tell the user: 1 when every example
    ended in ``agent_error`` (the agent raised: nothing was measured); 3 when it left
    examples without a score (provider errors left, a judge that judged nothing, tool calls
    written as text and not read); else 0."""
    counts = summary.counts
    left = int(counts.get("infra_errors", 0))
    advice = None
    unscored = 0
    if left:
        kinds, first = infra_kinds(Path(row["run_dir"]))
        row["infra_error_kinds"] = dict(kinds)
        advice = infra_advice(left, kinds, first)
        unscored = 3
    judge_note = judge_advice(counts, Path(row["run_dir"]))
    if judge_note and not counts.get("judged"):
        unscored = 3  # a judged task whose judge answered nothing has no score at all
    if tool_calls_unmeasured(counts) or format_unmeasured(counts):
        unscored = 3  # calls written as text and none read, or no answer read at all
    notes = list(summary.notes)
    scored, agent_errors = int(counts.get("scored", 0)), int(counts.get("agent_errors", 0))
    if scored and agent_errors == scored:
        first = next((n for n in notes if "agent_error" in n), "")
        notes = [n for n in notes if n != first]
        row[AGENT_FAILED] = command_failures(row) or (
            "every example ended in agent_error (the agent or strategy raised; nothing was "
            "measured); first: " + first.split("first: ", 1)[-1])
        return 1, [advice, judge_note, *notes]
    return unscored, [advice, judge_note, *notes]


# The run command's own options (the shared ones are in cli/base.py), each in a panel of
# `tooleval run --help` (tests/test_cli_vocabulary.py: every option of `run` is in one).
WHAT = "What runs"
DATA = "Data and examples"
SCORING = "Scoring"
CALLS = "Model calls"
RESULTS = "Results and output"

BenchmarkArg = Annotated[str, typer.Argument(help="A registered benchmark.")]
ModelArg = Annotated[list[str] | None, typer.Option(
        "--model", metavar="SPEC", rich_help_panel=WHAT, help="reference, noisy-reference "
        "(a rate: noisy-reference:0.3), or provider:model (e.g. openai:gpt-4o-mini). "
        "Repeatable: one run per model.", show_default=False)]
TaskArg = Annotated[str | None, typer.Option(
        "--task", metavar="TASK", rich_help_panel=DATA,
        help="Task, or all (default: the benchmark's only task).")]
LangArg = Annotated[str | None, typer.Option(
        "--lang", metavar="LANG", rich_help_panel=DATA, help="Language subset of the "
        "benchmark, or all (a wrong value lists the choices).")]
CategoryArg = Annotated[str | None, typer.Option(
        "--category", metavar="NAME", rich_help_panel=DATA, help="Category (non-language) "
        "subset of the benchmark, or all (a wrong value lists the choices).")]
SubsetArg = Annotated[str | None, typer.Option(
        "--subset", metavar="NAME", rich_help_panel=DATA,
        help="Any subset (language or category), or all.")]
StrategyArg = Annotated[list[str] | None, typer.Option(
        "--strategy", metavar="NAME", rich_help_panel=WHAT, help="Strategy (default: the "
        "benchmark's protocol for the split). Repeatable: one run per strategy.")]
OptionArg = Annotated[list[str] | None, typer.Option(
        "--option", "-O", metavar="KEY=VALUE", rich_help_panel=WHAT, help="Strategy or "
        "scoring option (repeatable), e.g. -O k=3; -O k=3,4,5 runs one run per value.")]
PromptsArg = Annotated[str | None, typer.Option(
        "--prompts", metavar="SET", rich_help_panel=WHAT, help="Prompt set of the strategy "
        "and of the judge, where they offer several: ours (default) or official (the "
        "upstream templates, read from the files `tooleval data fetch` got; a missing one is "
        "named with the command that gets it).")]
AgentArg = Annotated[list[str] | None, typer.Option(
        "--agent", metavar="FACTORY", rich_help_panel=WHAT, help="Your agent, as "
        "module:factory or file.py:factory, where factory(model, tools) returns a runnable "
        "over {'messages': [...]}, as LangChain's create_agent does "
        "(langchain.agents:create_agent). It plays a tool-calling strategy (default: the "
        "benchmark's first that accepts an agent). Repeatable: one run per agent.")]
JudgeArg = Annotated[str | None, typer.Option(
        "--judge", metavar="SPEC", rich_help_panel=SCORING, help="Judge model for LLM-judged "
        "metrics (provider:model). Temperature 0 unless --judge-arg says otherwise; with the "
        "model's provider and no endpoint of its own it uses the model's endpoint "
        "(--model-arg base_url=...).")]
JudgeArgsArg = Annotated[list[str] | None, typer.Option(
        "--judge-arg", metavar="KEY=VALUE", rich_help_panel=SCORING, help="init_chat_model "
        "argument of the judge (repeatable), e.g. --judge-arg base_url=URL.")]
LimitArg = Annotated[int | None, typer.Option(
        "--limit", min=1, metavar="N", rich_help_panel=DATA, help="Only the first N examples "
        "of each split (of --samples when given). A larger --limit later extends the run: "
        "finished examples are kept.")]
SamplesArg = Annotated[str | None, typer.Option(
        "--samples", metavar="INDICES", rich_help_panel=DATA,
        help="Split indices and ranges to run, e.g. 10-20,37.")]
EpochsArg = Annotated[int, typer.Option(
        "--epochs", min=1, metavar="N", rich_help_panel=DATA, help="Attempts per example: "
        "the summary adds pass@k and pass^k of success-type metrics and the spread across "
        "attempts.")]
RpsArg = Annotated[float | None, typer.Option(
        "--rps", min=0.001, metavar="RATE", rich_help_panel=CALLS,
        help="Model requests per second (default: unlimited).")]
MaxAttemptsArg = Annotated[int, typer.Option(
        "--max-attempts", min=1, metavar="N", rich_help_panel=CALLS,
        help="Tries per model call on 429, 5xx, timeouts and resets.")]
TimeoutArg = Annotated[float, typer.Option(
        "--timeout", min=0.001, metavar="SECONDS", rich_help_panel=CALLS,
        help="Seconds a model call may take.")]
ModelArgsArg = Annotated[list[str] | None, typer.Option(
        "--model-arg", metavar="KEY=VALUE", rich_help_panel=CALLS, help="init_chat_model "
        "argument (repeatable), e.g. temperature=0 or base_url=URL; keys belong in the "
        "environment (OPENAI_API_KEY). With a base_url also tool_choice, tool_choice_rounds "
        "and null_content (see docs/models.md).")]
OutArg = Annotated[Path, typer.Option("--out", metavar="DIR", rich_help_panel=RESULTS,
                                      help="Results root directory.")]
UploadArg = Annotated[bool | None, typer.Option(
        "--upload/--no-upload", metavar=FLAG, rich_help_panel=RESULTS, help="Send the "
        "experiment to LangSmith (default: when LANGSMITH_API_KEY is set).",
        show_default=False)]
FreshArg = Annotated[bool, typer.Option(
        "--fresh", metavar=FLAG, rich_help_panel=RESULTS,
        help="Discard a previous run in the same directory instead of resuming.")]
ToolFaultsArg = Annotated[list[str] | None, typer.Option(
        "--tool-faults", metavar="SETTING", rich_help_panel=WHAT, help="Seeded tool faults, "
        "e.g. rate=0.2,kinds=error+timeout,seed=0 (kinds: error, timeout, rate_limit, "
        "malformed, empty; rate=0: none). Repeatable: one run each.")]
AgentCmdArg = Annotated[str | None, typer.Option(
        "--agent-cmd", metavar="COMMAND", rich_help_panel=WHAT, help="An agent command as "
        "the system under test (any language): run per example with its MCP session ({url}, "
        "{token}; TOOLEVAL_MCP_URL...) and the request on stdin; its tool calls are the "
        "trajectory, what it prints its answer (docs/mcp.md). With --model the run's model "
        "is served to it ({openai_base_url}, {api_key}; OPENAI_BASE_URL...: docs/gateway.md).")]
AgentPresetArg = Annotated[str | None, typer.Option(
        "--agent-preset", metavar="NAME", rich_help_panel=WHAT, help="An agent people use, "
        "prewired, as the system under test: claude-code, codex or openai-agents "
        "(docs/agents-people-use.md). Run per example with its MCP session, on --model served "
        "by the gateway, quiet and offline; its version is part of the run.")]
AgentBinArg = Annotated[str | None, typer.Option(
        "--agent-bin", metavar="PATH", rich_help_panel=WHAT,
        help="The preset's program (default: found on the PATH).")]
AgentNameArg = Annotated[str | None, typer.Option(
        "--agent-name", metavar="NAME", rich_help_panel=WHAT,
        help="What the run calls the agent command (default: agent; a preset: its name).")]
AgentVersionArg = Annotated[str | None, typer.Option(
        "--agent-version", metavar="TEXT", rich_help_panel=WHAT,
        help="The agent's version (a release, a commit): part of the run's identity, beside "
        "the files the agent command names (an edited script is a new run without it).")]
AgentTimeoutArg = Annotated[float, typer.Option(
        "--agent-timeout", metavar="SECONDS", min=0.001, rich_help_panel=CALLS,
        help="Seconds an agent command may take per example (then its process group is "
        "killed: agent_timeout).")]
AgentSandboxArg = Annotated[bool, typer.Option(
        "--agent-sandbox", metavar=FLAG, rich_help_panel=WHAT,
        help="Seal the agent command (Linux, bubblewrap): per example it sees its own "
        "session and request, the system folders and the working directory (read-only), a "
        "private home and /tmp; not the data, the runs, the caches, your home, other "
        "processes, nor the network beyond its session (docs/security.md). Off by default: "
        "an unsealed run is marked so.")]
AgentHostArg = Annotated[list[str] | None, typer.Option(
        "--agent-host", metavar="HOST", rich_help_panel=WHAT, help="HOST[:PORT] the sealed "
        "agent may reach (its model provider, e.g. api.openai.com: HTTPS through a proxy; or "
        "127.0.0.1:8000, a server on this machine). Repeatable.")]
AgentReadArg = Annotated[list[Path] | None, typer.Option(
        "--agent-read", metavar="PATH", rich_help_panel=WHAT, help="A path the sealed agent "
        "may read besides the system folders and the working directory (its tools installed "
        "in your home). Repeatable.")]
AllMetricsArg = Annotated[bool, typer.Option(
        "--all-metrics", metavar=FLAG, rich_help_panel=RESULTS, help="With several runs, "
        "also print each run's table of every metric (the table across runs has the "
        "headline metrics).")]
RunCache = Annotated[bool, in_panel(CacheOption, CALLS)]
RunConcurrency = Annotated[int, in_panel(MaxConcurrencyOption, CALLS)]
RunMaxRuns = Annotated[int, in_panel(MaxRunsArg, CALLS)]
RunBatch = Annotated[bool, in_panel(BatchArg, CALLS)]
RunBatchSize = Annotated[int, in_panel(BatchSizeArg, CALLS)]
RunBatchWait = Annotated[float, in_panel(BatchWaitArg, CALLS)]
RunScoring = Annotated[str | None, in_panel(ScoringOption, SCORING)]
RunProgress = Annotated[bool | None, in_panel(ProgressOption, RESULTS)]
RunDataDir = Annotated[Path | None, in_panel(DataDirOption, DATA)]
RunJson = Annotated[bool, in_panel(JsonOption, RESULTS)]


@app.command("run")
def run_command(
    benchmark: BenchmarkArg,
    model: ModelArg = None,
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
    scoring: RunScoring = None,
    limit: LimitArg = None,
    samples: SamplesArg = None,
    epochs: EpochsArg = 1,
    max_concurrency: RunConcurrency = 8,
    max_runs: RunMaxRuns = 1,
    batch: RunBatch = False,
    batch_size: RunBatchSize = 100,
    batch_wait: RunBatchWait = 30.0,
    rps: RpsArg = None,
    max_attempts: MaxAttemptsArg = 6,
    timeout: TimeoutArg = 300.0,
    model_arg: ModelArgsArg = None,
    out: OutArg = Path("runs"),
    upload: UploadArg = None,
    fresh: FreshArg = False,
    tool_faults: ToolFaultsArg = None,
    cache: RunCache = True,
    progress: RunProgress = None,
    data_dir: RunDataDir = None,
    all_metrics: AllMetricsArg = False,
    json_out: RunJson = False,
    agent_cmd: AgentCmdArg = None,
    agent_name: AgentNameArg = None,
    agent_version: AgentVersionArg = None,
    agent_timeout: AgentTimeoutArg = 300.0,
    agent_preset: AgentPresetArg = None,
    agent_bin: AgentBinArg = None,
    agent_sandbox: AgentSandboxArg = False,
    agent_host: AgentHostArg = None,
    agent_read: AgentReadArg = None,
) -> None:
    """Run (or resume) an experiment per split, in
    `OUT/<benchmark>-<task>-<subset>-<strategy>[+<agent>]-<model>[-<key>=<value>...]/`; a
    directory holding a run of something else (an edited agent) gets a numbered sibling (-v2).
    Repeated --model, --strategy, --agent, --tool-faults and swept options (-O k=3,4,5) run the
    grid (--max-runs N: N at once) and compare it. The same command again resumes ("resumed N
    of M"): finished examples kept, failures retried; nothing leaves the machine unless uploading.

    Exit status: 0 every example scored; 1 a split could not run or every agent failed; 2 a bad
    argument; 3 examples left unscored (provider errors: run it again); 130 interrupted, 143
    SIGTERM (docs: running.md#exit-statuses). A model served on this machine usually answers
    one request at a time: use --max-concurrency 1 there.
    """
    try:
        command = command_settings(agent_cmd, agent_name, agent_timeout, agent_version, agent,
                                   sealed=sandbox_of(agent_cmd, agent_sandbox, agent_host,
                                                     agent_read),
                                   agent_preset=agent_preset, agent_bin=agent_bin, models=model)
        sweep = plan_sweep(
            benchmark, models=model, strategy_names=strategy, agents=agent, options=option,
            task=task, lang=lang, category=category, subset=subset, samples=samples,
            prompts=prompts, scoring=scoring, judge=judge, judge_args=judge_arg,
            model_args=model_arg, max_attempts=max_attempts, timeout=timeout,
            tool_faults=tool_faults, agent_cmd=agent_cmd, agent_preset=agent_preset)
    except (KeyError, ValueError, AgentLoadError) as exc:  # a bad argument: a usage error
        raise fail(error_text(exc), 2) from None
    print_notes(sweep, judge, max_concurrency)
    settings = {"samples": samples, "epochs": epochs, "judge": judge, "limit": limit,
                "max_concurrency": max_concurrency, "rps": rps, "out": out, "upload": upload,
                "batch": batch_settings(sweep.models, batch, batch_size, batch_wait),
                "data_dir": data_or_samples(sweep.bench, dict.fromkeys(s for s, _ in sweep.plan),
                                            data_dir),
                "prompts": prompts, "cache": cache, "fresh": fresh,
                "scoring_options": {"scoring": scoring} if scoring else None,
                "progress": sys.stderr.isatty() if progress is None else progress, **command}
    run_all(sweep, settings, json_out=json_out, all_metrics=all_metrics, max_runs=max_runs)


def run_all(sweep: Sweep, settings: dict[str, Any], *, json_out: bool, all_metrics: bool,
            max_runs: int = 1) -> None:
    """Every run of the grid, one after the other or up to ``max_runs`` at once, then the
    table across them (or JSON); exit 1 when a split could not run or every example's agent
    failed, 3 when examples were left unscored."""
    rows: list[dict[str, Any]] = []
    failed = unscored = 0
    runs = [(f, r) for f in sweep.faults for r in sweep.runs()]
    show = not json_out and (all_metrics or len(runs) == 1)
    if max_runs > 1 and len(runs) > 1:
        done = _at_once(sweep, runs, settings, show=show, max_runs=max_runs)
    else:
        done = [run_one(sweep, run, {**settings, "tool_faults": faults}, show=show)
                for faults, run in runs]
    for (faults, _), (row, code) in zip(runs, done, strict=True):
        if faults is not None:
            row["tool_faults"] = faults
        rows.append(row)
        failed += row.get("experiment") is None or code == 1
        unscored += code == 3
    if not json_out and len(rows) > 1:
        show_sweep(sweep.bench, rows)
    if json_out:
        print_json(rows[0] if len(rows) == 1 else rows)
    if failed:
        raise typer.Exit(1)
    if unscored:
        raise typer.Exit(3)


def _at_once(sweep: Sweep, runs: list[tuple[str | None, Cell]], settings: dict[str, Any], *,
             show: bool, max_runs: int) -> list[tuple[dict[str, Any], int]]:
    """The grid's runs up to ``--max-runs`` at once (:mod:`tooleval_agents.cli.run_many`), their
    rows in the grid's order (tables printed after all of them, as a sequential sweep would)."""
    from tooleval_agents.cli.run_many import run_at_once

    specs = [cell_spec(sweep, run, {**settings, "tool_faults": faults}) for faults, run in runs]
    labels = [" ".join(filter(None, (split.name, strat, str(model or ""), str(agent or ""),
                                     faults)))
              for faults, (split, strat, model, agent, _) in runs]
    try:
        outcomes = run_at_once(list(zip(labels, specs, strict=True)), max_runs=max_runs,
                               progress=bool(settings["progress"]))
    except KeyboardInterrupt as exc:
        raise interrupted(exc) from None
    except OptionError as exc:  # a bad argument only a split's data shows (--samples)
        raise fail(error_text(exc), 2) from None
    return [(failed_row(run[0], outcome), 0) if isinstance(outcome, Exception) else
            finished_row(sweep, run, spec, outcome, show=show)
            for (_, run), spec, outcome in zip(runs, specs, outcomes, strict=True)]
