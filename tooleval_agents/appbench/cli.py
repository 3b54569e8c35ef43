"""AppBench's own command: ``tooleval score appbench`` re-scores AppBench answers produced
anywhere. Registered by :meth:`AppBenchBenchmark.add_commands`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.table import Table

from tooleval_agents.appbench.loaders import load_category
from tooleval_agents.appbench.names import Category
from tooleval_agents.appbench.records import AppBenchSample
from tooleval_agents.cli.base import (
    FLAG,
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
from tooleval_agents.data.jsonio import parse_json
from tooleval_agents.errors import DataFormatError, ToolevalError
from tooleval_agents.registry import get_benchmark
from tooleval_agents.terminal import shown

if TYPE_CHECKING:  # annotations only: the metrics load when the command runs
    from tooleval_agents.evaluators.appbench.scoring import AppBenchReport


def _items(path: Path) -> tuple[list[Any], list[int] | None]:
    """A JSON array, else JSON Lines (one value per non-blank line); with the 1-based line of
    each item for JSON Lines (``None`` for an array)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataFormatError(path, f"not UTF-8 text ({exc.reason})") from exc
    try:
        whole = parse_json(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, list):
        return whole, None
    items, lines = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                items.append(parse_json(line))
            except json.JSONDecodeError as exc:
                raise DataFormatError(path, f"neither a JSON array nor JSON Lines "
                                      f"({exc.msg})", line=number) from exc
            lines.append(number)
    return items, lines


def read_predictions(path: Path, n_samples: int) -> tuple[list[str | None], int]:
    """Answers aligned with the test file, and how many indices were missing.

    Items are raw output strings, or ``{"index", "output"}`` objects (``index`` optional: without
    it the position counts). A ``null`` output is a failed inference. An index the file does not
    give is an empty answer, never a dropped sample.

    Raises:
        DataFormatError: bad JSON, an item of another shape, an object without ``output`` (it
            would pass for a failed inference and be dropped by ``--drop-errors``), a bad or
            repeated index, or a positional file whose length differs from the test file.
    """
    items, lines = _items(path)
    indexed = [isinstance(it, dict) and "index" in it for it in items]
    if any(indexed) and not all(indexed):
        raise DataFormatError(path, "mix of items with and without 'index'")
    if not any(indexed) and len(items) != n_samples:
        raise DataFormatError(path, f"{len(items)} predictions for {n_samples} test samples: "
                              "a file without indices must have one answer per sample, in order")
    outputs: list[str | None] = [""] * n_samples
    seen: set[int] = set()
    for pos, item in enumerate(items):
        if isinstance(item, dict):
            if "output" not in item:
                raise DataFormatError(
                    path, f"item {pos} has no 'output' key (keys: {sorted(item)[:8]}); write "
                    "the answer under 'output', or \"output\": null for a failed inference",
                    line=lines[pos] if lines is not None else None)
            output = item["output"]
            index = item.get("index", pos)
        else:
            output, index = item, pos
        if output is not None and not isinstance(output, str):
            raise DataFormatError(path, f"item {pos}: 'output' must be a string or null, "
                                  f"not {type(output).__name__}")
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < n_samples:
            raise DataFormatError(path, f"item {pos}: index {index!r} is not in "
                                  f"0..{n_samples - 1}")
        if index in seen:
            raise DataFormatError(path, f"item {pos}: index {index} appears twice")
        seen.add(index)
        outputs[index] = output
    return outputs, n_samples - len(seen)


def appbench(
    category: Annotated[Category, typer.Option("--category", help="ss, sm, ms or mm.")],
    predictions: Annotated[list[Path] | None, typer.Option(
        "--predictions", help="JSON array or JSON Lines of output strings or "
        "{index, output} objects, aligned with the test file." + PREDICTIONS_HELP,
        show_default=False)] = None,
    more: FilesArgument = None,
    scoring: Annotated[Literal["paper", "strict"] | None, typer.Option(
        "--scoring", help="strict (default): call-by-call; paper: the official "
        "evaluation.py bug for bug.", show_default=False)] = None,
    drop_errors: Annotated[bool, typer.Option(
        "--drop-errors", metavar=FLAG,
        help="paper only: leave out samples whose output is null, as the "
        "official run did (default: they score as empty answers).")] = False,
    graph: Annotated[bool | None, typer.Option(
        "--graph/--no-graph", metavar=FLAG,
        help="the graph metrics and robust parse counts (default: with "
        "strict only).")] = None,
    data_dir: DataDirOption = None,
    progress: ProgressOption = None,
    json_out: JsonOption = False,
) -> None:
    """Score AppBench answers: F1 app/API, success, EM, error analysis and graph metrics.
    Several files or a glob: one result per file, all of --category."""
    from tooleval_agents.evaluators.appbench.scoring import MAIN_METRICS, score_appbench

    scoring = scoring or "strict"
    paths, many = prediction_files(predictions, more)
    samples: list[AppBenchSample] = []  # read once for every file

    def run(path: Path) -> tuple[AppBenchReport, dict[str, int], dict[str, Any]]:
        if not samples:
            bench = get_benchmark("appbench")
            where = data_or_samples(bench, [bench.split("plan", category)], data_dir)
            samples.extend(load_category(where, category))
        outputs, missing = read_predictions(path, len(samples))
        report = score_appbench(samples, outputs, scoring=scoring, drop_errors=drop_errors,
                                category=category, graph=graph)
        counts = {**report.counts, "missing_answers": missing}
        return report, counts, {"benchmark": "appbench", "category": category,
                                "scoring": scoring, "metrics": report.metrics,
                                "counts": counts,
                                "by_scale": [c.model_dump() for c in report.by_scale]}

    if many:
        def score_one(path: Path) -> ScoredFile:
            report, counts, summary = run(path)
            missing = counts["missing_answers"]
            return ScoredFile(
                labels={"category": category}, json=summary, n=len(samples),
                metrics={m: report.metrics[m] for m in MAIN_METRICS if m in report.metrics},
                warnings=[f"{missing} of {len(samples)} samples have no answer in the file: "
                          "scored as empty answers"] if missing else [])

        score_files(paths, score_one, title=f"AppBench ({scoring} scoring)",
                    json_out=json_out, progress=progress)
        return
    try:
        report, counts, summary = run(paths[0])
    except (ToolevalError, OSError, ValueError) as exc:
        raise handle_errors(exc) from exc
    missing = counts["missing_answers"]
    if missing:  # kept in every denominator as empty answers: say so
        err_console.print(f"[yellow]warning:[/] {missing} of {len(samples)} samples have no "
                          "answer in the file: scored as empty answers", highlight=False)
    if json_out:
        print_json(summary)
        return
    table = Table(title=shown(f"AppBench {category.upper()} ({scoring} scoring)"))
    table.add_column("metric")
    table.add_column("value", justify="right")
    for name, value in report.metrics.items():
        table.add_row(shown(name), format_metric(value, len(samples)))
    console.print(table)
    console.print(shown(", ".join(f"{k}={v}" for k, v in counts.items())))
