"""A strategy of the user's own (not ours, no ``<input>`` tags, no gold-answer plumbing) is
scored on its ``prediction``, whatever its last model text says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import RunnableLambda

from tooleval_agents import registry
from tooleval_agents.contracts import Strategy, StrategyContext
from tooleval_agents.data.langsmith_datasets import to_examples
from tooleval_agents.models.chat_models import ScriptedChatModel
from tooleval_agents.registry import get_benchmark, register_strategy
from tooleval_agents.run.runner import run_experiment


class Oracle(Strategy):
    """Says "Done." to the model and predicts the answers it was given."""

    benchmark, name = "ultratool", "oracle"

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers

    def build(self, ctx: StrategyContext) -> Any:
        async def solve(state: dict[str, Any]) -> dict[str, Any]:
            reply = await ctx.model.ainvoke("Done?")
            return {"raw_outputs": [reply.text],
                    "prediction": self.answers[state["inputs"]["question"]]}
        return RunnableLambda(solve)


def test_a_custom_strategy_is_scored_on_its_prediction(samples: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    split = get_benchmark("ultratool").split("tool_usage", "en")
    gold = {e.inputs["question"]: (e.outputs or {})["reference"]
            for e in to_examples(split, samples)}
    monkeypatch.setattr(registry, "_STRATEGIES", {})
    register_strategy(Oracle(gold))
    summary = run_experiment("ultratool", task="tool_usage", subset="en", strategy="oracle",
                             model=ScriptedChatModel(rules=[], default="Done."),
                             data_dir=samples, out=tmp_path, cache=False, progress=False)
    assert summary.counts["ok"] == len(gold)
    assert summary.metrics["tool_usage"] == 100.0

    with pytest.raises(ValueError, match="cannot run with the offline model"):
        run_experiment("ultratool", task="tool_usage", subset="en", strategy="oracle",
                       model="reference", data_dir=samples, out=tmp_path, progress=False)
