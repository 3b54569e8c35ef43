"""``tooleval score BENCH --predictions FILE``: answers produced anywhere, scored by the
benchmark's scorer. Given to every benchmark that adds no ``score`` command of its own.
Several files (repeated ``--predictions``, a glob): one result each, see
:mod:`tooleval_agents.cli.prediction_files`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from tooleval_agents.cli.base import (
    DataDirOption,
    JsonOption,
    ProgressOption,
    console,
    data_or_samples,
    err_console,
    handle_errors,
    print_json,
)
from tooleval_agents.cli.prediction_files import (
    PREDICTIONS_HELP,
    FilesArgument,
    ScoredFile,
    prediction_files,
    score_files,
)
from tooleval_agents.contracts import format_metric
from tooleval_agents.data.predictions import PredictionReport, score_predictions
from tooleval_agents.errors import ToolevalError
from tooleval_agents.registry import get_benchmark, resolve_split
from tooleval_agents.results.rescore import parse_options
from tooleval_agents.terminal import shown


def _missing_warning(report: PredictionReport) -> str | None:
    missing = report.counts.get("missing", 0)
    return (f"{missing} of {report.counts['examples']} examples have no answer in the file: "
            "scored as empty answers") if missing else None


def generic_score(name: str) -> Callable[..., None]:
    """The ``score`` command of benchmark ``name``."""

    def command(
        predictions: Annotated[list[Path] | None, typer.Option(
            "--predictions", help="Answers, one per example in order: a JSON array or JSON "
            "Lines of answer texts or of {\"index\", \"output\"} objects." + PREDICTIONS_HELP,
            show_default=False)] = None,
        more: FilesArgument = None,
        task: Annotated[str | None, typer.Option(
            "--task", help="Task (default: the benchmark's only task).")] = None,
        subset: Annotated[str | None, typer.Option(
            "--subset", "--lang", "--category",
            help="Subset: a language or a category (default: the only one).")] = None,
        option: Annotated[list[str] | None, typer.Option(
            "--option", "-O", help="Scoring option KEY=VALUE (repeatable).")] = None,
        data_dir: DataDirOption = None,
        progress: ProgressOption = None,
        json_out: JsonOption = False,
    ) -> None:
        paths, many = prediction_files(predictions, more)
        try:
            bench = get_benchmark(name)
            split = resolve_split(bench, task, subset)
            options = parse_options(option or [])
            where = data_or_samples(bench, [split], data_dir)
        except (ToolevalError, OSError, KeyError, ValueError) as exc:
            raise handle_errors(exc) from None
        if many:
            def score_one(path: Path) -> ScoredFile:
                report = score_predictions(bench, split, path, where, options=options)
                headline = [m for m in report.headline if m in report.metrics]
                warning = _missing_warning(report)
                return ScoredFile(
                    labels={"split": report.split}, json=report.model_dump(mode="json"),
                    metrics={m: report.metrics[m] for m in headline} if headline
                    else report.metrics,
                    n=report.counts["examples"], warnings=[warning] if warning else [])

            score_files(paths, score_one, title=name, json_out=json_out, progress=progress)
            return
        try:
            report = score_predictions(bench, split, paths[0], where, options=options)
        except (ToolevalError, OSError, KeyError, ValueError) as exc:
            raise handle_errors(exc) from None
        warning = _missing_warning(report)
        if warning:
            err_console.print(f"[yellow]warning:[/] {shown(warning)}", highlight=False)
        if json_out:
            print_json(report.model_dump(mode="json"))
            return
        table = Table(title=shown(f"{report.split}: {paths[0]}"))
        table.add_column("metric")
        table.add_column("value", justify="right")
        for metric, value in report.metrics.items():
            table.add_row(shown(metric), format_metric(value, report.counts["examples"]))
        console.print(table)
        console.print(shown(", ".join(f"{k}={v}" for k, v in report.counts.items())),
                      highlight=False)

    command.__doc__ = (f"Score {name} answers produced anywhere with the benchmark's scorer "
                       "(an example without an answer counts as an empty answer); several "
                       "files or a glob: one result per file.")
    return command
