"""Reports over finished runs: Markdown, CSV tables and PNG figures in one directory.

:func:`write_report` loads the runs (stored score dumps; ``rescore=True`` scores the stored
outputs again), compares them (:func:`~tooleval_agents.compare.compare`) and writes:

* ``report.md`` -- runs, per benchmark its tables and figures, the paired differences with
  bootstrap CIs, cost per example and notes;
* ``metrics.csv`` (metric x run), ``differences.csv``, ``costs.csv``, ``runs.csv`` and one CSV
  per benchmark table (full precision; the Markdown rounds to 2 decimals);
* PNG figures (matplotlib, Agg: no display needed).

Layouts: the paper-style tables and figures are the only benchmark-specific part and live in
:data:`LAYOUTS` (``ultratool``: Table 2 and the per-dimension judge scores of Figure 5;
``appbench``: Table 3, Table 11 (EM), Table 4 (error analysis), Figure 4 (success by parallel x
sequential scale) and Figure 5 (strategies per category)). Any other benchmark gets the generic
:class:`Layout`: its metric x run table and a bar chart of its headline metrics.

Example::

    report = write_report(["runs/a", "runs/b"], "reports/ab", n_boot=2000)
    report.markdown.read_text()
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from tooleval_agents.compare import Comparison, RunData, compare, load_run
from tooleval_agents.results import RunConfig, RunDir, now

DPI = 120
MIN_CELL = 10
"""AppBench Figure 4: the paper left out scale cells with fewer samples; we hatch them."""


@dataclass(frozen=True)
class ReportTable:
    """One table: ``frame`` goes to ``<name>.csv`` unrounded, ``display`` (default:
    ``frame``) to the Markdown."""

    name: str
    title: str
    frame: pd.DataFrame
    display: pd.DataFrame | None = None
    note: str = ""


@dataclass(frozen=True)
class ReportFigure:
    """One PNG written by a layout."""

    path: Path
    title: str
    note: str = ""


@dataclass
class Report:
    """What :func:`write_report` wrote."""

    out_dir: Path
    markdown: Path
    csv: list[Path] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    comparison: Comparison | None = None


# ------------------------------------------------------------------------------------ helpers

def system_label(config: RunConfig) -> str:
    """A row name for paper-style tables: ``model (strategy[, scoring options])``."""
    model = config.model.get("spec") or config.model.get("name") or "?"
    extra = [config.strategy] + [f"{k}={v}" for k, v in sorted(config.scoring_options.items())]
    return f"{model} ({', '.join(extra)})"


def _distinct_tails(paths: Sequence[str]) -> dict[str, str]:
    """The shortest trailing part of each distinct path that tells it from the others
    (``runs/a``, ``runs/b`` -> ``a``, ``b``)."""
    distinct = list(dict.fromkeys(paths))
    parts = {p: Path(p).parts for p in distinct}
    out: dict[str, str] = {}
    for p in distinct:
        out[p] = p
        for n in range(1, len(parts[p]) + 1):
            if all(parts[q][-n:] != parts[p][-n:] for q in distinct if q != p):
                out[p] = "/".join(parts[p][-n:])
                break
    return out


def _disambiguators(runs: Sequence[RunData]) -> dict[int, str]:
    """What :func:`system_labels` appends to each run's :func:`system_label` (by ``id``)."""
    base = {id(r): system_label(r.config) for r in runs}
    groups: dict[tuple[str, str, str, str], int] = {}
    for run in runs:
        key = (base[id(run)], run.config.benchmark, run.config.task, run.config.subset)
        groups[key] = groups.get(key, 0) + 1
    clashing = {(key[0], key[1]) for key, n in groups.items() if n > 1}

    def clashes(run: RunData) -> bool:
        return (base[id(run)], run.config.benchmark) in clashing

    where = {id(r): str(r.path.parent) if r.path is not None else r.label for r in runs}
    tails = _distinct_tails([where[id(r)] for r in runs if clashes(r)])
    suffix = {id(r): f" [{tails[where[id(r)]]}]" if clashes(r) else "" for r in runs}
    seen: dict[tuple[str, str, str, str], int] = {}
    for run in runs:
        key = (base[id(run)] + suffix[id(run)], run.config.benchmark, run.config.task,
               run.config.subset)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            suffix[id(run)] += f" #{seen[key]}"
    return suffix


