"""The records of a run directory (:mod:`tooleval_agents.results.rundir`): what was run
(:class:`RunConfig`, with its :class:`DatasetRef`), one finished attempt (:class:`ExampleResult`:
status, outputs, score, :class:`Usage`, the model calls), and the light views a pass over many
results reads instead (:class:`ResultHead`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from tooleval_agents.contracts import ExampleScore, Part
from tooleval_agents.models.tool_calls.counts import ToolCallCounts

Status = Literal["ok", "model_error", "agent_error", "infra_error"]
"""``ok``: the workflow finished (its answer may still be wrong); ``model_error``: the workflow
failed because a model call did (the provider refused the request, after retries: a 400, a
content filter...), counted as a wrong answer; ``agent_error``: the system under test raised
(the user's agent or the strategy's code), counted as a wrong answer; ``infra_error``: a
provider failure left after retries (429, 5xx, timeout...), counted apart and retried on
resume."""

FAILED: frozenset[str] = frozenset({"model_error", "agent_error"})
"""Statuses of a workflow that failed: scored as the empty answer
(:data:`~tooleval_agents.contracts.EMPTY_OUTPUTS`)."""



def now() -> str:
    """UTC timestamp, ISO 8601."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class DatasetRef(BaseModel):
    """Which examples the run is over."""

    name: str
    """Dataset (split) name, e.g. ``appbench-plan-ss``."""
    id: str | None = None
    """LangSmith dataset id (the offline uuid5 when not uploaded)."""
    examples: int
    """Number of examples in the run (after ``--samples`` and ``--limit``)."""
    samples: str | None = None
    """The ``--samples`` selection (split indices), ``None``: from the start of the split."""
    total: int | None = None
    """Number of examples in the whole split (a selection covers n of N)."""
    hash: str
    """sha256 over the selected examples' ids, inputs and reference outputs: a resume on
    changed data is refused."""
    source: str | None = None
    """official / rebuilt / sample."""
    data_dir: str | None = None
    """The data directory the examples were read from (re-scoring reads it again unless told
    otherwise; its dataset hash is checked either way)."""


class RunConfig(BaseModel):
    """``config.json``: everything that identifies the experiment. Never holds a secret."""

    experiment: str
    """Experiment name: the directory's (``<benchmark>-<task>-<subset>-<strategy>-<model>``,
    then the settings; :func:`~tooleval_agents.run.naming.readable_name`)."""
    benchmark: str
    task: str
    subset: str
    """Language or category."""
    strategy: str
    strategy_options: dict[str, Any] = Field(default_factory=dict)
    epochs: int = 1
    """Attempts per example (``--epochs``)."""
    agent: str | None = None
    """The user's agent that played the strategy's agent (``--agent``, or ``--agent-name`` of
    an agent command), by name; ``None``: the strategy's own."""
    agent_cmd: str | None = None
    """The agent command that played it (``--agent-cmd``, as given, secrets masked): part of
    the run's identity."""
    agent_sandbox: dict[str, Any] | None = None
    """How the agent command ran (``--agent-sandbox``): ``{"sealed": true, "network":
    ["loopback", HOST...]}`` in the agent sandbox, or ``{"sealed": false}``: as the user, able
    to read the data and the run's files (:attr:`unsealed`). ``None``: no agent command, or
    one recorded before the sandbox existed (unsealed too)."""
    identity: dict[str, Any] | None = None
    """What the run measures (:class:`~tooleval_agents.run.identity.RunIdentity`:
    ``digest`` and ``parts``, the agent's and a user strategy's code among them); one
    directory holds one identity. ``None``: recorded before identities were kept."""
    model: dict[str, Any]
    """``{"spec": ..., "params": {...}}`` with secrets removed; ``server``: what the model's
    server reported about itself (:mod:`tooleval_agents.models.server_identity`)."""
    judge: dict[str, Any] | None = None
    """Judge model, same shape as ``model``; ``from_model`` lists the endpoint arguments it
    took from the model's (same provider, no endpoint of its own)."""
    scoring_options: dict[str, Any] = Field(default_factory=dict)
    """e.g. ``{"scoring": "strict"}``."""
    tool_faults: dict[str, Any] | None = None
    """Seeded tool faults (``--tool-faults``: rate, kinds, seed); ``None``: none."""
    dataset: DatasetRef
    versions: dict[str, str] = Field(default_factory=dict)
    """Package versions (tooleval-agents, langchain-core, langgraph, langsmith...)."""
    created_at: str = Field(default_factory=now)
    langsmith: dict[str, Any] | None = None
    """Experiment/session id and URL when uploaded."""


    @property
    def unsealed(self) -> bool:
        """An agent command played the run outside the agent sandbox: it could read the data
        (the gold answers), so its numbers are marked (:data:`UNSEALED_NOTE`)."""
        return self.agent_cmd is not None and not (self.agent_sandbox or {}).get("sealed")


