"""Reports over finished runs: Markdown, CSV tables and PNG figures in one directory.

:func:`write_report` loads the runs (stored score dumps; ``rescore=True`` scores the stored
outputs again), compares them (:func:`~tooleval_agents.results.compare.compare`) and writes:

* ``report.md`` -- runs, per benchmark its tables and figures, the paired differences with
  bootstrap CIs, cost per example and notes;
* ``metrics.csv`` (metric x run), ``differences.csv``, ``costs.csv``, ``runs.csv`` and one CSV
  per benchmark table (full precision; the Markdown rounds to 2 decimals);
* PNG figures (matplotlib, Agg: no display needed).

Layouts: a benchmark's paper-style tables and figures come from its declaration
(:meth:`~tooleval_agents.registry.Benchmark.report_tables` and ``report_figures``); every
benchmark then gets the generic :class:`Layout`: its metric x run table and a bar chart of its
headline metrics.

Example::

    report = write_report(["runs/a", "runs/b"], "reports/ab", n_boot=2000)
    report.markdown.read_text()
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from tooleval_agents.data.jsonio import atomic_write_text, writing
from tooleval_agents.data.paths import inside
from tooleval_agents.registry import ReportFigure, ReportTable, benchmarks
from tooleval_agents.results.compare import (
    Comparison,
    RunData,
    compare,
    load_run,
    run_interval,
)
from tooleval_agents.results.compare_view import run_traits
from tooleval_agents.results.records import RunConfig, now
from tooleval_agents.results.robustness import curve_display, curve_figure, fault_curves
from tooleval_agents.results.rundir import RunDir

DPI = 120


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
    """A row name for paper-style tables: ``model (strategy[, agent][, scoring options][,
    tool faults])``, e.g. ``reference (tools, faults=0.1)``: the words ``compare`` uses."""
    model = config.model.get("spec") or config.model.get("name") or "?"
    traits = run_traits(config)
    extra = [config.strategy, *([traits["agent"]] if traits["agent"] else []),
             *(f"{k}={v}" for k, v in sorted(config.scoring_options.items())),
             *([traits["faults"]] if traits["faults"] else [])]
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


EXTRA_TRAITS = ("options", "judge", "epochs")
"""What a system's name adds to :func:`system_label` when it differs between the runs of a
report (strategy options, judge, ``epochs=3``), in :func:`run_traits`' words."""


def _clashing(runs: Sequence[RunData], name: dict[int, str]) -> list[list[RunData]]:
    """The runs of each name and benchmark of which two are over one split (they would
    share a cell of a paper-style table), each group in the runs' order."""
    per_split: dict[tuple[str, str, str, str], int] = {}
    for run in runs:
        key = (name[id(run)], run.config.benchmark, run.config.task, run.config.subset)
        per_split[key] = per_split.get(key, 0) + 1
    clashing = {(key[0], key[1]) for key, n in per_split.items() if n > 1}
    groups: dict[tuple[str, str], list[RunData]] = {}
    for run in runs:
        if (name[id(run)], run.config.benchmark) in clashing:
            groups.setdefault((name[id(run)], run.config.benchmark), []).append(run)
    return list(groups.values())


def disambiguators(runs: Sequence[RunData]) -> dict[int, str]:
    """What :func:`system_labels` appends to each run's :func:`system_label` (by ``id``), for
    runs of one name of which two are over one split: the traits of :data:`EXTRA_TRAITS` that
    differ between them (`` epochs=3``), then the part of their folder that tells them apart
    (`` [a]``; never a part they share), else a number (`` #2``)."""
    traits = {id(r): run_traits(r.config) for r in runs}
    suffix = {id(r): "" for r in runs}
    for group in _clashing(runs, {id(r): system_label(r.config) for r in runs}):
        differ = [k for k in EXTRA_TRAITS if len({traits[id(r)][k] for r in group}) > 1]
        for run in group:
            suffix[id(run)] = "".join(f" {traits[id(run)][k]}" for k in differ
                                      if traits[id(run)][k])
    named = {id(r): system_label(r.config) + suffix[id(r)] for r in runs}
    for group in _clashing(runs, named):
        where = {id(r): str(r.path.parent) if r.path is not None else r.label for r in group}
        if len(set(where.values())) > 1:  # folders tell them apart (a shared one would not)
            tails = _distinct_tails(list(where.values()))
            for run in group:
                suffix[id(run)] += f" [{tails[where[id(run)]]}]"
    seen: dict[tuple[str, str, str, str], int] = {}
    for run in runs:
        key = (system_label(run.config) + suffix[id(run)], run.config.benchmark,
               run.config.task, run.config.subset)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            suffix[id(run)] += f" #{seen[key]}"
    return suffix


