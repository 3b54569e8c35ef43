"""UltraTool's raw samples with native tool calling (strategy ``tools`` on task ``raw``): the
agent plans, creates the tools its toolset lacks with ``create_tool`` and calls them
(graphs/ultratool/create_tools.py), scored as the text workflow ``plan_create_use`` is."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from helpers import run as offline_run

from tooleval_agents.evaluators.ultratool.plan_create_use import score_plan_create_use
from tooleval_agents.graphs.ultratool.create_tools import CREATE_TOOL, USE_CREATED_TOOL, Workshop
from tooleval_agents.tool_execution import run_tool_call
from tooleval_agents.ultratool.loaders import raw_path, read_raw_file
from tooleval_agents.ultratool.records import ToolSkeleton
from tooleval_agents.ultratool.skeletons import ToolCallError, validate_args
from tooleval_agents.ultratool.stubs import execute_plan, plan_items

PERFECT = {"plan_numbering_valid": 100.0, "plan_rouge_l": 100.0, "tool_set_f1": 100.0,
           "trajectory_strict": 100.0, "trajectory_unordered": 100.0}
"""What a perfect agent scores whatever the data: the gold plan, the gold tools in order."""
RATE = {"name": "exchange_rate", "description": "Exchange rate of a currency.",
        "arguments": {"type": "object", "properties": {"currency": {"type": "string"}},
                      "required": ["currency"]},
        "results": {"type": "object", "properties": {"rate": {"type": "number"}}}}


run = partial(offline_run, "ultratool", task="raw", strategy="tools")


def gold_calls_fit(data: Path, lang: str, only: Iterable[int]) -> dict[int, list[bool]]:
    """Per raw sample of ``only``, whether each gold call's arguments -- references resolved
    as the text workflow's stubs resolve them -- fit its tool's schema. A native tool checks
    the schema strictly, so the gold calls that do not fit (free text such as ``'obtained
    account ID'`` for an integer, ``'5000 yuan'`` for a number) fail there: the data's
    inconsistency."""
    out = {}
    samples = read_raw_file(raw_path(data, lang), lang)  # each sample read when asked
    for i in only:
        sample = samples[i]
        tools = {t.name: t for t in sample.tools}
        fits = []
        for c in execute_plan(plan_items(sample.plan), sample.tools).calls:
            try:  # the parsed arguments (a malformed extra such as '"event"=...' is dropped)
                validate_args(tools[c.tool], c.args)
            except (ToolCallError, KeyError):
                fits.append(False)
            else:
                fits.append(True)
        out[i] = fits
    return out


def native_calls_ran(summary: Any) -> dict[int, list[bool]]:
    return {r.index: [c["error"] is None for c in r.outputs["trace"] if "kind" not in c]
            for r in summary.results()}


def created_and_called(summary: Any) -> int:
    """Examples whose agent created a tool and then called it without error."""
    n = 0
    for r in summary.results():
        created = {t["name"] for t in r.outputs["prediction"]["created_tools"]}
        ran = [c for c in r.outputs["trace"] if "kind" not in c and c["tool"] in created]
        n += bool(ran) and all(c["error"] is None for c in ran)
    return n


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_reference_agent_plans_creates_and_uses_on_the_samples(samples: Path, tmp_path: Path,
                                                               lang: str) -> None:
    summary = run(samples, tmp_path, subset=lang, model="reference")
    assert {k: summary.metrics[k] for k in PERFECT} == PERFECT
    assert summary.metrics["resolved_references"] is None  # native calls pass values
    assert created_and_called(summary) > 0
    ran = native_calls_ran(summary)
    fits = gold_calls_fit(samples, lang, ran)
    assert ran == {i: fits[i] for i in ran}
    assert sum(all(v) for v in ran.values()) > 0 and summary.metrics["executable"] == \
        100.0 * sum(all(v) for v in ran.values()) / len(ran)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_reference_agent_scores_100_on_real_data(shared_data: Path, tmp_path: Path,
                                                 lang: str) -> None:
    summary = run(shared_data, tmp_path, subset=lang, model="reference", limit=150)
    assert summary.counts["ok"] == 150
    assert {k: summary.metrics[k] for k in PERFECT} == PERFECT
    assert created_and_called(summary) >= 100
    ran = native_calls_ran(summary)
    fits = gold_calls_fit(shared_data, lang, ran)
    assert ran == {i: fits[i] for i in ran}  # every failed call is a gold call that misfits


def test_a_users_create_agent_reaches_created_tools_through_the_dispatcher(
        samples: Path, tmp_path: Path) -> None:
    summary = run(samples, tmp_path, subset="en", model="reference",
                  agent="langchain.agents:create_agent")
    assert {k: summary.metrics[k] for k in PERFECT} == PERFECT
    assert native_calls_ran(summary) == native_calls_ran(
        run(samples, tmp_path / "built-in", subset="en", model="reference"))
    names = {c["name"] for r in summary.results() for c in r.outputs["trace"]
             if c.get("kind") == "tool_call"}
    assert USE_CREATED_TOOL in names and CREATE_TOOL in names


def test_noisy_agent_is_lower_and_the_same_at_any_concurrency(samples: Path,
                                                              tmp_path: Path) -> None:
    got = []
    for concurrency in (1, 16):
        summary = run(samples, tmp_path / str(concurrency), subset="en",
                      model="noisy-reference:0.5", max_concurrency=concurrency)
        got.append((summary.metrics, [(r.index, r.outputs["prediction"], r.outputs["trace"])
                                      for r in summary.results()]))
    assert got[0] == got[1]
    assert got[0][0]["trajectory_strict"] < 100.0


# ----------------------------------------------------------------------------- the tools

def call(workshop: Workshop, name: str, args: dict[str, Any], *, fixed: bool = False) -> Any:
    tools = {t.name: t for t in (workshop.fixed() if fixed else workshop.bound())}
    return asyncio.run(run_tool_call(tools.get(name), {"id": "1", "name": name, "args": args}))


def test_create_tool_checks_the_skeleton_and_the_agent_sees_why() -> None:
    workshop = Workshop(toolset=[])
    bad = call(workshop, CREATE_TOOL, {**RATE, "name": "rate!", "arguments": {"type": "array"}})
    assert bad.status == "error"
    assert "name must be an identifier" in bad.content and "arguments.type" in bad.content
    assert workshop.created == {}
    assert call(workshop, "exchange_rate", {"currency": "GBP"}).content \
        == "Error: there is no tool named 'exchange_rate'"


def test_a_created_tool_is_bound_then_callable_and_its_schema_enforced() -> None:
    workshop = Workshop(toolset=[])
    assert call(workshop, CREATE_TOOL, RATE).status == "success"
    assert "exchange_rate" in [t.name for t in workshop.bound()]
    answer = call(workshop, "exchange_rate", {"currency": "GBP"})
    assert answer.status == "success" and list(json.loads(answer.content)) == ["rate"]
    wrong = call(workshop, "exchange_rate", {"curency": "GBP"})
    assert wrong.status == "error" and "curency" in wrong.content
    again = call(workshop, CREATE_TOOL, RATE)
    assert again.status == "error" and "exists already" in again.content


def test_a_fixed_tool_list_calls_created_tools_through_use_created_tool() -> None:
    workshop = Workshop(toolset=[ToolSkeleton.model_validate({**RATE, "name": "weather"})])
    assert [t.name for t in workshop.fixed()] == ["weather", CREATE_TOOL, USE_CREATED_TOOL]
    missing = call(workshop, USE_CREATED_TOOL, {"name": "exchange_rate"}, fixed=True)
    assert missing.status == "error" and "no created tool named 'exchange_rate'" in missing.content
    call(workshop, CREATE_TOOL, RATE, fixed=True)
    ok = call(workshop, USE_CREATED_TOOL, {"name": "exchange_rate",
                                           "arguments": {"currency": "GBP"}}, fixed=True)
    assert ok.status == "success" and "rate" in json.loads(ok.content)
    bad = call(workshop, USE_CREATED_TOOL, {"name": "exchange_rate", "arguments": {}},
               fixed=True)
    assert bad.status == "error" and "currency" in bad.content


def test_agent_records_are_not_execution_records_for_the_scorer() -> None:
    ref = {"plan": [{"step": "1. Get the rate", "tool": "exchange_rate(currency='GBP')"}],
           "tools": [RATE]}
    trace = [{"step": "call 1", "tool": "exchange_rate", "args": {"currency": "GBP"},
              "result": {"rate": 1.2}},
             {"kind": "tool_call", "name": "exchange_rate", "args": {"currency": "GBP"}},
             {"kind": "agent", "turns": 2, "tool_calls": 1, "tool_errors": 0}]
    out = {"prediction": {"plan": "1. Get the rate", "created_tools": [],
                          "calls": [{"step": "call 1", "tool": "exchange_rate",
                                     "param": {"currency": "GBP"}}]}, "trace": trace}
    score = score_plan_create_use({"question": "q"}, out, ref)
    assert score.error is None
    assert score.scores["executable"] == score.scores["trajectory_strict"] == 100.0
    assert score.parts["agent_turns"].hits == 2
