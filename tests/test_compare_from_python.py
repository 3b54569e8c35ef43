"""Comparing from Python: ``tooleval_agents.compare`` and ``run_grid`` (the same engine and the
same planner as ``tooleval compare`` and ``tooleval run``'s sweeps). The README tour's block
runs as written in a fresh folder (nothing fetched, no runs) and prints what the command does;
the blocks of ``docs/results.md`` ("Comparing from Python") and the output they promise are run
and checked by ``tests/test_docs_blocks.py``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from docs_blocks import REPO, section_blocks
from typer.testing import CliRunner

import tooleval_agents
from tooleval_agents.cli import app

DATA = REPO / "datasets"
PAGE = REPO / "docs" / "results.md"
SECTION = "Comparing from Python"


def tour_block() -> str:
    """The README tour's comparison from Python."""
    (tour,) = [code for code in section_blocks(REPO / "README.md", "A five-minute tour",
                                               "python") if "compare(" in code]
    return tour


def run_block(code: str, folder: Path, **environ: str) -> subprocess.CompletedProcess[str]:
    """A block as a user runs it: a script in a folder of their own, nothing fetched, no
    LangSmith settings but ``environ``'s."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLEVAL_DATA_DIR",
                                                                    "LANGSMITH", "LANGCHAIN"))}
    env.update(XDG_CACHE_HOME=str(folder / ".cache"), HOME=str(folder), **environ)
    (folder / "block.py").write_text(code, encoding="utf-8")
    return subprocess.run([sys.executable, "block.py"], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=600)


def test_the_tour_compares_two_strategies_in_under_ten_lines(tmp_path: Path) -> None:
    tour = tour_block()
    assert len(tour.strip().splitlines()) < 10
    assert "compare(" in tour and "flat" in tour and "hierarchical" in tour
    page = section_blocks(PAGE, SECTION, "python")[0]
    assert page.strip() in tour  # the page's block is the tour's (which prints the result)
    done = run_block(tour, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert out.startswith("Metrics (0-100, each run over all its scored examples)")
    assert re.search(r"^success +83\.33 +83\.33$", out, re.M)  # flat, hierarchical
    assert re.search(r"^flat +hierarchical +success +0\.00 +\[0\.00, 0\.00\] +6$", out, re.M)
    assert "more metric(s) not shown (all_metrics=True shows every one)" in out
    tokens = {m.group(1): float(m.group(2)) for m in re.finditer(  # input tokens per example
        r"^(flat|hierarchical) +6 +([0-9.]+) ", out, re.M)}
    assert tokens["hierarchical"] < tokens["flat"] / 4
    assert "using the bundled samples" in done.stderr  # nothing fetched: said once per run
    configs = [json.loads(p.read_text()) for p in (tmp_path / "runs").glob("*/config.json")]
    assert sorted((c["strategy"], c["model"]["spec"], c["dataset"]["source"]) for c in configs
                  ) == [("flat", "noisy-reference:0.3", "sample"),
                        ("hierarchical", "noisy-reference:0.3", "sample")]


def test_the_page_runs_a_grid_and_promises_its_tables() -> None:
    (grid,) = [code for code in section_blocks(PAGE, SECTION, "python") if "run_grid(" in code]
    shown = "\n".join(section_blocks(PAGE, SECTION, "pycon"))
    assert 'models=["reference", "noisy-reference:0.3"]' in grid and '"k": [1, 3]' in grid
    # what the docs test checks the block prints: the four runs, AppBench's headline metrics
    assert shown.count("runs/appbench-plan-ss-few_shot-") == 4
    assert re.search(r"^success +100\.00 +100\.00 +83\.33 +83\.33$", shown, re.M)


def test_run_grid_plans_the_runs_the_cli_sweep_plans(tmp_path: Path) -> None:
    args = ["run", "appbench", "--subset", "ss", "--model", "reference", "--model",
            "noisy-reference:0.5", "--strategy", "few_shot", "-O", "k=1,2", "--limit", "2",
            "--data-dir", str(DATA), "--no-cache", "--json"]
    rows = json.loads(CliRunner().invoke(app, [*args, "--out", str(tmp_path / "cli")]).stdout)
    grid = tooleval_agents.run_grid(
        "appbench", subset="ss", models=["reference", "noisy-reference:0.5"],
        strategies=["few_shot"], options={"k": [1, 2]}, limit=2, data_dir=DATA, cache=False,
        progress=False, out=tmp_path / "py", n_boot=20)
    assert len(rows) == 4
    assert [s.experiment for s in grid.runs] == [r["experiment"] for r in rows]
    assert [s.metrics for s in grid.runs] == [r["metrics"] for r in rows]
    assert list(grid.comparison.table.columns) == [s.experiment for s in grid.runs]
    assert grid.comparison.headline == ["success", "executed_success", "app_f1", "api_f1"]
    assert repr(grid).startswith("4 run(s):\n\nMetrics (0-100")


@pytest.mark.parametrize(("arguments", "error"), [
    ({"strategies": ["flat", "nope"]}, KeyError),
    ({"strategies": ["flat", "few_shot"], "options": {"k": [1]}}, ValueError),
    ({"options": {"k": 3}}, TypeError),
    ({"options": {"nope": [1]}}, ValueError),
    ({"models": ["gpt-4o"]}, ValueError),
    ({"strategy_options": {"k": 1}}, TypeError),
])
def test_run_grid_checks_every_argument_before_any_run(arguments: dict[str, Any],
                                                       error: type[Exception],
                                                       tmp_path: Path) -> None:
    given = {"models": ["reference"], "strategies": ["few_shot"], **arguments}
    with pytest.raises(error):
        tooleval_agents.run_grid("appbench", subset="ss", data_dir=DATA, out=tmp_path,
                                 **given)
    assert list(tmp_path.iterdir()) == []  # nothing ran


def test_compare_takes_summaries_and_shows_the_headline(tmp_path: Path) -> None:
    runs = [tooleval_agents.run_experiment("appbench", subset="sm", strategy=s,
                                           model="noisy-reference:0.5", data_dir=DATA,
                                           out=tmp_path, cache=False, progress=False)
            for s in ("flat", "hierarchical")]
    by_summary = tooleval_agents.compare(runs, n_boot=100)
    by_path = tooleval_agents.compare([r.run_dir for r in runs if r.run_dir], n_boot=100)
    assert by_summary.differences.equals(by_path.differences)
    assert set(by_summary.table.index) > set(by_summary.headline)
    text = repr(by_summary)
    assert "edge_f1" not in text and "success" in text
    assert "edge_f1" in by_summary.to_markdown(all_metrics=True)
    assert by_summary.to_markdown() == by_summary._repr_markdown_()
    # one rendering: the CLI's markdown is the same tables
    cli = CliRunner().invoke(app, ["compare", *(r.run_dir or "" for r in runs), "--n-boot",
                                   "100", "--format", "markdown"]).stdout
    assert cli.split("Runs:")[0] == by_summary.to_markdown().split("Runs:")[0]


def test_the_names_are_public_and_load_on_first_use() -> None:
    names = ["compare", "Comparison", "run_grid", "GridResult", "reference_model",
             "examples_for"]
    code = ("import sys, tooleval_agents as t\n"
            f"assert set({names!r}) <= set(t.__all__)\n"
            "heavy = ('pandas', 'numpy', 'langchain_core', 'langsmith')\n"
            "print([m for m in heavy if m in sys.modules])\n"
            "print(all(getattr(t, n) is not None for n in t.__all__))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split("\n")[:2] == ["[]", "True"]
