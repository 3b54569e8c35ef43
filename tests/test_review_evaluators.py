"""Regression tests for the evaluator review: unparsed AppBench pieces, scoring failures that keep
their denominators, first-match tool creation, the paper profile on raw answers, judge feedback
that agrees with the aggregates, and the smaller fixes (CLI, regex speed, wrapped calls)."""

from __future__ import annotations

import asyncio
import json
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from typer.testing import CliRunner

from evaluators.appbench.graph_metrics import aggregate_graph
from evaluators.appbench.parse import parse_answer
from evaluators.appbench.scoring import (
    MAIN_METRICS,
    create_appbench_evaluators,
    failure_score,
    score_appbench,
    score_example,
)
from evaluators.execution import gold_tools, tool_set_f1
from evaluators.metrics_common import f1
from evaluators.ultratool.judge.judge import (
    aggregate_planning,
    aggregate_tool_creation,
    create_planning_judge,
    create_tool_creation_judge,
    judge_plan,
    parse_judge_output,
    planning_example_score,
)
from evaluators.ultratool.judge.prompts import DIMENSIONS, JudgeTask
from evaluators.ultratool.judge.replay import ascore_planning, ascore_tool_creation
from evaluators.ultratool.plan_create_use import gold_tool_names
from evaluators.ultratool.planning_structure import check_numbering, count_steps
from graphs.appbench.planning import read_plan
from tooleval_agents import ScoringContext
from tooleval_agents.appbench.cli import read_predictions
from tooleval_agents.appbench.records import AppBenchOutput, AppBenchSample
from tooleval_agents.contracts import ExampleScore, Split
from tooleval_agents.errors import DataFormatError
from tooleval_agents.registry import get_benchmark
from tooleval_agents.ultratool.loaders import load_raw
from tooleval_agents.ultratool.records import PlanStep

WEATHER_LINE = "temperature = getweather(#city='Paris')"
WEATHER = {"used_app": ["Weather"], "used_api": [{"getweather": {"city": "Paris"}}],
           "result_arguments": [["temperature"]], "api_results": [WEATHER_LINE],
           "middle_arguments": ["temperature"], "user_aware_arguments": {"city": "Paris"}}
GOLD = f"Weather: [{WEATHER_LINE}]"


def _weather() -> AppBenchSample:
    return AppBenchSample(input="Weather in Paris?", output=AppBenchOutput(**WEATHER))


# --- 1. strict counts unparsed pieces and positional leftovers -----------------------------------

def test_unparsed_piece_is_a_wrong_predicted_call_under_strict() -> None:
    answer = GOLD + "\nHotels: [searchhouse #where_to='Paris']"
    r = score_example(_weather(), answer)
    assert r.scores["success"] == 0.0 and "1 unparsed call piece(s)" in r.comments["success"]
    for name in ("app", "api"):  # the brief's case: 1 hit over 2 predicted calls, not 1/1
        assert (r.parts[f"{name}_precision"].hits, r.parts[f"{name}_precision"].total) == (1, 2)
    assert r.scores["app_em"] == r.scores["api_em"] == 0.0  # apps {weather, hotels} != {weather}
    assert r.scores["node_f1"] == pytest.approx(200 * 1 / (2 + 1))
    assert r.scores["graph_em"] == 0.0
    assert r.labels["pred_calls"] == "1" and r.labels["unparsed"] == "1"
    report = score_appbench([_weather()], [answer])
    assert report.metrics["app_f1"] == pytest.approx(200 * 1 / 3)
    assert report.counts["pred_calls"] == 1 and report.counts["unparsed_lines"] == 1


def test_prose_brackets_are_not_calls_and_gold_still_succeeds() -> None:
    r = score_example(_weather(), GOLD + "\nLet me know if you need anything else: [nothing].")
    assert r.scores["success"] == 100.0 and r.parts["api_precision"].total == 1


def test_positional_leftover_is_an_argument_error_under_strict() -> None:
    r = score_example(_weather(), "Weather: [temperature = getweather('x', #city='Paris')]")
    assert r.scores["success"] == 0.0
    assert "argument text naming no key" in r.comments["success"]
    assert r.scores["api_f1"] == 100.0  # the call itself is right


