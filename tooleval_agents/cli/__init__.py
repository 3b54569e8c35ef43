"""The ``tooleval`` command line. Each command group lives in its own module and registers on the
Typer apps of :mod:`tooleval_agents.cli.apps`; importing them here wires them up. Heavy imports
(LangChain, pandas, matplotlib) happen inside the commands, so ``--help`` stays fast."""

from __future__ import annotations

from tooleval_agents.cli import (  # noqa: F401  (modules register their commands on import)
    compare,
    data_fetch,
    data_info,
    data_push,
    report,
    run,
    score_appbench,
    score_run,
    score_ultratool,
)
from tooleval_agents.cli.apps import GROUPS, app
from tooleval_agents.registry import benchmarks

for _bench in benchmarks().values():  # each benchmark's own commands
    _bench.add_commands(GROUPS)


def main() -> None:
    """Console-script entry point."""
    app()
