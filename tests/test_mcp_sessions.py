"""What a session's key opens and how an example's sessions live (issue 43, the server side):
a key opens its own example's session only (another's is refused, logged and counted), an
example is opened once however many first requests arrive at once, ``/s/00`` is not ``/s/0``,
``DELETE`` ends a client's MCP session, idle ones end, thousands of ``initialize`` hold a
bounded number of them, an unknown method is -32601, and ``tooleval serve`` stops on SIGTERM
as on Ctrl-C. Every client here speaks raw JSON-RPC over HTTP (no SDK client), so the tests
run on either major of the ``mcp`` SDK."""

from __future__ import annotations

import asyncio
import gc
import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import HANG_GUARD_S, default_sigint, wait_until
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp_helpers import ACCEPT, INITIALIZE, post

from tooleval_agents import agent_io_for, get_benchmark
from tooleval_agents.mcp.endpoint import MAX_SESSIONS
from tooleval_agents.mcp.keys import derive
from tooleval_agents.mcp.log import read_log
from tooleval_agents.mcp.server import ToolServer
from tooleval_agents.registry import get_strategy

SS = {"input": "What is the weather in Oslo on March 3rd?"}
WEATHER = "Weather__getweather"
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
VERSION = {"mcp-protocol-version": "2025-06-18"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ToolServer]:
    with ToolServer(log=tmp_path / "mcp_calls.jsonl") as served:
        yield served


def opened(server: ToolServer, strategy_io: Any = None) -> Any:
    io = strategy_io or agent_io_for("appbench", subset="ss")
    return asyncio.run(server.open(io.open(SS), io.messages(SS), label="t"))


def mcp_session(server: ToolServer, path: str, **headers: str) -> str:
    """A new MCP session on ``path`` (initialize, then initialized): its id."""
    answer = post(server, path, INITIALIZE, **headers)
    assert answer.status_code == 200, answer.text
    sid = answer.headers["mcp-session-id"]
    post(server, path, {"jsonrpc": "2.0", "method": "notifications/initialized"},
         mcp_session_id=sid, **VERSION, **headers)
    return sid


def test_a_key_opens_its_own_session_only_and_another_is_refused_logged_and_counted(
        server: ToolServer) -> None:
    mine, theirs = opened(server), opened(server)
    assert server.key(mine) != server.key(theirs)
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": WEATHER, "arguments": {"city": "INTRUDER"}}}
    # An agent that found its sibling's URL calls it with its own key: refused.
    foreign = post(server, f"/s/{theirs.id}/mcp", call,
                   authorization=f"Bearer {server.key(mine)}")
    assert foreign.status_code == 401 and "another example's" in foreign.text
    forged = post(server, f"/s/{theirs.id}/mcp", call,
                  authorization=f"Bearer {theirs.id}.{'A' * 32}")
    assert forged.status_code == 401 and "another" not in forged.text
    sid = mcp_session(server, f"/s/{theirs.id}/mcp")  # its own key: served
    assert post(server, f"/s/{theirs.id}/mcp", call, mcp_session_id=sid,
                **VERSION).status_code == 200
    assert [c.arguments for c in theirs.calls] == [{"city": "INTRUDER"}]  # its own call only
    assert (mine.foreign, theirs.foreign, server.foreign) == (1, 0, 1)
    server.log.close()
    assert server.log.path is not None
    refused = [r for r in read_log(server.log.path) if r["kind"] == "foreign_call"]
    assert [(r["session"], r["key_of"]) for r in refused] == [(theirs.id, mine.id)]
    text = server.log.path.read_text()
    assert server.key(mine) not in text and server.key(theirs) not in text  # no key logged


def test_eight_first_requests_at_once_open_the_example_once(tmp_path: Path) -> None:
    split = get_benchmark("appbench").split("plan", "ss")
    io = get_strategy("appbench", "tools_hierarchical").agent_io(split)
    assert io is not None
    asked: list[str] = []

    async def on_demand(sid: str) -> Any:
        asked.append(sid)
        await asyncio.sleep(0.05)  # an example takes a moment to open
        return server.session(io.open(SS), io.messages(SS), label=sid, session_id=sid)

    server = ToolServer(log=tmp_path / "mcp_calls.jsonl", on_demand=on_demand)

    async def clients() -> list[tuple[int, int]]:
        url, key = server.url("3"), server.key("3")
        headers = {"Authorization": f"Bearer {key}", "Accept": ACCEPT}

        async def one(http: httpx.AsyncClient) -> tuple[int, int]:
            first = await http.post(url, json=INITIALIZE, headers=headers)
            sid = first.headers.get("mcp-session-id", "")
            listed = await http.post(url, json=LIST,
                                     headers={**headers, "mcp-session-id": sid, **VERSION})
            return first.status_code, listed.status_code

        https = [httpx.AsyncClient(timeout=HANG_GUARD_S) for _ in range(8)]
        try:
            return list(await asyncio.gather(*(one(h) for h in https)))
        finally:
            for http in https:
                await http.aclose()

    with server:
        statuses = asyncio.run(clients())
        assert statuses == [(200, 200)] * 8  # every client goes on in the one session
        opener = mcp_session(server, "/s/3/mcp")
        post(server, "/s/3/mcp", {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                                  "params": {"name": "open_Weather", "arguments": {}}},
             mcp_session_id=opener, **VERSION)
        other = mcp_session(server, "/s/3/mcp")  # the state is the example's, not split
        names = [t["name"] for t in post(server, "/s/3/mcp", LIST, mcp_session_id=other,
                                         **VERSION).json()["result"]["tools"]]
    assert len(names) == 16 and WEATHER in names
    assert server.log.path is not None
    events = [r for r in read_log(server.log.path) if r["kind"] == "session"]
    assert [r["event"] for r in events] == ["opened", "closed"] and len(set(asked)) == 1


