"""The model gateway: the run's model served to an outside agent (``--agent-cmd`` with
``--model``, ``tooleval serve --model``) on ``127.0.0.1``, in the wire formats agents speak,
each example under its own URL and key.

* :mod:`~tooleval_agents.gateway.server`: :class:`ModelGateway`, the HTTP server (its own
  thread), its routes and checks.
* :mod:`~tooleval_agents.gateway.grants`: an example's URL and key, and what it did with them.
* :mod:`~tooleval_agents.gateway.model`: the run's model asked a request in the example's
  accounting (retry policy, rate limit, response cache, transcript: the run's model stack).
* :mod:`~tooleval_agents.gateway.chat_completions`: OpenAI Chat Completions;
  :mod:`~tooleval_agents.gateway.responses`: OpenAI Responses (``namespace`` and ``custom``
  tools too); :mod:`~tooleval_agents.gateway.messages`: Anthropic Messages.
* :mod:`~tooleval_agents.gateway.wire`: what the formats share.

It needs the ``mcp`` extra (``pip install 'tooleval-agents[mcp]'``: uvicorn serves it, and the
``anthropic`` SDK's types shape its Anthropic answers).
"""

from __future__ import annotations

from importlib.util import find_spec

from tooleval_agents.errors import ToolevalError

INSTALL_HINT = "pip install 'tooleval-agents[mcp]'"


def require_gateway() -> None:
    """Raise a one-line :class:`~tooleval_agents.errors.ToolevalError` naming the extra when
    what the gateway needs is not installed."""
    missing = [name for name in ("uvicorn", "anthropic") if find_spec(name) is None]
    if missing:
        raise ToolevalError(f"the model gateway needs {', '.join(missing)}: {INSTALL_HINT}")
