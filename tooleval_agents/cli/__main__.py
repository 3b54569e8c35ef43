"""``python -m tooleval_agents.cli``: the ``tooleval`` command."""

from tooleval_agents.cli import main

main()