# --- 2. scoring failures keep their denominators --------------------------------------------------

def test_malformed_sample_gives_a_failure_not_an_exception() -> None:
    broken = AppBenchSample.model_construct(
        input="q", output=AppBenchOutput.model_construct(**{**WEATHER,
                                                             "api_results": ["not a call"]}))
    r = score_example(broken, GOLD)
    assert r.error is not None and "could not score" in r.error
    assert r.scores["success"] == 0.0
    assert (r.parts["api_recall"].hits, r.parts["api_recall"].total) == (0, 1)
    assert r.parts["node_recall"].total == 1 and "edge_recall" not in r.parts


def test_benchmark_scorer_survives_a_malformed_reference() -> None:
    scorer = get_benchmark("appbench").scorer(Split("appbench", "plan", "ss"))
    bad_ref = {"api_results": [WEATHER_LINE, "x = f()"], "used_app": 3}
    r = scorer.score({"input": "q"}, {"prediction": GOLD}, bad_ref)
    assert r.error is not None and "not an AppBench output" in r.error
    assert r.parts["app_recall"].total == 2 and r.parts["gold_calls_reached"].total == 2
    good = scorer.score({"input": "q"}, {"prediction": GOLD}, WEATHER)
    agg = scorer.aggregate([good, r])
    # 1 hit; |pred| = 1 (the good row), |gold| = 1 + 2: the broken row stays in the recall.
    assert agg["api_f1"] == pytest.approx(200 * 1 / (1 + 3))
    assert agg["success"] == 50.0 and agg["gold_calls_reached"] == pytest.approx(100 / 3)
    assert scorer.score({}, {}, None).error is not None  # no reference at all: recorded too


def test_langsmith_row_reports_a_broken_reference_with_its_size() -> None:
    row, summary = create_appbench_evaluators()
    feedback = {f["key"]: f for f in row({"input": "q"}, {"output": GOLD},
                                         {"api_results": [WEATHER_LINE]})}
    assert feedback["scoring_error"]["score"] is None and feedback["success"]["score"] == 0
    totals = {f["key"]: f["score"] for f in summary(
        [{"input": "q"}] * 2, [{"output": GOLD}] * 2, [WEATHER, {"api_results": [WEATHER_LINE]}])}
    assert totals["app_f1"] == pytest.approx(200 * 1 / (1 + 2))


def test_all_error_corpus_reads_zero_and_edgeless_gold_reads_not_applicable() -> None:
    failures = [failure_score(0, "broken"), failure_score(3, "broken")]
    agg = aggregate_graph(failures)
    assert agg["node_f1"] == 0.0  # the gold calls stay in the recall: 0 of 3
    assert agg["edge_f1"] is None  # no edge expected, none predicted: n/a, not 0 or 100
    assert score_appbench([_weather()], ["garbage"]).metrics["edge_f1"] is None  # SS: no edges
    assert score_appbench([_weather()], [GOLD]).metrics["edge_f1"] is None


# --- 3. tool creation: the first duplicate step, text outputs parsed -----------------------------

class StepJudge(BaseChatModel):
    """Overall 9 for a reviewed text holding GOOD, 0 (rejected) for BROKEN, else 3; dims 5."""

    @property
    def _llm_type(self) -> str:
        return "step-judge"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        prompt = str(messages[-1].content)
        tail = prompt.rsplit("Plan to review", 1)[-1].rsplit("Created tool", 1)[-1]
        overall = 0 if "BROKEN" in tail else 9 if "GOOD" in tail else 3
        task: JudgeTask = "tool_creation" if "Created tool" in prompt else "planning"
        items = [{d.score_key("en"): 5} for d in DIMENSIONS[task]] + [{"Overall": overall}]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(json.dumps(items)))])


TOOL = {"name": "t", "description": "d", "arguments": {"type": "object", "properties": {}},
        "results": {"type": "object", "properties": {}}}
