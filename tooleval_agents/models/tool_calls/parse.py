"""Tool calls a model wrote as text: the parser (what BFCL calls prompt mode).

Small local models, and servers whose chat template does not turn a model's calls into the
API's ``tool_calls``, answer a tool-calling request with the call written out. Read here, in
any mix:

* JSON objects ``{"name": ..., "arguments": {...}}`` -- bare, in fenced code blocks
  (```` ```json ````), in Hermes/Qwen ``<tool_call>...</tool_call>`` tags, after Llama 3's
  ``<|python_tag|>`` or Mistral's ``[TOOL_CALLS]``; a JSON list of them; ``"parameters"`` or
  ``"args"`` instead of ``"arguments"``; arguments given as a JSON string; the OpenAI shape
  ``{"type": "function", "function": {"name", "arguments"}}``; ``{"tool_calls": [...]}``;
* Mistral's ``[TOOL_CALLS]name[ARGS]{...}`` and Llama 3.1's ``<function=name>{...}</function>``.

A call needs a tool name (an identifier) and, unless its name is one of ``names`` (the bound
tools), an arguments key: a JSON answer that merely has a ``"name"`` field is not a call.

Every function here is total (any text gives a list, never an exception) and linear in the
text's length: one regular-expression pass finds the balanced ``{...}`` / ``[...]`` spans
(string-aware; a JSON string never spans lines, so a stray quote in prose resets at the line's
end) that hold a ``"name"`` string; the outermost are decoded, and the nested ones of a span
that does not decode, only when they nest at most :data:`MAX_DEPTH` deep (which keeps
``json``'s recursive decoder far from Python's recursion limit) and within a budget of
:data:`DECODE_BUDGET` times the text's length.

>>> answer = '```json\\n{"name": "Events__findevents", "arguments": {"city": "NY"}}\\n```'
>>> [(c.name, c.args) for c in parse_tool_calls(answer)]
[('Events__findevents', {'city': 'NY'})]
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

MAX_DEPTH = 16
"""Spans nested deeper are not decoded as a whole (their inner spans still are)."""
MAX_CALLS = 64
"""Calls read from one answer at most."""
DECODE_BUDGET = 4
"""Characters handed to the JSON decoder per character of the answer, at most."""

_NAME = re.compile(r"[A-Za-z_][\w.\-]{0,127}")
_OUTSIDE = re.compile(r"[{\[]")
_INSIDE = re.compile(r'"(?:[^"\\\n]|\\.)*+"|[{}\[\]]|"')
_NAMED = re.compile(r"\[TOOL_CALLS\]\s*([A-Za-z_][\w.\-]{0,127})\s*\[ARGS\]\s*"
                    r"|<function=([A-Za-z_][\w.\-]{0,127})>\s*")
_ARGUMENT_KEYS = ("arguments", "parameters", "args")
_LOOKS_LIKE = re.compile(r'\{\s*"name"\s*:\s*"[^"\n]{1,128}"\s*,\s*"(?:arguments|parameters)"'
                         r'\s*:|\[TOOL_CALLS\]|<function=[A-Za-z_]')
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class TextCall:
    """One tool call read from text."""

    name: str
    """The tool named."""
    args: dict[str, Any]
    """Its arguments (``{}`` when the call gave none)."""
    id: str | None = None
    """The id the text gave the call (Mistral writes one), else ``None``."""
    start: int = 0
    """Where in the text the call begins (calls are returned in text order)."""


@dataclass(eq=False, slots=True)
class _Span:
    start: int
    end: int = -1
    depth: int = 1
    """How deep brackets nest inside it, itself included (:data:`_TOO_DEEP`: deeper than
    tracked)."""
    named: bool = False
    """It holds a ``"name"`` string: only such a span can hold a call."""
    children: list[_Span] = field(default_factory=list)


_TRACKED = 2 * MAX_DEPTH
"""Open brackets tracked at most; deeper ones are only counted (nothing in them is read)."""
_TOO_DEEP = 10**9


def _spans(text: str, wanted: set[int]) -> tuple[list[_Span], dict[int, _Span]]:
    """The outermost balanced spans of ``text`` in order (each with its nested ones), and the
    closed ``{`` spans that start at a position of ``wanted``. Brackets that do not match, and
    a string running into a line's end, drop the spans still open (the spans closed inside
    them are kept). Outside a span quotes are prose; inside, a string is one token."""
    roots: list[_Span] = []
    found: dict[int, _Span] = {}
    stack: list[tuple[str, _Span]] = []
    untracked = 0
    pos, size = 0, len(text)

    def drop_open() -> None:
        nonlocal untracked
        for _, open_span in stack:
            roots.extend(open_span.children)
        stack.clear()
        untracked = 0

    while pos < size:
        match = (_INSIDE if stack else _OUTSIDE).search(text, pos)
        if match is None:
            break
        at, pos = match.start(), match.end()
        char = text[at]
        if char == '"':
            if pos - at == 1:  # a string that does not end on its line: not JSON
                drop_open()
                line_end = text.find("\n", at)
                pos = size if line_end < 0 else line_end + 1
            elif pos - at == 6 and text.startswith('"name"', at):
                stack[-1][1].named = True
        elif char in "{[":
            if len(stack) < _TRACKED:
                stack.append((char, _Span(at)))
            else:
                untracked += 1
                stack[-1][1].depth = _TOO_DEEP
        elif untracked:
            untracked -= 1
        else:
            opener, span = stack.pop()
            if (opener == "{") != (char == "}"):
                stack.append((opener, span))
                drop_open()
                continue
            span.end = pos
            if span.start in wanted and opener == "{":
                found[span.start] = span
            if stack:
                parent = stack[-1][1]
                parent.children.append(span)
                parent.depth = max(parent.depth, span.depth + 1)
                parent.named = parent.named or span.named
            else:
                roots.append(span)
    drop_open()
    return roots, found


def _decode(text: str, span: _Span) -> tuple[bool, Any]:
    if span.depth > MAX_DEPTH:
        return False, None
    try:
        value, end = _DECODER.raw_decode(text, span.start)
    except (ValueError, RecursionError):
        return False, None
    return end == span.end, value


def _values(text: str, roots: list[_Span], skip: set[int]) -> Iterator[tuple[int, Any]]:
    """``(start, value)`` of the outermost spans that decode as JSON, in text order (a span that
    does not decode is replaced by its nested spans). At most :data:`DECODE_BUDGET` times the
    text's length is handed to the decoder (only nested spans that fail come near it)."""
    todo = [s for s in reversed(roots) if s.named]
    budget = DECODE_BUDGET * len(text)
    while todo:
        span = todo.pop()
        if span.start in skip:
            continue
        budget -= span.end - span.start
        if budget < 0:
            return
        ok, value = _decode(text, span)
        if ok:
            yield span.start, value
        else:
            todo.extend(s for s in reversed(span.children) if s.named)


