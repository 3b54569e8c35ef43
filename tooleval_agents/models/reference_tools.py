"""How the offline models act as tool-calling agents: a gold :class:`ToolPlan` played turn by
turn, and its seeded corruptions for ``noisy-reference``.

A strategy that hands tools to an agent states, as one of its gold answers, the plan a perfect
agent follows (format :data:`TOOL_PLAN`): the calls with their literal arguments, the arguments
that take a value an earlier call returned (``refs``), and the calls that must have answered
first (``after``, e.g. opening an app before using its APIs). When tools are bound, the model
looks at the conversation so far -- whoever built it -- and answers with every planned call
whose inputs are ready (parallel calls in one ``AIMessage``), taking referenced values from the
earlier ``ToolMessage`` results; when nothing is left it answers with the plan's final text.

Call ids are ``call_<plan id>``, so the model recognises its own earlier calls in any agent's
message list. Nothing depends on call order across examples: answers are right under any
concurrency.

An agent outside the process may rename the tools it lists (Claude Code binds an MCP tool
``Trains__findtrains`` of server ``bench`` as ``mcp__bench__Trains__findtrains``; the model
gateway binds a Responses namespace's tools as ``<namespace>__<name>``): a planned call goes to
the one tool listed under its name or ending in ``__<name>`` (:func:`bound_name`), and a tool
result written after a preamble (Codex prefixes ``Wall time: ...\nOutput:\n``) is read from
its first line that starts a JSON value.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage
from pydantic import BaseModel, Field

from tooleval_agents.agents import content_text
from tooleval_agents.data.jsonio import parse_json

TOOL_PLAN = "tool_plan"
"""The :class:`~tooleval_agents.contracts.GoldAnswer` format of a tool plan."""
_PREFIX = "call_"
_MISSING = "unknown"
"""The value a referenced result takes when its call never answered (a dropped call)."""


class Ref(BaseModel):
    """An argument that takes a value an earlier call returned."""

    call: str
    """Id of the earlier planned call."""
    key: str
    """Key of that call's JSON result."""


class PlannedCall(BaseModel):
    """One tool call of a gold plan."""

    id: str
    """Unique within the plan."""
    name: str
    """The tool."""
    args: dict[str, Any] = Field(default_factory=dict)
    """Literal arguments."""
    refs: dict[str, Ref] = Field(default_factory=dict)
    """Arguments taken from earlier results."""
    after: list[str] = Field(default_factory=list)
    """Calls that must have answered before this one (besides those of ``refs``)."""
    via: str | None = None
    """A dispatcher tool to call instead, as ``via(name=..., arguments={...})``, when the agent
    was not given ``name`` but was given ``via`` (a tool made during the run, reached by an
    agent whose tool list is fixed)."""


class ToolPlan(BaseModel):
    """What a perfect agent does for one example."""

    calls: list[PlannedCall] = Field(default_factory=list)
    """The calls, in an order where every call's inputs come earlier."""
    final: str = "Done."
    """The final answer once every call has answered."""


Corruption = Literal["drop_call", "wrong_tool", "wrong_argument", "skip_prerequisite"]
CORRUPTIONS: tuple[Corruption, ...] = ("drop_call", "wrong_tool", "wrong_argument",
                                       "skip_prerequisite")
"""What ``noisy-reference`` does to a planned call: leave it out, call another bound tool,
change a literal argument, or leave out the calls it must come after (e.g. call an API of an
app it never opened)."""


def _rng(seed: str) -> random.Random:
    return random.Random(int(hashlib.sha256(seed.encode("utf-8")).hexdigest()[:16], 16))


