"""``tooleval compare RUN_DIR...``: metrics side by side, paired bootstrap CIs, cost."""

from __future__ import annotations

import os
from collections.abc import Sequence
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


OUTPUTS = ("report.md", "index.html")
"""Files that mark a folder as a report's or a site's (``runs/report/``, ``runs/site/``): a
glob over the runs root (``runs/*``) passes over them."""


def expand_runs(paths: list[Path]) -> list[Path]:
    """Run directories as given, a results root replaced by the run directories in it (in
    name order), a report's or site's folder left out; a path that is none of these is kept
    (its error names it)."""
    out: list[Path] = []
    for path in paths:
        if not (path / CONFIG).is_file() and path.is_dir():
            found = sorted(p for p in path.iterdir() if (p / CONFIG).is_file())
            if found:
                out.extend(found)
                continue
            if any((path / name).is_file() for name in OUTPUTS):
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
    output_format: Annotated[str, typer.Option(
        "--format", help="text (tables), markdown, or json (the same as --json).")] = "text",
) -> None:
    """Compare finished runs: metric x run, differences with paired bootstrap CIs over the
    examples both runs scored, and token cost per example. No model is called."""
    from tooleval_agents.results.compare import compare, load_run

    options = rescore_options(option, scoring, rescore)
    if output_format not in ("text", "markdown", "json"):
        raise fail(f"--format {output_format!r}: choose text, markdown or json", code=2)
    try:
        paths = expand_runs(runs)
        if rescore:
            check_rescore_options(paths, options)
        loaded = [load_run(r, rescore=rescore, scoring_options=options, data_dir=data_dir)
                  for r in paths]
        result = compare(loaded, metrics=metric or None, n_boot=n_boot, seed=seed)
    except (ToolevalError, OSError, KeyError, ValueError) as exc:
        raise handle_errors(exc) from exc
    if json_out or output_format == "json":
        print_json(result.to_dict())
    elif output_format == "markdown":
        typer.echo(markdown_comparison(result), nl=False)
    else:
        show_comparison(result)


def _tables(result: Any) -> list[tuple[str, list[str], list[list[str]]]]:
    """The comparison's tables (title, header, rows), runs named by what differs between them
    (:func:`~tooleval_agents.results.compare.short_labels`)."""
    from tooleval_agents.results.compare import recorded_examples, short_labels

    short = short_labels(result.runs)
    tables = [("Metrics (0-100, each run over all its scored examples)",
               ["metric", *(short[c] for c in result.table.columns)],
               [[str(name), *map(_num, row.tolist())] for name, row in result.table.iterrows()])]
    diffs = result.differences[result.differences["n_examples"] > 0]
    if not diffs.empty:
        tables.append((f"Paired differences b - a, {round(100 * result.confidence)}% bootstrap "
                       f"CI ({result.n_boot} resamples, seed {result.seed}; * the CI excludes 0)",
                       ["a", "b", "metric", "diff", "CI", "n"],
                       [[short[r["run_a"]], short[r["run_b"]], str(r["metric"]),
                         _num(r["diff"]) + ("*" if r["significant"] else ""),
                         f"[{_num(r['ci_low'])}, {_num(r['ci_high'])}]", str(r["n_examples"])]
                        for r in diffs.to_dict(orient="records")]))
    # every count and mean the costs frame holds, by name: a count added there shows up here
    money = {"cost_per_example_usd": "$/example", "cost_per_success_usd": "$/success"}
    skip = {"cost_usd", "scored", "total_input_tokens", "total_output_tokens"}
    columns = [c for c in result.costs.columns if c not in skip and (  # all-zero counts: none
        c in money or c == "examples" or (result.costs[c].fillna(0) != 0).any())]
    examples = {r.label: recorded_examples(r) for r in result.runs}  # "6 × 3" with epochs
    rows = []
    for label, row in result.costs.iterrows():
        rows.append([short[str(label)], *(
            _usd(row[c], row["cost_usd"]) if c in money else
            examples.get(str(label), str(int(row[c]))) if c == "examples" else
            str(int(row[c])) if not c.startswith("mean_") else _num(row[c]) for c in columns)])
    tables.append(("Per example (tokens and calls: every recorded example, as in summary.json; "
                   "latency: scored examples)",
                   ["run", *(money.get(c, c.removeprefix("mean_").replace("_", " "))
                             for c in columns)], rows))
    return tables


def _runs_list(result: Any) -> list[str]:
    from tooleval_agents.results.compare import short_labels

    short = short_labels(result.runs)
    return [f"{short[r.label]}: {r.path or r.config.experiment}" for r in result.runs]


def _notes(result: Any) -> list[str]:
    from tooleval_agents.results.compare import short_labels

    short = sorted(short_labels(result.runs).items(), key=lambda kv: -len(kv[0]))
    out = []
    for note in result.notes:
        for long, name in short:
            note = note.replace(long, name)
        out.append(note)
    return out


def markdown_comparison(result: Any) -> str:
    """The comparison as Markdown tables, the runs listed under them."""
    lines: list[str] = []
    for title, header, rows in _tables(result):
        lines += [f"**{title}**", "", "| " + " | ".join(header) + " |",
                  "|" + "|".join("---" if i == 0 or h in ("a", "b", "metric") else "---:"
                                 for i, h in enumerate(header)) + "|",
                  *("| " + " | ".join(row) + " |" for row in rows), ""]
    lines += ["Runs:", "", *(f"- {line}" for line in _runs_list(result))]
    lines += ["", *(f"- {note}" for note in _notes(result))] if result.notes else []
    return "\n".join(lines) + "\n"


def show_comparison(result: Any) -> None:
    """A :class:`~tooleval_agents.results.compare.Comparison` as tables: metric x run, the paired
    differences with their CIs, cost per example; runs named by what differs between them,
    their full names listed once under the tables."""
    for title, header, rows in _tables(result):
        table = Table(title=shown(title))
        for i, name in enumerate(header):
            table.add_column(shown(name), justify="left" if i == 0 or name in ("a", "b",
                                                                               "metric")
                             else "right")
        for row in rows:
            table.add_row(*map(shown, row))
        console.print(table)
    console.print("runs:", highlight=False)
    for line in _runs_list(result):
        console.print(shown(f"  {line}"), highlight=False)
    for note in _notes(result):
        console.print(f"[dim]- {shown(note)}[/]", highlight=False)
