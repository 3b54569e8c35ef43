"""Execution metrics: pure functions, per-example scores and pooling."""

from __future__ import annotations

from pathlib import Path

import pytest

from tooleval_agents.appbench.catalog import load_catalog
from tooleval_agents.appbench.lines import parse_call_line
from tooleval_agents.appbench.loaders import load_category
from tooleval_agents.appbench.names import CATEGORIES
from tooleval_agents.appbench.stubs import AppExecutor
from tooleval_agents.contracts import ExampleScore, Part
from tooleval_agents.evaluators.appbench.execution import (
    aggregate_appbench_execution,
    executed_success,
    score_appbench_execution,
)
from tooleval_agents.evaluators.metrics_common import f1
from tooleval_agents.evaluators.ultratool.execution import (
    aggregate_ultratool_execution,
    call_validity,
    gold_tools,
    reference_resolution,
    score_ultratool_execution,
    score_ultratool_trace,
    tool_set_f1,
)
from tooleval_agents.ultratool.calls import parse_call
from tooleval_agents.ultratool.loaders import load_raw
from tooleval_agents.ultratool.records import Lang, RawSample, ToolCall
from tooleval_agents.ultratool.stubs import execute_plan, plan_items

SAMPLE = RawSample.model_validate({
    "question": "Convert 5000 GBP to CNY.", "domain": "Finance",
    "tools": [
        {"name": "rate", "description": "Exchange rate.",
         "arguments": {"properties": {"currency": {"type": "string"}}},
         "results": {"properties": {"exchange_rate": {"type": "number"}}}},
        {"name": "convert", "description": "Convert.",
         "arguments": {"properties": {"amount": {"type": "integer"},
                                      "rate": {"type": "number"}}},
         "results": {"properties": {"converted": {"type": "number"}}}},
    ],
    "plan": [
        {"step": "1. Get the exchange rate", "tool": "rate(currency='GBP')"},
        {"step": "2. Convert", "tool": "convert(amount='5000', rate=<exchange rate>)"},
    ],
})


def call(text: str) -> ToolCall:
    parsed = parse_call(text)
    assert parsed is not None
    return parsed


def test_tool_set_f1() -> None:
    assert tool_set_f1(["a", "b"], ["a", "b"]) == 100.0
    assert tool_set_f1(["a"], ["a", "b"]) == pytest.approx(200 / 3)
    assert tool_set_f1([], ["a"]) == 0.0
    assert tool_set_f1([], []) == 100.0


def test_ultratool_gold_plan_scores_full() -> None:
    result = score_ultratool_execution(SAMPLE, plan_items(SAMPLE.plan))
    assert result.scores == {"tool_set_f1": 100.0, "executable": 100.0}
    assert result.parts["valid_calls"] == Part(hits=2, total=2)
    assert result.parts["resolved_references"] == Part(hits=1, total=1)
    assert result.parts["named_references"] == Part(hits=1, total=1)
    assert gold_tools(SAMPLE) == {"rate", "convert"}


def test_ultratool_broken_plan() -> None:
    plan = [("1 Convert", call("convert(amount='5000', rate=<exchange rate>)")),
            ("2 Convert", call("convert(sum='5000')")),
            ("3 Convert", call("convert(amount='all of it')"))]
    trace = execute_plan(plan, SAMPLE.tools)
    assert call_validity(trace) == Part(hits=2, total=3)
    assert call_validity(trace, strict=True) == Part(hits=1, total=3)
    assert reference_resolution(trace) == Part(hits=0, total=1)
    result = score_ultratool_trace(trace, gold_tools(SAMPLE))
    assert result.scores["executable"] == 0.0
    assert result.scores["tool_set_f1"] == pytest.approx(200 / 3)
    assert "unknown argument 'sum'" in result.comments["executable"]
    assert "unresolved <exchange rate>" in result.comments["executable"]


def test_ultratool_aggregate_pools_calls() -> None:
    good = score_ultratool_execution(SAMPLE, plan_items(SAMPLE.plan))
    bad = score_ultratool_trace(execute_plan([("1", call("convert(sum='1')"))], SAMPLE.tools),
                                gold_tools(SAMPLE))
    empty = score_ultratool_trace(execute_plan([], SAMPLE.tools), gold_tools(SAMPLE))
    agg = aggregate_ultratool_execution([good, bad, empty])
    assert agg["valid_calls"] == pytest.approx(100 * 2 / 3)  # 2 of 3 calls, pooled
    assert agg["resolved_references"] == 100.0
    assert agg["executable"] == pytest.approx(100 * 2 / 3)  # an empty plan runs (vacuously)...
    assert agg["tool_set_f1"] == pytest.approx((100 + 200 / 3 + 0) / 3)  # ...but calls nothing


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ultratool_gold_corpus_scores_full(shared_data: Path, lang: Lang) -> None:
    samples = load_raw(shared_data, lang)[:200]
    agg = aggregate_ultratool_execution(
        [score_ultratool_execution(s, plan_items(s.plan)) for s in samples])
    for key in ("valid_calls", "resolved_references", "tool_set_f1", "executable"):
        assert agg[key] == 100.0, key
    assert agg["named_references"] >= 90.0


def test_appbench_gold_scores_full(shared_data: Path) -> None:
    scores = [score_appbench_execution(s, s.calls)
              for c in CATEGORIES for s in load_category(shared_data, c)]
    assert len(scores) == 801
    agg = aggregate_appbench_execution(scores)
    assert agg == {"executed_success": 100.0, "gold_calls_reached": 100.0, "calls_ok": 100.0}
    assert all(s.labels["error_kinds"] == "" for s in scores)


def test_appbench_broken_plan(shared_data: Path) -> None:
    sample = load_category(shared_data, "mm")[0]
    gold = sample.calls
    bad = parse_call_line("Weather: [r = getweather(#town='San Francisco')]")
    trace = AppExecutor(load_catalog(), sample).execute([bad, *gold[:2]])
    assert not executed_success(trace)
    result = score_appbench_execution(sample, [bad, *gold[:2]])
    assert result.scores == {"executed_success": 0.0}
    assert result.parts["gold_calls_reached"] == Part(hits=2, total=3)
    assert result.parts["calls_ok"] == Part(hits=2, total=3)
    assert result.labels["error_kinds"] == "missing_required,unknown_argument"  # city, town
    assert "1 gold call(s) not reached" in result.comments["executed_success"]
    ok = score_appbench_execution(sample, gold)
    agg = aggregate_appbench_execution([ok, result])
    assert agg == {"executed_success": 50.0, "gold_calls_reached": 100 * 5 / 6,
                   "calls_ok": 100 * 5 / 6}


def test_appbench_no_calls_is_no_success(shared_data: Path) -> None:
    sample = load_category(shared_data, "ss")[0]
    result = score_appbench_execution(sample, [])
    assert result.scores["executed_success"] == 0.0
    assert result.parts["calls_ok"] == Part(hits=0, total=0)
    assert isinstance(result, ExampleScore)


def test_f1_helper() -> None:
    assert f1(1, 2, 1) == pytest.approx(200 / 3)  # P 1/2, R 1/1 -> 2/3
    assert f1(0, 0, 0) == 0.0 and f1(0, 0, 0, empty=100.0) == 100.0
    assert tool_set_f1([], []) == 100.0 and tool_set_f1(["a"], ["a", "b"]) == pytest.approx(
        200 / 3)
