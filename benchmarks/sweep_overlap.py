"""A sweep's runs at once (``--max-runs``) against one after the other.

Four runs -- four models, each behind its own OpenAI-compatible endpoint on 127.0.0.1 that
answers as the ``reference`` model after ``--latency`` seconds (``tests/reference_server.py``)
(each endpoint a process of its own, as a provider's work is not the harness's) -- go first
one after the other (after an untimed warm-up run), then all at once through
:func:`tooleval_agents.run.concurrent.arun_at_once` (what ``tooleval run --max-runs 4`` runs).
It prints each run's time alone, the sum, the time at once and its ratio to the slowest run
(the target: at most 1.2), and whether every example's status, outputs and scores are the same.

    .venv/bin/python benchmarks/sweep_overlap.py [--data-dir ../shared/data] [--limit 20] \\
        [--latency 0.2] [--max-concurrency 2]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fake_openai import FakeOpenAI
from reference_server import ReferenceResponder

from tooleval_agents.run.concurrent import arun_at_once
from tooleval_agents.run.loop import run_sync
from tooleval_agents.run.runner import arun_experiment

CELLS = (("flat", "m1"), ("hierarchical", "m2"), ("flat", "m3"), ("hierarchical", "m4"))
"""Strategy and model of each run (each model on an endpoint of its own)."""


def _serve(strategy: str, data_dir: Path, latency: float, urls: Any, stop: Any) -> None:
    with FakeOpenAI(ReferenceResponder("appbench", "ss", strategy, data_dir=data_dir,
                                       latency=latency)) as server:
        urls.put(server.base_url)
        stop.wait()


@contextlib.contextmanager
def endpoint(strategy: str, data_dir: Path, latency: float) -> Iterator[str]:
    """A provider endpoint in a process of its own (its work is not the harness's): its URL."""
    urls: Any = multiprocessing.Queue()
    stop = multiprocessing.Event()
    proc = multiprocessing.Process(target=_serve, args=(strategy, data_dir, latency, urls, stop),
                                   daemon=True)
    proc.start()
    try:
        yield urls.get(timeout=120)
    finally:
        stop.set()
        proc.join(10)


def results(run_dir: str) -> list[tuple[Any, ...]]:
    rows = [json.loads(x) for x in (Path(run_dir) / "examples.jsonl").read_text().splitlines()]
    return sorted((r["index"], r["status"], json.dumps(r["outputs"], sort_keys=True),
                   json.dumps(r["score"], sort_keys=True)) for r in rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=Path(
        os.environ.get("TOOLEVAL_SHARED_DATA", "../shared/data")))
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--max-concurrency", type=int, default=2)
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        urls = [stack.enter_context(endpoint(strategy, args.data_dir, args.latency))
                for strategy, _ in CELLS]

        def job(at: int, out: Path) -> Any:
            strategy, model = CELLS[at]
            return lambda: arun_experiment(
                "appbench", subset="ss", strategy=strategy, model=f"openai:{model}",
                model_kwargs={"base_url": urls[at], "api_key": "sk-test"},
                data_dir=args.data_dir, out=out, limit=args.limit, cache=False,
                max_concurrency=args.max_concurrency, progress=False)

        run_sync(job(0, Path(tmp) / "warm-up")())  # imports and first-call costs, untimed
        alone, one_by_one = [], []
        for at in range(len(CELLS)):
            start = time.perf_counter()
            one_by_one.append(run_sync(job(at, Path(tmp) / "one")()))
            alone.append(time.perf_counter() - start)
        start = time.perf_counter()
        together = run_sync(arun_at_once([job(at, Path(tmp) / "four")
                                          for at in range(len(CELLS))], max_runs=4))
        at_once = time.perf_counter() - start
        same = all(results(str(a.run_dir)) == results(str(b.run_dir))
                   for a, b in zip(one_by_one, together, strict=True))
    print(f"runs alone (s): {', '.join(f'{t:.2f}' for t in alone)}; one after the other: "
          f"{sum(alone):.2f}")
    print(f"--max-runs 4: {at_once:.2f} s = {at_once / max(alone):.2f} x the slowest run; "
          f"same results example by example: {same}")


if __name__ == "__main__":
    main()
