"""``tooleval report RUN_DIR... --out DIR``: Markdown, CSV tables and PNG figures."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tooleval_agents.cli.base import (
    FLAG,
    DataDirOption,
    JsonOption,
    NBootOption,
    ScoringOption,
    app,
    console,
    handle_errors,
    print_json,
)
from tooleval_agents.cli.compare import (
    MetricOption,
    RescoreOption,
    RescoreOptions,
    RunsArgument,
    SeedOption,
    expand_runs,
    rescore_options,
    runs_root,
)
from tooleval_agents.errors import ToolevalError
from tooleval_agents.terminal import shown


@app.command("report")
def report(
    runs: RunsArgument,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Directory to write the report into (default: report/ in the folder "
        "the runs are in, e.g. runs/report/).", show_default=False)] = None,
    metric: MetricOption = None,
    n_boot: NBootOption = 2000,
    seed: SeedOption = 0,
    rescore: RescoreOption = False,
    option: RescoreOptions = None,
    scoring: ScoringOption = None,
    data_dir: DataDirOption = None,
    all_figures: Annotated[bool, typer.Option(
        "--all-figures", metavar=FLAG,
        help="Every figure (the paper's breakdowns, all headline metrics "
        "per run); by default one per benchmark: its headline metric per split and system, "
        "with 95% intervals.")] = False,
    json_out: JsonOption = False,
) -> None:
    """Write report.md, CSV tables (paper-style where the benchmark has a layout, metric x run
    otherwise), paired differences with bootstrap CIs, cost, and PNG figures."""
    from tooleval_agents.results.reports import write_report

    options = rescore_options(option, scoring, rescore)
    try:
        paths = expand_runs(runs)
        target = out if out is not None else runs_root(paths) / "report"
        result = write_report(paths, target, n_boot=n_boot, seed=seed,
                              metrics=metric or None,
                              rescore=rescore, scoring_options=options,
                              data_dir=data_dir, all_figures=all_figures)
    except (ToolevalError, OSError, KeyError, ValueError) as exc:
        raise handle_errors(exc) from exc
    files = {"markdown": str(result.markdown), "csv": [str(p) for p in result.csv],
             "figures": [str(p) for p in result.figures]}
    if json_out:
        print_json({"out": str(result.out_dir), **files,
                    "notes": result.comparison.notes if result.comparison else []})
        return
    console.print(shown(f"wrote {result.markdown}"), highlight=False)
    console.print(shown(f"{len(result.csv)} CSV tables, {len(result.figures)} figures in "
                        f"{result.out_dir}"), highlight=False)
