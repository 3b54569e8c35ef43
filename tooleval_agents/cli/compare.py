"""``tooleval compare RUN_DIR...``: metrics side by side, paired bootstrap CIs, cost."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from tooleval_agents.cli.base import (
    DataDirOption,
    JsonOption,
    NBootOption,
    ScoringOption,
    app,
    console,
    fail,
    handle_errors,
    print_json,
    with_profile,
)
from tooleval_agents.contracts import format_metric
from tooleval_agents.errors import ToolevalError
from tooleval_agents.results.rescore import check_rescore_options, parse_options
from tooleval_agents.results.rundir import CONFIG
from tooleval_agents.terminal import shown

RunsArgument = Annotated[list[Path], typer.Argument(
    help="Run directories (`runs/<experiment>/` with config.json and examples.jsonl), or a "
    "results root holding them (every run directory in it).", show_default=False)]
MetricOption = Annotated[list[str] | None, typer.Option(
    "--metric", "-m", help="Metric to compare (repeatable; default: all).", show_default=False)]
SeedOption = Annotated[int, typer.Option("--seed", help="Seed of the bootstrap resampling.")]
RescoreOption = Annotated[bool, typer.Option(
    "--rescore", help="Score the stored outputs again (needs the dataset) instead of using the "
    "stored per-example scores.")]
RescoreOptions = Annotated[list[str] | None, typer.Option(
    "--option", "-O", help="Scoring option KEY=VALUE overriding the runs' (e.g. "
    "graph=true); repeatable. Needs --rescore (stored scores keep the runs' options).",
    show_default=False)]


def expand_runs(paths: list[Path]) -> list[Path]:
    """Run directories as given, a results root replaced by the run directories in it (in
    name order); a path that is neither is kept (its error names it)."""
    out: list[Path] = []
    for path in paths:
        if not (path / CONFIG).is_file() and path.is_dir():
            found = sorted(p for p in path.iterdir() if (p / CONFIG).is_file())
            if found:
                out.extend(found)
                continue
        out.append(path)
    return out


def rescore_options(option: list[str] | None, scoring: str | None,
                    rescore: bool) -> dict[str, Any]:
    """The scoring options of ``-O`` and ``--scoring``; refused without ``--rescore`` (they
    would be silently ignored)."""
    if (option or scoring) and not rescore:
        raise fail("-O/--option and --scoring change how outputs are scored: add --rescore to "
                   "score the stored outputs again (the stored scores keep the runs' own "
                   "options)", code=2)
    try:
        return with_profile(parse_options(option or []), scoring)
    except ValueError as exc:
        raise fail(str(exc), code=2) from None


def _usd(value: float, total: float) -> str:
    # NaN: no price known (the total is NaN too), or nothing to divide by (no success)
    if total != total:
        return "unknown price"
    return "n/a" if value != value else f"{value:.5f}"


def _num(value: float) -> str:
    return format_metric(value)  # NaN: not run, or nothing to count


@app.command("compare")
def compare_runs(
    runs: RunsArgument,
    metric: MetricOption = None,
    n_boot: NBootOption = 2000,
    seed: SeedOption = 0,
    rescore: RescoreOption = False,
    option: RescoreOptions = None,
    scoring: ScoringOption = None,
    data_dir: DataDirOption = None,
    json_out: JsonOption = False,
) -> None:
    """Compare finished runs: metric x run, differences with paired bootstrap CIs over the
    examples both runs scored, and token cost per example. No model is called."""
    from tooleval_agents.results.compare import compare, load_run

    options = rescore_options(option, scoring, rescore)
    try:
        paths = expand_runs(runs)
        if rescore:
            check_rescore_options(paths, options)
        loaded = [load_run(r, rescore=rescore, scoring_options=options, data_dir=data_dir)
                  for r in paths]
        result = compare(loaded, metrics=metric or None, n_boot=n_boot, seed=seed)
    except (ToolevalError, OSError, KeyError, ValueError) as exc:
        raise handle_errors(exc) from exc
    if json_out:
        print_json(result.to_dict())
        return
    show_comparison(result)


def show_comparison(result: Any) -> None:
    """A :class:`~tooleval_agents.results.compare.Comparison` as tables: metric x run, the paired
    differences with their CIs, cost per example (also printed after a ``tooleval run``
    sweep)."""
    table = Table(title="Metrics (0-100, each run over all its scored examples)")
    table.add_column("metric")
    for label in result.table.columns:
        table.add_column(shown(label), justify="right")
    for name, row in result.table.iterrows():
        table.add_row(shown(name), *[_num(v) for v in row.tolist()])
    console.print(table)
    diffs = result.differences[result.differences["n_examples"] > 0]
    if not diffs.empty:
        level = round(100 * result.confidence)
        ci = Table(title=f"Paired differences b - a, {level}% bootstrap CI "
                         f"({result.n_boot} resamples, seed {result.seed})")
        for col in ("a", "b", "metric"):
            ci.add_column(col)
        for col in ("diff", "CI", "n"):
            ci.add_column(col, justify="right")
        for row in diffs.to_dict(orient="records"):
            mark = "[bold]*[/]" if row["significant"] else ""
            ci.add_row(shown(row["run_a"]), shown(row["run_b"]), shown(row["metric"]),
                       f"{_num(row['diff'])}{mark}",
                       shown(f"[{_num(row['ci_low'])}, {_num(row['ci_high'])}]"),
                       str(row["n_examples"]))
        console.print(ci)
        console.print("[dim]* the CI excludes 0[/]")
    cost = Table(title="Cost per example (tokens and calls: every recorded example, as in "
                       "summary.json; latency: scored examples)")
    cost.add_column("run")
    for col in ("examples", "infra errors", "input tokens", "output tokens", "model calls",
                "latency s", "$ per example", "$ per success"):
        cost.add_column(col, justify="right")
    for label, row in result.costs.iterrows():
        cost.add_row(shown(label), str(int(row["examples"])), str(int(row["infra_errors"])),
                     _num(row["mean_input_tokens"]), _num(row["mean_output_tokens"]),
                     _num(row["mean_model_calls"]), _num(row["mean_latency_s"]),
                     _usd(row["cost_per_example_usd"], row["cost_usd"]),
                     _usd(row["cost_per_success_usd"], row["cost_usd"]))
    console.print(cost)
    for note in result.notes:
        console.print(f"[dim]- {shown(note)}[/]", highlight=False)
