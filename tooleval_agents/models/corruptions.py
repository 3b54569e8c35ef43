"""Seeded, realistic corruptions of gold answers: what ``noisy-reference[:RATE]`` answers.

:func:`corrupt` leaves a gold answer alone with probability ``1 - rate`` and otherwise applies
one corruption of the kind a real model makes, picked by the same seeded draw. Everything is
deterministic per ``(seed, format, text)``: the random generator is seeded from a SHA-256 of
them (never Python's ``hash()``, which is salted per process), so reruns and concurrent runs
give the same answers. The kind drawn does not depend on ``rate``, and a higher rate corrupts a
superset of the answers a lower one does.

Kinds by answer format (:data:`KINDS`):

* ``json_steps`` (UltraTool answers, a JSON list of ``{step, tool[, param]}``): drop a step, add
  a step (a duplicate under a new step id, or an invented step), wrong tool (awareness labels
  ``"0"``/``"1"`` flipped; a tool name replaced by another name of the answer, else by a
  look-alike; a created skeleton renamed), a mutated argument value (character edits,
  truncation), a missing argument key (or a missing property of a created skeleton), broken
  JSON (cut off, a bracket missing, or Python literal quoting as GPT models often write it);
* ``plan_text`` (UltraTool plans, ``1. ...`` / ``1.1 ...`` lines): drop a step, add a redundant
  step, swap two sibling steps, break the numbering;
* ``json_object`` (tool skeletons and other JSON objects): drop a property, rename the tool,
  broken JSON;
* a benchmark's own formats, registered by its declaration
  (:meth:`~tooleval_agents.registry.Benchmark.answer_formats`; AppBench: ``app_list`` and
  ``call_lines``, in :mod:`tooleval_agents.appbench.corruptions`).

A kind that cannot apply to a text (no parameters to mutate, a single line to swap) is skipped
for another applicable one; when none applies (free text, an unparsable answer) the answer is
cut off (``truncate``). :func:`corrupt` never raises on any text, and with ``rate=1`` always
changes a non-empty text.

>>> corrupt("1. Find\n2. Book", "plan_text", rate=0.0, seed="s")
'1. Find\n2. Book'
>>> corrupt("1. Find\n2. Book", "plan_text", rate=1.0, seed="s") != "1. Find\n2. Book"
True
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
import re
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
    "json_steps": ("drop_step", "add_step", "wrong_tool", "mutate_value", "drop_argument",
                   "broken_json"),
    "plan_text": ("drop_step", "add_step", "reorder_steps", "break_numbering"),
    "json_object": ("drop_property", "rename_tool", "broken_json"),
}
"""The realistic corruption kinds of each answer format (the generic ones here; AppBench adds
``app_list`` and ``call_lines``)."""

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
    return Corruption(text=_truncate(text, rng), kind=FALLBACK_KIND)


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
        return _truncate(text, rng) if text else None
    _check_format(format)
    if kind not in KINDS.get(format, ()):
        raise ValueError(f"no corruption {kind!r} for format {format!r}; "
                         f"known: {KINDS.get(format)}")
    return _APPLY[format](text, kind, rng)


# ----------------------------------------------------------------------------- text edits

_LOWER = "abcdefghijklmnopqrstuvwxyz"
_DIGITS = "0123456789"


def _truncate(text: str, rng: random.Random) -> str:
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
    # Same rendering as the workflows' gold answers (graphs.common.render_json).
    return json.dumps(value, ensure_ascii=False)


def _broken_json(text: str, rng: random.Random) -> str | None:
    """Cut off, a bracket removed, or Python-literal quoting (``str()`` of the value)."""
    modes = ["truncate", "bracket", "quotes"]
    rng.shuffle(modes)
    for mode in modes:
        if mode == "truncate":
            out = _truncate(text, rng)
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


_STEP_ID = re.compile(r"^(\d+(?:\.\d+)*)(\.?)$")
_CJK = re.compile(r"[\u3400-\u9fff]")
_LABELS = {"0": "1", "1": "0"}


def _is_label(value: Any) -> bool:
    """Whether a step's ``tool`` is an awareness label (``"0"`` / ``"1"``)."""
    return isinstance(value, str) and value in _LABELS


def _split_step(step: str) -> tuple[str, str]:
    """``"1.2 Query it"`` -> ``("1.2", "Query it")`` (the official step id rule)."""
    head, _, body = step.strip().partition(" ")
    return head, body


