"""Speed of the text tool-call parser (:mod:`tooleval_agents.models.tool_calls.parse`) on answers of
100k characters: realistic ones (many calls, long arguments, prose) and adversarial ones
(deep nesting, unclosed brackets and strings, spans that fail to decode late).

Target: every 100k-character answer parsed (``parse_tool_calls`` and ``looks_like_tool_call``)
in well under 0.2 s, and linear: the time for 100k characters about 10x the time for 10k
(a quadratic parser: 100x). Times are the process's CPU time (best of ``--repeat``): on a
shared machine wall time mostly measures the other processes.

    .venv/bin/python benchmarks/text_tool_calls.py [--size 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable

from tooleval_agents.models.tool_calls.parse import looks_like_tool_call, parse_tool_calls

TARGET_S = 0.2


def _times(unit: str, n: int) -> str:
    return unit * max(1, n // len(unit))


SHAPES: dict[str, Callable[[int], str]] = {
    "fenced calls": lambda n: _times('```json\n{"name": "Events__findevents", "arguments": '
                                     '{"city": "New York", "date": "2019-03-09"}}\n```\n', n),
    "one long argument": lambda n: json.dumps({"name": "f", "arguments": {"text": "x" * n}}),
    "prose": lambda n: _times("The weather in Paris is sunny {maybe} and \"warm\". ", n),
    "open braces": lambda n: "{" * n,
    "deep lists": lambda n: "[" * (n // 2) + "]" * (n // 2),
    "deep objects": lambda n: '{"a":' * (n // 5) + "1" + "}" * (n // 5),
    "deep named": lambda n: '{"name": ' * (n // 9) + "1" + "}" * (n // 9),
    "named, unclosed": lambda n: '{"name":' * (n // 8),
    "many small": lambda n: _times('{"name": 1}', n),
    "failing late": lambda n: '{"name": ' * 15 + "[" + "1," * (n // 2) + "1]" + " x}" * 15,
    "broken strings": lambda n: _times('{"name": "a\\' + "x" * 50 + "\n", n),
    "backslashes": lambda n: '{"name": "' + "\\" * n,
    "named forms": lambda n: _times('<function=f>{"a":', n),
    "quotes": lambda n: '{"name": ' + '"' * n,
}


def best_of(text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        parse_tool_calls(text)
        looks_like_tool_call(text)
        best = min(best, time.process_time() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    slow = []
    print(f"{'shape':<20} {'chars':>8} {'s':>8} {'s at 1/10':>10} {'ratio':>6}")
    for name, make in SHAPES.items():
        text, small = make(args.size), make(args.size // 10)
        full, tenth = best_of(text, args.repeat), best_of(small, args.repeat)
        ratio = full / tenth if tenth > 1e-5 else float("nan")
        print(f"{name:<20} {len(text):>8} {full:>8.4f} {tenth:>10.4f} {ratio:>6.1f}")
        if full >= TARGET_S:
            slow.append(name)
    if slow:
        print(f"slower than {TARGET_S} s: {', '.join(slow)}")
        return 1
    print(f"every shape under {TARGET_S} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