def system_labels(runs: Sequence[RunData]) -> dict[int, str]:
    """The one name of each run (by ``id(run)``) in a report's tables and figures: paper-style
    tables put the runs of one system over several tasks or subsets in one row under it.

    :func:`system_label`, then what else differs between the runs (``epochs=3``, a judge,
    strategy options). Runs that still share a name over one split (other data, or simply
    another results directory) get the part of their results directory's parent that tells
    them apart (``runs/a/<experiment>`` -> ``[a]``), so a system's runs stay in one row; runs
    that still share a row (the same directory given twice) get ``#2``, ``#3``...
    """
    suffix = disambiguators(runs)
    return {id(r): system_label(r.config) + suffix[id(r)] for r in runs}


SPLIT_TRAITS = ("benchmark", "task", "subset")


def run_names(runs: Sequence[RunData]) -> dict[int, str]:
    """The one name of each run (by ``id(run)``) wherever a report lists runs: its system's
    name (:func:`system_labels`), after the split when the runs are over several
    (``sm reference (hierarchical) epochs=3``)."""
    systems = system_labels(runs)
    traits = {id(r): run_traits(r.config) for r in runs}
    differ = [k for k in SPLIT_TRAITS if len({traits[id(r)][k] for r in runs}) > 1]
    return {id(r): " ".join([*(traits[id(r)][k] for k in differ), systems[id(r)]])
            for r in runs}


def slug(text: str) -> str:
    """A file-name-safe form of a label."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:80] or "run"


def run_file_stem(run: RunData) -> str:
    """A file-name stem for one run's figure: a readable :func:`slug` of its label plus a
    short hash of its full path and label (slugs of long labels are cut and can collide)."""
    digest = hashlib.sha256(f"{run.path}\0{run.label}".encode()).hexdigest()[:10]
    return f"{slug(run.label)[:60]}_{digest}"


def fmt(value: Any) -> str:
    """A cell for Markdown: 2 decimals, ``n/a`` for a metric not run or with nothing to count."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
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


def save_figure(fig: Figure, path: Path) -> Path:
    """Write ``fig`` as a PNG at ``path`` (an error naming ``path`` when the disk is full)."""
    with writing(path):
        fig.savefig(path, format="png", dpi=DPI, bbox_inches="tight")
    return path


