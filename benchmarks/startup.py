"""Wall time of the commands a user waits for before any work: `tooleval data info` on the full
data (warm: record counts cached), `tooleval run ... --limit 1` per benchmark (start-up to the
first example scored, whole process) and `tooleval --help`. Best of ``--repeat`` runs.

    .venv/bin/python benchmarks/startup.py --data-dir ../shared/data [--repeat 3]

Targets (issue: a newcomer's first hour): data info < 1 s warm, start-up < 1 s.
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


def best(args: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([*TOOLEVAL, *args], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return round(min(times), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    out = tempfile.mkdtemp()
    best(["data", "info", "--data-dir", args.data_dir], 1)  # fills the count cache
    rows = {
        "help_s": best(["--help"], args.repeat),
        "data_info_warm_s": best(["data", "info", "--data-dir", args.data_dir], args.repeat),
    }
    for name, split in (("appbench", ["--subset", "ss"]),
                        ("ultratool", ["--task", "tool_usage", "--subset", "en"])):
        rows[f"run_limit_1_{name}_s"] = best(
            ["run", name, *split, "--model", "reference", "--limit", "1", "--data-dir",
             args.data_dir, "--out", str(Path(out) / name), "--no-cache", "--fresh"],
            args.repeat)
    print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
