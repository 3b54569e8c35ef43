"""The repairing lexer of :func:`tooleval_agents.evaluators.parsing.parse_list`: a candidate list in
a model answer re-emitted as Python literal text, repaired on the way, and the loading of such text.

:func:`build` walks the tokens of one candidate (JSON or Python quotes, full-width punctuation,
names, placeholders) and emits the literal, repairing *outside* string values only: JSON names,
trailing, missing and full-width commas, missing or stray closing brackets, unquoted
``<placeholders>``, unescaped apostrophes (the lenient pass) and truncation (the complete items
of a cut-off list are kept). Every step is linear in the candidate's length: the closers in the
stack are counted (a stray closer never scans a deep stack), a string end is found by ``find``.
:func:`load_literal` reads the emitted text: JSON, else a Python literal, never ``eval``.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tooleval_agents.data.jsonio import MAX_NESTING, nests_deeper
from tooleval_agents.evaluators.literals import (
    cannot_be_literal,
    literal_eval_quiet,
    python_to_json,
)

OPEN = {"[": "]", "{": "}", "(": ")"}
"""Each opening bracket's closer."""
_CLOSE = set(OPEN.values())
_ASCII_PUNCT = frozenset("[]{}(),:")
"""The list's own punctuation (the ``punct`` tokens but the full-width ones)."""
_FULLWIDTH = {"，": ",", "：": ":", "［": "[", "］": "]", "｛": "{", "｝": "}"}
"""Full-width punctuation a Chinese answer uses for the list's own syntax (outside strings)."""
_NAMES = {"true": "True", "false": "False", "null": "None", "none": "None", "True": "True",
          "False": "False", "None": "None", "Ellipsis": "..."}
_TOKEN = re.compile(
    r"""(?P<space>\s+)
      |(?P<num>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)
      |(?P<word>[A-Za-z_]\w*)
      |(?P<punct>[\[\]{}(),:，：［］｛｝])
      |(?P<ellipsis>\.\.\.|…)
      |(?P<comment>\#[^\n]*)
      |(?P<placeholder><[^<>"'\n]{1,200}>)
      |(?P<quote>["'])
      |(?P<other>.)""",
    re.X | re.S,
)
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2}|.)", re.S)
_SURROGATE = re.compile("[\ud800-\udfff]")
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", '"': '"', "'": "'",
                   "\\": "\\", "/": "/", "\n": ""}
_LENIENT_FOLLOW = set(",:]})")
_LENIENT_END = re.compile(r"\s*+(?:[,:\]})]|\Z)")
"""After a quote: blanks, then what can follow a value or the end (a lenient string end)."""
_WORD = re.compile(r"[A-Za-z_]\w*")
_LITERAL_WORDS = frozenset(("True", "False", "None", "NaN", "Infinity"))
"""Names that read as a value on their own: Python's, and JSON's NaN and Infinity."""

# One decoder: json.loads(text, strict=False) would build a new one on every call.
_LENIENT_JSON = json.JSONDecoder(strict=False)


def load_literal(text: str) -> tuple[Any, bool] | None:
    """``(value, is_python)`` from JSON, else a Python literal, else None. Never raises."""
    # Without a double quote JSON has no string, so an apostrophe rules JSON out.
    if '"' in text or "'" not in text:
        try:
            return _shallow(_LENIENT_JSON.decode, text), False
        except (ValueError, RecursionError):
            pass
    if "\\" not in text:
        # Speed: a Python literal without backslashes becomes JSON by re-quoting its strings
        # (bodies without escapes mean the same in both) and renaming True/False/None outside
        # them. When JSON accepts the result, the value equals ast.literal_eval's (anything
        # else, e.g. tuples, falls through to it), at a fraction of the cost.
        as_json = text.replace("'", '"') if '"' not in text else python_to_json(text)
        if nests_deeper(as_json, MAX_NESTING):
            return None  # Python's compiler refuses it too: deeper than its limit (200)
        try:
            return json.loads(as_json), True
        except (ValueError, RecursionError):
            pass
        if '"' not in text:  # re-quoted only: True, False and None are still Python's
            try:
                return json.loads(python_to_json(text)), True
            except (ValueError, RecursionError):
                pass
    if cannot_be_literal(text):
        return None
    try:
        return literal_eval_quiet(text), True
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _shallow(decode: Callable[[str], Any], text: str) -> Any:
    """``decode(text)`` within :data:`MAX_NESTING` levels (Python's literal limit): the JSON
    reader's own limit moves with the Python version, and a result must not."""
    if nests_deeper(text, MAX_NESTING):
        raise ValueError("nested too deep")
    return decode(text)


