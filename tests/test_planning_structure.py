"""Offline planning metrics: numbering, step counts, ROUGE-L, and the official plan cut."""

from __future__ import annotations

from pathlib import Path

import pytest

from tooleval_agents.evaluators.parsing import ParsedPlan, parse_plan, plan_failure_kind
from tooleval_agents.evaluators.ultratool.planning_structure import (
    check_numbering,
    clean_plan,
    count_steps,
    create_plan_structure_evaluator,
    rouge_l,
    score_plan_structure,
)
from tooleval_agents.evaluators.ultratool.planning_structure import parse_plan as plan_lines
from tooleval_agents.ultratool.loaders import load_task
from tooleval_agents.ultratool.records import Lang

GOLD = ("1. Create file\n1.1 Get file creation information (File path: Desktop/Work_Tasks.txt)\n"
        "1.2 Use file writing tool to create and write content\n"
        "1.3 Confirm file creation and content writing success")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_gold_references_score_perfectly(shared_data: Path, lang: Lang) -> None:
    for record in load_task(shared_data, "planning", lang)[:200]:
        ref = record.reference
        s = score_plan_structure(ref, ref).scores
        assert s == {"plan_numbering_valid": 100.0, "plan_step_count_ratio": 100.0,
                     "plan_step_count_diff": 0.0, "plan_rouge_l": 100.0}, ref


@pytest.mark.parametrize("plan", [
    "1. a\n1.1 b\n1.1.1 c\n1.1.2 d\n1.2 e\n2. f\n2.1 g\n3. h",
    "1. a\n  1.1 b\n  1.2 c\n2. d",
    "1 a\n1.1. b\n1.2 c",
    "1.创建\n1.1创建文件\n1.2写入",
])
def test_valid_numbering(plan: str) -> None:
    assert check_numbering(plan).valid


@pytest.mark.parametrize(("plan", "problem"), [
    ("1. a\n1.2 b", "1.2 follows 1 (expected 1.1 or 2)"),
    ("2. a\n2.1 b", "2 follows the start (expected 1)"),
    ("1. a\n1.1.1 b", "1.1.1 follows 1 (expected 1.1 or 2)"),
    ("1. a\n1.1 b\n1.1 c", "1.1 follows 1.1 (expected 1.1.1 or 1.2)"),
    ("1. a\n3. b", "3 follows 1 (expected 1.1 or 2)"),
    ("1. a\nThen do b", "line 2 is not a numbered step"),
    ("I'm sorry, I cannot help.", "line 1 is not a numbered step"),
    ("", "no steps"),
])
def test_invalid_numbering(plan: str, problem: str) -> None:
    check = check_numbering(plan)
    assert not check.valid and check.problem == problem


def test_step_count_moves_with_missing_and_extra_steps() -> None:
    assert count_steps(GOLD) == 4
    fewer = "1. Create file\n1.1 Use file writing tool to create and write content"
    more = GOLD + "\n1.4 Tell the user\n1.5 Close the editor\n1.6 Log out\n1.7 Sleep"
    s_fewer = score_plan_structure(fewer, GOLD).scores
    s_more = score_plan_structure(more, GOLD).scores
    assert s_fewer["plan_step_count_ratio"] == 50.0 and s_fewer["plan_step_count_diff"] == 2.0
    assert s_more["plan_step_count_ratio"] == 50.0 and s_more["plan_step_count_diff"] == 4.0
    assert score_plan_structure("", GOLD).scores["plan_step_count_ratio"] == 0.0


def test_rouge_l_values() -> None:
    # LCS 2 of 3 predicted and 2 gold tokens: P = 2/3, R = 1, F1 = 0.8.
    assert rouge_l("1. open the file", "1. open file") == pytest.approx(80.0)
    assert rouge_l("1. read mail", "1. open file") == 0.0
    # Numbers and case do not count; only the step texts do.
    assert rouge_l("1. Open\n2. File", "1. open\n1.1 file") == 100.0
    # Chinese is compared character by character: 3 of 4 characters in order.
    assert rouge_l("1. 创建文件", "1. 创建新文件") == pytest.approx(100 * 2 * (1 * 0.8) / 1.8)
    partial = rouge_l("1. Create file\n1.1 Write content", GOLD)
    assert 0 < partial < 100


def test_clean_plan_cuts_like_the_official_pipeline() -> None:
    text = "Sure, here is the plan:\n1. a\n1.1 b\n\nLet me know if you need more."
    assert clean_plan(text) == "1. a\n1.1 b"
    assert clean_plan("<|im_start|>1. a\n\n2. b<|im_end|>") == "1. a\n\n2. b"
    assert clean_plan(None) == ""
    s = score_plan_structure(text, "1. a\n1.1 b").scores
    assert s["plan_numbering_valid"] == 100.0 and s["plan_rouge_l"] == 100.0


def test_langsmith_evaluator_form() -> None:
    evaluator = create_plan_structure_evaluator()
    feedback = evaluator({"input": "q"}, {"output": "1. Create file"}, {"reference": GOLD})
    keys = {f["key"]: f["score"] for f in feedback}
    assert keys["plan_numbering_valid"] == 100.0 and keys["plan_step_count_diff"] == 3.0
    assert keys["plan_step_count_ratio"] == 25.0
    bad = evaluator({}, {"plan": "1. a\n1.3 b"}, {"reference": GOLD})
    assert {f["key"]: f["score"] for f in bad}["plan_numbering_valid"] == 0.0


PLAN_NO_SPACE = "1.创建文件\n1.1写入内容\n2.保存"


def test_planning_structure_reads_steps_without_a_space() -> None:
    assert check_numbering(PLAN_NO_SPACE).valid and count_steps(PLAN_NO_SPACE) == 3


def test_parsing_parse_plan_agrees_on_steps_without_a_space() -> None:
    plan = parse_plan(PLAN_NO_SPACE)
    assert isinstance(plan, ParsedPlan)
    assert [(s.label, s.text) for s in plan.steps] == [("1.", "创建文件"), ("1.1", "写入内容"),
                                                        ("2.", "保存")]
    assert plan.numbering_valid and plan.unnumbered_lines == 0
    assert plan_failure_kind(PLAN_NO_SPACE) is None
    # Both readers agree line by line, on what is a step and what is not.
    for text in (PLAN_NO_SPACE, "1.1创建\n10个苹果\n2.5kg", "1. a\n1.1b\n2.c\n3 d"):
        steps = [(s.number, s.text) for s in plan_lines(text) if s.number is not None]
        parsed = parse_plan(text)
        assert steps == ([(s.number, s.text) for s in parsed.steps]
                         if isinstance(parsed, ParsedPlan) else []), text
