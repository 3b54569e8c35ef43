"""An outside agent scored by tooleval: LangChain's ``create_agent`` with any ``provider:model``
on one benchmark example's tools, taken over MCP with ``langchain-mcp-adapters``.

tooleval runs it once per example (docs/mcp.md)::

    tooleval run appbench --category ss --agent-name create-agent \\
        --agent-cmd 'python examples/mcp_agent.py --model openai:gpt-4o-mini'

The harness serves the example's tools at ``$TOOLEVAL_MCP_URL`` (its bearer token in
``$TOOLEVAL_MCP_TOKEN``) and sends the request on standard input; it scores the calls the
session logged and reads the final answer from standard output. The agent reports its token
usage in ``$TOOLEVAL_USAGE_FILE``, so the run's tokens and cost are known.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

from langchain.agents import create_agent
from langchain.chat_models import init_chat_model
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools
from langgraph.errors import GraphRecursionError


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=os.environ.get("TOOLEVAL_MODEL") or None,
                        required=not os.environ.get("TOOLEVAL_MODEL"),
                        help="provider:model (default: tooleval's --model)")
    parser.add_argument("--model-arg", action="append", default=[], metavar="KEY=VALUE",
                        help="an init_chat_model argument (a JSON value is read as JSON)")
    parser.add_argument("--max-turns", type=int, default=12, help="model answers at most")
    return parser.parse_args()


class Usage(BaseCallbackHandler):
    """The model's token usage, call by call (what tooleval cannot see of an outside agent)."""

    def __init__(self) -> None:
        self.total = {"input_tokens": 0, "output_tokens": 0, "model_calls": 0}

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        self.total["model_calls"] += 1
        for generation in (g for gs in response.generations for g in gs):
            usage = getattr(getattr(generation, "message", None), "usage_metadata", None) or {}
            self.total["input_tokens"] += usage.get("input_tokens", 0)
            self.total["output_tokens"] += usage.get("output_tokens", 0)


def value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


async def main() -> None:
    args = arguments()
    model = init_chat_model(args.model, **dict(
        (key, value(v)) for key, _, v in (a.partition("=") for a in args.model_arg)))
    client = MultiServerMCPClient({"benchmark": {
        "transport": "streamable_http", "url": os.environ["TOOLEVAL_MCP_URL"],
        "headers": {"Authorization": f"Bearer {os.environ['TOOLEVAL_MCP_TOKEN']}"}}})
    usage, answer = Usage(), ""
    async with client.session("benchmark") as session:  # one session: the example's state
        agent = create_agent(model, await load_mcp_tools(session))
        config = {"recursion_limit": 2 * args.max_turns, "callbacks": [usage]}
        try:
            state = await agent.ainvoke({"messages": [("user", sys.stdin.read())]}, config)
            answer = state["messages"][-1].text
        except GraphRecursionError:  # out of turns: the calls made so far are its work
            pass
    with open(os.environ["TOOLEVAL_USAGE_FILE"], "w", encoding="utf-8") as out:
        json.dump(usage.total, out)
    print(answer)


if __name__ == "__main__":
    asyncio.run(main())
