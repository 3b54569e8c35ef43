"""Text from outside (paths, ids, model and run names, option values, error messages from
providers, plugins and data files) made safe to print on a terminal.

A provider's error body can hold terminal escape sequences (``\\x1b]0;title\\x07`` sets the
window title, ``\\x1b[2J`` clears the screen) and a run directory can be named ``[red]``: printed
as they are, the first drives the terminal and the second is read by Rich as markup (or fails
as a closing tag that matches nothing). :func:`shown` is the one helper for text printed
through Rich (tables, progress descriptions, messages); :func:`printable` is its first half, for
plain-text output (log records, warnings).

>>> printable("bad\\x1b]0;pwned\\x07\\x1b[2J body")
'bad\\\\x1b]0;pwned\\\\x07\\\\x1b[2J body'
>>> shown("runs/[/bold]x")
'runs/\\\\[/bold]x'
"""

from __future__ import annotations

import re

from rich.markup import escape

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Control characters but line feed and tab (C0, DEL, C1: ``\\x9b`` starts a sequence on some
terminals), and the bidirectional marks and overrides that reorder what a line shows."""


def _escaped(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(value: object) -> str:
    """``str(value)`` with each control character written as its escape (``\\x1b``,
    ``\\u202e``); line feeds and tabs are kept."""
    text = str(value)
    return _CONTROL.sub(_escaped, text) if _CONTROL.search(text) else text


def shown(value: object) -> str:
    """``str(value)`` to put in text printed through Rich: control characters escaped
    (:func:`printable`) and markup brackets escaped, so it prints as written wherever it is
    put (alone, in a table cell, before a closing tag)."""
    text = printable(value)
    body = text.rstrip("\\")
    if len(body) == len(text):
        return escape(text)
    # Backslashes at the end: doubled before an empty tag, they print as they are and cannot
    # escape a tag that follows (Rich's escape doubles one, which shows twice at the end).
    return escape(body) + "\\" * (2 * (len(text) - len(body))) + "[dim][/dim]"
