"""The ``tooleval`` command line. Each command group lives in its own module and registers on the
Typer apps of :mod:`tooleval_agents.cli.base` when imported; :func:`wired_app` imports them all.
Heavy imports (LangChain, pandas, matplotlib) happen inside the commands, so ``--help`` stays
fast, and ``tooleval run`` loads its own module only (:func:`run_app`)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from functools import cache
from typing import Any

import typer

from tooleval_agents.cli.base import GROUPS, run_cli
from tooleval_agents.cli.base import app as _bare_app
from tooleval_agents.registry import benchmarks


@cache
def wired_app() -> typer.Typer:
    """The ``tooleval`` app with every command and every benchmark's own commands registered,
    wired on first use: a benchmark module may import :mod:`tooleval_agents.cli.base` without
    this package's import reaching back into the benchmark (an import cycle)."""
    from tooleval_agents.cli import (  # noqa: F401  (modules register their commands on import)
        compare,
        data_fetch,
        data_info,
        data_push,
        export_run,
        listing,
        report,
        run,
        score_run,
        serve,
        upload,
        view,
    )
    from tooleval_agents.cli.score_predictions import generic_score

    for bench in benchmarks().values():  # each benchmark's own commands
        bench.add_commands(GROUPS)
    own = {command.name for command in GROUPS["score"].registered_commands}
    for name in benchmarks():  # the generic score command for the others
        if name not in own:
            GROUPS["score"].command(name)(generic_score(name))
    return _bare_app


def __getattr__(name: str) -> Any:
    if name == "app":  # ``from tooleval_agents.cli import app``: the wired app
        return wired_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def run_app() -> typer.Typer:
    """The app with ``tooleval run`` registered (the others once :func:`wired_app` ran): a run
    does not pay for importing every other command and building its options (issue 23, the
    runner's own start-up cost)."""
    from tooleval_agents.cli import run  # noqa: F401  (registers the command)

    return _bare_app


def app_for(args: Sequence[str]) -> typer.Typer:
    """The app a command line needs: :func:`run_app` for ``tooleval run ...``, else the whole
    :func:`wired_app` (help, completion, a mistyped command and its suggestions)."""
    return run_app() if args[:1] == ["run"] else wired_app()


def main() -> None:
    """Console-script entry point."""
    run_cli(app_for(sys.argv[1:]))