def system_labels(runs: Sequence[RunData]) -> dict[int, str]:
    """Row names (by ``id(run)``) for paper-style tables, which put the runs of one system
    over several tasks or subsets in one row: :func:`system_label`, made unique.

    When two runs of one benchmark, task and subset share a label (same model, strategy and
    scoring options, but another judge, other data or simply another results directory),
    every run of that benchmark and label gets the part of its results directory's parent
    that tells them apart (``runs/a/<experiment>`` -> ``[a]``), so a system's runs stay in one
    row; runs that still share a row (the same directory given twice) get ``#2``, ``#3``...
    """
    suffix = _disambiguators(runs)
    return {id(r): system_label(r.config) + suffix[id(r)] for r in runs}


def slug(text: str) -> str:
    """A file-name-safe form of a label."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:80] or "run"


def run_file_stem(run: RunData) -> str:
    """A file-name stem for one run's figure: a readable :func:`slug` of its label plus a
    short hash of its full path and label (slugs of long labels are cut and can collide)."""
    digest = hashlib.sha256(f"{run.path}\0{run.label}".encode()).hexdigest()[:10]
    return f"{slug(run.label)[:60]}_{digest}"


def fmt(value: Any) -> str:
    """A cell for Markdown: 2 decimals, ``–`` for missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool | np.bool_):
        return "yes" if value else ""
    if isinstance(value, float | np.floating):
        return f"{value:.2f}"
    return str(value)


