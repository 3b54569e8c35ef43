"""UltraTool tool skeletons as schema-checked tools with simulated results.

Every skeleton's ``arguments`` schema becomes a pydantic model (:func:`args_model`; the
``args_schema`` of :func:`tooleval_agents.ultratool.tools.skeleton_tool`), which checks a call
(:func:`validate_args`, problems one line each) after reading text as the declared type
(:func:`coerce`: ``ast.literal_eval``, never ``eval``; enumerations match case-, space- and
hyphen-insensitively). A call's result is deterministic fake data shaped by the skeleton's
``results`` schema (:func:`simulate_result`). Skeletons (including ones a model creates) are
data: nothing is ever executed as code. Plans run on these tools in :mod:`.stubs`.
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from tooleval_agents.ultratool.records import PropertySchema, ToolSkeleton

JSON_TYPES: dict[str, Any] = {
    "string": str, "integer": int, "number": float, "boolean": bool, "array": list, "object": dict,
}
"""JSON-schema type -> Python type of the generated argument field (no type -> ``Any``)."""


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
    validated, problems = check_args(skeleton, dict(args))
    if problems:
        raise ToolCallError(skeleton.name, [p.message for p in problems])
    return validated


def check_args(skeleton: ToolSkeleton,
               args: dict[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
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


def fake_value(prop: Mapping[str, Any], where: str, key: str) -> Any:
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
        return [fake_value(items, f"{where}[{i}]", key) for i in range(2)]
    if t == "object":
        props = prop.get("properties")
        if isinstance(props, dict):
            return {k: fake_value(v if isinstance(v, dict) else {}, f"{where}.{k}", key)
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
    return {name: fake_value(prop.model_dump(exclude_none=True), f"{skeleton.name}.{name}", key)
            for name, prop in skeleton.results.properties.items()}
