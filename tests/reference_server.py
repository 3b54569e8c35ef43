"""The offline ``reference`` model behind an OpenAI-compatible endpoint on 127.0.0.1.

A run against it is a provider run in every respect (HTTP, retries, the request scheduler,
batching, a latency per answer) while its answers are the gold ones, so its scores are known
(100 on the strict metrics) and a change in them is the harness's. Used by the cost tests and
by ``benchmarks/prefix_cache.py`` and ``benchmarks/sweep_overlap.py``.

    responder = ReferenceResponder("appbench", "ss", "hierarchical", data_dir="datasets")
    with FakeOpenAI(responder) as server:
        run_experiment("appbench", subset="ss", strategy="hierarchical",
                       model="openai:gold", model_kwargs={"base_url": server.base_url,
                                                          "api_key": "sk-test"})
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

from fake_openai import ChatRequest, Reply
from langchain_core.messages import AIMessage, convert_to_messages

from tooleval_agents.contracts import StrategyContext
from tooleval_agents.data.langsmith_datasets import to_examples
from tooleval_agents.models.reference import AnswerKey
from tooleval_agents.models.specs import resolve_model
from tooleval_agents.registry import get_benchmark, get_strategy, resolve_split


class ReferenceResponder:
    """A :class:`fake_openai.FakeOpenAI` responder answering as ``model`` (``reference`` or
    ``noisy-reference:RATE``) for one split and strategy, after ``latency`` seconds."""

    def __init__(self, benchmark: str, subset: str, strategy: str, *,
                 data_dir: str | Path, task: str | None = None,
                 options: dict[str, Any] | None = None, model: str = "reference",
                 latency: float = 0.0) -> None:
        bench = get_benchmark(benchmark)
        split = resolve_split(bench, task, subset)
        strat = copy.copy(get_strategy(benchmark, strategy))
        key = AnswerKey()
        chat = resolve_model(model, answer_key=key)
        # Built once, as the runner does: an official prompt set states its own markers.
        strat.build(StrategyContext(model=chat, split=split, data_dir=Path(data_dir),
                                    options=dict(options or {})))
        for example in to_examples(split, Path(data_dir)):
            inputs, outputs = example.inputs or {}, example.outputs or {}
            key.add(strat.input_key(split, inputs),
                    strat.gold_answers(split, inputs, outputs))  # type: ignore[attr-defined]
        self.model = chat
        self.latency = latency

    def __call__(self, request: ChatRequest) -> Reply:
        if self.latency:
            time.sleep(self.latency)
        return answer(self.model, request.body)


def answer(model: Any, body: dict[str, Any]) -> Reply:
    """The reply of ``model`` to an OpenAI chat-completion request body, as a message dict."""
    messages = convert_to_messages(body.get("messages") or [])
    kwargs = {"tools": body["tools"]} if body.get("tools") else {}
    message = model.invoke(messages, **kwargs)
    assert isinstance(message, AIMessage)
    reply: dict[str, Any] = {"content": message.text}
    if message.tool_calls:
        reply["tool_calls"] = [
            {"id": call.get("id") or f"call_{i}", "type": "function",
             "function": {"name": call["name"], "arguments": json.dumps(call["args"])}}
            for i, call in enumerate(message.tool_calls)]
    return reply


__all__ = ["ReferenceResponder", "answer"]
