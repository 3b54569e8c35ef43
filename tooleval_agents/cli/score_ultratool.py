"""``tooleval score ultratool``: re-score UltraTool answers produced anywhere."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.markup import escape
from rich.table import Table

from tooleval_agents.cli.apps import (
    DataDirOption,
    JsonOption,
    console,
    fail,
    handle_errors,
    print_json,
    score_app,
)
from tooleval_agents.datadir import resolve_data_dir
from tooleval_agents.errors import ToolevalError
from tooleval_agents.records import Lang
from tooleval_agents.ultratool.records import UltraToolTask


@score_app.command("ultratool")
def ultratool(
    task: Annotated[UltraToolTask, typer.Option("--task", help="The UltraTool dimension.")],
    lang: Annotated[Lang, typer.Option("--lang", help="en or zh.")],
    predictions: Annotated[Path, typer.Option(
        "--predictions", help="The published format (JSON Lines of {data, \"init output\"}), "
        "JSON Lines of {index, output}, or a JSON array of output strings; aligned with the "
        "test set.")],
    judgments: Annotated[Path | None, typer.Option(
        "--judgments", help="planning / tool_creation: recorded judge outputs to replay "
        "(e.g. the published eval/planning_eval.json).")] = None,
    parser: Annotated[Literal["robust", "official"], typer.Option(
        "--parser", help="robust (default): safe parsing with tokenizer-aware repairs; "
        "official: the paper's post-processing, defects included, to compare with its "
        "tables.")] = "robust",
    data_dir: DataDirOption = None,
    json_out: JsonOption = False,
) -> None:
    """Score UltraTool answers: awareness / selection accuracy (global, local), tool-usage
    Levenshtein, JSON-format rate, error kinds; planning and tool creation via the judge."""
    from evaluators.ultratool_scoring import load_predictions, score_task
    from tooleval_agents.ultratool.loaders import load_task

    try:
        records = load_task(resolve_data_dir(data_dir), task, lang)
        outputs = load_predictions(predictions, records)
        report = score_task(task, records, outputs, lang=lang, parser=parser,
                            judgments=judgments)
    except (ToolevalError, OSError, ValueError) as exc:
        raise handle_errors(exc) from exc
    except NotImplementedError as exc:
        raise fail(str(exc)) from exc
    if json_out:
        print_json(report.summary())
        return
    table = Table(title=f"UltraTool {task} ({lang})")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for name, value in report.metrics.items():
        table.add_row(escape(name), f"{value:.2f}")
    console.print(table)
    counts = report.counts.model_dump()
    console.print(f"parser: {report.parser}; " + ", ".join(
        f"{k}: {v}" for k, v in counts.items() if v not in ({}, 0)), markup=False,
        highlight=False)
    for note in report.notes:
        console.print(f"[dim]{escape(note)}[/]")
