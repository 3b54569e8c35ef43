"""Whole-process wall time of scoring the 8 published UltraTool key-value prediction files
(tool_usage and tool_usage_awareness x en, zh x GPT-3.5, GPT-4) with `tooleval score ultratool`:
one process for all of them (``--predictions`` repeated, each file's task and language from
its path) against one process per file (what scoring several files cost before). Best of
``--repeat`` runs of each.

    .venv/bin/python benchmarks/score_many.py --data-dir ../shared/data [--repeat 3]

Both ways print ``--json``; the script checks they give the same numbers for every file, then
prints the times (seconds) and the saving as JSON. Both use the default robust parser.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

TOOLEVAL = [sys.executable, "-m", "tooleval_agents.cli", "score", "ultratool"]
FOLDERS = {"en": "English-dataset", "zh": "Chinese-dataset"}
MODELS = ("gpt-3.5", "gpt-4")
TASKS = ("tool_usage_awareness", "tool_usage")


def timed(args: list[str]) -> tuple[float, str]:
    """Wall seconds of one whole ``tooleval score ultratool ...`` process, and its stdout."""
    start = time.perf_counter()
    done = subprocess.run([*TOOLEVAL, *args], check=True, capture_output=True, text=True)
    return time.perf_counter() - start, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root = args.data_dir / "ultratool" / "predictions"
    files = [(root / FOLDERS[lang] / model / f"{task}.json", task, lang)
             for lang in FOLDERS for model in MODELS for task in TASKS]
    missing = [str(f) for f, _, _ in files if not f.is_file()]
    if missing:
        sys.exit(f"missing prediction files (fetch them with `tooleval data fetch ultratool "
                 f"--with-predictions`): {', '.join(missing)}")
    common = ["--data-dir", str(args.data_dir), "--json", "--no-progress"]

    one: list[float] = []
    many_out: list[dict[str, Any]] = []
    for _ in range(args.repeat):
        seconds, out = timed([*(a for f, _, _ in files for a in ("--predictions", str(f))),
                              *common])
        one.append(seconds)
        many_out = json.loads(out)
    per_file: list[float] = []
    single_out: list[dict[str, Any]] = []
    for _ in range(args.repeat):
        total, single_out = 0.0, []
        for path, task, lang in files:
            seconds, out = timed(["--predictions", str(path), "--task", task, "--lang", lang,
                                  *common])
            total += seconds
            single_out.append(json.loads(out))
        per_file.append(total)

    same = all({k: v for k, v in m.items() if k not in ("predictions", "error")} == s
               for m, s in zip(many_out, single_out, strict=True))
    if not same:
        sys.exit("the two ways gave different results: not timing a broken command")
    best_one, best_each = min(one), min(per_file)
    print(json.dumps({
        "files": len(files),
        "repeat": args.repeat,
        "one_process_s": round(best_one, 2),
        "one_process_per_file_s": round(best_each, 2),
        "per_file_process_mean_s": round(best_each / len(files), 2),
        "saved_s": round(best_each - best_one, 2),
        "speedup": round(best_each / best_one, 2),
        "same_results": same,
    }, indent=2))


if __name__ == "__main__":
    main()
