"""The tool-calling strategies measured on the full data (offline models):

* ``reference``: executed success, strict success and strict trajectory match of ``tools`` and
  ``tools_hierarchical`` per AppBench category, with the examples that do not reach 100;
* ``noisy-reference:0.3``: the same metrics at concurrency 1 and 16 (they must be identical);
* token cost per example (estimated tokens: the offline models count 4 characters per token,
  tool definitions included) of ``tools``, ``tools_hierarchical``, ``hierarchical`` and
  ``flat``;
* UltraTool ``tools`` on ``tool_usage``, ``tool_selection`` and ``raw`` (plan, create, use),
  en and zh: the same with ``reference`` and ``noisy-reference:0.3``, and the tokens of ``raw``
  as tools against the text workflow ``plan_create_use``.

    .venv/bin/python benchmarks/tool_strategies.py --data-dir ../shared/data [--json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from typing import Any

from tooleval_agents.run.runner import run_experiment

CATEGORIES = ("ss", "sm", "ms", "mm")
KEYS = ("executed_success", "success", "trajectory_strict", "tool_error_rate")
ULTRATOOL_KEYS = {"tool_usage": ("tool_usage", "trajectory_strict", "tool_error_rate"),
                  "tool_selection": ("tool_selection_local", "trajectory_strict",
                                     "tool_error_rate"),
                  "raw": ("executable", "valid_calls", "tool_set_f1", "plan_rouge_l",
                          "trajectory_strict", "tool_error_rate")}
TOKENS = ("input_tokens_per_example", "output_tokens_per_example", "model_calls_per_example")


def run(data_dir: str, out: str, benchmark: str = "appbench", **kw: Any) -> Any:
    return run_experiment(benchmark, data_dir=data_dir, out=out, upload=False, cache=False,
                          fresh=True, progress=False, **kw)


def ultratool(data_dir: str, out: str, report: dict[str, Any]) -> None:
    for task, keys in ULTRATOOL_KEYS.items():
        for lang in ("en", "zh"):
            name = f"ultratool/{task}/{lang}"
            summary = run(data_dir, out, "ultratool", task=task, subset=lang, strategy="tools",
                          model="reference")
            below = [r.index for r in summary.results()
                     if (r.score or {}).get("scores", {}).get(keys[0]) != 100]
            report["reference"][name] = {**{k: summary.metrics.get(k) for k in keys},
                                         "below_100": below}
            same = [{k: run(data_dir, out, "ultratool", task=task, subset=lang,
                            strategy="tools", model="noisy-reference:0.3",
                            max_concurrency=c).metrics.get(k) for k in keys} for c in (1, 16)]
            report["noisy"][name] = {**same[0], "identical_c1_c16": same[0] == same[1]}
    for strategy in ("tools", "plan_create_use"):
        summary = run(data_dir, out, "ultratool", task="raw", subset="en", strategy=strategy,
                      model="reference")
        report["tokens"][f"ultratool/raw/en/{strategy}"] = {
            k: round(summary.usage.get(k, 0.0), 1) for k in TOKENS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report: dict[str, Any] = {"reference": {}, "noisy": {}, "tokens": {}}
    with tempfile.TemporaryDirectory() as out:
        for strategy in ("tools", "tools_hierarchical"):
            for cat in CATEGORIES:
                summary = run(args.data_dir, out, subset=cat, strategy=strategy,
                              model="reference")
                below = [r.index for r in summary.results()
                         if (r.score or {}).get("scores", {}).get("executed_success") != 100
                         or (r.score or {}).get("scores", {}).get("trajectory_strict") != 100]
                report["reference"][f"{strategy}/{cat}"] = {
                    **{k: summary.metrics.get(k) for k in KEYS}, "below_100": below}
                same = []
                for concurrency in (1, 16):
                    noisy = run(args.data_dir, out, subset=cat, strategy=strategy,
                                model="noisy-reference:0.3", max_concurrency=concurrency)
                    same.append({k: noisy.metrics.get(k) for k in KEYS})
                report["noisy"][f"{strategy}/{cat}"] = {**same[0],
                                                       "identical_c1_c16": same[0] == same[1]}
        for strategy in ("tools", "tools_hierarchical", "hierarchical", "flat"):
            for cat in CATEGORIES:
                summary = run(args.data_dir, out, subset=cat, strategy=strategy,
                              model="reference")
                usage = summary.usage
                report["tokens"][f"{strategy}/{cat}"] = {
                    k: round(usage.get(k, 0.0), 1) for k in TOKENS}
        ultratool(args.data_dir, out, report)
    if args.json:
        print(json.dumps(report, indent=1))
        return
    for section, rows in report.items():
        print(f"== {section}")
        for name, row in rows.items():
            print(f"{name:28} " + "  ".join(
                f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}"
                for k, v in row.items()))


if __name__ == "__main__":
    main()
