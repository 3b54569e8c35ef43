"""Throughput of ``run_experiment`` with a 200 ms-latency model at several concurrencies.

One model call per example (the synthetic single-call workflow of ``harness_overhead.py``), the
model sleeping ``--latency`` seconds asynchronously like a network call. The ideal rate is
``concurrency / latency`` examples per second; the target is at least 0.8 of it. Each setting
runs ``max(--min-examples, --waves * concurrency)`` examples so ramp-up and the final partial
wave weigh little; the one-time setup of a run (loading, config, summary) is included.

    .venv/bin/python benchmarks/throughput.py [--latency 0.2] [--concurrency 1 8 32 64]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness_overhead import SyntheticBenchmark, register_synthetic, timed_run


def main(argv: Sequence[str] | None = None) -> list[dict[str, float]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32, 64])
    parser.add_argument("--waves", type=int, default=8)
    parser.add_argument("--min-examples", type=int, default=40)
    args = parser.parse_args(argv)
    register_synthetic()
    timed_run(8)  # warm up imports and the runner's loop
    sizes = SyntheticBenchmark.sizes
    rows = []
    for concurrency in args.concurrency:
        wanted = max(args.min_examples, args.waves * concurrency)
        n = min((s for s in sizes if s >= wanted), default=sizes[-1])
        elapsed = timed_run(n, latency=args.latency, concurrency=concurrency)
        ideal = concurrency / args.latency
        rate = n / elapsed
        rows.append({"concurrency": concurrency, "examples": n, "seconds": round(elapsed, 3),
                     "examples_per_s": round(rate, 1), "ideal_per_s": round(ideal, 1),
                     "ratio": round(rate / ideal, 3)})
        print(json.dumps(rows[-1]), flush=True)
    return rows


if __name__ == "__main__":
    sys.exit(0 if all(r["ratio"] >= 0.8 for r in main()) else 1)
