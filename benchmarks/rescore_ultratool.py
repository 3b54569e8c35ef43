"""Time re-scoring the published UltraTool predictions (target: >= 10x an official-like scorer).

Usage: ``python benchmarks/rescore_ultratool.py [DATA_DIR] [--repeat N]`` (default
``../shared/data``, N = 3; the best of N runs is reported).

The 12 published files are ``planning``, ``tool_usage_awareness`` and ``tool_usage`` for GPT-3.5
and GPT-4 in both languages (the zh GPT-3.5 ``tool_creation`` file has no recorded judgments and
is left out). Every timing starts from rows already read from the JSON Lines files (reading is
timed once, separately, and is the same for both sides).

* **ours**: :func:`evaluators.ultratool_scoring.score_task` with the default robust parser and
  with ``parser="official"``; planning = replay of the recorded GPT-4 judgments through
  :mod:`evaluators.judge_replay` (structure metrics included) when that module is present.
* **official-like baseline** (clearly *not* the official code): the official post-processing
  (the same text edits and fallback variants) with ``ast.literal_eval`` where upstream calls
  ``eval()`` (not allowed here), the official metric loops, and a pure-Python Levenshtein (what
  upstream's ``textdistance`` call runs without a C backend). Planning has no baseline: upstream
  only averages recorded numbers, so the planning rows are reported without a ratio.

The baseline's metrics are printed next to ours: they must agree with ``parser="official"``.
"""

from __future__ import annotations

import ast
import json
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evaluators.parsing import _official_text, _official_variants
from evaluators.ultratool_scoring import score_task
from tooleval_agents.records import Lang
from tooleval_agents.ultratool.records import UltraToolTask

LANGS: dict[Lang, str] = {"en": "English-dataset", "zh": "Chinese-dataset"}
MODELS = ("gpt-3.5", "gpt-4")
TASKS: tuple[UltraToolTask, ...] = ("planning", "tool_usage_awareness", "tool_usage")


# --- the official-like baseline ---------------------------------------------------------------

