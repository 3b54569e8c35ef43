"""What a run serves its workflow's outside agent, each made on first use and stopped with
the run: the MCP server of its tools (:class:`ToolServers`) and the model gateway of its model
(:class:`ModelGateways`)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from tooleval_agents.mcp import require_mcp
from tooleval_agents.mcp.log import CallLog

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from tooleval_agents.gateway.server import ModelGateway
    from tooleval_agents.mcp.server import ToolServer

log = logging.getLogger(__name__)


class ModelGateways:
    """The run's model gateway (:mod:`tooleval_agents.gateway`): the model under test, as the
    run wraps it, served to an agent command (``--agent-cmd`` with ``--model``), made on first
    use; stopped with :meth:`stop`, which says what it refused that named no example."""

    def __init__(self, model: BaseChatModel | None, name: str) -> None:
        self.model, self.name = model, name
        self.gateway: ModelGateway | None = None

    @property
    def serving(self) -> bool:
        """Whether the run has a model to serve (an agent command with ``--model``)."""
        return self.model is not None

    def __call__(self) -> ModelGateway:
        if self.gateway is None:
            from tooleval_agents.gateway import require_gateway
            from tooleval_agents.gateway.server import ModelGateway

            require_gateway()
            assert self.model is not None
            self.gateway = ModelGateway(self.model, name=self.name)
        return self.gateway

    def stop(self) -> None:
        if self.gateway is None:
            return
        self.gateway.stop()
        refused = self.gateway.grants.unattributed
        if refused:
            log.warning("the model gateway refused %d request(s) that named no running "
                        "example (%s)", sum(refused.values()),
                        ", ".join(f"{n} x {k}" for k, n in sorted(refused.items())))

    def __enter__(self) -> ModelGateways:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class ToolServers:
    """The run's MCP server (:mod:`tooleval_agents.mcp`), made on first use -- the ``mcp``
    extra is needed only then -- with its call log in the run directory (:meth:`log_to`, once
    the run is placed); stopped with :meth:`stop`."""

    def __init__(self, log: Path | None = None) -> None:
        self.log = log
        self.server: ToolServer | None = None

    def log_to(self, log: Path) -> None:
        """Log the calls to ``log``: the run directory is known once the workflow is built
        (what the build read is part of the run's identity), and the build may have made the
        server; no session is open before the run starts."""
        self.log = log
        if self.server is not None:
            self.server.log = CallLog(log)

    def __call__(self) -> ToolServer:
        if self.server is None:
            from tooleval_agents.mcp.server import ToolServer

            require_mcp()
            self.server = ToolServer(log=self.log)
        return self.server

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()

    def __enter__(self) -> ToolServers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = ["ModelGateways", "ToolServers"]