def test_delete_ends_a_client_mcp_session(server: ToolServer) -> None:
    session = opened(server)
    path = f"/s/{session.id}/mcp"
    sid = mcp_session(server, path)
    assert server.mcp_sessions(session) == 1
    ended = httpx.delete(server.base_url + path, timeout=60, headers={
        "Authorization": f"Bearer {server.key(session)}", "mcp-session-id": sid, **VERSION})
    assert ended.status_code == 200
    assert post(server, path, LIST, mcp_session_id=sid, **VERSION).status_code == 404
    assert server.mcp_sessions(session) == 0 and session.open  # the example goes on
    assert post(server, path, INITIALIZE).status_code == 200


def test_an_idle_mcp_session_ends(tmp_path: Path) -> None:
    with ToolServer(log=tmp_path / "mcp_calls.jsonl", idle_timeout=0.3) as server:
        session = opened(server)
        path = f"/s/{session.id}/mcp"
        sid = mcp_session(server, path)
        wait_until(lambda: server.mcp_sessions(session) == 0, "the idle MCP session to end")
        assert post(server, path, LIST, mcp_session_id=sid, **VERSION).status_code == 404
        assert mcp_session(server, path)  # its client initializes again


def live_transports() -> int:
    gc.collect()
    return sum(isinstance(o, StreamableHTTPServerTransport) for o in gc.get_objects())


def test_repeated_initialize_holds_a_bounded_number_of_mcp_sessions(server: ToolServer) -> None:
    # The figure at 4,000 (server memory): benchmarks/mcp_sessions.py.
    session = opened(server)
    url = server.url(session)
    headers = {"Authorization": f"Bearer {server.key(session)}", "Accept": ACCEPT}
    before = live_transports()
    with httpx.Client(headers=headers, timeout=60) as http:
        first = http.post(url, json=INITIALIZE).headers["mcp-session-id"]
        for _ in range(3 * server.max_sessions):
            assert http.post(url, json=INITIALIZE).status_code == 200
        last = http.post(url, json=INITIALIZE).headers["mcp-session-id"]
        gone = http.post(url, json=LIST, headers={"mcp-session-id": first, **VERSION})
        kept = http.post(url, json=LIST, headers={"mcp-session-id": last, **VERSION})
    assert server.mcp_sessions(session) == server.max_sessions == MAX_SESSIONS
    assert live_transports() - before <= server.max_sessions
    assert gone.status_code == 404 and kept.status_code == 200  # the oldest idle one went


def test_an_unknown_method_is_method_not_found(server: ToolServer) -> None:
    session = opened(server)
    path = f"/s/{session.id}/mcp"
    sid = mcp_session(server, path)
    answer = post(server, path, {"jsonrpc": "2.0", "id": 7, "method": "tools/frobnicate"},
                  mcp_session_id=sid, **VERSION)
    assert answer.json()["error"]["code"] == -32601 and answer.json()["id"] == 7
    assert post(server, path, LIST, mcp_session_id=sid, **VERSION).status_code == 200


def serve(tmp_path: Path, samples: Path, *args: str) -> tuple[subprocess.Popen[str],
                                                               dict[str, Any]]:
    """``tooleval serve appbench --category ss --json`` running, and what it printed."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tooleval_agents", "serve", "appbench", "--category", "ss",
         "--json", "--data-dir", str(samples), "--out", str(tmp_path), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    assert proc.stdout is not None
    served = json.loads(proc.stdout.readline() or "{}")
    if not served:
        proc.kill()
        raise AssertionError(proc.communicate()[1][-3000:])
    return proc, served


def raw(url: str, key: str, body: Any, **headers: str) -> httpx.Response:
    return httpx.post(url, json=body, timeout=60, headers={
        "Authorization": f"Bearer {key}", "Accept": ACCEPT, **headers})


def test_serve_opens_canonical_indexes_only(tmp_path: Path, samples: Path) -> None:
    proc, served = serve(tmp_path, samples, "--secret", "a-secret-of-the-test")
    try:
        one = served["sessions"][1]
        assert one["key"] == derive("a-secret-of-the-test", "1")  # the documented derivation
        assert raw(one["url"], one["key"], INITIALIZE).status_code == 200
        base = one["url"].rsplit("/s/", 1)[0]
        for alias in ("01", "001"):  # not a second session of example 1, whatever the key
            assert raw(f"{base}/s/{alias}/mcp", one["key"], INITIALIZE).status_code == 401
            assert raw(f"{base}/s/{alias}/mcp", derive("a-secret-of-the-test", alias),
                       INITIALIZE).status_code == 404
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=HANG_GUARD_S)
    log = list(read_log(tmp_path / "serve-appbench-plan-ss" / "mcp_calls.jsonl"))
    assert [(r["event"], r["example"]) for r in log if r["kind"] == "session"] == [
        ("opened", "1"), ("closed", "1")]
    assert [r["session"] for r in log if r["kind"] == "foreign_call"] == ["01", "001"]


def test_serve_stops_on_sigterm_closing_its_sessions(tmp_path: Path, samples: Path) -> None:
    proc, served = serve(tmp_path, samples)
    try:
        for example in served["sessions"][:2]:
            assert raw(example["url"], example["key"], INITIALIZE).status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=HANG_GUARD_S)
    assert proc.returncode == 0, err
    assert err.rstrip().endswith("stopped.")
    log = list(read_log(tmp_path / "serve-appbench-plan-ss" / "mcp_calls.jsonl"))
    assert sorted((r["event"], r["example"]) for r in log if r["kind"] == "session") == [
        ("closed", "0"), ("closed", "1"), ("opened", "0"), ("opened", "1")]
