"""Benchmarks are declared in one place each and found by name through this registry.

The CLI, the runner and the reports only talk to :class:`Benchmark`; they know no benchmark by
name. Built-in and third-party benchmarks register through the ``tooleval_agents.benchmarks``
entry-point group (an object or zero-argument factory returning a :class:`Benchmark`), or
programmatically with :func:`register`.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tooleval_agents.records import Source

ENTRY_POINT_GROUP = "tooleval_agents.benchmarks"


@dataclass(frozen=True, order=True)
class Split:
    """One test set: a benchmark's task in a language (UltraTool) or category (AppBench)."""

    benchmark: str
    task: str
    subset: str
    """Language (``en``/``zh``) or AppBench category (``ss``...)."""

    @property
    def name(self) -> str:
        """Dataset name, e.g. ``ultratool-tool_usage-en`` or ``appbench-plan-ss``."""
        return f"{self.benchmark}-{self.task}-{self.subset}"

    @property
    def key(self) -> str:
        """``benchmark/task/subset``: the namespace of example ids."""
        return f"{self.benchmark}/{self.task}/{self.subset}"


@dataclass(frozen=True)
class Located:
    """Where a split's records come from."""

    path: Path
    source: Source


@dataclass(frozen=True)
class Scorer:
    """How a split's outputs are scored: per example, then pooled over the corpus.

    ``score(inputs, outputs, reference_outputs)`` takes a workflow's outputs (at least
    ``prediction``/``raw_outputs``) and returns an ``evaluators.base.ExampleScore``;
    ``aggregate(scores)`` gives the corpus metrics (0-100, unrounded). Both are pure, so a
    finished run can be re-scored from its stored outputs without calling any model.
    """

    score: Callable[[dict[str, Any], dict[str, Any], dict[str, Any]], Any]
    aggregate: Callable[[Sequence[Any]], dict[str, float]]
    headline: tuple[str, ...] = ()
    """The metrics shown first (progress bar, comparison tables)."""


@dataclass(frozen=True)
class ExampleFields:
    """A record as a LangSmith example: model inputs, reference outputs, metadata."""

    inputs: dict[str, Any]
    outputs: dict[str, Any]
    metadata: dict[str, Any] = field(default_factory=dict)


class Benchmark(ABC):
    """A benchmark: its splits, how to load them, and how a record becomes an example."""

    name: str
    """Registry name, e.g. ``ultratool``."""

    @abstractmethod
    def splits(self) -> list[Split]:
        """Every split the benchmark defines (whether or not its data is present)."""

    @abstractmethod
    def locate(self, split: Split, data_dir: Path) -> Located:
        """The file a split is read from. May build and cache a derived file first (the
        UltraTool sets rebuilt from ``test.json``), so it can take a while and write to the
        per-user cache. Raises :class:`~tooleval_agents.errors.DatasetMissingError` with
        instructions when the data is absent."""

    @abstractmethod
    def load(self, split: Split, data_dir: Path) -> Sequence[BaseModel]:
        """Validated records of a split, each with ``meta`` set."""

    @abstractmethod
    def to_example(self, split: Split, record: Any) -> ExampleFields:
        """A record as example inputs, reference outputs and metadata."""

    @abstractmethod
    def scorer(self, split: Split, *, options: dict[str, Any] | None = None) -> Scorer:
        """The evaluators of a split (``options``: e.g. ``{"scoring": "paper"}`` or
        ``{"judge": chat_model}``)."""

    @abstractmethod
    def default_strategy(self, split: Split) -> str:
        """The strategy run when none is named (the paper's protocol)."""

    def max_tokens(self, split: Split) -> int | None:
        """Default cap on one answer's output tokens for a provider model (a user's
        ``max_tokens`` model argument wins). A bound well above the longest gold answer keeps a
        small local model that never stops from holding a slot until the timeout; ``None``:
        no cap."""
        return None

    def resources(self, data_dir: Path) -> list[dict[str, Any]]:
        """Auxiliary data besides the splits (e.g. an API catalog), for ``tooleval data info``:
        dicts with at least ``name``, ``source`` and ``path``."""
        return []

    def split(self, task: str, subset: str) -> Split:
        """Look up a split by task and subset, with a clear error for unknown ones."""
        s = Split(self.name, task, subset)
        if s not in self.splits():
            tasks = sorted({x.task for x in self.splits()})
            subsets = sorted({x.subset for x in self.splits()})
            raise KeyError(f"{self.name} has no split {task!r}/{subset!r}; tasks: {tasks}, "
                           f"subsets: {subsets}")
        return s


_REGISTRY: dict[str, Benchmark] = {}
_LOADED = False
_LOADING = False


def register(benchmark: Benchmark) -> Benchmark:
    """Add a benchmark to the registry (replacing one of the same name)."""
    _REGISTRY[benchmark.name] = benchmark
    return benchmark


def _load_entry_points() -> None:
    """Register every entry point once. A plugin that fails to load (or gives no
    :class:`Benchmark`) is skipped with a warning naming it, so the other benchmarks, built-ins
    included, still work."""
    global _LOADED, _LOADING
    if _LOADED or _LOADING:  # _LOADING: a plugin module that calls benchmarks() on import
        return
    _LOADING = True
    try:
        _load_each()
    finally:
        _LOADING = False
    _LOADED = True  # only once every entry point was tried


def _load_each() -> None:
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
            bench = obj() if callable(obj) and not isinstance(obj, Benchmark) else obj
        except Exception as exc:  # a third-party plugin may raise anything
            warnings.warn(f"benchmark entry point {ep.name!r} ({ep.value}) failed to load: "
                          f"{type(exc).__name__}: {exc}", RuntimeWarning, stacklevel=2)
            continue
        if not isinstance(bench, Benchmark):
            warnings.warn(f"benchmark entry point {ep.name!r} ({ep.value}) gave "
                          f"{type(bench).__name__}, not a Benchmark; skipped", RuntimeWarning,
                          stacklevel=2)
            continue
        if bench.name not in _REGISTRY:
            register(bench)


def benchmarks() -> dict[str, Benchmark]:
    """All registered benchmarks by name."""
    _load_entry_points()
    return dict(_REGISTRY)


def get_benchmark(name: str) -> Benchmark:
    """A registered benchmark; ``KeyError`` lists the known names."""
    found = benchmarks()
    if name not in found:
        raise KeyError(f"unknown benchmark {name!r}; known: {sorted(found)}")
    return found[name]
