"""Fault injection: ``tooleval run`` against a hostile OpenAI-compatible server, killed with
SIGKILL at random moments, then resumed until done. Nothing may be lost, run twice or left.

A fake server on 127.0.0.1 (``tests/fake_openai.py``) answers the synthetic benchmark's
questions (``What is item i?`` -> ``answer-i``, one model call per example); example ``i``
gets fault ``FAULTS[i % 8]`` on its first one or two tries (seeded): none, 429, 500, a
connection reset, a hang past ``--timeout``, malformed JSON, an empty ``choices`` list, a
context-length 400. Each invocation is a child process running the ``tooleval run`` command
(``--no-cache``); the first ``--kills`` are killed with SIGKILL once the server has seen a
random (seeded) number of their requests, the next ones run to the end, until one exits 0.

Printed (and checked against the targets): examples kept / expected, duplicate lines (a
finished example recorded twice), model calls beyond the in-flight ones (requests not
accounted by any result line, other than those of examples in flight in a killed process),
infrastructure errors left, answers scored as wrong (a broken reply must never be one), and
what else was seen (faults served, torn lines found after a kill, retries, wall time). Exit
status 0 when every target is met.

    .venv/bin/python benchmarks/fault_run.py [--examples 80] [--kills 6] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from fake_openai import (  # noqa: E402 (a test helper, found through sys.path)
    CONTEXT_OVERFLOW,
    EMPTY_CHOICES,
    MALFORMED,
    RESET,
    ChatRequest,
    FakeOpenAI,
    Fault,
    Reply,
)

API_KEY = "sk-fault-run-0000000000"
ITEM = re.compile(r"item (\d+)\?")
SIZES = (8, 10, 40, 64, 80, 100, 256)
"""Synthetic split sizes (``benchmarks/harness_overhead.py``)."""


def faults(timeout: float) -> list[tuple[str, Fault | None]]:
    """The fault of example ``i`` is entry ``i % 8``."""
    return [("none", None), ("429", Fault(429)), ("500", Fault(500)), ("reset", RESET),
            ("hang", Fault(200, stall=timeout + 0.5)), ("malformed", MALFORMED),
            ("empty choices", EMPTY_CHOICES), ("context length", CONTEXT_OVERFLOW)]


@dataclass
class Hostile:
    """The server's side: which tries of which example fail, and how."""

    timeout: float
    seed: int
    tries: Counter[int] = field(default_factory=Counter)
    served: Counter[str] = field(default_factory=Counter)

    def __call__(self, req: ChatRequest) -> Reply | Fault:
        found = ITEM.search(req.prompt)
        if found is None:
            return "?"
        item = int(found.group(1))
        self.tries[item] += 1
        name, fault = faults(self.timeout)[item % 8]
        failing = 1 + random.Random(self.seed * 100_003 + item).randrange(2)
        if fault is not None and self.tries[item] <= failing:
            self.served[name] += 1
            return fault
        return f"answer-{item}"


@dataclass
class Invocation:
    started: float
    ended: float = 0.0
    killed: bool = False
    exit_code: int | None = None


def child_command(args: argparse.Namespace, out: Path, base_url: str) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--child", "--", "run", "synthetic",
            "--task", "echo", "--subset", f"s{args.examples}", "--model", "openai:fake-model",
            "--model-arg", f"base_url={base_url}", "--model-arg", f"api_key={API_KEY}",
            "--model-arg", "temperature=0", "--out", str(out), "--data-dir", str(out),
            "--no-cache", "--no-progress", "--max-concurrency", str(args.concurrency),
            "--timeout", str(args.timeout), "--max-attempts", str(args.max_attempts), "--json"]


def invoke(cmd: list[str], server: FakeOpenAI, kill_after: int | None, rng: random.Random,
           wait_s: float) -> Invocation:
    """Run one child; with ``kill_after``, SIGKILL it once the server has seen that many of
    its requests (or after ``wait_s``)."""
    seen = len(server.log)
    run = Invocation(started=time.time())
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env={**os.environ, "OPENAI_API_KEY": ""})
    if kill_after is not None:
        deadline = time.monotonic() + wait_s
        while (child.poll() is None and len(server.log) - seen < kill_after
               and time.monotonic() < deadline):
            time.sleep(0.005)
        time.sleep(rng.uniform(0.0, 0.2))
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
            run.killed = True
    try:
        _, err = child.communicate(timeout=wait_s)
    except subprocess.TimeoutExpired:
        os.kill(child.pid, signal.SIGKILL)
        _, err = child.communicate()
        run.killed = True
    run.ended, run.exit_code = time.time(), child.returncode
    if child.returncode not in (0, 3, -signal.SIGKILL):
        sys.stderr.write(f"child exited {child.returncode}: {err.decode()[-2000:]}\n")
    return run


def tries_of(line: dict[str, Any]) -> int:
    """Requests a result line accounts for: answers, retried failures, a last failure."""
    usage = line.get("usage") or {}
    last_failed = line["status"] != "ok" and line.get("error_kind") not in ("aborted",
                                                                            "harness")
    return int(usage.get("model_calls", 0)) + int(line.get("retries", 0)) + last_failed


