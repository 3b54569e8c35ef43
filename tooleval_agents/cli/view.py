"""``tooleval view RUN_OR_ROOT... [--out DIR]``: the runs as a static site (see
:mod:`tooleval_agents.viewer`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tooleval_agents.cli.base import JsonOption, app, console, handle_errors, print_json
from tooleval_agents.cli.compare import runs_root
from tooleval_agents.errors import NotARunError, ToolevalError
from tooleval_agents.terminal import shown


@app.command("view")
def view(
    runs: Annotated[list[Path], typer.Argument(
        help="Run directories, or folders holding runs (searched at any depth).",
        show_default=False)],
    out: Annotated[Path | None, typer.Option(
        "--out", help="Folder to write the site into (its index.html, assets and data/ are "
        "replaced, nothing else; default: site/ in the folder the runs are in, e.g. "
        "runs/site/).", show_default=False)] = None,
    json_out: JsonOption = False,
) -> None:
    """Write a static site of the runs -- every example with its input, the prompts sent, raw
    outputs, prediction, gold answer, scores with comments and trace; runs side by side -- that
    opens from file:// with no network: open OUT/index.html."""
    from tooleval_agents.viewer import build_site

    try:
        for run in runs:  # a mistyped path is a usage error, not a site without it
            if not run.exists():
                raise NotARunError(f"{run} is not a run directory or a folder of runs "
                                   "(no such path)")
        site = build_site(runs, out if out is not None else runs_root(runs) / "site")
    except (ToolevalError, OSError, KeyError, ValueError) as exc:
        raise handle_errors(exc) from exc
    if json_out:
        print_json({"index": str(site.index), "runs": site.runs, "examples": site.examples})
        return
    console.print(shown(f"wrote {site.runs} run(s), {site.examples} examples: open "
                        f"{site.index}"), highlight=False, soft_wrap=True)
