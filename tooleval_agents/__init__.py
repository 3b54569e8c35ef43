"""tooleval-agents: evaluate how LLM agents plan, create and use tools.

The public surface: records, loaders and the benchmark registry. Evaluators live in the
``evaluators`` package and LangGraph workflows in ``graphs``.
"""

from __future__ import annotations

from tooleval_agents.appbench.loaders import load_category
from tooleval_agents.appbench.records import AppBenchSample, AppCall, Catalog
from tooleval_agents.datadir import resolve_data_dir
from tooleval_agents.errors import (
    ChecksumError,
    DataFormatError,
    DatasetMissingError,
    ToolevalError,
)
from tooleval_agents.records import RecordMeta
from tooleval_agents.registry import Benchmark, Split, benchmarks, get_benchmark, register
from tooleval_agents.ultratool.loaders import load_example, load_raw, load_task
from tooleval_agents.ultratool.records import (
    AwarenessRecord,
    PlanningRecord,
    PlanStep,
    RawSample,
    ToolCreationRecord,
    ToolSelectionRecord,
    ToolSkeleton,
    ToolUsageRecord,
)

__version__ = "0.1.0"

__all__ = [
    "AppBenchSample",
    "AppCall",
    "AwarenessRecord",
    "Benchmark",
    "Catalog",
    "ChecksumError",
    "DataFormatError",
    "DatasetMissingError",
    "PlanStep",
    "PlanningRecord",
    "RawSample",
    "RecordMeta",
    "Split",
    "ToolCreationRecord",
    "ToolSelectionRecord",
    "ToolSkeleton",
    "ToolUsageRecord",
    "ToolevalError",
    "__version__",
    "benchmarks",
    "get_benchmark",
    "load_category",
    "load_example",
    "load_raw",
    "load_task",
    "register",
    "resolve_data_dir",
]
