"""Strategies: named ways of solving a benchmark's task with a chat model, as LangGraph
workflows. Registering a strategy is all it takes to run it: the runner and the evaluators look
strategies up here by ``(benchmark, name)``.

A strategy also states, for the built-in ``reference`` model, which gold answer each of its
prompts asks for (:meth:`Strategy.gold_answers`), keyed by the text its prompts wrap in
``<input>...</input>`` (:meth:`Strategy.input_key`). That is how the reference model recognises
the example from the prompt content alone.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.graph.state import CompiledStateGraph

from tooleval_agents.reference_models import GoldAnswer
from tooleval_agents.registry import Split


@dataclass
class StrategyContext:
    """What a strategy needs to build its workflow."""

    model: BaseChatModel
    """The chat model under test."""
    split: Split
    """The split being run (language or category)."""
    data_dir: Path | None = None
    """Benchmark data directory (demonstrations, few-shot pools, catalog)."""
    options: dict[str, Any] = field(default_factory=dict)
    """Strategy options, e.g. ``{"k": 3}`` for few-shot or ``{"max_rounds": 3}``."""


class Strategy(ABC):
    """A named workflow for one benchmark (and a subset of its tasks)."""

    benchmark: str
    """Benchmark name, e.g. ``appbench``."""
    name: str
    """Strategy name, e.g. ``hierarchical``."""
    tasks: tuple[str, ...] | None = None
    """Tasks it solves (``None``: every task of the benchmark)."""

    @abstractmethod
    def build(self, ctx: StrategyContext) -> CompiledStateGraph[Any, Any, Any, Any]:
        """The compiled workflow; input ``{"inputs": example.inputs}``."""

    @abstractmethod
    def input_key(self, split: Split, inputs: dict[str, Any]) -> str:
        """The text this strategy's prompts put between ``<input>`` and ``</input>``."""

    @abstractmethod
    def gold_answers(self, split: Split, inputs: dict[str, Any],
                     reference_outputs: dict[str, Any]) -> list[GoldAnswer]:
        """What a perfect model answers to each of the strategy's prompts for this example."""


_STRATEGIES: dict[tuple[str, str], Strategy] = {}


def register_strategy(strategy: Strategy) -> Strategy:
    """Register (or replace) a strategy under ``(benchmark, name)``."""
    _STRATEGIES[(strategy.benchmark, strategy.name)] = strategy
    return strategy


def strategies(benchmark: str | None = None) -> dict[tuple[str, str], Strategy]:
    """Registered strategies, optionally of one benchmark."""
    _load_builtin()
    return {k: v for k, v in _STRATEGIES.items() if benchmark in (None, k[0])}


def get_strategy(benchmark: str, name: str) -> Strategy:
    """A registered strategy; ``KeyError`` names the known ones."""
    found = strategies(benchmark)
    if (benchmark, name) not in found:
        raise KeyError(f"unknown strategy {name!r} for {benchmark}; known: "
                       f"{sorted(n for _, n in found)}")
    return found[(benchmark, name)]


_BUILTIN_MODULES = ("graphs.ultratool", "graphs.plan_create_use", "graphs.appbench")


def _load_builtin() -> None:
    import importlib

    for name in _BUILTIN_MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise


def as_target(graph: CompiledStateGraph[Any, Any, Any, Any]) -> Callable[..., Any]:
    """Wrap a workflow as a ``langsmith.evaluate`` target: example inputs in, JSON-able outputs
    (raw outputs, prediction, trace, usage) out."""

    async def target(inputs: dict[str, Any]) -> dict[str, Any]:
        state = await graph.ainvoke({"inputs": inputs})
        return {k: state.get(k) for k in
                ("raw_outputs", "prediction", "parse_error", "trace", "usage")}

    return target
