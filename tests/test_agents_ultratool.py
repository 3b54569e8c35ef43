"""UltraTool tool usage and tool selection as native tool calls (strategy ``tools``), and the
trajectory evaluators users can put in their own ``langsmith.evaluate``."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from helpers import run as offline_run
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from tooleval_agents.evaluators.trajectory import (
    MATCH_MODES,
    create_trajectory_match_evaluator,
    score_tool_use,
    tool_calls_of,
    trajectory_match,
)

TASKS = ("tool_usage", "tool_selection")
HEADLINE = {"tool_usage": "tool_usage", "tool_selection": "tool_selection_local"}


run = partial(offline_run, "ultratool", strategy="tools")


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("task", TASKS)
def test_reference_agent_scores_100_on_the_samples(samples: Path, tmp_path: Path, task: str,
                                                   lang: str) -> None:
    summary = run(samples, tmp_path, task=task, subset=lang, model="reference")
    m = summary.metrics
    assert m[HEADLINE[task]] == m["trajectory_strict"] == 100.0, m
    assert m["tool_calls"] is not None and m["tool_calls"] > 0
    [first, *_] = summary.results()
    calls = [r for r in first.outputs["trace"] if r["kind"] == "tool_call"]
    assert calls and all(c["output"] is not None for c in calls)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("task", TASKS)
def test_reference_agent_scores_100_on_real_data(shared_data: Path, tmp_path: Path, task: str,
                                                 lang: str) -> None:
    summary = run(shared_data, tmp_path, task=task, subset=lang, model="reference", limit=250)
    assert summary.metrics[HEADLINE[task]] == summary.metrics["trajectory_strict"] == 100.0
    assert summary.counts["ok"] == 250


@pytest.mark.parametrize("task", TASKS)
def test_noisy_agent_is_lower_and_the_same_at_any_concurrency(samples: Path, tmp_path: Path,
                                                              task: str) -> None:
    got = []
    for concurrency in (1, 16):
        summary = run(samples, tmp_path / str(concurrency), task=task, subset="en",
                      model="noisy-reference:0.6", max_concurrency=concurrency)
        got.append((summary.metrics, [(r.index, r.outputs["prediction"])
                                      for r in summary.results()]))
    assert got[0] == got[1]
    assert got[0][0]["trajectory_strict"] < 100.0


def test_a_users_create_agent_plays_tool_usage(samples: Path, tmp_path: Path) -> None:
    summary = run(samples, tmp_path, task="tool_usage", subset="en", model="reference",
                  agent="langchain.agents:create_agent")
    assert summary.metrics["tool_usage"] == 100.0


# ----------------------------------------------------------------------------- evaluators

def test_trajectory_evaluator_reads_langchain_and_openai_messages() -> None:
    messages = [HumanMessage("weather in Paris and Oslo"),
                AIMessage("", tool_calls=[{"name": "getweather", "args": {"city": "Paris"},
                                           "id": "1"},
                                          {"name": "getweather", "args": {"city": "Oslo"},
                                           "id": "2"}]),
                ToolMessage("{}", tool_call_id="1"), ToolMessage("{}", tool_call_id="2"),
                AIMessage("sunny")]
    openai = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "a", "type": "function",
         "function": {"name": "getweather", "arguments": '{"city": "oslo"}'}},
        {"id": "b", "type": "function",
         "function": {"name": "getweather", "arguments": '{"city": "PARIS"}'}}]}]
    assert tool_calls_of({"messages": messages}) == [
        {"name": "getweather", "args": {"city": "Paris"}},
        {"name": "getweather", "args": {"city": "Oslo"}}]
    results = {mode: create_trajectory_match_evaluator(mode=mode)(
        outputs={"messages": messages}, reference_outputs=openai) for mode in MATCH_MODES}
    assert {m: r["score"] for m, r in results.items()} == {
        "strict": False, "unordered": True, "subset": True, "superset": True}
    assert results["strict"]["key"] == "trajectory_strict_match"
    exact = create_trajectory_match_evaluator(mode="unordered", args="exact")
    assert exact(outputs=messages, reference_outputs=openai)["score"] is False
    names = create_trajectory_match_evaluator(mode="strict", args="ignore")
    assert names(outputs=messages, reference_outputs=openai)["score"] is True
    with pytest.raises(ValueError, match="mode must be one of"):
        create_trajectory_match_evaluator(mode="fuzzy")  # type: ignore[arg-type]


def test_trajectory_match_counts_repeated_calls() -> None:
    a = {"name": "a", "args": {}}
    assert not trajectory_match([a], [a, a], mode="unordered")
    assert trajectory_match([a, a], [a], mode="superset")
    assert not trajectory_match([a, a], [a], mode="subset")
    assert trajectory_match([], [], mode="strict")


def test_tool_use_parts_are_na_without_an_agent() -> None:
    assert score_tool_use([{"kind": "round", "errors": 1}]).parts == {}
    parts = score_tool_use([{"kind": "agent", "turns": 2, "tool_calls": 0,
                             "tool_errors": 0}]).parts
    assert parts["tool_errors"].total == 0 and parts["tool_calls"].total == 1
