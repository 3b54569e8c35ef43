"""The robustness curve of a report: a benchmark's headline metric against the tool-fault rate
(``--tool-faults``), one line per system (strategy or agent, and model where several).

The curve appears when a benchmark's runs differ by fault rate: a run's rate is the one its
``config.json`` records (``tool_faults``), 0 for a run without faults. The metric is the
run's first headline metric (its scorer's declaration), with a bootstrap interval over the
run's examples; runs with different headline metrics (UltraTool's tasks) get a curve each.
This module knows no benchmark.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from tooleval_agents.results.compare import RunData, run_interval
from tooleval_agents.results.compare_view import run_traits
from tooleval_agents.results.records import RunConfig

COLUMNS = ["system", "task", "subset", "strategy", "agent", "model", "fault_rate",
           "fault_kinds", "fault_seed", "metric", "value", "ci_low", "ci_high", "n", "run",
           "directory"]
"""The columns of the curve's CSV (one row per point)."""
_LINE_TRAITS = ("task", "subset", "strategy", "agent", "model", "options", "scoring", "judge",
                "limit", "epochs")
"""What tells two lines apart (the fault settings give the x, not the line)."""


def fault_rate(config: RunConfig) -> float:
    """A run's fault rate: the recorded ``--tool-faults`` rate, 0 for a run without faults."""
    return float((config.tool_faults or {}).get("rate") or 0.0)


def _variant(config: RunConfig) -> tuple[str, str]:
    faults = config.tool_faults or {}
    return f"kinds={'+'.join(faults.get('kinds') or ())}", f"seed={faults.get('seed', 0)}"


def _lines(runs: Sequence[RunData]) -> dict[tuple[str, ...], list[RunData]]:
    """The runs of each line, keyed by the line's traits. Faulted runs of one system that
    differ by kinds or seed make separate lines; a run without faults joins every line of
    its system (it is the x = 0 point of each)."""
    base = {id(r): tuple(run_traits(r.config)[k] for k in _LINE_TRAITS) for r in runs}
    faulted = [r for r in runs if fault_rate(r.config) > 0]
    variants = [_variant(r.config) for r in faulted]
    varied = [i for i in (0, 1) if len({v[i] for v in variants}) > 1]  # kinds, seed
    lines: dict[tuple[str, ...], list[RunData]] = {}
    for run, variant in zip(faulted, variants, strict=True):
        key = (*base[id(run)], " ".join(variant[i] for i in varied))
        lines.setdefault(key, []).append(run)
    for run in runs:
        if fault_rate(run.config) > 0:
            continue
        mine = [key for key in lines if key[:-1] == base[id(run)]]
        for key in mine or [(*base[id(run)], "")]:
            lines.setdefault(key, []).append(run)
    return lines


def _names(keys: Sequence[tuple[str, ...]]) -> dict[tuple[str, ...], str]:
    """A line's name: the traits that differ between the lines (the strategy and model when
    nothing does)."""
    differ = [i for i in range(len(keys[0])) if len({k[i] for k in keys}) > 1]
    strategy, agent, model = (_LINE_TRAITS.index(t) for t in ("strategy", "agent", "model"))
    fallback = [agent if any(k[agent] for k in keys) else strategy, model]
    return {k: " ".join(k[i] for i in differ or fallback if k[i]) for k in keys}


def headline(run: RunData) -> str | None:
    """The run's first headline metric that it has (its scorer's declaration)."""
    return next((m for m in run.scorer.headline if m in run.metrics()), None)


def fault_curves(runs: Sequence[RunData], *, n_boot: int = 1000,
                 seed: int = 0) -> list[pd.DataFrame]:
    """:func:`fault_curve` of each headline metric among ``runs`` (UltraTool's tasks each have
    their own), in the runs' order; only those whose runs differ by fault rate."""
    by_metric: dict[str, list[RunData]] = {}
    for run in runs:
        metric = headline(run)
        if metric is not None:
            by_metric.setdefault(metric, []).append(run)
    curves = (fault_curve(group, n_boot=n_boot, seed=seed) for group in by_metric.values())
    return [points for points in curves if points is not None]


