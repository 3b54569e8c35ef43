"""How a preset is wired and read, without its program: the configuration it gets for one
example (the token never in a file, the user's environment not passed on), its structured
output read (totally: any text gives a report), a missing program said with the command that
installs it (exit 2), and the options refused with each other."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.mcp.presets import PRESETS, Served
from tooleval_agents.mcp.presets.base import KEPT_ENV, environment, find_program
from tooleval_agents.mcp.presets.claude_code import ClaudeCode
from tooleval_agents.mcp.presets.codex import Codex
from tooleval_agents.mcp.presets.events import MAX_SAFE, integer
from tooleval_agents.mcp.presets.openai_agents import OpenAIAgents, script
from tooleval_agents.run.spec import RunSpec

TOKEN = "the-examples-mcp-token"
SERVED = Served(mcp_url="http://127.0.0.1:1/s/abc/mcp", model="reference",
                openai_base_url="http://127.0.0.1:2/g/0/v1",
                anthropic_base_url="http://127.0.0.1:2/g/0", api_key="sk-tooleval-key",
                variables={"TOOLEVAL_MCP_TOKEN": TOKEN, "TOOLEVAL_MODEL": "reference"})


def test_each_preset_is_wired_to_the_session_and_the_gateway_and_nothing_else(
        tmp_path: Path) -> None:
    user = {"PATH": "/usr/bin", "CLAUDE_CONFIG_DIR": "/home/u/.claude", "CODEX_HOME": "/x",
            "OTEL_EXPORTER_OTLP_ENDPOINT": "https://collector", "HTTPS_PROXY": "http://p:3128",
            "ANTHROPIC_AUTH_TOKEN": "users", "OPENAI_ORG_ID": "org"}
    env = environment(user, tmp_path / "home", SERVED, {})
    assert set(env) - set(SERVED.variables) == {"PATH", "HOME", "TMPDIR", "NO_PROXY"}
    assert set(KEPT_ENV) >= {"PATH", "LANG"}
    claude = ClaudeCode().launch(Path("/bin/claude"), tmp_path / "c", SERVED) \
        if (tmp_path / "c").mkdir() is None else None
    assert claude is not None and claude.cwd == tmp_path / "c" / "work"
    config = json.loads((tmp_path / "c" / "mcp.json").read_text())
    server = config["mcpServers"]["bench"]
    assert server["url"] == SERVED.mcp_url
    assert server["headers"]["Authorization"] == "Bearer ${TOOLEVAL_MCP_TOKEN}"  # expanded
    argv = claude.argv
    assert argv[argv.index("--tools") + 1] == "" and argv[argv.index("--model") + 1] == \
        "reference" and "--strict-mcp-config" in argv
    assert claude.env["ANTHROPIC_BASE_URL"] == SERVED.anthropic_base_url
    assert claude.env["ENABLE_TOOL_SEARCH"] == "false"
    assert claude.env["TOOLEVAL_MCP_TOKEN"] == TOKEN and claude.env["HOME"] != "/home/u"
    (tmp_path / "x").mkdir()
    codex = Codex().launch(Path("/bin/codex"), tmp_path / "x", SERVED)
    toml = tomllib.loads((tmp_path / "x" / "codex" / "config.toml").read_text())
    assert toml["model"] == "reference" and toml["model_provider"] == "tooleval"
    assert toml["model_providers"]["tooleval"] == {
        "name": "tooleval gateway", "base_url": SERVED.openai_base_url,
        "env_key": "OPENAI_API_KEY", "wire_api": "responses"}
    assert toml["mcp_servers"]["bench"] == {
        "url": SERVED.mcp_url, "bearer_token_env_var": "TOOLEVAL_MCP_TOKEN",
        "default_tools_approval_mode": "approve", "required": True}
    assert toml["analytics"] == {"enabled": False} and toml["features"]["plugins"] is False
    assert codex.env["CODEX_HOME"] == str(tmp_path / "x" / "codex") and codex.argv[-1] == "-"
    (tmp_path / "s").mkdir()
    sdk = OpenAIAgents().launch(Path("/bin/python3"), tmp_path / "s", SERVED)
    assert sdk.argv == ["/bin/python3", str(script()), "--json"]
    assert script().name == "openai_agents_sdk.py" and script().parent.name == "examples"
    assert sdk.env["OPENAI_AGENTS_DISABLE_TRACING"] == "1"
    assert sdk.env["OPENAI_BASE_URL"] == SERVED.openai_base_url
    for folder in (tmp_path / "c", tmp_path / "x"):  # the token is in no file
        assert not any(TOKEN in p.read_text() for p in folder.rglob("*") if p.is_file())


CLAUDE_STREAM = "\n".join([
    json.dumps({"type": "system", "subtype": "init", "mcp_servers": [
        {"name": "bench", "status": "connected"}]}),
    "not json at all",
    json.dumps({"type": "assistant", "message": {"content": []}}),
    json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": "Done.",
                "num_turns": 3, "usage": {"input_tokens": 90, "cache_read_input_tokens": 10,
                                          "output_tokens": 7}})])
CODEX_STREAM = "\n".join([
    json.dumps({"type": "thread.started"}),
    json.dumps({"type": "item.completed", "item": {"type": "error", "message": "no metadata"}}),
    json.dumps({"type": "item.completed", "item": {"type": "agent_message", "text": "Hi"}}),
    json.dumps({"type": "item.completed", "item": {"type": "agent_message", "text": "Done."}}),
    json.dumps({"type": "turn.completed", "usage": {"input_tokens": 100, "output_tokens": 7,
                                                    "cached_input_tokens": 10}}),
    "[1, 2"])


def test_structured_output_is_read_for_answer_turns_usage_and_servers() -> None:
    claude = ClaudeCode().read(CLAUDE_STREAM, "")
    assert (claude.final, claude.turns, claude.no_tools, claude.unread) == ("Done.", 3, None, 1)
    assert claude.usage == {"input_tokens": 100, "output_tokens": 7, "cached_input_tokens": 10}
    assert claude.servers == {"bench": "connected"}
    codex = Codex().read(CODEX_STREAM, "a warning\n")
    assert (codex.final, codex.turns, codex.no_tools, codex.unread) == ("Done.", 1, None, 1)
    assert codex.usage == {"input_tokens": 100, "output_tokens": 7, "cached_input_tokens": 10}


def test_the_agents_sdk_example_is_read_from_its_json() -> None:
    said = OpenAIAgents().read("warming up\n" + json.dumps({
        "final": "Done.", "turns": 2, "mcp": "connected", "usage": {
            "input_tokens": 10, "output_tokens": 3, "cached_input_tokens": 0,
            "model_calls": 2}}), "")
    assert (said.final, said.turns, said.unread, said.no_tools) == ("Done.", 2, 1, None)
    assert said.usage == {"input_tokens": 10, "output_tokens": 3, "cached_input_tokens": 0}
    failed = OpenAIAgents().read("", json.dumps({"mcp": "failed", "error": "401"}))
    assert failed.final is None and "did not open (401)" in (failed.no_tools or "")


def test_a_failed_mcp_server_and_an_error_result_are_read_as_such() -> None:
    failed = CLAUDE_STREAM.replace('"connected"', '"failed"')
    assert "as failed" in (ClaudeCode().read(failed, "").no_tools or "")
    init = json.dumps({"type": "system", "subtype": "init", "mcp_servers": []})
    assert "as absent" in (ClaudeCode().read(init, "").no_tools or "")
    silent = ClaudeCode().read("", "")  # no init event: nothing to say of it
    assert silent.no_tools is None and silent.final is None
    error = json.dumps({"type": "result", "subtype": "error_during_execution",
                        "is_error": True, "result": "API Error: 500"})
    said = ClaudeCode().read(error, "")
    assert said.final is None and said.error == "API Error: 500"
    codex = Codex().read(json.dumps({"type": "turn.failed", "error": {
        "message": "stream disconnected"}}), "Error: required MCP servers failed to "
        "initialize: bench: handshaking with MCP server failed\nStack backtrace:\n")
    assert codex.final is None and codex.error == "stream disconnected"
    assert codex.no_tools is not None and "bench: handshaking" in codex.no_tools


@pytest.mark.parametrize("text", ["", "\x00\xff garbage", "{" * 5000, "[]\n{}\n" * 1000,
                                  json.dumps({"type": "result", "usage": {
                                      "input_tokens": 2**60, "output_tokens": -3}}),
                                  json.dumps({"type": "turn.completed", "usage": [1]})])
def test_any_output_gives_a_report(text: str) -> None:
    for preset in PRESETS.values():  # each of them
        report = preset.read(text, text)
        assert report.final is None or isinstance(report.final, str)
        assert all(0 <= v <= MAX_SAFE for v in (report.usage or {}).values())
    assert [integer(v) for v in (7, True, -1, MAX_SAFE + 1, 1.0, "7")] == [7] + [None] * 5


def test_a_missing_program_is_one_line_with_its_install_command(samples: Path,
                                                                 tmp_path: Path) -> None:
    for preset, install in (("claude-code", "npm install -g @anthropic-ai/claude-code"),
                            ("codex", "npm install -g @openai/codex"),
                            ("openai-agents", "pip install 'tooleval-agents[openai-agents]'")):
        done = CliRunner().invoke(app, [
            "run", "appbench", "--category", "ss", "--model", "reference", "--agent-preset",
            preset, "--agent-bin", str(tmp_path / "nowhere"), "--data-dir", str(samples),
            "--out", str(tmp_path / "runs")])
        assert done.exit_code == 2, done.output
        assert install in done.stderr and len(done.stderr.strip().splitlines()) <= 3
        if preset != "openai-agents":  # its program is this Python unless given
            with pytest.raises(Exception, match="is not on the PATH.*" + install.split()[-1]):
                find_program(PRESETS[preset], None, path=str(tmp_path))
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(("args", "said"), [
    (["--agent-preset", "claude-code", "--agent-bin", "{fake}"], "give --model"),
    (["--agent-preset", "cursor", "--model", "reference"], "no agent preset 'cursor'"),
    (["--agent-preset", "codex", "--agent-cmd", "x", "--model", "reference"], "not both"),
    (["--agent-bin", "{fake}", "--model", "reference"], "give --agent-preset"),
    (["--agent-preset", "codex", "--agent-bin", "/bin/false", "--model", "reference"],
     "gave no version"),
    (["--agent-preset", "openai-agents", "--agent-bin", "/bin/false", "--model", "reference"],
     "install the SDK for it: /bin/false -m pip install openai-agents")])
def test_preset_options_are_checked_before_anything_runs(args: list[str], said: str,
                                                         tmp_path: Path) -> None:
    fake = tmp_path / "fake-agent"
    fake.write_text("#!/bin/sh\necho '1.2.3 (a fake agent)'\n")
    fake.chmod(0o755)
    done = CliRunner().invoke(app, ["run", "appbench", "--category", "ss", "--out",
                                    str(tmp_path / "runs"),
                                    *(a.replace("{fake}", str(fake)) for a in args)])
    assert done.exit_code == 2 and said in done.stderr, done.output
    assert not (tmp_path / "runs").exists()
    with pytest.raises(ValueError, match="give model"):
        RunSpec(benchmark="appbench", agent_preset="codex")
