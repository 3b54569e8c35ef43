"""What ``tooleval run`` prints when its runs end: each run's table and what this session did
(a resume's stored results told apart from the new ones, examples apart from attempts), and a
sweep's runs side by side."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.table import Table

from tooleval_agents.cli.base import console
from tooleval_agents.contracts import Split, format_metric
from tooleval_agents.registry import Benchmark
from tooleval_agents.results.costs import describe
from tooleval_agents.terminal import shown


def row_of(split: Split, summary: Any, out: Path, strategy: str | None,
         model: str) -> dict[str, Any]:
    return {"experiment": summary.experiment, "run_dir": str(out / summary.experiment),
            "benchmark": split.benchmark, "task": split.task, "subset": split.subset,
            "strategy": strategy, "model": model, "metrics": summary.metrics,
            "counts": summary.counts, "usage": summary.usage, "latency_s": summary.latency_s,
            "ci": summary.ci, "cost": summary.cost, "not_computed": summary.not_computed,
            **({"epochs": summary.epochs} if summary.epochs else {}),
            **({"session": summary.session} if getattr(summary, "session", None) else {}),
            **({"notes": summary.notes} if summary.notes else {})}


def show_run(row: dict[str, Any], headline: Sequence[str] = ()) -> None:
    """One run's table: the scorer's headline metrics (its success metric) first."""
    console.print(f"[bold]{shown(row['experiment'])}[/]", highlight=False)
    table = Table()
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("95% CI", justify="right")
    ci = row.get("ci") or {}
    first = [m for m in headline if m in row["metrics"]]
    for name in [*first, *(m for m in row["metrics"] if m not in first)]:
        value = row["metrics"][name]
        low_high = ci.get(name)
        table.add_row(shown(name), format_metric(value, row["counts"].get("scored")),
                      f"{low_high[0]:.2f}-{low_high[1]:.2f}" if low_high else "")
    for name, why in (row.get("not_computed") or {}).items():  # e.g. a judged metric
        table.add_row(shown(name), shown(f"not computed ({why})"), "")
    console.print(table)
    console.print(shown(counts_line(row)), highlight=False)
    usage = row["usage"]
    said = session_line(row)
    if said:
        console.print(shown(said), highlight=False)
    tokens = ("tokens: not reported by the agent" if row["counts"].get("usage_reported") == 0
              else f"tokens in/out: {int(usage.get('input_tokens', 0))}/"
                   f"{int(usage.get('output_tokens', 0))}")
    console.print(shown(f"{tokens}, model calls: "
                  f"{int(usage.get('model_calls', 0))}, cache hits: "
                  f"{int(usage.get('cache_hits', 0))}"
                  + (" (all sessions)" if said else "")
                  + (f", judge tokens in/out: {int(usage.get('judge_input_tokens', 0))}/"
                     f"{int(usage.get('judge_output_tokens', 0))} in "
                     f"{int(usage.get('judge_calls', 0))} calls" if usage.get("judge_calls")
                     else "") + f"; results in {row['run_dir']}"), highlight=False)
    console.print(shown(describe(row.get("cost") or {})), highlight=False)


def counts_line(row: dict[str, Any]) -> str:
    """The run's counts; with epochs, examples told apart from attempts (the stored
    ``examples`` count is of attempts)."""
    counts = dict(row["counts"])
    epochs = int((row.get("epochs") or {}).get("n", 1))
    head = ""
    if epochs > 1 and "examples" in counts:
        attempts = counts.pop("examples")
        counts.pop("epochs", None)  # said in the head
        head = (f"{attempts // epochs} examples × {epochs} epochs = {attempts} attempts"
                + (", " if counts else ""))
    return head + ", ".join(f"{k}={v}" for k, v in counts.items())


def session_line(row: dict[str, Any]) -> str:
    """What this session did when it resumed a run ("" for a run started afresh: its counts
    and usage are all this session's)."""
    done = row.get("session") or {}
    if not done.get("resumed"):
        return ""
    errors = done.get("errors", 0)
    return (f"resumed {done['resumed']}, ran {done.get('ran', 0)} new, {errors} "
            f"error{'' if errors == 1 else 's'}; this session: model calls "
            f"{done.get('model_calls', 0)}, cache hits {done.get('cache_hits', 0)}")


def headline_of(bench: Benchmark, split: Split, rows: list[dict[str, Any]]) -> list[str]:
    try:
        names = list(bench.scorer(split).headline)
    except (KeyError, ValueError):  # a judged task's scorer needs its judge
        names = []
    seen = [m for r in rows for m in r["metrics"]]
    return [m for m in names if m in seen] or list(dict.fromkeys(seen))[:4]


def _order(bench: Benchmark, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runs by split in the order the benchmark declares its splits (its paper's order),
    the runs of one split in the order they ran."""
    declared = {(s.task, s.subset): i for i, s in enumerate(bench.splits())}
    return sorted(rows, key=lambda r: declared.get((r["task"], r["subset"]), len(declared)))


def _interval(row: dict[str, Any], metric: str) -> str:
    low_high = (row.get("ci") or {}).get(metric)
    return f"{low_high[0]:.1f}-{low_high[1]:.1f}" if low_high else ""


def show_sweep(bench: Benchmark, rows: list[dict[str, Any]]) -> None:
    """The runs of a command side by side in one table, splits in the benchmark's order: the
    split (with several), what else differs between runs, n, the headline metrics with their
    intervals, errors and tokens per example (``--all-metrics`` prints each run's own table
    before it; ``tooleval compare`` on their directories adds paired intervals)."""
    done = _order(bench, [r for r in rows if r.get("experiment")])
    if not done:
        return
    axes = [k for k in ("strategy", "model", "agent", "strategy_options", "tool_faults")
            if len({json.dumps(r.get(k), sort_keys=True) for r in done}) > 1]
    keys = list(dict.fromkeys((r["task"], r["subset"]) for r in done))
    splits = [bench.split(*k) for k in keys]
    metrics = list(dict.fromkeys(m for split in splits for m in headline_of(
        bench, split, [r for r in done if (r["task"], r["subset"]) == (split.task,
                                                                       split.subset)])))
    errors = [c for c in ("infra_errors", "model_errors", "format_errors")
              if any(r["counts"].get(c) for r in done)]
    title = (f"{splits[0].name}: {len(done)} runs" if len(splits) == 1 else
             f"{bench.name}: {len(done)} runs over {len(splits)} splits")
    table = Table(title=shown(title))
    for column in (["split"] if len(splits) > 1 else []) + axes + ["n"]:
        table.add_column(column.replace("strategy_options", "options"), no_wrap=True)
    for name in (*metrics[:1], "95% CI", *metrics[1:], *(c.replace("_", " ") for c in errors),
                 "tokens/example"):  # the first headline metric's interval: the one to quote
        table.add_column(shown(name), justify="right", no_wrap=name == "95% CI")
    for r in done:
        n, total = r["counts"].get("scored", 0), r.get("split_examples")
        cells = [str(r.get(a) if not isinstance(r.get(a), dict) else
                     ",".join(f"{k}={v}" for k, v in r[a].items())) for a in axes]
        tokens = r["usage"].get("input_tokens_per_example", 0.0) + \
            r["usage"].get("output_tokens_per_example", 0.0)
        table.add_row(*([r["subset"] if len({t for t, _ in keys}) == 1 else
                         f"{r['task']} {r['subset']}"] if len(splits) > 1 else []),
                      *map(shown, cells), f"{n}/{total}" if total and total != n else str(n),
                      *[format_metric(r["metrics"].get(m), n) for m in metrics[:1]],
                      *[_interval(r, m) for m in metrics[:1]],
                      *[format_metric(r["metrics"].get(m), n) for m in metrics[1:]],
                      *[str(r["counts"].get(c, 0)) for c in errors], f"{tokens:.0f}")
    console.print(table)
    _after_table(done)


def _after_table(done: list[dict[str, Any]]) -> None:
    """Under the table: what each resumed run did this session, where the results are, and
    the comparison command when a split has several runs."""
    for r in done:
        said = session_line(r)
        if said:
            label = r["subset"] if len(done) == len({x["subset"] for x in done}) \
                else r["experiment"]
            console.print(shown(f"{label}: {said}"), highlight=False)
    parents = {str(Path(r["run_dir"]).parent) for r in done}
    where = (f"results in {parents.pop()}/: " + ", ".join(r["experiment"] for r in done)
             if len(parents) == 1 else "results in " + ", ".join(r["run_dir"] for r in done))
    console.print(shown(where), highlight=False, soft_wrap=True)
    per_split = Counter((r["task"], r["subset"]) for r in done)
    if any(count > 1 for count in per_split.values()):
        compared = " ".join(str(r["run_dir"]) for r in done
                            if per_split[(r["task"], r["subset"])] > 1)
        console.print(shown(f"paired differences with CIs: tooleval compare {compared}"),
                      highlight=False, soft_wrap=True)
