"""The agents people use, measured as the project's own agent is (docs/agents-people-use.md):
each preset -- Claude Code, Codex, the OpenAI Agents SDK's example agent -- and the in-process
``tools`` strategy beside them, on each model, over one split; then the table of the page
(agent x model: success, tokens, model calls and wall per example), read from the run
directories.

    .venv/bin/python benchmarks/agent_presets.py --data-dir ../shared/data --limit 20 \\
        --model reference --model noisy-reference:0.3 --out runs-presets
    .venv/bin/python benchmarks/agent_presets.py --table runs-presets/*    # the table alone

A preset's program is found as ``--agent-preset`` finds it (the PATH), or given:
``--agent-bin claude-code=PATH``. ``--model-arg`` is passed to every run (a local server's
``base_url``). Wall per example is the run's wall time over its examples, at
``--max-concurrency`` (not the mean of each example's own time: an in-process run on a
local server opens examples ahead and their time includes waiting for their turn at the
model); tokens are the gateway's count (the offline models estimate theirs: 4 characters
a token).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tooleval_agents.results.rescore import parse_options
from tooleval_agents.results.rundir import RunDir
from tooleval_agents.run.runner import run_experiment

PRESETS = ("claude-code", "codex", "openai-agents")
IN_PROCESS = "tools (in-process)"
COLUMNS = ("agent", "version", "model", "n", "success", "tokens in / example",
           "tokens out / example", "model calls / example", "wall / example (s)",
           "errors")


def _per_example(wall: float | None, counts: dict[str, int]) -> float | None:
    """The run's wall seconds over the examples it ran (None: nothing ran)."""
    ran = counts.get("examples", 0) - counts.get("not_run", 0)
    return wall / ran if wall is not None and ran > 0 else None


def row_of(run_dir: Path) -> dict[str, Any]:
    """One run directory's row of the table."""
    run = RunDir(run_dir)
    config, summary = run.read_config(), run.read_summary()
    command = ((config.identity or {}).get("parts") or {}).get("agent_cmd") or {}
    preset = command.get("preset") or {}
    kinds: dict[str, int] = {}
    for result in run.results().values():
        if result.status != "ok":  # the agent's, the model's or the infrastructure's
            kind = f"{result.status} {result.error_kind or 'unknown'}"
            kinds[kind] = kinds.get(kind, 0) + 1
    usage, counts = summary.usage, summary.counts
    agent = (preset.get("name") or config.agent or "agent") if command else (
        IN_PROCESS if config.strategy == "tools" and not config.agent
        else f"{config.strategy} (in-process)")
    return {"agent": agent, "version": preset.get("version", ""),
            "model": config.model.get("spec", ""), "n": int(counts.get("scored", 0)),
            "success": summary.metrics.get("success"),
            "tokens in / example": usage.get("input_tokens_per_example"),
            "tokens out / example": usage.get("output_tokens_per_example"),
            "model calls / example": usage.get("model_calls_per_example"),
            "wall / example (s)": _per_example(summary.latency_s.get("wall"), counts),
            "errors": ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) or "0"}


DIGITS = {"success": 2, "tokens in / example": 0, "tokens out / example": 0,
          "model calls / example": 2, "wall / example (s)": 2}


def shown(column: str, value: Any) -> str:
    if value is None:
        return "n/a"
    if column in DIGITS and isinstance(value, int | float):
        return f"{value:,.{DIGITS[column]}f}"
    return str(value)


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table (agent, then model, in order)."""
    order = {name: i for i, name in enumerate((*PRESETS, IN_PROCESS))}
    rows = sorted(rows, key=lambda r: (r["model"], order.get(r["agent"], 99), r["agent"]))
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(shown(c, r[c]) for c in COLUMNS) + " |" for r in rows]
    return "\n".join(lines)


def run_all(args: argparse.Namespace) -> list[Path]:
    """Every preset and the in-process ``tools`` strategy on every model; their run folders."""
    bins = dict(pair.split("=", 1) for pair in args.agent_bin or [])
    kwargs = dict(subset=args.category, limit=args.limit, data_dir=args.data_dir, out=args.out,
                  upload=False, cache=False, progress=False,
                  max_concurrency=args.max_concurrency,
                  model_kwargs=parse_options(args.model_arg or []) or None)
    done = []
    for model in args.model:
        for preset in args.preset or PRESETS:
            print(f"{preset} on {model} ...", file=sys.stderr)
            summary = run_experiment("appbench", model=model, agent_preset=preset,
                                     agent_bin=bins.get(preset), agent_timeout=args.timeout,
                                     **kwargs)
            done.append(Path(str(summary.run_dir)))
        if args.in_process:
            print(f"tools (in the process) on {model} ...", file=sys.stderr)
            summary = run_experiment("appbench", model=model, strategy="tools",
                                     **kwargs)
            done.append(Path(str(summary.run_dir)))
    return done


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--table", nargs="+", metavar="RUN_DIR",
                        help="print the table of these run directories (nothing is run)")
    parser.add_argument("--model", action="append", default=None, metavar="SPEC")
    parser.add_argument("--model-arg", action="append", metavar="KEY=VALUE")
    parser.add_argument("--preset", action="append", choices=PRESETS)
    parser.add_argument("--agent-bin", action="append", metavar="PRESET=PATH")
    parser.add_argument("--no-in-process", dest="in_process", action="store_false")
    parser.add_argument("--category", default="ss")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--out", default="runs-presets")
    parser.add_argument("--max-concurrency", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600.0, help="--agent-timeout")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    dirs = [Path(d) for d in args.table] if args.table else run_all(
        argparse.Namespace(**{**vars(args), "model": args.model or ["reference"]}))
    rows = [row_of(d) for d in dirs if (d / "summary.json").is_file()]
    print(json.dumps(rows, indent=1) if args.json else table(rows))


if __name__ == "__main__":
    main()
