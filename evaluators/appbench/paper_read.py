"""How the official AppBench driver reads a model's answer, for the ``paper`` profile.

The official driver (``code/appbench/test.py`` at the pinned commit) splits the model's text
into predicted apps and API strings with ``utils.discompose_app_api``, then
``evaluation.get_appbench_analysis`` reads an API name and arguments from each API string
with ``utils.extract_name_params``. This module gives the same lists and dictionaries, read
with ``str`` searches and backtracking-free patterns (linear in the text; the upstream
patterns are quadratic on a long run of word characters). ``tests/test_appbench_paper_parity.py``
checks it against the official functions themselves, on arbitrary text and on every kind of
answer we could produce.

**Lines** (:func:`read_answer`; the text is split on ``\\n`` only):

* ``Word: [ ... ]`` at the start of the line (a run of word characters, ``:``, optional
  whitespace, ``[``, and a ``]`` somewhere after it): the app is the word, the API string
  the text from that ``[`` to the line's last ``]``, every ``[`` and ``]`` removed, stripped;
* else a line holding ``:``, ``[`` and ``]`` anywhere (``- **Hotels**: [...]``, ``Note: [1]``,
  ``Hotels: x] = y [``): the app is the text before the first ``:`` (stripped, bullets and
  all), the API string the rest, brackets removed, stripped;
* any other line is nothing.

An app that comes out empty (a line starting with ``:``) is not counted, its API string is:
the two lists can differ in length. **Every API string counts as one predicted API**, also
one from which no name can be read (``app1: [x='y']``, ``Trains: [total] = nothing``): its
name is ``""`` and it matches no gold API.

**Name and arguments** (:func:`extract_call`): the first ``name = api(args)`` in the string --
a run of word characters, ``=`` (spaces around it allowed), a run of word characters directly
followed by ``(``, and ``args`` up to the first ``)``. No such call: no name (``""``), no
arguments. The name is lowercased; one holding ``_`` becomes the piece after its first ``_``
and before the next (``Hotels_SearchHouse`` -> ``searchhouse``, ``book_stylist_appointment``
-> ``stylist``). ``args`` is split on ``", "``; a piece with exactly one ``=`` is ``key=value``
(key stripped and lowercased, ``#`` added when missing; value stripped, quotes kept); a piece
with two or more ``=`` is skipped; a piece without ``=`` sets the value of the previous
``key=value`` piece's key to ``""`` (an upstream slip we keep: ``#a='x', b`` reads ``#a``
as ``""``).
"""

from __future__ import annotations

import re
from typing import NamedTuple

_APP_LINE = re.compile(r"(\w+):\s*\[")
"""The start of a ``Word: [`` line (``\\w+`` then ``:`` cannot backtrack: linear)."""
_CALL = re.compile(r"=\s*(\w+)\(")
"""``= api(`` (the API name runs to the ``(``); a word must end just before the ``=``
(whitespace between allowed), which :func:`extract_call` checks by hand: the first ``=`` that
passes both is the one of the leftmost ``name = api(`` (the word before an ``=`` lies after
any earlier ``=``). Each ``=`` is tried once, each word read once after an ``=`` and each
whitespace run once before one: linear."""


def read_answer(text: object) -> tuple[list[str], list[str]]:
    """``(apps, API strings)`` of an answer, as ``discompose_app_api`` gives them (see the
    module docstring); ``([], [])`` for anything but a string. Never raises.

    >>> read_answer("Trains: [r = findtrains(#to='A')] extra\\n- **Hotels**: [x]\\n: [y]\\nprose")
    (['Trains', '- **Hotels**'], ["r = findtrains(#to='A')", 'x', 'y'])
    """
    if not isinstance(text, str):
        return [], []
    apps: list[str] = []
    apis: list[str] = []
    for line in text.split("\n"):
        colon = line.find(":")
        if colon < 0:
            continue
        m = _APP_LINE.match(line)
        if m is not None:
            close = line.rfind("]")
            if close >= m.end():
                apps.append(m.group(1))
                apis.append(line[m.end():close].replace("[", "").replace("]", "").strip())
                continue
        if "[" not in line or "]" not in line:
            continue
        app = line[:colon].strip()
        if app:
            apps.append(app)
        apis.append(line[colon + 1:].strip().replace("[", "").replace("]", "").strip())
    return apps, apis


class OfficialCall(NamedTuple):
    """What ``extract_name_params`` reads from an API string."""

    name: str
    """The API name, lowercased and cut at ``_`` (see the module docstring)."""
    args: dict[str, str]
    """``#key`` (lowercased) -> value as written (quotes kept)."""


def _args(text: str) -> dict[str, str]:
    """The arguments of a call the official way (see the module docstring)."""
    args: dict[str, str] = {}
    last: str | None = None  # the key of the previous ``key=value`` piece
    for piece in text.split(", "):
        eq = piece.find("=")
        if eq >= 0:
            if piece.find("=", eq + 1) >= 0:  # two or more ``=``: the piece is skipped
                continue
            key = piece[:eq].strip().lower()
            last = key if key[:1] == "#" else "#" + key
            args[last] = piece[eq + 1:].strip()
        elif last is not None:
            args[last] = ""
    return args


def extract_call(text: str) -> OfficialCall | None:
    """The first ``name = api(args)`` of an API string read the official way, ``None`` when
    there is none (see the module docstring). Never raises; linear in the text.

    >>> extract_call("r1, r2 = Hotels_SearchHouse(#Where_To='Paris', star_rating='4')")
    OfficialCall(name='searchhouse', args={'#where_to': "'Paris'", '#star_rating': "'4'"})
    >>> extract_call("searchhouse(#where_to='Paris')") is None
    True
    """
    call = _CALL.search(text)
    while call is not None:
        before = call.start() - 1
        while before >= 0 and text[before].isspace():
            before -= 1
        if before >= 0 and (text[before].isalnum() or text[before] == "_"):  # ``\w``
            break
        call = _CALL.search(text, call.start() + 1)
    if call is None:
        return None
    close = text.find(")", call.end())
    if close < 0:  # no ``)`` after this ``(``: none after any later one either
        return None
    name = call.group(1).lower()
    if "_" in name:
        name = name.split("_")[1]
    return OfficialCall(name, _args(text[call.end():close]))
