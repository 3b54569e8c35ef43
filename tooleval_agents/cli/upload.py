"""``tooleval upload``: finished local runs sent to LangSmith later
(:mod:`tooleval_agents.run.upload`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tooleval_agents.cli.base import FLAG, JsonOption, app, console, handle_errors, print_json
from tooleval_agents.errors import ToolevalError
from tooleval_agents.terminal import shown


@app.command("upload")
def upload(
    runs: Annotated[list[Path], typer.Argument(
        help="Run directories to send (finished or partly finished).", show_default=False)],
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", metavar=FLAG, help="Say what would be sent; contact nothing.")] = False,
    json_out: JsonOption = False,
) -> None:
    """Send local runs to LangSmith as experiments (dataset pushed if absent, one run per
    example, scores as feedback). Sending a run again sends only what LangSmith lacks. Needs
    LANGSMITH_API_KEY (and LANGSMITH_ENDPOINT for a self-hosted LangSmith)."""
    from tooleval_agents.run.upload import upload_run  # deferred: LangSmith's client

    done = []
    for path in runs:
        try:
            done.append(upload_run(path, dry_run=dry_run))
        except (ToolevalError, OSError, KeyError, ValueError) as exc:
            raise handle_errors(exc) from exc
    if json_out:
        print_json([{"run": str(u.run), "experiment": u.experiment, "results": u.results,
                     "sent": u.sent, "already": u.already, "url": u.url} for u in done])
        return
    for u in done:
        said = (f"{u.run}: {u.results} result(s) to send (dry run)" if dry_run else
                f"{u.run}: sent {u.sent}, {u.already} already in LangSmith, experiment "
                f"{u.experiment}" + (f" ({u.url})" if u.url else ""))
        console.print(shown(said), highlight=False, soft_wrap=True)
