"""AppBench's report layout: Tables 3, 11 and 4 and Figures 4 and 5 (paper-style tables and
figures over finished runs; :mod:`tooleval_agents.results.reports` adds the generic part)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from tooleval_agents.appbench.names import CATEGORIES
from tooleval_agents.results.compare import RunData
from tooleval_agents.results.reports import (
    ReportFigure,
    ReportTable,
    disambiguators,
    grouped_bars,
    run_file_stem,
    save_figure,
    system_labels,
)
from tooleval_agents.results.rescore import current_summary

MIN_CELL = 10
"""Figure 4: the paper left out scale cells with fewer samples; we hatch them."""


class AppBenchLayout:
    """AppBench: Table 3 (F1 app, F1 API, success per category), Table 11 (EM), Table 4 (error
    analysis), Figure 4 (success by dependency scale, per run) and Figure 5 (strategies per
    category, per model)."""

    MAIN = (("app_f1", "F1 app"), ("api_f1", "F1 API"), ("success", "Succ"))
    EM = (("app_em", "APP"), ("api_em", "API"))
    ERRORS = (("key_error_independent", "Key I"), ("key_error_dependent", "Key D"),
              ("value_error_independent", "Value I"), ("value_error_dependent", "Value D"),
              ("value_error_time_share", "T share"), ("value_error_space_share", "S share"))
    SCALE_METRIC = re.compile(r"^success_p(\d+)_s([0-9.]+)$")

    def _categories(self, runs: Sequence[RunData]) -> list[str]:
        present = {r.config.subset for r in runs}
        return [c for c in CATEGORIES if c in present] + sorted(present - set(CATEGORIES))

    def _by_category(self, runs: Sequence[RunData], metrics: Sequence[tuple[str, str]],
                     name: str, title: str, note: str) -> ReportTable:
        cats = self._categories(runs)
        systems = system_labels(runs)
        rows: dict[str, dict[str, float]] = {}
        for run in runs:
            row = rows.setdefault(systems[id(run)], {})
            for m, _ in metrics:
                row[f"{run.config.subset}_{m}"] = run.metrics().get(m, np.nan)
        columns = [f"{c}_{m}" for c in cats for m, _ in metrics]
        frame = pd.DataFrame([{"system": s, **{c: v.get(c, np.nan) for c in columns}}
                              for s, v in rows.items()], columns=["system", *columns])
        display = frame.set_index("system").rename(columns={
            f"{c}_{m}": f"{c.upper()} {label}" for c in cats for m, label in metrics})
        return ReportTable(name, title, frame, display, note=note)

    def tables(self, runs: Sequence[RunData]) -> list[ReportTable]:
        out = [
            self._by_category(runs, self.MAIN, "appbench_table3",
                              "AppBench Table 3: F1 of apps and APIs, success rate",
                              "One row per system, one run per category; scoring options in "
                              "the row name (strict: call by call; paper: official scorer)."),
            self._by_category(runs, self.EM, "appbench_table11_em",
                              "AppBench Table 11: exact match of apps and APIs", ""),
        ]
        systems = system_labels(runs)
        recs = [{"system": systems[id(r)], "category": r.config.subset,
                 **{m: r.metrics().get(m, np.nan) for m, _ in self.ERRORS}}
                for r in sorted(runs, key=lambda r: self._categories(runs).index(
                    r.config.subset))]
        frame = pd.DataFrame(recs, columns=["system", "category", *[m for m, _ in self.ERRORS]])
        display = frame.rename(columns=dict(self.ERRORS))
        display.index = pd.Index([f"{s} · {c.upper()}" for s, c in
                                  zip(frame["system"], frame["category"], strict=True)],
                                 name="system · category")
        display = display.drop(columns=["system", "category"])
        out.append(ReportTable(
            "appbench_table4_errors", "AppBench Table 4: argument error analysis", frame,
            display, note="Key/Value I/D: % of samples with a key (missing key) or value error "
            "on an independent / dependent argument; T/S share: % of value-error arguments that "
            "are time / space related."))
        scale = self._scale_frame(runs)
        if not scale.empty:
            out.append(ReportTable(
                "appbench_scale_success", "AppBench success by dependency scale (Figure 4)",
                scale, scale.set_index("run"),
                note="parallel = components of the gold call graph, sequential = their mean "
                     f"size; the paper left out cells with fewer than {MIN_CELL} samples "
                     "(hatched in the figures)."))
        return out

    def _scale_cells(self, run: RunData) -> list[dict[str, Any]]:
        cells: dict[tuple[int, float], list[float]] = {}
        for score in run.scores.values():
            p, s = score.labels.get("parallel_scale"), score.labels.get("sequential_scale")
            if p is None or s is None:
                continue
            try:
                key = (int(p), float(s))
            except ValueError:
                continue
            cells.setdefault(key, []).append(score.scores.get("success", 0.0))
        if cells:
            return [{"parallel": p, "sequential": s, "samples": len(v),
                     "success": math.fsum(v) / len(v)} for (p, s), v in sorted(cells.items())]
        # No per-example labels: the summary's success_p{P}_s{S} metrics (no sample counts).
        summary = current_summary(run.path) if run.path is not None else None
        if summary is None:
            return []
        out = []
        for name, value in summary.metrics.items():
            m = self.SCALE_METRIC.match(name)
            if m:
                out.append({"parallel": int(m.group(1)), "sequential": float(m.group(2)),
                            "samples": np.nan, "success": value})
        return sorted(out, key=lambda c: (c["parallel"], c["sequential"]))

    def _scale_frame(self, runs: Sequence[RunData]) -> pd.DataFrame:
        recs = [{"run": r.label, **cell} for r in runs for cell in self._scale_cells(r)]
        return pd.DataFrame(recs, columns=["run", "parallel", "sequential", "samples",
                                           "success"])

    def figures(self, runs: Sequence[RunData], out_dir: Path) -> list[ReportFigure]:
        out = [f for r in runs if (f := self._heatmap(r, out_dir)) is not None]
        bars = self._strategy_bars(runs, out_dir)
        if bars is not None:
            out.append(bars)
        return out

    def _heatmap(self, run: RunData, out_dir: Path) -> ReportFigure | None:
        cells = self._scale_cells(run)
        if not cells:
            return None
        ps = sorted({c["parallel"] for c in cells})
        ss = sorted({c["sequential"] for c in cells})
        grid = np.full((len(ps), len(ss)), np.nan)
        counts: dict[tuple[int, int], Any] = {}
        for c in cells:
            i, j = ps.index(c["parallel"]), ss.index(c["sequential"])
            grid[i, j] = c["success"]
            counts[(i, j)] = c["samples"]
        fig = Figure(figsize=(1.1 * len(ss) + 3.2, 0.8 * len(ps) + 2.2))
        ax = fig.add_subplot()
        image = ax.imshow(np.ma.masked_invalid(grid), cmap="viridis", vmin=0, vmax=100,
                          aspect="auto")
        ax.set_facecolor("#dddddd")
        for (i, j), n in counts.items():
            value = grid[i, j]
            text = f"{value:.0f}" + ("" if isinstance(n, float) and math.isnan(n)
                                     else f"\nn={n}")
            ax.text(j, i, text, ha="center", va="center", fontsize=8,
                    color="white" if value < 60 else "black")
            if not (isinstance(n, float) and math.isnan(n)) and n < MIN_CELL:
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///",
                                       edgecolor="#999999", linewidth=0))
        ax.set_xticks(range(len(ss)), [f"{s:.3g}" for s in ss])
        ax.set_yticks(range(len(ps)), [str(p) for p in ps])
        ax.set_xlabel("sequential scale (mean component size)")
        ax.set_ylabel("parallel scale (components)")
        ax.set_title(f"Success by dependency scale (hatched: n < {MIN_CELL})\n{run.label}",
                     fontsize=9)
        fig.colorbar(image, ax=ax, label="success (%)")
        path = save_figure(fig, out_dir / f"appbench_scale_{run_file_stem(run)}.png")
        return ReportFigure(path, f"{run.label}: success by parallel x sequential scale "
                                  "(paper Figure 4)")

    def _strategy_bars(self, runs: Sequence[RunData], out_dir: Path) -> ReportFigure | None:
        if not runs:
            return None
        cats = self._categories(runs)
        strategies = list(dict.fromkeys(r.config.strategy for r in runs))
        palette = [f"C{i % 10}" for i in range(len(strategies))]
        colors = dict(zip(strategies, palette, strict=True))
        # One subplot row per model (with its scoring options and the disambiguator of
        # system_labels): two runs of one strategy and category never share a bar.
        suffix = disambiguators(runs)
        models: dict[str, dict[tuple[str, str], RunData]] = {}
        for run in runs:
            options = ", ".join(f"{k}={v}" for k, v in sorted(run.config.scoring_options.items()))
            model = (str(run.config.model.get("spec") or "?")
                     + (f" ({options})" if options else "") + suffix[id(run)])
            models.setdefault(model, {})[(run.config.strategy, run.config.subset)] = run
        fig = Figure(figsize=(3.4 * len(self.MAIN) + 1.5, 2.8 * len(models) + 0.6),
                     layout="constrained")
        axes = fig.subplots(len(models), len(self.MAIN), squeeze=False)
        for row, (model, by_key) in enumerate(models.items()):
            for col, (metric, label) in enumerate(self.MAIN):
                ax = axes[row][col]
                # Every strategy in every subplot ("–" where not run): bars line up.
                grouped_bars(ax, [c.upper() for c in cats], {
                    strategy: [by_key[(strategy, c)].metrics().get(metric, np.nan)
                               if (strategy, c) in by_key else np.nan for c in cats]
                    for strategy in strategies}, colors=colors)
                ax.set_title(f"{model}: {label}", fontsize=9)
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.legend(handles, labels, title="strategy", fontsize=8, title_fontsize=8,
                   loc="outside right upper")
        path = save_figure(fig, out_dir / "appbench_strategies.png")
        return ReportFigure(path, "Strategies (e.g. hierarchical vs flat) per category and "
                                  "model (paper Figure 5)")
