"""``tooleval data fetch`` and ``tooleval data verify``: download pinned upstream files and
check local copies against the manifest (each benchmark's pinned sources)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from tooleval_agents.cli.base import (
    FLAG,
    DataDirOption,
    JsonOption,
    ProgressOption,
    console,
    data_app,
    err_console,
    fail,
    handle_errors,
    print_json,
)
from tooleval_agents.data.datadir import resolve_data_dir
from tooleval_agents.data.fetch import (
    BASE_URL_ENV,
    RETRIES,
    SourceName,
    load_manifest,
    source_manifest,
    verify,
)
from tooleval_agents.errors import ToolevalError
from tooleval_agents.terminal import shown

SourceArgument = Annotated[
    SourceName, typer.Argument(help="Data source: a pinned upstream repository of the manifest "
                               "(`tooleval data info` lists them; a wrong name lists the choices).",
                               show_default=False)
]
PredictionsOption = Annotated[
    bool,
    typer.Option("--with-predictions/--no-predictions", metavar=FLAG,
                 help="Also the authors' model outputs, for sources that publish them (the "
                      "reproduction uses them)."),
]


def _groups(source: str, with_predictions: bool) -> list[str]:
    known = load_manifest().sources
    if source not in known:  # a usage error, like any other bad argument
        raise fail(f"unknown data source {source!r}; choose one of {', '.join(known)}", 2)
    entry = source_manifest(source)
    groups = list(entry.default_groups)
    if with_predictions and "predictions" in entry.groups:
        groups.append("predictions")
    elif with_predictions:
        err_console.print(shown(f"note: {source} has no predictions; --with-predictions "
                                "ignored"))
    return groups


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


@data_app.command("fetch")
def fetch_command(
    source: SourceArgument,
    data_dir: DataDirOption = None,
    base_url: Annotated[str | None, typer.Option(
        "--base-url",
        help=f"URL template with {{path}} (and {{repo}} {{commit}} {{source}}), or a mirror root "
             f"served as `<root>/<source>/<path>`. Else ${BASE_URL_ENV}, else GitHub raw content "
             f"at the pinned commit.", show_default=False)] = None,
    with_predictions: PredictionsOption = False,
    include: Annotated[list[str] | None, typer.Option(
        "--include", help="Only files whose upstream path matches this glob, predictions included "
                          "(repeatable).",
        show_default=False)] = None,
    retries: Annotated[int, typer.Option(help="Retries after a timeout, reset or HTTP 5xx.",
                                         min=0)] = RETRIES,
    progress: ProgressOption = None,
    json_out: JsonOption = False,
) -> None:
    """Download the pinned upstream files of SOURCE and verify their sha256.

    Files already present with the right checksum are skipped: re-running resumes a fetch.
    """
    resolved = resolve_data_dir(data_dir)
    # An --include glob picks from every group (e.g. --include 'predictions/English-dataset/*').
    try:
        groups = None if include else _groups(source, with_predictions)
        from tooleval_agents.data.download import fetch  # deferred: the HTTP client

        report = fetch(source, resolved, base_url=base_url, groups=groups, include=include,
                       progress=(sys.stderr.isatty() if progress is None else progress)
                       and not json_out, retries=retries,
                       console=err_console)
    except (ToolevalError, OSError) as exc:
        raise handle_errors(exc) from exc
    if json_out:
        print_json(report.model_dump(mode="json"))
        return
    for f in report.files:
        if f.status != "present":
            console.print(shown(f"{f.status:>10}  {f.path}  ({_mb(f.size)})"), soft_wrap=True,
                          highlight=False)
    present = len(report.files) - len(report.transferred)
    console.print(shown(
        f"{source}: {len(report.files)} files checked, {len(report.transferred)} downloaded "
        f"({_mb(report.bytes_downloaded)}), {present} already present."), highlight=False)
    console.print(shown(f"in {report.root}  ({report.repo} @ {report.commit[:12]})"),
                  soft_wrap=True, highlight=False)
    console.print(f"licence: {shown(source_manifest(source).licence)}", soft_wrap=True,
                  highlight=False)


@data_app.command("verify")
def verify_command(
    source: SourceArgument,
    data_dir: DataDirOption = None,
    with_predictions: PredictionsOption = False,
    json_out: JsonOption = False,
) -> None:
    """Check the local files of SOURCE against the pinned sizes and sha256 sums.

    Every pinned file present is checked. Missing files count only in the groups asked for.

    Exit status 1 when a file differs or a required file is missing.
    """
    resolved: Path = resolve_data_dir(data_dir)
    try:
        report = verify(source, resolved, groups=_groups(source, with_predictions))
    except (ToolevalError, OSError) as exc:
        raise handle_errors(exc) from exc
    problems = report.problems
    if json_out:
        print_json({**report.model_dump(mode="json"), "ok": report.ok})
    else:
        ok = sum(f.status == "ok" for f in report.files)
        if problems:
            table = Table(title=shown(f"{source}: files that do not match the manifest"))
            for col in ("path", "status", "expected", "found"):
                table.add_column(col, overflow="fold")
            for f in problems:
                found = (f.actual_sha256 if f.status == "wrong_sha256"
                         else f"{f.actual_size} bytes" if f.actual_size is not None else "-")
                expected = f.expected_sha256 if f.status == "wrong_sha256" \
                    else f"{f.expected_size} bytes"
                table.add_row(shown(f.path), f.status, shown(expected), shown(found))
            console.print(table)
        skipped = sum(f.status == "missing" and not f.required for f in report.files)
        console.print(shown(f"{source}: {ok} ok, {len(problems)} with problems, {skipped} "
                            f"optional absent; in {report.root}"), soft_wrap=True, highlight=False)
    if problems:
        raise fail(f"{source} data under {report.root} does not match the manifest; re-download "
                   f"with: tooleval data fetch {source} --data-dir {resolved}"
                   + (" --with-predictions" if with_predictions else ""))