def _decode_escapes(raw: str) -> str:
    """The value of a quoted string's body (JSON and Python escapes; unknown ones kept as is)."""
    if "\\" not in raw:
        return raw

    def sub(m: re.Match[str]) -> str:
        s = m.group(1)
        if len(s) > 1:  # \uXXXX, \UXXXXXXXX or \xXX
            code = int(s[1:], 16)
            return chr(code) if code <= 0x10FFFF else "\\" + s
        return _SIMPLE_ESCAPES.get(s, "\\" + s)

    text = _ESCAPE.sub(sub, raw)
    if _SURROGATE.search(text):  # "\ud83d\ude00" is one character, as in JSON
        with contextlib.suppress(UnicodeDecodeError):  # a lone surrogate stays as it is
            text = text.encode("utf-16", "surrogatepass").decode("utf-16")
    return text


def _string_end(src: str, start: int, lenient: bool) -> int | None:
    """Index of the quote closing the string opened at ``start``; None if the text ends first.

    ``lenient``: a quote only closes the string when the next non-blank character can follow a
    value (``, : ] } )`` or the end), so ``'Tomorrow's meeting'`` is one string.
    """
    quote, n, i = src[start], len(src), start + 1
    while True:
        j = src.find(quote, i)
        if j < 0:
            return None
        backslashes = 0
        k = j - 1
        while k > start and src[k] == "\\":
            backslashes += 1
            k -= 1
        if backslashes % 2 == 0:
            if not lenient:
                return j
            k = j + 1
            while k < n and src[k].isspace():
                k += 1
            if k == n or src[k] in _LENIENT_FOLLOW:
                return j
        i = j + 1
        if i >= n:
            return None


def quote_in(raw: str, quote: str) -> bool:
    """Whether a string body contains its own (unescaped) quote character."""
    return re.search(r"(?<!\\)" + re.escape(quote), raw) is not None


@dataclass
class Built:
    """A candidate re-emitted as a Python literal by :func:`build`."""

    text: str | None
    """The literal text, or None when nothing complete was found."""
    end: int
    """Index in the source just after the candidate."""
    repairs: set[str] = field(default_factory=set)
    truncated: bool = False
    pieces: list[str] = field(default_factory=list)
    """The emitted tokens (``text`` is built from them)."""
    spans: list[tuple[int, int]] = field(default_factory=list)
    """``pieces[a:b]`` of each complete item of the outer list."""
    lenient_differs: bool = False
    """A string of this (strict) pass ended at a quote that the lenient pass would not take
    as its end: only then can a lenient pass read the candidate differently."""
    strings: dict[int, str] = field(default_factory=dict)
    """``pieces`` index -> value of each string piece (the piece is its ``repr``)."""

    @property
    def may_hold_dict(self) -> bool:
        """Whether an item of the outer list starts as a dict can (``{`` or ``(``): the
        salvage of valid items is kept only when one is a dict, so without one it is not
        tried (loading each item of a long broken answer is the slow part)."""
        return any(self.pieces[a] in ("{", "(") for a, _ in self.spans)

    def item_values(self) -> list[Any]:
        """The value of each complete item of the outer list that is valid on its own (the
        invalid ones dropped); read only for a candidate that does not parse as a whole.

        An item of one piece is read without a parser where that is exact: a string is the
        value it was emitted from; a lone character that is no digit, or a name other than
        the ones JSON or Python read (True, NaN...), is no literal. A long broken answer is
        mostly such items (``[a, *, *, ...``)."""
        values = []
        for a, b in self.spans:
            if b - a == 1:
                if a in self.strings:
                    values.append(self.strings[a])
                    continue
                piece = self.pieces[a]
                if (len(piece) == 1 and not piece.isdigit()) or (
                        _WORD.fullmatch(piece) and piece not in _LITERAL_WORDS):
                    continue
            loaded = load_literal("".join(self.pieces[a:b]))
            if loaded is not None:
                values.append(loaded[0])
        return values


