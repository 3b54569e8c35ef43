"""Peak memory of an offline run as the data grows: does a run hold each example until it ends?

AppBench SS from the shared data, its 200 samples repeated to N (a data directory of its own
per size, so each run loads only its N samples), run with the ``reference`` model and the
``hierarchical`` strategy as a whole ``tooleval run`` process; the figure is the process's peak
resident memory (``ru_maxrss``). Target: the largest run within 1.5x of the smallest (memory
that grows with the run, not with the data's own size, is what this catches).

    .venv/bin/python benchmarks/run_memory.py [--data-dir ../shared/data] [--sizes 2000 20000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOOLEVAL = [sys.executable, "-m", "tooleval_agents.cli"]
MEASURE = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, "
           "stdout=subprocess.DEVNULL); "
           "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def data_dir(shared: Path, n: int, root: Path) -> Path:
    """A copy of the AppBench layout whose SS test file holds ``n`` samples (repeated)."""
    source = shared / "appbench"
    target = root / f"data-{n}" / "appbench"
    (target / "data" / "test").mkdir(parents=True)
    for name in ("code", "derived", "SOURCE.md"):
        if (source / name).exists():
            (target / name).symlink_to(source / name)
    samples = json.loads((source / "data" / "test" / "test_ss.json").read_text())
    (target / "data" / "test" / "test_ss.json").write_text(
        json.dumps([samples[i % len(samples)] for i in range(n)]))
    return target.parent


def peak_mb(args: list[str]) -> tuple[float, float]:
    """Peak RSS (MB) and wall time (s) of one ``tooleval`` process."""
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", MEASURE, *TOOLEVAL, *args], check=True,
                         capture_output=True, text=True)
    wall = time.perf_counter() - start
    kb = int(out.stdout.strip().splitlines()[-1])
    return round(kb / 1024, 1), round(wall, 1)  # Linux: kilobytes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 20000])
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for n in args.sizes:
            data = data_dir(args.data_dir.resolve(), n, root)
            mb, wall = peak_mb(["run", "appbench", "--subset", "ss", "--strategy", "hierarchical",
                                "--model", "reference", "--data-dir", str(data), "--out",
                                str(root / f"runs-{n}"), "--no-progress", "--no-cache",
                                "--json"])
            rows.append({"examples": n, "peak_rss_mb": mb, "wall_s": wall})
            print(json.dumps(rows[-1]), flush=True)
    print(json.dumps({"ratio_largest_to_smallest":
                      round(rows[-1]["peak_rss_mb"] / rows[0]["peak_rss_mb"], 2)}))


if __name__ == "__main__":
    main()
