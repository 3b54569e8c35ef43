"""tooleval-agents: evaluate how LLM agents plan, create and use tools.

The public surface of the core: everything a plugin author or a user running experiments from
Python needs (docs/architecture.md, docs/plugins.md; each name's entry is in
docs/reference/api.md), so no one imports a module of the package. The data contracts, the
registries (with the records their hooks return), the data directory and the errors load with
this import; the names whose modules load LangChain, LangSmith, pandas or matplotlib
(:func:`run_experiment`, :func:`run_grid`, :func:`compare`, :class:`RunData`, the tool-plan
type, the offline chat models) load on first use, so ``import tooleval_agents`` stays light.
Each benchmark's own records and loaders live in its package (``tooleval_agents.ultratool``,
``tooleval_agents.appbench``), workflows in ``tooleval_agents.graphs`` and metrics in
``tooleval_agents.evaluators``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tooleval_agents.contracts import (
    AgentIO,
    ExampleFields,
    ExampleScore,
    FixedTools,
    GoldAnswer,
    Located,
    OptionError,
    Options,
    Part,
    RecordMeta,
    ReferenceAnswers,
    Scorer,
    ScoringContext,
    Split,
    Strategy,
    StrategyContext,
    ToolSession,
)
from tooleval_agents.data.datadir import resolve_data_dir
from tooleval_agents.errors import (
    ChecksumError,
    DataFormatError,
    DatasetMissingError,
    ToolevalError,
)
from tooleval_agents.evaluation import Evaluators, agent_io_for, evaluators_for, examples_for
from tooleval_agents.registry import (
    Benchmark,
    ManifestFile,
    ReportFigure,
    ReportTable,
    SourceManifest,
    benchmarks,
    build_scorer,
    get_benchmark,
    get_strategy,
    register,
    register_strategy,
    strategies,
)
from tooleval_agents.results.corpus import Corpus, as_corpus

if TYPE_CHECKING:
    from tooleval_agents.grids import GridResult, run_grid
    from tooleval_agents.models.chat_models import ScriptedChatModel
    from tooleval_agents.models.offline import reference_model
    from tooleval_agents.models.reference_tools import ToolPlan
    from tooleval_agents.results.compare import Comparison, RunData, compare
    from tooleval_agents.results.gate import GateVerdict
    from tooleval_agents.run.runner import RunSpec, arun_experiment, run_experiment

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """The heavy public names, imported on first use (PEP 562)."""
    if name in ("RunData", "Comparison", "compare", "GateVerdict"):
        from tooleval_agents.results import compare as comparing
        return getattr(comparing, name)
    if name in ("run_grid", "GridResult"):
        from tooleval_agents import grids
        return getattr(grids, name)
    if name == "reference_model":
        from tooleval_agents.models.offline import reference_model
        return reference_model
    if name == "ToolPlan":
        from tooleval_agents.models.reference_tools import ToolPlan
        return ToolPlan
    if name == "ScriptedChatModel":
        from tooleval_agents.models.chat_models import ScriptedChatModel
        return ScriptedChatModel
    if name in ("run_experiment", "arun_experiment", "RunSpec"):
        from tooleval_agents.run import runner
        return getattr(runner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "AgentIO",
    "Benchmark",
    "ChecksumError",
    "Comparison",
    "Corpus",
    "DataFormatError",
    "DatasetMissingError",
    "Evaluators",
    "ExampleFields",
    "ExampleScore",
    "FixedTools",
    "GateVerdict",
    "GoldAnswer",
    "GridResult",
    "Located",
    "ManifestFile",
    "OptionError",
    "Options",
    "Part",
    "RecordMeta",
    "ReferenceAnswers",
    "ReportFigure",
    "ReportTable",
    "RunData",
    "RunSpec",
    "Scorer",
    "ScoringContext",
    "ScriptedChatModel",
    "SourceManifest",
    "Split",
    "Strategy",
    "StrategyContext",
    "ToolPlan",
    "ToolSession",
    "ToolevalError",
    "__version__",
    "agent_io_for",
    "arun_experiment",
    "as_corpus",
    "benchmarks",
    "build_scorer",
    "compare",
    "evaluators_for",
    "examples_for",
    "get_benchmark",
    "get_strategy",
    "reference_model",
    "register",
    "register_strategy",
    "resolve_data_dir",
    "run_experiment",
    "run_grid",
    "strategies",
]
