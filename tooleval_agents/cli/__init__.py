"""The ``tooleval`` command line. Each command group lives in its own module and registers on the
Typer apps of :mod:`tooleval_agents.cli.base`; importing them here wires them up. Heavy imports
(LangChain, pandas, matplotlib) happen inside the commands, so ``--help`` stays fast."""

from __future__ import annotations

from tooleval_agents.cli import (  # noqa: F401  (modules register their commands on import)
    compare,
    data_fetch,
    data_info,
    data_push,
    listing,
    report,
    run,
    score_run,
    view,
)
from tooleval_agents.cli.base import GROUPS, app, run_cli
from tooleval_agents.cli.score_predictions import generic_score
from tooleval_agents.registry import benchmarks

for _bench in benchmarks().values():  # each benchmark's own commands
    _bench.add_commands(GROUPS)
_own = {command.name for command in GROUPS["score"].registered_commands}
for _name in benchmarks():  # the generic score command for the others
    if _name not in _own:
        GROUPS["score"].command(_name)(generic_score(_name))


def main() -> None:
    """Console-script entry point."""
    run_cli(app)
