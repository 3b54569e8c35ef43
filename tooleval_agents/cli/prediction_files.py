"""Several prediction files in one ``tooleval score BENCH`` call.

Every benchmark's ``score`` command takes ``--predictions`` more than once, as a glob pattern
(quoted: ``--predictions 'preds/*/*.json'``) or both; paths after the options are taken too, so
a pattern the shell expanded works as well. One plain path keeps the single-file output as it
always was. Otherwise the files are scored one after the other in this process (one start-up,
and a command can load each test set once) and each gets one row of the human output or one
entry of the ``--json`` list, in the order given (a pattern's matches sorted).

A bad argument -- a pattern that matches no file, a missing file, a directory -- stops before
anything is scored (exit 2). A file that fails to score (malformed, another task's answers) is
reported on its own row and the other files are still scored; the exit code is then 1 and the
last line names the files that failed.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from tooleval_agents.cli.base import DEBUG, console, err_console, error_text, fail, print_json
from tooleval_agents.contracts import Metrics, format_metric
from tooleval_agents.errors import ToolevalError
from tooleval_agents.terminal import shown

PREDICTIONS_HELP = (" Repeatable; a glob pattern (quoted) scores every file it matches, one "
                    "result per file.")
"""Appended to each ``score`` command's own ``--predictions`` help."""

FilesArgument = Annotated[list[Path] | None, typer.Argument(
    help="More prediction files, e.g. a glob the shell expanded after --predictions.",
    show_default=False)]

_GLOB = frozenset("*?[")
# What scoring a file raises for a bad file or option: its message is the row's error. Anything
# else is a bug, reported the same way (one file's bug must not lose the others' results) but
# with its type, and raised under --debug.
_EXPECTED = (ToolevalError, OSError, KeyError, ValueError, NotImplementedError)


@dataclass
class ScoredFile:
    """One file's result, as a ``score`` command hands it to :func:`score_files`."""

    labels: dict[str, str]
    """What the file was scored against, e.g. ``{"task": "tool_usage", "lang": "en"}``: a
    column each, or in the table's title when every row of the table has the same value."""
    json: dict[str, Any]
    """The command's single-file ``--json`` object."""
    metrics: Metrics
    """The table's columns for this file (the headline metrics when there are many)."""
    n: int | None = None
    """Examples scored: the denominator an ``n/a`` cell shows."""
    warnings: list[str] = field(default_factory=list)
    """Printed on stderr, as the single-file command does (e.g. answers missing)."""
    notes: list[str] = field(default_factory=list)
    """Printed after the tables (human output only: the JSON entry has them)."""


@dataclass
class _Outcome:
    path: Path
    scored: ScoredFile | None = None
    error: str | None = None


def prediction_files(options: Sequence[Path] | None,
                     extra: Sequence[Path] | None = None) -> tuple[list[Path], bool]:
    """The files named by ``--predictions`` values and extra paths (each a path or a glob
    pattern), in order, each once; and whether the call is for several files (more than one
    value, or a pattern: its result shape must not depend on how many files a pattern matched
    today).

    Raises:
        typer.Exit: (code 2, the error printed) no value, a pattern without a match, a path
            that is not a file.
    """
    values = [*(options or []), *(extra or [])]
    if not values:
        raise fail("give --predictions FILE (repeatable, or a quoted glob pattern)", code=2)
    files: list[Path] = []
    seen: set[Path] = set()
    for value in values:
        text = os.path.expanduser(str(value))
        if Path(text).is_file():  # a literal name wins, even one with glob characters
            matched = [Path(text)]
        elif _GLOB & set(text):
            matched = sorted(Path(p) for p in glob.glob(text, recursive=True)
                             if Path(p).is_file())
            if not matched:
                raise fail(f"no file matches --predictions {value}", code=2)
        elif Path(text).is_dir():
            raise fail(f"--predictions {value} is a directory: give files or a quoted glob "
                       f"pattern, e.g. '{value}/*.json'", code=2)
        else:
            raise fail(f"--predictions {value}: no such file", code=2)
        for path in matched:
            key = path.resolve()
            if key not in seen:
                seen.add(key)
                files.append(path)
    return files, len(values) > 1 or any(_GLOB & set(str(v)) for v in values)


def _error(exc: Exception, path: Path) -> str:
    """An exception as the one line of ``path``'s row (without the path, which the row
    shows: ``FILE:3: bad`` -> ``line 3: bad``)."""
    text = error_text(exc) if isinstance(exc, _EXPECTED) else f"{type(exc).__name__}: {exc}"
    line = (text.strip().splitlines() or [type(exc).__name__])[0][:500]
    if line.startswith(f"{path}:"):
        rest = line[len(str(path)) + 1:]
        number, sep, after = rest.partition(":")
        line = f"line {number}:{after}" if sep and number.isdigit() else rest.strip()
    return line


