"""UltraTool tool skeletons as simulated, schema-checked tools, and a plan executor.

The paper never ran its tools. Here every skeleton becomes a LangChain ``StructuredTool``
(:func:`tooleval_agents.ultratool.tools.skeleton_tool`) whose
``args_schema`` is a pydantic model generated from the skeleton's ``arguments`` schema, and whose
result is deterministic fake data shaped by its ``results`` schema. Skeletons (including ones a
model creates) are data: :func:`validate_skeleton` checks them, nothing is ever executed as code.

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
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator
from rapidfuzz import fuzz, utils

from tooleval_agents.ultratool.calls import parse_call
from tooleval_agents.ultratool.records import (
    PlanStep,
    PropertySchema,
    ToolCall,
    ToolSkeleton,
    step_id,
)

JSON_TYPES: dict[str, Any] = {
    "string": str, "integer": int, "number": float, "boolean": bool, "array": list, "object": dict,
}
"""JSON-schema type -> Python type of the generated argument field (no type -> ``Any``)."""

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


class ToolCallError(ValueError):
    """A call that does not fit its tool's argument schema; ``problems`` has one line each."""

    def __init__(self, tool: str, problems: list[str]) -> None:
        self.tool = tool
        self.problems = problems
        super().__init__(f"invalid call to {tool}: " + "; ".join(problems))


# --- skeletons -> pydantic models --------------------------------------------------------------

def _types(prop: PropertySchema | Mapping[str, Any]) -> list[str]:
    t = prop.type if isinstance(prop, PropertySchema) else prop.get("type")
    return [t] if isinstance(t, str) else [x for x in (t or []) if isinstance(x, str)]


def _extra(prop: PropertySchema) -> dict[str, Any]:
    return prop.model_extra or {}


def _annotation(prop: PropertySchema) -> Any:
    enum = _extra(prop).get("enum")
    if isinstance(enum, list) and enum and all(isinstance(v, str | int) for v in enum):
        return Literal[tuple(enum)]
    known = [JSON_TYPES[t] for t in _types(prop) if t in JSON_TYPES]
    if not known:
        return Any
    if "null" in _types(prop):
        known.append(type(None))
    ann = known[0]
    for t in known[1:]:
        ann = ann | t
    return ann


