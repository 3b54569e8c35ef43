"""UltraTool plans run on simulated tools: a plan executor, and the check of a created skeleton.

The paper never ran its tools. Here every skeleton becomes a schema-checked tool with simulated
results (:mod:`.skeletons`; as a LangChain ``StructuredTool``:
:func:`tooleval_agents.ultratool.tools.skeleton_tool`). Skeletons (including ones a model
creates) are data: :func:`validate_skeleton` checks them, nothing is ever executed as code.

:func:`execute_plan` runs a plan's calls in order and resolves ``<...>`` references.

**Reference rule.** Every executed step leaves *outputs*: a successful tool call one per result
property (labelled by the property name, its description and the step text), any step one per
``(Key: value)`` annotation of its text (labelled by key and value; the plans name what a step
obtains this way, e.g. ``(Transaction ID: created transaction ID)``) and a tool-free step one for
its text. A reference ``<X>`` resolves

1. *by name* to the latest earlier output with a label whose rapidfuzz ``token_sort_ratio`` to X
   is at least :data:`NAME_THRESHOLD` (best score wins; Chinese is compared by character), else
2. *by position* to the latest earlier output of any kind (the gold plans hold references to
   values no earlier step names, e.g. ``<user's contact information>``), else
3. it is unresolved: nothing ran before it (a reference in the first step, or only after failed
   calls).

A reference repeated within one call counts once. On the gold plans (1000 samples per
language) all references resolve: 308/328 (en) and 305/327 (zh) by name, the rest by position.
Run after an unrelated sample's plan instead, only 1% (en) / 4% (zh) of them match by name, so
the name rule carries signal; the trace records which rule resolved each reference.

**Validity.** Plan calls hold every value as text. Text is read as a Python literal
(``ast.literal_eval``, never ``eval``) where the declared type is not ``string``; enumerations
match case-, space- and hyphen-insensitively. A call is *invalid* (``error``) for an unknown
tool, an unknown or missing argument, or a literal of the wrong type (``[1, 2]`` or ``2.5`` for
an integer). Free text for a typed argument (``account_id='obtained account ID'``) or text
outside an enumeration is a *warning*: the plans use such text as placeholders for values to be
filled in, so the call runs, but a *strict* count rejects it. Gold plans: 2381/2381 calls valid
in both languages; strict 2315 (en) and 2326 (zh). The ``StructuredTool`` itself is strict: a
live call with ``"x"`` for an integer is rejected.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field
from rapidfuzz import fuzz, utils

from tooleval_agents.ultratool.calls import parse_call
from tooleval_agents.ultratool.records import (
    PlanStep,
    ToolCall,
    ToolSkeleton,
    step_id,
)
from tooleval_agents.ultratool.skeletons import (
    JSON_TYPES,
    ToolCallError,
    check_args,
    fake_value,
    simulate_result,
)

NAME_THRESHOLD = 70.0
"""Minimum ``token_sort_ratio`` (0-100) for a reference to resolve by name (see module doc)."""

_REF = re.compile(r"<[^<>]+>")
# A separator before the next ``Key:`` of an annotation. The second branch is the case where
# the key is only the last blank (``, :v``), as ``[,，;；]\s*(?=[^,，;；:：]+[:：])`` read it;
# the possessive first branch keeps a long blank run from being retried blank by blank.
_ANNOTATION_ITEM = re.compile(r"[,，;；](?:\s*+(?=[^,，;；:：]+[:：])|\s*(?=\s[:：]))")
_COLON = re.compile(r"[:：]")
_CJK = re.compile(r"([\u3400-\u9fff\uf900-\ufaff])")
_CAMEL = re.compile(r"([a-z])([A-Z])")


# --- skeleton validation (model-created tools are data) ----------------------------------------

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
KNOWN_TYPES = frozenset([*JSON_TYPES, "null"])


def _schema_problems(obj: Any, where: str) -> list[str]:
    if not isinstance(obj, Mapping):
        return [f"{where} must be an object schema, got {type(obj).__name__}"]
    problems = []
    if obj.get("type", "object") != "object":
        problems.append(f"{where}.type must be 'object', got {obj.get('type')!r}")
    props = obj.get("properties", {})
    if not isinstance(props, Mapping):
        return [*problems, f"{where}.properties must be an object"]
    for name, prop in props.items():
        if not isinstance(prop, Mapping):
            problems.append(f"{where}.{name} must be an object")
            continue
        t = prop.get("type")
        types = [t] if isinstance(t, str) else t if isinstance(t, list) else []
        if t is not None and not types:
            problems.append(f"{where}.{name}.type must be a string, got {t!r}")
        for x in types:
            if x not in KNOWN_TYPES:
                problems.append(f"{where}.{name}: unknown type {x!r} "
                                f"(use one of {', '.join(sorted(KNOWN_TYPES))})")
    return problems


def validate_skeleton(obj: Any) -> list[str]:
    """Problems of a tool skeleton (a dict or :class:`ToolSkeleton`); ``[]`` when usable.

    Checked: a non-empty identifier ``name``, a non-empty ``description``, ``arguments`` and
    ``results`` object schemas whose properties are objects with known JSON types, argument
    names usable as keyword names. A property without a type is allowed (any value).

    >>> for problem in validate_skeleton({"name": "f", "description": "",
    ...                                   "arguments": {"type": "array"}}):
    ...     print(problem)
    description must be a non-empty string
    arguments.type must be 'object', got 'array'
    results is missing
    """
    if isinstance(obj, ToolSkeleton):
        obj = obj.model_dump(mode="json", exclude_none=True)
    if not isinstance(obj, Mapping):
        return [f"a tool skeleton must be an object, got {type(obj).__name__}"]
    problems = []
    name = obj.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        problems.append(f"name must be an identifier such as 'file_write', got {name!r}")
    if not isinstance(obj.get("description"), str) or not obj["description"].strip():
        problems.append("description must be a non-empty string")
    for part in ("arguments", "results"):
        if part not in obj:
            problems.append(f"{part} is missing")
        else:
            problems += _schema_problems(obj[part], part)
    args = obj.get("arguments")
    if isinstance(args, Mapping) and isinstance(args.get("properties"), Mapping):
        problems += [f"argument name {n!r} is not a keyword name" for n in args["properties"]
                     if not (isinstance(n, str) and n.isidentifier())]
    return problems


# --- plan execution ----------------------------------------------------------------------------

ResolvedBy = Literal["name", "position"]


class Resolution(BaseModel):
    """Where a ``<...>`` reference got its value."""

    reference: str
    """The reference as written, with brackets."""
    step: str
    """Step id of the step whose output it resolved to."""
    output: str
    """That output: a result property name, an annotation key, or the step text."""
    by: ResolvedBy
    """``name``: a label matched; ``position``: the latest earlier output (fallback)."""
    score: float
    """Best ``token_sort_ratio`` between the reference and the output's labels (0-100)."""
    value: Any
    """The value the reference stands for."""