TOOL_REF = {"reference": [{"step": "1.1 make a", "tool": TOOL}]}


@pytest.mark.parametrize("prediction", [
    [{"step": "1.1 make a", "tool": {"name": "GOOD"}},
     {"step": "1.1 again", "tool": {"name": "x"}}],
    "[{'step': '1.1 make a', 'tool': {'name': 'GOOD'}}, {'step': '1.1', 'tool': {'name': 'x'}}]",
])
def test_runner_tool_creation_scorer_matches_the_langsmith_evaluator(prediction: Any) -> None:
    scorer = get_benchmark("ultratool").scorer(Split("ultratool", "tool_creation", "en"),
                                               context=ScoringContext(judge=StepJudge()))
    result = scorer.score({}, {"prediction": prediction}, TOOL_REF)
    assert result.scores["tool_creation"] == 90.0  # the first 1.1 item (GOOD), official rule
    row = create_tool_creation_judge(judge=StepJudge())({}, {"prediction": prediction}, TOOL_REF)
    assert {f["key"]: f["score"] for f in row}["tool_creation"] == 90.0


# --- 4. the paper profile scores the raw answer ---------------------------------------------------

@pytest.fixture
def weather_dir(tmp_path: Path) -> Path:
    test = tmp_path / "data" / "appbench" / "data" / "test"
    test.mkdir(parents=True)
    (test / "test_ss.json").write_text(json.dumps([{"input": "Weather in Paris?",
                                                    "output": WEATHER}]), encoding="utf-8")
    return tmp_path / "data"


def test_paper_profile_reads_the_raw_answer_in_cli_and_runner(weather_dir: Path,
                                                              tmp_path: Path) -> None:
    from tooleval_agents.cli import app

    raw = f"- **Weather**: [{WEATHER_LINE}]"
    preds = tmp_path / "pred.json"
    preds.write_text(json.dumps([raw]), encoding="utf-8")
    result = CliRunner().invoke(app, ["score", "appbench", "--category", "ss", "--predictions",
                                      str(preds), "--data-dir", str(weather_dir), "--scoring",
                                      "paper", "--json"])
    assert result.exit_code == 0, result.output
    cli = json.loads(result.stdout)["metrics"]
    outputs = {"raw_outputs": [raw], **read_plan(raw)}
    assert outputs["prediction"] == GOLD  # the canonical re-rendering drops the bullet
    scorer = get_benchmark("appbench").scorer(Split("appbench", "plan", "ss"),
                                              options={"scoring": "paper"})
    runner = scorer.aggregate([scorer.score({"input": "q"}, outputs, WEATHER)])
    assert {k: runner[k] for k in MAIN_METRICS} == {k: cli[k] for k in MAIN_METRICS}
    # Official reading (notes): the app is the text before ":", bullet and bold included.
    assert cli["app_f1"] == 0.0 and cli["success"] == 0.0 and cli["api_f1"] == 100.0
    strict = get_benchmark("appbench").scorer(Split("appbench", "plan", "ss"))
    assert strict.score({"input": "q"}, outputs, WEATHER).scores["success"] == 100.0


# --- 5. judge feedback agrees with the aggregates -------------------------------------------------

def test_planning_error_rows_count_zero_in_langsmith_means() -> None:
    evaluator = create_planning_judge(judge=StepJudge(), lang="en", max_retries=0)
    ref = {"reference": "1. a\n1.1 b"}
    rows = [evaluator({"input": "q"}, {"output": plan}, ref)
            for plan in ("1. GOOD a", "1. BROKEN a")]
    planning = [next(f["score"] for f in r if f["key"] == "planning") for r in rows]
    assert planning == [90.0, 0.0]
    error = next(f for f in rows[1] if f["key"] == "judge_error")
    assert error["score"] is None and "outside 1-10" in error["comment"]
    assert "outside 1-10" in next(f["comment"] for f in rows[1] if f["key"] == "planning")
    judged = [judge_plan(StepJudge(), question="q", reference=ref["reference"], prediction=p,
                         max_retries=0) for p in ("1. GOOD a", "1. BROKEN a")]
    aggregate = aggregate_planning([planning_example_score(j) for j in judged])
    assert sum(planning) / 2 == aggregate["planning"] == 45.0


