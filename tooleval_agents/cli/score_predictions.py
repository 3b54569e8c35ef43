"""``tooleval score BENCH --predictions FILE``: answers produced anywhere, scored by the
benchmark's scorer. Given to every benchmark that adds no ``score`` command of its own."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from tooleval_agents.cli_base import (
    DataDirOption,
    JsonOption,
    console,
    err_console,
    handle_errors,
    print_json,
)
from tooleval_agents.contracts import format_metric
from tooleval_agents.datadir import resolve_data_dir
from tooleval_agents.errors import ToolevalError
from tooleval_agents.predictions import score_predictions
from tooleval_agents.registry import get_benchmark, resolve_split
from tooleval_agents.rescore import parse_options


def generic_score(name: str) -> Callable[..., None]:
    """The ``score`` command of benchmark ``name``."""

    def command(
        predictions: Annotated[Path, typer.Option(
            "--predictions", help="Answers, one per example in order: a JSON array or JSON "
            "Lines of answer texts or of {\"index\", \"output\"} objects.",
            show_default=False)],
        task: Annotated[str | None, typer.Option(
            "--task", help="Task (default: the benchmark's only task).")] = None,
        subset: Annotated[str | None, typer.Option(
            "--subset", "--lang", "--category",
            help="Subset: a language or a category (default: the only one).")] = None,
        option: Annotated[list[str] | None, typer.Option(
            "--option", "-O", help="Scoring option KEY=VALUE (repeatable).")] = None,
        data_dir: DataDirOption = None,
        json_out: JsonOption = False,
    ) -> None:
        try:
            bench = get_benchmark(name)
            split = resolve_split(bench, task, subset)
            report = score_predictions(bench, split, predictions, resolve_data_dir(data_dir),
                                       options=parse_options(option or []))
        except (ToolevalError, OSError, KeyError, ValueError) as exc:
            raise handle_errors(exc) from None
        missing = report.counts.get("missing", 0)
        if missing:
            err_console.print(f"[yellow]warning:[/] {missing} of {report.counts['examples']} "
                              "examples have no answer in the file: scored as empty answers",
                              highlight=False)
        if json_out:
            print_json(report.model_dump(mode="json"))
            return
        table = Table(title=escape(f"{report.split}: {predictions}"))
        table.add_column("metric")
        table.add_column("value", justify="right")
        for metric, value in report.metrics.items():
            table.add_row(escape(metric), format_metric(value, report.counts["examples"]))
        console.print(table)
        console.print(", ".join(f"{k}={v}" for k, v in report.counts.items()), markup=False,
                      highlight=False)

    command.__doc__ = (f"Score {name} answers produced anywhere with the benchmark's scorer "
                       "(an example without an answer counts as an empty answer).")
    return command