def coerce(value: Any, types: Sequence[str]) -> Any:
    """Text given for a non-string argument, read as a Python literal when that gives the
    declared type (``'5000'`` -> 5000, ``"['a', 'b']"`` -> list); anything else is returned as
    is for pydantic to judge. Never ``eval``.

    >>> coerce("['a', 'b']", ["array"]), coerce("True", ["boolean"]), coerce("5", ["string"])
    (['a', 'b'], True, '5')
    """
    if not isinstance(value, str) or not types or "string" in types:
        return value
    try:
        parsed = ast.literal_eval(value.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return value
    for t in types:
        if t == "integer" and isinstance(parsed, int) and not isinstance(parsed, bool):
            return parsed
        if t == "number" and isinstance(parsed, int | float) and not isinstance(parsed, bool):
            return parsed
        if (t == "boolean" and isinstance(parsed, bool)) or (t == "object"
                                                               and isinstance(parsed, dict)):
            return parsed
        if t == "array" and isinstance(parsed, list | tuple):
            return list(parsed)
    return value


class _Args(BaseModel):
    """Base of generated argument models: unknown names rejected, text coerced first."""

    model_config = ConfigDict(extra="forbid")
    json_types: ClassVar[dict[str, list[str]]] = {}
    enums: ClassVar[dict[str, dict[str, Any]]] = {}
    """Argument -> folded enum value -> the enum's own spelling."""

    @model_validator(mode="before")
    @classmethod
    def _coerce(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        out = {}
        for k, v in data.items():
            v = coerce(v, cls.json_types.get(k, []))
            if k in cls.enums and isinstance(v, str):
                v = cls.enums[k].get(_fold(v), v)
            out[k] = v
        return out


def _fold(text: str) -> str:
    """Enumeration values compare case-, space- and hyphen-insensitively."""
    return " ".join(text.replace("-", " ").replace("_", " ").split()).casefold()


def _field_name(name: str) -> str:
    """A pydantic-safe field name (the real name becomes the alias when it is not one)."""
    ok = name.isidentifier() and not name.startswith("_") and not hasattr(BaseModel, name)
    return name if ok else f"arg_{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def _absent() -> None:
    """Default of optional arguments (a factory, so schemas show no ``"default": null``)."""
    return None


@lru_cache(maxsize=4096)
def _model(skeleton_json: str) -> type[_Args]:
    skeleton = ToolSkeleton.model_validate_json(skeleton_json)
    required = skeleton.arguments.model_extra.get("required") if skeleton.arguments.model_extra \
        else None
    required = set(required) if isinstance(required, list) else set()
    fields: dict[str, Any] = {}
    for name, prop in skeleton.arguments.properties.items():
        # Optional arguments default to None (absent) without becoming nullable in the schema
        # a model sees: an explicit null is rejected like any other wrong type.
        default: dict[str, Any] = {} if name in required else {"default_factory": _absent}
        fields[_field_name(name)] = (_annotation(prop), Field(
            alias=name, description=prop.description or None, **default))
    model = create_model(f"{skeleton.name}_args", __base__=_Args, **fields)
    model.json_types = {n: _types(p) for n, p in skeleton.arguments.properties.items()}
    model.enums = {n: {_fold(v): v for v in enum if isinstance(v, str)}
                   for n, p in skeleton.arguments.properties.items()
                   if isinstance(enum := _extra(p).get("enum"), list)}
    return model


def args_model(skeleton: ToolSkeleton) -> type[BaseModel]:
    """The pydantic model of a skeleton's arguments (cached per skeleton)."""
    return _model(skeleton.model_dump_json())


def _expected(skeleton: ToolSkeleton, arg: str) -> str:
    prop = skeleton.arguments.properties.get(arg)
    if prop is None:
        return ""
    enum = _extra(prop).get("enum")
    if isinstance(enum, list):
        return "one of " + ", ".join(map(repr, enum))
    return " or ".join(_types(prop)) or "any type"


class Problem(BaseModel):
    """One reason a call does not fit its schema."""

    argument: str
    """The argument concerned (empty for the call as a whole)."""
    kind: str
    """Pydantic error type: ``extra_forbidden``, ``missing``, ``int_parsing``..."""
    message: str
    """Readable text naming the argument and what it expects."""


def problems_of(skeleton: ToolSkeleton, error: ValidationError) -> list[Problem]:
    """One :class:`Problem` per pydantic error, naming the argument and its expected type."""
    problems = []
    for e in error.errors():
        arg = str(e["loc"][0]) if e["loc"] else ""
        if e["type"] == "extra_forbidden":
            allowed = ", ".join(skeleton.arguments.properties) or "none"
            text = f"unknown argument {arg!r} (arguments: {allowed})"
        elif e["type"] == "missing":
            text = f"missing required argument {arg!r}"
        else:
            text = (f"argument {arg!r} expects {_expected(skeleton, arg)}, "
                    f"got {e.get('input')!r}: {e['msg']}")
        problems.append(Problem(argument=arg, kind=e["type"], message=text))
    return problems


def validate_args(skeleton: ToolSkeleton, args: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments validated and coerced to their declared types.

    Raises:
        ToolCallError: unknown argument names, missing required ones or wrong types.
    """
    validated, problems = _check(skeleton, dict(args))
    if problems:
        raise ToolCallError(skeleton.name, [p.message for p in problems])
    return validated


def _check(skeleton: ToolSkeleton, args: dict[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
    """``(validated arguments, [])`` or ``({}, problems)``."""
    try:
        validated = args_model(skeleton).model_validate(args)
    except ValidationError as exc:
        return {}, problems_of(skeleton, exc)
    return {k: v for k, v in validated.model_dump(by_alias=True).items() if k in args}, []


# --- simulated results -------------------------------------------------------------------------

def _digest(*parts: Any) -> str:
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _fake(prop: Mapping[str, Any], where: str, key: str) -> Any:
    """A deterministic value of a JSON-schema property; ``where`` names it, ``key`` seeds it."""
    h = _digest(key, where)
    enum = prop.get("enum")
    if isinstance(enum, list) and enum:
        return enum[int(h[:8], 16) % len(enum)]
    types = _types(prop)
    t = types[0] if types else "string"
    if t == "integer":
        return int(h[:8], 16) % 1000
    if t == "number":
        return round(int(h[:8], 16) % 100_000 / 100, 2)
    if t == "boolean":
        return True
    if t == "array":
        items = prop.get("items")
        if not isinstance(items, Mapping):
            items = {"type": "string"}
        return [_fake(items, f"{where}[{i}]", key) for i in range(2)]
    if t == "object":
        props = prop.get("properties")
        if isinstance(props, dict):
            return {k: _fake(v if isinstance(v, dict) else {}, f"{where}.{k}", key)
                    for k, v in props.items()}
        return {}
    return f"{where}#{h[:8]}"


def simulate_result(skeleton: ToolSkeleton, args: Mapping[str, Any], *,
                    seed: int | str = 0) -> dict[str, Any]:
    """Fake data with every result property, deterministic from (seed, tool name, arguments).

    >>> t = ToolSkeleton.model_validate({"name": "rate", "description": "d",
    ...     "arguments": {}, "results": {"properties": {"rate": {"type": "number"}}}})
    >>> simulate_result(t, {}) == simulate_result(t, {}), list(simulate_result(t, {}))
    (True, ['rate'])
    """
    key = _digest(str(seed), skeleton.name, dict(args))
    return {name: _fake(prop.model_dump(exclude_none=True), f"{skeleton.name}.{name}", key)
            for name, prop in skeleton.results.properties.items()}


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
    return _fake(prop.model_dump(exclude_none=True), arg, "") if prop else ""


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
    validated, problems = _check(skeleton, checked)
    soft = [p for p in problems if p.kind not in _HARD and p.argument in known
            and isinstance(value := given.get(p.argument), str)
            and (p.kind == "literal_error" or _is_free_text(value))]
    if soft:
        for p in soft:
            stand_in.add(p.argument)
            checked[p.argument] = _placeholder(skeleton, p.argument)
        trace.warnings = [f"{p.message} (kept as a placeholder)" for p in soft]
        validated, problems = _check(skeleton, checked)
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
