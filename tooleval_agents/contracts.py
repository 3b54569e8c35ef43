"""The data contracts every layer shares: splits, examples, strategies and their options, gold
answers for the offline models, and per-example scores with their pooling.

The core (runner, results, compare, reports, CLI) and every benchmark, workflow and metric
speak these types; none of them is specific to a benchmark. Like tau-bench's ``types``: one
module, small classes, nothing that runs a model.

Example::

    from tooleval_agents.contracts import ExampleScore, Part
    from tooleval_agents.results.corpus import as_corpus

    scores = [ExampleScore(parts={"steps": Part(hits=2, total=3)}),
              ExampleScore(parts={"steps": Part(hits=1, total=1)})]
    as_corpus(scores).pooled("steps")   # 75.0 (3 of 4)
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args, get_origin, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tooleval_agents.errors import UsageError, did_you_mean

if TYPE_CHECKING:  # annotations only: the CLI reads contracts without importing LangChain
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage
    from langchain_core.runnables import Runnable
    from langchain_core.tools import BaseTool

    from tooleval_agents.tool_faults import FaultSession

Source = Literal["official", "rebuilt", "sample"]
"""Where a split comes from: the upstream files, our rebuild of a missing upstream split, or a
benchmark's bundled hand-written samples (``Benchmark.samples_dir``)."""

SubsetKind = Literal["language", "category"]
"""What a split's subset is: a language (``--lang``) or any other partition (``--category``)."""


EMPTY_OUTPUTS: dict[str, Any] = {"raw_outputs": [], "prediction": "", "parse_error": None,
                                  "trace": [], "usage": None}
"""What a failed workflow (``model_error``, ``agent_error``) answered: scored like an empty
answer (the error message stays out of it, or a scorer reading "the only string" would take it
for the answer)."""


class RecordMeta(BaseModel):
    """Where a record was read from. Not part of the official record format."""

    model_config = ConfigDict(frozen=True)

    benchmark: str
    """Benchmark name, e.g. ``ultratool``."""
    task: str
    """Task (UltraTool dimension, ``raw`` for ``test.json``) or AppBench category."""
    index: int
    """0-based position among the file's records (blank lines skipped); record i of every
    UltraTool file of a language is one sample."""
    lang: str | None = None
    """Language, for benchmarks whose subsets are languages."""
    source: Source = "official"
    """Official, rebuilt or bundled sample."""
    path: str | None = Field(default=None)
    """File the record was read from."""


@dataclass(frozen=True, order=True)
class Split:
    """One test set: a benchmark's task in one subset (a language or a category)."""

    benchmark: str
    task: str
    subset: str
    """Language (``en``/``zh``) or category (AppBench ``ss``...)."""
    kind: SubsetKind = field(default="category", compare=False)
    """Whether ``subset`` is a language or a category (not part of the split's identity)."""

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
class ExampleFields:
    """A record as a LangSmith example: model inputs, reference outputs, metadata."""

    inputs: dict[str, Any]
    outputs: dict[str, Any]
    metadata: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# Options: strategies and scorers declare theirs as a pydantic model