def measure(run_dir: Path, server: FakeOpenAI, runs: list[Invocation],
            expected: int) -> dict[str, Any]:
    """The figures (see the module docstring)."""
    lines = [json.loads(ln) for ln in (run_dir / "examples.jsonl").read_text().splitlines()]
    latest = {ln["example_id"]: ln for ln in lines}
    final = Counter(ln["example_id"] for ln in lines if ln["status"] != "infra_error")

    def window(at: float) -> int:
        return next((k for k, r in enumerate(runs) if r.started <= at <= r.ended + 0.5), -1)

    item_of = {ln["example_id"]: ln["index"] for ln in lines}
    asked: dict[tuple[int, int], int] = Counter()
    for req in server.log:
        if (found := ITEM.search(req.prompt)) is not None:
            asked[(int(found.group(1)), window(req.at))] += 1
    accounted: dict[tuple[int, int], int] = Counter()
    kept_in: dict[int, int] = {}
    for ln in lines:
        k = window(datetime.fromisoformat(ln["finished_at"]).timestamp())
        accounted[(item_of[ln["example_id"]], k)] += tries_of(ln)
        if ln["status"] != "infra_error":
            kept_in.setdefault(ln["index"], k)
    beyond = in_flight = 0
    in_flight_examples: dict[int, set[int]] = defaultdict(set)
    for (item, k), n in asked.items():
        extra = max(0, n - accounted[(item, k)])
        if item in kept_in and kept_in[item] < k:
            beyond += n  # asked again after it was kept: wasted whatever happened
        elif k >= 0 and runs[k].killed:
            in_flight += extra
            if extra:
                in_flight_examples[k].add(item)
        else:
            beyond += extra
    prompts = (run_dir / "prompts.jsonl").read_text().splitlines()
    return {
        "kept": sum(1 for ln in latest.values() if ln["status"] != "infra_error"),
        "expected": expected,
        "duplicate_lines": sum(n - 1 for n in final.values() if n > 1)
        + len(lines) - len({json.dumps(ln, sort_keys=True) for ln in lines}),
        "calls_beyond_in_flight": beyond,
        "infra_errors_left": sum(1 for ln in latest.values() if ln["status"] == "infra_error"),
        "scored_as_wrong": sum(1 for ln in latest.values()
                               if ln["status"] in ("model_error", "agent_error")
                               or (ln.get("score") or {}).get("scores", {}).get("accuracy")
                               == 0.0),
        "requests": len(server.log),
        "in_flight_calls_lost_to_kills": in_flight,
        "most_examples_in_flight_at_a_kill": max((len(v) for v in in_flight_examples.values()),
                                                 default=0),
        "lines": len(lines),
        "retried_lines": sum(1 for ln in lines if ln.get("retries")),
        "prompts_lines_unreadable": sum(1 for p in prompts if not _is_json(p)),
        "lock_left": (run_dir / ".lock").exists(),
    }


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def drive(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    hostile = Hostile(args.timeout, args.seed)
    runs: list[Invocation] = []
    torn = 0
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(hostile, api_key=API_KEY) as server:
        out = Path(tmp)
        cmd = child_command(args, out, server.base_url)
        started = time.perf_counter()
        for n in range(args.max_invocations):  # bounded: kills, then resumes until done
            kill_after = rng.randint(1, 4 * args.concurrency) if n < args.kills else None
            runs.append(invoke(cmd, server, kill_after, rng, args.wait))
            examples = next(out.glob("synthetic-*/examples.jsonl"), None)
            if examples is not None and examples.stat().st_size and \
                    not examples.read_bytes().endswith(b"\n"):
                torn += 1  # the next run cuts it
            if not runs[-1].killed and runs[-1].exit_code == 0:
                break
        wall = time.perf_counter() - started
        run_dir = next(out.glob("synthetic-*"))
        figures = measure(run_dir, server, runs, args.examples)
    figures.update({
        "invocations": len(runs), "killed": sum(r.killed for r in runs),
        "last_exit_code": runs[-1].exit_code, "torn_lines_found_after_kills": torn,
        "faults_served": dict(hostile.served), "wall_s": round(wall, 1)})
    return figures


def targets_met(f: dict[str, Any]) -> bool:
    return (f["kept"] == f["expected"] and f["duplicate_lines"] == 0
            and f["infra_errors_left"] == 0 and f["calls_beyond_in_flight"] == 0
            and f["scored_as_wrong"] == 0 and f["prompts_lines_unreadable"] == 0
            and not f["lock_left"] and f["last_exit_code"] == 0)


def child(argv: list[str]) -> None:
    """The ``tooleval`` command with the synthetic benchmark registered."""
    from harness_overhead import register_synthetic

    from tooleval_agents.cli import main

    register_synthetic()
    sys.argv = ["tooleval", *argv]
    main()


def main() -> int:
    if "--child" in sys.argv:
        child(sys.argv[sys.argv.index("--") + 1:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=80, choices=SIZES)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--kills", type=int, default=6, help="invocations killed (SIGKILL)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=1.0, help="seconds per model call")
    parser.add_argument("--max-attempts", type=int, default=4)
    parser.add_argument("--max-invocations", type=int, default=30)
    parser.add_argument("--wait", type=float, default=300.0,
                        help="seconds an invocation may take before it is killed")
    args = parser.parse_args()
    figures = drive(args)
    print(json.dumps(figures, indent=2))
    ok = targets_met(figures)
    print(f"kept {figures['kept']}/{figures['expected']}, duplicate lines "
          f"{figures['duplicate_lines']}, calls beyond the in-flight ones "
          f"{figures['calls_beyond_in_flight']}, infra errors left "
          f"{figures['infra_errors_left']}: {'targets met' if ok else 'TARGETS MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
