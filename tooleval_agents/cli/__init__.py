"""The ``tooleval`` command line. Each command group lives in its own module and registers on the
Typer apps of :mod:`tooleval_agents.cli.apps`; importing them here wires them up."""

from __future__ import annotations

from tooleval_agents.cli import data_info  # noqa: F401  (registers commands)
from tooleval_agents.cli.apps import app

_OPTIONAL = ("data_fetch", "data_build", "data_push", "score_ultratool", "score_appbench",
             "compare", "report", "score_run", "run")


def _import_optional() -> None:
    import importlib

    for name in _OPTIONAL:
        try:
            importlib.import_module(f"tooleval_agents.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"tooleval_agents.cli.{name}":
                raise


_import_optional()


def main() -> None:
    """Console-script entry point."""
    app()
