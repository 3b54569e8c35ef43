"""Harness overhead per example: what ``run_experiment`` adds to a workflow's own cost.

A synthetic benchmark (``synthetic``, one single-call strategy) and a chat model that answers
instantly (no thread hop, no sleep) isolate the harness: ``langsmith.aevaluate``, the target
wrapper, retries/accounting, scoring glue, the append to ``examples.jsonl`` (fsynced by a
background thread) and the summary. The workflow alone (``graph.ainvoke`` in a loop) is timed
too and subtracted.

Fixed costs (loading, config, the first-call imports) are removed by timing two run sizes and
dividing the difference by the difference in examples.

Target: < 5 ms per example.

    .venv/bin/python benchmarks/harness_overhead.py [--small 100] [--large 600]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel

from tooleval_agents.contracts import (
    ExampleFields,
    ExampleScore,
    GoldAnswer,
    Located,
    Part,
    RecordMeta,
    Scorer,
    ScoringContext,
    Split,
    Strategy,
    StrategyContext,
)
from tooleval_agents.graphs.common import NodeUpdate, build_messages, input_block, model_call_node
from tooleval_agents.graphs.state import WorkflowState
from tooleval_agents.models.reference import last_input_block
from tooleval_agents.registry import Benchmark, register, register_strategy
from tooleval_agents.results.corpus import as_corpus

MARKER = "Answer the question."


class Record(BaseModel):
    question: str
    answer: str
    meta: RecordMeta | None = None


class SyntheticBenchmark(Benchmark):
    """``synthetic/echo/s<N>``: N generated questions (no files needed)."""

    name = "synthetic"
    sizes: tuple[int, ...] = (1, 8, 10, 40, 64, 80, 100, 256, 320, 512, 600, 640, 1000, 2000,
                              4000)

    def splits(self) -> list[Split]:
        return [Split(self.name, "echo", f"s{n}") for n in self.sizes]

    def locate(self, split: Split, data_dir: Path) -> Located:
        return Located(Path(data_dir), "sample")

    def load(self, split: Split, data_dir: Path) -> list[Record]:
        n = int(split.subset[1:])
        return [Record(question=f"What is item {i}?", answer=f"answer-{i}",
                       meta=RecordMeta(benchmark=self.name, task=split.task, index=i,
                                       source="sample")) for i in range(n)]

    def to_example(self, split: Split, record: Any) -> ExampleFields:
        return ExampleFields(inputs={"question": record.question},
                             outputs={"answer": record.answer})

    def scorer(self, split: Split, *, options: dict[str, Any] | None = None,
               context: ScoringContext | None = None) -> Scorer:
        def score(inputs: dict[str, Any], outputs: dict[str, Any],
                  reference: dict[str, Any]) -> ExampleScore:
            hit = float(outputs.get("prediction") == reference["answer"])
            return ExampleScore(scores={"accuracy": 100 * hit},
                                parts={"accuracy": Part(hits=hit, total=1)})

        return Scorer(score=score,
                      aggregate=lambda s: {"accuracy": as_corpus(s).pooled("accuracy")},
                      headline=("accuracy",))

    def default_strategy(self, split: Split) -> str:
        return "single_call"


class SingleCall(Strategy):
    """One model call, the answer is the prediction."""

    benchmark = "synthetic"
    name = "single_call"

    def build(self, ctx: StrategyContext) -> CompiledStateGraph[Any, Any, Any, Any]:
        async def parse(state: WorkflowState) -> NodeUpdate:  # async: no executor hop
            return {"prediction": state["raw_outputs"][-1].strip()}

        graph = StateGraph(WorkflowState)
        graph.add_node("model", model_call_node(ctx.model, lambda s: build_messages(
            f"{MARKER}\n{input_block(s['inputs']['question'])}")))
        graph.add_node("parse", parse)
        graph.add_edge(START, "model")
        graph.add_edge("model", "parse")
        graph.add_edge("parse", END)
        return graph.compile()

    def input_key(self, split: Split, inputs: dict[str, Any]) -> str:
        return str(inputs["question"])

    def gold_answers(self, split: Split, inputs: dict[str, Any],
                     reference_outputs: dict[str, Any]) -> list[GoldAnswer]:
        return [GoldAnswer(MARKER, reference_outputs["answer"], "plan_text")]


class LatencyChatModel(BaseChatModel):
    """Answers toy prompts correctly after ``latency`` seconds (an async sleep, like network
    I/O; 0: at once)."""

    latency: float = 0.0

    @property
    def _llm_type(self) -> str:
        return "latency-fake"

    def _answer(self, messages: Sequence[BaseMessage]) -> ChatResult:
        block = last_input_block("\n".join(m.text for m in messages)) or ""
        number = block.split("item ")[-1].rstrip("?")
        message = AIMessage(content=f"answer-{number}", usage_metadata={
            "input_tokens": 20, "output_tokens": 2, "total_tokens": 22})
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        time.sleep(self.latency)
        return self._answer(messages)

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                         run_manager: AsyncCallbackManagerForLLMRun | None = None,
                         **kwargs: Any) -> ChatResult:
        if self.latency:
            await asyncio.sleep(self.latency)
        return self._answer(messages)


def register_synthetic() -> SyntheticBenchmark:
    bench = SyntheticBenchmark()
    register(bench)
    register_strategy(SingleCall())
    return bench


def timed_run(n: int, *, latency: float = 0.0, concurrency: int = 1) -> float:
    """Wall seconds of one ``run_experiment`` over ``n`` synthetic examples."""
    return timed_run_finishes(n, latency=latency, concurrency=concurrency)[0]


def timed_run_finishes(n: int, *, latency: float = 0.0,
                       concurrency: int = 1) -> tuple[float, list[float]]:
    """Wall seconds of one ``run_experiment`` over ``n`` synthetic examples, and when each
    example finished (``finished_at`` of its ``examples.jsonl`` line, epoch seconds, sorted)."""
    from tooleval_agents.results.rundir import RunDir
    from tooleval_agents.run.runner import run_experiment

    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        summary = run_experiment("synthetic", subset=f"s{n}", model=LatencyChatModel(
            latency=latency), out=tmp, data_dir=tmp, max_concurrency=concurrency,
            progress=False, cache=False)
        elapsed = time.perf_counter() - started
        finishes = sorted(datetime.fromisoformat(r.finished_at).timestamp()
                          for r in RunDir(Path(tmp) / summary.experiment).results().values())
    assert summary.counts["ok"] == n and summary.metrics["accuracy"] == 100.0, summary
    assert len(finishes) == n, len(finishes)
    return elapsed, finishes


def workflow_only(n: int) -> float:
    """Wall seconds of the bare workflow over ``n`` examples, one at a time."""
    from tooleval_agents.run.runner import as_target

    bench = register_synthetic()
    split = bench.split("echo", f"s{n}")
    graph = SingleCall().build(StrategyContext(model=LatencyChatModel(), split=split))
    target = as_target(graph)
    inputs = [bench.to_example(split, r).inputs for r in bench.load(split, Path("."))]

    async def go() -> float:
        started = time.perf_counter()
        for item in inputs:
            await target(item)
        return time.perf_counter() - started

    return asyncio.run(go())


def main(argv: Sequence[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=600)
    args = parser.parse_args(argv)
    register_synthetic()
    timed_run(8)  # warm up imports and the runner's loop
    workflow_only(args.small)
    results: dict[str, float] = {}
    for concurrency in (1, 8):
        small = timed_run(args.small, concurrency=concurrency)
        large = timed_run(args.large, concurrency=concurrency)
        results[f"run_ms_per_example_c{concurrency}"] = (
            1000 * (large - small) / (args.large - args.small))
    bare = (workflow_only(args.large) - workflow_only(args.small)) / (args.large - args.small)
    results["workflow_ms_per_example"] = 1000 * bare
    for concurrency in (1, 8):
        results[f"overhead_ms_per_example_c{concurrency}"] = (
            results[f"run_ms_per_example_c{concurrency}"] - results["workflow_ms_per_example"])
    results["target_ms"] = 5.0
    print(json.dumps({k: round(v, 3) for k, v in results.items()}, indent=2))
    return results


if __name__ == "__main__":
    sys.exit(0 if main()["overhead_ms_per_example_c1"] < 5.0 else 1)
