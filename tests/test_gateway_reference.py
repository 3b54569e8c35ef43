"""The offline ``reference`` model behind the gateway plays each example's gold calls for an
agent that renames the tools it lists -- Claude Code's ``mcp__bench__<tool>`` over Anthropic
Messages (streamed), Codex's ``namespace`` tool over Responses (calls answered with
``namespace`` and the tool's own name, outputs sent back with Codex's ``Wall time`` preamble)
-- and every AppBench SS sample scores success 100, as in the process."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from gateway_helpers import Served, served
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from tooleval_agents import agent_io_for, evaluators_for, examples_for, reference_model
from tooleval_agents.agents import content_text
from tooleval_agents.mcp.sessions import request_text
from tooleval_agents.models.retry import RetryingChatModel, RetryPolicy
from tooleval_agents.tool_execution import run_tool_call

PREFIX = "mcp__bench__"
Turn = Callable[[Served, list[dict[str, Any]], list[Any]], tuple[list[dict[str, Any]], str]]
"""One model turn of an agent: (its history so far, its tools) -> (calls {id, name, args},
its text)."""


def anthropic_turn(s: Served, history: list[Any], tools: list[Any]) -> tuple[list[Any], str]:
    sdk = anthropic.Anthropic(base_url=s.url, api_key=s.grant.key, max_retries=0)
    listed = [{"name": PREFIX + t["name"], "description": t.get("description", ""),
               "input_schema": t["parameters"]} for t in tools]
    with sdk.beta.messages.stream(model="reference", max_tokens=4096, tools=listed,
                                  messages=history, extra_query={"beta": "true"},
                                  system="You are Claude Code.") as stream:
        reply = stream.get_final_message()
    uses = [b for b in reply.content if b.type == "tool_use"]
    assert all(b.name.startswith(PREFIX) for b in uses)  # the names it listed
    history.append({"role": "assistant", "content": [b.model_dump(exclude_none=True)
                                                     for b in reply.content]})
    return ([{"id": b.id, "name": b.name.removeprefix(PREFIX), "args": b.input} for b in uses],
            "".join(getattr(b, "text", "") for b in reply.content))


def anthropic_results(history: list[Any], answers: list[ToolMessage]) -> None:
    history.append({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": a.tool_call_id, "content": str(a.content),
         "is_error": a.status == "error"} for a in answers]})


def codex_turn(s: Served, history: list[Any], tools: list[Any]) -> tuple[list[Any], str]:
    sdk = openai.OpenAI(base_url=s.openai_url, api_key=s.grant.key, max_retries=0)
    namespace = {"type": "namespace", "name": PREFIX, "description": "MCP server bench",
                 "tools": [{"type": "function", **t} for t in tools]}
    response = sdk.responses.create(model="reference", input=history, tools=[namespace],
                                    store=False, stream=False)
    calls = [i for i in response.output if i.type == "function_call"]
    assert all(c.namespace == PREFIX for c in calls)  # the tool's own name, its namespace
    history += [{k: v for k, v in c.model_dump(exclude_none=True).items() if k != "status"}
                for c in calls]
    return ([{"id": c.call_id, "name": c.name, "args": json.loads(c.arguments)}
             for c in calls], response.output_text)


def codex_results(history: list[Any], answers: list[ToolMessage]) -> None:
    history += [{"type": "function_call_output", "call_id": a.tool_call_id,
                 "output": f"Wall time: 0.0 seconds\nOutput:\n{content_text(a.content)}"}
                for a in answers]


def play(s: Served, turn: Turn, results: Callable[[list[Any], list[ToolMessage]], None],
         inputs: dict[str, Any]) -> list[BaseMessage]:
    """An agent's loop on one example: the model's calls run on the example's tools until it
    answers; the conversation under the tools' own names, as the scorer reads it."""
    io = agent_io_for("appbench", subset="ss")
    tools = {t.name: t for t in io.tools(inputs)}
    listed = [convert_to_openai_tool(t)["function"] for t in tools.values()]
    conversation = list(io.messages(inputs))
    history: list[Any] = [{"role": "user", "content": request_text(conversation)}]
    for _ in range(10):
        calls, text = turn(s, history, listed)
        conversation.append(AIMessage(text, tool_calls=calls))
        if not calls:
            return conversation
        answers = [asyncio.run(run_tool_call(tools.get(c["name"]), c, draw=False))
                   for c in calls]
        conversation += answers
        results(history, answers)
    raise AssertionError("the reference model never gave its final answer")


@pytest.mark.parametrize(("turn", "results"), [(anthropic_turn, anthropic_results),
                                               (codex_turn, codex_results)],
                         ids=["claude-code-names", "codex-namespace"])
def test_the_reference_model_plays_the_gold_calls_of_renamed_tools(
        samples: Path, turn: Turn, results: Callable[[list[Any], list[ToolMessage]], None]
) -> None:
    model = RetryingChatModel(inner=reference_model("appbench", subset="ss", data_dir=samples),
                              policy=RetryPolicy(max_attempts=1))
    row, _ = evaluators_for("appbench", subset="ss", data_dir=samples)
    examples = examples_for("appbench", subset="ss", data_dir=samples)
    with served(model, name="reference") as s:
        for example in examples:
            inputs = dict(example.inputs or {})
            conversation = play(s, turn, results, inputs)
            scores = {f["key"]: f.get("score") for f in row(
                inputs, {"messages": conversation}, dict(example.outputs or {}))}
            assert scores["success"] in (1.0, 100.0), (example.metadata, scores)
            assert any(m.tool_calls for m in conversation if isinstance(m, AIMessage))
        assert s.grant.errors == {} and s.stats.calls == len(s.stats.transcript) > len(examples)
