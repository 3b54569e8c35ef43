"""Tool-call trajectory metrics, agentevals-style: does the agent's sequence of tool calls match
the reference one?

A trajectory is a list of calls ``{"name": ..., "args": {...}}``; :func:`tool_calls_of` also
reads LangChain / OpenAI message lists (the ``tool_calls`` of every assistant message). Modes
(:data:`MatchMode`):

* ``strict``: the same calls in the same order;
* ``unordered``: the same calls, any order (as multisets);
* ``subset``: every predicted call is a reference call (nothing extra; some may be missing)
  **and at least one call was made** when the reference has any;
* ``superset``: every reference call was made (extra calls allowed).

An empty trajectory against a non-empty reference matches in no mode: agentevals' ``subset``
holds vacuously for it, but an agent that made no call (or a text answer that did not parse)
made a wrong prediction, as the default profiles count it, not a partial success. Both empty
match in every mode (no call was needed and none was made).

Arguments (:data:`ArgsMode`) compare ``exact`` (equal JSON values), ``normalised`` (text
lowercased, outer quotes and whitespace runs ignored, numbers and booleans as text) or are
``ignore``\\d (tool names only).

:func:`create_trajectory_match_evaluator` gives an openevals-shaped evaluator for
``langsmith.evaluate``::

    from tooleval_agents.evaluators.trajectory import create_trajectory_match_evaluator

    evaluator = create_trajectory_match_evaluator(mode="unordered")
    evaluator(outputs={"messages": agent_messages},
              reference_outputs={"tool_calls": [{"name": "getweather", "args": {"city": "Paris"}}]})
    # {'key': 'trajectory_unordered_match', 'score': True, 'comment': '...'}

:func:`score_tool_use` pools the steps and tool errors of agent runs (the ``tool_call``
records of a workflow's ``trace``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from tooleval_agents.contracts import ExampleScore, Metrics, Part
from tooleval_agents.data.jsonio import parse_json
from tooleval_agents.results.corpus import Scores, as_corpus

MatchMode = Literal["strict", "unordered", "subset", "superset"]
MATCH_MODES: tuple[MatchMode, ...] = ("strict", "unordered", "subset", "superset")
ArgsMode = Literal["exact", "normalised", "ignore"]
Call = Mapping[str, Any]
"""``{"name": str, "args": dict}``."""


def _norm_value(value: Any) -> Any:
    if isinstance(value, bool | int | float):
        value = str(value)
    if isinstance(value, str):
        return " ".join(value.strip().strip("'\"‘’“”").split()).lower()
    if isinstance(value, Mapping):
        return {str(k): _norm_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_norm_value(v) for v in value]
    return value


def call_key(call: Call, args: ArgsMode = "normalised") -> str:
    """A call in comparison form: two calls match when their keys are equal.

    >>> call_key({"name": "f", "args": {"city": " 'Paris' ", "n": 2}}) == \\
    ...     call_key({"name": "f", "args": {"n": "2", "city": "paris"}})
    True
    """
    name = str(call.get("name") or "")
    if args == "ignore":
        return name
    values = dict(call.get("args") or {})
    if args == "normalised":
        values = {str(k): _norm_value(v) for k, v in values.items()}
    return json.dumps([name, values], sort_keys=True, ensure_ascii=False, default=str)


def trajectory_match(predicted: Sequence[Call], reference: Sequence[Call], *,
                     mode: MatchMode = "strict", args: ArgsMode = "normalised") -> bool:
    """Whether the predicted calls match the reference ones in ``mode``.

    ``subset`` is not vacuous: no call against a non-empty reference is no match (see the
    module docstring).

    >>> a, b = {"name": "a", "args": {}}, {"name": "b", "args": {}}
    >>> [trajectory_match([b, a], [a, b], mode=m) for m in MATCH_MODES]
    [False, True, True, True]
    >>> trajectory_match([a], [a, b], mode="subset"), trajectory_match([a], [a, b], mode="superset")
    (True, False)
    >>> [trajectory_match([], [a], mode=m) for m in MATCH_MODES]
    [False, False, False, False]
    """
    pred = [call_key(c, args) for c in predicted]
    ref = [call_key(c, args) for c in reference]
    if mode == "strict":
        return pred == ref
    p, r = Counter(pred), Counter(ref)
    if mode == "unordered":
        return p == r
    if mode == "subset":
        return not (p - r) and (bool(pred) or not ref)
    if mode == "superset":
        return not (r - p)
    raise ValueError(f"trajectory match mode must be one of {MATCH_MODES}, got {mode!r}")


def _calls_in(message: Any) -> list[Call]:
    if isinstance(message, Mapping):
        if "name" in message and "args" in message and "role" not in message:
            return [message]
        calls = message.get("tool_calls") or []
        out: list[Call] = []
        for c in calls:
            if "function" in c:  # OpenAI wire format
                raw = c["function"].get("arguments") or "{}"
                out.append({"name": c["function"].get("name"),
                            "args": _wire_args(raw) if isinstance(raw, str) else raw})
            else:
                out.append({"name": c.get("name"), "args": c.get("args") or {}})
        return out
    return [{"name": c.get("name"), "args": c.get("args") or {}}
            for c in getattr(message, "tool_calls", None) or []]


INVALID_ARGS = "<invalid arguments>"
"""The one key of the arguments of a wire-format call whose ``arguments`` text is not a JSON
object (the text is its value): the call keeps its name, and its arguments match no
reference's."""