def corrupt_plan(plan: ToolPlan, *, rate: float, seed: str,
                 tool_names: Sequence[str]) -> tuple[ToolPlan, list[str]]:
    """The plan with each call corrupted with probability ``rate`` (one kind each, drawn
    independently of ``rate``, so a higher rate corrupts a superset), and what was done.

    Deterministic per ``seed``. A kind that does not fit a call (no literal argument, nothing
    to come after, no other tool) is replaced by ``drop_call``.

    >>> p = ToolPlan(calls=[PlannedCall(id="0", name="f", args={"x": "1"})])
    >>> corrupt_plan(p, rate=0.0, seed="s", tool_names=["f", "g"])[0] == p
    True
    """
    rng = _rng(seed)
    dropped: set[str] = set()
    calls: list[PlannedCall] = []
    done: list[str] = []
    draws = [(rng.random(), rng.choice(CORRUPTIONS), rng.random()) for _ in plan.calls]
    for call, (p, kind, pick) in zip(plan.calls, draws, strict=True):
        if p >= rate:
            calls.append(call)
            continue
        others = sorted(set(tool_names) - {bound_name(call.name, tool_names)})
        if (kind == "wrong_tool" and not others) or (kind == "wrong_argument" and not call.args) \
                or (kind == "skip_prerequisite" and not call.after):
            kind = "drop_call"
        done.append(f"{call.id}:{kind}")
        if kind == "drop_call":
            dropped.add(call.id)
        elif kind == "wrong_tool":
            calls.append(call.model_copy(update={"name": others[int(pick * len(others))]}))
        elif kind == "wrong_argument":
            key = sorted(call.args)[int(pick * len(call.args))]
            value = str(call.args[key])
            wrong = value[: max(1, len(value) // 2)] + "?" if value else "?"
            calls.append(call.model_copy(update={"args": {**call.args, key: wrong}}))
        else:
            dropped.update(call.after)
            calls.append(call.model_copy(update={"after": []}))
    kept = [c.model_copy(update={"after": [a for a in c.after if a not in dropped]})
            for c in calls if c.id not in dropped]
    return ToolPlan(calls=kept, final=plan.final), done


def _state(messages: Sequence[BaseMessage]) -> tuple[set[str], dict[str, Any]]:
    """Ids of planned calls already made, and the answers of those that were run."""
    made: set[str] = set()
    answers: dict[str, Any] = {}
    for message in messages:
        kind = getattr(message, "type", None)
        if kind == "ai":
            for call in getattr(message, "tool_calls", None) or []:
                cid = str(call.get("id") or "")
                if cid.startswith(_PREFIX):
                    made.add(cid[len(_PREFIX):])
        elif kind == "tool":
            cid = str(getattr(message, "tool_call_id", ""))
            if cid.startswith(_PREFIX):
                answers[cid[len(_PREFIX):]] = result_value(content_text(message.content))
    return made, answers


_JSON_LINE = re.compile(r"^[ \t]*[\[{]", re.M)


def result_value(content: str) -> Any:
    """A tool result as the plan reads values from it: its JSON, else the JSON that starts
    its first line beginning with ``{`` or ``[`` (after an agent's preamble), else the text.

    >>> result_value("Wall time: 0.2 s" + chr(10) + "Output:" + chr(10) + '{"hotel": "Ritz"}')
    {'hotel': 'Ritz'}
    """
    try:
        return parse_json(content)
    except ValueError:
        pass
    start = _JSON_LINE.search(content)
    if start is None or start.start() == 0:
        return content
    try:
        return parse_json(content[start.start():])
    except ValueError:
        return content


def bound_name(name: str, bound: Sequence[str] | None) -> str:
    """The tool a planned call of ``name`` goes to among the ``bound`` tools: ``name`` itself
    when listed (or when nothing is known of the tools), else the one tool whose name ends in
    ``__<name>`` (an agent's renaming, e.g. ``mcp__bench__<name>``); ``name`` when none or
    several do.

    >>> bound_name("Trains__findtrains", ["mcp__bench__Trains__findtrains", "Read"])
    'mcp__bench__Trains__findtrains'
    >>> bound_name("f", ["f", "x__f"])
    'f'
    """
    if bound is None or name in bound:
        return name
    suffix = "__" + name
    found = [b for b in bound if b.endswith(suffix)]
    return found[0] if len(found) == 1 else name


def next_turn(plan: ToolPlan, messages: Sequence[BaseMessage],
              bound: Sequence[str] | None = None) -> AIMessage:
    """The agent's next answer: the planned calls whose inputs are ready, or the final text.

    A call is ready when it was not made yet and every call it refers to or comes after was
    made and answered (or is not in the plan: a corrupted plan dropped it). The answer holds
    the ready calls up to the first one that is not ready, so calls are made in plan order.
    A referenced value is read from the JSON object the earlier call answered; an error or a
    missing key gives ``"unknown"``. ``bound``: the names of the tools the agent was given
    (for :attr:`PlannedCall.via`).

    >>> from langchain_core.messages import HumanMessage, ToolMessage
    >>> plan = ToolPlan(calls=[PlannedCall(id="0", name="find", args={"city": "Paris"}),
    ...     PlannedCall(id="1", name="book", refs={"hotel": Ref(call="0", key="hotel")})])
    >>> first = next_turn(plan, [HumanMessage("book a hotel in Paris")])
    >>> [(c["name"], c["args"]) for c in first.tool_calls]
    [('find', {'city': 'Paris'})]
    >>> msgs = [first, ToolMessage('{"hotel": "Ritz"}', tool_call_id="call_0")]
    >>> [(c["name"], c["args"]) for c in next_turn(plan, msgs).tool_calls]
    [('book', {'hotel': 'Ritz'})]
    """
    made, answers = _state(messages)
    planned = {c.id for c in plan.calls}

    def answered(cid: str) -> bool:
        return cid not in planned or (cid in made and cid in answers)

    ready: list[PlannedCall] = []
    for c in plan.calls:  # the ready calls up to the first one that must wait: plan order kept
        if c.id in made:
            continue
        if not (all(answered(r.call) for r in c.refs.values()) and all(map(answered, c.after))):
            break
        ready.append(c)
    if not ready:
        return AIMessage(content=plan.final)
    calls = []
    for call in ready:
        args = dict(call.args)
        for key, ref in call.refs.items():
            result = answers.get(ref.call)
            value = result.get(ref.key) if isinstance(result, dict) else None
            args[key] = value if value is not None else _MISSING
        name = bound_name(call.name, bound)
        via = bound_name(call.via, bound) if call.via else None
        if via and bound is not None and name not in bound and via in bound:
            name, args = via, {"name": call.name, "arguments": args}
        calls.append({"name": name, "args": args, "id": f"{_PREFIX}{call.id}",
                      "type": "tool_call"})
    return AIMessage(content="", tool_calls=calls)


def bound_tool_names(tools: Sequence[dict[str, Any]] | None) -> list[str]:
    """Names of the tools a model was bound with (OpenAI tool format)."""
    names = []
    for tool in tools or ():
        function = tool.get("function") if isinstance(tool, dict) else None
        name = (function or {}).get("name") if isinstance(function, dict) else None
        if isinstance(name, str):
            names.append(name)
    return names