def _levenshtein(a: str, b: str) -> int:
    """Plain dynamic-programming edit distance (pure Python)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def _normalized_distance(a: str, b: str) -> float:
    longest = max(len(a), len(b))
    return _levenshtein(a, b) / longest if longest else 0.0


def _baseline_parse(answer: str, family: Any) -> Any:
    for variant in _official_variants(_official_text(answer, family), family):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return ast.literal_eval(variant)
        except Exception:
            continue
    return []


def _baseline_awareness(rows: list[dict[str, Any]]) -> dict[str, float]:
    preds = [_baseline_parse(r["init output"], "aware") for r in rows]
    p_values, g_values = [], []
    for pred, row in zip(preds, rows, strict=True):
        p_value, g_value = [], []
        for g in row["data"]["reference"]:
            g_value.append(int(g["tool"]))
            found = False
            if isinstance(pred, list):
                for p in pred:
                    try:
                        if p["step"].split(" ")[0] == g["step"].split(" ")[0]:
                            p_value.append(int(p["tool"]))
                            found = True
                            break
                    except Exception:
                        continue
            if not found:
                p_value.append(0 if int(g["tool"]) == 1 else 1)
        p_values.append(p_value)
        g_values.append(g_value)
    flat_p = [x for s in p_values for x in s]
    flat_g = [x for s in g_values for x in s]
    return {"tool_usage_awareness_global":
            100 * sum(a == b for a, b in zip(p_values, g_values, strict=True)) / len(rows),
            "tool_usage_awareness_local":
            100 * sum(a == b for a, b in zip(flat_p, flat_g, strict=True)) / len(flat_g)}


def _baseline_usage(rows: list[dict[str, Any]]) -> dict[str, float]:
    preds = [_baseline_parse(r["init output"], "param") for r in rows]
    scores: list[float] = []
    for pred, row in zip(preds, rows, strict=True):
        if isinstance(pred, list) and pred and isinstance(pred[0], list):
            pred = pred[0]
        per_sample = []
        for g in row["data"]["reference"]:
            found = False
            for p in pred if isinstance(pred, list | tuple) else []:
                if not isinstance(p, dict) or not p or "step" not in p or "param" not in p:
                    continue
                if isinstance(p["step"], str) and \
                        p["step"].split(" ")[0] == g["step"].split(" ")[0]:
                    found = True
                    params, keys = p["param"], []
                    for g_key, g_value in g["param"].items():
                        if not isinstance(params, dict):
                            continue
                        score = 0.0
                        for p_key, p_value in params.items():
                            if isinstance(p_key, str):
                                p_key = p_key.replace("\\_", "_")
                            if isinstance(p_value, str):
                                p_value = p_value.replace("\\_", "_")
                            if p_key == g_key:
                                score = (float(len(p_value) == 0) if len(g_value) == 0 else
                                         1 - _normalized_distance(str(g_value), str(p_value)))
                                break
                        keys.append(score)
                    per_sample.append(sum(keys) / len(keys) if keys else 0.0)
                    break
            if not found:
                per_sample.append(0.0)
        scores.extend(per_sample or [0.0])
    return {"tool_usage": 100 * sum(scores) / len(scores)}


BASELINES: dict[str, Callable[[list[dict[str, Any]]], dict[str, float]]] = {
    "tool_usage_awareness": _baseline_awareness, "tool_usage": _baseline_usage}


# --- timing -----------------------------------------------------------------------------------

def _best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def _fmt(metrics: dict[str, float], names: tuple[str, ...]) -> str:
    return " / ".join(f"{metrics[n]:.2f}" for n in names if n in metrics)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 3
    if "--repeat" in sys.argv:
        args.remove(str(repeat))
    data = Path(args[0]) if args else Path(__file__).resolve().parents[2] / "shared" / "data"
    try:
        import evaluators.judge_replay  # noqa: F401
        have_judge = True
    except ImportError:
        have_judge = False
    totals = {"ours_robust": 0.0, "ours_official": 0.0, "baseline": 0.0}
    planning_total = 0.0
    read_total = 0.0
    print(f"{'file':42} {'robust':>8} {'official':>9} {'baseline':>9} {'speed-up':>9}  metrics "
          "(ours official | baseline)")
    for lang, lang_dir in LANGS.items():
        for model in MODELS:
            for task in TASKS:
                path = data / "ultratool" / "predictions" / lang_dir / model / f"{task}.json"
                start = time.perf_counter()
                rows = [json.loads(line) for line in path.read_text(encoding="utf-8")
                        .splitlines() if line.strip()]
                read_total += time.perf_counter() - start
                records = [r["data"] for r in rows]
                outputs = [r["init output"] for r in rows]
                name = f"{lang}/{model}/{task}"
                if task == "planning":
                    if not have_judge:
                        print(f"{name:42} skipped (evaluators.judge_replay not available)")
                        continue
                    judgments = path.parent / "eval" / "planning_eval.json"
                    t, report = _best(lambda: score_task(
                        "planning", records, outputs, lang=lang,  # noqa: B023
                        judgments=judgments), repeat)  # noqa: B023
                    planning_total += t
                    print(f"{name:42} {t:8.3f} {'':>9} {'':>9} {'':>9}  "
                          f"planning {report.metrics['planning']:.2f} (judge replay)")
                    continue
                t_robust, _ = _best(lambda: score_task(task, records, outputs),  # noqa: B023
                                    repeat)
                t_official, official = _best(
                    lambda: score_task(task, records, outputs,  # noqa: B023
                                       parser="official"), repeat)
                t_base, base = _best(lambda: BASELINES[task](rows), repeat)  # noqa: B023
                totals["ours_robust"] += t_robust
                totals["ours_official"] += t_official
                totals["baseline"] += t_base
                names = tuple(base)
                print(f"{name:42} {t_robust:8.3f} {t_official:9.3f} {t_base:9.3f} "
                      f"{t_base / t_robust:8.1f}x  {_fmt(official.metrics, names)} | "
                      f"{_fmt(base, names)}")
    print(f"\nreading the 12 JSON Lines files: {read_total:.2f} s (same for both sides)")
    print(f"8 key-value files: ours robust {totals['ours_robust']:.2f} s, ours official "
          f"{totals['ours_official']:.2f} s, official-like baseline {totals['baseline']:.2f} s "
          f"-> {totals['baseline'] / totals['ours_robust']:.1f}x (robust), "
          f"{totals['baseline'] / totals['ours_official']:.1f}x (official parser)")
    if have_judge:
        print(f"4 planning files (judge replay + structure metrics): {planning_total:.2f} s")


if __name__ == "__main__":
    main()
