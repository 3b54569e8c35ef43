"""What ``tooleval run`` says when it ends: a resume's stored results told apart from this
session's work, examples told apart from attempts with ``--epochs``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.cli.run_output import counts_line, paid_line, session_line
from tooleval_agents.results.compare import load_run
from tooleval_agents.results.reports import figure_names

DATA = Path(__file__).resolve().parents[1] / "datasets"


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # one line per message, whatever the terminal


def run(out: Path, *args: str) -> Any:
    result = CliRunner().invoke(app, [
        "run", "appbench", "--task", "plan", "--subset", "ss", "--model", "reference",
        "--data-dir", str(DATA), "--out", str(out), "--no-cache", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_a_resume_counts_this_sessions_work_apart_from_the_stored(tmp_path: Path) -> None:
    first = run(tmp_path, "--limit", "3")
    assert "resumed" not in first  # a new run: every count is this session's
    assert "tokens in/out: " in first and "model calls: 6;" in first
    assert "this session: model calls 6, tokens paid in/out " in first
    again = run(tmp_path, "--limit", "3")
    assert "resumed 3 of 3, ran 0 new, 0 errors" in again
    assert "this session: model calls 0, tokens paid in/out 0/0, cache hits 0, $0.0000" in again
    assert "model calls: 6;" in again  # the directory's answers
    more = run(tmp_path, "--limit", "5")
    assert "resumed 3 of 5, ran 2 new, 0 errors" in more
    assert "this session: model calls 4, " in more
    assert "model calls: 10;" in more
    fewer = run(tmp_path, "--limit", "2")  # runs nothing: the directory's figures, said so
    assert "resumed 2 of 2, ran 0 new, 0 errors (the directory holds 5: its figures are over " \
        "all of them)" in fewer
    assert "examples=5," in fewer and "model calls: 10;" in fewer


def test_epochs_tell_examples_from_attempts(tmp_path: Path) -> None:
    output = run(tmp_path, "--limit", "5", "--epochs", "3")
    assert "5 examples × 3 epochs = 15 attempts, scored=15" in output
    assert "examples=15" not in output and ", epochs=3" not in output  # the name has it


def test_the_lines_from_a_row() -> None:
    row: dict[str, Any] = {"counts": {"examples": 8, "scored": 7, "epochs": 2},
                           "epochs": {"n": 2}}
    assert counts_line(row) == "4 examples × 2 epochs = 8 attempts, scored=7"
    assert counts_line({"counts": {"examples": 4, "scored": 4}}) == "examples=4, scored=4"
    assert session_line({"session": {"resumed": 0, "ran": 4}}) == ""
    said = session_line({"session": {"resumed": 2, "of": 4, "held": 4, "ran": 2, "errors": 1}})
    assert said == "resumed 2 of 4, ran 2 new, 1 error"
    paid = paid_line({"model_calls": 5, "input_tokens": 10, "output_tokens": 2,
                      "cache_hits": 1, "usd": None})
    assert paid == ("this session: model calls 5, tokens paid in/out 10/2, cache hits 1, "
                    "price unknown")


def test_a_multi_split_run_ends_with_one_table_in_the_benchmarks_order(tmp_path: Path,
                                                                       monkeypatch: Any) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    common = ["run", "appbench", "--category", "all", "--model", "noisy-reference:0.3",
              "--limit", "3", "--data-dir", str(DATA), "--out", str(tmp_path), "--no-cache"]
    result = CliRunner().invoke(app, common)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(map(len, lines[:-1])) <= 100  # the results line may wrap on its own
    assert "appbench: 4 runs over 4 splits" in result.output
    order = [line.split("│")[1].strip() for line in lines if line.startswith("│")]
    assert order == ["ss", "sm", "ms", "mm"]  # AppBench's declared (paper) order
    header = next(line for line in lines if "split" in line and "success" in line)
    assert header.index("success") < header.index("95% CI") < header.index("api_f1")
    assert "trajectory_strict" not in result.output  # per-run tables: --all-metrics only
    assert "resumed" not in result.output
    every = CliRunner().invoke(app, [*common, "--all-metrics"])
    assert every.exit_code == 0, every.output
    assert every.output.count("trajectory_strict") == 4
    assert "ss: resumed 3 of 3, ran 0 new, 0 errors" in every.output


def test_compare_names_runs_by_what_differs_and_fits_100_columns(tmp_path: Path,
                                                                 monkeypatch: Any) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    for model in ("reference", "noisy-reference:0.3"):
        run(tmp_path, "--limit", "3", "--model", model)
    run(tmp_path, "--limit", "4", "--model", "reference", "--out", str(tmp_path / "more"))
    dirs = [*sorted(str(p) for p in tmp_path.glob("appbench-*")),
            *(str(p) for p in (tmp_path / "more").glob("appbench-*"))]
    text = CliRunner().invoke(app, ["compare", *dirs, "-m", "success", "--n-boot", "50"])
    assert text.exit_code == 0, text.output
    assert max(map(len, text.output.splitlines())) <= 100
    assert "appbench-plan-ss-hierarc" not in text.output.split("runs:")[0]  # labels, not dirs
    listed = "".join(text.output.split("runs:")[1].split())  # long paths wrap
    assert all(Path(d).name in listed for d in dirs)  # the full names, once, under the tables
    md = CliRunner().invoke(app, ["compare", *dirs, "-m", "success", "--format", "markdown"])
    assert md.exit_code == 0, md.output
    assert "| metric | noisy-reference:0.3 n=3 | reference n=3 | reference n=4 |" in md.output
    as_json = CliRunner().invoke(app, ["compare", *dirs, "--format", "json", "-m", "success"])
    assert as_json.exit_code == 0 and '"differences"' in as_json.output
    bad = CliRunner().invoke(app, ["compare", *dirs, "--format", "xml"])
    assert bad.exit_code == 2


def test_report_and_view_write_under_the_runs_root(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    runs = tmp_path / "runs"
    for model in ("reference", "noisy-reference:0.3"):
        run(runs, "--limit", "2", "--model", model)
    monkeypatch.chdir(tmp_path)  # nothing lands in the working folder
    every = sorted(str(p) for p in runs.iterdir())
    first = CliRunner().invoke(app, ["report", *every, "--n-boot", "20"])
    assert first.exit_code == 0, first.output
    assert (runs / "report" / "report.md").is_file()
    site = CliRunner().invoke(app, ["view", str(runs)])
    assert site.exit_code == 0, site.output
    assert (runs / "site" / "index.html").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs"]
    # runs/* now holds report/ and site/ too: a glob over the root passes over them
    again = CliRunner().invoke(app, ["report", *sorted(str(p) for p in runs.iterdir()),
                                     "--n-boot", "20"])
    assert again.exit_code == 0, again.output
    compared = CliRunner().invoke(app, ["compare", *sorted(str(p) for p in runs.iterdir()),
                                        "--format", "json", "-m", "success"])
    assert compared.exit_code == 0, compared.output
    assert compared.output.count('"experiment"') == 2


def test_report_draws_one_readable_figure_by_default(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for model in ("reference", "noisy-reference:0.3"):
        for category in ("mm", "ss"):
            CliRunner().invoke(app, [
                "run", "appbench", "--category", category, "--model", model, "--limit", "3",
                "--data-dir", str(DATA), "--out", str(runs), "--no-cache"])
    every = sorted(str(p) for p in runs.iterdir())
    assert len(every) == 4
    result = CliRunner().invoke(app, ["report", *every, "--n-boot", "50", "--json"])
    assert result.exit_code == 0, result.output
    figures = [Path(p) for p in json.loads(result.output)["figures"]]
    assert [p.name for p in figures] == ["appbench_success_by_split.png"]
    assert Image.open(figures[0]).size[0] < 1300  # not 3508 px wide
    text = (runs / "report" / "report.md").read_text()
    assert "appbench: success per split and system" in text
    more = CliRunner().invoke(app, ["report", *every, "--n-boot", "50", "--all-figures",
                                    "--json"])
    assert more.exit_code == 0, more.output
    assert len(json.loads(more.output)["figures"]) > 1


def test_the_figure_names_systems_and_orders_splits(tmp_path: Path) -> None:
    for out, model in (("a", "reference"), ("b", "reference"), ("a", "noisy-reference:0.3")):
        run(tmp_path / out, "--limit", "2", "--model", model)
    loaded = [load_run(p) for p in sorted(tmp_path.glob("*/appbench-*"))]
    # the names of the report's tables: a folder only where nothing else tells runs apart
    names = set(figure_names(loaded).values())
    assert names == {"reference (hierarchical) [a]", "reference (hierarchical) [b]",
                     "noisy-reference:0.3 (hierarchical)"}