class CallTrace(BaseModel):
    """One executed call."""

    step: str
    """Step id."""
    tool: str
    """Tool name as called."""
    args: dict[str, Any]
    """Arguments after reference resolution and type coercion (as given when invalid)."""
    result: dict[str, Any] | None = None
    """Simulated result (``None`` when the call failed)."""
    error: str | None = None
    """Why the call cannot run: unknown tool, unknown or missing argument, a literal of the wrong
    type (``[1, 2]`` for an integer)."""
    warnings: list[str] = Field(default_factory=list)
    """Free text given where the schema wants another type or an enumerated value: the call runs
    with the text as a placeholder, but a strict reading would reject it."""
    resolved_references: list[Resolution] = Field(default_factory=list)
    """References that resolved, in order of appearance."""
    unresolved_references: list[str] = Field(default_factory=list)
    """References with nothing before them to resolve to."""

    @property
    def valid(self) -> bool:
        return self.error is None

    @property
    def strict(self) -> bool:
        """Valid without warnings."""
        return self.error is None and not self.warnings


class ExecutionTrace(BaseModel):
    """Every call of a plan, in order."""

    calls: list[CallTrace] = Field(default_factory=list)
    """One trace per tool call (tool-free steps leave outputs but no trace)."""

    @property
    def valid_calls(self) -> int:
        return sum(c.valid for c in self.calls)

    @property
    def strict_calls(self) -> int:
        return sum(c.strict for c in self.calls)

    @property
    def references(self) -> int:
        return sum(len(c.resolved_references) + len(c.unresolved_references) for c in self.calls)

    @property
    def resolved(self) -> int:
        return sum(len(c.resolved_references) for c in self.calls)

    @property
    def resolved_by_name(self) -> int:
        return sum(r.by == "name" for c in self.calls for r in c.resolved_references)

    @property
    def tools(self) -> set[str]:
        return {c.tool for c in self.calls}


