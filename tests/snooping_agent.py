"""A snooping agent for the sandbox tests (``--agent-cmd``): it tries what an agent with file
and shell tools could try on the user's machine, and prints what it got as its answer (one
JSON object). Standard library only (it runs sealed, where nothing else need be installed).

* ``siblings``: the other agents' sessions, read from every process's environment in
  ``/proc`` (``TOOLEVAL_MCP_URL`` and its key), and the HTTP status each answered to an
  ``initialize`` sent with this agent's own key (``foreign``) and with the sibling's key read
  beside its URL (``stolen``); ``own``: its own session's status (the relay works); ``server``:
  its own session's host and port (other runs' agents may be running too);
* ``processes``: how many processes it sees;
* ``data_hits``: files under ``SNOOP_DATA`` (the run's data directory) that hold its own
  request's words (the gold answer is beside them);
* ``run_files``: the run's files under ``SNOOP_RUNS`` (the runs root) it could read;
* ``secret``: what it read of ``SNOOP_SECRET`` (a file in the user's home);
* ``host_port``: whether ``127.0.0.1:SNOOP_PORT`` (a server of the host, not its session)
  accepted a connection.

``SNOOP_BARRIER`` (a folder) and ``SNOOP_N``: wait until ``SNOOP_N`` agents have arrived there
before looking (so that siblings overlap; unsealed only).
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

# Beside it (its folder is first on the path): its own session opened and its tools listed.
from listing_agent import reach

INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "snoop", "version": "1"}}}).encode()


def status(url: str, token: str) -> int | str:
    request = urllib.request.Request(url, data=INITIALIZE, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except OSError as exc:
        return f"error: {exc}"


def environments() -> list[dict[str, str]]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            raw = (entry / "environ").read_bytes()
        except OSError:
            continue
        env = dict(item.split("=", 1) for item in raw.decode("utf-8", "replace").split("\0")
                   if "=" in item)
        if "TOOLEVAL_MCP_URL" in env:
            found.append(env)
    return found


def data_hits(root: str, request: str) -> list[str]:
    own = request.rsplit("Request:", 1)[-1]  # the user's words, after the instructions
    words = max(re.findall(r"[A-Za-z][A-Za-z ]{19,}", own), key=len, default="")[:40]
    hits = []
    for folder, _, files in os.walk(root):
        for name in files:
            try:
                text = (Path(folder) / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if words and words in text:
                hits.append(str(Path(folder) / name))
    return hits


def run_files(root: str) -> list[str]:
    readable = []
    for pattern in ("*/examples.jsonl", "*/mcp_calls.jsonl", "*/config.json"):
        for path in Path(root).glob(pattern):
            try:
                path.read_bytes()
                readable.append(str(path))
            except OSError:
                pass
    return readable


def host_port(port: str) -> str:
    try:
        with socket.create_connection(("127.0.0.1", int(port)), timeout=5):
            return "open"
    except OSError as exc:
        return f"closed: {exc}"


def barrier() -> None:
    folder = os.environ.get("SNOOP_BARRIER")
    if not folder:
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    (Path(folder) / str(os.getpid())).touch()
    for _ in range(1200):
        if len(list(Path(folder).iterdir())) >= int(os.environ["SNOOP_N"]):
            return
        time.sleep(0.05)


def main() -> None:
    request = sys.stdin.read()
    barrier()
    own = os.environ["TOOLEVAL_MCP_URL"]
    others = {e["TOOLEVAL_MCP_URL"]: e.get("TOOLEVAL_MCP_TOKEN", "") for e in environments()
              if e["TOOLEVAL_MCP_URL"] != own}
    secret = os.environ.get("SNOOP_SECRET", "")
    try:
        read = Path(secret).read_text(encoding="utf-8") if secret else None
    except OSError:
        read = None
    found = {
        "own": reach(own, os.environ["TOOLEVAL_MCP_TOKEN"]),
        "server": urlsplit(own).netloc,
        "siblings": sorted(others),
        "foreign": {url: status(url, os.environ["TOOLEVAL_MCP_TOKEN"]) for url in others},
        "stolen": {url: status(url, token) for url, token in others.items()},
        "processes": sum(p.name.isdigit() for p in Path("/proc").iterdir()),
        "data_hits": data_hits(os.environ.get("SNOOP_DATA", "/nonexistent"), request),
        "run_files": run_files(os.environ.get("SNOOP_RUNS", "/nonexistent")),
        "secret": read,
        "host_port": host_port(os.environ["SNOOP_PORT"]) if "SNOOP_PORT" in os.environ
        else None,
    }
    print(json.dumps(found))


if __name__ == "__main__":
    main()
