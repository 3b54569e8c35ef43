"""An agent on the OpenAI Agents SDK (PyPI ``openai-agents``) over one benchmark example's MCP
tools, on the run's own model: no model or key of its own.

tooleval runs it once per example and serves it the run's model through its gateway::

    tooleval run appbench --category ss --model reference --agent-name openai-agents-sdk \\
        --agent-cmd 'python examples/openai_agents_sdk.py'

(``--agent-preset openai-agents`` runs this same file, with ``--json``, and reads what it
reports; docs/mcp.md "Agents people use".) The SDK finds the gateway as it finds OpenAI:
``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` are the example's own, ``TOOLEVAL_MODEL`` the model
name to send. The MCP session is ``$TOOLEVAL_MCP_URL`` (its bearer token in
``$TOOLEVAL_MCP_TOKEN``), the request comes on standard input, the final answer goes to
standard output and the SDK's own token count to ``$TOOLEVAL_USAGE_FILE`` (the harness counts
the tokens itself and keeps this one beside its count). Tracing is off: the SDK would send its
traces to OpenAI.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    Runner,
    set_tracing_disabled,
)
from agents.mcp import MCPServerStreamableHttp
from openai import AsyncOpenAI


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--api", choices=["responses", "chat"], default="responses",
                        help="the Responses API (the SDK's default) or Chat Completions")
    parser.add_argument("--max-turns", type=int, default=12, help="model answers at most")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object (answer, turns, usage) instead of the answer")
    return parser.parse_args()


def usage_of(result: Any) -> dict[str, int]:
    """The SDK's own count of the run's tokens and model requests."""
    usage = result.context_wrapper.usage
    return {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
            "cached_input_tokens": usage.input_tokens_details.cached_tokens or 0,
            "model_calls": usage.requests}


async def main() -> int:
    args = arguments()
    set_tracing_disabled(True)
    request = sys.stdin.read()
    client = AsyncOpenAI(max_retries=0)  # the harness's retry policy runs behind the gateway
    name = os.environ["TOOLEVAL_MODEL"]
    model = (OpenAIResponsesModel(name, client) if args.api == "responses"
             else OpenAIChatCompletionsModel(name, client))
    server = MCPServerStreamableHttp(
        {"url": os.environ["TOOLEVAL_MCP_URL"],
         "headers": {"Authorization": f"Bearer {os.environ['TOOLEVAL_MCP_TOKEN']}"}},
        name="bench", cache_tools_list=True)
    try:
        await server.connect()
    except Exception as exc:  # a wrong URL or token: say so, never answer without tools
        print(json.dumps({"mcp": "failed", "error": f"{type(exc).__name__}: {exc}"[:300]})
              if args.json else f"the MCP session did not open: {exc}", file=sys.stderr)
        return 3
    try:
        agent = Agent(name="assistant", model=model, mcp_servers=[server])
        result = await Runner.run(agent, request, max_turns=args.max_turns)
    finally:
        await server.cleanup()
    usage = usage_of(result)
    if os.environ.get("TOOLEVAL_USAGE_FILE"):
        with open(os.environ["TOOLEVAL_USAGE_FILE"], "w", encoding="utf-8") as out:
            json.dump(usage, out)
    answer = str(result.final_output or "")
    print(json.dumps({"final": answer, "turns": len(result.raw_responses), "usage": usage,
                      "mcp": "connected"}) if args.json else answer)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
