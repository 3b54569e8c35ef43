"""An agent that reaches its tools and does nothing else with them: it opens its MCP session
(``initialize``, ``notifications/initialized``) and lists its tools (``tools/list``) with its
own key, then prints its arguments (``done`` without any) as its answer. Standard library
only, so that it runs sealed as well as unsealed.

An agent that never listed nor called its tools is ``agent_no_tools`` (a wiring failure, not a
measure of it); the tests whose agents do something else (leave a child running, hang, snoop)
start with this one, so that what they test is not that.

    python listing_agent.py [ANSWER...]      # TOOLEVAL_MCP_URL, TOOLEVAL_MCP_TOKEN
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "listing-agent", "version": "1"}}}


def post(url: str, token: str, body: dict[str, object],
         session: str | None = None) -> tuple[int, str | None]:
    """The status of one JSON-RPC message posted to ``url``, and the session id answered."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream",
               **({"Mcp-Session-Id": session} if session else {})}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            answer.read()
            return int(answer.status), answer.headers.get("Mcp-Session-Id")
    except urllib.error.HTTPError as exc:
        return int(exc.code), None


def reach(url: str, token: str) -> int:
    """Open the session at ``url`` with ``token`` and list its tools: the status of
    ``tools/list`` (that of ``initialize`` when it was refused)."""
    opened, session = post(url, token, INITIALIZE)
    if opened != 200:
        return opened
    post(url, token, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    listed, _ = post(url, token, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, session)
    return listed


def main() -> None:
    status = reach(os.environ["TOOLEVAL_MCP_URL"], os.environ["TOOLEVAL_MCP_TOKEN"])
    if status != 200:
        sys.exit(f"listing-agent: tools/list answered {status}")
    print(" ".join(sys.argv[1:]) or "done")


if __name__ == "__main__":
    main()
