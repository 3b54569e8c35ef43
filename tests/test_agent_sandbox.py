"""The agent sandbox (``tooleval run --agent-cmd ... --agent-sandbox``): a snooping agent --
it reads the other agents' environments in ``/proc`` and calls their sessions, greps the data
directory for its own request, reads the run's files, the user's home and a server of the
host -- gets nothing sealed, and reaches its own session; unsealed, it gets all of that, and
the run says it was unsealed (``config.json``, the summary, ``compare``, the viewer); sealed or
not is part of the run's identity; where no sandbox can be made, one line says how to fix it
(exit 2); ``--agent-host`` opens the hosts it names, and those alone. The tests that seal
skip where ``bwrap`` cannot run (CI requires them: ``TOOLEVAL_REQUIRE_BWRAP``)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from helpers import LISTING, LISTS_TOOLS, cli, needs_bwrap

from tooleval_agents.mcp.sandbox import Gate
from tooleval_agents.results.records import UNSEALED_NOTE
from tooleval_agents.results.rundir import RunDir
from tooleval_agents.viewer import build_site

SNOOP = Path(__file__).parent / "snooping_agent.py"
AGENTS = 3


@pytest.fixture
def host_server() -> Iterator[int]:
    """A port of a server on the host's loopback that is no agent's session."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        yield server.getsockname()[1]


@pytest.fixture
def decoy() -> Iterator[None]:
    """A process of the user's with an agent's variables in its environment."""
    proc = subprocess.Popen(["sleep", "600"], env={
        "PATH": os.environ.get("PATH", ""), "TOOLEVAL_MCP_URL": "http://127.0.0.1:9/s/decoy/mcp",
        "TOOLEVAL_MCP_TOKEN": "decoy"})
    yield
    proc.kill()
    proc.wait()


def found(run_dir: str | Path) -> list[dict[str, Any]]:
    """What each example's snooping agent printed."""
    results = sorted(RunDir(run_dir).results().values(), key=lambda r: r.index)
    assert all(r.status == "ok" for r in results), [r.error for r in results]
    return [json.loads(r.outputs["raw_outputs"][0]) for r in results]


def snoop_command(data: Path, runs: Path, secret: Path, port: int, agent: str) -> str:
    return (f"SNOOP_DATA={data} SNOOP_RUNS={runs} SNOOP_SECRET={secret} SNOOP_PORT={port} "
            f"{sys.executable} {agent}")


