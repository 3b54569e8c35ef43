"""Read AppBench model answers: every ``App: [r1, ... = api(#k='v', #k2=k2)]`` call in free text.

A model answer is prose around call lines, often in a code fence, sometimes bulleted or in bold.
:func:`parse_answer` finds every call and never raises: text that looks like a call but does not
parse is kept in :attr:`ParsedAnswer.unparsed`. The line grammar itself is
:func:`tooleval_agents.appbench.lines.parse_call_line`.

What counts as a call:

* ``App: [ ... ]`` anywhere in a line (several per line allowed); the body runs to the last
  ``]`` before the next ``App: [`` (so quotes, apostrophes and commas inside values are safe).
  A body holding several calls (``[a = f(...), b = g(...)]``) gives each of them
  (:func:`~tooleval_agents.appbench.lines.split_calls`); a returned-argument list closed
  before the ``=`` (``App: [a, b] = api(...)``) is read as ``App: [a, b = api(...)]``, also
  when the returned arguments come with values (``App: [a='x', b=2] = api(...)``: the keys).
  A missing closing ``]`` or ``)`` (a cut-off answer) or a missing returned-argument list is
  tolerated. A body that does not parse is retried cut after its last ``)``, so wrapped calls
  (``Plan: [Restaurants: [... = api(...)]]``, ``[A: [...], B: [...]]``) keep every call; an
  opener with nothing before the next one (the ``Plan: [`` wrapper) is no call.
  A failed body is recorded in :attr:`ParsedAnswer.unparsed` only when it was meant as a call:
  the app is a catalog app, or the body has call syntax (``(``, ``#``, ``=``) or starts with a
  catalog API name. Prose such as ``anything else: [nothing]`` or ``Note: [1]`` is ignored
  (an unparsed piece counts as a wrong predicted call under ``strict`` scoring).
* ``App: r = api(...)`` without brackets.
* A bare ``r = api(...)`` / ``api(...)`` line whose API is in the catalog or whose arguments
  carry ``#``: a call with ``app=None`` (the app was not named, which scores as a wrong app).

Reasoning blocks (``<think>...</think>``), bullets (``-``, ``*``, ``•``, ``1.``, ``1)``),
markdown emphasis, inline backticks and fence lines (```` ``` ````) are stripped first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import BaseModel, Field

from tooleval_agents.appbench.lines import IDENTS, parse_call_line, split_calls
from tooleval_agents.appbench.names import API_APPS, APP_APIS
from tooleval_agents.appbench.records import AppBenchSample, AppCall
from tooleval_agents.evaluators.parsing import without_reasoning

_FENCE = re.compile(r"^\s*(```|~~~)")
_BULLET = re.compile(r"^\s*(?:[-*•+>]|\d{1,3}[.)])\s+")
_EMPHASIS = re.compile(r"\*\*|__|`")
# ``App: [``: the app is one word (all 15 are), possibly bold; ``\b`` keeps it from eating prose.
_APP_OPEN = re.compile(r"\b([A-Za-z][A-Za-z0-9_]*)\s*:\s*\[")
_APP_PLAIN = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)\s*:\s*(?!\[)(\S.*)$")
# ``App: [a, b] = api(...)``: the bracket closed after the returned arguments.
_OUTS_FIRST = re.compile(rf"^\s*+({IDENTS})\s*+\]\s*+=\s*+(\S.*)$", re.S)
# ``App: [k='v', k2=2] = api(...)``: returned arguments written with (made-up) values, the
# bracket closed before the call (a real 1.5B model's shape). No ``]`` inside the pairs.
_VALUED_OUTS_FIRST = re.compile(
    r"^\s*+([A-Za-z_]\w*+\s*+=[^\]]*+)\]\s*+=\s*+([A-Za-z_][\w.]*+\s*+\(.*)$", re.S)
_PAIR_KEY = re.compile(r"(?:^|,)\s*+([A-Za-z_]\w*+)\s*+=(?!=)")
# An identifier (starting where no other name character precedes it) and ``(``: with the
# lookbehind and possessive runs each word is tried once, so the search is linear (the former
# ``[A-Za-z_][\w.]*\s*\(.*#`` retried every suffix of a long word: 22 s on 30k characters).
_CALL_OPEN = re.compile(r"(?<![\w.])[A-Za-z_][\w.]*+\s*+\(")
_WS = re.compile(r"\s+")
_APP_NAMES = frozenset(a.lower() for a in APP_APIS)

UNPARSED_API = "?"
"""API name of the stand-in call of an unparsed piece (:func:`unparsed_call`): no API has it."""


class ParsedAnswer(BaseModel):
    """The calls found in one model answer, in the order written."""

    calls: list[AppCall] = Field(default_factory=list)
    """Parsed calls (``app`` as written, ``None`` for a bare call line)."""
    unparsed: list[str] = Field(default_factory=list)
    """Pieces that look like calls (``App: [...]`` or ``api(#...)``) but do not parse."""


def _clean(line: str) -> str:
    return _EMPHASIS.sub("", _BULLET.sub("", line, count=1)).strip()


def _segments(line: str) -> list[tuple[str, str]]:
    """``(app, body)`` for every ``App: [`` in a line; a body ends at the last ``]`` before the
    next opener (or the end of the line when there is none)."""
    opens = list(_APP_OPEN.finditer(line))
    out = []
    for i, m in enumerate(opens):
        end = opens[i + 1].start() if i + 1 < len(opens) else len(line)
        span = line[m.end():end]
        outs_first = _OUTS_FIRST.match(span)
        if outs_first:
            rest = outs_first.group(2).rstrip()
            out.append((m.group(1), f"{outs_first.group(1)} = {rest.removesuffix(']')}"))
            continue
        valued = _VALUED_OUTS_FIRST.match(span)
        if valued:  # the returned arguments are the keys; their values say nothing
            names = ", ".join(_PAIR_KEY.findall(valued.group(1)))
            rest = valued.group(2).rstrip()
            out.append((m.group(1), f"{names} = {rest.removesuffix(']')}"))
            continue
        close = span.rfind("]")
        out.append((m.group(1), span[:close] if close >= 0 else span))
    return out


def _parse_body(app: str | None, body: str, raw: str, *, repair: bool = True) -> AppCall | None:
    try:
        call = parse_call_line(body)
    except ValueError:
        if not repair or body.count("(") <= body.count(")"):
            return None
        try:  # an answer cut off before its closing parenthesis
            call = parse_call_line(body.rstrip().rstrip(",") + ")")
        except ValueError:
            return None
    return call.model_copy(update={"app": app, "raw": raw})


def _segment_call(app: str, body: str) -> AppCall | None:
    """The call of an ``App: [body]`` segment; a body that fails is retried cut after its last
    ``)`` (a wrapper's closing ``]`` or other text after the call)."""
    call = _parse_body(app, body, f"{app}: [{body}]")
    close = body.rfind(")")
    if call is None and 0 <= close < len(body.rstrip()) - 1:
        cut = body[:close + 1]
        call = _parse_body(app, cut, f"{app}: [{cut}]", repair=False)
    return call


def _segment_calls(app: str, body: str) -> tuple[list[AppCall], list[str]]:
    """The calls of one ``App: [body]`` segment, and the call pieces of it that do not parse
    (a body holding several calls is read piece by piece)."""
    pieces = split_calls(body)
    if len(pieces) <= 1:
        call = _segment_call(app, body)
        return ([call], []) if call is not None else ([], [body])
    calls, failed = [], []
    for piece in pieces:
        call = _segment_call(app, piece)
        if call is not None:
            calls.append(call)
        else:
            failed.append(piece)
    return calls, failed


def _meant_as_call(app: str, body: str) -> bool:
    """Whether a segment that did not parse was meant as a call (see the module docstring)."""
    words = body.split(None, 1)
    return (app.lower() in _APP_NAMES or any(c in body for c in "(#=")
            or (bool(words) and canonical_api(words[0].strip(",;"), app) in API_APPS))


def _looks_like_call(line: str) -> bool:
    """``name(`` followed somewhere by ``#``, in linear time."""
    if "(" not in line or "#" not in line:
        return False
    m = _CALL_OPEN.search(line)
    return m is not None and "#" in line[m.end():]


def unparsed_call(piece: str) -> AppCall:
    """The stand-in predicted call of an unparsed piece: its app when the piece starts with
    ``App: [`` (else ``None``), API :data:`UNPARSED_API` (it matches no gold API), no arguments.

    >>> c = unparsed_call("Hotels: [searchhouse #where_to='Paris']")
    >>> (c.app, c.api, c.arg_names)
    ('Hotels', '?', set())
    """
    m = _APP_OPEN.match(piece.strip())
    return AppCall(app=m.group(1) if m else None, api=UNPARSED_API, raw=piece)


def parse_answer(text: object) -> ParsedAnswer:
    """Every call in a model answer; never raises (non-text input parses as an empty answer).

    >>> a = parse_answer('''Sure! Here is the plan:
    ... ```
    ... - Restaurants: [name = findrestaurants(#location='San Francisco')]
    ... - **Restaurants**: [reserverestaurant(#restaurant_name=name, #name="Joe's, Bar")]
    ... ```
    ... Hotels: [searchhouse #where_to]''')
    >>> [(c.app, c.api, c.returns) for c in a.calls]
    [('Restaurants', 'findrestaurants', ['name']), ('Restaurants', 'reserverestaurant', [])]
    >>> a.calls[1].literal_args, a.calls[1].dependent_args, a.unparsed
    ({'name': "Joe's, Bar"}, {'restaurant_name': 'name'}, ['Hotels: [searchhouse #where_to]'])
    """
    out = ParsedAnswer()
    if not isinstance(text, str):
        return out
    text = without_reasoning(text)  # a call drafted while reasoning is not the answer
    for raw_line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if ("[" not in raw_line and "(" not in raw_line) or _FENCE.match(raw_line):
            continue  # every call form has one of them: prose lines cost a membership test
        line = _clean(raw_line)
        if not line:
            continue
        segments = _segments(line)
        if segments:
            for app, body in segments:
                if not body.strip():  # a wrapper such as ``Plan: [`` before the next opener
                    continue
                calls, failed = _segment_calls(app, body)
                out.calls.extend(calls)
                several = len(calls) + len(failed) > 1  # a cut piece was meant as a call
                out.unparsed.extend(f"{app}: [{piece}]" for piece in failed
                                    if several or _meant_as_call(app, piece))
            continue
        plain = _APP_PLAIN.match(line)
        if plain and "(" in plain.group(2):
            call = _parse_body(plain.group(1), plain.group(2), line)
            if call is not None:
                out.calls.append(call)
                continue
        for piece in split_calls(line):
            call = _parse_body(None, piece, piece, repair=False)
            if call is not None and (canonical_api(call.api) in API_APPS
                                     or "#" in call.raw[call.raw.find("("):]):
                out.calls.append(call)
            elif _looks_like_call(piece):
                out.unparsed.append(piece)
    return out


def canonical_api(api: str, app: str | None = None) -> str:
    """The catalog spelling of an API name as a model may write it: lowercased, a dotted or
    ``App_`` prefix removed (``Restaurants.FindRestaurants``, ``restaurants_findrestaurants`` ->
    ``findrestaurants``); names with ``_`` that are in the catalog stay whole
    (``book_stylist_appointment``).

    >>> canonical_api("Restaurants_findRestaurants"), canonical_api("book_stylist_appointment")
    ('findrestaurants', 'book_stylist_appointment')
    """
    name = _WS.sub("", api).lower().rsplit(".", 1)[-1]
    if name in API_APPS or "_" not in name:
        return name
    prefix, rest = name.split("_", 1)
    if rest in API_APPS or (app is not None and prefix == app.strip().lower()):
        return rest
    return name


def normalise_name(name: str | None) -> str:
    """An app, key or returned-argument name for comparison: lowercased, spaces removed."""
    return _WS.sub("", name or "").lower().lstrip("#")


def normalise_value(value: str) -> str:
    """A literal value for comparison: lowercased, surrounding quotes and whitespace removed,
    inner whitespace collapsed.

    >>> normalise_value(" 'San  Francisco' ")
    'san francisco'
    """
    return _WS.sub(" ", value.strip().strip("'\"‘’“”").strip()).lower()


def normalise_call(call: AppCall) -> AppCall:
    """A call with every name in comparison form (app, API, keys, returns, dependency names)
    and literal values normalised; ``raw`` is kept."""
    return call.model_copy(update={
        "app": normalise_name(call.app) if call.app is not None else None,
        "api": canonical_api(call.api, call.app),
        "returns": [normalise_name(r) for r in call.returns],
        "literal_args": {normalise_name(k): normalise_value(v)
                         for k, v in call.literal_args.items()},
        "dependent_args": {normalise_name(k): normalise_name(v)
                           for k, v in call.dependent_args.items()},
    })


def format_answer(calls: Iterable[tuple[str | None, str]]) -> str:
    """Model-output text from ``(app, gold line)`` pairs: ``{app}: [{line}]`` per line."""
    return "\n".join(f"{app}: [{line}]" for app, line in calls)


def gold_answer(sample: AppBenchSample) -> str:
    """The gold plan written as a model answer: one ``{app}: [{line}]`` per gold call, the app
    from :attr:`AppBenchSample.calls` (so MM #10 gets all 7 calls)."""
    return format_answer((c.app, c.raw) for c in sample.calls)


def official_gold_answer(sample: AppBenchSample) -> str:
    """The gold plan as the official fields pair it: ``zip(used_app, api_results)``. This
    drops calls beyond ``used_app`` (MM #10: 5 of 7 lines); it is the rendering under which the
    official scorer's gold F1 figures (e.g. MM app F1 27.47) come out."""
    return format_answer(zip(sample.output.used_app, sample.output.api_results, strict=False))
