"""Shared helpers of the MCP tests: a client session on a served example, and raw HTTP."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tooleval_agents.mcp.server import ToolServer
from tooleval_agents.mcp.sessions import ExampleSession

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
    async with (httpx.AsyncClient(headers=headers, verify=False) as http,
                streamable_http_client(server.url(session), http_client=http) as (read, write, _),
                ClientSession(read, write) as client):
        await client.initialize()
        yield client


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
