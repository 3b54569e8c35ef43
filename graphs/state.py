"""The state every workflow shares, and how model usage is accumulated into it.

A workflow's input is an example's ``inputs`` dict (under the ``inputs`` key it is wrapped by
:func:`tooleval_agents.graphs.registry.as_target`); its output holds the raw model texts, the parsed
prediction, the execution trace and token usage.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage


class Usage(TypedDict):
    """Token usage of one example (summed over every model call of the workflow)."""

    input_tokens: int
    output_tokens: int
    model_calls: int


def add_usage(left: Usage | None, right: Usage | None) -> Usage:
    """Reducer: usage from successive nodes adds up."""
    a = left or {"input_tokens": 0, "output_tokens": 0, "model_calls": 0}
    b = right or {"input_tokens": 0, "output_tokens": 0, "model_calls": 0}
    return {
        "input_tokens": a["input_tokens"] + b["input_tokens"],
        "output_tokens": a["output_tokens"] + b["output_tokens"],
        "model_calls": a["model_calls"] + b["model_calls"],
    }


def usage_of(message: AIMessage) -> Usage:
    """Usage of one model answer: its tokens, whether it was made now or replayed from a
    response cache (a replay keeps the tokens recorded when it was made: they describe the
    answer, not what this session paid; the run counts that apart)."""
    meta: dict[str, Any] = dict(message.usage_metadata or {})
    return {
        "input_tokens": int(meta.get("input_tokens", 0) or 0),
        "output_tokens": int(meta.get("output_tokens", 0) or 0),
        "model_calls": 1,
    }


class WorkflowState(TypedDict, total=False):
    """State shared by all workflows. Nodes return partial updates."""

    inputs: dict[str, Any]
    """The example's inputs, as in the LangSmith dataset."""
    raw_outputs: Annotated[list[str], operator.add]
    """Every model answer text, in order (one per model call)."""
    prediction: Any
    """The parsed final answer in the task's official output format (what evaluators score)."""
    parse_error: str | None
    """Why the final answer could not be parsed (the prediction is then the empty answer)."""
    trace: Annotated[list[dict[str, Any]], operator.add]
    """Execution trace: one dict per stub call (tool, arguments, result or error), per round."""
    usage: Annotated[Usage, add_usage]
    """Token usage summed over the workflow's model calls."""
    scratch: dict[str, Any]
    """Intermediate results of multi-stage workflows (selected apps, plan, created tools...)."""
