"""Every parser of model, judge and data text, with its documented failure, and the adversarial
inputs they are fed (issue 22, item 4): :data:`PARSERS`, :data:`FAMILIES` (inputs of about ``n``
characters), :data:`NESTED_AND_HUGE` (nesting and number sizes of the issue).

``tests/test_parser_fuzz.py`` checks that each parser is total (raises nothing but its
documented failure) and linear-time (:mod:`growth`); ``benchmarks/parser_inputs.py --all``
times each at 100k characters against the target. To cover a new parser, add a :class:`Case`
to :data:`PARSERS`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tooleval_agents.appbench import build_models, lines
from tooleval_agents.appbench import cli as appbench_cli
from tooleval_agents.appbench.catalog import load_catalog
from tooleval_agents.appbench.loaders import read_file
from tooleval_agents.appbench.records import AppBenchSample
from tooleval_agents.data import answers, jsonio
from tooleval_agents.errors import ToolevalError
from tooleval_agents.evaluators import parsing
from tooleval_agents.evaluators.appbench import paper as appbench_paper
from tooleval_agents.evaluators.appbench import paper_read as appbench_paper_read
from tooleval_agents.evaluators.appbench import parse as appbench_parse
from tooleval_agents.evaluators.appbench.strict import score_strict
from tooleval_agents.evaluators.trajectory import tool_calls_of
from tooleval_agents.evaluators.ultratool import planning_structure as structure
from tooleval_agents.evaluators.ultratool.judge import judge
from tooleval_agents.evaluators.ultratool.judge import replay as judge_replay
from tooleval_agents.evaluators.ultratool.kv import (
    score_awareness,
    score_tool_selection,
    score_tool_usage,
)
from tooleval_agents.evaluators.ultratool.scoring import load_predictions
from tooleval_agents.graphs.appbench import build_prompts as build_prompts
from tooleval_agents.graphs.appbench import planning as appbench_graph
from tooleval_agents.graphs.ultratool import build as ultratool_build
from tooleval_agents.graphs.ultratool import protocol as ultratool_graph
from tooleval_agents.models.tool_calls.parse import looks_like_tool_call, parse_tool_calls
from tooleval_agents.ultratool import calls, skeletons, stubs

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Case:
    """A parser under test."""

    name: str
    parse: Callable[[str], object]
    """Reads one text (a file parser gets it as the content of a file)."""
    failures: tuple[type[BaseException], ...] = ()
    """Its documented failure: the only exceptions it may raise (none: it never raises)."""
    per_record: bool = False
    """Its work is in proportion to the calls or records it reads (a scorer scoring each
    predicted call, a file reader making a record of each line): held to linear time, not to
    the 100k-character target of ``benchmarks/parser_inputs.py``."""


@cache
def _sample() -> AppBenchSample:
    return read_file(REPO / "datasets/appbench/data/test/test_ss.json", "ss")[0]


_GOLD = {"reference": [{"step": "1.1 Find a hotel", "tool": "search_hotel(city='Paris')"},
                       {"step": "1.2 Book it", "tool": "book_hotel(hotel=<hotel>)"}]}
_AWARE_GOLD = {"reference": [{"step": "1.1 Find a hotel", "tool": "1"}]}
_TMP = Path(tempfile.mkdtemp(prefix="parser-fuzz-"))


def _file(read: Callable[[Path], object]) -> Callable[[str], object]:
    """A file reader as a text parser: the text is the file's content."""
    def parse(text: str) -> object:
        path = _TMP / "input.json"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        return read(path)
    return parse


def _annotation(text: str) -> object:
    return ultratool_build.read_annotation(text, ["1. Find", "2. Book"], [], "en")


