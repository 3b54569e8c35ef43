"""Python literals read fast and exactly: what ``ast.literal_eval`` gives, mostly without
compiling.

Model answers are Python literals as often as JSON (UltraTool prompts render their inputs with
``str()``), and a long answer costs ``ast.literal_eval`` a compile per attempt (the official
UltraTool parser tries up to 13 edited variants). :func:`literal_eval_fast` reads what strict
JSON can read exactly (re-quoted by :func:`python_to_json`) and refuses without compiling what
:func:`cannot_be_literal` shows cannot be a literal; everything else is compiled, with the
compiler's warnings silenced (:func:`literal_eval_quiet`).

>>> literal_eval_fast("[{'a': True}, (1, 2)]"), literal_eval_fast("{'a': 1}, {'b': 2}")
([{'a': True}, (1, 2)], ({'a': 1}, {'b': 2}))
"""

from __future__ import annotations

import ast
import contextlib
import json
import re
import warnings
from typing import Any

from tooleval_agents.data.jsonio import MAX_NESTING, nests_deeper

_SURROGATE = re.compile("[\ud800-\udfff]")


def literal_eval_quiet(text: str) -> Any:
    """``ast.literal_eval`` without the compiler's warnings on answer text: invalid escapes
    (``\\_`` is common in answers), ``1if`` (invalid decimal literal)..."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.literal_eval(text)


_PY_TOKEN = re.compile(r"""'([^'\\\n]*)'|"[^"\\\n]*"|\b(True|False|None)\b""")
_PY_STRING = re.compile(r"""('[^'\\\n]*'|"[^"\\\n]*")""")
_PY_NAME = re.compile(r"\b(?:True|False|None)\b")
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f]")
_JSON_NAME = {"True": "true", "False": "false", "None": "null"}


def _to_json(m: re.Match[str]) -> str:
    if m.group(1) is not None:  # a single-quoted string
        return json.dumps(m.group(1), ensure_ascii=False)
    if m.group(2) is not None:  # a Python name outside strings
        return _JSON_NAME[m.group(2)]
    return m.group()  # a double-quoted string is JSON already


def _json_name(m: re.Match[str]) -> str:
    return _JSON_NAME[m.group()]


def python_to_json(text: str) -> str:
    """A Python literal without backslashes re-quoted as JSON: single-quoted strings get double
    quotes (inner ``"`` escaped), ``True``/``False``/``None`` outside strings become JSON names.

    Same text as ``_PY_TOKEN.sub(_to_json, text)``, which is the slow spelling (a Python call
    per string): ``split`` finds the same strings (names never hold a quote, so they cannot
    change where a string starts) and the names are renamed only between strings. Text with
    control characters, which ``json.dumps`` would escape, takes the slow spelling.
    """
    if _CONTROL.search(text):
        return _PY_TOKEN.sub(_to_json, text)
    parts = _PY_STRING.split(text)
    # A single-quoted token has no other apostrophe: replacing them swaps its quotes.
    parts[1::2] = [p.replace('"', '\\"').replace("'", '"') if p[0] == "'" else p
                   for p in parts[1::2]]
    if "True" in text or "False" in text or "None" in text:
        parts[::2] = [_PY_NAME.sub(_json_name, p) for p in parts[::2]]
    return "".join(parts)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a Python literal")


def literal_eval_fast(text: str) -> Any:
    """Exactly ``ast.literal_eval(text)`` (same value, same failures), faster on most answers.

    Where strict JSON accepts the text re-quoted by :func:`python_to_json` (single quotes
    swapped for double ones when there are no double quotes), the value is the literal's:
    without backslashes string bodies have no escapes, JSON numbers are Python numbers, and
    names Python would reject (``true``, ``NaN``...) are refused. Control characters, lone
    surrogates and line breaks outside the outer brackets (Python reads an indented line
    after one as an error), where the two differ, go to ``ast.literal_eval``, as does
    everything else but a text that surely fails (:func:`cannot_be_literal`): that one fails
    (``ValueError``) without being compiled. A tuple (``{...}, {...}``) is read by JSON as the
    items of a list.
    """
    if _unpaired_counts(text):  # the cheap half of cannot_be_literal: spares the JSON reads
        raise ValueError("not a Python literal")
    if "\\" not in text and not _has_json_name(text) and not _CONTROL.search(text) \
            and (text.isascii() or not _SURROGATE.search(text)) and _lines_inside(text):
        # Deeper than Python's literal limit (200, as MAX_NESTING): the compiler refuses it
        # on every version (the JSON reader's own limit moves with the version). Without an
        # apostrophe the text's strings are JSON's already: its depth is read before the
        # re-quoting, which a deep text would pay for nothing.
        if "'" not in text and nests_deeper(text, MAX_NESTING):
            raise SyntaxError("too many nested parentheses")  # the compiler's own words
        as_json = text.replace("'", '"') if '"' not in text else python_to_json(text)
        if "'" in text and nests_deeper(as_json, MAX_NESTING):
            raise SyntaxError("too many nested parentheses")
        try:
            return _EXACT_JSON.decode(as_json)
        except (ValueError, RecursionError):
            pass
        if "," in text:
            found = _with_commas(as_json, tuple_ok="\n" not in text)
            if found is not None:
                return found[0]
    if cannot_be_literal(text):
        raise ValueError("not a Python literal")
    return literal_eval_quiet(text)


