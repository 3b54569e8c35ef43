"""UltraTool's answer formats for ``noisy-reference``
(:mod:`tooleval_agents.models.corruptions`), declared by
:meth:`UltraToolBenchmark.answer_formats`:

* ``json_steps`` (answers of the tool dimensions, a JSON list of ``{step, tool[, param]}``):
  drop a step, add a step (a duplicate under a new step id, or an invented step), wrong tool
  (awareness labels ``"0"``/``"1"`` flipped; a tool name replaced by another name of the answer,
  else by a look-alike; a created skeleton renamed), a mutated argument value (character edits,
  truncation), a missing argument key (or a missing property of a created skeleton), broken
  JSON (cut off, a bracket missing, or Python literal quoting as GPT models often write it);
* ``plan_text`` (plans, ``1. ...`` / ``1.1 ...`` lines): drop a step, add a redundant step,
  swap two sibling steps, break the numbering.
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tooleval_agents.models.corruptions import (
    Apply,
    broken_json,
    dumps_json,
    edit_string,
    loads_json,
    mutate_name,
)

# ----------------------------------------------------------------------------- JSON steps

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
        return broken_json(text, rng)
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


FORMATS: dict[str, tuple[tuple[str, ...], Apply]] = {
    "json_steps": (("drop_step", "add_step", "wrong_tool", "mutate_value", "drop_argument",
                    "broken_json"), _json_steps),
    "plan_text": (("drop_step", "add_step", "reorder_steps", "break_numbering"), _plan_text),
}
"""UltraTool's answer formats: name -> (corruption kinds, apply)."""