PARSERS: list[Case] = [
    # Tool calls written as text (-O tool_calls=text|auto), and the check for unread ones
    Case("parse_tool_calls", parse_tool_calls),
    Case("parse_tool_calls bound", lambda t: parse_tool_calls(t, {"get_weather", "f"})),
    Case("looks_like_tool_call", looks_like_tool_call),
    # UltraTool answers
    Case("parse_list", parsing.parse_list),
    Case("parse_list_official aware", lambda t: parsing.parse_list_official(t, family="aware")),
    Case("parse_list_official param", lambda t: parsing.parse_list_official(t, family="param")),
    Case("parse_plan", parsing.parse_plan),
    Case("plan_failure_kind", parsing.plan_failure_kind),
    Case("ultratool parse_model_answer planning",
         lambda t: ultratool_graph.parse_model_answer("planning", t)),
    Case("ultratool parse_model_answer tool_usage",
         lambda t: ultratool_graph.parse_model_answer("tool_usage", t)),
    Case("score_awareness", lambda t: score_awareness({}, {"output": t}, _AWARE_GOLD),
         per_record=True),
    Case("score_tool_selection", lambda t: score_tool_selection({}, {"output": t}, _GOLD),
         per_record=True),
    Case("score_tool_usage", lambda t: score_tool_usage({}, {"output": t}, _GOLD),
         per_record=True),
    Case("plan structure check_numbering", structure.check_numbering),
    Case("plan structure rouge_l", lambda t: structure.rouge_l(t, "1. Find a hotel")),
    Case("ultratool parse_call", calls.parse_call),
    Case("step_annotations", stubs.step_annotations),
    Case("coerce", lambda t: skeletons.coerce(t, ["array"])),
    # UltraTool construction answers
    Case("parse_object", ultratool_build.parse_object, (ultratool_build.StageFailure,)),
    Case("normalise_steps", lambda t: ultratool_build.normalise_steps(t.split("\n")),
         (ultratool_build.StageFailure,)),
    Case("read_created", lambda t: ultratool_build.read_created(t, []),
         (ultratool_build.StageFailure,)),
    Case("read_annotation", _annotation, (ultratool_build.StageFailure,)),
    # AppBench answers
    Case("appbench parse_answer", appbench_parse.parse_answer),
    Case("parse_call_line", lines.parse_call_line, (ValueError,)),
    Case("split_calls", lines.split_calls),
    Case("paper read_answer", appbench_paper_read.read_answer),
    Case("paper extract_call", appbench_paper_read.extract_call),
    Case("appbench read_plan", appbench_graph.read_plan),
    Case("parse_app_list", lambda t: appbench_graph.parse_app_list(t, load_catalog())),
    Case("score_strict", lambda t: score_strict(_sample(), t), per_record=True),
    Case("score_paper", lambda t: appbench_paper.score_paper(_sample(), t), per_record=True),
    # AppBench construction answers
    Case("read_instruction", build_prompts.read_instruction),
    Case("read_scores", build_prompts.read_scores),
    Case("read_block", lambda t: build_models.read_block("values", t)),
    # Judge answers
    Case("parse_judge_output planning en",
         lambda t: judge.parse_judge_output(t, "planning", lang="en")),
    Case("parse_judge_output tool_creation zh",
         lambda t: judge.parse_judge_output(t, "tool_creation", lang="zh")),
    # Tool calls of a trajectory in the OpenAI wire format: arguments are model text
    Case("tool_calls_of wire arguments", lambda t: tool_calls_of(
        [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": t}}]}])),
    # Data files and prediction files
    Case("parse_json", jsonio.parse_json, (ValueError,)),
    Case("load_json", _file(jsonio.load_json), (ToolevalError,)),
    Case("appbench read_file", _file(lambda p: list(read_file(p, "ss"))), (ToolevalError,)),
    Case("read_answers", _file(lambda p: answers.read_answers(p, 3)), (ToolevalError,)),
    Case("appbench read_predictions", _file(lambda p: appbench_cli.read_predictions(p, 3)),
         (ToolevalError,)),
    Case("ultratool load_predictions", _file(lambda p: load_predictions(p, [])),
         (ToolevalError,)),
    Case("read_judgments", _file(judge_replay.read_judgments), (ToolevalError,),
         per_record=True),
]
"""Every parser of model, judge and data text, with its documented failure."""


def _repeat(piece: str) -> Callable[[int], str]:
    return lambda n: piece * max(1, n // len(piece))


def _blank_run(head: str, tail: str) -> Callable[[int], str]:
    return lambda n: head + " " * n + tail


_BLANK_RUN_PLACES = [
    ("x: ", "!"), ("[{'a': ", "!"), ("1. a", "b"), ("- ", "x"), ("App: [a", "b"),
    ("App: [r = f(#a='", "b"), ("f(#a=", "b"), ("a(", ")x"), ("{", "}x"), ('"a"', "x"),
    ("Accuracy", ": 7"), ("(a: b,", ")"), ("```", "x"), ("<think>", ""), ("1.", "1 a"),
]
"""Where a long blank run goes (the issue's input is the first): ``\\s*...\\s*$`` and
``(.*?)\\s*$`` patterns retried the run from each of its blanks."""

FAMILIES: dict[str, Callable[[int], str]] = {
    **{f"blank run after {head!r}": _blank_run(head, tail) for head, tail in _BLANK_RUN_PLACES},
    "newlines": _repeat("\n"),
    "short lines": _repeat("x\n"),
    "tabs and odd blanks": _repeat("\t\u00a0\u2028 \x0b"),
    # nesting and openers that never close
    "deep lists": lambda n: "[" * (n // 2) + "]" * (n // 2),
    "deep objects": lambda n: '{"a":' * (n // 5) + "1" + "}" * (n // 5),
    "open lists": _repeat("["),
    "open objects": _repeat("{"),
    "open parentheses": _repeat("("),
    "closers": _repeat("]"),
    "lists closed by braces": lambda n: "[" * (n // 2) + "}" * (n // 2),
    "nested steps": lambda n: "[" + '{"step": ' * (n // 9),
    # numbers beyond int()
    "digits": _repeat("1"),
    "long number in a list": lambda n: "[" + "9" * n + "]",
    "long score": lambda n: '{"fluency": ' + "9" * n + "}",
    "long step number": lambda n: "1" * n + ". Find a hotel",
    # quotes
    "double quotes": _repeat('"'),
    "single quotes": _repeat("'"),
    "open string": lambda n: '["' + "a" * n,
    "apostrophes": lambda n: "['" + "a'" * (n // 2),
    "backslashes": lambda n: '"' + "\\" * n,
    # NUL, control characters, surrogates
    "NUL": _repeat("\x00"),
    "terminal escapes": _repeat("\x1b]0;pwned\x07\x1b[2J"),
    "lone surrogates": _repeat("\ud800"),
    # tags and fences
    "instruction tags": _repeat("<instruction>"),
    "think tags": _repeat("<think>"),
    "open fence": lambda n: "```" + "a" * n,
    "fences": _repeat("```"),
    "angle brackets": _repeat("<"),
    # call-like text
    "app openers": _repeat("App: ["),
    "calls": _repeat("a("),
    "arguments": _repeat("f(#a="),
    "colons in parentheses": lambda n: "(" + ":" * n + ")",
    "annotation blanks": lambda n: "(a: b," + " " * n + ")",
    "returns": _repeat("a, "),
    # list-like and plan-like text
    "step numbers": _repeat("1. "),
    "dotted numbers": _repeat("1."),
    "deep step numbers": lambda n: ("1." * (n // 4) + "1 a\n") * 2,
    "commas": lambda n: "[" + ", " * (n // 2),
    "list items": lambda n: "[" + "{'a': 1}, " * (n // 10),
    "bare objects": _repeat('{"a": 1} '),
    "glued objects": lambda n: "{" + "}{" * (n // 2),
    "empty objects": _repeat("{}"),
    "words in a list": _repeat("[a"),
    "score lines": _repeat("Accuracy Score: "),
    "equals": _repeat("= "),
}
"""Adversarial inputs of about ``n`` characters."""


NESTED_AND_HUGE: dict[str, tuple[Callable[[int], str], int]] = {
    "nested lists": (lambda k: "[" * k + "]" * k, 3000),
    "nested objects": (lambda k: '{"a": ' * k + "1" + "}" * k, 3000),
    "nested lists in an object": (lambda k: '{"fluency": ' + "[" * k + "]" * k + "}", 3000),
    "nested parentheses": (lambda k: "(" * k + ")" * k, 3000),
    "digits": (lambda k: "1" * k, 5000),
    "digits in a score": (
        lambda k: '{"fluency": ' + "1" * k + ', "diversity": 5, "consistency": 5}', 5000),
    "digits in a list": (lambda k: "[" + "1" * k + "]", 5000),
    "digits in a step number": (lambda k: "1" * k + ". Find a hotel\n1.1 Book", 5000),
}
"""The fixed-size inputs of the issue -- 3000 levels of nesting, 5000 digits (beyond Python's
int-from-string limit) -- as ``(make, size)``: ``make(size)`` is the issue's input."""