class _Output(BaseModel):
    step: str
    name: str
    labels: list[str]
    value: Any


def _process(text: str) -> str:
    return _CJK.sub(r" \1 ", utils.default_process(text)).strip()


def _similarity(a: str, b: str) -> float:
    return float(fuzz.token_sort_ratio(_process(a), _process(b)))


def _annotation_span(step: str) -> tuple[int, int] | None:
    """Where the ``(Key: value, ...)`` at the end of a step text is: the index of its opening
    parenthesis and of its closing one; None when the text does not end with one.

    What ``[(（]([^()（）]*[:：][^()（）]*)[)）]\\s*$`` finds, with ``str`` searches from the
    end (the pattern retried every opening parenthesis, scanning to the end each time).
    """
    close = len(step.rstrip()) - 1
    if close < 0 or step[close] not in ")）":
        return None
    opening = max(step.rfind(p, 0, close) for p in "()（）")
    if opening < 0 or step[opening] not in "(（" or _COLON.search(step, opening, close) is None:
        return None
    return opening, close


def step_annotations(step: str) -> list[tuple[str, str]]:
    """The ``(Key: value, Key2: value2)`` pairs at the end of a step text (an item without a
    key before its first colon is left out).

    >>> step_annotations("1.3 Get the ID (Transaction ID: created transaction ID)")
    [('Transaction ID', 'created transaction ID')]
    """
    span = _annotation_span(step)
    if span is None:
        return []
    pairs = []
    for item in _ANNOTATION_ITEM.split(step[span[0] + 1:span[1]]):
        colon = _COLON.search(item)
        if colon is not None and colon.start() > 0:
            pairs.append((item[:colon.start()].strip(), item[colon.end():].strip()))
    return pairs


def _step_text(step: str) -> str:
    """Step text without its number and trailing annotation."""
    parts = step.strip().split(" ", 1)
    text = parts[1] if len(parts) == 2 else parts[0]
    span = _annotation_span(text)
    return (text[:span[0]] if span else text).strip()


def _words(name: str) -> str:
    return _CAMEL.sub(r"\1 \2", name).replace("_", " ")


def _resolve(ref: str, outputs: Sequence[_Output]) -> Resolution | None:
    if not outputs:
        return None
    text = ref[1:-1]
    best: tuple[float, _Output] | None = None
    for out in outputs:  # later outputs win ties
        score = max((_similarity(text, label) for label in out.labels if label), default=0.0)
        if best is None or score >= best[0]:
            best = (score, out)
    assert best is not None
    score, out = best
    by: ResolvedBy = "name"
    if score < NAME_THRESHOLD:
        by, out = "position", outputs[-1]
        score = max((_similarity(text, label) for label in out.labels if label), default=0.0)
    return Resolution(reference=ref, step=out.step, output=out.name, by=by, score=score,
                      value=out.value)


PlanItem = tuple[str, ToolCall | str | None]
"""``(step text, call)``: a parsed call, a call string that failed to parse, or ``None`` for a
tool-free step. A bare step id works as step text (no annotations then)."""


def plan_items(steps: Sequence[PlanStep]) -> list[PlanItem]:
    """A raw sample's plan (or a model's plan in the same form) as :func:`execute_plan` input."""
    items: list[PlanItem] = []
    for s in steps:
        if s.kind == "tool_call":
            items.append((s.step, s.call or parse_call(s.tool) or s.tool))
        else:
            items.append((s.step, None))
    return items


def _substitute(value: str, values: Mapping[str, Any]) -> str:
    return _REF.sub(lambda m: str(values[m.group(0)]) if m.group(0) in values else m.group(0),
                    value)


def _placeholder(skeleton: ToolSkeleton, arg: str) -> Any:
    prop = skeleton.arguments.properties.get(arg)
    return fake_value(prop.model_dump(exclude_none=True), arg, "") if prop else ""


