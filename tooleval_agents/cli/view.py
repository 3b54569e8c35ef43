"""``tooleval view [RUN_OR_ROOT...] [--out DIR] [--open] [--serve]``: the runs as a static site
(see :mod:`tooleval_agents.viewer`)."""

from __future__ import annotations

import time
import webbrowser
from pathlib import Path
from typing import Annotated

import typer

from tooleval_agents.cli.base import FLAG, JsonOption, app, console, handle_errors, print_json
from tooleval_agents.cli.compare import runs_root
from tooleval_agents.errors import NotARunError, ToolevalError
from tooleval_agents.terminal import shown

RUNS_ROOT = Path("runs")
"""Where ``tooleval run`` writes by default, read when no run is named."""


@app.command("view")
def view(
    runs: Annotated[list[Path] | None, typer.Argument(
        help="Run directories, or folders holding runs (searched at any depth); default: "
        "runs/, where tooleval run writes.", show_default=False)] = None,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Folder to write the site into (its index.html, assets and data/ are "
        "replaced, nothing else; default: site/ in the folder the runs are in, e.g. "
        "runs/site/).", show_default=False)] = None,
    open_: Annotated[bool, typer.Option(
        "--open", metavar=FLAG, help="Open the site in the default web browser.")] = False,
    serve: Annotated[bool, typer.Option(
        "--serve", metavar=FLAG,
        help="Serve the site on 127.0.0.1 and write it again whenever a run "
        "changes; while a run is going, its progress shows and the run list and run pages "
        "reload themselves; Ctrl-C stops.")] = False,
    port: Annotated[int, typer.Option(
        "--port", help="Port for --serve (0: any free one).")] = 8765,
    every: Annotated[float, typer.Option(
        "--every", help="Seconds between checks for changed runs with --serve.")] = 3.0,
    json_out: JsonOption = False,
) -> None:
    """Write a static site of the runs -- every example with its verdict, predicted vs gold
    calls, input, the prompts sent, raw outputs, scores with comments and trace; runs side by
    side -- that opens from file:// with no network: open OUT/index.html."""
    from tooleval_agents.viewer import build_site

    paths = runs or [RUNS_ROOT]
    if not runs and not RUNS_ROOT.is_dir():
        raise handle_errors(FileNotFoundError(
            f"no {RUNS_ROOT}/ folder here (where tooleval run writes): name run directories "
            "or folders of runs, e.g. tooleval view path/to/runs"))
    for run in paths:  # a mistyped path is a usage error, not a site without it
        if not run.exists():
            raise handle_errors(NotARunError(f"{run} is not a run directory or a folder of "
                                             "runs (no such path)"))
    target = out if out is not None else runs_root(paths) / "site"
    if serve:
        _serve(paths, target, port, every, open_)
        return
    try:
        site = build_site(paths, target)
    except (ToolevalError, OSError, KeyError, ValueError) as exc:
        raise handle_errors(exc) from exc
    if json_out:
        print_json({"index": str(site.index), "runs": site.runs, "examples": site.examples})
    else:
        console.print(shown(f"wrote {site.runs} run(s), {site.examples} examples: open "
                            f"{site.index}"), highlight=False, soft_wrap=True)
    if open_:
        webbrowser.open(site.index.resolve().as_uri())


def _serve(paths: list[Path], out: Path, port: int, every: float, open_: bool) -> None:
    from tooleval_agents.viewer.serve import LiveSite

    try:
        live = LiveSite(paths, out, port, every)
    except (ToolevalError, OSError, KeyError, ValueError) as exc:
        raise handle_errors(exc) from exc
    console.print(shown(f"serving {live.site.runs} run(s), {live.site.examples} examples at "
                        f"{live.url} (written again when a run changes; Ctrl-C stops)"),
                  highlight=False, soft_wrap=True)
    if open_:
        webbrowser.open(live.url)
    try:
        while True:
            time.sleep(max(every, 0.2))
            try:
                if live.poll():
                    console.print(shown(f"rewrote the site: {live.site.runs} run(s), "
                                        f"{live.site.examples} examples"), highlight=False)
            except (ToolevalError, OSError, KeyError, ValueError) as exc:
                # a run half-written at this instant: say so, try again next time
                console.print(shown(f"not rewritten this time: {exc}"), highlight=False)
    except KeyboardInterrupt:
        pass
    finally:
        live.close()
