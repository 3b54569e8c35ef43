"""Issue 22, item 4: the exact inputs that made parsers quadratic or raise, and the rewrites
checked against the patterns they replace (same results on every short text, where the old
pattern is fast enough to be the reference).

The wider sweep (every parser, adversarial families, random compositions) is
``tests/test_parser_fuzz.py``.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from growth import assert_linear
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tooleval_agents.appbench.build_models import read_block
from tooleval_agents.appbench.lines import _NEXT_CALL, parse_call_line, split_calls
from tooleval_agents.appbench.records import AppBenchSample
from tooleval_agents.data import jsonio
from tooleval_agents.data.jsonio import load_json, parse_json, read_array
from tooleval_agents.errors import DataFormatError
from tooleval_agents.evaluators.appbench.parse import parse_answer
from tooleval_agents.evaluators.appbench.parse import parse_answer as parse_appbench_answer
from tooleval_agents.evaluators.list_lexer import build, load_literal
from tooleval_agents.evaluators.literals import cannot_be_literal, literal_eval_fast
from tooleval_agents.evaluators.parsing import (
    _STEP_LINE,
    ParsedPlan,
    ParseFailure,
    numbering_problems,
    parse_list,
    parse_list_official,
    parse_plan,
    step_number,
)
from tooleval_agents.evaluators.trajectory import INVALID_ARGS, tool_calls_of
from tooleval_agents.evaluators.ultratool.judge.reading import fenced_block
from tooleval_agents.evaluators.ultratool.planning_structure import check_numbering
from tooleval_agents.graphs.appbench.build_prompts import read_instruction, read_scores
from tooleval_agents.graphs.appbench.planning import read_plan
from tooleval_agents.graphs.ultratool.build import StageFailure, parse_object
from tooleval_agents.ultratool.stubs import _step_text, step_annotations

BLANK_RUN_100K = "x: " + " " * 100_000 + "!"
NESTED_3000 = '{"a": ' + "[" * 3000 + "]" * 3000 + "}"
DIGITS_5000 = '{"fluency": ' + "1" * 5000 + ', "diversity": 5, "consistency": 5}'
_SETTINGS = settings(max_examples=500, derandomize=True, database=None, deadline=None,
                     suppress_health_check=list(HealthCheck))


# --- the inputs --------------------------------------------------------------------------

@pytest.mark.parametrize("parse", [parse_appbench_answer, read_plan, read_scores, parse_list,
                                   lambda t: parse_list_official(t, family="param")],
                         ids=["appbench parse_answer", "read_plan", "read_scores", "parse_list",
                              "parse_list_official param"])
def test_a_long_blank_run_is_read_in_linear_time(parse: Any) -> None:
    # Was 0.5 s at 8k characters and over 5 s at 100k (parse_answer, read_plan).
    assert_linear(parse, lambda n: "x: " + " " * n + "!")
    # The same run inside a call line and a plan line (other patterns of the same shape).
    assert_linear(parse, lambda n: "x(" + " " * n + "!")
    assert_linear(parse, lambda n: "1. a" + " " * n + "b")


def test_a_blank_run_keeps_the_results() -> None:
    assert parse_appbench_answer(BLANK_RUN_100K).calls == []
    assert read_plan(BLANK_RUN_100K)["parse_error"] == "no call line in the answer"
    plan = parse_plan("1. Find a hotel" + " " * 100_000 + "\n1.1 Book it  ")
    assert isinstance(plan, ParsedPlan)
    assert [(s.label, s.text) for s in plan.steps] == [("1.", "Find a hotel"), ("1.1", "Book it")]


def test_repeated_instruction_tags_are_read_in_linear_time() -> None:
    text = "<instruction>" * 8000  # was 10 s: each opening tag searched to the end again
    assert_linear(read_instruction, lambda n: "<instruction>" * (n // 13))
    assert read_instruction(text) == " ".join(text.split())
    assert read_instruction("<instruction>" * 8000 + "<instruction> Book it </instruction>") \
        == "<instruction>" * 8000 + " Book it"  # from the first opening tag to the closing one


def test_open_braces_are_read_in_linear_time() -> None:
    assert_linear(read_scores, lambda n: "{" * n)  # each "{" searched to the end again
    assert_linear(parse_list, lambda n: "[" * (n // 2) + "}" * (n // 2))  # "}" scanned the stack


def test_deep_step_numbers_are_checked_in_linear_time() -> None:
    text = ("1." * 20_000 + "1 a\n") * 2  # was 4 s: every allowed number listed
    assert_linear(parse_plan, lambda n: ("1." * (n // 4) + "1 a\n") * 2)
    plan = parse_plan(text)
    assert isinstance(plan, ParsedPlan)
    assert len(plan.numbering_problems) == 2  # it does not start at 1, then it repeats
    assert numbering_problems([(1,), (1, 1), (1, 2), (2,), (2, 2)]) == [
        "2.2 follows 2 (expected 2.1 or 3)"]


def test_deep_nesting_and_huge_numbers_give_the_documented_failure() -> None:
    with pytest.raises(StageFailure, match="nested deeper"):
        parse_object(NESTED_3000)
    with pytest.raises(StageFailure, match="more than 4300 digits"):
        parse_object('{"a": ' + "1" * 5000 + "}")
    assert read_scores('{"fluency": ' + "[" * 3000 + "]" * 3000 + "}") is None
    assert read_scores(DIGITS_5000) is None
    # Still read when it is fine, next to such an object.
    good = '{"fluency": 8, "diversity": 7, "consistency": 9, "reason": "ok"}'
    assert read_scores(DIGITS_5000 + " " + good) == (
        {"fluency": 8.0, "diversity": 7.0, "consistency": 9.0}, "ok")
    assert check_numbering("1" * 5000 + ". a").problem == "line 1 is not a numbered step"
    assert step_number("1" * 5000) is None
    deep = parse_list("[" * 3000 + "]" * 3000)
    assert isinstance(deep, ParseFailure) and deep.kind == "invalid_json"
    assert not parse_list_official("[" * 3000 + "]" * 3000).ok


def test_tool_call_arguments_that_are_not_a_json_object_are_kept_apart() -> None:
    message = {"role": "assistant", "tool_calls": [
        {"function": {"name": "f", "arguments": '{"a": ' + "[" * 3000}},
        {"function": {"name": "g", "arguments": "[1]"}},
        {"function": {"name": "h", "arguments": '{"city": "Paris"}'}}]}
    assert tool_calls_of([message]) == [
        {"name": "f", "args": {INVALID_ARGS: '{"a": ' + "[" * 3000}},
        {"name": "g", "args": {INVALID_ARGS: "[1]"}},
        {"name": "h", "args": {"city": "Paris"}}]


def test_json_text_from_outside_fails_only_as_json(tmp_path: Path) -> None:
    with pytest.raises(json.JSONDecodeError) as deep:
        parse_json("[1,\n" + "[" * 3000 + "]" * 3000 + "]")
    assert (deep.value.lineno, deep.value.msg) == (2, "nested deeper than 200 levels")
    with pytest.raises(json.JSONDecodeError) as digits:
        parse_json('{"a": 1,\n "b": ' + "7" * 5000 + "}")
    assert (digits.value.lineno, digits.value.colno) == (2, 7)
    assert parse_json('{"a": [1.5, "x"]}') == {"a": [1.5, "x"]}
    path = tmp_path / "deep.json"
    path.write_text("[" * 3000 + "]" * 3000, encoding="utf-8")
    with pytest.raises(DataFormatError, match="nested deeper"):
        load_json(path)
    path.write_text('[{"a": 1}, ' + "1" * 5000 + "]", encoding="utf-8")
    with pytest.raises(DataFormatError, match="4300 digits"):
        read_array(path, AppBenchSample)


# --- rewrites against the patterns they replace --------------------------------------------------

def _texts(alphabet: str, size: int = 30) -> st.SearchStrategy[str]:
    return st.text(alphabet=st.sampled_from(list(alphabet)), max_size=size)


@_SETTINGS
@given(_texts("<b>/ x\n"))
def test_read_block_reads_what_the_pattern_read(text: str) -> None:
    found = re.findall(r"<b>(.*?)</b>", text, re.S)
    assert read_block("b", text) == (found[-1].strip() if found else None)


@_SETTINGS
@given(st.lists(st.sampled_from(["{", "}", " ", "x", '"fluency": 8', '"diversity": 7',
                                 '"consistency": 9', ", ", "1" * 10]), max_size=20).map("".join))
def test_read_scores_reads_what_the_pattern_read(text: str) -> None:
    def old(text: str) -> Any:
        for found in re.findall(r"\{.*?\}", text, re.S):
            try:
                data = json.loads(found)
            except ValueError:
                continue
            if isinstance(data, dict):
                scores = {k: float(v) for k in ("fluency", "diversity", "consistency")
                          if isinstance(v := data.get(k), int | float)
                          and not isinstance(v, bool) and 1 <= v <= 10}
                if len(scores) == 3:
                    return scores, str(data.get("reason", ""))[:300]
        return None
    assert read_scores(text) == old(text)


@_SETTINGS
@given(st.lists(st.sampled_from([" ", "\t", "\n", ",", ";", "\u00a0", "a = f(#x='1')", ")",
                                 "g(", "#y=a", "b"]), max_size=12).map("".join))
def test_split_calls_strips_what_the_pattern_stripped(text: str) -> None:
    separator = re.compile(r"^[\s,;]+|[\s,;]+$")
    pieces, start = [], 0
    for m in _NEXT_CALL.finditer(text):
        pieces.append(text[start:m.end()])
        start = m.end()
    pieces.append(text[start:])
    assert split_calls(text) == [cut for p in pieces if (cut := separator.sub("", p))]


@_SETTINGS
@given(_texts("()（）:：,，;；ab \n\t\u00a0", 25))
def test_step_annotations_read_what_the_patterns_read(step: str) -> None:
    annotation = re.compile(r"[(（]([^()（）]*[:：][^()（）]*)[)）]\s*$")
    item = re.compile(r"[,，;；]\s*(?=[^,，;；:：]+[:：])")
    key_value = re.compile(r"\s*([^:：]+)[:：]\s*(.*)$", re.S)
    m = annotation.search(step)
    expected = [] if m is None else [
        (kv.group(1).strip(), kv.group(2).strip()) for part in item.split(m.group(1))
        if (kv := key_value.match(part))]
    assert step_annotations(step) == expected
    parts = step.strip().split(" ", 1)
    assert _step_text(step) == annotation.sub("", parts[-1]).strip()


@_SETTINGS
@given(_texts("`ab \n\tx1[]\u00a0"))
def test_fenced_block_reads_what_the_pattern_read(text: str) -> None:
    m = re.search(r"```[A-Za-z]*\s*(.*?)```", text, re.DOTALL)
    assert fenced_block(text) == (m.group(1) if m else None)


@_SETTINGS
@given(st.lists(st.lists(st.integers(0, 3), min_size=1, max_size=4).map(tuple), max_size=8))
def test_numbering_checks_what_the_list_of_allowed_numbers_checked(
        numbers: list[tuple[int, ...]]) -> None:
    bad: list[str] = []
    prev: tuple[int, ...] = ()
    for num in numbers:
        allowed = [(*prev[:d], prev[d] + 1) for d in range(len(prev))] + [(*prev, 1)]
        if num not in (allowed if prev else [(1,)]):
            bad.append(".".join(map(str, num)))
        prev = num
    assert [p.split(" follows")[0] for p in numbering_problems(numbers)] == bad


@_SETTINGS
@given(_texts("1.2 -*\tab中", 20))
def test_plan_lines_read_what_the_lazy_pattern_read(line: str) -> None:
    # The step text read to the line's end and stripped after the match, against the lazy
    # ``(\S.*?)\s*$`` that tried the rest of the line after every character.
    old = re.match(r"^\s*(?:[-*]\s*)?(?>(\d+(?:\.\d+)+)|(\d+)(?=[.\s]))(\.?+)(?!\d)\s*"
                   r"(\S.*?)\s*$", line)
    new = _STEP_LINE.match(line)
    assert (old is None) == (new is None)
    if old is not None and new is not None:
        assert old.groups() == (new["dotted"], new["lone"], new["dot"], new["text"].rstrip())


_LITERAL_PIECES = [
    "[", "]", "{", "}", "(", ")", "'", '"', ",", ", ]", ",]", ":", " ", "\n", "\t", "True", "true",
    "None", "null", "NaN", "1", "-1", "1.5", "1e5", "1j", "0x1f", "'a'", '"b"', "'a\"b'", "a",
    "#", "# c\n", "\\", "...", "\r", "中", "rb'x'", "f'x'", "'''", "1,", "lambda", "\x00",
]


def _outcome(read: Any, text: str) -> tuple[str, ...]:
    try:
        return ("ok", repr(read(text)))
    except Exception:  # any failure: ast.literal_eval raises several kinds
        return ("fails",)


@settings(max_examples=2500, derandomize=True, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(_LITERAL_PIECES), max_size=14).map("".join))
def test_literal_eval_fast_is_ast_literal_eval(text: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _outcome(ast.literal_eval, text)
    assert _outcome(literal_eval_fast, text) == expected
    if cannot_be_literal(text):
        assert expected == ("fails",)


@_SETTINGS
@given(st.lists(st.sampled_from([
    "[", "]", "{", "}", "'", '"', "\\", ",", ":", " ", "True", "null", "NaN", "Infinity", "a",
    "1", "-", "...", "<x y>", "*", "中", "'it\\'s'", "\\x41", "o'clock"]), max_size=20,
).map("".join))
def test_salvaged_items_are_what_loading_each_gave(text: str) -> None:
    for lenient in (False, True):
        built = build("[" + text, 0, lenient=lenient)
        loaded = [load_literal("".join(built.pieces[a:b])) for a, b in built.spans]
        assert repr(built.item_values()) == repr([v[0] for v in loaded if v is not None])


@pytest.mark.parametrize("depth", [199, 200, 201, 5000])
def test_nesting_limits_are_the_same_on_every_python(depth: int) -> None:
    # The JSON reader's own limit moves with the Python version (a 5000-deep list parses on
    # 3.13, not on 3.11): literals follow Python's compiler (200 levels, on every version)
    # and parse_json the same documented limit, so a score never depends on the interpreter.
    text = "[" * depth + "]" * depth
    try:
        expected: Any = ast.literal_eval(text)
    except SyntaxError as exc:
        expected = type(exc)
    try:
        got: Any = literal_eval_fast(text)
    except SyntaxError as exc:
        got = type(exc)
    assert got == expected
    if depth <= jsonio.MAX_NESTING:
        assert jsonio.parse_json(text) == expected
    else:
        with pytest.raises(json.JSONDecodeError, match="nested deeper than 200 levels"):
            jsonio.parse_json(text)


@pytest.mark.parametrize(("make", "unparsed"), [
    (lambda n: "https://example.com/" + "a" * n, 0),
    (lambda n: "x-" + "a" * n + "-(#", 0),
    (lambda n: "a" * n + "(#x=", 1),
    (lambda n: "f(#x=" + "a." * (n // 2), 1),
], ids=["url", "dashes", "open-args", "dotted-args"])
def test_long_lines_parse_in_linear_time(make: Callable[[int], str], unparsed: int) -> None:
    assert_linear(parse_answer, make)
    parsed = parse_answer(make(30_000))
    assert len(parsed.unparsed) == unparsed and parsed.calls == []


@pytest.mark.parametrize("make", [
    lambda n: "A" + " " * n + "x",
    lambda n: "x" + " " * n + "= f()",
    lambda n: "Weather: [x" + " " * n + "y",
    lambda n: "a" + " " * n + ":",
    lambda n: "A:" + " " * (n // 2) + "[" + " " * (n // 2),
    lambda n: "f(" + " " * (n // 2) + "#a=" + " " * (n // 2),
], ids=["word-spaces", "returns-spaces", "app-spaces", "colon", "bracket", "args"])
def test_long_runs_of_spaces_parse_in_linear_time(make: Callable[[int], str]) -> None:
    # Quadratic regexes took seconds on 20k spaces.
    assert_linear(parse_call_line, make, failures=(ValueError,))
