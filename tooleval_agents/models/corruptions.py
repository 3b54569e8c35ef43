"""Seeded, realistic corruptions of gold answers: what ``noisy-reference[:RATE]`` answers.

:func:`corrupt` leaves a gold answer alone with probability ``1 - rate`` and otherwise applies
one corruption of the kind a real model makes, picked by the same seeded draw. Everything is
deterministic per ``(seed, format, text)``: the random generator is seeded from a SHA-256 of
them (never Python's ``hash()``, which is salted per process), so reruns and concurrent runs
give the same answers. The kind drawn does not depend on ``rate``, and a higher rate corrupts a
superset of the answers a lower one does.

Kinds by answer format (:data:`KINDS`):

* ``json_object`` (tool skeletons and other JSON objects): drop a property, rename the tool,
  broken JSON;
* a benchmark's own formats, registered by its declaration
  (:meth:`~tooleval_agents.registry.Benchmark.answer_formats`; UltraTool: ``json_steps`` and
  ``plan_text``, AppBench: ``app_list`` and ``call_lines``, each in the benchmark's
  ``corruptions`` module), built from the edits here (:func:`edit_string`,
  :func:`mutate_name`, :func:`broken_json`).

A kind that cannot apply to a text (no parameters to mutate, a single line to swap) is skipped
for another applicable one; when none applies (free text, an unparsable answer) the answer is
cut off (``truncate``). :func:`corrupt` never raises on any text, and with ``rate=1`` always
changes a non-empty text.

>>> corrupt('{"name": "find"}', "json_object", rate=0.0, seed="s")
'{"name": "find"}'
>>> corrupt('{"name": "find"}', "json_object", rate=1.0, seed="s") != '{"name": "find"}'
True
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tooleval_agents.registry import benchmarks

AnswerFormat = str
"""Shape of a gold answer (``plan_text``, ``json_steps``...): tells ``noisy-reference`` how to
corrupt it realistically. Open: a benchmark registers its own (:func:`register_format`)."""
Apply = Callable[[str, str, random.Random], "str | None"]
"""``apply(text, kind, rng)``: the text with one corruption of ``kind``, ``None`` if it does
not fit."""

KINDS: dict[str, tuple[str, ...]] = {
    "json_object": ("drop_property", "rename_tool", "broken_json"),
}
"""The realistic corruption kinds of each answer format: the generic ones here, the
benchmarks' own added when first asked for (:func:`register_format`)."""

FALLBACK_KIND = "truncate"
"""Applied when no kind of the format fits the text: the answer is cut off."""



@dataclass(frozen=True)
class Corruption:
    """The outcome of one draw."""

    text: str
    """The answer as the noisy model gives it."""
    kind: str | None
    """The corruption applied (a name from :data:`KINDS` or ``"truncate"``), ``None`` if the
    answer was left intact."""


def rng_for(seed: int | str, format: str, text: str) -> random.Random:
    """The generator of one draw, seeded from a SHA-256 of ``(seed, format, text)``."""
    digest = hashlib.sha256(f"{seed}\x1f{format}\x1f{text}".encode("utf-8", "surrogatepass"))
    return random.Random(int.from_bytes(digest.digest()[:8], "big"))


