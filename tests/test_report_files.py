"""``tooleval report``: n (n of N for a partial run) beside every table and figure, a runs root
expanded, a report folder whose own earlier files are replaced while nothing else is, a glob
that passes over what is not a run, and a failed report that leaves no folder behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import cli
from run_dirs import make_run
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.results import reports
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


def test_a_glob_passes_over_what_is_not_a_run_and_a_failed_report_leaves_no_folder(
        samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = tmp_path / "runs"
    for model in ("reference", "noisy-reference:0.5"):
        make_run(runs, f"appbench-plan-ss-{model}", data_dir=samples, model=model)
    served = runs / "serve-appbench-plan-ss"  # what the MCP guide's `tooleval serve` leaves
    served.mkdir()
    (served / "mcp_calls.jsonl").write_text("")
    (runs / "empty").mkdir()  # e.g. an earlier failed report's folder

    alone = cli("report", served, "--n-boot", "10")  # nothing else given: an error, no folder
    assert alone.exit_code == 2, alone.output
    assert "is not a run directory (no config.json)" in alone.output
    assert not (runs / "report").exists()
    assert [p.name for p in served.iterdir()] == ["mcp_calls.jsonl"]  # no report/ in it

    monkeypatch.setattr(reports, "_differences_section", _full_disk)  # fails mid-writing
    broken = cli("report", *sorted(runs.iterdir()), "--n-boot", "10")
    assert broken.exit_code == 1, broken.output
    assert not (runs / "report").exists()  # nothing half-written, no folder left behind
    monkeypatch.undo()

    every = sorted(runs.iterdir())  # runs/*
    result = cli("report", *every, "--n-boot", "10")
    assert result.exit_code == 0, result.output
    assert f"skipped 2 folders that are not runs (no config.json): {runs / 'empty'}, " \
        f"{served}" in " ".join(result.output.split())
    assert (runs / "report" / "report.md").is_file()
    again = cli("compare", *sorted(runs.iterdir()), "--n-boot", "10", "--json")
    assert again.exit_code == 0, again.output  # runs/report/ now in the glob too: passed over
    assert len(json.loads(again.stdout)["runs"]) == 2
    assert "skipped 2 folders" in again.stderr


def _full_disk(*args: object, **kwargs: object) -> list[str]:
    raise OSError(28, "No space left on device")