def test_tool_creation_rows_carry_hits_and_steps_for_pooling() -> None:
    evaluator = create_tool_creation_judge(judge=StepJudge(), max_retries=0)
    refs = [{"reference": [{"step": "1.1 make a", "tool": TOOL},
                           {"step": "1.2 make b", "tool": TOOL}]},
            {"reference": [{"step": "2.1 make c", "tool": TOOL}]},
            {"reference": [{"step": "3.1 make d", "tool": TOOL}]}]
    outputs = [[{"step": "1.1", "tool": {"name": "GOOD"}}], [{"step": "2.1", "tool": {"a": 1}}],
               [{"step": "3.1", "tool": {"name": "BROKEN"}}]]
    rows = [{f["key"]: f for f in evaluator({}, o, r)} for o, r in zip(outputs, refs, strict=True)]
    hits = sum(r["tool_creation_hits"]["score"] for r in rows)
    steps = sum(r["tool_creation_steps"]["score"] for r in rows)
    # Steps: 0.9 (GOOD) + 0 (no tool for 1.2) + 0.3 + 0 (judge error), over 4 gold steps.
    assert steps == 4 and 100 * hits / steps == pytest.approx(100 * 1.2 / 4)
    assert rows[2]["judge_error"]["score"] is None and rows[2]["tool_creation"]["score"] == 0.0
    from evaluators.ultratool.judge.judge import (
        _example_tools,
        _judge_item,
        _runnable,
        tool_creation_example_score,
    )

    runnable, structured = _runnable(StepJudge(), "tool_creation", True)
    examples = [tool_creation_example_score([_judge_item(StepJudge(), runnable, i, 0) for i in
                                             _example_tools({}, o, r, None, structured)])
                for o, r in zip(outputs, refs, strict=True)]
    assert aggregate_tool_creation(examples)["tool_creation"] == pytest.approx(100 * hits / steps)


# --- 6. CLI: an object without ``output`` is a format error ---------------------------------------

def test_prediction_object_without_output_is_rejected(weather_dir: Path, tmp_path: Path) -> None:
    from tooleval_agents.cli import app

    path = tmp_path / "pred.jsonl"
    path.write_text("\n" + json.dumps({"index": 0, "answer": GOLD}) + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match="no 'output' key") as info:
        read_predictions(path, 1)
    assert info.value.line == 2
    as_array = tmp_path / "pred.json"
    as_array.write_text(json.dumps([{"answer": GOLD}]), encoding="utf-8")
    with pytest.raises(DataFormatError, match="item 0 has no 'output' key"):
        read_predictions(as_array, 1)
    assert read_predictions(_write(tmp_path, [{"index": 0, "output": None}]), 1) == ([None], 0)
    result = CliRunner().invoke(app, ["score", "appbench", "--category", "ss", "--predictions",
                                      str(path), "--data-dir", str(weather_dir), "--scoring",
                                      "paper", "--drop-errors", "--json"])
    assert result.exit_code == 1 and "output" in result.output


def _write(tmp_path: Path, items: list[Any]) -> Path:
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


# --- 7. and 8. AppBench parsing: linear time, wrapped calls ---------------------------------------

@pytest.mark.parametrize(("text", "unparsed"), [
    ("https://example.com/" + "a" * 30000, 0),
    ("x-" + "a" * 30000 + "-(#", 0),
    ("a" * 30000 + "(#x=", 1),
    ("f(#x=" + "a." * 15000, 1),
])
def test_long_lines_parse_in_linear_time(text: str, unparsed: int) -> None:
    start = time.perf_counter()
    parsed = parse_answer(text)
    assert time.perf_counter() - start < 0.5
    assert len(parsed.unparsed) == unparsed and parsed.calls == []