def markdown_table(frame: pd.DataFrame, *, index: bool = True) -> str:
    """A GitHub-flavoured Markdown table (no extra dependency); numbers right-aligned."""
    def cell(value: Any) -> str:
        return fmt(value).replace("|", "\\|").replace("\n", " ")

    def numeric(dtype: Any) -> bool:
        return bool(pd.api.types.is_numeric_dtype(dtype)
                    and not pd.api.types.is_bool_dtype(dtype))

    head = ([str(frame.index.name or "")] if index else []) + [str(c) for c in frame.columns]
    align = ([" --- "] if index else []) + [" ---: " if numeric(d) else " --- "
                                            for d in frame.dtypes]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    for row in frame.itertuples(index=True, name=None):
        cells = [cell(v) for v in (row if index else row[1:])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _save(fig: Figure, path: Path) -> Path:
    fig.savefig(path, format="png", dpi=DPI, bbox_inches="tight")
    return path


def _grouped_bars(ax: Any, groups: Sequence[str], series: Mapping[str, Sequence[float]], *,
                  values: bool = True, colors: Mapping[str, Any] | None = None) -> None:
    """Bars: one group per x tick, one bar per series within each group (``colors``: the same
    series gets the same colour in every subplot)."""
    x = np.arange(len(groups))
    width = 0.8 / max(len(series), 1)
    for k, (name, ys) in enumerate(series.items()):
        heights = [0.0 if math.isnan(y) else y for y in ys]
        color = None if colors is None else colors.get(name)
        bars = ax.bar(x - 0.4 + width * (k + 0.5), heights, width, label=name, color=color)
        if values:
            for bar, y in zip(bars, ys, strict=True):
                ax.annotate("–" if math.isnan(y) else f"{y:.1f}",
                            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                            ha="center", va="bottom", fontsize=7)
    ax.set_xticks(x, groups)
    ax.set_ylim(0, 105)
    ax.grid(axis="y", alpha=0.3)


# ------------------------------------------------------------------------------------ layouts

class Layout:
    """The generic layout, used for any benchmark without its own: the metric x run table of
    the benchmark's runs and a bar chart of its headline metrics."""

    def tables(self, benchmark: str, runs: Sequence[RunData]) -> list[ReportTable]:
        names: dict[str, None] = {}
        for run in runs:
            names.update(dict.fromkeys(run.metrics()))
        frame = pd.DataFrame({r.label: [r.metrics().get(m, np.nan) for m in names]
                              for r in runs}, index=pd.Index(list(names), name="metric"))
        return [ReportTable(f"{benchmark}_metrics", f"{benchmark}: all metrics (metric x run)",
                            frame)]

    def figures(self, benchmark: str, runs: Sequence[RunData],
                out_dir: Path) -> list[ReportFigure]:
        headline: dict[str, None] = {}
        for run in runs:
            headline.update(dict.fromkeys(m for m in run.scorer.headline if m in run.metrics()))
        if not headline:
            return []
        metrics = list(headline)
        fig = Figure(figsize=(max(4.0, 1.6 * len(metrics) * max(1, len(runs)) ** 0.5 + 2), 3.6))
        ax = fig.add_subplot()
        _grouped_bars(ax, metrics, {r.label: [r.metrics().get(m, np.nan) for m in metrics]
                                    for r in runs})
        ax.set_ylabel("score (0-100)")
        ax.set_title(f"{benchmark}: headline metrics")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        path = _save(fig, out_dir / f"{benchmark}_headline.png")
        return [ReportFigure(path, f"{benchmark}: headline metrics per run")]


class UltraToolLayout(Layout):
    """UltraTool: Table 2 (one row per language and system, the nine metric columns and their
    mean, *Overall*) and the per-dimension judge scores (Figure 5), then the generic part."""

    HEADERS: ClassVar[dict[str, str]] = {
        "planning": "Planning",
        "tool_creation_awareness_global": "TC awareness global",
        "tool_creation_awareness_local": "TC awareness local",
        "tool_creation": "Tool creation local",
        "tool_usage_awareness_global": "TU awareness global",
        "tool_usage_awareness_local": "TU awareness local",
        "tool_selection_global": "Selection global",
        "tool_selection_local": "Selection local",
        "tool_usage": "Usage local",
        "overall": "Overall",
    }
    # The paper lists the Chinese dataset first.
    LANG_ORDER: ClassVar[dict[str, int]] = {"zh": 0, "en": 1}

    def _judge_dimensions(self) -> dict[str, list[tuple[str, str]]]:
        from evaluators.judge_prompts import DIMENSIONS

        return {task: [(f"{task}_{d.key}", d.en) for d in dims] + [(task, "Overall")]
                for task, dims in DIMENSIONS.items()}

    def tables(self, benchmark: str, runs: Sequence[RunData]) -> list[ReportTable]:
        from evaluators.ultratool_scoring import TABLE2_COLUMNS, overall

        systems = system_labels(runs)
        rows: dict[tuple[str, str], dict[str, float]] = {}
        for run in sorted(runs, key=lambda r: self.LANG_ORDER.get(r.config.subset, 9)):
            key = (run.config.subset, systems[id(run)])
            rows.setdefault(key, {}).update(
                {c: v for c, v in run.metrics().items() if c in TABLE2_COLUMNS})
        records = []
        for (lang, system), values in rows.items():
            total = overall(values)
            records.append({"language": lang, "system": system,
                            **{c: values.get(c, np.nan) for c in TABLE2_COLUMNS},
                            "overall": np.nan if total is None else total})
        frame = pd.DataFrame(records, columns=["language", "system", *TABLE2_COLUMNS, "overall"])
        display = frame.rename(columns=self.HEADERS).set_index(["language", "system"])
        display.index = pd.Index([f"{lang} · {sysname}" for lang, sysname in display.index],
                                 name="language · system")
        out = [ReportTable(
            "ultratool_table2", "UltraTool Table 2: main results", frame, display,
            note="One row per language and system; each column comes from the run of that "
                 "dimension. Overall is the mean of the nine columns (paper Table 2), shown only "
                 "when all nine were run; planning needs the judge.")]
        for task, dims in self._judge_dimensions().items():
            judged = [r for r in runs if any(k in r.metrics() for k, _ in dims[:-1])]
            if not judged:
                continue
            recs = [{"language": r.config.subset, "system": systems[id(r)],
                     **{k: r.metrics().get(k, np.nan) for k, _ in dims}} for r in judged]
            jframe = pd.DataFrame(recs, columns=["language", "system", *[k for k, _ in dims]])
            jdisplay = jframe.rename(columns=dict(dims))
            jdisplay.index = pd.Index([f"{a} · {b}" for a, b in
                                       zip(jframe["language"], jframe["system"], strict=True)],
                                      name="language · system")
            jdisplay = jdisplay.drop(columns=["language", "system"])
            out.append(ReportTable(
                f"ultratool_judge_{task}",
                f"UltraTool {task.replace('_', ' ')}: judge score per dimension (Figure 5)",
                jframe, jdisplay, note="Judge scores 1-10 shown x10 (0-100); a judge failure "
                "or a missing answer counts 0."))
        return out + super().tables(benchmark, runs)

    def figures(self, benchmark: str, runs: Sequence[RunData],
                out_dir: Path) -> list[ReportFigure]:
        out: list[ReportFigure] = []
        systems = system_labels(runs)
        for task, dims in self._judge_dimensions().items():
            judged = [r for r in runs if any(k in r.metrics() for k, _ in dims[:-1])]
            if not judged:
                continue
            fig = Figure(figsize=(1.3 * len(dims) + 3, 3.8))
            ax = fig.add_subplot()
            _grouped_bars(ax, [name.replace(" ", "\n") for _, name in dims],
                          {f"{systems[id(r)]} [{r.config.subset}]":
                           [r.metrics().get(k, np.nan) for k, _ in dims] for r in judged})
            ax.set_ylabel("judge score x10")
            ax.set_title(f"UltraTool {task.replace('_', ' ')}: judge dimensions per model")
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
            path = _save(fig, out_dir / f"ultratool_judge_{task}.png")
            out.append(ReportFigure(path, f"UltraTool {task.replace('_', ' ')}: judge "
                                          "dimensions per model (paper Figure 5)"))
        return out + super().figures(benchmark, runs, out_dir)


class AppBenchLayout(Layout):
    """AppBench: Table 3 (F1 app, F1 API, success per category), Table 11 (EM), Table 4 (error
    analysis), Figure 4 (success by dependency scale, per run) and Figure 5 (strategies per
    category, per model), then the generic part."""

    MAIN = (("app_f1", "F1 app"), ("api_f1", "F1 API"), ("success", "Succ"))
    EM = (("app_em", "APP"), ("api_em", "API"))
    ERRORS = (("key_error_independent", "Key I"), ("key_error_dependent", "Key D"),
              ("value_error_independent", "Value I"), ("value_error_dependent", "Value D"),
              ("value_error_time_share", "T share"), ("value_error_space_share", "S share"))
    SCALE_METRIC = re.compile(r"^success_p(\d+)_s([0-9.]+)$")

    def _categories(self, runs: Sequence[RunData]) -> list[str]:
        from tooleval_agents.appbench.names import CATEGORIES

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

    def tables(self, benchmark: str, runs: Sequence[RunData]) -> list[ReportTable]:
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
        return out + super().tables(benchmark, runs)

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
                     "success": sum(v) / len(v)} for (p, s), v in sorted(cells.items())]
        # No per-example labels: the summary's success_p{P}_s{S} metrics (no sample counts).
        if run.path is None or not (run.path / "summary.json").is_file():
            return []
        out = []
        for name, value in RunDir(run.path).read_summary().metrics.items():
            m = self.SCALE_METRIC.match(name)
            if m:
                out.append({"parallel": int(m.group(1)), "sequential": float(m.group(2)),
                            "samples": np.nan, "success": value})
        return sorted(out, key=lambda c: (c["parallel"], c["sequential"]))

    def _scale_frame(self, runs: Sequence[RunData]) -> pd.DataFrame:
        recs = [{"run": r.label, **cell} for r in runs for cell in self._scale_cells(r)]
        return pd.DataFrame(recs, columns=["run", "parallel", "sequential", "samples",
                                           "success"])

    def figures(self, benchmark: str, runs: Sequence[RunData],
                out_dir: Path) -> list[ReportFigure]:
        out = [f for r in runs if (f := self._heatmap(r, out_dir)) is not None]
        bars = self._strategy_bars(runs, out_dir)
        if bars is not None:
            out.append(bars)
        return out + super().figures(benchmark, runs, out_dir)

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
        path = _save(fig, out_dir / f"appbench_scale_{run_file_stem(run)}.png")
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
        suffix = _disambiguators(runs)
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
                _grouped_bars(ax, [c.upper() for c in cats], {
                    strategy: [by_key[(strategy, c)].metrics().get(metric, np.nan)
                               if (strategy, c) in by_key else np.nan for c in cats]
                    for strategy in strategies}, colors=colors)
                ax.set_title(f"{model}: {label}", fontsize=9)
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.legend(handles, labels, title="strategy", fontsize=8, title_fontsize=8,
                   loc="outside right upper")
        path = _save(fig, out_dir / "appbench_strategies.png")
        return ReportFigure(path, "Strategies (e.g. hierarchical vs flat) per category and "
                                  "model (paper Figure 5)")