def _wire_args(raw: str) -> dict[str, Any]:
    try:
        value = parse_json(raw)
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {INVALID_ARGS: raw}


def tool_calls_of(value: Any) -> list[Call]:
    """The tool calls of a trajectory given as calls, messages (LangChain or OpenAI dicts), or a
    dict holding ``tool_calls``, ``trajectory`` or ``messages``."""
    if isinstance(value, Mapping):
        for key in ("tool_calls", "trajectory", "messages"):
            if key in value:
                return tool_calls_of(value[key])
        return _calls_in(value)
    return [c for item in value or [] for c in _calls_in(item)]


def steps_trajectory(steps: Any, *, with_args: bool) -> list[Call]:
    """The calls of a list of plan steps ``{"step", "tool"[, "param"]}``: the steps that name a
    tool, in order (``param`` as the arguments when ``with_args`` and it is an object).

    >>> steps_trajectory([{"step": "1", "tool": "f", "param": {"a": 1}}, {"step": "2"}],
    ...                  with_args=True)
    [{'name': 'f', 'args': {'a': 1}}]
    """
    items = steps if isinstance(steps, list) else []
    return [{"name": s["tool"], "args": s["param"] if with_args
             and isinstance(s.get("param"), Mapping) else {}}
            for s in items if isinstance(s, Mapping) and s.get("tool")
            and isinstance(s["tool"], str)]


def create_trajectory_match_evaluator(
    *, mode: MatchMode = "strict", args: ArgsMode = "normalised", key: str | None = None,
) -> Callable[..., dict[str, Any]]:
    """An evaluator ``(inputs=None, outputs, reference_outputs) -> {key, score, comment}``
    scoring ``True`` when the output's tool calls match the reference's in ``mode``.

    >>> ev = create_trajectory_match_evaluator(mode="superset")
    >>> ev(outputs=[{"name": "f", "args": {"x": 1}}, {"name": "g", "args": {}}],
    ...    reference_outputs=[{"name": "f", "args": {"x": "1"}}])["score"]
    True
    """
    if mode not in MATCH_MODES:
        raise ValueError(f"trajectory match mode must be one of {MATCH_MODES}, got {mode!r}")
    name = key or f"trajectory_{mode}_match"

    def evaluator(inputs: Any = None, outputs: Any = None, reference_outputs: Any = None,
                  **_: Any) -> dict[str, Any]:
        predicted, reference = tool_calls_of(outputs), tool_calls_of(reference_outputs)
        ok = trajectory_match(predicted, reference, mode=mode, args=args)
        return {"key": name, "score": ok,
                "comment": f"{len(predicted)} call(s) against {len(reference)} reference "
                           f"call(s): {'match' if ok else 'no match'} ({mode}, args {args})"}

    return evaluator