def test_wrapped_and_comma_separated_calls_are_all_kept() -> None:
    wrapped = parse_answer("Plan: [Restaurants: [name = findrestaurants(#location='SF')]]")
    assert [(c.app, c.api) for c in wrapped.calls] == [("Restaurants", "findrestaurants")]
    assert wrapped.unparsed == []
    assert wrapped.calls[0].raw == "Restaurants: [name = findrestaurants(#location='SF')]"
    listed = parse_answer("[Restaurants: [name = findrestaurants(#location='SF')], "
                          "Restaurants: [reserverestaurant(#restaurant_name=name)]]")
    assert [c.api for c in listed.calls] == ["findrestaurants", "reserverestaurant"]
    assert listed.unparsed == []
    assert score_example(_weather(), f"Plan: [{GOLD}]").scores["success"] == 100.0


# --- 10. literal_eval warnings do not leak --------------------------------------------------------

def test_judge_parser_does_not_warn_on_odd_literals() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        judgment = parse_judge_output(r"{'Accuracy Score': '\d'}", "planning", lang="en")
    assert judgment.error is not None
    assert [str(w.message) for w in caught] == []


# --- 11. planning step lines without a space ------------------------------------------------------

PLAN_NO_SPACE = "1.创建文件\n1.1写入内容\n2.保存"


def test_planning_structure_reads_steps_without_a_space() -> None:
    assert check_numbering(PLAN_NO_SPACE).valid and count_steps(PLAN_NO_SPACE) == 3


@pytest.mark.xfail(strict=True, reason="evaluators.parsing._STEP_LINE needs whitespace after "
                   "the number (change reported to the lead); remove this mark once it agrees")
def test_parsing_parse_plan_agrees_on_steps_without_a_space() -> None:
    from evaluators.parsing import ParsedPlan, parse_plan

    plan = parse_plan(PLAN_NO_SPACE)
    assert isinstance(plan, ParsedPlan) and [s.number for s in plan.steps] == [(1,), (1, 1), (2,)]


# --- 12. one rule for gold tool names -------------------------------------------------------------

def test_gold_tool_names_are_execution_gold_tools(shared_data: Path) -> None:
    for lang in ("en", "zh"):
        for sample in load_raw(shared_data, lang):
            reference = {"plan": [s.official() for s in sample.plan]}
            assert gold_tool_names(reference) == gold_tools(sample)
    odd = [{"step": "1. a", "tool": "null"}, {"step": "1.1 b", "tool": "convert(<rate"}]
    assert gold_tool_names({"plan": odd}) == gold_tools([PlanStep(**s) for s in odd]) == {
        "convert"}


# --- 13. one F1 -----------------------------------------------------------------------------------

def test_f1_helper() -> None:
    assert f1(1, 2, 1) == pytest.approx(200 / 3)  # P 1/2, R 1/1 -> 2/3
    assert f1(0, 0, 0) == 0.0 and f1(0, 0, 0, empty=100.0) == 100.0
    assert tool_set_f1([], []) == 100.0 and tool_set_f1(["a"], ["a", "b"]) == pytest.approx(
        200 / 3)


# --- 14. the async replay entry points ------------------------------------------------------------

def test_ascore_planning_and_tool_creation() -> None:
    records = [{"input": f"task {i}", "reference": "1. a\n1.1 b"} for i in range(3)]
    plans = asyncio.run(ascore_planning(records, ["1. GOOD a", "1. so-so", None],
                                        judge=StepJudge(), lang="en", max_concurrency=2))
    assert plans.metrics["planning"] == pytest.approx((90 + 30 + 0) / 3)
    assert plans.missing_predictions == 1 and len(plans.judgments) == 3
    tool_records = [{"reference": [{"step": "1.1 make a", "tool": TOOL},
                                   {"step": "1.2 make b", "tool": TOOL}]}]
    tools = asyncio.run(ascore_tool_creation(
        tool_records, [[{"step": "1.1", "tool": {"name": "GOOD"}}]], judge=StepJudge(),
        lang="en"))
    assert tools.metrics["tool_creation"] == pytest.approx(90 / 2)
    assert isinstance(tools.examples[0], ExampleScore)
