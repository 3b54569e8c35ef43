"""A benchmark's scorers as evaluators for your own ``langsmith.evaluate``.

:func:`evaluators_for` gives the row and summary evaluators of one split: the benchmark's own
:meth:`~tooleval_agents.registry.Benchmark.scorer`, the one ``tooleval run`` and ``tooleval
score`` use, so the feedback keys are the run's metric names and the summary its numbers.
:func:`agent_io_for` gives what an agent over ``{"messages": [...]}`` (``create_agent``) needs
to play the split: the benchmark's tools, the example as messages, and the reader of its final
state, which the evaluators also apply themselves to an output holding ``messages``.

Example::

    from langsmith import evaluate
    from tooleval_agents import evaluators_for

    row, summary = evaluators_for("appbench", subset="ss")
    evaluate(my_target, data="appbench-plan-ss", evaluators=[row],
             summary_evaluators=[summary])
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic_core import to_jsonable_python

from tooleval_agents.contracts import (
    EMPTY_OUTPUTS,
    AgentIO,
    ExampleScore,
    Scorer,
    ScoringContext,
    feedback,
)
from tooleval_agents.data.datadir import data_dir_or_samples, resolve_data_dir
from tooleval_agents.data.langsmith_datasets import to_examples
from tooleval_agents.redaction import redact_text
from tooleval_agents.registry import (
    Benchmark,
    build_scorer,
    get_benchmark,
    resolve_split,
    scoring_options_of,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage
    from langsmith.schemas import Example

Feedback = list[dict[str, Any]]
RowEvaluator = Callable[..., Feedback]
"""``row(inputs, outputs, reference_outputs) -> [{"key", "score", "comment"}, ...]``."""
SummaryEvaluator = Callable[..., Feedback]
"""``summary(inputs, outputs, reference_outputs)`` over lists -> ``[{"key", "score"}, ...]``."""
_MAX_ERROR = 2000
log = logging.getLogger(__name__)


class Evaluators(NamedTuple):
    """A split's LangSmith evaluators: ``evaluators=[row], summary_evaluators=[summary]``."""

    row: RowEvaluator
    """Scores one example: its feedback (each per-example score, label and scoring error)."""
    summary: SummaryEvaluator
    """Pools every example into the corpus metrics (a metric with nothing to count, n/a, is
    left out)."""


# ----------------------------------------------------------------------------- one example

def scoring_failure(exc: BaseException) -> ExampleScore:
    """A scorer that raised, as the example's score: counted, never dropped (secrets masked)."""
    text = redact_text(f"{type(exc).__name__}: {exc}".strip())[:_MAX_ERROR]
    return ExampleScore(error=f"scoring failed: {text}")


def _as_score(value: Any) -> ExampleScore:
    return value if isinstance(value, ExampleScore) else ExampleScore.model_validate(value)


def score_one(scorer: Scorer, inputs: dict[str, Any], outputs: dict[str, Any],
              reference_outputs: dict[str, Any]) -> ExampleScore:
    """``scorer.score`` of one example; a failure is the example's :func:`scoring_failure`."""
    try:
        return _as_score(scorer.score(inputs, outputs, reference_outputs))
    except Exception as exc:  # a scorer failure is recorded on the example
        return scoring_failure(exc)


async def ascore_one(scorer: Scorer, inputs: dict[str, Any], outputs: dict[str, Any],
                     reference_outputs: dict[str, Any]) -> ExampleScore:
    """:func:`score_one` with the scorer's ``ascore`` when it has one (a judge's calls)."""
    if scorer.ascore is None:
        return score_one(scorer, inputs, outputs, reference_outputs)
    try:
        return _as_score(await scorer.ascore(inputs, outputs, reference_outputs))
    except Exception as exc:  # a scorer failure is recorded on the example
        return scoring_failure(exc)


# ----------------------------------------------------------------------------- the evaluators

def _digest(*parts: Any) -> str:
    text = json.dumps(to_jsonable_python(parts, fallback=repr), sort_keys=True, default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def scorer_evaluators(scorer: Scorer, *, name: str,
                      read: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]
                      | None = None) -> Evaluators:
    """A :class:`Scorer` as LangSmith row and summary evaluators named ``<name>_row`` and
    ``<name>_summary``. ``read(inputs, outputs)`` turns a target's outputs into what the
    scorer reads first; a target that failed (no outputs) scores as the empty answer.

    The summary pools the scores the row evaluator already computed for the same example
    (each is scored once: a judge is not asked twice), scoring the others itself.
    """
    scored: dict[str, ExampleScore] = {}

    def score(inputs: Any, outputs: Any, reference_outputs: Any) -> ExampleScore:
        inputs, reference = dict(inputs or {}), dict(reference_outputs or {})
        answer = dict(outputs) if outputs else dict(EMPTY_OUTPUTS)
        if read is not None:
            try:
                answer = read(inputs, answer)
            except Exception as exc:  # an unreadable output is the example's failure
                return scoring_failure(exc)
        return score_one(scorer, inputs, answer, reference)

    def row(inputs: dict[str, Any], outputs: dict[str, Any],
            reference_outputs: dict[str, Any]) -> Feedback:
        result = score(inputs, outputs, reference_outputs)
        scored[_digest(inputs, outputs, reference_outputs)] = result
        return feedback(result)

    def summary(inputs: Sequence[dict[str, Any]], outputs: Sequence[dict[str, Any]],
                reference_outputs: Sequence[dict[str, Any]]) -> Feedback:
        def again(i: Any, o: Any, r: Any) -> ExampleScore:
            found = scored.pop(_digest(i, o, r), None)
            return found if found is not None else score(i, o, r)

        results = [again(i, o, r)
                   for i, o, r in zip(inputs, outputs, reference_outputs, strict=True)]
        return [{"key": k, "score": v} for k, v in scorer.aggregate(results).items()
                if v is not None]

    row.__name__, summary.__name__ = f"{name}_row", f"{name}_summary"
    return Evaluators(row, summary)


