"""The runner's own start-up cost: `tooleval run ... --limit 1` (whole process: start-up, one
example run and scored, the run directory written) against a process that only imports
LangGraph, LangChain (with its chat-model base class) and LangSmith, the libraries any run of
theirs pays for. Also
`tooleval --help` and `tooleval data info` (warm: split sizes cached).

Each repetition runs every command once, one after the other, so both sides of the gap see the
same machine; each figure is the median of ``--repeat`` (11) repetitions, after one warm-up
round: wall seconds (``*_s``, what the user waits) and the CPU seconds of the process
(``cpu``: user + system, which a machine busy with other work inflates much less).
``PYTHONDONTWRITEBYTECODE`` is dropped for the children: with it the project's modules are
compiled from source on every start while the installed libraries' bytecode is cached
(``pip`` writes it), which is not how an installed ``tooleval`` starts.

    .venv/bin/python benchmarks/startup.py [--data-dir datasets] [--repeat 11]

Target (issue 23): the gap of ``run appbench --limit 1`` over the imports at most 0.3 s (exit 1
above it).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOOLEVAL = [sys.executable, "-m", "tooleval_agents.cli"]
# BaseChatModel itself: langchain_core.language_models loads it lazily, and any chat model,
# so any run with a model, pays for it.
LIBRARIES = [sys.executable, "-c", "import langgraph.graph, langsmith, langchain\n"
             "from langchain_core.language_models import BaseChatModel"]
TARGET_GAP_S = 0.3
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def seconds(command: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``command``."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=ENV)
    wall = time.perf_counter() - start
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, now.ru_utime - used.ru_utime + now.ru_stime - used.ru_stime


def commands(data_dir: str, out: Path) -> dict[str, list[str]]:
    runs = {name: [*TOOLEVAL, "run", name, *split, "--model", "reference", "--limit", "1",
                   "--data-dir", data_dir, "--out", str(out / name), "--no-cache", "--fresh"]
            for name, split in (("appbench", ["--category", "ss"]),
                                ("ultratool", ["--task", "tool_usage", "--lang", "en"]))}
    return {"import_libraries_s": LIBRARIES,
            "run_limit_1_appbench_s": runs["appbench"],
            "run_limit_1_ultratool_s": runs["ultratool"],
            "help_s": [*TOOLEVAL, "--help"],
            "data_info_warm_s": [*TOOLEVAL, "data", "info", "--data-dir", data_dir]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=str(Path(__file__).resolve().parents[1]
                                                  / "datasets"))
    parser.add_argument("--repeat", type=int, default=11)
    args = parser.parse_args()
    todo = commands(args.data_dir, Path(tempfile.mkdtemp()))
    for command in todo.values():  # warm-up: bytecode written, split sizes cached
        seconds(command)
    wall: dict[str, list[float]] = {name: [] for name in todo}
    cpu: dict[str, list[float]] = {name: [] for name in todo}
    for _ in range(args.repeat):
        for name, command in todo.items():
            w, c = seconds(command)
            wall[name].append(w)
            cpu[name].append(c)
    rows: dict[str, dict[str, float]] = {
        name: {"wall": round(statistics.median(wall[name]), 3),
               "cpu": round(statistics.median(cpu[name]), 3)} for name in todo}
    # Each gap is the median of one repetition's differences (the run and the imports of the
    # same round, a second apart), not a difference of medians: this machine's speed drifts
    # between rounds by more than the gap itself.
    for name in ("appbench", "ultratool"):
        rows[f"gap_{name}_s"] = {
            kind: round(statistics.median(
                r - b for r, b in zip(series[f"run_limit_1_{name}_s"],
                                      series["import_libraries_s"], strict=True)), 3)
            for kind, series in (("wall", wall), ("cpu", cpu))}
    print(json.dumps(rows, indent=2))
    return 0 if rows["gap_appbench_s"]["wall"] <= TARGET_GAP_S else 1


if __name__ == "__main__":
    sys.exit(main())