UNSEALED_NOTE = ("unsealed: the agent command ran as you, outside the agent sandbox: it could "
                 "read the data (gold answers included) and the run's files, so these numbers "
                 "are not sealed (--agent-sandbox seals it: docs/security.md)")
"""What a run's summary, ``compare`` and the viewer say of an unsealed agent command."""


class Usage(BaseModel):
    """Token usage of one example: its answers' (:attr:`ResultBase.usage`: made or replayed
    from the response cache, with the tokens recorded when made), or what was paid for them
    (:attr:`ResultBase.spent`: provider calls and their tokens; a replay costs nothing)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    """Input tokens the provider served from its prompt cache (part of ``input_tokens``)."""
    model_calls: int = 0
    """Answers (``usage``: made or replayed; ``spent``: made by the provider)."""
    cache_hits: int = 0
    """Model answers served by the response cache."""
    unknown_usage: int = 0
    """Replayed answers whose cache entry recorded no token usage: their tokens are missing."""
    batched_calls: int = 0
    """Model calls answered through a provider batch (``--batch``; part of ``model_calls``)."""
    batched_input_tokens: int = 0
    batched_output_tokens: int = 0
    batched_cached_input_tokens: int = 0
    """The tokens of the batched calls (part of the totals above), priced at batch rates."""


class ModelCall(BaseModel):
    """One chat model call of an example."""

    messages: list[str] = Field(default_factory=list)
    """Ids of the messages sent, in order (in the run's ``prompts.jsonl``)."""
    tools: str | None = None
    """Id of the tool definitions bound (``None``: no tools)."""
    output: dict[str, Any] | None = None
    """The answer: ``{"role": "ai", "content": ..., "tool_calls": [...]}`` (``None``: the
    call failed or never answered)."""
    error: str | None = None
    """Why the call failed (the last try's error)."""
    sent_at: float | None = None
    """When its first try left (seconds since the epoch; ``None``: answered by the response
    cache, or written before this was kept): the order requests reached the server in."""
    request: dict[str, Any] | None = None
    """What an outside agent's request carried besides its messages and tools, when the model
    gateway answered it (:mod:`tooleval_agents.gateway`): its wire format, the model name it
    sent, streaming, and the fields accepted and not applied (``None``: an in-process call)."""


class ResultBase(BaseModel):
    """The small fields of an ``examples.jsonl`` line (its bulky ones are
    :class:`ExampleResult`'s)."""

    example_id: str
    index: int
    """Position in the split (joins with the dataset)."""
    epoch: int = 0
    """Which attempt (``--epochs``); every attempt has its own ``example_id``."""
    status: Status
    error: str | None = None
    """Error message (secrets redacted) for ``model_error`` / ``infra_error``."""
    error_kind: str | None = None
    """e.g. ``rate_limit``, ``server_error``, ``timeout``, ``connection``, ``parse``..."""
    error_at: str | None = None
    """For an ``agent_error``: where it was raised, the last frame of its traceback in the
    user's code (``ag.py:12 in build``; else the last frame)."""
    usage: Usage = Field(default_factory=Usage)
    """The answers' usage (made or replayed: :class:`Usage`)."""
    judge_usage: Usage = Field(default_factory=Usage)
    """The judge's calls while scoring this example (apart from the model's)."""
    spent: Usage | None = None
    """What the session that wrote this line paid for the model's answers (``None`` only
    before validation: :meth:`_from_older_line`)."""
    judge_spent: Usage | None = None
    """As :attr:`spent`, for the judge's calls."""
    latency_s: float = 0.0
    retries: int = 0
    """Provider retries spent on this example."""
    attempt: int = 1
    """1 for the first run, +1 per resume that retried it."""
    data_digest: str | None = None
    """:func:`example_digest` of the example's inputs and reference outputs when it ran: a
    resume over changed data is refused, whichever selection ran the example."""
    tool_calls: ToolCallCounts | None = None
    """How an agent's tool calls came back (structured, read from text, unread text calls);
    ``None``: no agent ran."""
    usage_reported: bool | None = None
    """An agent command's example (``--agent-cmd``): whether the agent reported its token
    usage (its ``usage`` is then what it reported); ``None``: the harness counted the model's
    calls itself."""
    finished_at: str = Field(default_factory=now)

    @model_validator(mode="after")
    def _from_older_line(self) -> ResultBase:
        """A line written before answers and payments were told apart: its ``usage`` counted
        what was paid (a cache hit added no call and no tokens). That is its ``spent``; its
        answers' usage gains the replayed answers as calls of unknown tokens."""
        for paid, answers in (("spent", "usage"), ("judge_spent", "judge_usage")):
            if getattr(self, paid) is None:
                old: Usage = getattr(self, answers)
                setattr(self, paid, old.model_copy())
                if old.cache_hits and not old.unknown_usage:
                    setattr(self, answers, old.model_copy(update={
                        "model_calls": old.model_calls + old.cache_hits,
                        "unknown_usage": old.cache_hits}))
        return self


class ExampleResult(ResultBase):
    """One line of ``examples.jsonl``."""

    outputs: dict[str, Any] = Field(default_factory=dict)
    """The workflow's outputs: raw_outputs, prediction, parse_error, trace, usage."""
    score: dict[str, Any] | None = None
    """The :class:`~tooleval_agents.contracts.ExampleScore` dump (scores, parts, comments,
    labels, error)."""
    inputs: dict[str, Any] | None = None
    """The example's inputs (what the strategy was given)."""
    reference_outputs: dict[str, Any] | None = None
    """The example's gold answer."""
    model_calls: list[ModelCall] = Field(default_factory=list)
    """Every chat model call of the example: messages sent (ids in the run's
    ``prompts.jsonl``), tools bound, the answer."""

    @property
    def format_error(self) -> str | None:
        """Why the answer could not be read in its task's format (:func:`format_error_of`)."""
        return format_error_of(self.status, self.outputs.get("parse_error"))


class ScoreHead(BaseModel):
    """What pooling reads of a score dump: an :class:`ExampleScore` without comments and
    evidence."""

    scores: dict[str, float] = Field(default_factory=dict)
    parts: dict[str, Part] = Field(default_factory=dict)
    labels: dict[str, str] = Field(default_factory=dict)
    error: str | None = None

    def example_score(self) -> ExampleScore:
        """As an :class:`ExampleScore` (no comments, no evidence)."""
        return ExampleScore.model_construct(scores=self.scores, parts=self.parts,
                                            labels=self.labels, error=self.error, comments={},
                                            evidence={})


class OutputsHead(BaseModel):
    """What tables read of a result's outputs (the rest is skipped)."""

    parse_error: Any = None


class ResultHead(ResultBase):
    """A result line read without its bulky fields (inputs, references, model calls, all of
    the outputs but ``parse_error``), the score as a :class:`ScoreHead`: what tables and
    comparisons read, validated at a fraction of the cost of a whole :class:`ExampleResult`."""

    score: ScoreHead | None = None
    outputs: OutputsHead = Field(default_factory=OutputsHead)

    @property
    def format_error(self) -> str | None:
        """As :attr:`ExampleResult.format_error`."""
        return format_error_of(self.status, self.outputs.parse_error)


def format_error_of(status: str, parse_error: Any) -> str | None:
    """The ``parse_error`` of a finished (``ok``) example's outputs: its answer could not be
    read in the task's format (no call line, no JSON list, no tool called), and it is scored
    as it is; ``None`` when it was read, or when the workflow failed (``model_error`` outputs are
    :data:`~tooleval_agents.contracts.EMPTY_OUTPUTS`, counted apart)."""
    return str(parse_error) if status == "ok" and parse_error else None