def _arguments(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and len(value.strip()) > 1:
        try:
            decoded = json.loads(value)
        except (ValueError, RecursionError):
            return None
        return decoded if isinstance(decoded, dict) else None
    return None


def _call(obj: dict[str, Any], start: int, names: Collection[str] | None) -> TextCall | None:
    wrapped = obj.get("function") or obj.get("function_call")
    inner = wrapped if isinstance(wrapped, dict) else obj
    name = inner.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        return None
    key = next((k for k in _ARGUMENT_KEYS if k in inner), None)
    if key is None:  # a bare {"name": ...} is a call of a bound tool only, and only bare
        if names is None or name not in names or set(inner) - {"name", "id", "type"}:
            return None
        args: dict[str, Any] | None = {}
    else:
        args = _arguments(inner[key])
    if args is None:
        return None
    ident = obj.get("id")
    return TextCall(name=name, args=args, start=start,
                    id=ident if isinstance(ident, str) and 0 < len(ident) <= 100 else None)


def _calls_in(value: Any, start: int, names: Collection[str] | None) -> list[TextCall]:
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
        value = value["tool_calls"]
    items = value if isinstance(value, list) else [value]
    found = (_call(item, start, names) for item in items[:MAX_CALLS] if isinstance(item, dict))
    return [c for c in found if c is not None]


def parse_tool_calls(text: str, names: Collection[str] | None = None) -> list[TextCall]:
    """Every tool call written in ``text``, in order (see the module docstring); ``names``: the
    bound tools (a call of one of them needs no arguments key).

    >>> parse_tool_calls('<tool_call>\\n{"name": "f", "arguments": {"x": 1}}\\n</tool_call>')
    [TextCall(name='f', args={'x': 1}, id=None, start=12)]
    >>> [c.name for c in parse_tool_calls('[TOOL_CALLS] [{"name": "a", "arguments": {}}, '
    ...                                     '{"name": "b", "parameters": {"y": 2}}]')]
    ['a', 'b']
    >>> parse_tool_calls('{"name": "Paris", "population": 2100000}')
    []
    """
    if not isinstance(text, str) or "{" not in text or not (
            '"name"' in text or "[TOOL_CALLS]" in text or "<function=" in text):
        return []
    named = list(_NAMED.finditer(text))  # the name outside the JSON: Mistral, Llama 3.1
    roots, objects = _spans(text, {m.end() for m in named})
    calls: list[TextCall] = []
    named_args: set[int] = set()
    for match in named:
        span = objects.get(match.end())
        if span is None:
            continue
        ok, value = _decode(text, span)
        name = match.group(1) or match.group(2)
        if ok and isinstance(value, dict):
            named_args.add(span.start)
            calls.append(TextCall(name=name, args=value, start=match.start()))
    for start, value in _values(text, roots, named_args):
        calls.extend(_calls_in(value, start, names))
        if len(calls) >= MAX_CALLS:
            break
    calls.sort(key=lambda c: c.start)
    return calls[:MAX_CALLS]


def looks_like_tool_call(text: str) -> bool:
    """Whether ``text`` holds what looks like a tool call written as text: a call
    :func:`parse_tool_calls` reads, or the start of one it cannot (e.g. broken JSON). What a
    run counts when a model wrote its calls as text and nobody read them.

    >>> looks_like_tool_call('```json\\n{"name": "get_weather", "arguments": {"city": ')
    True
    >>> looks_like_tool_call("The weather in Paris is sunny.")
    False
    """
    if not isinstance(text, str) or not ('"name"' in text or "[TOOL_CALLS]" in text
                                         or "<function=" in text):
        return False
    return _LOOKS_LIKE.search(text) is not None or bool(parse_tool_calls(text))


__all__ = ["DECODE_BUDGET", "MAX_CALLS", "MAX_DEPTH", "TextCall", "looks_like_tool_call",
           "parse_tool_calls"]
