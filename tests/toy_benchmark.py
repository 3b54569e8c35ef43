"""A tiny benchmark for the runner's tests: ``toy/echo/{en,c1}``, questions with one-word
answers, and its ``echo`` strategy (ask once, the answer is the prediction). The runner knows no
benchmark by name, so what it does is checked on this one; :func:`register_toy` registers it (for
one test, or for a subprocess).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel

from tooleval_agents import ScoringContext
from tooleval_agents import registry as benchmark_registry
from tooleval_agents.contracts import (
    ExampleFields,
    ExampleScore,
    GoldAnswer,
    Located,
    Options,
    Part,
    RecordMeta,
    Scorer,
    Split,
    Strategy,
    StrategyContext,
)
from tooleval_agents.errors import DatasetMissingError
from tooleval_agents.graphs.common import NodeUpdate, build_messages, input_block, model_call_node
from tooleval_agents.graphs.state import WorkflowState
from tooleval_agents.models.chat_models import ScriptedChatModel
from tooleval_agents.models.reference import last_input_block
from tooleval_agents.registry import Benchmark, register
from tooleval_agents.results.corpus import as_corpus

MARKER = "Answer the question."
LINES_SEEN: list[int] = []
"""What the ``count_lines`` option saw, example by example."""


class ToyRecord(BaseModel):
    """One toy question with its answer."""

    question: str
    answer: str
    meta: RecordMeta | None = None


class ToyBenchmark(Benchmark):
    """``toy/echo/{en,c1}``: questions with one-word answers, read from
    ``<data_dir>/toy/<subset>.jsonl``. One subset is a language, the other a category."""

    name = "toy"

    def splits(self) -> list[Split]:
        return [Split(self.name, "echo", "en", "language"), Split(self.name, "echo", "c1")]

    def strategies(self) -> list[Strategy]:
        return [EchoStrategy()]

    def locate(self, split: Split, data_dir: Path) -> Located:
        path = Path(data_dir) / "toy" / f"{split.subset}.jsonl"
        if not path.is_file():
            raise DatasetMissingError("toy", path, Path(data_dir))
        return Located(path, "sample")

    def load(self, split: Split, data_dir: Path) -> list[ToyRecord]:
        path = self.locate(split, data_dir).path
        lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
        return [ToyRecord(**json.loads(ln), meta=RecordMeta(benchmark="toy", task=split.task,
                                                            index=i, source="sample"))
                for i, ln in enumerate(lines)]

    def to_example(self, split: Split, record: Any) -> ExampleFields:
        return ExampleFields(inputs={"question": record.question},
                             outputs={"answer": record.answer})

    def scorer(self, split: Split, *, options: dict[str, Any] | None = None,
               context: ScoringContext | None = None) -> Scorer:
        """``context.judge``: a chat model asked whether the answer is right (``judged``)."""
        judge = context.judge if context is not None else None

        def score(inputs: dict[str, Any], outputs: dict[str, Any],
                  reference_outputs: dict[str, Any]) -> ExampleScore:
            hit = float(outputs.get("prediction") == reference_outputs["answer"])
            result = ExampleScore(scores={"accuracy": 100.0 * hit},
                                  parts={"accuracy": Part(hits=hit, total=1.0)})
            if judge is not None:
                verdict = float(judge.invoke(f"Is {outputs.get('prediction')} right?").text
                                == "yes")
                result.scores["judged"] = 100.0 * verdict
                result.parts["judged"] = Part(hits=verdict, total=1.0)
            return result

        def aggregate(scores: Sequence[ExampleScore]) -> dict[str, float]:
            out = {"accuracy": as_corpus(scores).pooled("accuracy")}
            if judge is not None:
                out["judged"] = as_corpus(scores).pooled("judged")
            return out

        return Scorer(score=score, aggregate=aggregate, headline=("accuracy",))

    def default_strategy(self, split: Split) -> str:
        return "echo"


class EchoOptions(Options):
    delay: float = 0.0
    call_log: str | None = None
    count_lines: str | None = None


class EchoStrategy(Strategy):
    """Ask the model once, the answer is the prediction. Options: ``delay`` (seconds slept
    before each model call), ``call_log`` (a file that gets one line per model call:
    ``$TOY_RUN<TAB>question``), ``count_lines`` (append to :data:`LINES_SEEN` how many lines
    that file had when the example started). A question containing ``BOOM`` makes the workflow
    raise (a model error). With ``$TOY_HOLD_FROM`` set, the questions numbered from it on
    wait for ever before their model call: a run that cannot finish, for a test to interrupt at
    a known point (an environment variable, not an option: the resumed run is the same run)."""

    benchmark = "toy"
    name = "echo"
    options = EchoOptions

    def build(self, ctx: StrategyContext) -> CompiledStateGraph[Any, Any, Any, Any]:
        delay = float(ctx.options.get("delay", 0))
        call_log = ctx.options.get("call_log")
        count_lines = ctx.options.get("count_lines")

        async def before(state: WorkflowState) -> NodeUpdate:
            question = state["inputs"]["question"]
            scratch: dict[str, Any] = {}
            hold_from = os.environ.get("TOY_HOLD_FROM")
            if hold_from and int(re.findall(r"item (\d+)", question)[0]) >= int(hold_from):
                await asyncio.Event().wait()
            if count_lines:
                file = Path(count_lines)
                LINES_SEEN.append(len(file.read_text().splitlines()) if file.is_file() else 0)
            if delay:
                await asyncio.sleep(delay)
            if call_log:
                with open(call_log, "a", encoding="utf-8") as fh:
                    fh.write(f"{os.environ.get('TOY_RUN', '')}\t{question}\n")
            return {"scratch": scratch}

        def parse(state: WorkflowState) -> NodeUpdate:
            if "BOOM" in state["inputs"]["question"]:
                raise ValueError("the answer cannot be parsed")
            return {"prediction": state["raw_outputs"][-1].strip()}

        graph = StateGraph(WorkflowState)
        graph.add_node("before", before)
        graph.add_node("model", model_call_node(ctx.model, lambda s: build_messages(
            f"{MARKER}\n{input_block(s['inputs']['question'])}")))
        graph.add_node("parse", parse)
        graph.add_edge(START, "before")
        graph.add_edge("before", "model")
        graph.add_edge("model", "parse")
        graph.add_edge("parse", END)
        return graph.compile(name="toy-echo")

    def input_key(self, split: Split, inputs: dict[str, Any]) -> str:
        return str(inputs["question"])

    def gold_answers(self, split: Split, inputs: dict[str, Any],
                     reference_outputs: dict[str, Any]) -> list[GoldAnswer]:
        return [GoldAnswer(marker=MARKER, text=reference_outputs["answer"], format="plan_text")]


def register_toy(monkeypatch: pytest.MonkeyPatch | None = None) -> None:
    """Register the toy benchmark and strategy; with ``monkeypatch`` only for one test (other
    tests list every registered benchmark), without it for the whole process (subprocesses)."""
    if monkeypatch is None:
        register(ToyBenchmark())
        return
    monkeypatch.setitem(benchmark_registry._REGISTRY, "toy", ToyBenchmark())


def write_toy(data_dir: Path, subset: str = "en", n: int = 6, boom: Sequence[int] = ()) -> Path:
    """A toy split of ``n`` questions (those in ``boom`` make the workflow fail)."""
    folder = data_dir / "toy"
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(n):
        q = f"What is item {i}?" + (" BOOM" if i in boom else "")
        lines.append(json.dumps({"question": q, "answer": f"answer-{i}"}))
    path = folder / f"{subset}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return data_dir


def echo_answer(prompt: str) -> str:
    """What a perfect model answers to a toy prompt."""
    block = last_input_block(prompt) or ""
    number = re.search(r"item (\d+)", block)
    return f"answer-{number.group(1)}" if number else "?"


def scripted(**kwargs: Any) -> ScriptedChatModel:
    """A correct toy model that counts its calls."""
    return ScriptedChatModel(rules=[(r"item \d+", echo_answer)], **kwargs)
