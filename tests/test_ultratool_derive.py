"""The four published UltraTool sets derived from ``test.json``
(:mod:`tooleval_agents.ultratool.derive`) against the published files, and the tool merge's
data helpers (:mod:`tooleval_agents.ultratool.tool_merge`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tooleval_agents.ultratool.derive import derive, read_raw_dicts
from tooleval_agents.ultratool.paths import raw_path, task_path
from tooleval_agents.ultratool.records import Lang
from tooleval_agents.ultratool.tool_merge import apply_merge, similar_groups, union_skeleton


def _published(data: Path, task: Any, lang: Lang) -> list[dict[str, Any]]:
    text = task_path(data, task, lang).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_derived_sets_equal_the_published_ones(shared_data: Path, lang: Lang) -> None:
    samples = read_raw_dicts(raw_path(shared_data, lang))
    for task in ("planning", "tool_usage_awareness"):
        assert derive(task, samples, lang) == _published(shared_data, task, lang)
    usage = derive("tool_usage", samples, lang)
    same = sum(a == b for a, b in zip(usage, _published(shared_data, "tool_usage", lang),
                                      strict=True))
    # The rest differ by upstream's parser (values cut at quotes, two tools dropped).
    assert same >= 700
    creation = derive("tool_creation", samples, lang, seed=0)
    assert all(len(r["toolset"]) == 2 for r in creation)
    for record in creation:
        present = {t["name"] for t in record["toolset"]}
        assert all(r["tool"]["name"] not in present for r in record["reference"])
    assert sum(len(r["reference"]) for r in creation) > 1000


def _tool(name: str, description: str, *args: str) -> dict[str, Any]:
    return {"name": name, "description": description,
            "arguments": {"type": "object", "properties": {
                a: {"type": "string", "description": a} for a in args}},
            "results": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}


def test_similar_tools_are_grouped_and_merged_with_every_argument() -> None:
    tools = {"send_email": _tool("send_email", "Send an email to a person", "to"),
             "send_emails": _tool("send_emails", "Send an email to a person", "to", "cc"),
             "get_weather": _tool("get_weather", "Weather forecast of a city", "city")}
    assert similar_groups(tools, 90.0) == [["send_email", "send_emails"]]
    merged = union_skeleton([tools["send_email"], tools["send_emails"]], "send_mail", "Mail")
    assert list(merged["arguments"]["properties"]) == ["to", "cc"]
    sample = {"question": "q", "domain": "d", "tools": [tools["send_email"]],
              "plan": [{"step": "1. Mail", "tool": "send_email(to='a@b.c')"}]}
    out = apply_merge(sample, {"send_email": "send_mail", "send_emails": "send_mail"},
                      {"send_mail": merged})
    assert out["plan"][0]["tool"] == "send_mail(to='a@b.c')"
    assert out["tools"] == [merged] and sample["tools"] == [tools["send_email"]]
