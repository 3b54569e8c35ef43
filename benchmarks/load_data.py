"""Time loading every UltraTool and AppBench test split (target: under 3 s on 2 cores).

Usage: ``python benchmarks/load_data.py [DATA_DIR]`` (default ``../shared/data``). The two rebuilt
UltraTool sets are built once first (cached per user), so the figure is the load time a run sees.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tooleval_agents.registry import benchmarks


def main() -> None:
    data_dir = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parents[2] / "shared" /
                    "data")
    splits = [(b, s) for b in benchmarks().values() for s in b.splits()]
    for bench, split in splits:  # warm the rebuilt-set cache; not part of the timing
        bench.locate(split, data_dir)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        total = sum(len(bench.load(split, data_dir)) for bench, split in splits)
        best = min(best, time.perf_counter() - start)
    print(f"loaded {total} records from {len(splits)} splits in {best:.2f} s (best of 3)")


if __name__ == "__main__":
    main()
