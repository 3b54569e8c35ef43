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
from tooleval_agents.results.fault_metrics import with_fault_metrics
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
            **({"spent": summary.spent} if getattr(summary, "spent", None) else {}),
            **({"notes": summary.notes} if summary.notes else {})}


def show_run(row: dict[str, Any], headline: Sequence[str] = (),
             counts: Sequence[str] = ()) -> None:
    """One run's tables: its 0-100 metrics, the scorer's headline metrics (its success
    metric) first, then the ones that count per example (``counts``: tool calls, turns)."""
    console.print(f"[bold]{shown(row['experiment'])}[/]", highlight=False)
    first = [m for m in headline if m in row["metrics"]]
    names = [*first, *(m for m in row["metrics"] if m not in first)]
    rates = _metric_table(row, "metric", [m for m in names if m not in counts])
    for name, why in (row.get("not_computed") or {}).items():  # e.g. a judged metric
        rates.add_row(shown(name), shown(f"not computed ({why})"), "")
    console.print(rates)
    counted = [m for m in names if m in counts]
    if counted:
        console.print(_metric_table(row, "per example (count)", counted))
    console.print(shown(counts_line(row)), highlight=False)
    usage = row["usage"]
    tokens = ("tokens: not reported by the agent" if row["counts"].get("usage_reported") == 0
              else f"tokens in/out: {int(usage.get('input_tokens', 0))}/"
                   f"{int(usage.get('output_tokens', 0))}")
    console.print(shown(f"{tokens}, model calls: "
                  f"{int(usage.get('model_calls', 0))}"
                  + (f", judge tokens in/out: {int(usage.get('judge_input_tokens', 0))}/"
                     f"{int(usage.get('judge_output_tokens', 0))} in "
                     f"{int(usage.get('judge_calls', 0))} calls" if usage.get("judge_calls")
                     else "") + f"; results in {row['run_dir']}"), highlight=False)
    console.print(shown(describe(row.get("cost") or {})), highlight=False)
    for said in (session_line(row), paid_line(row.get("session") or {})):
        if said:
            console.print(shown(said), highlight=False)


def _metric_table(row: dict[str, Any], first: str, names: Sequence[str]) -> Table:
    table = Table()
    table.add_column(first)
    table.add_column("value", justify="right")
    table.add_column("95% CI", justify="right")
    ci = row.get("ci") or {}
    for name in names:
        low_high = ci.get(name)
        table.add_row(shown(name), format_metric(row["metrics"][name], row["counts"].get("scored")),
                      f"{low_high[0]:.2f}-{low_high[1]:.2f}" if low_high else "")
    return table


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
    """``resumed N of M`` when this session found results stored ("" for a run started
    afresh): every resume says so."""
    done = row.get("session") or {}
    if not done.get("resumed"):
        return ""
    errors = int(done.get("errors", 0))
    held, of = int(done.get("held", 0)), int(done.get("of", done["resumed"]))
    line = (f"resumed {int(done['resumed'])} of {of}, ran {int(done.get('ran', 0))} new, "
            f"{errors} error{'' if errors == 1 else 's'}")
    if held > of:
        line += f" (the directory holds {held}: its figures are over all of them)"
    return line


def paid_line(done: dict[str, Any]) -> str:
    """What this session paid (provider calls, tokens, cache hits, dollars): the figures
    above are the answers', the same however many came from the cache."""
    if not done:
        return ""
    usd = done.get("usd")
    judge = (f", judge calls {int(done['judge_calls'])}" if done.get("judge_calls") else "")
    return (f"this session: model calls {int(done.get('model_calls', 0))}, tokens paid in/out "
            f"{int(done.get('input_tokens', 0))}/{int(done.get('output_tokens', 0))}, cache "
            f"hits {int(done.get('cache_hits', 0))}{judge}, "
            + ("price unknown" if usd is None else f"${usd:.4f}"))


def count_metrics_of(bench: Benchmark, split: Split, faults: bool) -> list[str]:
    """The metrics of ``split``'s scorer that count per example (with tool faults, the fault
    counts too): shown apart from the 0-100 ones."""
    try:
        scorer = bench.scorer(split)
    except (KeyError, ValueError):  # a judged task's scorer needs its judge
        return []
    return list((with_fault_metrics(scorer) if faults else scorer).count_metrics)


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
    errors = [c for c in ("infra_errors", "model_errors", "agent_errors", "format_errors")
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
    """Under the table: what each resumed run did this session, what the session paid,
    where the results are, and the comparison command when a split has several runs."""
    for r in done:
        said = session_line(r)
        if said:
            label = r["subset"] if len(done) == len({x["subset"] for x in done}) \
                else r["experiment"]
            console.print(shown(f"{label}: {said}"), highlight=False)
    sessions = [r.get("session") or {} for r in done]
    paid: dict[str, float | None] = {
        k: sum(float(s.get(k) or 0) for s in sessions)
        for k in ("model_calls", "input_tokens", "output_tokens", "cache_hits", "judge_calls")}
    paid["usd"] = (None if any(s and s.get("usd") is None for s in sessions)
                   else sum(float(s.get("usd") or 0) for s in sessions))
    console.print(shown(paid_line(paid)), highlight=False)
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
