"""Tool merge, the last step of UltraTool's annotation (paper §2.3): tools are created per
query, so a built file holds near duplicates; each group of similar tools becomes one tool
whose ``arguments`` and ``results`` are the union of the group's properties (first definition
of a property wins), under a name and description the model writes.

The data work is here, the model call in :mod:`tooleval_agents.graphs.ultratool.build`:

* tools that share a name but not a skeleton are merged under that name (no model call);
* :func:`similar_groups` joins distinct names whose look-alike score
  (:func:`~tooleval_agents.ultratool.rebuild.tool_similarity`) reaches the threshold;
* :func:`apply_merge` renames the calls and swaps the skeletons; a sample that would no longer
  run clean on the simulated tools keeps its own tools (the caller checks and reports it).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from typing import Any

from tooleval_agents.ultratool.rebuild import tool_similarity

MERGE_SIMILARITY = 90.0
"""Default look-alike score (0-100, name words + description) from which tools are merged."""


def union_skeleton(tools: Sequence[dict[str, Any]], name: str,
                   description: str) -> dict[str, Any]:
    """One skeleton with every argument and result property of ``tools`` (the first definition
    of a property name wins).

    >>> a = {"arguments": {"properties": {"x": {"type": "string"}}}, "results": {}}
    >>> b = {"arguments": {"properties": {"y": {"type": "integer"}}}, "results": {}}
    >>> sorted(union_skeleton([a, b], "f", "d")["arguments"]["properties"])
    ['x', 'y']
    """
    merged: dict[str, Any] = {"name": name, "description": description}
    for part in ("arguments", "results"):
        props: dict[str, Any] = {}
        for tool in tools:
            for key, prop in (tool.get(part) or {}).get("properties", {}).items():
                props.setdefault(key, copy.deepcopy(prop))
        merged[part] = {"type": "object", "properties": props}
    return merged


def tools_by_name(samples: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Every distinct skeleton of each tool name, in order of first appearance."""
    out: dict[str, list[dict[str, Any]]] = {}
    for sample in samples:
        for tool in sample["tools"]:
            versions = out.setdefault(tool["name"], [])
            if tool not in versions:
                versions.append(tool)
    return out


def similar_groups(tools: dict[str, dict[str, Any]], threshold: float) -> list[list[str]]:
    """Groups (of 2 or more names) of tools linked by look-alike scores >= ``threshold``,
    transitively, in order of first appearance."""
    names = list(tools)
    parent = {n: n for n in names}

    def root(n: str) -> str:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if tool_similarity(tools[a], tools[b]) >= threshold:
                parent[root(b)] = root(a)
    groups: dict[str, list[str]] = {}
    for n in names:
        groups.setdefault(root(n), []).append(n)
    return [g for g in groups.values() if len(g) > 1]


def _rename(call: str, mapping: dict[str, str]) -> str:
    m = re.match(r"\s*([^\W\d]\w*)\s*\(", call)
    if m is None or m.group(1) not in mapping:
        return call
    return mapping[m.group(1)] + call[m.end(1):]


def apply_merge(sample: dict[str, Any], mapping: dict[str, str],
                skeletons: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``sample`` with calls renamed by ``mapping`` (old name -> merged name) and its tools
    replaced by ``skeletons`` (merged name -> skeleton), each listed once."""
    out = copy.deepcopy(sample)
    out["plan"] = [{**s, "tool": _rename(s["tool"], mapping)} for s in out["plan"]]
    tools: list[dict[str, Any]] = []
    for tool in out["tools"]:
        name = mapping.get(tool["name"], tool["name"])
        new = skeletons.get(name, tool)
        if all(t["name"] != name for t in tools):
            tools.append(new)
    out["tools"] = tools
    return out
