"""A scripted outside agent for the tests: a separate process that plays the gold plan of an
example through its MCP session (``--agent-cmd``), as the offline ``reference`` model plays it
in the run. It imports nothing of the project and no MCP SDK: it speaks the protocol's
JSON-RPC over streamable HTTP with ``httpx`` (as an agent in another language would), which
also keeps its start-up short.

It reads the request on standard input, finds its plan in ``SCRIPTED_PLANS`` (a JSON object
the test wrote: request -> the strategy's gold tool plan; the server reveals no gold),
connects to ``TOOLEVAL_MCP_URL`` with ``TOOLEVAL_MCP_TOKEN``, makes the plan's calls in order
-- each referenced value taken from the earlier call's answer -- and prints the plan's final
answer. It writes its usage (one call, 10 and 2 tokens) to ``TOOLEVAL_USAGE_FILE`` when
``SCRIPTED_USAGE=1``.

Misbehaviours on demand (``SCRIPTED_MODE``): ``late`` (a detached child calls until the
session has ended, then writes the status it got to ``SCRIPTED_MARKER``), ``kill_me`` (on the
example whose request holds ``SCRIPTED_KILL``: one call, then write ``SCRIPTED_MARKER`` and wait
to be killed), ``snoop`` (once its sibling runs too, read the environment of every process on
the machine, call each sibling's ``TOOLEVAL_MCP_URL`` of the same server with its own key, and
write the statuses it got, its key and its working directory to ``SCRIPTED_MARKER/done-<pid>``;
then play its own plan).
``SCRIPTED_WAIT_FOR``: a file to wait for before answering.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

VERSION = "2025-06-18"


class Mcp:
    """The few JSON-RPC calls an agent needs, over streamable HTTP (JSON responses)."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.next_id = url, 0
        self.http = httpx.Client(headers={"Authorization": f"Bearer {token}",
                                          "Accept": "application/json, text/event-stream"},
                                 timeout=120)
        info = self.request("initialize", {"protocolVersion": VERSION, "capabilities": {},
                                           "clientInfo": {"name": "scripted", "version": "1"}})
        assert "capabilities" in info, info
        self.notify("notifications/initialized")

    def send(self, body: dict[str, Any]) -> httpx.Response:
        response = self.http.post(self.url, json=body)
        response.raise_for_status()
        if sid := response.headers.get("mcp-session-id"):
            self.http.headers["mcp-session-id"] = sid
        return response

    def notify(self, method: str) -> None:
        self.send({"jsonrpc": "2.0", "method": method})

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        reply = self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                           "params": params}).json()
        return reply["result"]

    def call(self, name: str, args: dict[str, Any]) -> tuple[str, bool]:
        result = self.request("tools/call", {"name": name, "arguments": args})
        return "".join(b.get("text", "") for b in result["content"]), bool(result.get("isError"))


def play(mcp: Mcp, plan: dict[str, Any], mode: str, request: str) -> None:
    answers: dict[str, Any] = {}
    for i, call in enumerate(plan["calls"]):
        args = dict(call.get("args") or {})
        for key, ref in (call.get("refs") or {}).items():
            value = answers.get(ref["call"])
            args[key] = value.get(ref["key"], "unknown") if isinstance(value, dict) \
                else "unknown"
        text, error = mcp.call(call["name"], args)
        try:
            answers[call["id"]] = None if error else json.loads(text)
        except ValueError:
            answers[call["id"]] = None
        if i == 0 and mode == "kill_me" and os.environ.get("SCRIPTED_KILL", "\0") in request:
            Path(os.environ["SCRIPTED_MARKER"]).write_text(str(os.getpid()), encoding="utf-8")
            time.sleep(3600)


def wait_for(folder: Path, prefix: str, count: int) -> None:
    for _ in range(2400):
        if len(list(folder.glob(f"{prefix}-*"))) >= count:
            return
        time.sleep(0.05)


def siblings(url: str) -> list[str]:
    """The MCP URLs of the other agents of this server, read from their environments."""
    here, found = url.split("/s/")[0], set()
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            values = environ.read_bytes().split(b"\0")
        except OSError:
            continue
        for value in values:
            if value.startswith(b"TOOLEVAL_MCP_URL="):
                other = value.split(b"=", 1)[1].decode()
                if other != url and other.startswith(here):
                    found.add(other)
    return sorted(found)