def test_a_snooping_agent_gets_nothing_sealed(samples: Path, tmp_path: Path, host_server: int,
                                              decoy: None,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    needs_bwrap()
    # The data and the runs inside the working directory, which the agent is shown: the
    # sandbox hides them there too.
    project = tmp_path / "project"
    data, runs = project / "data", project / "runs"
    shutil.copytree(samples / "appbench", data / "appbench")
    shutil.copy(SNOOP, project / "snoop.py")
    shutil.copy(LISTING, project / LISTING.name)
    home = tmp_path / "home"
    home.mkdir()
    (home / "secret.txt").write_text("the user's own", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    run = cli("run", "appbench", "--category", "ss", "--limit", AGENTS, "--agent-cmd",
              snoop_command(data, runs, home / "secret.txt", host_server, "snoop.py"),
              "--agent-sandbox", "--data-dir", data, "--out", runs, "--no-cache", "--json",
              "--max-concurrency", AGENTS)
    assert run.exit_code == 0, run.output
    row = json.loads(run.stdout)
    for seen in found(row["run_dir"]):
        assert seen["own"] == 200  # its own session answers, through the sandbox's relay
        assert seen["siblings"] == [] and seen["foreign"] == seen["stolen"] == {}  # no decoy
        assert seen["processes"] < 10  # its own few, of the machine's many
        assert seen["data_hits"] == [] and seen["run_files"] == []
        assert seen["secret"] is None
        assert seen["host_port"].startswith("closed")  # the host's loopback is not its own
    config = RunDir(row["run_dir"]).read_config()
    assert config.agent_sandbox == {"sealed": True, "network": ["loopback"]}
    assert UNSEALED_NOTE not in row.get("notes", [])


@pytest.fixture(scope="module")
def unsealed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A run of the snooping agent without the sandbox, its agents all running at once (the
    run's row, and what each found)."""
    root = tmp_path_factory.mktemp("unsealed")
    secret = root / "secret.txt"
    secret.write_text("the user's own", encoding="utf-8")
    samples = Path(__file__).resolve().parents[1] / "datasets"
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        command = (f"SNOOP_BARRIER={root / 'barrier'} SNOOP_N={AGENTS} " + snoop_command(
            samples, root / "runs", secret, server.getsockname()[1], str(SNOOP)))
        run = cli("run", "appbench", "--category", "ss", "--limit", AGENTS, "--agent-cmd",
                  command, "--data-dir", samples, "--out", root / "runs", "--no-cache",
                  "--json", "--max-concurrency", AGENTS)
    assert run.exit_code == 0, run.output
    row = json.loads(run.stdout)
    return {"row": row, "found": found(row["run_dir"])}


def test_unsealed_a_snooping_agent_gets_what_it_looks_for_and_the_run_says_so(
        unsealed: dict[str, Any]) -> None:
    for seen in unsealed["found"]:  # what the sandbox is for
        assert len(seen["siblings"]) >= AGENTS - 1 and seen["own"] == 200
        assert seen["data_hits"] and seen["run_files"] and seen["secret"] == "the user's own"
        assert seen["host_port"] == "open"
    row = unsealed["row"]
    assert RunDir(row["run_dir"]).read_config().agent_sandbox == {"sealed": False}
    assert UNSEALED_NOTE in row["notes"]


def ours(seen: dict[str, Any], key: str) -> list[tuple[str, Any]]:
    """The calls an agent made to its own run's server: under xdist, other tests' agents
    (another run, another server) are in ``/proc`` too, and so is the decoy."""
    return [(url, s) for url, s in seen[key].items() if urlsplit(url).netloc == seen["server"]]


def test_unsealed_a_snooping_agents_foreign_calls_are_refused_and_counted(
        unsealed: dict[str, Any]) -> None:
    """Its own key opens no sibling's session (refused, counted); a sibling's key read from
    that sibling's environment does: what only the sandbox stops (docs/security.md)."""
    statuses = [s for seen in unsealed["found"] for url, s in ours(seen, "foreign")]
    assert statuses and all(s == 401 for s in statuses), statuses
    assert unsealed["row"]["counts"]["foreign_calls"] >= len(statuses)
    stolen = [s for seen in unsealed["found"] for url, s in ours(seen, "stolen")]
    # 404: that sibling had already ended (each one's session closes with its example).
    assert 200 in stolen and all(s in (200, 404) for s in stolen), stolen


def test_the_run_says_whether_it_was_sealed_everywhere(samples: Path, tmp_path: Path) -> None:
    needs_bwrap()
    runs = tmp_path / "runs"
    rows = {}
    for sealed in (True, False):
        run = cli("run", "appbench", "--category", "ss", "--limit", 1, "--agent-cmd",
                  LISTS_TOOLS, *(["--agent-sandbox", "--agent-read", LISTING] if sealed
                                 else []),
                  "--data-dir", samples, "--out", runs, "--no-cache", "--json")
        assert run.exit_code == 0, run.output
        rows[sealed] = json.loads(run.stdout)
    # Another system under test: the sandbox decides what the agent can reach.
    assert rows[True]["run_dir"] != rows[False]["run_dir"]
    identity = RunDir(rows[True]["run_dir"]).read_config().identity or {}
    assert identity["parts"]["agent_cmd"]["sandbox"] == {"sealed": True,
                                                         "network": ["loopback"]}
    assert "sandbox" not in (RunDir(rows[False]["run_dir"]).read_config().identity or {})[
        "parts"]["agent_cmd"]  # an unsealed run keeps the identity it had
    assert UNSEALED_NOTE in rows[False]["notes"]
    assert UNSEALED_NOTE not in rows[True].get("notes", [])
    compared = cli("compare", rows[True]["run_dir"], rows[False]["run_dir"], "--n-boot", 0)
    assert compared.exit_code == 0, compared.output
    text = " ".join(compared.stdout.split())
    assert re.search(r"unsealed\S*: unsealed: the agent command ran as you", text), text
    assert "sealed" in text.replace("unsealed", "")  # the runs' short names say which
    build_site([runs], tmp_path / "site")
    metas = (tmp_path / "site" / "data" / "runs.js").read_text(encoding="utf-8")
    listed = json.loads(metas.split("TOOLEVAL.put(\"runs\",", 1)[1].rsplit(");", 1)[0])
    assert sorted((m["sealed"], m["options"]["sandbox"]) for m in listed) == [
        (False, "unsealed"), (True, "sealed")]
    assert any(UNSEALED_NOTE in m["notes"] for m in listed if m["sealed"] is False)


def test_without_bwrap_one_line_says_how_to_install_it(samples: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    run = cli("run", "appbench", "--category", "ss", "--limit", 1, "--agent-cmd", "echo done",
              "--agent-sandbox", "--data-dir", samples, "--out", tmp_path / "runs")
    assert run.exit_code == 2, run.output
    said = " ".join(run.output.split())
    assert "apt-get install bubblewrap" in said and "without --agent-sandbox" in said
    assert "Traceback" not in run.output and not (tmp_path / "runs").exists()


def test_without_user_namespaces_one_line_says_the_sysctl(samples: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    fake = tools / "bwrap"  # bwrap as it fails where user namespaces are disabled
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely "
                    "because the kernel does not allow non-privileged user namespaces.' >&2\n"
                    "exit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tools))
    run = cli("run", "appbench", "--category", "ss", "--limit", 1, "--agent-cmd", "echo done",
              "--agent-sandbox", "--data-dir", samples, "--out", tmp_path / "runs")
    assert run.exit_code == 2, run.output
    said = " ".join(run.output.split())
    assert "kernel.unprivileged_userns_clone=1" in said and "No permissions" in said
    assert not (tmp_path / "runs").exists()


def test_sandbox_options_need_each_other(samples: Path, tmp_path: Path) -> None:
    for args, said in ((["--agent-host", "api.openai.com"], "give --agent-sandbox"),
                       (["--agent-sandbox", "--agent-host", "127.0.0.1"], "needs its port"),
                       (["--agent-read", str(tmp_path)], "give --agent-sandbox")):
        run = cli("run", "appbench", "--category", "ss", "--agent-cmd", "echo done", *args,
                  "--data-dir", samples, "--out", tmp_path / "runs")
        assert run.exit_code == 2 and said in " ".join(run.output.split()), run.output
    alone = cli("run", "appbench", "--category", "ss", "--model", "reference",
                "--agent-sandbox", "--data-dir", samples, "--out", tmp_path / "runs")
    assert alone.exit_code == 2 and "give --agent-cmd" in alone.output


def test_agent_host_relays_a_server_of_this_machine(samples: Path, tmp_path: Path,
                                                    host_server: int) -> None:
    needs_bwrap()
    command = snoop_command(tmp_path, tmp_path, tmp_path / "none", host_server, str(SNOOP))
    run = cli("run", "appbench", "--category", "ss", "--limit", 1, "--agent-cmd", command,
              "--agent-sandbox", "--agent-host", f"127.0.0.1:{host_server}", "--agent-read",
              str(SNOOP), "--agent-read", LISTING, "--data-dir", samples, "--out",
              tmp_path / "runs", "--no-cache", "--json")
    assert run.exit_code == 0, run.output
    row = json.loads(run.stdout)
    (seen,) = found(row["run_dir"])
    assert seen["host_port"] == "open" and seen["own"] == 200
    assert RunDir(row["run_dir"]).read_config().agent_sandbox == {
        "sealed": True, "network": ["loopback", f"127.0.0.1:{host_server}"]}


async def _through_proxy(gate: Path, target: str) -> bytes:
    reader, writer = await asyncio.open_unix_connection(str(gate))
    writer.write(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    head = await reader.readuntil(b"\r\n\r\n")
    if b" 200 " in head.split(b"\r\n", 1)[0]:
        writer.write(b"ping")
        await writer.drain()
        head += await reader.readexactly(4)
    writer.close()
    return head


def test_the_proxy_connects_to_the_allowed_hosts_alone(tmp_path: Path) -> None:
    async def main() -> tuple[bytes, bytes, list[str]]:
        async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(await reader.readexactly(4))
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(echo, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with Gate(tmp_path, {}, {("127.0.0.1", port)}, 3128) as gate:
            allowed = await _through_proxy(tmp_path / "3128.sock", f"127.0.0.1:{port}")
            refused = await _through_proxy(tmp_path / "3128.sock", "example.com:443")
        server.close()
        return allowed, refused, gate.refused

    allowed, refused, said = asyncio.run(main())
    assert allowed.startswith(b"HTTP/1.1 200") and allowed.endswith(b"ping")
    assert refused.startswith(b"HTTP/1.1 403") and said == ["example.com:443"]
