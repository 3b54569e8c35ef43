"""Parse AppBench call lines: gold ``r1, r2 = api(#k='v', #k2=k2)`` and model answers
``App: [r1, r2 = api(#k='v')]``.

Beyond the gold form, a model line may write the API dotted (``Restaurants.findrestaurants``),
quote with typographic quotes (``‘v’``, ``“v”``), escape a quote inside a value (``'it\\'s'``)
or end the bracket with ``;``. A bracket may hold several calls (``a = f(...), b = g(...)``):
:func:`split_calls` cuts it into one piece per call. Within a call, text that is not read as an
argument is kept in :attr:`AppCall.unparsed` -- a positional value, a value followed by more
text (``#city='Paris', ...``), a repeated key (the first value is kept) -- so evaluators count
it instead of losing it. Whole answers (prose, fences, bullets) are split into lines by
:mod:`tooleval_agents.evaluators.appbench.parse`.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field


class AppCall(BaseModel):
    """One API call: ``App: [r1, r2 = api(#k='v', #k2=k2)]`` parsed.

    A quoted value is a literal; an unquoted name is a dependency on the argument of that name
    returned by an earlier call (always ``#k=k`` in the gold data).
    """

    model_config = ConfigDict(frozen=True)

    app: str | None
    """App name (``Restaurants``); ``None`` when the line names none and it cannot be inferred."""
    api: str
    """API name as written (gold names are lowercase, e.g. ``findrestaurants``)."""
    returns: list[str] = Field(default_factory=list)
    """Returned argument names, before the ``=``."""
    literal_args: dict[str, str] = Field(default_factory=dict)
    """Argument name (without ``#``) -> literal value (quotes removed)."""
    dependent_args: dict[str, str] = Field(default_factory=dict)
    """Argument name -> name of the returned argument of an earlier call it depends on."""
    unparsed: str | None = None
    """Argument text before the first ``#k=`` that names no argument (a positional
    ``getweather('Paris', #date=...)`` gives ``'Paris'``); ``None`` when there is none. Kept so
    evaluators can count it instead of silently dropping it."""
    raw: str
    """The line as written."""

    @property
    def arg_names(self) -> set[str]:
        return set(self.literal_args) | set(self.dependent_args)


# Possessive quantifiers (``*+``) keep adjacent whitespace runs from being re-split on
# failure: with lazy/greedy overlaps a long run of spaces made matching quadratic.
_APP_PREFIX = re.compile(r"^\s*+([A-Za-z]\w*+(?: ++\w++)*+)\s*+:\s*+\[(.*)\]\s*$", re.S)
IDENTS = r"[A-Za-z_]\w*+(?:\s*+,\s*+[A-Za-z_]\w*+)*+"
"""A returned-argument list ``a, b, c`` (a regex; possessive, so matching stays linear)."""
_CALL = re.compile(
    rf"^(?:(?P<ret>{IDENTS})?\s*+=\s*+)?(?P<api>[A-Za-z_][\w.]*+)\s*+\((?P<args>.*)\)\s*$",
    re.S)
_BOUNDARY = re.compile(r"(?:^|,)\s*+#?([A-Za-z_]\w*+)\s*+=(?!=)")
_IDENT = re.compile(r"^[A-Za-z_]\w*$")
# Opening quote -> closing quote; typographic pairs come from models, not from the gold data.
_QUOTES = {"'": "'", '"': '"', "‘": "’", "“": "”", "’": "’", "”": "”"}
_ESCAPED_QUOTE = re.compile(r"\\(['\"])")
# A ``)`` that ends a call because another call starts after it: ``[r1 = f(...), r2 = g(#``.
# The lookahead reads identifiers only, so each character is scanned once: linear.
_NEXT_CALL = re.compile(
    rf"\)(?=\s*+[,;]?\s*+(?:{IDENTS}\s*+=\s*+)?[A-Za-z_][\w.]*+\s*+\(\s*+"
    r"(?:#|[A-Za-z_]\w*+\s*+=(?!=)|\)))")
_SEPARATORS = re.compile(r"[\s,;]*+")


def _strip_separators(text: str) -> str:
    """``text`` without blanks, ``,`` and ``;`` at either end. The trailing run is measured on
    the reversed text: a search for ``[\\s,;]+$`` retried every position of a long blank run."""
    start = _SEPARATORS.match(text).end()  # type: ignore[union-attr]  # matches the empty run
    end = len(text) - _SEPARATORS.match(text[::-1]).end()  # type: ignore[union-attr]
    return text[start:end] if start < end else ""


def split_calls(text: str) -> list[str]:
    """The calls of one bracket body, one piece each: cut after a ``)`` that another call
    follows (``a = f(#x='1'), b = g(#y=a)``). A body with one call is one piece.

    >>> split_calls("a = f(#x='1'), b = g(#y=a); h()")
    ["a = f(#x='1')", 'b = g(#y=a)', 'h()']
    >>> split_calls("r = f(#name='Joe (Bar), Inc', #n=2)")
    ["r = f(#name='Joe (Bar), Inc', #n=2)"]
    """
    pieces, start = [], 0
    for m in _NEXT_CALL.finditer(text):
        pieces.append(text[start:m.end()])
        start = m.end()
    pieces.append(text[start:])
    return [cut for p in pieces if (cut := _strip_separators(p))]


def _split_args(inner: str) -> tuple[list[tuple[str, str]], str | None]:
    """``(key, value)`` pairs cut at ``#k=`` boundaries, and the text before the first one
    (a positional argument, ``None`` when there is none)."""
    cuts = list(_BOUNDARY.finditer(inner))
    out = []
    for i, cut in enumerate(cuts):
        end = cuts[i + 1].start() if i + 1 < len(cuts) else len(inner)
        out.append((cut.group(1).lower(), inner[cut.end():end].strip()))
    leftover = inner[:cuts[0].start()] if cuts else inner
    return out, leftover.strip().rstrip(",").strip() or None


def _unquote(value: str) -> str | None:
    """The text inside matching quotes (escaped quotes unescaped), else ``None``."""
    if len(value) >= 2 and _QUOTES.get(value[0]) == value[-1]:
        return _ESCAPED_QUOTE.sub(r"\1", value[1:-1])
    return None


def _quoted_then_rest(value: str) -> tuple[str, str] | None:
    """``'Paris', ...`` -> ``("'Paris'", "...")``: a quoted value followed by ``,`` and text
    that is not an argument; ``None`` when the value is not of that shape."""
    close = _QUOTES.get(value[:1])
    if close is None:
        return None
    at = value.find(close, 1)
    while at != -1:
        rest = value[at + 1:].lstrip()
        if rest.startswith(","):
            tail = rest[1:].strip()
            return (value[:at + 1], tail) if tail else None
        at = value.find(close, at + 1)
    return None


def parse_call_line(text: str) -> AppCall:
    """Parse one call line. Raises ``ValueError`` when the text holds no ``api(...)`` call.

    >>> c = parse_call_line("Restaurants: [name = reserverestaurant(#time='19:30', #name=name)]")
    >>> (c.app, c.api, c.returns, c.literal_args, c.dependent_args)
    ('Restaurants', 'reserverestaurant', ['name'], {'time': '19:30'}, {'name': 'name'})
    """
    body, app = text.strip(), None
    m = _APP_PREFIX.match(body)
    if m:
        app, body = m.group(1).strip(), m.group(2).strip()
    c = _CALL.match(body.rstrip(";, \t"))
    if c is None:
        raise ValueError(f"not an API call line: {text!r}")
    returns = [r.strip() for r in (c.group("ret") or "").split(",") if r.strip()]
    literal: dict[str, str] = {}
    dependent: dict[str, str] = {}
    pairs, leftover = _split_args(c.group("args"))
    left = [leftover] if leftover is not None else []
    for key, value in pairs:
        if key in literal or key in dependent:  # a repeated key: the first value stands
            left.append(f"#{key}={value}")
            continue
        unquoted = _unquote(value)
        if unquoted is None and (cut := _quoted_then_rest(value)) is not None:
            value, rest = cut  # ``#city='Paris', ...``: the value, and text naming no key
            left.append(rest)
            unquoted = _unquote(value)
        if unquoted is not None:
            literal[key] = unquoted
        elif _IDENT.match(value) and value.lower() not in ("true", "false", "none", "null"):
            dependent[key] = value
        else:
            literal[key] = value
    return AppCall(app=app, api=c.group("api"), returns=returns, literal_args=literal,
                   dependent_args=dependent, unparsed="; ".join(left) if left else None,
                   raw=text)