def next_step_id(step_id: str, taken: set[str]) -> str:
    """The next free sibling id: ``"1.2"`` -> ``"1.3"``, ``"3."`` -> ``"4."``; a non-numeric
    id gets a numeric one after the taken ones.

    >>> next_step_id("1.2", {"1.1", "1.2", "1.3"})
    '1.4'
    """
    m = _STEP_ID.match(step_id)
    if m is None:
        n = len(taken) + 1
        while f"{n}." in taken:
            n += 1
        return f"{n}."
    parts, dot = m.group(1).split("."), m.group(2)
    n = int(parts[-1]) + 1
    while True:
        candidate = ".".join([*parts[:-1], str(n)]) + dot
        if candidate not in taken:
            return candidate
        n += 1


def _steps_of(value: Any) -> list[dict[str, Any]] | None:
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return value
    return None


def _tool_names(steps: list[dict[str, Any]]) -> set[str]:
    """Tool names written anywhere in the answer (selected tools, created skeletons)."""
    names: set[str] = set()
    for step in steps:
        tool = step.get("tool")
        if isinstance(tool, str) and re.fullmatch(r"[A-Za-z_][\w.]*", tool):
            names.add(tool)
        elif isinstance(tool, dict) and isinstance(tool.get("name"), str):
            names.add(tool["name"])
    return names


def _json_steps(text: str, kind: str, rng: random.Random) -> str | None:
    if kind == "broken_json":
        return _broken_json(text, rng)
    ok, value = loads_json(text)
    steps = _steps_of(value) if ok else None
    if steps is None:
        return None
    steps = copy.deepcopy(steps)
    fn = _STEP_KINDS[kind]
    return None if not fn(steps, text, rng) else dumps_json(steps)


def _drop_step(steps: list[dict[str, Any]], text: str, rng: random.Random) -> bool:
    del steps[rng.randrange(len(steps))]
    return True


def _add_step(steps: list[dict[str, Any]], text: str, rng: random.Random) -> bool:
    i = rng.randrange(len(steps))
    template = steps[i]
    if not isinstance(template.get("step"), str):
        return False
    taken = {_split_step(s["step"])[0] for s in steps if isinstance(s.get("step"), str)}
    sid, body = _split_step(template["step"])
    new = copy.deepcopy(template)
    if rng.random() < 0.5 and body:
        new["step"] = f"{next_step_id(sid, taken)} {body}"  # the same step again
    else:
        invented = "核对上一步的结果" if _CJK.search(text) else "Double-check the previous result"
        new["step"] = f"{next_step_id(sid, taken)} {invented}"
        if _is_label(new.get("tool")):
            new["tool"] = rng.choice(["0", "1"])
    steps.insert(i + 1, new)
    return True


def _wrong_tool(steps: list[dict[str, Any]], text: str, rng: random.Random) -> bool:
    names = _tool_names(steps)
    spots = [s for s in steps
             if _is_label(s.get("tool")) or (isinstance(s.get("tool"), str) and s["tool"] in names)
             or (isinstance(s.get("tool"), dict) and isinstance(s["tool"].get("name"), str))]
    if not spots:
        return False
    step = rng.choice(spots)
    tool = step["tool"]
    if _is_label(tool):
        step["tool"] = _LABELS[tool]
    elif isinstance(tool, dict):
        tool["name"] = mutate_name(tool["name"], rng)
    else:
        others = sorted(names - {tool})
        step["tool"] = rng.choice(others) if others else mutate_name(tool, rng)
    return True


def _param_spots(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s["param"] for s in steps if isinstance(s.get("param"), dict) and s["param"]]


def _mutate_param_value(steps: list[dict[str, Any]], text: str, rng: random.Random) -> bool:
    spots = _param_spots(steps)
    if not spots:
        return False
    param = rng.choice(spots)
    key = rng.choice(sorted(param))
    param[key] = edit_string(str(param[key]) if not isinstance(param[key], str)
                             else param[key], rng)
    return True


def _drop_argument(steps: list[dict[str, Any]], text: str, rng: random.Random) -> bool:
    spots = _param_spots(steps)
    # a created skeleton's argument properties are its "parameters"
    for s in steps:
        props = _skeleton_properties(s.get("tool"))
        if props:
            spots.append(props)
    if not spots:
        return False
    holder = rng.choice(spots)
    del holder[rng.choice(sorted(holder))]
    return True


def _skeleton_properties(tool: Any) -> dict[str, Any] | None:
    if isinstance(tool, dict):
        args = tool.get("arguments")
        if isinstance(args, dict) and isinstance(args.get("properties"), dict):
            return args["properties"] or None
    return None


_STEP_KINDS: dict[str, Callable[[list[dict[str, Any]], str, random.Random], bool]] = {
    "drop_step": _drop_step,
    "add_step": _add_step,
    "wrong_tool": _wrong_tool,
    "mutate_value": _mutate_param_value,
    "drop_argument": _drop_argument,
}


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
        return _broken_json(text, rng)
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


