"""Every parser of model, judge and data text is total and linear-time (issue 22, item 4).

:data:`parser_cases.PARSERS` lists each parser with its documented failure: the only exceptions
it may raise. Each is fed adversarial long inputs (:data:`parser_cases.FAMILIES`: blank runs,
deep nesting, huge numbers, unbalanced quotes, NUL and control characters, repeated openers and
tags) and random compositions of such pieces (hypothesis, bounded and derandomized). A call
must raise nothing but its documented failure and take at most :data:`growth.MAX_RATIO` times as
long on an input ten times as long (a quadratic parser takes ~100 times as long). No time limit:
``benchmarks/parser_inputs.py --all`` times each parser against the 100k-character target.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from growth import LARGE, SMALL, superlinear
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from parser_cases import FAMILIES, NESTED_AND_HUGE, PARSERS, Case

from tooleval_agents.data.jsonio import MAX_NESTING, nests_deeper


def _total(case: Case) -> Callable[[str], object]:
    """``case.parse``, failing the test with the input on an undocumented exception."""
    def parse(text: str) -> object:
        try:
            return case.parse(text)
        except case.failures:
            raise
        except Exception as exc:  # the test's point: name the input that broke the parser
            pytest.fail(f"{case.name} raised {type(exc).__name__} on {text[:60]!r}... "
                        f"({len(text)} characters): {exc}")
    return parse


def _scaled(make: Callable[[int], str], size: int) -> Callable[[int], str]:
    """``make`` at ``size`` for the large input of :func:`growth.superlinear` (a tenth of it
    for the small one)."""
    return lambda n: make(size * n // LARGE)


@pytest.mark.parametrize("case", PARSERS, ids=lambda c: c.name)
def test_adversarial_inputs_are_read_in_linear_time(case: Case) -> None:
    slow = [f"{family}: {why}" for family, make in FAMILIES.items()
            if (why := superlinear(_total(case), make, failures=case.failures)) is not None]
    assert not slow, f"{case.name} is superlinear on: " + "; ".join(slow)


@pytest.mark.parametrize("case", PARSERS, ids=lambda c: c.name)
def test_deep_nesting_and_huge_numbers_give_the_documented_failure(case: Case) -> None:
    """The issue's sizes (3000 levels, 5000 digits) against a tenth of them."""
    for name, (make, size) in NESTED_AND_HUGE.items():
        why = superlinear(_total(case), _scaled(make, size), failures=case.failures)
        assert why is None, f"{case.name} is superlinear on {name}: {why}"


def _like_with_like(make: Callable[[int], str]) -> Callable[[int], str]:
    """``make``, its sizes scaled up when its small input stays within the JSON reader's
    nesting limit and its large one goes past it (:func:`~tooleval_agents.data.jsonio.
    parse_json` scans a deeper text for where): the small input is then the first multiple of
    it past the limit too, so that the two compared take the same path."""
    if not nests_deeper(make(LARGE), MAX_NESTING) or nests_deeper(make(SMALL), MAX_NESTING):
        return make
    scale = next(k for k in range(2, LARGE // SMALL + 1)
                 if nests_deeper(make(k * SMALL), MAX_NESTING))
    return lambda n: make(scale * n)


_PIECES = st.sampled_from([
    " ", "    ", "\n", "\t", "\x00", "\x1b[2J", "\ud800", "[", "]", "{", "}", "(", ")", "'",
    '"', "\\", ",", ", ", ":", "#", "=", "<", ">", "`", "**", "- ", "...", "```json", "<think>",
    "</think>", "<instruction>", "</instruction>", "1", "9" * 50, ".", "1. ", "1.1 ", "a",
    "a b", "True", "null", "App: [", "f(#a='x')", "#a=", "x(", "r = ", "(a: b)", "<x y>",
    "'a'", '"b"', '{"step": "1.1 a", "tool": "1"}', "{'a': 1}", "Accuracy Score: 7", "，", "：",
    "［", "｛",
])


@settings(max_examples=15, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(head=st.lists(_PIECES, max_size=5), unit=st.lists(_PIECES, min_size=1, max_size=10),
       tail=st.lists(_PIECES, max_size=5))
def test_random_compositions_are_total_and_linear(head: list[str], unit: list[str],
                                                  tail: list[str]) -> None:
    """A random unit of pieces repeated to 10k and 100k characters, between a random head and
    tail (so the text may open a list, a string or a fence and never close it; scaled up
    where the two sizes would straddle the nesting limit: :func:`_like_with_like`): no exception
    but the documented one, and the 100k text read in at most :data:`growth.MAX_RATIO` times
    the 10k text's time."""
    repeated = "".join(unit)

    def made(n: int) -> str:
        return "".join(head) + repeated * max(1, n // len(repeated)) + "".join(tail)

    make = _like_with_like(made)

    slow = [f"{case.name}: {why}" for case in PARSERS
            if (why := superlinear(_total(case), make, failures=case.failures)) is not None]
    assert not slow, f"superlinear on {make(100)[:100]!r}...: " + "; ".join(slow)
