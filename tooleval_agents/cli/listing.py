"""``tooleval list [benchmarks|tasks|strategies|metrics]``: what is registered, from the
registries (nothing is loaded from disk, no model is called)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import typer
from rich.table import Table

from tooleval_agents.cli.base import JsonOption, app, console, print_json
from tooleval_agents.contracts import ReferenceAnswers, describe_options
from tooleval_agents.registry import benchmarks, strategies
from tooleval_agents.terminal import shown

What = Literal["benchmarks", "tasks", "strategies", "metrics"]


def _benchmarks() -> list[dict[str, Any]]:
    return [{"benchmark": name, "title": b.title or name,
             "tasks": sorted({s.task for s in b.splits()}),
             "subsets": sorted({s.subset for s in b.splits()}),
             "data_sources": sorted(b.data_sources())} for name, b in benchmarks().items()]


def _tasks() -> list[dict[str, Any]]:
    rows = []
    for name, bench in benchmarks().items():
        for task in sorted({s.task for s in bench.splits()}):
            splits = [s for s in bench.splits() if s.task == task]
            rows.append({"benchmark": name, "task": task,
                         "subsets": [s.subset for s in splits], "kind": splits[0].kind,
                         "default_strategy": bench.default_strategy(splits[0]),
                         "scoring_options": describe_options(bench.scoring_options(splits[0])),
                         "max_tokens": bench.max_tokens(splits[0])})
    return rows


def _strategies() -> list[dict[str, Any]]:
    return [{"benchmark": b, "strategy": n, "tasks": list(s.tasks) if s.tasks else "all",
             "options": describe_options(s.options),
             "offline_models": isinstance(s, ReferenceAnswers), "agent": s.accepts_agent}
            for (b, n), s in sorted(strategies().items())]


def _metrics() -> list[dict[str, Any]]:
    rows = []
    for name, bench in benchmarks().items():
        for task in sorted({s.task for s in bench.splits()}):
            split = next(s for s in bench.splits() if s.task == task)
            try:
                headline = list(bench.scorer(split).headline)
            except (ValueError, KeyError) as exc:  # e.g. scored only by a judge
                headline = [f"({exc})"]
            rows.append({"benchmark": name, "task": task, "headline_metrics": headline})
    return rows


LISTS = {"benchmarks": _benchmarks, "tasks": _tasks, "strategies": _strategies,
         "metrics": _metrics}


@app.command("list")
def list_command(
    what: Annotated[What, typer.Argument(help="What to list.")] = "benchmarks",
    json_out: JsonOption = False,
) -> None:
    """List the registered benchmarks, their tasks (subsets, default strategy, scoring
    options), the strategies (tasks, options, whether the offline models can run them, whether
    `--agent` can play their agent) or the
    headline metrics of each task."""
    rows = LISTS[what]()
    if json_out:
        print_json(rows)
        return
    table = Table(title=shown(what))
    for column in rows[0] if rows else []:
        table.add_column(shown(column))
    for row in rows:
        table.add_row(*(shown(", ".join(map(str, v)) if isinstance(v, list) else v)
                        for v in row.values()))
    console.print(table)
