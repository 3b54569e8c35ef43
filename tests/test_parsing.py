"""Parsing model answers: every text gives a value or a typed failure, never an exception."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooleval_agents.evaluators.parsing import (
    ParsedList,
    ParseFailure,
    clean_plan_text,
    numbering_problems,
    parse_answer,
    parse_list,
    parse_list_official,
    parse_plan,
)

ITEMS = [{"step": "1.1 Get the file path", "tool": "0"},
         {"step": "1.2 Write the file", "tool": "1"}]


def ok(text: Any) -> ParsedList:
    result = parse_list(text)
    assert isinstance(result, ParsedList), result
    return result


def failed(text: Any) -> ParseFailure:
    result = parse_list(text)
    assert isinstance(result, ParseFailure), result
    return result


# --- well-formed answers in the shapes models use ---------------------------------------------

@pytest.mark.parametrize("text", [
    json.dumps(ITEMS),
    repr(ITEMS),  # Python literal: what most GPT answers are
    "```json\n" + json.dumps(ITEMS, indent=2) + "\n```",
    "```python\n" + repr(ITEMS) + "\n```",
])
def test_clean_answers_parse_without_structural_repair(text: str) -> None:
    result = ok(text)
    assert result.value == ITEMS
    assert set(result.repairs) <= {"python_literal"}
    assert not result.truncated


def test_prose_around_the_list_is_cut_and_recorded() -> None:
    result = ok("Sure! Here is the output:\n" + json.dumps(ITEMS) + "\nLet me know [if] needed.")
    assert result.value == ITEMS
    assert "surrounding_text" in result.repairs


def test_bracket_in_prose_before_the_list_is_skipped() -> None:
    assert ok("Steps [see below]: " + json.dumps(ITEMS)).value == ITEMS


def test_a_later_list_of_strings_is_not_taken_for_the_answer() -> None:
    # The outer list is broken beyond repair; its inner argument list must not be returned.
    text = "[{'step': '2. Plan', 'param': {'interests': ['Ginza', 'Nara']}, 'x': @@@}]"
    result = parse_list(text)
    assert not (isinstance(result, ParsedList) and result.value == ["Ginza", "Nara"])


# --- repairs happen outside string values only ------------------------------------------------

def test_json_names_are_fixed_outside_strings_only() -> None:
    text = "[{'step': '1.1 true story, null and None here', 'tool': true, 'x': null,},]"
    result = ok(text)
    assert result.value == [{"step": "1.1 true story, null and None here", "tool": True,
                             "x": None}]
    assert {"json_names", "trailing_comma"} <= set(result.repairs)


@pytest.mark.parametrize("value", ["config.json", "a，b", "None", "true", "line\nbreak"])
def test_values_are_never_rewritten(value: str) -> None:
    items = [{"step": "1.1 a", "param": {"v": value}}]
    assert ok(json.dumps(items, ensure_ascii=False)).value == items
    assert ok(repr(items)).value == items


def test_unescaped_apostrophe_in_a_python_string() -> None:
    text = ("[{'step': '1.1 Get tomorrow's meeting at 9 o'clock', 'tool': '0'}, "
            "{'step': '1.2 Book', 'tool': '1'}]")
    result = ok(text)
    assert result.value == [{"step": "1.1 Get tomorrow's meeting at 9 o'clock", "tool": "0"},
                            {"step": "1.2 Book", "tool": "1"}]
    assert "quote_repair" in result.repairs


@pytest.mark.parametrize("text", [
    '[{"step": "1.1 Get the file path", "tool": "0"}, {"step": "1.2 Write the file", '
    '"tool": "1"]',  # missing }
    '[{"step": "1.1 Get the file path", "tool": "0"}}, {"step": "1.2 Write the file", '
    '"tool": "1"}]',  # stray }
    '[{"step": "1.1 Get the file path", "tool": "0"} {"step": "1.2 Write the file", '
    '"tool": "1"}]',  # missing comma
    '[{"step": "1.1 Get the file path", "tool": "0"}， {"step": "1.2 Write the file", '
    '"tool": "1"}]',  # full-width comma between items
    '{"step": "1.1 Get the file path", "tool": "0"}\n{"step": "1.2 Write the file", '
    '"tool": "1"}',  # bare objects
])
def test_structural_repairs(text: str) -> None:
    result = ok(text)
    assert result.value == ITEMS
    assert set(result.repairs) - {"python_literal", "surrounding_text"}


def test_fullwidth_brackets_braces_and_colons_of_a_chinese_answer() -> None:
    # The list's own syntax in full-width forms; the same characters inside values are kept.
    text = ('答案：［｛"step"："1.1 查询“天气”［北京］"，"tool"："weather"｝，'
            '｛"step"："1.2 汇总"，"tool"："0"｝］')
    result = ok(text)
    assert result.value == [{"step": "1.1 查询“天气”［北京］", "tool": "weather"},
                            {"step": "1.2 汇总", "tool": "0"}]
    assert "fullwidth_punctuation" in result.repairs


def test_object_left_open_before_the_next_item() -> None:
    text = ("[{'step': '1.2 w', 'param': {'path': 'a.txt', 'content': 'x'}, "
            "{'step': '2.1 d', 'param': {'path': 'b.txt'}}]")
    assert ok(text).value == [{"step": "1.2 w", "param": {"path": "a.txt", "content": "x"}},
                              {"step": "2.1 d", "param": {"path": "b.txt"}}]


def test_unquoted_placeholders_become_strings() -> None:
    text = "[{'step': '4.1 Search', 'param': {'guests': <number of guests>, 'budget': 100}}]"
    result = ok(text)
    assert result.value == [{"step": "4.1 Search",
                             "param": {"guests": "<number of guests>", "budget": 100}}]
    assert "unquoted_placeholder" in result.repairs


# --- truncation -------------------------------------------------------------------------------

def test_truncated_list_keeps_complete_items() -> None:
    text = json.dumps(ITEMS)[:-12]
    result = ok(text)
    assert result.truncated
    assert result.value == ITEMS[:1]
    assert "truncated_item_dropped" in result.repairs


def test_unclosed_list_with_complete_items_loses_nothing() -> None:
    result = ok(json.dumps(ITEMS)[:-1])
    assert result.truncated and result.value == ITEMS
    assert "truncated_list_closed" in result.repairs


def test_truncated_before_the_first_item_is_complete() -> None:
    assert failed('[{"step": "1.1 Get the fi').kind == "truncated"


# --- failures ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "kind", "error_kind"), [
    ("", "empty_output", "not_following_instructions"),
    ("   \n", "empty_output", "not_following_instructions"),
    (None, "empty_output", "not_following_instructions"),
    ("I'm sorry, I cannot help with that.", "no_list_found", "not_following_instructions"),
    ("[step one: do it; step two: @@]", "invalid_json", "incorrect_json_format"),
    ('[{"step": "1.1 a" "tool": }]', "invalid_json", "incorrect_json_format"),
])
def test_failures_are_typed(text: Any, kind: str, error_kind: str) -> None:
    result = failed(text)
    assert result.kind == kind
    assert result.error_kind == error_kind


def test_an_already_parsed_list_is_accepted() -> None:
    assert ok(ITEMS).value == ITEMS


# --- the official post-processing (for reproducing the paper) ----------------------------------

def test_official_mode_keeps_the_official_defects() -> None:
    # A valid answer whose value contains "None": upstream turns it into '"None"' and the
    # answer no longer parses (one published GPT-4 answer fails this way).
    text = json.dumps([{"step": "1.1 Postscript: None", "tool": "0"},
                       {"step": "1.2 b", "tool": "1"}])
    assert isinstance(parse_list_official(text), ParseFailure)
    assert ok(text).value[0]["step"] == "1.1 Postscript: None"
    # Chinese commas and the word "json" are rewritten inside values.
    items = [{"step": "1.2 w", "param": {"file_path": "config.json", "content": "你好，世界"}}]
    official = parse_answer(json.dumps(items, ensure_ascii=False), mode="official",
                            family="param")
    assert isinstance(official, ParsedList)
    assert official.value[0]["param"] == {"file_path": "config.", "content": "你好,世界"}


def test_official_mode_salvages_the_previous_items_of_a_broken_last_one() -> None:
    text = '[{"step": "1.1 a", "tool": "0"}, {"step": "1.2 b", "tool": }]'
    result = parse_list_official(text)
    assert isinstance(result, ParsedList)
    assert result.value == [{"step": "1.1 a", "tool": "0"}]


# --- plans ------------------------------------------------------------------------------------

def test_plan_text_is_cut_like_the_official_code() -> None:
    answer = "Sure, here is the plan:\n1. Book\n1.1 Find a hotel\n\nHope this helps!"
    assert clean_plan_text(answer) == "1. Book\n1.1 Find a hotel"
    assert clean_plan_text("1. A\n\nNote: x") == "1. A\n\nNote: x"  # starts with 1.: untouched


def test_plan_steps_and_numbering() -> None:
    plan = parse_plan("1. Create file\n1.1 Get info\n1.2 Write\n2. Check\n2.1 Read")
    assert not isinstance(plan, ParseFailure)
    assert [s.label for s in plan.steps] == ["1.", "1.1", "1.2", "2.", "2.1"]
    assert plan.steps[1].number == (1, 1)
    assert plan.numbering_valid


@pytest.mark.parametrize(("numbers", "bad"), [
    ([(2,)], "2"),                   # does not start at 1
    ([(1,), (1, 2)], "1.2"),         # skips 1.1
    ([(1,), (1, 1), (1, 1)], "1.1"),  # repeats
    ([(1,), (1, 1, 1)], "1.1.1"),    # jumps two levels
    ([(1,), (3,)], "3"),
])
def test_numbering_problems(numbers: list[tuple[int, ...]], bad: str) -> None:
    problems = numbering_problems(numbers)
    assert len(problems) == 1 and problems[0].startswith(bad + " ")


def test_plan_without_numbered_steps_is_not_following_instructions() -> None:
    result = parse_plan("I'm sorry, but I cannot assist with that.")
    assert isinstance(result, ParseFailure)
    assert result.error_kind == "not_following_instructions"


# --- properties -------------------------------------------------------------------------------

_scalar = st.one_of(st.text(max_size=20), st.integers(-10**6, 10**6), st.booleans(),
                    st.none(), st.floats(allow_nan=False, allow_infinity=False))
_value = st.recursive(_scalar, lambda kids: st.lists(kids, max_size=3)
                      | st.dictionaries(st.text(max_size=8), kids, max_size=3), max_leaves=8)
_items = st.lists(st.dictionaries(st.sampled_from(["step", "tool", "param", "x"]), _value,
                                  min_size=1, max_size=4), min_size=1, max_size=5)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_parsers_never_raise_on_any_text(text: str) -> None:
    for result in (parse_list(text), parse_list_official(text),
                   parse_list_official(text, family="param"), parse_plan(text)):
        assert result.ok in (True, False)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="[]{}()'\",:\\ \nabc1tnul#<>，", max_size=60))
def test_parsers_never_raise_on_bracket_soup(text: str) -> None:
    assert parse_list(text).ok in (True, False)
    assert parse_list_official(text, family="param").ok in (True, False)


@settings(max_examples=200, deadline=None)
@given(_items, st.sampled_from(["json", "python", "fenced"]))
def test_any_list_of_objects_round_trips(items: list[dict[str, Any]], style: str) -> None:
    text = {"json": json.dumps(items, ensure_ascii=False), "python": repr(items),
            "fenced": f"Here you go:\n```json\n{json.dumps(items)}\n```\nDone."}[style]
    assert ok(text).value == items


@settings(max_examples=300, deadline=None)
@given(_items, st.sampled_from(["json", "python"]), st.data())
def test_truncated_answers_keep_a_prefix_of_their_items(
        items: list[dict[str, Any]], style: str, data: st.DataObject) -> None:
    text = json.dumps(items) if style == "json" else repr(items)
    cut = data.draw(st.integers(0, len(text) - 1))
    result = parse_list(text[:cut])
    if isinstance(result, ParsedList):
        k = len(result.value)
        assert result.value == items[:k]


def test_reasoning_blocks_are_not_the_answer() -> None:
    # A reasoning model drafts lists and plans inside <think>: only what follows is answered.
    text = '<think>First [{"step": "9.9 draft", "tool": "1"}]?</think>\n' + json.dumps(ITEMS)
    assert ok(text).value == ITEMS
    assert failed("<think>I was cut off while thinking [").kind == "empty_output"
    plan = clean_plan_text("<think>1. a draft</think>\n1. Book\n1.1 Pay")
    assert plan.strip() == "1. Book\n1.1 Pay"