def _messages(value: Any) -> list[BaseMessage]:
    """An agent state's ``messages`` as messages (a traced run may hold them as dicts)."""
    from langchain_core.load import load
    from langchain_core.messages import BaseMessage, convert_to_messages

    items = [load(m, allowed_objects="messages") if isinstance(m, dict) and m.get("lc") == 1
             else m for m in value]
    return [m if isinstance(m, BaseMessage) else convert_to_messages([m])[0] for m in items]


def agent_io_for(benchmark: str | Benchmark, *, task: str | None = None,
                 subset: str | None = None) -> AgentIO:
    """What an agent over ``{"messages": [...]}`` needs to play a split: the benchmark's
    tools, the example as messages, and the reader of its final messages
    (:class:`~tooleval_agents.contracts.AgentIO`).

    Example::

        io = agent_io_for("appbench", subset="ss")
        agent = create_agent(model, io.tools({}))
        target = lambda inputs: agent.invoke({"messages": io.messages(inputs)})

    Raises:
        ValueError: the split is not solved by such an agent, or is ambiguous.
    """
    bench = get_benchmark(benchmark) if isinstance(benchmark, str) else benchmark
    split = resolve_split(bench, task, subset)
    io = bench.agent_io(split)
    if io is None:
        raise ValueError(f"{split.name} is not played by a tool-calling agent: its target "
                         "returns the answer itself")
    return io


def examples_for(benchmark: str | Benchmark, *, task: str | None = None,
                 subset: str | None = None,
                 data_dir: Path | str | None = None) -> list[Example]:
    """A split's examples as LangSmith ``Example`` objects (the ones ``tooleval data push``
    uploads, with the same ids), for ``langsmith.evaluate(..., data=examples_for(...),
    upload_results=False)``: an evaluation with no LangSmith at all. ``data_dir``: as
    :func:`~tooleval_agents.run_experiment` reads it (the bundled samples when no data was
    named or fetched, with a logged warning).

    Raises:
        ValueError: an unknown or ambiguous split. DatasetMissingError: no data for it.
    """
    bench = get_benchmark(benchmark) if isinstance(benchmark, str) else benchmark
    split = resolve_split(bench, task, subset)
    data, note = data_dir_or_samples(bench, [split], data_dir)
    if note:
        log.warning("%s", note)
    return list(to_examples(split, data))


def evaluators_for(benchmark: str | Benchmark, *, task: str | None = None,
                   subset: str | None = None, scoring: str | None = None,
                   judge: str | BaseChatModel | None = None,
                   options: Mapping[str, Any] | None = None,
                   data_dir: Path | str | None = None) -> Evaluators:
    """The row and summary evaluators of one split for ``langsmith.evaluate``: the same
    scorer as ``tooleval run`` (feedback keys are its metric names), judge metrics included
    when ``judge`` (a chat model, or ``"provider:model"`` at temperature 0) is given.

    ``scoring``: the scoring profile (AppBench ``strict`` or ``paper``); ``options``: other
    scoring options (``{"graph": True}``, UltraTool judge ``{"prompts": "official"}``,
    read from ``data_dir``). ``outputs`` is what the split's workflow returns (see
    docs/langsmith.md, "In your own LangSmith evaluation"), or an agent's final state
    ``{"messages": [...]}`` for splits an agent plays (:func:`agent_io_for`).

    Example::

        row, summary = evaluators_for("ultratool", task="tool_usage", subset="en")
        evaluate(target, data="ultratool-tool_usage-en", evaluators=[row],
                 summary_evaluators=[summary])

    Raises:
        ValueError: an unknown or ambiguous split, a bad option, or a task scored by a judge
            (UltraTool ``tool_creation``) without ``judge``.
    """
    bench = get_benchmark(benchmark) if isinstance(benchmark, str) else benchmark
    split = resolve_split(bench, task, subset)
    given = scoring_options_of(bench, split, {**(options or {}), **(
        {"scoring": scoring} if scoring is not None else {})})  # a bad one raises here
    model = _judge(judge)
    try:
        scorer = build_scorer(bench, split, given, ScoringContext(
            data_dir=resolve_data_dir(data_dir), judge=model))
    except ValueError as exc:  # options are valid: what is missing is the judge
        if model is not None:
            raise
        raise ValueError(f"{split.name} needs a judge: pass judge=<a chat model or "
                         f"'provider:model'> to evaluators_for ({exc})") from None
    io = bench.agent_io(split)
    read = None if io is None else _agent_reader(io)
    return scorer_evaluators(scorer, name=split.name, read=read)


def _agent_reader(io: AgentIO) -> Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]:
    """Outputs holding an agent's ``messages`` (and no ``prediction``) read by ``io``."""

    def read(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
        if "prediction" in outputs or not isinstance(outputs.get("messages"), list):
            return outputs
        return io.outputs(inputs, _messages(outputs["messages"]))

    return read


def _judge(judge: str | BaseChatModel | None) -> BaseChatModel | None:
    if judge is None:
        return None
    from tooleval_agents.models.specs import is_offline, judge_model  # deferred: LangChain

    if is_offline(judge):
        raise ValueError(f"judge={judge!r}: the offline models cannot judge; pass a chat "
                         "model or 'provider:model'")
    return judge_model(judge)


__all__ = ["Evaluators", "agent_io_for", "ascore_one", "evaluators_for", "examples_for",
           "score_one",
           "scorer_evaluators", "scoring_failure"]