def _score_all(paths: Sequence[Path], score_one: Callable[[Path], ScoredFile],
               names: dict[Path, str], show_progress: bool) -> list[_Outcome]:
    outcomes: list[_Outcome] = []
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err_console, disable=not show_progress,
                  transient=True) as bar:
        task = bar.add_task("scoring", total=len(paths))
        for path in paths:
            bar.update(task, description=f"scoring {shown(names[path])}")
            try:
                outcomes.append(_Outcome(path, scored=score_one(path)))
            except Exception as exc:
                if DEBUG["on"] and not isinstance(exc, _EXPECTED):
                    raise
                outcomes.append(_Outcome(path, error=_error(exc, path)))
            bar.advance(task)
    return outcomes


def _names(paths: Sequence[Path]) -> tuple[dict[Path, str], str]:
    """Each file's name relative to the folder all of them are in (rows stay narrow), and that
    folder."""
    absolute = [os.path.abspath(p) for p in paths]
    root = os.path.commonpath(absolute)
    if len(paths) == 1 or root in absolute:
        root = os.path.dirname(root)
    return {p: os.path.relpath(a, root) for p, a in zip(paths, absolute, strict=True)}, root


def _tables(outcomes: Sequence[_Outcome], names: dict[Path, str], title: str) -> list[Table]:
    """One table per set of metrics (files of one task side by side), a row per file; then
    the failed files, a row each with its error."""
    groups: dict[tuple[str, ...], list[ScoredFile]] = {}
    files: dict[tuple[str, ...], list[str]] = {}
    for o in outcomes:
        if o.scored is not None:
            groups.setdefault(tuple(o.scored.metrics), []).append(o.scored)
            files.setdefault(tuple(o.scored.metrics), []).append(names[o.path])
    tables = []
    for metrics, rows in groups.items():
        keys = list(dict.fromkeys(k for s in rows for k in s.labels))
        same = [k for k in keys if len({s.labels.get(k) for s in rows}) == 1]
        varying = [k for k in keys if k not in same]
        heading = " ".join([title, *(rows[0].labels[k] for k in same)])
        table = Table(title=shown(f"{heading}: {len(rows)} file(s)"))
        # fold, never cut: the end of a path or a metric's name is what tells rows apart
        for column in ("predictions", *varying):
            table.add_column(shown(column), overflow="fold")
        for metric in metrics:
            table.add_column(shown(metric), justify="right", overflow="fold")
        for name, s in zip(files[metrics], rows, strict=True):
            table.add_row(shown(name), *(shown(s.labels.get(k, "")) for k in varying),
                          *(format_metric(s.metrics[m], s.n) for m in metrics))
        tables.append(table)
    failed = [o for o in outcomes if o.error is not None]
    if failed:
        table = Table(title=shown(f"{title}: {len(failed)} file(s) not scored"))
        table.add_column("predictions", overflow="fold")
        table.add_column("error", overflow="fold")
        for o in failed:
            table.add_row(shown(names[o.path]), shown(o.error or ""))
        tables.append(table)
    return tables


def score_files(paths: Sequence[Path], score_one: Callable[[Path], ScoredFile], *,
                title: str, json_out: bool, progress: bool | None) -> None:
    """Score each file with ``score_one`` and print one result per file (a table row, or an
    entry of the ``--json`` list: ``predictions``, ``error`` and the single-file object).

    Raises:
        typer.Exit: (code 1) some file failed; the error names them.
    """
    show = err_console.is_terminal if progress is None else progress
    names, root = _names(paths)
    outcomes = _score_all(paths, score_one, names, show)
    for o in outcomes:
        for warning in o.scored.warnings if o.scored is not None else ():
            err_console.print(f"[yellow]warning:[/] {shown(f'{o.path}: {warning}')}",
                              highlight=False)
    if json_out:
        print_json([{"predictions": str(o.path), "error": o.error,
                     **(o.scored.json if o.scored is not None else {})} for o in outcomes])
    else:
        console.print(shown(f"predictions in {root}"), highlight=False)
        for table in _tables(outcomes, names, title):
            console.print(table)
        notes: dict[str, list[str]] = {}  # the same note of many files is said once
        for o in outcomes:
            for note in o.scored.notes if o.scored is not None else ():
                notes.setdefault(note, []).append(names[o.path])
        for note, where in notes.items():
            text = f"{note} ({', '.join(where)})"
            console.print(f"[dim]{shown(text)}[/]", highlight=False)
    failed = [str(o.path) for o in outcomes if o.error is not None]
    if not json_out:
        console.print(f"scored {len(outcomes) - len(failed)} of {len(outcomes)} files",
                      highlight=False)
    if failed:
        raise fail(f"{len(failed)} of {len(outcomes)} files failed: {', '.join(failed)}")
