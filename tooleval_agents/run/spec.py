"""What a user asks of one run: :class:`RunSpec`, the one place its settings are listed.

``run_experiment("appbench", subset="ss", model="reference")`` and the CLI both build one; the
runner reads nothing else. What identifies the run's results (and is written to
``config.json``) is derived from it by the runner, without secrets.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooleval_agents.mcp.sandbox import AgentSandbox
from tooleval_agents.models.batch.settings import BatchSettings
from tooleval_agents.results.selection import parse_samples
from tooleval_agents.tool_faults import ToolFaults, parse_tool_faults

if TYPE_CHECKING:
    from langchain_core.caches import BaseCache
    from langchain_core.language_models import BaseChatModel

    from tooleval_agents.models.retry import RetryPolicy
    from tooleval_agents.registry import Benchmark


@dataclass(frozen=True, kw_only=True)
class RunSpec:
    """One experiment: a strategy with a model over one split.

    Example::

        RunSpec(benchmark="appbench", subset="mm", strategy="flat", model="openai:gpt-4o-mini",
                model_kwargs={"temperature": 0}, limit=20)
    """

    benchmark: str | Benchmark
    """A registered benchmark name, or a :class:`~tooleval_agents.registry.Benchmark`."""
    model: str | BaseChatModel | None = None
    """``reference``, ``noisy-reference[:RATE]``, ``provider:model`` or a chat model
    (required unless ``agent_cmd`` is given: with it, the model is served to the agent by the
    model gateway, :mod:`tooleval_agents.gateway`; without it, the agent brings its own)."""
    task: str | None = None
    """The split's task (may be omitted when the benchmark has one)."""
    subset: str | None = None
    """The split's language or category (may be omitted when there is one)."""
    strategy: str | None = None
    """A known strategy (default: the benchmark's protocol for the split)."""
    agent: Any = None
    """A user's agent for strategies that accept one: ``"module.path:factory"``,
    ``"path/to/file.py:factory"``, a ``factory(model, tools)`` or a compiled graph over
    ``{"messages": [...]}`` (:mod:`tooleval_agents.agents`). With no ``strategy``, the
    benchmark's first strategy that accepts an agent runs it."""
    judge: str | BaseChatModel | None = None
    """A model for LLM-judged metrics (temperature 0 unless ``judge_kwargs`` say otherwise)."""
    limit: int | None = None
    """Run the first ``limit`` examples (of ``samples`` when given) only."""
    samples: str | None = None
    """Split indices and ranges to run, e.g. ``"10-20,37"``
    (:mod:`tooleval_agents.results.selection`). The run directory keeps every example it ran:
    another selection extends it."""
    epochs: int = 1
    """Attempts per example (:mod:`tooleval_agents.results.epochs`): pass@k, pass^k and the spread
    across attempts join the summary."""
    max_concurrency: int = 8
    """Examples in flight at once (1 for a local one-request-at-a-time server)."""
    rps: float | None = None
    """Provider requests per second (a token bucket; ``None``: unlimited)."""
    out: str | Path = "runs"
    """Results root: the run's folder is ``<out>/<experiment>/``."""
    upload: bool | None = None
    """Send the experiment to LangSmith (``None``: when an API key is configured)."""
    data_dir: str | Path | None = None
    """Benchmark data directory (default: ``TOOLEVAL_DATA_DIR``, else the per-user cache;
    when neither is set and the cache lacks the split, the benchmark's bundled samples, with a
    logged warning saying so, as ``tooleval run`` does)."""
    strategy_options: dict[str, Any] | None = None
    """The strategy's options (validated against what it declares)."""
    scoring_options: dict[str, Any] | None = None
    """The scorer's options (validated against what the benchmark declares)."""
    prompts: str | None = None
    """Prompt set (e.g. ``official``): the ``prompts`` option of the strategy and of the
    scorer (a judge's prompts), for each that declares one; an error when neither does."""
    cache: bool | str | Path | BaseCache = True
    """Response cache: ``True`` (per-user file), a path, a ``BaseCache``, or ``False``."""
    progress: bool | None = None
    """A progress bar on stderr (``None``: when stderr is a terminal)."""
    fresh: bool = False
    """Discard the results directory's previous run instead of resuming it."""
    retry: RetryPolicy | None = None
    """The one retry policy of model calls, the judge's included, and their timeout
    (``None``: :class:`~tooleval_agents.models.retry.RetryPolicy` defaults)."""
    model_kwargs: dict[str, Any] | None = None
    """``init_chat_model`` arguments of a model spec (``base_url``, ``temperature``...)."""
    judge_kwargs: dict[str, Any] | None = None
    """``init_chat_model`` arguments of a judge spec."""
    tool_faults: str | ToolFaults | None = None
    """Seeded tool faults, e.g. ``"rate=0.2,kinds=error+timeout,seed=0"``
    (:mod:`tooleval_agents.tool_faults`); ``rate=0`` or ``None``: none."""
    agent_cmd: str | None = None
    """An agent command as the system under test (:mod:`tooleval_agents.mcp.external`): run
    per example with its MCP session's URL and the request (and, with ``model``, the model
    gateway's URLs and key); the calls its session answered are the trajectory, what it
    prints its final answer. Part of the run's identity, with the files it names
    (:func:`~tooleval_agents.run.usercode.command_files`)."""
    agent_version: str | None = None
    """The version of the agent (``--agent-version``: a release, a commit; a preset sets its
    binary's): part of the run's identity, for what its files do not show (a binary on PATH,
    a model behind a service)."""
    agent_name: str | None = None
    """What the run calls the agent command (its directory name: ``<strategy>+<name>``;
    default ``agent``)."""
    agent_timeout: float = 300.0
    """Seconds an agent command may take per example (then its process group is killed)."""
    agent_preset: str | None = None
    """An agent people use as the system under test, prewired (``claude-code``, ``codex``:
    :mod:`tooleval_agents.mcp.presets`): run per example as an agent command is, on
    ``model`` served by the gateway (required with it); its version is part of the run's
    identity."""
    agent_bin: str | Path | None = None
    """The preset's program (default: its name on the PATH)."""
    agent_sandbox: bool | AgentSandbox = False
    """Seal the agent command in the agent sandbox (:mod:`tooleval_agents.mcp.sandbox`:
    ``bwrap``; ``True``, or an :class:`~tooleval_agents.mcp.sandbox.AgentSandbox` naming the
    hosts it may reach and the paths it may read): it sees its own example and nothing else.
    ``False``: it runs as the user, and the run is marked unsealed. Part of the run's
    identity."""
    batch: BatchSettings | bool = False
    """Send the model's and the judge's calls as provider batches (``True``: default
    :class:`~tooleval_agents.models.batch.BatchSettings`): OpenAI-compatible models through
    the Batch API, at batch prices; answers come within the provider's window (hours), the
    batches' ids are kept in the run directory and a resume polls them
    (:mod:`tooleval_agents.models.batch`)."""

    @property
    def outside_agent(self) -> bool:
        """Whether an agent outside the process plays the run (``agent_cmd`` or
        ``agent_preset``)."""
        return self.agent_cmd is not None or self.agent_preset is not None

    @property
    def batching(self) -> BatchSettings | None:
        """:attr:`batch` as settings; ``None`` when calls are not batched."""
        if self.batch is True:
            return BatchSettings()
        return self.batch if isinstance(self.batch, BatchSettings) else None

    @property
    def sandbox(self) -> AgentSandbox | None:
        """:attr:`agent_sandbox` as settings; ``None``: the agent command runs unsealed."""
        if self.agent_sandbox is True:
            return AgentSandbox()
        return self.agent_sandbox if isinstance(self.agent_sandbox, AgentSandbox) else None

    @property
    def faults(self) -> ToolFaults | None:
        """:attr:`tool_faults` parsed; ``None`` when no call can fail."""
        faults = parse_tool_faults(self.tool_faults)
        return faults if faults is not None and faults.active else None

    def __post_init__(self) -> None:
        if self.max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {self.max_concurrency}")
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"limit must be >= 1, got {self.limit}")
        if self.epochs < 1:
            raise ValueError(f"epochs must be >= 1, got {self.epochs}")
        if self.samples is not None:
            parse_samples(self.samples)
        parse_tool_faults(self.tool_faults)
        if self.agent_version is not None and not self.agent_version.strip():
            raise ValueError("agent_version is empty")
        self._check_agent_cmd()
        if self.model_kwargs and not isinstance(self.model, str):
            raise ValueError("model_kwargs apply to a model spec; configure a model instance "
                             "when you create it")
        if self.judge_kwargs and self.judge is not None and not isinstance(self.judge, str):
            raise ValueError("judge_kwargs apply to a judge spec; configure a judge instance "
                             "when you create it")

    def _check_agent_cmd(self) -> None:
        if self.agent_bin is not None and self.agent_preset is None:
            raise ValueError("agent_bin is a preset's program: give agent_preset")
        if self.agent_preset is not None:
            if self.agent_cmd is not None:
                raise ValueError("give agent_cmd (a command) or agent_preset (an agent the "
                                 "harness wires), not both")
            if self.model is None:
                raise ValueError(f"agent_preset {self.agent_preset}: give model (the model "
                                 "the gateway serves it)")
            if self.agent_sandbox:
                raise ValueError("agent_sandbox seals an agent command; a preset is not sealed "
                                 "yet (docs/security.md): give agent_cmd, or no agent_sandbox")
        elif self.agent_cmd is None:
            if self.model is None:
                raise ValueError("model is required (unless an agent command brings its own: "
                                 "agent_cmd)")
            if self.agent_name is not None:
                raise ValueError("agent_name names an agent command: give agent_cmd")
            if self.agent_version is not None and self.agent is None:
                raise ValueError("agent_version is the version of an agent: give agent or "
                                 "agent_cmd")
            if self.agent_sandbox:
                raise ValueError("agent_sandbox seals an agent command: give agent_cmd")
            return
        elif not self.agent_cmd.strip():
            raise ValueError("agent_cmd is empty")
        if self.agent is not None:
            raise ValueError("give agent (a factory run in the process) or agent_cmd (a "
                             "command) or agent_preset, not both")
        if self.model_kwargs and self.model is None:
            raise ValueError("model_kwargs configure the model the harness serves (give "
                             "model): an agent command that brings its own configures it")
        if not self.agent_timeout > 0:
            raise ValueError(f"agent_timeout must be > 0, got {self.agent_timeout}")