def fault_curve(runs: Sequence[RunData], *, n_boot: int = 1000,
                seed: int = 0) -> pd.DataFrame | None:
    """The curve's points (:data:`COLUMNS`), by line then rate, of the runs that have the
    first run's headline metric (another UltraTool task has another); ``None`` unless those
    differ by fault rate."""
    metric = next((m for m in map(headline, runs) if m is not None), None)
    runs = [r for r in runs if metric is not None and metric in r.metrics()]
    if metric is None or len({fault_rate(r.config) for r in runs}) < 2:
        return None
    lines = _lines(runs)
    names = _names(list(lines))
    rows: list[dict[str, Any]] = []
    for key, members in lines.items():
        for run in sorted(members, key=lambda r: fault_rate(r.config)):
            value = run.metrics().get(metric)
            ci = run_interval(run, metric, n_boot=n_boot, seed=seed) \
                if value is not None else None
            faults = run.config.tool_faults or {}
            rows.append({
                "system": names[key], "task": run.config.task, "subset": run.config.subset,
                "strategy": run.config.strategy, "agent": run.config.agent or "",
                "model": str(run.config.model.get("spec")),
                "fault_rate": fault_rate(run.config),
                "fault_kinds": "+".join(faults.get("kinds") or ()),
                "fault_seed": faults.get("seed"), "metric": metric,
                "value": np.nan if value is None else float(value),
                "ci_low": ci[0] if ci else np.nan, "ci_high": ci[1] if ci else np.nan,
                "n": len(run.scores), "run": run.label,
                "directory": run.path.name if run.path is not None else run.config.experiment})
    return pd.DataFrame(rows, columns=COLUMNS).astype({"fault_seed": "Int64"})


def curve_figure(benchmark: str, points: pd.DataFrame) -> Figure:
    """One line per system: the metric against the fault rate, 95% intervals as error bars."""
    metric = str(points["metric"].iloc[0])
    fig = Figure(figsize=(5.6, 3.6))
    ax = fig.add_subplot()
    systems = list(dict.fromkeys(points["system"]))
    for k, (system, line) in enumerate(points.groupby("system", sort=False)):
        # Lines a little apart, so their whiskers do not hide each other.
        x = line["fault_rate"].to_numpy(dtype=float) + 0.008 * (k - (len(systems) - 1) / 2)
        values = line["value"].to_numpy(dtype=float)
        low = line["ci_low"].to_numpy(dtype=float)
        high = line["ci_high"].to_numpy(dtype=float)
        errors = np.vstack([np.where(np.isnan(low), 0.0, values - low),
                            np.where(np.isnan(high), 0.0, high - values)])
        ax.errorbar(x, values, yerr=errors, marker="o", capsize=3,
                    label=str(system) or "run")
    rates = sorted(set(points["fault_rate"]))
    ax.set_xticks(rates, [f"{r:g}" for r in rates])
    ax.set_xlim(min(rates) - 0.05, max(rates) + 0.05)
    ax.set_ylim(0, 105)
    ax.set_xlabel("tool fault rate (--tool-faults rate)")
    ax.set_ylabel(f"{metric} (0-100)")
    ax.grid(alpha=0.3)
    ax.set_title(f"{benchmark}: {metric} under tool faults, 95% CI")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def curve_display(points: pd.DataFrame) -> pd.DataFrame:
    """The points as the Markdown shows them: system, rate, value, interval, n."""
    metric = str(points["metric"].iloc[0])
    return pd.DataFrame({
        "system": points["system"], "fault rate": points["fault_rate"],
        metric: points["value"],
        "95% CI": [f"[{lo:.2f}, {hi:.2f}]" if not (math.isnan(lo) or math.isnan(hi)) else "n/a"
                   for lo, hi in zip(points["ci_low"], points["ci_high"], strict=True)],
        "n": points["n"]}).set_index("system")
