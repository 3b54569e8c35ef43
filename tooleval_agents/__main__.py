"""``python -m tooleval_agents``: the ``tooleval`` command."""

from tooleval_agents.cli import main

main()
