"""CPU time of the parsers on the long and nested inputs of issue 22 (item 4), and what each
returns or raises. Best of ``--repeat`` calls; a call is stopped after ``--timeout`` seconds.

    .venv/bin/python benchmarks/parser_inputs.py [--repeat 3] [--timeout 20]
    .venv/bin/python benchmarks/parser_inputs.py --all [--repeat 3]

Targets: every call on 100k characters under 0.2 s of CPU (:data:`TARGET_S`); no exception but
the parser's documented failure. ``--all`` times every parser of ``tests/parser_cases.py``
on every adversarial family at 100k characters and on the issue's nesting and number sizes
(the parsers whose work is per record are held to linear time only), and prints the calls over
the target. The tests check that each parser is total and linear-time (an input ten times as
long takes at most 25 times as long: ``tests/test_parser_fuzz.py``), not its seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from parser_cases import FAMILIES, NESTED_AND_HUGE, PARSERS

from tooleval_agents.evaluators.appbench.parse import parse_answer
from tooleval_agents.evaluators.parsing import parse_list, parse_list_official
from tooleval_agents.graphs.appbench.build_prompts import read_instruction, read_scores
from tooleval_agents.graphs.appbench.planning import read_plan
from tooleval_agents.graphs.ultratool.build import StageFailure, parse_object

TARGET_S = 0.2
"""CPU seconds one call may take on 100k characters (or on the issue's nesting and numbers)."""


class _Timeout(Exception):
    pass


def _blank_run(n: int) -> str:
    return "x: " + " " * n + "!"


CASES: list[tuple[str, Callable[[str], Any], str]] = [
    *((f"appbench parse_answer, blank run {n}", parse_answer, _blank_run(n))
      for n in (8000, 100_000)),
    *((f"appbench read_plan, blank run {n}", read_plan, _blank_run(n)) for n in (8000, 100_000)),
    ("appbench parse_answer, call with a blank run 100000", parse_answer,
     "x(" + " " * 100_000 + "!"),
    *((f"parse_list_official param, blank run {n}",
       lambda t: parse_list_official(t, family="param"), _blank_run(n)) for n in (8000, 100_000)),
    ("parse_list_official param, 50,000 glued objects",
     lambda t: parse_list_official(t, family="param"), "{" + "}{" * 50_000),
    ("parse_list, 100,000 open lists closed by braces", parse_list, "[" * 50_000 + "}" * 50_000),
    ("read_instruction, <instruction> x 8000", read_instruction, "<instruction>" * 8000),
    ("read_scores, 100,000 open braces", read_scores, "{" * 100_000),
    ("read_scores, blank run 100000", read_scores, _blank_run(100_000)),
    ("parse_object, 3000 nested lists", parse_object, '{"a": ' + "[" * 3000 + "]" * 3000 + "}"),
    ("read_scores, 3000 nested lists", read_scores,
     '{"fluency": ' + "[" * 3000 + "]" * 3000 + "}"),
    ("parse_object, 5000-digit number", parse_object, '{"a": ' + "1" * 5000 + "}"),
    ("read_scores, 5000-digit number", read_scores,
     '{"fluency": ' + "1" * 5000 + ', "diversity": 5, "consistency": 5}'),
]


def _outcome(parse: Callable[[str], Any], text: str) -> str:
    try:
        result = parse(text)
    except StageFailure as exc:
        return f"StageFailure: {exc}"[:80]
    except _Timeout:
        raise
    except Exception as exc:  # what the issue found: anything but the documented failure
        return f"raised {type(exc).__name__}: {exc}"[:80]
    return type(result).__name__


def _stop(signum: int, frame: object) -> None:
    raise _Timeout


def _best_cpu(parse: Callable[[str], Any], text: str, failures: tuple[type[BaseException], ...],
              repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        with contextlib.suppress(*failures):
            parse(text)
        best = min(best, time.process_time() - start)
        if best <= TARGET_S:
            break
    return best


def check_all(repeat: int) -> None:
    """Every parser of the tests' table on every family at 100k characters and on the issue's
    nesting and number sizes: the calls over :data:`TARGET_S`."""
    inputs = [*((name, make(100_000)) for name, make in FAMILIES.items()),
              *((name, make(size)) for name, (make, size) in NESTED_AND_HUGE.items())]
    over, calls = [], 0
    for case in PARSERS:
        if case.per_record:
            continue
        for name, text in inputs:
            calls += 1
            seconds = _best_cpu(case.parse, text, case.failures, repeat)
            if seconds > TARGET_S:
                over.append({"parser": case.name, "input": name, "cpu_s": round(seconds, 3)})
    print(json.dumps({"calls": calls, "target_s": TARGET_S, "over_target": over}, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=int, default=20)
    parser.add_argument("--all", action="store_true",
                        help="every parser of tests/parser_cases.py on every adversarial input")
    args = parser.parse_args()
    if args.all:
        check_all(args.repeat)
        return
    signal.signal(signal.SIGALRM, _stop)
    rows = {}
    for name, parse, text in CASES:
        best, outcome = float("inf"), ""
        for _ in range(args.repeat):
            signal.alarm(args.timeout)
            start = time.process_time()
            try:
                outcome = _outcome(parse, text)
            except _Timeout:
                outcome = f"stopped after {args.timeout} s"
            finally:
                signal.alarm(0)
            best = min(best, time.process_time() - start)
            if outcome.startswith("stopped"):
                break
        rows[name] = {"cpu_s": round(best, 4), "result": outcome}
    print(json.dumps(rows, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
