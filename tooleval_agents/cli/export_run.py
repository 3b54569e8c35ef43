"""``tooleval export run RUN --format inspect --out FILE``: a finished run in another tool's
format (:mod:`tooleval_agents.results.inspect_log`). A core command: it reads only the run
directory, whatever the benchmark."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Literal

import typer

from tooleval_agents.cli.base import JsonOption, console, export_app, handle_errors, print_json
from tooleval_agents.errors import ToolevalError
from tooleval_agents.terminal import shown


@export_app.command("run")
def export_run(
    run: Annotated[Path, typer.Argument(help="A run directory (its config.json, examples.jsonl "
                                         "and summary.json).", show_default=False)],
    out: Annotated[Path, typer.Option(
        "--out", help="Log file to write: .eval (inspect's own format) or .json.",
        show_default=False)],
    format_: Annotated[Literal["inspect"], typer.Option(
        "--format", help="inspect: an inspect_ai eval log that `inspect view` opens (needs "
        "the inspect extra).")] = "inspect",
    json_out: JsonOption = False,
) -> None:
    """Write a finished run as an eval log of another tool: every example with its input,
    gold answer, answer, messages, model calls, tokens and scores, and the run's metrics."""
    from tooleval_agents.results.inspect_log import export_inspect

    started = time.perf_counter()
    try:
        n, path = export_inspect(run, out)
    except (ToolevalError, OSError, KeyError, ValueError) as exc:
        raise handle_errors(exc) from exc
    seconds = round(time.perf_counter() - started, 2)
    if json_out:
        print_json({"out": str(path), "format": format_, "samples": n, "seconds": seconds})
    else:
        console.print(shown(f"wrote {n} samples of {run} as an {format_} log to {path} "
                            f"({seconds} s): inspect view --log-dir {path.parent}"),
                      highlight=False, soft_wrap=True)
