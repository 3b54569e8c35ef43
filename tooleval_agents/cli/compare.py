"""``tooleval compare RUN_DIR...``: metrics side by side, paired bootstrap CIs, cost."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from tooleval_agents.cli.base import (
    FLAG,
    DataDirOption,
    JsonOption,
    NBootOption,
    ScoringOption,
    app,
    console,
    err_console,
    error_text,
    fail,
    handle_errors,
    print_json,
)
from tooleval_agents.errors import ToolevalError
from tooleval_agents.registry import with_profile
from tooleval_agents.results.compare_view import (
    comparison_markdown,
    comparison_notes,
    comparison_tables,
    runs_list,
)
from tooleval_agents.results.rescore import check_rescore_options, parse_options
from tooleval_agents.results.rundir import CONFIG
from tooleval_agents.terminal import shown

if TYPE_CHECKING:  # annotations only: the engine (pandas, numpy) loads when a command runs
    from tooleval_agents.results.compare import Comparison

ALL_METRICS = "--all-metrics"
"""What shows the metrics a comparison's tables leave out, on the command line."""

RunsArgument = Annotated[list[Path], typer.Argument(
    help="Run directories (`runs/<experiment>/` with config.json and examples.jsonl), or a "
    "results root holding them (every run directory in it).", show_default=False)]
MetricOption = Annotated[list[str] | None, typer.Option(
    "--metric", "-m", metavar="METRIC", help="Metric to compare (repeatable; default: the "
    "headline metrics, --all-metrics every one).", show_default=False)]
SeedOption = Annotated[int, typer.Option("--seed", help="Seed of the bootstrap resampling.")]
RescoreOption = Annotated[bool, typer.Option(
    "--rescore", metavar=FLAG,
    help="Score the stored outputs again (needs the dataset) instead of using the "
    "stored per-example scores.")]
RescoreOptions = Annotated[list[str] | None, typer.Option(
    "--option", "-O", help="Scoring option KEY=VALUE overriding the runs' (e.g. "
    "graph=true); repeatable. Needs --rescore (stored scores keep the runs' options).",
    show_default=False)]


OUTPUTS = ("report.md", "index.html")
"""Files that mark a folder as a report's or a site's (``runs/report/``, ``runs/site/``): a
glob over the runs root (``runs/*``) passes over them."""


def expand_runs(paths: list[Path]) -> list[Path]:
    """Run directories as given, a results root replaced by the run directories in it (in
    name order), a report's or site's folder left out. A path that holds no run while others
    do (``runs/*`` over a ``tooleval serve`` log or an empty folder) is passed over and said
    in one line on stderr; one that does not exist, or every path holding no run, is kept (its
    error names it)."""
    found: list[Path] = []
    kept: list[Path] = []  # the paths holding no run, in the order given
    for path in paths:
        if not (path / CONFIG).is_file() and path.is_dir():
            runs = sorted(p for p in path.iterdir() if (p / CONFIG).is_file())
            if runs:
                found.extend(runs)
                continue
            if any((path / name).is_file() for name in OUTPUTS):
                continue
        if (path / CONFIG).is_file():
            found.append(path)
        else:
            kept.append(path)
    skipped = [p for p in kept if p.exists()] if found else []
    if skipped:
        err_console.print(f"[yellow]note:[/] {shown(skipped_line(skipped))}", highlight=False)
    return found + [p for p in kept if p not in skipped]


def skipped_line(skipped: Sequence[Path]) -> str:
    """What :func:`expand_runs` says of the paths it passed over: ``skipped 1 folder that is
    not a run (no config.json): runs/serve-SPLIT``."""
    what = "folder" if all(p.is_dir() for p in skipped) else "path"
    n = len(skipped)
    counted = f"1 {what} that is not a run" if n == 1 else f"{n} {what}s that are not runs"
    return f"skipped {counted} (no {CONFIG}): {', '.join(str(p) for p in skipped)}"


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