# ----------------------------------------------------------------------------- plan text

_PLAN_LINE = re.compile(r"^(\s*)(\d+(?:\.\d+)*\.?)([ \t]+)(\S.*)$")


@dataclass
class _PlanLine:
    indent: str
    sid: str
    gap: str
    body: str

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(self.sid.rstrip(".").split("."))

    def render(self) -> str:
        return f"{self.indent}{self.sid}{self.gap}{self.body}"


def _plan_text(text: str, kind: str, rng: random.Random) -> str | None:
    lines = text.split("\n")
    parsed: dict[int, _PlanLine] = {}
    for i, line in enumerate(lines):
        m = _PLAN_LINE.match(line)
        if m:
            parsed[i] = _PlanLine(*m.groups())
    content = [i for i, line in enumerate(lines) if line.strip()]
    steps = sorted(parsed) or content
    if not steps:
        return None
    if kind == "drop_step":
        del lines[rng.choice(steps)]
    elif kind == "add_step":
        _add_plan_step(lines, parsed, steps, text, rng)
    elif kind == "reorder_steps":
        pairs = _sibling_pairs(lines, parsed)
        if not pairs:
            pairs = [(a, b) for a in content for b in content
                     if a < b and lines[a].strip() != lines[b].strip()]
            if not pairs:
                return None
            a, b = rng.choice(pairs)
            lines[a], lines[b] = lines[b], lines[a]
        else:
            a, b = rng.choice(pairs)
            parsed[a].body, parsed[b].body = parsed[b].body, parsed[a].body
            lines[a], lines[b] = parsed[a].render(), parsed[b].render()
    else:  # break_numbering
        if not parsed:
            return None
        i = rng.choice(sorted(parsed))
        step = parsed[i]
        previous = [j for j in sorted(parsed) if j < i and parsed[j].sid != step.sid]
        mode = rng.choice(["strip", "repeat", "bump"])
        if mode == "strip":
            lines[i] = f"{step.indent}{step.body}"
        elif mode == "repeat" and previous:
            lines[i] = _PlanLine(step.indent, parsed[previous[-1]].sid, step.gap,
                                 step.body).render()
        else:
            parts = list(step.parts)
            parts[-1] = str(int(parts[-1]) + 1)
            sid = ".".join(parts) + ("." if step.sid.endswith(".") else "")
            lines[i] = _PlanLine(step.indent, sid, step.gap, step.body).render()
    return "\n".join(lines)


def _sibling_pairs(lines: list[str], parsed: dict[int, _PlanLine]) -> list[tuple[int, int]]:
    """Pairs of steps with the same parent and different texts, leaf steps (actions) first:
    swapping two parents' titles would leave their sub-steps under the wrong heading."""
    idx = sorted(parsed)
    parents = {parsed[i].parts[:-1] for i in idx}
    pairs = []
    for n, a in enumerate(idx):
        for b in idx[n + 1:]:
            pa, pb = parsed[a].parts, parsed[b].parts
            if (len(pa) == len(pb) and pa[:-1] == pb[:-1]
                    and parsed[a].body != parsed[b].body):
                pairs.append((a, b))
    leaves = [(a, b) for a, b in pairs
              if parsed[a].parts not in parents and parsed[b].parts not in parents]
    return leaves or pairs


def _add_plan_step(lines: list[str], parsed: dict[int, _PlanLine], steps: list[int],
                   text: str, rng: random.Random) -> None:
    i = rng.choice(steps)
    if i not in parsed:  # free text: the same line again
        lines.insert(i + 1, lines[i])
        return
    step = parsed[i]
    taken = {p.sid for p in parsed.values()}
    sid = next_step_id(step.sid, taken)
    if rng.random() < 0.5:
        body = step.body  # a redundant repeat of the step
    else:
        body = ("确认上一步已经完成" if _CJK.search(text)
                else "Confirm that the previous step is done")
    # after the last line of the step's sibling group (its subtree included)
    parent = step.parts[:-1]
    end = i
    for j in sorted(parsed):
        if j > i and parsed[j].parts[:len(parent)] == parent and len(parsed[j].parts) > len(
                parent):
            end = j
        elif j > i:
            break
    lines.insert(end + 1, _PlanLine(step.indent, sid, step.gap, body).render())


_APPLY: dict[str, Apply] = {
    "json_steps": _json_steps,
    "plan_text": _plan_text,
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
           "corrupt", "draw", "dumps_json", "edit_string", "kinds_of", "loads_json", "mutate_name",
           "next_step_id", "register_format", "rng_for"]
