"""Derive the four UltraTool test sets upstream *did* publish (``planning``,
``tool_usage_awareness``, ``tool_usage``, ``tool_creation``) from a file with the ``test.json``
schema, so that a newly built ``test.json`` (``tooleval build ultratool``) gets all six sets;
:mod:`tooleval_agents.ultratool.rebuild` makes the other two.

The rules, checked against the published English files (line i of each set = line i of
``test.json``):

* ``planning``: ``{input: question, reference: step texts joined by newlines}`` (1000/1000
  lines equal).
* ``tool_usage_awareness``: every step but the ``"null"`` parents is asked (``tool: ""``);
  the label is ``"1"`` for a call, ``"0"`` for a tool-free step (1000/1000 equal).
* ``tool_usage``: each call step shows its tool name and ``param: ""``; the reference holds the
  parsed arguments (:func:`~tooleval_agents.ultratool.calls.parse_call`), the toolset is the
  sample's skeletons. Upstream differs on 270 lines, by its own parser's defects (values cut at
  an apostrophe, ``book_flight`` / ``hotel_booking`` calls dropped), which are not copied.
* ``tool_creation``: the reduced toolset of ``tool_creation_awareness`` built with the same seed
  (the paper builds one for both creation dimensions), cut to its first 2 tools as upstream's
  records are; the first step calling each removed tool is asked, its reference is the removed
  skeleton.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from tooleval_agents.data.jsonio import (
    atomic_write_text,
    data_lines,
    dump_jsonl,
    first_error,
    parse_json,
)
from tooleval_agents.errors import DataFormatError
from tooleval_agents.ultratool.rebuild import build_tool_creation_awareness, meta_path
from tooleval_agents.ultratool.records import Lang, RawSample

DerivedTask = Literal["planning", "tool_usage_awareness", "tool_usage", "tool_creation"]
DERIVED: tuple[DerivedTask, ...] = ("planning", "tool_usage_awareness", "tool_usage",
                                    "tool_creation")
CREATION_TOOLSET_SIZE = 2
"""Every upstream ``tool_creation`` record has a toolset of 2."""


def read_raw_dicts(path: Path | str) -> list[tuple[dict[str, Any], RawSample]]:
    """Each line of a ``test.json``-schema file: the JSON object as written (skeleton key order
    kept) and its validated record.

    Raises:
        DataFormatError: a line is not JSON or not a raw sample.
    """
    path = Path(path)
    out = []
    for number, text in data_lines(path):
        try:
            obj = parse_json(text)
            out.append((obj, RawSample.model_validate(obj)))
        except json.JSONDecodeError as exc:
            raise DataFormatError(path, f"invalid JSON ({exc.msg})", line=number) from exc
        except ValidationError as exc:
            where, msg = first_error(exc)
            raise DataFormatError(path, msg, line=number, field=where) from exc
    return out


def _planning(obj: dict[str, Any], rec: RawSample) -> dict[str, Any]:
    return {"input": rec.question, "reference": "\n".join(s.step for s in rec.plan)}


def _usage_awareness(obj: dict[str, Any], rec: RawSample) -> dict[str, Any]:
    inputs: list[dict[str, str]] = []
    reference: list[dict[str, str]] = []
    for s in rec.plan:
        if s.kind == "parent":
            inputs.append({"step": s.step})
            continue
        inputs.append({"step": s.step, "tool": ""})
        reference.append({"step": s.step, "tool": "1" if s.kind == "tool_call" else "0"})
    return {"input": inputs, "reference": reference}


def _usage(obj: dict[str, Any], rec: RawSample) -> dict[str, Any]:
    inputs: list[dict[str, str]] = []
    reference: list[dict[str, Any]] = []
    for s in rec.plan:
        if s.call is None:
            inputs.append({"step": s.step})
            continue
        inputs.append({"step": s.step, "tool": s.call.name, "param": ""})
        reference.append({"step": s.step, "tool": s.call.name, "param": dict(s.call.args)})
    return {"question": rec.question, "input": inputs, "toolset": obj["tools"],
            "reference": reference}


def _creation(samples: Sequence[tuple[dict[str, Any], RawSample]], lang: Lang,
              seed: int) -> list[dict[str, Any]]:
    aware = build_tool_creation_awareness([obj for obj, _ in samples], lang, seed)
    out = []
    for (obj, rec), reduced in zip(samples, aware, strict=True):
        present = {t["name"] for t in reduced["toolset"]}
        own: dict[str, dict[str, Any]] = {}
        for tool in obj["tools"]:
            own.setdefault(tool["name"], tool)
        first: dict[str, int] = {}
        for i, s in enumerate(rec.plan):
            if s.call is not None and s.call.name not in present and s.call.name in own:
                first.setdefault(s.call.name, i)
        asked = {i: name for name, i in first.items()}
        out.append({
            "input": [{"step": s.step, "tool": ""} if i in asked else {"step": s.step}
                      for i, s in enumerate(rec.plan)],
            "toolset": reduced["toolset"][:CREATION_TOOLSET_SIZE],
            "reference": [{"step": rec.plan[i].step, "tool": own[asked[i]]}
                          for i in sorted(asked)],
        })
    return out


def derive(task: DerivedTask, samples: Sequence[tuple[dict[str, Any], RawSample]], lang: Lang,
           seed: int = 0) -> list[dict[str, Any]]:
    """The records of ``task``, one per raw sample, in the official shape."""
    if task == "tool_creation":
        return _creation(samples, lang, seed)
    make = {"planning": _planning, "tool_usage_awareness": _usage_awareness,
            "tool_usage": _usage}[task]
    return [make(obj, rec) for obj, rec in samples]


def write_derived(task: DerivedTask, raw: Path | str, lang: Lang, out: Path | str,
                  seed: int = 0) -> dict[str, Any]:
    """Derive ``task`` from ``raw``; write ``out`` (JSON Lines) and ``<out>.meta.json``
    atomically. Returns the metadata."""
    samples = read_raw_dicts(raw)
    records = derive(task, samples, lang, seed)
    text = dump_jsonl(records)
    meta: dict[str, Any] = {
        "benchmark": "ultratool", "task": task, "lang": lang, "source": "derived",
        "builder": __name__, "seed": seed if task == "tool_creation" else None,
        "raw": {"path": str(raw)},
        "counts": {"samples": len(records), **({} if task == "planning" else {
            "asked_steps": sum(len(r["reference"]) for r in records)})},
    }
    atomic_write_text(Path(out), text)
    atomic_write_text(meta_path(Path(out)), json.dumps(meta, ensure_ascii=False, indent=2) + "\n")
    return meta
