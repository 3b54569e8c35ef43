"""``tooleval report``: n (n of N for a partial run) beside every table and figure, a runs root
expanded, and a report folder whose own earlier files are replaced while nothing else is."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.results.reports import MANIFEST
from tooleval_agents.run.runner import run_experiment


def test_report_shows_n_of_N_and_replaces_only_its_own_files(samples: Path,
                                                            tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    common = {"subset": "ss", "data_dir": samples, "out": runs, "upload": False,
              "cache": False, "progress": False}
    run_experiment("appbench", strategy="hierarchical", model="reference", limit=3, **common)
    run_experiment("appbench", strategy="flat", model="noisy-reference:0.5", **common)
    out = tmp_path / "report"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    first = CliRunner().invoke(app, ["report", str(runs), "--out", str(out), "--n-boot", "50",
                                      "--all-figures"])
    assert first.exit_code == 0, first.output
    text = (out / "report.md").read_text()
    # partial: n of N; each run by its one name (what tells it from the others)
    assert "*n (scored examples of the split): noisy-reference:0.5 (flat) 6; " \
        "reference (hierarchical) 3 of 6*" in text
    assert "(n=3 of 6)" not in text  # the figure legends carry it, not the Markdown
    written = set(json.loads((out / MANIFEST).read_text()))
    assert {"report.md", "runs.csv", "costs.csv"} <= written
    assert "3 of 6" in (out / "runs.csv").read_text()

    second = CliRunner().invoke(app, ["report", str(runs / "appbench-plan-ss-flat-"
                                                         "noisy-reference_0.5"),
                                      "--out", str(out), "--n-boot", "50"])
    assert second.exit_code == 0, second.output
    now = set(json.loads((out / MANIFEST).read_text()))
    gone = written - now
    assert gone and not any((out / name).exists() for name in gone)  # stale files removed
    assert (out / "notes.txt").read_text() == "mine"
    left = {p.name for p in out.iterdir()} - {"notes.txt", MANIFEST}
    assert left == set(json.loads((out / MANIFEST).read_text()))