def runs_root(paths: Sequence[Path]) -> Path:
    """The folder the runs are in (a run directory's parent, a results root itself; with
    several, their common folder): where a report or site goes unless ``--out`` says."""
    roots = [p.parent if (p / CONFIG).is_file() else p for p in paths]
    if not roots:
        return Path(".")
    try:  # as given (relative paths stay relative in what is printed)
        return Path(os.path.commonpath([str(r) for r in roots]))
    except ValueError:  # relative and absolute mixed
        return Path(os.path.commonpath([str(r.resolve()) for r in roots]))


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
    all_metrics: Annotated[bool, typer.Option(
        "--all-metrics", metavar=FLAG,
        help="Show every metric the runs report (default: their headline "
        "metrics; --metric names others).")] = False,
    json_out: JsonOption = False,
    output_format: Annotated[str, typer.Option(
        "--format", help="text (tables), markdown, or json (the same as --json; every "
        "metric).")] = "text",
    fail_if_worse: Annotated[str | None, typer.Option(
        "--fail-if-worse", metavar="METRIC[:MARGIN]",
        help="A gate for CI: exit 1 when the second run (new) is worse than the first "
        "(baseline) on METRIC beyond the paired 95% interval and MARGIN (in the metric's "
        "units; default 0), 0 when it is not, 3 when it cannot tell (n/a, not paired); one "
        "line says which, and by how much.", show_default=False)] = None,
) -> None:
    """Compare finished runs: metric x run, differences with paired bootstrap CIs over the
    examples both runs scored, and token cost per example. No model is called."""
    from tooleval_agents.results.compare import compare, load_run

    options = rescore_options(option, scoring, rescore)
    if output_format not in ("text", "markdown", "json"):
        raise fail(f"--format {output_format!r}: choose text, markdown or json", code=2)
    gate = parse_gate(fail_if_worse, n_boot) if fail_if_worse is not None else None
    chosen = [*(metric or []), *([gate[0]] if gate and metric and gate[0] not in metric
                                 else [])]
    try:
        paths = expand_runs(runs)
        if gate is not None and len(paths) != 2:
            raise fail(f"--fail-if-worse compares two runs, the baseline first and the new "
                       f"one second; got {len(paths)}", code=2)
        if rescore:
            check_rescore_options(paths, options)
        loaded = [load_run(r, rescore=rescore, scoring_options=options, data_dir=data_dir)
                  for r in paths]
        result = compare(loaded, metrics=chosen or None, n_boot=n_boot, seed=seed)
    except (ToolevalError, OSError, KeyError, ValueError) as exc:
        raise handle_errors(exc) from exc
    try:
        verdict = result.worse(gate[0], gate[1]) if gate is not None else None
    except (KeyError, ValueError) as exc:  # a metric without a direction: a bad argument
        raise fail(error_text(exc), 2) from exc
    if json_out or output_format == "json":
        print_json({**result.to_dict(),
                    **({"gate": verdict.to_dict()} if verdict is not None else {})})
    elif output_format == "markdown":
        typer.echo(comparison_markdown(result, all_metrics=all_metrics, more=ALL_METRICS),
                   nl=False)
    else:
        show_comparison(result, all_metrics=all_metrics)
    if verdict is not None:
        if not (json_out or output_format == "json"):
            console.print(shown(f"gate: {verdict.line}"), highlight=False, soft_wrap=True)
        if verdict.exit_code:
            raise typer.Exit(verdict.exit_code)


def parse_gate(text: str, n_boot: int) -> tuple[str, float]:
    """``METRIC[:MARGIN]`` of ``--fail-if-worse``: the metric and the margin (0 by default);
    a bad one, or no bootstrap (``--n-boot 0``), is a usage error (exit 2).

    >>> parse_gate("success:2.5", 2000), parse_gate("pass@1", 2000)
    (('success', 2.5), ('pass@1', 0.0))
    """
    name, colon, given = text.rpartition(":")
    if not colon:
        name, given = text, "0"
    try:
        margin = float(given)
    except ValueError:
        margin = math.nan
    if not name or not margin >= 0 or math.isinf(margin):
        raise fail(f"--fail-if-worse {text!r}: METRIC or METRIC:MARGIN, MARGIN a number 0 or "
                   "more in the metric's units (e.g. success:2)", code=2)
    if n_boot < 1:
        raise fail("--fail-if-worse judges by the paired bootstrap interval: --n-boot must be "
                   "1 or more", code=2)
    return name, margin


def show_comparison(result: Comparison, *, all_metrics: bool = False) -> None:
    """A :class:`~tooleval_agents.results.compare.Comparison` as tables
    (:func:`~tooleval_agents.results.compare_view.comparison_tables`): the headline metrics
    (or every one), the paired differences with their CIs, cost per example; runs named by
    what differs between them, their full names listed once under the tables."""
    for text in comparison_tables(result, all_metrics=all_metrics):
        table = Table(title=shown(text.title))
        for i, name in enumerate(text.header):
            table.add_column(shown(name), justify="right" if text.right_aligned(i) else "left")
        for row in text.rows:
            table.add_row(*map(shown, row))
        console.print(table)
    console.print("runs:", highlight=False)
    for line in runs_list(result):
        console.print(shown(f"  {line}"), highlight=False)
    for note in comparison_notes(result, all_metrics=all_metrics, more=ALL_METRICS):
        console.print(f"[dim]- {shown(note)}[/]", highlight=False)