# A name Python's tokenizer reads as such (no letter, digit, "_" or "." before it, so it is no
# part of a number such as 1e5 or 0xff) that is not True, False or None.
_OTHER_NAME = re.compile(r"(?=[^\W\d])(?<![\w.])(?!(?:True|False|None)(?!\w))")
# A string (with its prefix) or a comment, as the tokenizer reads them in a text without
# backslashes or triple quotes: a string ends at the next quote of its kind on its line.
_STRING_OR_COMMENT = re.compile(
    r"""(?:\b[bBfFrRtTuU]{1,2})?(?:'[^'\n\r]*'|"[^"\n\r]*")|#[^\n\r]*""")
# The same without prefixes, four times faster: exact where no prefix letter precedes a quote.
_PLAIN_STRING_OR_COMMENT = re.compile(r"""'[^'\n\r]*'|"[^"\n\r]*"|#[^\n\r]*""")
_PREFIX_BEFORE_QUOTE = re.compile(r"""[bBfFrRtTuU]['"]""")
_NOT_BRACKET = re.compile(r"[^()\[\]{}]+")
_OPENER_OF = {")": "(", "]": "[", "}": "{"}


def _unpaired_counts(text: str) -> bool:
    """A text without strings, comments or line continuations whose brackets of a kind are
    not as many opening as closing: surely no literal (see :func:`cannot_be_literal`)."""
    return not ("'" in text or '"' in text or "#" in text or "\\" in text) and (
        text.count("(") != text.count(")") or text.count("[") != text.count("]")
        or text.count("{") != text.count("}"))


def _code_of(text: str) -> str:
    """``text`` with each string and comment replaced by a blank."""
    strings = _STRING_OR_COMMENT if _PREFIX_BEFORE_QUOTE.search(text) else _PLAIN_STRING_OR_COMMENT
    return strings.sub(" ", text)


def cannot_be_literal(text: str) -> bool:
    """Whether ``ast.literal_eval`` surely fails on ``text``, told without compiling it.

    >>> cannot_be_literal("[{'a': 1}, b]"), cannot_be_literal("{}, {"), cannot_be_literal("[1]")
    (True, True, False)

    Compiling a long answer costs far more (and the official parser tries up to 13 variants
    of it). For a text without backslashes or triple quotes, strings and comments are found
    as the tokenizer finds them; what is left is code, which must not hold a quote (a string
    left open), a name other than True / False / None (a ``Name`` node or a syntax error) or
    brackets that do not pair up. Any other text: False (the compiler decides).
    """
    if "\\" in text or "'''" in text or '"""' in text:
        return False
    code = _code_of(text) if "'" in text or '"' in text or "#" in text else text
    if "'" in code or '"' in code:
        return True
    if code.count("(") != code.count(")") or code.count("[") != code.count("]") \
            or code.count("{") != code.count("}") or _OTHER_NAME.search(code) is not None:
        return True
    stack: list[str] = []
    for bracket in _NOT_BRACKET.sub("", code):
        if bracket in "([{":
            stack.append(bracket)
        elif not stack or stack.pop() != _OPENER_OF[bracket]:
            return True  # e.g. ``}{`` or ``(]``: a closer that no opener matches
    return bool(stack)  # (counts are equal here: an opener left means a closer unmatched)


# A JSON string (skipped), or a comma after a value that only a closing bracket follows.
_TRAILING_COMMA = re.compile(r'("(?:[^"\\]|\\.)*+")|(?<=[^\s\[{,:])\s*+,(?=\s*+[\]}])')


_COMMA_BEFORE_CLOSER = re.compile(r",\s*+[\]}]")


def _without_trailing_commas(text: str) -> str:
    # Strings are put back as they are (an unmatched group is replaced by nothing).
    return _TRAILING_COMMA.sub(r"\1", text) if _COMMA_BEFORE_CLOSER.search(text) else text


def _with_commas(as_json: str, *, tuple_ok: bool) -> tuple[Any] | None:
    """``(value,)`` of a Python literal that JSON refused for its commas: trailing commas
    (``[1, 2,]``), which Python allows, or commas outside every bracket (``{...}, {...}``, a
    tuple: JSON reads it as the items of a list; ``tuple_ok`` is False when a line break outside
    the brackets could end the expression); None when neither helps."""
    cleaned = _without_trailing_commas(as_json)
    if cleaned != as_json:
        with contextlib.suppress(ValueError, RecursionError):
            return (_EXACT_JSON.decode(cleaned),)
    if tuple_ok:
        try:
            items = _EXACT_JSON.decode(_without_trailing_commas(f"[{as_json}]"))
        except (ValueError, RecursionError):
            return None
        if len(items) > 1:  # one item: ``x,`` (a 1-tuple) is left to the compiler
            return (tuple(items),)
    return None


def _lines_inside(text: str) -> bool:
    """No line break, or all of them inside the outer brackets (where Python joins lines)."""
    if "\n" not in text:
        return True
    value = text.strip(" \t")
    return value.startswith(("[", "{")) and value.endswith(("]", "}"))


_JSON_NAMES = re.compile(r"\b(?:true|false|null)\b")


_EXACT_JSON = json.JSONDecoder(parse_constant=_no_constant)


def _has_json_name(text: str) -> bool:
    # Plain substring tests first: the regex is slow on long answers and rarely needed.
    return ("true" in text or "false" in text or "null" in text) and \
        _JSON_NAMES.search(text) is not None