def grouped_bars(ax: Any, groups: Sequence[str], series: Mapping[str, Sequence[float]], *,
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
    """The generic layout, shown for every benchmark after its own tables and figures: the
    metric x run table of the benchmark's runs and a bar chart of its headline metrics."""

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
        grouped_bars(ax, metrics, {f"{r.label} (n={n_of(r)})": [r.metrics().get(m, np.nan)
                                                                for m in metrics]
                                    for r in runs})
        ax.set_ylabel("score (0-100)")
        ax.set_title(f"{benchmark}: headline metrics")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        path = save_figure(fig, inside(out_dir, f"{benchmark}_headline.png",
                                       what="report figure"))
        return [ReportFigure(path, f"{benchmark}: headline metrics per run")]


def figure_names(runs: Sequence[RunData]) -> dict[int, str]:
    """A bar's name (by ``id(run)``): the run's name in the report's tables
    (:func:`system_labels`), so a run reads the same in a table and in a figure."""
    return system_labels(runs)


def headline_by_split(benchmark: str, runs: Sequence[RunData], out_dir: Path, *,
                      n_boot: int = 1000, seed: int = 0) -> list[ReportFigure]:
    """The one figure a report shows by default: the first headline metric per split (in the
    benchmark's declared order) and system, with 95% bootstrap intervals; value labels only
    while the bars are wide enough for them."""
    metric = next((m for r in runs for m in r.scorer.headline if m in r.metrics()), None)
    if metric is None:
        return []
    bench = benchmarks().get(benchmark)
    declared = {(s.task, s.subset): i for i, s in enumerate(bench.splits())} if bench else {}
    keys = sorted({(r.config.task, r.config.subset) for r in runs},
                  key=lambda k: (declared.get(k, len(declared)), k))
    tasks = {t for t, _ in keys}
    groups = [sub if len(tasks) == 1 else f"{task} {sub}" for task, sub in keys]
    names = figure_names(runs)
    systems = list(dict.fromkeys(names[id(r)] for r in runs))
    width = 0.8 / len(systems)
    fig = Figure(figsize=(min(10.0, 2.0 + len(keys) * (0.6 + 0.4 * len(systems))), 3.6))
    ax = fig.add_subplot()
    for k, system in enumerate(systems):
        xs, ys, errs = [], [], []
        for g, key in enumerate(keys):
            run = next((r for r in runs if names[id(r)] == system
                        and (r.config.task, r.config.subset) == key), None)
            value = run.metrics().get(metric, math.nan) if run else math.nan
            if run is None or value != value:
                continue
            ci = run_interval(run, metric, n_boot=n_boot, seed=seed)
            xs.append(g - 0.4 + width * (k + 0.5))
            ys.append(value)
            errs.append((value - ci[0], ci[1] - value) if ci else (0.0, 0.0))
        bars = ax.bar(xs, ys, width, label=system,
                      yerr=np.array(errs).T if errs else None, capsize=2)
        if len(systems) <= 4:  # narrower bars would overlap their labels
            for bar, y in zip(bars, ys, strict=True):
                ax.annotate(f"{y:.0f}", (bar.get_x() + bar.get_width() / 2, 1),
                            ha="center", va="bottom", fontsize=7, color="white")
    ax.set_xticks(np.arange(len(keys)), groups)
    ax.set_ylim(0, 105)
    ax.set_ylabel(f"{metric} (0-100)")
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(f"{benchmark}: {metric} per split, 95% CI")
    if len(systems) > 1:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    path = save_figure(fig, inside(out_dir, f"{benchmark}_{slug(metric)}_by_split.png",
                                   what="report figure"))
    return [ReportFigure(path, f"{benchmark}: {metric} per split and system",
                         note="Bars: each run over its scored examples; whiskers: 95% "
                              "bootstrap intervals over examples.")]


# ------------------------------------------------------------------------------------- report

MANIFEST = ".tooleval-report.json"
"""The files a report wrote into its folder: the next report there replaces those (stale
figures of runs no longer in it included) and leaves every other file alone."""


def n_of(run: RunData) -> str:
    """The examples a run scored, as the run counts them: ``"30 of 200"`` for a run over part
    of its split, ``"200"`` otherwise; with ``--epochs`` the examples per epoch times the epochs
    (``"5 × 3 epochs"``, never 15 of 5), and the attempts when some are missing."""
    n, total, epochs = len(run.scores), run.config.dataset.total, run.config.epochs
    examples = len({run.results[i].index for i in run.scores if i in run.results}) \
        if epochs > 1 else n
    said = f"{examples} of {total}" if total and total != examples else str(examples)
    if epochs <= 1:
        return said
    attempts = "" if n == examples * epochs else f" ({n} attempts)"
    return f"{said} × {epochs} epochs{attempts}"


def _n_note(runs: Sequence[RunData]) -> str:
    counts = {id(r): n_of(r) for r in runs}
    partial = any(" of " in n for n in counts.values())
    return ("*n (scored examples" + (" of the split" if partial else "") + "): "
            + "; ".join(f"{r.label} {counts[id(r)]}" for r in runs) + "*")


def _clear_previous(out: Path) -> None:
    manifest = out / MANIFEST
    if not manifest.is_file():
        return
    try:
        names = json.loads(manifest.read_text(encoding="utf-8"))
    except ValueError:
        return
    for name in names if isinstance(names, list) else []:
        path = out / str(name)
        if path.parent == out and path.is_file():  # only files it wrote, at its top level
            path.unlink()


def _runs_frame(runs: Sequence[RunData]) -> pd.DataFrame:
    systems = system_labels(runs)
    return pd.DataFrame([{
        "run": r.label, "system": systems[id(r)],
        "directory": r.path.name if r.path else r.config.experiment,
        "path": str(r.path) if r.path else "",
        "benchmark": r.config.benchmark,
        "task": r.config.task, "subset": r.config.subset, "strategy": r.config.strategy,
        "model": r.config.model.get("spec"),
        "scoring": ", ".join(f"{k}={v}" for k, v in sorted(r.config.scoring_options.items())),
        "judge": (r.config.judge or {}).get("spec"),
        "scored": len(r.scores), "n": n_of(r),
        "model_errors": sum(x.status == "model_error" for x in r.results.values()),
        "infra_errors": r.infra_errors, "rescored": r.rescored,
    } for r in runs])


def write_report(runs: Sequence[Path | str | RunDir | RunData], out_dir: Path | str, *,
                 n_boot: int = 2000, seed: int = 0, metrics: Sequence[str] | None = None,
                 rescore: bool = False, scoring_options: Mapping[str, Any] | None = None,
                 data_dir: Path | str | None = None, all_figures: bool = False) -> Report:
    """Write ``report.md``, the CSV tables and the PNG figures of ``runs`` into ``out_dir``.

    Args:
        runs: run directories (or loaded runs).
        out_dir: created if needed; files of the same names are replaced.
        n_boot, seed: the paired bootstrap of :func:`~tooleval_agents.results.compare.compare`.
        metrics: metrics of the difference table (default all; the Markdown then shows each
            benchmark's headline metrics and ``differences.csv`` all of them).
        rescore, scoring_options, data_dir: score the stored outputs again (see
            :func:`~tooleval_agents.results.compare.load_run`); ``scoring_options`` need ``rescore``
            (ValueError otherwise) and show in the row names and ``runs.csv``.
        all_figures: every figure of every layout; by default one per benchmark (its first
            headline metric per split and system, with intervals).
    """
    out = Path(out_dir)
    data = [load_run(r, rescore=rescore, scoring_options=scoring_options, data_dir=data_dir)
            for r in runs]
    names = run_names(data)
    for run in data:  # one name per run in every table, note and figure of the report
        run.label = names[id(run)]
    comparison = compare(data, metrics=metrics, n_boot=n_boot, seed=seed)
    report = Report(out_dir=out, markdown=out / "report.md", comparison=comparison)
    created = not out.exists()  # the folder is made once the runs are read, not before
    with writing(out):
        out.mkdir(parents=True, exist_ok=True)
    try:
        _clear_previous(out)
        _write_files(report, comparison, data, metrics, rescore=rescore,
                     all_figures=all_figures, n_boot=n_boot, seed=seed)
    except BaseException:  # a report that failed leaves no folder of its own behind
        if created:
            _remove_written(report)
        raise
    return report


def _remove_written(report: Report) -> None:
    """Undo a failed report in a folder it made: the files it wrote, then the folder if
    nothing else is in it (a failed ``report runs/*`` must not leave ``runs/report/``, which
    the next glob would take for a run)."""
    for path in [report.markdown, *report.csv, *report.figures,
                 report.out_dir / MANIFEST]:
        path.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        report.out_dir.rmdir()


def _write_files(report: Report, comparison: Comparison, data: Sequence[RunData],
                 metrics: Sequence[str] | None, *, rescore: bool, all_figures: bool,
                 n_boot: int, seed: int) -> None:
    """The report's Markdown, CSV tables, figures and manifest, into its folder."""
    out = report.out_dir
    csv = _CsvWriter(report)
    runs_frame = _runs_frame(data)
    md = ["# Evaluation report", "",
          f"Generated {now()} from {len(data)} run(s); scores are the runs' stored per-example "
          + ("scores re-computed from their stored outputs." if rescore else "score dumps."),
          "", "## Runs", "", markdown_table(runs_frame.drop(columns=["path"]), index=False), "",
          f"CSV: [runs.csv]({csv('runs', runs_frame, index=False)}), all metrics of all runs: "
          f"[metrics.csv]({csv('metrics', comparison.table, index=True)})", ""]
    md += _benchmark_sections(data, report, csv, all_figures=all_figures, n_boot=n_boot,
                              seed=seed)
    md += _differences_section(data, comparison, csv, metrics)
    csv("costs", comparison.costs, index=True)
    md += ["## Cost per example", "", markdown_table(comparison.costs), "",
           "*Tokens and model calls: means over every recorded example, infra errors "
           "included (as in each run's summary.json); latency: mean over the scored "
           "examples.*", ""]
    if comparison.notes:
        md += ["## Notes", "", *[f"- {n}" for n in comparison.notes], ""]
    atomic_write_text(report.markdown, "\n".join(md))
    written = [report.markdown, *report.csv, *report.figures]
    atomic_write_text(out / MANIFEST, json.dumps(sorted({p.name for p in written})))


class _CsvWriter:
    """Writes a report's CSV tables into its folder (names checked: they come from runs)."""

    def __init__(self, report: Report) -> None:
        self.report = report

    def __call__(self, name: str, frame: pd.DataFrame, *, index: bool) -> str:
        path = inside(self.report.out_dir, f"{name}.csv", what="report table")
        with writing(path):
            frame.to_csv(path, index=index)
        self.report.csv.append(path)
        return path.name


def _benchmark_sections(data: Sequence[RunData], report: Report, csv: _CsvWriter, *,
                        all_figures: bool, n_boot: int, seed: int) -> list[str]:
    """One section per benchmark: its own tables and figures, then the generic ones."""
    md: list[str] = []
    groups: dict[str, list[RunData]] = {}
    for run in data:
        groups.setdefault(run.config.benchmark, []).append(run)
    generic = Layout()
    for benchmark, group in groups.items():
        bench = benchmarks().get(benchmark)  # a run of a benchmark no longer installed: generic
        md += [f"## {bench.title or benchmark if bench else benchmark}", ""]
        own_tables = bench.report_tables(group) if bench else []
        for table in [*own_tables, *generic.tables(benchmark, group)]:
            name = csv(table.name, table.frame, index=table.frame.index.name is not None)
            shown = table.display if table.display is not None else table.frame
            md += [f"### {table.title}", "", markdown_table(shown), "", _n_note(group), ""]
            if table.note:
                md += [f"*{table.note}*", ""]
            md += [f"CSV: [{name}]({name})", ""]
        figures = headline_by_split(benchmark, group, report.out_dir, n_boot=n_boot, seed=seed)
        if all_figures:
            figures += bench.report_figures(group, report.out_dir) if bench else []
            figures += generic.figures(benchmark, group, report.out_dir)
        for figure in figures:
            report.figures.append(figure.path)
            md += [f"### {figure.title}", "", f"![{figure.title}]({figure.path.name})", "",
                   _n_note(group), ""]
            if figure.note:
                md += [f"*{figure.note}*", ""]
        md += _fault_curve(benchmark, group, report, csv, n_boot=n_boot, seed=seed)
    return md


def _fault_curve(benchmark: str, runs: Sequence[RunData], report: Report, csv: _CsvWriter,
                 *, n_boot: int, seed: int) -> list[str]:
    """The robustness curves (:mod:`~tooleval_agents.results.robustness`) when the runs
    differ by tool-fault rate, one per headline metric: its figure, its points as a table and
    ``<benchmark>_fault_curve.csv`` (``<benchmark>_fault_curve_<metric>.csv`` each, when the
    runs' tasks have several headline metrics)."""
    curves = fault_curves(runs, n_boot=n_boot, seed=seed)
    return [line for points in curves
            for line in _one_fault_curve(benchmark, points, report, csv, several=len(curves) > 1)]


def _one_fault_curve(benchmark: str, points: pd.DataFrame, report: Report, csv: _CsvWriter,
                     *, several: bool) -> list[str]:
    stem = f"{benchmark}_fault_curve" + (f"_{slug(str(points['metric'].iloc[0]))}"
                                         if several else "")
    name = csv(stem, points, index=False)
    path = save_figure(curve_figure(benchmark, points),
                       inside(report.out_dir, f"{stem}.png", what="report figure"))
    report.figures.append(path)
    title = f"{benchmark}: {points['metric'].iloc[0]} against the tool-fault rate"
    return [f"### {title}", "", f"![{title}]({path.name})", "",
            markdown_table(curve_display(points)), "",
            "*One line per system; x: the run's `--tool-faults` rate (0: no faults); "
            "whiskers and CI: 95% bootstrap intervals over examples.*", "",
            f"CSV: [{name}]({name})", ""]


def _differences_section(data: Sequence[RunData], comparison: Comparison, csv: _CsvWriter,
                         metrics: Sequence[str] | None) -> list[str]:
    diffs = comparison.differences[comparison.differences["n_examples"] > 0]
    if diffs.empty:
        return []
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
    return ["## Paired differences", "",
            f"Paired bootstrap over the examples both runs scored ({comparison.n_boot} "
            f"resamples, seed {comparison.seed}); pooled metrics recomputed per resample."
            + ("" if metrics else " Headline metrics shown; every metric is in "
               "[differences.csv](differences.csv)."), "",
            markdown_table(frame, index=False), ""]