def draw(text: str, format: AnswerFormat, *, rate: float, seed: int | str) -> Corruption:
    """Decide whether to corrupt ``text`` and how (see the module docstring)."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"corruption rate must be within 0..1, got {rate}")
    _check_format(format)
    rng = rng_for(seed, format, text)
    if rng.random() >= rate or not text:
        return Corruption(text=text, kind=None)
    kinds = list(KINDS[format])
    rng.shuffle(kinds)  # uniform over the kinds that apply to this text
    for kind in kinds:
        try:
            out = apply_kind(text, format, kind, rng)
        except RecursionError:  # JSON nested hundreds deep: the kind does not apply
            continue
        if out is not None and out != text:
            return Corruption(text=out, kind=kind)
    return Corruption(text=truncate(text, rng), kind=FALLBACK_KIND)


def corrupt(text: str, format: AnswerFormat, *, rate: float, seed: int | str) -> str:
    """With probability ``rate`` a realistically corrupted ``text``, else ``text`` itself.

    Deterministic per ``(seed, format, text)``; never raises on any text.

    >>> corrupt("1. Search\\n2. Book", "plan_text", rate=1.0, seed=7) != "1. Search\\n2. Book"
    True
    """
    return draw(text, format, rate=rate, seed=seed).text


def apply_kind(text: str, format: AnswerFormat, kind: str,
               rng: random.Random) -> str | None:
    """Apply one named corruption; ``None`` when it does not fit the text.

    ``truncate`` fits every non-empty text of any format.
    """
    if kind == FALLBACK_KIND:
        return truncate(text, rng) if text else None
    _check_format(format)
    if kind not in KINDS.get(format, ()):
        raise ValueError(f"no corruption {kind!r} for format {format!r}; "
                         f"known: {KINDS.get(format)}")
    return _APPLY[format](text, kind, rng)


# ----------------------------------------------------------------------------- text edits

_LOWER = "abcdefghijklmnopqrstuvwxyz"
_DIGITS = "0123456789"


def truncate(text: str, rng: random.Random) -> str:
    """The text cut off somewhere in its second half (a non-empty text always changes)."""
    if len(text) <= 1:
        return ""
    return text[:rng.randint(len(text) // 2, len(text) - 1)]


def _substitute_char(ch: str, rng: random.Random) -> str:
    if ch.isdigit():
        pool = _DIGITS
    elif ch.isupper():
        pool = _LOWER.upper()
    else:
        pool = _LOWER
    return rng.choice([c for c in pool if c != ch])


def edit_string(value: str, rng: random.Random) -> str:
    """A typo-like variant of ``value`` (a deleted, replaced or swapped character, or the value
    cut short); always differs from ``value``.

    >>> edit_string("", random.Random(0)) != ""
    True
    """
    if not value:
        return rng.choice(["none", "N/A", "unknown"])
    ops = ["delete", "substitute", "swap", "truncate"]
    rng.shuffle(ops)
    for op in ops:
        if op == "delete":
            i = rng.randrange(len(value))
            out = value[:i] + value[i + 1:]
        elif op == "substitute":
            i = rng.randrange(len(value))
            out = value[:i] + _substitute_char(value[i], rng) + value[i + 1:]
        elif op == "swap":
            pairs = [i for i in range(len(value) - 1) if value[i] != value[i + 1]]
            if not pairs:
                continue
            i = rng.choice(pairs)
            out = value[:i] + value[i + 1] + value[i] + value[i + 2:]
        else:
            if len(value) < 2:
                continue
            out = value[:rng.randint(1, len(value) - 1)]
        if out != value:
            return out
    return value + "x"


def mutate_name(name: str, rng: random.Random) -> str:
    """A look-alike identifier: segments swapped or dropped, an affix, or a typo.

    >>> mutate_name("file_copy", random.Random(1)) != "file_copy"
    True
    """
    parts = [p for p in name.split("_") if p]
    ops = ["swap_segments", "drop_segment", "affix", "typo"]
    rng.shuffle(ops)
    for op in ops:
        out = ""
        if op == "swap_segments" and len(parts) >= 2 and len(set(parts)) > 1:
            out = "_".join(parts[::-1])
        elif op == "drop_segment" and len(parts) >= 2:
            kept = list(parts)
            del kept[rng.randrange(len(kept))]
            out = "_".join(kept)
        elif op == "affix":
            out = (rng.choice(["get_", "query_", "do_"]) + name if rng.random() < 0.5
                   else name + rng.choice(["_tool", "_api", "s", "_v2"]))
        elif op == "typo":
            out = edit_string(name, rng)
        if out and out != name:
            return out
    return name + "_v2"


# ----------------------------------------------------------------------------- JSON answers

def loads_json(text: str) -> tuple[bool, Any]:
    """``(True, value)`` when the text is JSON, else ``(False, None)``; never raises."""
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError):
        return False, None


def dumps_json(value: Any) -> str:
    # Same rendering as the workflows' gold answers (tooleval_agents.graphs.common.render_json).
    return json.dumps(value, ensure_ascii=False)


def broken_json(text: str, rng: random.Random) -> str | None:
    """Cut off, a bracket removed, or Python-literal quoting (``str()`` of the value)."""
    modes = ["truncate", "bracket", "quotes"]
    rng.shuffle(modes)
    for mode in modes:
        if mode == "truncate":
            out = truncate(text, rng)
        elif mode == "bracket":
            spots = [i for i, c in enumerate(text) if c in "[]{}"]
            if not spots:
                continue
            # the outermost brackets: models lose those, and inner ones may sit in a string
            i = rng.choice([spots[0], spots[-1]])
            out = text[:i] + text[i + 1:]
        else:
            ok, value = loads_json(text)
            if not ok or not isinstance(value, list | dict):
                continue
            try:
                out = str(value)
            except (ValueError, RecursionError):
                continue
        if out != text:
            return out
    return None


def _dicts_in(value: Any, depth: int = 0) -> list[dict[str, Any]]:
    """Every dict nested in a JSON value (bounded depth)."""
    if depth > 50:
        return []
    if isinstance(value, dict):
        found = [value]
        for v in value.values():
            found += _dicts_in(v, depth + 1)
        return found
    if isinstance(value, list):
        return [d for v in value for d in _dicts_in(v, depth + 1)]
    return []


def _json_object(text: str, kind: str, rng: random.Random) -> str | None:
    if kind == "broken_json":
        return broken_json(text, rng)
    ok, value = loads_json(text)
    if not ok:
        return None
    value = copy.deepcopy(value)
    dicts = _dicts_in(value)
    if kind == "drop_property":
        holders = [d["properties"] for d in dicts
                   if isinstance(d.get("properties"), dict) and d["properties"]]
        if not holders:
            holders = [d for d in dicts if d]
        if not holders:
            return None
        holder = rng.choice(holders)
        del holder[rng.choice(sorted(holder))]
    else:  # rename_tool
        named = [d for d in dicts if isinstance(d.get("name"), str)]
        if not named:
            return None
        target = rng.choice(named)
        target["name"] = mutate_name(target["name"], rng)
    return dumps_json(value)


_APPLY: dict[str, Apply] = {
    "json_object": _json_object,
}


def register_format(name: str, kinds: tuple[str, ...], apply: Apply) -> None:
    """Add (or replace) an answer format: its corruption kinds and ``apply(text, kind, rng)``,
    which returns the corrupted text or ``None`` when the kind does not fit the text. A
    benchmark declares its own through
    :meth:`~tooleval_agents.registry.Benchmark.answer_formats`."""
    KINDS[name] = tuple(kinds)
    _APPLY[name] = apply


def kinds_of(format: str) -> tuple[str, ...]:
    """The corruption kinds of a format (a benchmark's own formats included)."""
    _check_format(format)
    return KINDS[format]


def _check_format(format: str) -> None:
    """A known format, asking the registered benchmarks for theirs the first time one is
    missing; ``ValueError`` lists the known ones."""
    if format in KINDS:
        return
    for bench in benchmarks().values():
        for name, (kinds, apply) in bench.answer_formats().items():
            register_format(name, kinds, apply)
    if format not in KINDS:
        raise ValueError(f"unknown answer format {format!r}; known: {list(KINDS)}")


__all__ = ["FALLBACK_KIND", "KINDS", "AnswerFormat", "Apply", "Corruption", "apply_kind",
           "broken_json", "corrupt", "draw", "dumps_json", "edit_string", "kinds_of", "loads_json",
           "mutate_name", "register_format", "rng_for", "truncate"]
