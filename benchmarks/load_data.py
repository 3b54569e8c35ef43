"""Time loading every UltraTool and AppBench test split (target: under 3 s on 2 cores).

Usage: ``python benchmarks/load_data.py [DATA_DIR]`` (default ``../shared/data``). The two rebuilt
UltraTool sets are built once first (cached per user), so the figure is the load time a run sees.

Two figures, best of 3 each: ``load`` is :meth:`Benchmark.load` of every split, what a run pays
before its first example (records are validated when first read, so this reads and splits the
files); ``every record`` also reads every record, i.e. validates all 14,801 (what a full run, a
push or a first ``data info`` of an unpinned file pays).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from tooleval_agents.registry import benchmarks


def best(fn: Callable[[], int]) -> tuple[float, int]:
    times, total = [], 0
    for _ in range(3):
        start = time.perf_counter()
        total = fn()
        times.append(time.perf_counter() - start)
    return min(times), total


def main() -> None:
    data_dir = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parents[2] / "shared" /
                    "data")
    splits = [(b, s) for b in benchmarks().values() for s in b.splits()]
    for bench, split in splits:  # warm the rebuilt-set cache; not part of the timing
        bench.locate(split, data_dir)
    load, total = best(lambda: sum(len(bench.load(split, data_dir)) for bench, split in splits))
    every, _ = best(lambda: sum(len(list(bench.load(split, data_dir)))
                                for bench, split in splits))
    print(f"{total} records from {len(splits)} splits: load {load:.2f} s, every record "
          f"validated {every:.2f} s (best of 3)")


if __name__ == "__main__":
    main()