# ----------------------------------------------------------------------------- example scores

def score_trajectory(predicted: Sequence[Call], reference: Sequence[Call], *,
                     args: ArgsMode = "normalised") -> ExampleScore:
    """``trajectory_<mode>`` (0/100) for every mode, with a comment on the strict one."""
    scores = {f"trajectory_{m}": 100.0 * trajectory_match(predicted, reference, mode=m,
                                                          args=args) for m in MATCH_MODES}
    return ExampleScore(scores=scores, comments={
        "trajectory_strict": f"{len(predicted)} predicted call(s), {len(reference)} gold"})


def trajectory_failure(reason: str) -> ExampleScore:
    """Every trajectory match 0 for an example whose calls could not be compared."""
    return ExampleScore(scores={f"trajectory_{m}": 0.0 for m in MATCH_MODES},
                        comments={"trajectory_strict": f"not compared: {reason}"})


def score_tool_use(trace: Sequence[Mapping[str, Any]] | None) -> ExampleScore:
    """Steps and tool errors of an agent run, from its trace (the ``agent`` record
    :func:`tooleval_agents.graphs.tool_agent.agent_node` writes). Parts ``tool_errors`` (failed
    calls of all calls) and ``tool_calls`` / ``agent_turns`` (per example); without an agent record
    the parts are empty, so a run of text strategies reports them n/a, not 0.

    >>> score_tool_use([{"kind": "agent", "turns": 3, "tool_calls": 4, "tool_errors": 1}]).parts
    {'tool_errors': Part(hits=1.0, total=4.0), 'tool_calls': Part(hits=4.0, total=1.0), \
'agent_turns': Part(hits=3.0, total=1.0)}
    """
    agent = next((r for r in trace or () if isinstance(r, Mapping) and r.get("kind") == "agent"),
                 None)
    if agent is None:
        return ExampleScore()
    calls, errors = int(agent.get("tool_calls") or 0), int(agent.get("tool_errors") or 0)
    return ExampleScore(parts={"tool_errors": Part(hits=errors, total=calls),
                               "tool_calls": Part(hits=calls, total=1),
                               "agent_turns": Part(hits=int(agent.get("turns") or 0), total=1)})


COUNT_METRICS = ("tool_calls", "agent_turns")
"""The metrics of :func:`aggregate_trajectory` that count per example (not 0-100): a scorer
that reports them lists them as its ``count_metrics``."""
HIGHER_IS_BETTER = tuple(f"trajectory_{m}" for m in MATCH_MODES)
"""The metrics of :func:`aggregate_trajectory` a better agent has higher (its
``Scorer.higher_is_better``); the counts have no direction."""
LOWER_IS_BETTER = ("tool_error_rate",)
"""... and lower (``Scorer.lower_is_better``)."""


def aggregate_trajectory(scores: Scores) -> Metrics:
    """Mean trajectory matches (0-100), the pooled tool-error rate (0-100), and tool calls and
    model turns per example (counts); n/a where nothing was counted."""
    c = as_corpus(scores)
    out: Metrics = {f"trajectory_{m}": c.mean(f"trajectory_{m}") for m in MATCH_MODES}
    out["tool_error_rate"] = c.pooled("tool_errors")
    for key in ("tool_calls", "agent_turns"):  # per example: pooled hits over 1 per example
        value = c.pooled(key)
        out[key] = None if value is None else value / 100.0
    return out