LAYOUTS: dict[str, Layout] = {"ultratool": UltraToolLayout(), "appbench": AppBenchLayout()}
"""Paper-style layouts by benchmark name; others get the generic :class:`Layout`."""


def layout_for(benchmark: str) -> Layout:
    """The benchmark's layout, else the generic one."""
    return LAYOUTS.get(benchmark, Layout())


# ------------------------------------------------------------------------------------- report

def _runs_frame(runs: Sequence[RunData]) -> pd.DataFrame:
    systems = system_labels(runs)
    return pd.DataFrame([{
        "run": r.label, "system": systems[id(r)], "path": str(r.path) if r.path else "",
        "benchmark": r.config.benchmark,
        "task": r.config.task, "subset": r.config.subset, "strategy": r.config.strategy,
        "model": r.config.model.get("spec"),
        "scoring": ", ".join(f"{k}={v}" for k, v in sorted(r.config.scoring_options.items())),
        "judge": (r.config.judge or {}).get("spec"),
        "scored": len(r.scores),
        "model_errors": sum(x.status == "model_error" for x in r.results.values()),
        "infra_errors": r.infra_errors, "rescored": r.rescored,
    } for r in runs])


def write_report(runs: Sequence[Path | str | RunDir | RunData], out_dir: Path | str, *,
                 n_boot: int = 2000, seed: int = 0, metrics: Sequence[str] | None = None,
                 rescore: bool = False, scoring_options: Mapping[str, Any] | None = None,
                 data_dir: Path | str | None = None) -> Report:
    """Write ``report.md``, the CSV tables and the PNG figures of ``runs`` into ``out_dir``.

    Args:
        runs: run directories (or loaded runs).
        out_dir: created if needed; files of the same names are replaced.
        n_boot, seed: the paired bootstrap of :func:`~tooleval_agents.compare.compare`.
        metrics: metrics of the difference table (default all; the Markdown then shows each
            benchmark's headline metrics and ``differences.csv`` all of them).
        rescore, scoring_options, data_dir: score the stored outputs again (see
            :func:`~tooleval_agents.compare.load_run`); ``scoring_options`` need ``rescore``
            (ValueError otherwise) and show in the row names and ``runs.csv``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = [load_run(r, rescore=rescore, scoring_options=scoring_options, data_dir=data_dir)
            for r in runs]
    comparison = compare(data, metrics=metrics, n_boot=n_boot, seed=seed)
    report = Report(out_dir=out, markdown=out / "report.md", comparison=comparison)

    def csv(name: str, frame: pd.DataFrame, *, index: bool) -> str:
        path = out / f"{name}.csv"
        frame.to_csv(path, index=index)
        report.csv.append(path)
        return path.name

    runs_frame = _runs_frame(data)
    md = ["# Evaluation report", "",
          f"Generated {now()} from {len(data)} run(s); scores are the runs' stored per-example "
          + ("scores re-computed from their stored outputs." if rescore else "score dumps."),
          "", "## Runs", "", markdown_table(runs_frame.drop(columns=["path"]), index=False), "",
          f"CSV: [runs.csv]({csv('runs', runs_frame, index=False)}), all metrics of all runs: "
          f"[metrics.csv]({csv('metrics', comparison.table, index=True)})", ""]

    groups: dict[str, list[RunData]] = {}
    for run in data:
        groups.setdefault(run.config.benchmark, []).append(run)
    for benchmark, group in groups.items():
        layout = layout_for(benchmark)
        md += [f"## {benchmark}", ""]
        for table in layout.tables(benchmark, group):
            name = csv(table.name, table.frame, index=table.frame.index.name is not None)
            shown = table.display if table.display is not None else table.frame
            md += [f"### {table.title}", "", markdown_table(shown), ""]
            if table.note:
                md += [f"*{table.note}*", ""]
            md += [f"CSV: [{name}]({name})", ""]
        for figure in layout.figures(benchmark, group, out):
            report.figures.append(figure.path)
            md += [f"### {figure.title}", "", f"![{figure.title}]({figure.path.name})", ""]
            if figure.note:
                md += [f"*{figure.note}*", ""]

    diffs = comparison.differences[comparison.differences["n_examples"] > 0]
    if not diffs.empty:
        csv("differences", comparison.differences, index=False)
        shown = diffs
        if not metrics:
            headline = {m for r in data for m in r.scorer.headline}
            shown = diffs[diffs["metric"].isin(headline)]
        level = round(100 * comparison.confidence)
        frame = pd.DataFrame({
            "run_a": shown["run_a"], "run_b": shown["run_b"], "metric": shown["metric"],
            "a": shown["a"], "b": shown["b"], "b - a": shown["diff"],
            f"{level}% CI": [f"[{fmt(lo)}, {fmt(hi)}]" for lo, hi in
                             zip(shown["ci_low"], shown["ci_high"], strict=True)],
            "CI excludes 0": shown["significant"], "examples": shown["n_examples"]})
        md += ["## Paired differences", "",
               f"Paired bootstrap over the examples both runs scored ({comparison.n_boot} "
               f"resamples, seed {comparison.seed}); pooled metrics recomputed per resample."
               + ("" if metrics else " Headline metrics shown; every metric is in "
                  "[differences.csv](differences.csv)."), "",
               markdown_table(frame, index=False), ""]
    csv("costs", comparison.costs, index=True)
    md += ["## Cost per example", "", markdown_table(comparison.costs), "",
           "*Tokens and model calls: means over every recorded example, infra errors "
           "included (as in each run's summary.json); latency: mean over the scored "
           "examples.*", ""]
    if comparison.notes:
        md += ["## Notes", "", *[f"- {n}" for n in comparison.notes], ""]
    report.markdown.write_text("\n".join(md), encoding="utf-8")
    return report
