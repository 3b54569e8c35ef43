"""The trivia benchmark: its splits, data, scorer, strategy, data source and report table."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import StructuredTool
from pydantic import BaseModel

from tooleval_agents import (
    AgentIO,
    Benchmark,
    ExampleFields,
    ExampleScore,
    GoldAnswer,
    Located,
    Options,
    Part,
    ReportTable,
    RunData,
    Scorer,
    Split,
    Strategy,
    StrategyContext,
    as_corpus,
)

MARKER = "Answer in one word."
FR_SHA256 = "456f0a086042894033af55eade04a5edbda0de51cd688f6bf0a9fb730532ad10"


class Question(BaseModel):
    """One record of a split file."""

    question: str
    answer: str


class TriviaScoring(Options):
    """The scoring options (``--scoring`` / ``-O scoring=``)."""

    scoring: Literal["lenient", "exact"] = "lenient"


class Direct(Strategy):
    """Ask the question, take the whole reply as the answer."""

    benchmark, name = "trivia", "direct"

    def build(self, ctx: StrategyContext) -> Any:
        async def ask(state: dict[str, Any]) -> dict[str, Any]:
            prompt = f"{MARKER}\n<input>{state['inputs']['question']}</input>"
            reply = await ctx.model.ainvoke(prompt)
            return {"raw_outputs": [reply.text], "prediction": reply.text}
        return RunnableLambda(ask)

    def input_key(self, split: Split, inputs: dict[str, Any]) -> str:
        return str(inputs["question"])

    def gold_answers(self, split: Split, inputs: dict[str, Any],
                     reference_outputs: dict[str, Any]) -> list[GoldAnswer]:
        return [GoldAnswer(MARKER, reference_outputs["answer"], "plan_text")]


def count_letters(text: str) -> dict[str, int]:
    """Count the letters of a text."""
    return {"letters": sum(c.isalpha() for c in text)}


def final_text(messages: Sequence[BaseMessage]) -> str:
    """The last model answer's text."""
    return next((m.text for m in reversed(messages) if m.type == "ai"), "")


class Trivia(Benchmark):
    """Two splits (fr, es) of one task, ``qa``."""

    name = "trivia"
    title = "Trivia"

    def splits(self) -> list[Split]:
        return [Split("trivia", "qa", lang, "language") for lang in ("fr", "es")]

    def locate(self, split: Split, data_dir: Path) -> Located:
        return Located(Path(data_dir) / "trivia" / f"{split.subset}.jsonl", "official")

    def load(self, split: Split, data_dir: Path) -> list[Question]:
        text = self.locate(split, data_dir).path.read_text(encoding="utf-8")
        return [Question.model_validate_json(line) for line in text.splitlines() if line]

    def to_example(self, split: Split, record: Any) -> ExampleFields:
        return ExampleFields({"question": record.question}, {"answer": record.answer})

    def scoring_options(self, split: Split) -> type[Options]:
        return TriviaScoring

    def scorer(self, split: Split, *, options: dict[str, Any] | None = None) -> Scorer:
        exact = TriviaScoring.model_validate(options or {}).scoring == "exact"

        def score(inputs: dict[str, Any], outputs: dict[str, Any],
                  reference: dict[str, Any]) -> ExampleScore:
            said, gold = str(outputs.get("prediction") or ""), reference["answer"]
            hit = said == gold if exact else said.strip().lower() == gold.lower()
            return ExampleScore(scores={"correct": 100.0 * hit},
                                parts={"correct": Part(hits=hit, total=1)})

        return Scorer(score=score, aggregate=lambda s: {"correct": as_corpus(s).pooled("correct")},
                      headline=("correct",))

    def default_strategy(self, split: Split) -> str:
        return "direct"

    def strategies(self) -> list[Strategy]:
        return [Direct()]

    def agent_io(self, split: Split) -> AgentIO:
        """An agent with one tool plays the questions (served over MCP as it is)."""
        tool = StructuredTool.from_function(count_letters)
        return AgentIO(
            tools=lambda inputs: [tool],
            messages=lambda inputs: [HumanMessage(f"{MARKER} {inputs['question']}")],
            outputs=lambda inputs, messages: {"prediction": final_text(messages),
                                              "raw_outputs": [final_text(messages)]})

    def read_predictions(self, split: Split, path: Path, count: int) -> list[dict[str, Any]]:
        return [{"prediction": line} for line in path.read_text(encoding="utf-8").splitlines()]

    def data_sources(self) -> dict[str, Any]:
        return {"trivia": {
            "repo": "example/trivia", "commit": "0" * 40,
            "licence": "CC0 (written for the tests)",
            "groups": {"data": "the questions"}, "default_groups": ["data"],
            "files": [{"path": "fr.jsonl", "size": 226, "sha256": FR_SHA256, "group": "data"}]}}

    def report_tables(self, runs: Sequence[RunData]) -> list[ReportTable]:
        frame = pd.DataFrame({"run": [r.label for r in runs],
                              "correct": [r.metrics().get("correct") for r in runs]})
        return [ReportTable("trivia_scoreboard", "Trivia scoreboard", frame.set_index("run"))]


BENCHMARK = Trivia()
