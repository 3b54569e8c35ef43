"""Shared helpers of the MCP tests: a client session on a served example (the official SDK's
client, on either major), and raw HTTP."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared import exceptions

from tooleval_agents.mcp.sdk import MAJOR
from tooleval_agents.mcp.server import ToolServer
from tooleval_agents.mcp.sessions import ExampleSession

McpError: type[Exception] = getattr(exceptions, "McpError", None) or exceptions.MCPError  # type: ignore[attr-defined]
"""What the SDK's client raises for a protocol error (``MCPError`` in 2.x)."""
ACCEPT = "application/json, text/event-stream"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "test", "version": "0"}}}


@contextlib.asynccontextmanager
async def connect(server: ToolServer, session: ExampleSession | str,
                  ) -> AsyncIterator[ClientSession]:
    """An initialized client session (the official SDK's client) on ``session``, with its
    key."""
    headers = {"Authorization": f"Bearer {server.key(session)}"}
    if MAJOR >= 2:  # its client takes httpx2's (and closes its session with DELETE)
        import httpx2  # only 2.x has it

        http: Any = httpx2.AsyncClient(headers=headers)
    else:
        http = httpx.AsyncClient(headers=headers, verify=False)
    async with (http, streamable_http_client(server.url(session), http_client=http) as streams,
                ClientSession(streams[0], streams[1]) as client):
        await client.initialize()
        yield client


def is_error(result: Any) -> bool:
    """A ``tools/call`` result's ``isError`` (``is_error`` in 2.x)."""
    return bool(getattr(result, "isError", None) or getattr(result, "is_error", None))


def post(server: ToolServer, path: str, body: Any, **headers: str) -> httpx.Response:
    """One raw POST (``path`` after the base URL, ``/s/<id>/mcp``); the key of the session it
    names unless ``authorization`` is given."""
    found = re.match(r"^/s/([^/]+)/", path)
    key = server.key(found.group(1)) if found else "none"
    sent = httpx.Headers({"Authorization": f"Bearer {key}", "Accept": ACCEPT,
                          "Content-Type": "application/json"})
    for key, value in headers.items():
        sent[key.replace("_", "-")] = value
    if not sent.get("authorization"):
        del sent["authorization"]
    content = body if isinstance(body, bytes) else httpx.Request(
        "POST", "http://x", json=body).content
    return httpx.post(server.base_url + path, content=content, headers=sent, timeout=60)


def text_of(result: Any) -> str:
    """A ``tools/call`` result's text."""
    return "".join(getattr(block, "text", "") for block in result.content)
