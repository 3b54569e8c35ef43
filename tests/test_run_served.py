"""What a run serves its workflow's outside agent (:mod:`tooleval_agents.run.served`): made on
first use only, the MCP server's call log where the run is placed once it is known, both
stopped with the run."""

from __future__ import annotations

from pathlib import Path

from tooleval_agents.models.offline import reference_model
from tooleval_agents.run.served import ModelGateways, ToolServers


def test_the_mcp_server_is_made_on_first_use_and_logs_where_the_run_is(tmp_path: Path) -> None:
    with ToolServers() as servers:
        assert servers.server is None  # nothing made for a workflow that serves nothing
        server = servers()
        assert servers() is server  # one per run
        servers.log_to(tmp_path / "mcp_calls.jsonl")
        assert server.log.path == tmp_path / "mcp_calls.jsonl"
    assert not server.started


def test_a_gateway_serves_only_when_there_is_a_model() -> None:
    with ModelGateways(None, "external") as none:
        assert not none.serving and none.gateway is None
    with ModelGateways(reference_model("appbench", subset="ss"), "reference") as served:
        assert served.serving and served.gateway is None
        gateway = served()
        assert served() is gateway and gateway.served.name == "reference"