def _is_free_text(value: Any) -> bool:
    """Text that is no Python literal at all, e.g. ``obtained account ID``."""
    if not isinstance(value, str):
        return False
    try:
        ast.literal_eval(value.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return True
    return False


_HARD = ("extra_forbidden", "missing")


def _run_call(step: str, call: ToolCall | str, tools: Mapping[str, ToolSkeleton],
              outputs: Sequence[_Output], seed: int | str) -> CallTrace:
    if isinstance(call, str):
        return CallTrace(step=step_id(step), tool="", args={},
                         error=f"not a call of the form name(arg=value, ...): {call!r}",
                         unresolved_references=_REF.findall(call))
    refs = list(dict.fromkeys(_REF.findall(" ".join(call.args.values()))))
    resolutions = {r: res for r in refs if (res := _resolve(r, outputs)) is not None}
    trace = CallTrace(step=step_id(step), tool=call.name, args=dict(call.args),
                      resolved_references=list(resolutions.values()),
                      unresolved_references=[r for r in refs if r not in resolutions])
    skeleton = tools.get(call.name)
    if skeleton is None:
        trace.error = f"unknown tool {call.name!r} (tools: {', '.join(tools) or 'none'})"
        return trace
    inner = call.raw[call.raw.find("(") + 1:call.raw.rfind(")")]
    if call.unparsed is not None:
        trace.error = (f"{call.name}: arguments must be given as name=value with the tool's "
                       f"argument names; cannot read {call.unparsed!r}")
        return trace
    if not call.args and inner.strip():
        trace.error = f"{call.name}: arguments must be given as name=value"
        return trace
    values = {r: res.value for r, res in resolutions.items()}
    given = {k: _substitute(v, values) for k, v in call.args.items()}
    # A value that is one whole reference stands for an earlier output, and free text given
    # for a typed argument (or text outside an enumeration) for a value the plan leaves to be
    # filled in (``account_id='obtained account ID'``): both are accepted for any type, so a
    # well-typed placeholder is validated in their place. Free text is reported as a warning.
    stand_in = {k for k, v in call.args.items() if _REF.fullmatch(v.strip())}
    known = skeleton.arguments.properties
    checked = {k: _placeholder(skeleton, k) if k in stand_in and k in known else v
               for k, v in given.items()}
    validated, problems = check_args(skeleton, checked)
    soft = [p for p in problems if p.kind not in _HARD and p.argument in known
            and isinstance(value := given.get(p.argument), str)
            and (p.kind == "literal_error" or _is_free_text(value))]
    if soft:
        for p in soft:
            stand_in.add(p.argument)
            checked[p.argument] = _placeholder(skeleton, p.argument)
        trace.warnings = [f"{p.message} (kept as a placeholder)" for p in soft]
        validated, problems = check_args(skeleton, checked)
    if problems:
        trace.error = str(ToolCallError(skeleton.name, [p.message for p in problems]))
        return trace
    for k in stand_in & set(validated):
        validated[k] = values.get(call.args[k].strip(), given[k])
    trace.args = validated
    trace.result = simulate_result(skeleton, validated, seed=seed)
    return trace


def execute_plan(plan: Sequence[PlanItem], tools: Sequence[ToolSkeleton], *,
                 seed: int | str = 0) -> ExecutionTrace:
    """Run a plan's calls in order against simulated tools (see the module doc for how
    references resolve). Tool-free steps run nothing but leave their annotations as outputs.

    >>> t = ToolSkeleton.model_validate({"name": "rate", "description": "d",
    ...     "arguments": {"properties": {"x": {"type": "number"}}},
    ...     "results": {"properties": {"exchange_rate": {"type": "number"}}}})
    >>> c = parse_call("rate(x=<exchange rate>)")
    >>> trace = execute_plan([("1 Get rate", parse_call("rate(x=2)")), ("2 Use it", c)], [t])
    >>> [r.output for r in trace.calls[1].resolved_references], trace.valid_calls
    (['exchange_rate'], 2)
    """
    by_name: dict[str, ToolSkeleton] = {}
    for t in tools:
        by_name.setdefault(t.name, t)
    outputs: list[_Output] = []
    trace = ExecutionTrace()
    for step, call in plan:
        sid, text = step_id(step), _step_text(step)
        if call is not None:
            done = _run_call(step, call, by_name, outputs, seed)
            trace.calls.append(done)
            skeleton = by_name.get(done.tool)
            if done.result is not None and skeleton is not None:
                outputs += [_Output(step=sid, name=n, value=done.result[n],
                                    labels=[_words(n), p.description or "", text])
                            for n, p in skeleton.results.properties.items()]
            if done.error is not None:
                continue  # a failed step obtains nothing, not even what its text announces
        elif text:
            outputs.append(_Output(step=sid, name=text, labels=[text], value=text))
        outputs += [_Output(step=sid, name=k, labels=[k, v], value=v) for k, v in
                    step_annotations(step)]
    return trace
