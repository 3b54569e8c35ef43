"""An outside agent on the run's own model: the ``openai`` SDK's tool loop over one benchmark
example's MCP tools (the official ``mcp`` client), with no model or key of its own.

tooleval runs it once per example and serves it the run's model through its gateway
(docs/gateway.md)::

    tooleval run appbench --category ss --model reference --agent-name openai-sdk \\
        --agent-cmd 'python examples/openai_agent.py'

An unchanged ``OpenAI()`` client finds the gateway: ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY``
are the example's own; ``TOOLEVAL_MODEL`` is the model name to send. The MCP session is at
``$TOOLEVAL_MCP_URL`` (its bearer token in ``$TOOLEVAL_MCP_TOKEN``) and the request comes on
standard input. The harness scores the calls the session answered, reads the final answer
from standard output, and counts the model's tokens itself.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from openai import AsyncOpenAI


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api", choices=["chat", "responses"], default="chat",
                        help="Chat Completions or Responses")
    parser.add_argument("--stream", action="store_true", help="ask for streamed answers")
    parser.add_argument("--max-turns", type=int, default=12, help="model answers at most")
    return parser.parse_args()


async def call(session: ClientSession, name: str, arguments: str) -> str:
    """One tool call on the example's session: its text (an error's too)."""
    try:
        args = json.loads(arguments or "{}")
    except ValueError:
        return "Error: the arguments are not JSON"
    result = await session.call_tool(name, args if isinstance(args, dict) else {})
    return "".join(getattr(block, "text", "") for block in result.content)


async def chat(client: AsyncOpenAI, session: ClientSession, tools: list[Any], request: str,
               args: argparse.Namespace) -> str:
    """The Chat Completions loop: the model's calls run on the session until it answers."""
    functions = [{"type": "function", "function": {
        "name": t.name, "description": t.description or "", "parameters": t.inputSchema}}
        for t in tools]
    messages: list[Any] = [{"role": "user", "content": request}]
    for _ in range(args.max_turns):
        if args.stream:
            async with client.chat.completions.stream(
                    model=os.environ["TOOLEVAL_MODEL"], messages=messages,
                    tools=functions) as stream:
                message = (await stream.get_final_completion()).choices[0].message
        else:
            message = (await client.chat.completions.create(
                model=os.environ["TOOLEVAL_MODEL"], messages=messages,
                tools=functions)).choices[0].message  # type: ignore[arg-type]
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for tool_call in message.tool_calls:
            function = tool_call.function  # type: ignore[union-attr]
            messages.append({"role": "tool", "tool_call_id": tool_call.id,
                             "content": await call(session, function.name, function.arguments)})
    return ""


async def responses(client: AsyncOpenAI, session: ClientSession, tools: list[Any],
                    request: str, args: argparse.Namespace) -> str:
    """The Responses loop (``store: false``: the whole input every turn)."""
    functions: list[Any] = [{"type": "function", "name": t.name, "strict": False,
                             "description": t.description or "", "parameters": t.inputSchema}
                            for t in tools]
    items: list[Any] = [{"role": "user", "content": request}]
    for _ in range(args.max_turns):
        if args.stream:
            async with client.responses.stream(model=os.environ["TOOLEVAL_MODEL"], input=items,
                                               tools=functions, store=False) as stream:
                response = await stream.get_final_response()
        else:
            response = await client.responses.create(model=os.environ["TOOLEVAL_MODEL"],
                                                     input=items, tools=functions, store=False)
        calls = [item for item in response.output if item.type == "function_call"]
        if not calls:
            return response.output_text
        for item in calls:
            items.append({"type": "function_call", "call_id": item.call_id, "name": item.name,
                          "arguments": item.arguments})
            items.append({"type": "function_call_output", "call_id": item.call_id,
                          "output": await call(session, item.name, item.arguments)})
    return ""


async def main() -> None:
    args = arguments()
    request = sys.stdin.read()
    headers = {"Authorization": f"Bearer {os.environ['TOOLEVAL_MCP_TOKEN']}"}
    async with (httpx.AsyncClient(headers=headers) as http,
                streamable_http_client(os.environ["TOOLEVAL_MCP_URL"], http_client=http)
                as (read, write, _),
                ClientSession(read, write) as session):  # one session: the example's state
        await session.initialize()
        tools = (await session.list_tools()).tools
        loop = chat if args.api == "chat" else responses
        answer = await loop(AsyncOpenAI(max_retries=0), session, tools, request, args)
    print(answer)


if __name__ == "__main__":
    asyncio.run(main())
