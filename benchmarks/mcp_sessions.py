"""``tooleval serve`` under a client that never lets go: its memory after thousands of
``initialize`` to one example, and how many example sessions 8 first requests at once open.

A ``tooleval serve appbench --category ss`` process on 127.0.0.1; the figures are read from it:

* its resident memory (``VmRSS``) after one ``initialize``, after N more to the same example
  (each a new MCP session, none ended by its client: a client that reconnects in a loop), and
  2 s later. Target: N=4,000 raise it by under 10 MB (an example keeps a bounded number of MCP
  sessions; the SDK's session manager kept every one: +250 MB);
* 8 clients sending their first request to an example at once (then each a ``tools/list`` on
  the MCP session it was given): the ``opened`` events the call log holds for it (target: 1)
  and the answers of the follow-ups (target: all 200).

It reads the server's ``--json`` line for each example's URL and key (a server before
per-example keys printed one token: that is used then, so the same script measures both).

    .venv/bin/python benchmarks/mcp_sessions.py [--initialize 4000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ACCEPT = "application/json, text/event-stream"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "bench", "version": "0"}}}
SAMPLES = Path(__file__).resolve().parents[1] / "datasets"


def example(served: dict[str, Any], index: int) -> tuple[str, str]:
    """The URL and key of an example (or the URL and the one token of an older server)."""
    if "sessions" in served:
        found = served["sessions"][index]
        return found["url"], found["key"]
    return served["url"].replace("<index>", str(index)), served["token"]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError("no VmRSS")


def first_requests(url: str, key: str, clients: int) -> list[tuple[int, int]]:
    """``clients`` clients' first request at once (each on a connection it opened before),
    then each a tools/list on the MCP session it was given: the statuses."""
    headers = {"Authorization": f"Bearer {key}", "Accept": ACCEPT}

    async def one(http: httpx.AsyncClient, go: asyncio.Event) -> tuple[int, int]:
        await http.get(url.split("/s/")[0] + "/")  # 404: the connection is open
        await go.wait()
        opened = await http.post(url, json=INITIALIZE)
        sid = opened.headers.get("mcp-session-id", "")
        listed = await http.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                                 headers={"mcp-session-id": sid,
                                          "mcp-protocol-version": "2025-06-18"})
        return opened.status_code, listed.status_code

    async def every() -> list[tuple[int, int]]:
        go = asyncio.Event()
        https = [httpx.AsyncClient(headers=headers, timeout=120) for _ in range(clients)]
        try:
            tasks = [asyncio.ensure_future(one(http, go)) for http in https]
            await asyncio.sleep(1.0)  # every connection open
            go.set()
            return list(await asyncio.gather(*tasks))
        finally:
            for http in https:
                await http.aclose()

    return asyncio.run(every())


def measure(initialize: int, clients: int, out: Path) -> dict[str, Any]:
    server = subprocess.Popen(
        [sys.executable, "-m", "tooleval_agents", "serve", "appbench", "--category", "ss",
         "--json", "--data-dir", str(SAMPLES), "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert server.stdout is not None
        served = json.loads(server.stdout.readline())
        statuses = first_requests(*example(served, 1), clients)
        url, key = example(served, 0)
        with httpx.Client(headers={"Authorization": f"Bearer {key}", "Accept": ACCEPT},
                          timeout=120) as http:
            http.post(url, json=INITIALIZE).raise_for_status()
            before, started = rss_mb(server.pid), time.perf_counter()
            for _ in range(initialize):
                http.post(url, json=INITIALIZE).raise_for_status()
            wall = time.perf_counter() - started
            after = rss_mb(server.pid)
            time.sleep(2)
            later = rss_mb(server.pid)
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=60)
    log = [json.loads(line) for line in
           (out / "serve-appbench-plan-ss" / "mcp_calls.jsonl").read_text().splitlines()]
    opened = sum(r.get("event") == "opened" and r.get("example") == "1" for r in log)
    return {"initialize": initialize, "rss_before_mb": before, "rss_after_mb": after,
            "rss_2s_later_mb": later, "ms_per_initialize": round(1000 * wall / initialize, 2),
            "first_requests_at_once": clients, "example_sessions_opened": opened,
            "follow_ups_200": sum(listed == 200 for _, listed in statuses)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--initialize", type=int, default=4000)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(measure(args.initialize, args.clients, Path(tmp))))


if __name__ == "__main__":
    main()
