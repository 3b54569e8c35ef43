"""Issue 33, case 6: ``report`` and ``compare`` count and name runs as the run does: n of N per
epoch (not "15 of 5"), no "[runs]" folder suffix, one name per run in a report's tables, notes
and figures."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.results.compare import load_run
from tooleval_agents.results.reports import figure_names, system_labels


@pytest.fixture(scope="module")
def runs(samples: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("labels") / "runs"
    for epochs in ("1", "3"):  # the same system, once with --epochs 3, in one folder
        done = CliRunner().invoke(app, [
            "run", "appbench", "--category", "ss", "--model", "reference", "--data-dir",
            str(samples), "--limit", "5", "--epochs", epochs, "--out", str(root),
            "--no-cache"])
        assert done.exit_code == 0, done.output
    return root


def test_report_counts_examples_per_epoch_and_names_each_run_once(runs: Path) -> None:
    paths = sorted(str(p) for p in runs.iterdir())
    done = CliRunner().invoke(app, ["report", *paths, "--n-boot", "20"])
    assert done.exit_code == 0, done.output
    text = (runs / "report" / "report.md").read_text(encoding="utf-8")
    assert "15 of" not in text and "5 of 6 × 3 epochs" in text
    assert "[runs]" not in text and " #2" not in text
    table = pd.read_csv(runs / "report" / "runs.csv").set_index("directory")
    assert set(table["system"]) == {"reference (hierarchical) epochs=1",
                                    "reference (hierarchical) epochs=3"}
    assert list(table["n"].sort_values()) == ["5 of 6", "5 of 6 × 3 epochs"]
    # the figure's bars carry the table's names
    loaded = [load_run(p) for p in paths]
    assert figure_names(loaded) == system_labels(loaded)
    # every note and table of the report names the run so, never by its folder
    assert "epochs=3 5 of 6 × 3 epochs" in text
    assert "appbench-plan-ss-hierarchical-reference" not in text.split("## AppBench")[1]


def test_compare_counts_attempts_per_epoch(runs: Path) -> None:
    done = CliRunner().invoke(app, ["compare", *sorted(str(p) for p in runs.iterdir()),
                                    "--n-boot", "20", "--format", "markdown"])
    assert done.exit_code == 0, done.output
    assert "| epochs=3 | 5 × 3 |" in done.output
    assert "compared on the 5 examples both scored; the other 10 attempts of epochs=3 " \
        "(--epochs 3) are not paired" in done.output
    assert "10 only in" not in done.output
