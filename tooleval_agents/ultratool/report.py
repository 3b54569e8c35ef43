"""UltraTool's report layout: Table 2 and the judge dimensions of Figure 5 (paper-style
tables and figures over finished runs; :mod:`tooleval_agents.results.reports` adds the generic
part)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from tooleval_agents.evaluators.ultratool.judge import DIMENSIONS
from tooleval_agents.evaluators.ultratool.scoring import TABLE2_COLUMNS, overall
from tooleval_agents.results.compare import RunData
from tooleval_agents.results.reports import (
    ReportFigure,
    ReportTable,
    grouped_bars,
    save_figure,
    system_labels,
)


class UltraToolLayout:
    """UltraTool: Table 2 (one row per language and system, the nine metric columns and their
    mean, *Overall*) and the per-dimension judge scores (Figure 5)."""

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
        return {task: [(f"{task}_{d.key}", d.en) for d in dims] + [(task, "Overall")]
                for task, dims in DIMENSIONS.items()}

    def tables(self, runs: Sequence[RunData]) -> list[ReportTable]:
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
        return out

    def figures(self, runs: Sequence[RunData], out_dir: Path) -> list[ReportFigure]:
        out: list[ReportFigure] = []
        systems = system_labels(runs)
        for task, dims in self._judge_dimensions().items():
            judged = [r for r in runs if any(k in r.metrics() for k, _ in dims[:-1])]
            if not judged:
                continue
            fig = Figure(figsize=(1.3 * len(dims) + 3, 3.8))
            ax = fig.add_subplot()
            grouped_bars(ax, [name.replace(" ", "\n") for _, name in dims],
                          {f"{systems[id(r)]} [{r.config.subset}]":
                           [r.metrics().get(k, np.nan) for k, _ in dims] for r in judged})
            ax.set_ylabel("judge score x10")
            ax.set_title(f"UltraTool {task.replace('_', ' ')}: judge dimensions per model")
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
            path = save_figure(fig, out_dir / f"ultratool_judge_{task}.png")
            out.append(ReportFigure(path, f"UltraTool {task.replace('_', ' ')}: judge "
                                          "dimensions per model (paper Figure 5)"))
        return out