class Options(BaseModel):
    """Base of a strategy's or scorer's options: unknown keys are refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def describe_options(model: type[BaseModel] | None) -> str:
    """``k (int, default 3), base ('hierarchical' | 'flat')`` -- for error messages and
    ``tooleval list``."""
    if model is None or not model.model_fields:
        return "none"
    parts = []
    for name, info in model.model_fields.items():
        if get_origin(info.annotation) is Literal:
            kind = " | ".join(repr(v) for v in get_args(info.annotation))
        else:
            kind = getattr(info.annotation, "__name__", None) or str(info.annotation)
        default = "" if info.is_required() else f", default {info.default!r}"
        parts.append(f"{name} ({kind.replace('typing.', '')}{default})")
    return ", ".join(parts)


class OptionError(UsageError):
    """An option a user gave that its strategy or scorer does not declare, or a bad value:
    a usage error (the command line exits 2, before anything runs or is written)."""


@dataclass(frozen=True)
class ScoringContext:
    """What a run gives a benchmark's scorer besides the user's scoring options (which are
    validated against :meth:`~tooleval_agents.registry.Benchmark.scoring_options` before the
    scorer sees them, and hold only the user's keys)."""

    data_dir: Path | None = None
    """The data directory the examples were read from (a scorer reads official texts from
    it, e.g. a judge prompt set); None when unknown."""
    judge: Any = None
    """The judge model (a LangChain chat model) for judge metrics; None: no judge given."""


def validate_options(what: str, model: type[BaseModel] | None,
                     given: Mapping[str, Any] | None) -> dict[str, Any]:
    """The options a user gave, checked against what ``what`` declares: the given keys with
    their validated values (defaults are not added, so a run's identity names only what the
    user chose). Raises :class:`OptionError` (a ``ValueError``) naming the known options.

    >>> class K(Options):
    ...     k: int = 3
    >>> validate_options("strategy few_shot", K, {"k": "5"})
    {'k': 5}
    >>> try:
    ...     validate_options("strategy few_shot", K, {"n": 1})
    ... except OptionError as exc:
    ...     print(exc)
    strategy few_shot has no option 'n'; its options: k (int, default 3)
    """
    given = dict(given or {})
    if not given:
        return {}
    known = model.model_fields if model is not None else {}
    unknown = sorted(set(given) - set(known))
    if unknown:
        noun = "option" if len(unknown) == 1 else "options"
        names = ", ".join(repr(u) for u in unknown)
        raise OptionError(f"{what} has no {noun} {names}; its options: "
                         f"{describe_options(model)};{did_you_mean(unknown[0], known)}".rstrip(";"))
    assert model is not None
    try:
        checked = model.model_validate(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        literals = get_args(model.model_fields[where].annotation) if where in known else ()
        hint = did_you_mean(str(first.get("input")), [str(v) for v in literals])
        raise OptionError(f"{what} option {where!r}: {first.get('msg')} "
                         f"(got {first.get('input')!r});{hint}".rstrip(";")) from None
    return checked.model_dump(include=set(given))


# ---------------------------------------------------------------------------------------------
# Strategies


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
    """Validated strategy options, e.g. ``{"k": 3}`` for few-shot."""
    agent: Callable[..., Any] | None = None
    """A user's agent factory ``factory(model, tools) -> Runnable`` over ``{"messages":
    [...]}`` (see :mod:`tooleval_agents.agents`), for strategies that accept one; ``None``:
    the strategy's own agent."""
    tool_server: Callable[[], SessionHost] | None = None
    """The run's MCP server (:mod:`tooleval_agents.mcp`: one session per example, every call
    logged in the run directory), made when first called, for a workflow that serves its
    tools over MCP (``-O mcp=true``, ``--agent-cmd``). ``None`` outside a run: such a
    strategy starts one of its own."""
    model_gateway: Callable[[], Any] | None = None
    """The run's model gateway (a :class:`tooleval_agents.gateway.server.ModelGateway`, typed
    ``Any`` here, a layer below it: :attr:`model`, served over HTTP to an outside agent, each
    example under its own key), made when first called, for an agent command run with
    ``--model``; ``None``: the agent brings its own model."""


class Strategy(ABC):
    """A named way of solving a benchmark's task: a workflow built for one split.

    ``build`` returns a compiled LangGraph graph (or any Runnable) that takes
    ``{"inputs": example.inputs}`` and returns a state with at least ``prediction`` (what the
    scorer scores) and ``raw_outputs`` (the model's texts); ``trace``, ``usage`` and
    ``parse_error`` are kept when present.
    """

    benchmark: str
    """Benchmark name, e.g. ``appbench``."""
    name: str
    """Strategy name, e.g. ``hierarchical``."""
    tasks: tuple[str, ...] | None = None
    """Tasks it solves (``None``: every task of the benchmark)."""
    options: type[Options] | None = None
    """Its options (``-O KEY=VALUE``); ``None``: it takes none."""
    accepts_agent: bool = False
    """Whether a user's agent (``--agent``, :attr:`StrategyContext.agent`) can play its agent
    part: the strategy hands it the benchmark's tools and reads back its tool calls."""

    @abstractmethod
    def build(self, ctx: StrategyContext) -> Runnable[Any, Any]:
        """The workflow; input ``{"inputs": example.inputs}``."""

    def model_defaults(self, options: dict[str, Any]) -> dict[str, Any]:
        """Model arguments the strategy's protocol prescribes under ``options`` (validated),
        e.g. an official prompt set's temperature. A provider model gets each one the user did
        not set (``--model-arg`` wins); a model instance is used as it is. Default: none."""
        return {}

    def agent_io(self, split: Split, data_dir: Path | None = None) -> AgentIO | None:
        """How any agent plays this strategy's agent part on ``split``: the tools of each
        example (a :class:`ToolSession`), the messages it is sent, and the outputs read back
        (``tooleval serve --strategy``, ``--agent-cmd``); ``None``: it has no agent part that
        another agent could play. ``data_dir``: where the examples come from (a toolset may
        be read from it)."""
        return None

    def read_options(self, ctx: StrategyContext) -> Any:
        """``ctx.options`` as this strategy's :attr:`options` model (defaults filled in),
        with the same one-line errors as the runner's check."""
        model = self.options or Options
        return model(**validate_options(f"strategy {self.name}", self.options, ctx.options))


@dataclass(frozen=True)
class AgentIO:
    """How an agent over ``{"messages": [...]}`` (``langchain.agents.create_agent``, LangGraph's
    prebuilt agents, a user's graph) plays a split outside ``tooleval run``, e.g. as the target
    of the user's own ``langsmith.evaluate`` (``Benchmark.agent_io``,
    :func:`tooleval_agents.evaluation.agent_io_for`).

    Example::

        io = agent_io_for("appbench", subset="ss")
        agent = create_agent(model, io.tools({}))
        state = agent.invoke({"messages": io.messages(example.inputs)})
        outputs = io.outputs(example.inputs, state["messages"])   # what the scorer reads
    """

    tools: Callable[[dict[str, Any]], Sequence[BaseTool]]
    """The benchmark's executable tools for an example's inputs (stubs: schema checks,
    simulated answers; the same for every example of a split, or the example's own toolset)."""
    messages: Callable[[dict[str, Any]], list[BaseMessage]]
    """An example's inputs as the messages the agent is sent (the ``tools`` strategy's own
    words)."""
    outputs: Callable[[dict[str, Any], Sequence[BaseMessage]], dict[str, Any]]
    """``(inputs, final messages)`` -> the outputs the split's scorer reads (``prediction``,
    ``raw_outputs``, ``trace`` with every tool call), as the ``tools`` strategy records them."""
    session: Callable[[dict[str, Any]], ToolSession] | None = None
    """An example's tools as a session with state (apps opened, tools created: what it lists
    changes as the agent goes); ``None``: :attr:`tools` for every call, read by
    :attr:`outputs`."""

    def open(self, inputs: dict[str, Any]) -> ToolSession:
        """The example's :class:`ToolSession`: :attr:`session`'s, or :attr:`tools` as a fixed
        one."""
        if self.session is not None:
            return self.session(inputs)
        return FixedTools(list(self.tools(inputs)),
                          lambda messages: self.outputs(inputs, messages))


class ToolSession(ABC):
    """One example's tools while an agent plays it: what it may call now, how a call of any
    other name is answered, what an answered call changes, and the outputs the split's scorer
    reads of the final conversation. ``tooleval serve`` and ``--agent-cmd`` serve one per
    example over MCP (:mod:`tooleval_agents.mcp`), so a plugin's :class:`AgentIO` is served
    with no code of its own."""

    dynamic: bool = False
    """Whether :meth:`tools` may change after a call (an app opened, a tool created): MCP
    clients are told to list the tools again (``notifications/tools/list_changed``)."""

    @abstractmethod
    def tools(self) -> Sequence[BaseTool]:
        """The tools the agent may call now, in the order it is shown them."""

    @abstractmethod
    def outputs(self, messages: Sequence[BaseMessage]) -> dict[str, Any]:
        """The final conversation (the request, each call with its answer, the final answer)
        as the outputs the split's scorer reads."""

    def refusal(self, name: str) -> str | None:
        """Why a call of ``name``, which is not listed now, is refused (``None``: there is
        no such tool)."""
        return None

    def answered(self, name: str, error: bool) -> None:
        """A call of ``name`` was answered (``error``: with an error): what it changes."""
        return None


@dataclass
class FixedTools(ToolSession):
    """A session whose tools never change (what :meth:`AgentIO.open` makes of
    :attr:`AgentIO.tools`)."""

    listed: Sequence[BaseTool]
    """The tools."""
    read: Callable[[Sequence[BaseMessage]], dict[str, Any]]
    """The outputs of the final conversation."""

    def tools(self) -> Sequence[BaseTool]:
        return self.listed

    def outputs(self, messages: Sequence[BaseMessage]) -> dict[str, Any]:
        return self.read(messages)


class ServedSession(Protocol):
    """One example's session on the run's MCP server, as a strategy reads it
    (:class:`~tooleval_agents.mcp.sessions.ExampleSession`)."""

    @property
    def id(self) -> str:
        """Random, part of the session's URL."""
        ...

    @property
    def calls(self) -> Sequence[Any]:
        """Every call answered, in the order the answers left."""
        ...

    @property
    def foreign(self) -> int:
        """Requests its key sent to another session's URL (refused)."""
        ...

    @property
    def listed(self) -> int:
        """``tools/list`` requests it answered (none, and no call: the agent never reached
        its tools)."""
        ...

    def conversation(self, final: str) -> list[BaseMessage]:
        """The request, each call with its answer, then ``final``, the agent's answer."""
        ...


class SessionHost(Protocol):
    """The run's MCP server as a strategy uses it
    (:class:`~tooleval_agents.mcp.server.ToolServer`): a session per example, reached by its
    URL with its own key, closed when the example is done."""

    async def open(self, tools: ToolSession, messages: list[BaseMessage], *, label: str,
                   faults: FaultSession | None = None) -> ServedSession:
        """A new session of one example, served until :meth:`close`."""
        ...

    async def close(self, session: ServedSession) -> None:
        """End a session: later calls are refused and logged."""
        ...

    def url(self, session: ServedSession) -> str:
        """The URL of a session."""
        ...

    def key(self, session: ServedSession) -> str:
        """The key that opens a session and no other (handed to its agent alone)."""
        ...


# ---------------------------------------------------------------------------------------------
# Gold answers for the offline models


@dataclass(frozen=True)
class GoldAnswer:
    """The answer a perfect model gives to one prompt of a workflow."""

    marker: str
    """A phrase that occurs in that prompt (and in no other prompt of the workflow)."""
    text: str
    """The answer text."""
    format: str
    """Its shape (``plan_text``, ``json_steps``, ``call_lines``...): tells ``noisy-reference``
    how to corrupt it (:func:`tooleval_agents.models.corruptions.register_format`)."""


@runtime_checkable
class ReferenceAnswers(Protocol):
    """The optional capability a strategy needs to run with the offline ``reference`` and
    ``noisy-reference`` models: which gold answer each of its prompts asks for, keyed by the
    text its prompts wrap in ``<input>...</input>``."""

    def input_key(self, split: Split, inputs: dict[str, Any]) -> str:
        """The text this strategy's prompts put between ``<input>`` and ``</input>``."""
        ...

    def gold_answers(self, split: Split, inputs: dict[str, Any],
                     reference_outputs: dict[str, Any]) -> list[GoldAnswer]:
        """What a perfect model answers to each of the strategy's prompts for this example."""
        ...


# ---------------------------------------------------------------------------------------------
# Scores


class Part(BaseModel):
    """A pooled quantity of one example: ``hits`` out of ``total`` (e.g. correct steps)."""

    hits: float = 0.0
    total: float = 0.0


class ExampleScore(BaseModel):
    """The scores of one example.

    ``scores`` are 0-100 per-example values reported as LangSmith feedback; ``parts`` feed pooled
    corpus metrics; ``error`` marks an example that could not be scored (never dropped: it counts
    in every denominator with score 0 unless the family says otherwise).
    """

    scores: dict[str, float] = Field(default_factory=dict)
    """Metric name -> 0..100 for this example."""
    parts: dict[str, Part] = Field(default_factory=dict)
    """Metric name -> numerator/denominator for pooled metrics."""
    comments: dict[str, str] = Field(default_factory=dict)
    """Metric name -> why (shown next to the score)."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Categorical results, e.g. ``error_kind`` -> ``incorrect_json``."""
    error: str | None = None
    """Why the example could not be scored (e.g. the judge failed after retries)."""
    evidence: dict[str, Any] = Field(default_factory=dict)
    """What scoring saw, for a person asking why (e.g. ``{"execution": [...]}``: the answer's
    calls run on the stubs); shown by ``tooleval view``, never a metric."""

    def merge(self, *others: ExampleScore) -> ExampleScore:
        """One score from several families' scores of the same example (the one rule):
        scores, parts, comments and labels are united (a later family wins a shared key), and
        the distinct errors are joined with ``"; "`` in order, so no family's failure is hidden.

        >>> a = ExampleScore(scores={"x": 1.0}, error="judge failed")
        >>> a.merge(ExampleScore(scores={"y": 2.0}, error="stub crashed")).error
        'judge failed; stub crashed'
        """
        every = (self, *others)
        errors = dict.fromkeys(s.error for s in every if s.error)
        # Built without re-validation: every field already holds validated values.
        return ExampleScore.model_construct(
            scores={k: v for s in every for k, v in s.scores.items()},
            parts={k: v for s in every for k, v in s.parts.items()},
            comments={k: v for s in every for k, v in s.comments.items()},
            labels={k: v for s in every for k, v in s.labels.items()},
            error="; ".join(errors) or None,
            evidence={k: v for s in every for k, v in s.evidence.items()})


def feedback(result: ExampleScore) -> list[dict[str, Any]]:
    """An :class:`ExampleScore` as LangSmith feedback dicts ``{key, score, comment}``."""
    out: list[dict[str, Any]] = [
        {"key": k, "score": v, "comment": result.comments.get(k)} for k, v in result.scores.items()
    ]
    out += [{"key": k, "value": v} for k, v in result.labels.items()]
    if result.error:
        out.append({"key": "scoring_error", "score": None, "comment": result.error})
    return out


def exact_sum(values: Iterable[float]) -> float:
    """The sum of ``values`` rounded once (:func:`math.fsum`), which every corpus metric
    uses: the same float in any order and on every Python (the built-in ``sum()`` of floats
    rounds differently since 3.12). An overflow gives inf and inf - inf NaN, as plain
    addition does.

    >>> exact_sum([0.1] * 10)
    1.0
    """
    values = list(values)
    try:
        return math.fsum(values)
    except ValueError:  # inf - inf
        return math.nan
    except OverflowError:  # an intermediate overflow: inf as plain addition gives
        return sum(values)


def format_metric(value: float | None, n: int | None = None) -> str:
    """A corpus metric for a table: ``12.34``, or ``n/a (0 of N)`` when nothing was counted
    over the N examples (``n/a`` when N is unknown).

    >>> format_metric(12.345), format_metric(None, 200), format_metric(float("nan"))
    ('12.35', 'n/a (0 of 200)', 'n/a')
    """
    if value is None or value != value:  # None or NaN
        return "n/a" if n is None else f"n/a (0 of {n})"
    return f"{value:.2f}"


Metrics = dict[str, float | None]
"""Corpus metrics, 0-100 (counts where a family says so); ``None``: nothing to count (n/a)."""
ScoreFn = Callable[[dict[str, Any], dict[str, Any], dict[str, Any]], ExampleScore]
"""``(inputs, outputs, reference_outputs) -> ExampleScore``: the LangSmith evaluator shape."""
AsyncScoreFn = Callable[[dict[str, Any], dict[str, Any], dict[str, Any]],
                       Awaitable[ExampleScore]]
AggregateFn = Callable[[Any], Metrics]
"""``scores -> Metrics``, written against the corpus sums (``c = as_corpus(scores)``, then
``c.pooled(key)``, ``c.mean(key)``...: :mod:`tooleval_agents.results.corpus`): the runner,
summaries and bootstraps pass a :class:`~tooleval_agents.results.corpus.Corpus`, a caller may
pass the scores (a ``Sequence[ExampleScore]``); ``Any`` here, the corpus sums being a layer
above the contracts."""


@dataclass(frozen=True)
class Scorer:
    """How a split's outputs are scored: per example, then pooled over the corpus.

    ``score(inputs, outputs, reference_outputs)`` takes a workflow's outputs (its
    ``prediction``, and ``raw_outputs`` for profiles that read the raw text) and returns an
    :class:`ExampleScore`; ``aggregate(corpus)`` gives the corpus metrics (0-100, unrounded,
    ``None`` for n/a) from the corpus sums (:data:`AggregateFn`), so a run keeps a few numbers
    per example and a bootstrap pools every resample at once. Both are pure, so a finished run
    can be re-scored from its stored outputs without calling any model.
    """

    score: ScoreFn
    aggregate: AggregateFn
    headline: tuple[str, ...] = ()
    """The metrics shown first (progress bar, comparison tables)."""
    ascore: AsyncScoreFn | None = None
    """``score`` as a coroutine, for scorers that call a model (an LLM judge): the runner
    awaits it, so the run's timeout, retries and concurrency bound the judge's calls too."""
    not_computed: Mapping[str, str] = field(default_factory=dict)
    """Metrics this scorer leaves out, with why, e.g. ``{"planning": "no --judge"}`` for a
    judged task scored without its judge: the summary lists them as not computed, never as
    a 0."""
    count_metrics: tuple[str, ...] = ()
    """Metrics that are counts per example (tool calls, agent turns: a mean number), not
    0-100 rates: tables show them apart from the percentages."""
    higher_is_better: tuple[str, ...] = ()
    """Metrics a better system has higher (success, F1s, accuracies), besides the headline
    ones (:meth:`direction`): what a gate (``compare --fail-if-worse``) compares."""
    lower_is_better: tuple[str, ...] = ()
    """Metrics a better system has lower (an error rate, a distance to the gold)."""

    def direction(self, metric: str) -> Literal["higher", "lower"] | None:
        """Which way ``metric`` is better: ``lower`` when declared so, ``higher`` when declared
        so or a headline metric, else ``None`` (no direction: a diagnostic such as a share of
        errors by kind, or a count per example).

        >>> s = Scorer(score=None, aggregate=None, headline=("success",),  # type: ignore[arg-type]
        ...            lower_is_better=("tool_error_rate",))
        >>> s.direction("success"), s.direction("tool_error_rate"), s.direction("tool_calls")
        ('higher', 'lower', None)
        """
        if metric in self.lower_is_better:
            return "lower"
        if metric in self.higher_is_better or metric in self.headline:
            return "higher"
        return None