def intrude(url: str, token: str) -> int:
    """Open an MCP session at ``url`` with ``token`` and call a tool there: the status of the
    first request refused, else of the call."""
    headers = {"Authorization": f"Bearer {token}",
               "Accept": "application/json, text/event-stream"}
    with httpx.Client(timeout=60, headers=headers) as http:
        opened = http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                      "params": {"protocolVersion": VERSION, "capabilities": {},
                                                 "clientInfo": {"name": "snoop", "version": "1"}}})
        if opened.status_code != 200:
            return opened.status_code
        http.headers["mcp-session-id"] = opened.headers.get("mcp-session-id", "")
        http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        return http.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "Weather__getweather", "arguments": {"city": "INTRUDER"}}}).status_code


def snoop(url: str, token: str) -> None:
    """Call every sibling's session with this agent's own key (see the module docstring)."""
    folder = Path(os.environ["SCRIPTED_MARKER"])
    (folder / f"ready-{os.getpid()}").write_text("")
    wait_for(folder, "ready", 2)
    statuses = [intrude(other, token) for other in siblings(url)]
    (folder / f"done-{os.getpid()}").write_text(json.dumps(
        {"statuses": statuses, "key": token, "cwd": os.getcwd()}))
    wait_for(folder, "done", 2)  # the sibling is still there while the other one looks


def late_call() -> None:
    """Say its PID (in ``SCRIPTED_MARKER.pid``: its agent ends once it is there), list the
    tools until the session is gone (404), then mark it done."""
    Path(os.environ["SCRIPTED_MARKER"] + ".pid").write_text(str(os.getpid()), encoding="utf-8")
    url, token = os.environ["TOOLEVAL_MCP_URL"], os.environ["TOOLEVAL_MCP_TOKEN"]
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Authorization": f"Bearer {token}",
               "Accept": "application/json, text/event-stream"}
    status: int | str = 0
    for _ in range(2400):
        try:
            status = httpx.post(url, json=body, headers=headers).status_code
        except httpx.HTTPError as exc:  # the server is gone: say so
            status = f"error: {exc}"
            break
        if status == 404:
            break
        time.sleep(0.05)
    Path(os.environ["SCRIPTED_MARKER"]).write_text(str(status), encoding="utf-8")


def wait_for_file(path: Path) -> None:
    """Wait (up to 2 minutes) until ``path`` exists."""
    for _ in range(2400):
        if path.exists():
            return
        time.sleep(0.05)


def main() -> None:
    mode = os.environ.get("SCRIPTED_MODE", "")
    if mode == "late":  # a child that would outlive its session (in a session of its own)
        subprocess.Popen([sys.executable, __file__, "--late"], start_new_session=True,
                         env=dict(os.environ))
        wait_for_file(Path(os.environ["SCRIPTED_MARKER"] + ".pid"))  # it runs before we end
    request = sys.stdin.read()
    plans = json.loads(Path(os.environ["SCRIPTED_PLANS"]).read_text(encoding="utf-8"))
    plan = plans[request]
    if mode == "snoop":
        snoop(os.environ["TOOLEVAL_MCP_URL"], os.environ["TOOLEVAL_MCP_TOKEN"])
    play(Mcp(os.environ["TOOLEVAL_MCP_URL"], os.environ["TOOLEVAL_MCP_TOKEN"]), plan, mode,
         request)
    if wait := os.environ.get("SCRIPTED_WAIT_FOR"):  # keep the run going until it exists
        for _ in range(2400):
            if Path(wait).exists():
                break
            time.sleep(0.05)
    if os.environ.get("SCRIPTED_USAGE") == "1":
        Path(os.environ["TOOLEVAL_USAGE_FILE"]).write_text(
            json.dumps({"input_tokens": 10, "output_tokens": 2, "model_calls": 1}))
    print(plan["final"])


if __name__ == "__main__":
    late_call() if sys.argv[1:] == ["--late"] else main()
