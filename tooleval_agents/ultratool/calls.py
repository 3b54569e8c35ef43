"""Parse UltraTool call strings such as ``file_write(file_path='a.txt', content=<result>)``.

The gold plans write calls as Python-like text, but not valid Python: quotes are not escaped
(``date='yesterday's date'``) and outputs of earlier calls appear as ``<...>``. The parser splits
arguments at top-level ``, name=`` boundaries (restricted to the tool's argument names when the
skeleton is known) instead of tokenising quotes, which the data does not respect. Text before
the first ``name=`` (a positional argument) is kept in :attr:`ToolCall.unparsed`, not dropped.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field


class ToolCall(BaseModel):
    """A parsed call string from a gold plan."""

    model_config = ConfigDict(frozen=True)

    name: str
    """Tool name."""
    args: dict[str, str]
    """Argument name -> value text (outer quotes removed, ``<...>`` references kept verbatim)."""
    raw: str
    """The call string as written upstream."""
    references: list[str] = Field(default_factory=list)
    """The ``<...>`` references to outputs of earlier steps, in order of appearance."""
    unparsed: str | None = None
    """Argument text before the first ``name=`` that could not be read as ``name=value`` (e.g. a
    positional ``f('x', a='2')`` gives ``'x'``); ``None`` when every argument was read. The
    simulated tools reject a call that has it."""


_CALL = re.compile(r"^\s*([^\W\d]\w*)\s*\((.*)\)\s*$", re.S)
# A key may be quoted: ``set_reminder("event"='Running', ...)`` is in the gold data.
_BOUNDARY = re.compile(r"(?:^|,)\s*(?P<q>[\"']?)(?P<key>[^\W\d]\w*)(?P=q)\s*=(?!=)")
_REF = re.compile(r"<[^<>]+>")
_OPEN, _CLOSE = "([{", ")]}"


def _depths(text: str) -> list[int]:
    """Bracket depth before each character (quotes are ignored: the data does not balance them)."""
    depth, out = 0, []
    for ch in text:
        out.append(depth)
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth = max(0, depth - 1)
    return out


def unquote(value: str) -> str:
    """Strip one pair of matching outer quotes; other text is returned stripped as is."""
    v = value.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        return v[1:-1]
    return v


def parse_call(text: str, arg_names: set[str] | None = None) -> ToolCall | None:
    """Parse ``name(k=v, ...)``; ``None`` when the text is not call-shaped. Argument text
    before the first ``k=`` is returned in ``unparsed``.

    Values are kept as text with outer quotes removed, as the official ``tool_usage`` references
    store them (``5000``, ``<current exchange rate>``, ``['a', 'b']``).

    >>> parse_call("f(a='x, y', b=<out>)").args
    {'a': 'x, y', 'b': '<out>'}
    >>> c = parse_call("f('p', a='2')"); (c.args, c.unparsed)
    ({'a': '2'}, "'p'")
    """
    m = _CALL.match(text)
    if m is None:
        return None
    name, inner = m.group(1), m.group(2)
    depth = _depths(inner)
    cuts = [
        b for b in _BOUNDARY.finditer(inner)
        if depth[b.start()] == 0 and (arg_names is None or b.group("key") in arg_names)
    ]
    args: dict[str, str] = {}
    for i, cut in enumerate(cuts):
        end = cuts[i + 1].start() if i + 1 < len(cuts) else len(inner)
        args[cut.group("key")] = unquote(inner[cut.end():end])
    # Positional or otherwise unparseable text before the first ``k=``: kept, never dropped.
    leftover = (inner[:cuts[0].start()] if cuts else inner).strip()
    return ToolCall(name=name, args=args, raw=text, references=_REF.findall(inner),
                    unparsed=leftover or None)
