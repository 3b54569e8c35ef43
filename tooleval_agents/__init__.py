"""tooleval-agents: evaluate how LLM agents plan, create and use tools.

The public surface of the core: the data contracts, the benchmark and strategy registries,
the data directory and the errors. Running is :func:`tooleval_agents.run.runner.run_experiment`
(kept out of this import: it loads LangSmith). Each benchmark's own records and loaders live
in its package (``tooleval_agents.ultratool``, ``tooleval_agents.appbench``), workflows in
``graphs`` and metrics in ``evaluators``.
"""

from __future__ import annotations

from tooleval_agents.contracts import (
    AgentIO,
    ExampleFields,
    ExampleScore,
    GoldAnswer,
    Located,
    Options,
    Part,
    RecordMeta,
    ReferenceAnswers,
    Scorer,
    Split,
    Strategy,
    StrategyContext,
    pooled,
)
from tooleval_agents.data.datadir import resolve_data_dir
from tooleval_agents.errors import (
    ChecksumError,
    DataFormatError,
    DatasetMissingError,
    ToolevalError,
)
from tooleval_agents.evaluation import Evaluators, agent_io_for, evaluators_for
from tooleval_agents.registry import (
    Benchmark,
    benchmarks,
    get_benchmark,
    get_strategy,
    register,
    register_strategy,
    strategies,
)
from tooleval_agents.results.corpus import Corpus, as_corpus

__version__ = "0.1.0"

__all__ = [
    "AgentIO",
    "Benchmark",
    "ChecksumError",
    "Corpus",
    "DataFormatError",
    "DatasetMissingError",
    "Evaluators",
    "ExampleFields",
    "ExampleScore",
    "GoldAnswer",
    "Located",
    "Options",
    "Part",
    "RecordMeta",
    "ReferenceAnswers",
    "Scorer",
    "Split",
    "Strategy",
    "StrategyContext",
    "ToolevalError",
    "__version__",
    "agent_io_for",
    "as_corpus",
    "benchmarks",
    "evaluators_for",
    "get_benchmark",
    "get_strategy",
    "pooled",
    "register",
    "register_strategy",
    "resolve_data_dir",
    "strategies",
]
