"""How ``tooleval compare`` and ``tooleval report`` of two runs scale with the number of examples.

Two offline AppBench SS runs (``reference`` and ``noisy-reference:0.3``, 200 examples of the
shared data) are made once; synthetic runs of N examples repeat their result lines with new
example ids (same dataset hash on both sides, so the pair is compared). Each command runs as a
whole process (what a user waits for), best of ``--repeat``; the ratio per 10x data should be
at most 11 (linear), and 2000 examples compared in under 5 s.

    .venv/bin/python benchmarks/compare_scaling.py [--data-dir ../shared/data] \\
        [--sizes 200 2000 20000]
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from startup import TOOLEVAL, seconds  # the same whole-process timing

MODELS = ("reference", "noisy-reference:0.3")


def base_runs(data_dir: Path, out: Path) -> list[Path]:
    """The two 200-example runs the synthetic ones repeat."""
    for model in MODELS:
        subprocess.run([*TOOLEVAL, "run", "appbench", "--subset", "ss", "--strategy",
                        "hierarchical", "--model", model, "--data-dir", str(data_dir), "--out",
                        str(out), "--no-progress", "--no-cache", "--json"],
                       check=True, capture_output=True)
    return sorted(p for p in out.iterdir() if p.is_dir())


def synthetic(run: Path, n: int, out: Path) -> Path:
    """``run`` repeated to ``n`` examples (ids and positions renumbered)."""
    lines = (run / "examples.jsonl").read_text().splitlines()
    target = out / f"{run.name}-{n}"
    target.mkdir(parents=True, exist_ok=True)
    with (target / "examples.jsonl").open("w") as fh:
        for i in range(n):
            row = json.loads(lines[i % len(lines)])
            row["example_id"] = str(uuid.UUID(int=i))
            row["index"] = i
            fh.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")  # as ours
    config = json.loads((run / "config.json").read_text())
    config["experiment"] = target.name
    config["dataset"].update(examples=n, total=n, hash=f"synthetic-{n}")
    (target / "config.json").write_text(json.dumps(config))
    for extra in ("prompts.jsonl",):
        if (run / extra).is_file():
            (target / extra).write_bytes((run / extra).read_bytes())
    return target


def best(args: list[str], repeat: int) -> float:
    """Fewest wall seconds of ``tooleval ARGS`` over ``repeat`` processes."""
    return round(min(seconds([*TOOLEVAL, *args])[0] for _ in range(repeat)), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 2000, 20000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bases = base_runs(args.data_dir, root / "base")
        for n in args.sizes:
            pair = [synthetic(run, n, root / "runs") for run in bases]
            compare = best(["compare", *map(str, pair), "--json"], args.repeat)
            report = best(["report", *map(str, pair), "--out", str(root / f"report-{n}")],
                          args.repeat)
            rows.append({"examples": n, "compare_s": compare, "report_s": report})
            for run in pair:  # keep the disk use to one size at a time
                for file in run.iterdir():
                    file.unlink()
                run.rmdir()
            print(json.dumps(rows[-1]), flush=True)
    for a, b in itertools.pairwise(rows):
        factor = b["examples"] / a["examples"]
        print(json.dumps({"from": a["examples"], "to": b["examples"], "data_x": factor,
                          "compare_x": round(b["compare_s"] / a["compare_s"], 2),
                          "report_x": round(b["report_s"] / a["report_s"], 2)}))


if __name__ == "__main__":
    main()