def build(src: str, start: int, *, lenient: bool, implicit_list: bool = False) -> Built:
    """Re-emit the value starting at ``src[start]`` as Python literal text, repairing on the way.

    Stops when the outer bracket closes; prose after it is ignored. With ``implicit_list``, the
    text from ``start`` is a run of bare objects to be wrapped in a list.
    """
    return _Lexer(src, start, lenient, implicit_list).run()


class _Lexer:
    """One pass of :func:`build`: the emitted pieces and the open brackets so far."""

    def __init__(self, src: str, start: int, lenient: bool, implicit_list: bool) -> None:
        self.src, self.pos, self.lenient, self.implicit = src, start, lenient, implicit_list
        self.out: list[str] = ["["] if implicit_list else []
        self.stack: list[str] = ["]"] if implicit_list else []
        self.held = {"]": len(self.stack), "}": 0, ")": 0}
        """Closers in the stack, counted: a stray closer never scans a deep stack."""
        self.strings: dict[int, str] = {}
        self.repairs: set[str] = set()
        self.lenient_differs = False
        self.boundary: int | None = None
        """len(out) after the last complete item of the outer list."""
        self.item_start: int | None = None
        """len(out) where the current outer-list item began."""
        self.spans: list[tuple[int, int]] = []
        self.prev_value = False
        """The previous significant token ended a value."""
        self.closed = False
        self.stop = len(src)

    def run(self) -> Built:
        src, n = self.src, len(self.src)
        match, opener, closer, separator = _TOKEN.match, self._open, self._close, self._separator
        while self.pos < n:
            c = src[self.pos]
            if c in _ASCII_PUNCT:  # speed: most tokens of a long answer, read without a match
                at = self.pos
                self.pos = at + 1
                if c in OPEN:
                    stop = opener(c, at)
                elif c in _CLOSE:
                    stop = closer(c, at)
                else:
                    stop = separator(c)
                if stop:
                    break
                continue
            m = match(src, self.pos)
            if m is None:  # unreachable: the pattern ends with '.'
                break
            kind, tok = m.lastgroup, m.group()
            if kind in ("space", "comment"):
                self.pos = m.end()
                continue
            if self.implicit and len(self.stack) == 1 and kind != "punct":
                self.stop = self.pos
                break  # prose after the last bare object
            if kind == "quote":
                if not self._string(tok):
                    break
                continue
            self.pos = m.end()
            if kind == "punct":
                if tok in _FULLWIDTH:
                    tok = _FULLWIDTH[tok]
                    self.repairs.add("fullwidth_punctuation")
                if tok in OPEN:
                    stop = opener(tok, m.start())
                elif tok in _CLOSE:
                    stop = closer(tok, m.start())
                else:
                    stop = separator(tok)
                if stop:
                    break
            else:
                self._value_token(kind, tok)
        return self._result()

    def _string(self, tok: str) -> bool:
        """Emit the string opened at ``pos``; False when the text ends inside it."""
        src, pos = self.src, self.pos
        end = _string_end(src, pos, self.lenient)
        if end is None:
            self.pos = len(src)  # cut off inside a string
            return False
        if not self.lenient and not self.lenient_differs \
                and _LENIENT_END.match(src, end + 1) is None:
            self.lenient_differs = True
        raw = src[pos + 1:end]
        if tok == "'":
            self.repairs.add("python_literal")
        if self.lenient and quote_in(raw, tok):
            self.repairs.add("quote_repair")
        value = _decode_escapes(raw)
        self._piece(repr(value), value)
        self.pos = end + 1
        return True

    def _value_token(self, kind: str | None, tok: str) -> None:
        if kind == "word":
            name = _NAMES.get(tok)
            if name is not None and name != tok:
                self.repairs.add("json_names")
            elif name is not None:
                self.repairs.add("python_literal")
            self._piece(name or tok)
        elif kind == "ellipsis":
            self._piece("...")
        elif kind == "placeholder":
            self._piece(repr(tok), tok)  # ``<number of guests>`` written without quotes
            self.repairs.add("unquoted_placeholder")
        else:  # numbers are kept; other characters make the literal invalid, as they should
            self._piece(tok)

    # Each handler of punctuation returns True when the candidate ends there.

    def _separator(self, tok: str) -> bool:
        """A comma or a colon."""
        out = self.out
        if tok == ",":
            if not out or out[-1] in (",", "[", "{", "(", ":"):
                self.repairs.add("trailing_comma")
                return False
            if len(self.stack) == 1 and self.prev_value:
                self._end_item()
            out.append(",")
        else:  # ':'
            out.append(":")
        self.prev_value = False
        return False

    def _open(self, tok: str, at: int) -> bool:
        stack, out = self.stack, self.out
        if self.implicit and len(stack) == 1 and tok != "{":
            self.stop = at
            return True
        if stack and stack[-1] == "}" and out[-1] == "," and self.held["]"]:
            # An object where a key should be: the model forgot to close the object(s)
            # before the next list item (``..."}, {"step": ...``).
            out.pop()
            while stack[-1] != "]":
                out.append(closer := stack.pop())
                self.held[closer] -= 1
            if len(stack) == 1:
                self._end_item()
            out.append(",")
            self.repairs.add("bracket_repair")
        self._piece(tok)
        self.prev_value = False
        stack.append(closer := OPEN[tok])
        self.held[closer] += 1
        return False

    def _close(self, tok: str, at: int) -> bool:
        stack, out = self.stack, self.out
        if not self.held[tok]:
            self.repairs.add("bracket_repair")  # stray closer: drop it
            return False
        if self.implicit and len(stack) == 1:
            self.stop = at
            return True
        while out and out[-1] == ",":
            out.pop()
            self.repairs.add("trailing_comma")
        while stack[-1] != tok:
            out.append(closer := stack.pop())  # close what the model left open
            self.held[closer] -= 1
            self.repairs.add("bracket_repair")
        out.append(stack.pop())
        self.held[tok] -= 1
        self.prev_value = True
        if len(stack) == 1:
            self._end_item()
        if not stack:
            self.closed = True
            self.stop = self.pos
            return True
        return False

    def _piece(self, piece: str, string: str | None = None) -> None:
        """Emit a value's first (or only) piece, with a comma where a list item lacks one."""
        out, stack = self.out, self.stack
        if self.prev_value and stack and stack[-1] == "]":
            if len(stack) == 1:
                self._end_item()
            out.append(", ")
            self.repairs.add("missing_comma")
        if len(stack) == 1:
            self.item_start = len(out)
        if string is not None:
            self.strings[len(out)] = string
        out.append(piece)
        self.prev_value = True

    def _end_item(self) -> None:
        self.boundary = len(self.out)
        if self.item_start is not None:
            self.spans.append((self.item_start, self.boundary))
            self.item_start = None

    def _result(self) -> Built:
        out, n = self.out, len(self.src)
        if self.closed or (self.implicit and len(self.stack) == 1):
            if self.implicit:
                while out and out[-1] == ",":
                    out.pop()
                out.append("]")
            return self._built("".join(out), self.stop, truncated=False)
        # The text ended inside the value: keep the complete items of the outer list.
        if self.boundary is None:
            return Built(None, n, self.repairs, truncated=True,
                         lenient_differs=self.lenient_differs)
        tail = [t for t in out[self.boundary:] if t != ","]
        self.repairs.add("truncated_item_dropped" if tail else "truncated_list_closed")
        return self._built("".join(out[:self.boundary]) + "]", n, truncated=True)

    def _built(self, text: str, end: int, *, truncated: bool) -> Built:
        return Built(text, end, self.repairs, truncated=truncated, pieces=self.out,
                     spans=self.spans, lenient_differs=self.lenient_differs,
                     strings=self.strings)
