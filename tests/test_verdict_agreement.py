"""Issue 33, cases 5 and 7: the viewer's verdict names an injected fault, and never contradicts
the headline metric it explains (``benchmarks/verdict_agreement.py`` over a share of every split
of the real data)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.viewer import build_site
from tooleval_agents.viewer.verdicts import run_verdicts

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from verdict_agreement import measure


def _rows(site: Path) -> list[dict[str, object]]:
    index = next((site / "data").glob("*/index.js")).read_text(encoding="utf-8")
    rows: list[dict[str, object]] = json.loads(index[index.index(",") + 1:index.rindex(")")])
    return rows


def test_the_verdict_of_a_faulted_call_names_the_injected_fault(samples: Path,
                                                                tmp_path: Path) -> None:
    # The command: AppBench MM example 2 met a `malformed` fault in getweather, and
    # its verdict read "missing call `getweather`" (only timeouts read "tool error in ...").
    done = CliRunner().invoke(app, [
        "run", "appbench", "--category", "mm", "--strategy", "tools", "--model", "reference",
        "--data-dir", str(samples), "--tool-faults", "rate=0.3,seed=0",
        "--out", str(tmp_path / "runs"), "--no-cache"])
    assert done.exit_code == 0, done.output
    build_site([tmp_path / "runs"], tmp_path / "site")
    rows = {r["index"]: r for r in _rows(tmp_path / "site")}
    assert rows[2]["why"] == ("injected `malformed` fault in `getweather`; the agent did not "
                              "retry (missing call `getweather`)")
    assert rows[2]["reason"] == "injected fault"
    # every failed example of this run met a fault, of whichever kind, and says so
    failed = [r for r in rows.values() if not r["passed"]]
    assert failed and all(str(r["why"]).startswith("injected `") for r in failed)
    kinds = {str(r["why"]).split("`")[1] for r in failed}
    assert {"malformed", "empty", "timeout"} <= kinds


def test_no_verdict_contradicts_the_headline_metric_on_the_real_data(
        shared_data: Path, tmp_path: Path) -> None:
    counts = measure(shared_data, tmp_path, limit=40)
    ran = [c for c in counts if c.skipped is None]
    assert {c.split for c in ran} >= {
        "appbench/plan/ss", "appbench/plan/mm", "ultratool/tool_usage/en",
        "ultratool/tool_usage/zh", "ultratool/planning/en", "ultratool/raw/zh",
        "ultratool/tool_selection/en"}
    # only the judged task is left out, and it says why
    assert {c.split for c in counts if c.skipped} == {"ultratool/tool_creation/en",
                                                      "ultratool/tool_creation/zh"}
    assert all("judge" in str(c.skipped) for c in counts if c.skipped)
    assert all(c.scored > 0 for c in ran)
    assert [(c.split, c.examples) for c in ran if c.contradictions] == []
    assert sum(c.full_marks_blamed for c in ran) == 0
    # what passes yet differs is said: tool_usage en examples 4 and 38 (file_modify for
    # file_write at step 1.2, ...), which read FAILED before
    usage = next(c for c in ran if c.split == "ultratool/tool_usage/en")
    assert usage.passes_but_differs >= 3
    run_dir = next(tmp_path.glob("ultratool-tool_usage-en-*"))
    said = {r.index: v.reason for r, v in run_verdicts(run_dir)}
    assert said[4] == ("passes tool_usage (arguments per gold step); differs: tool "
                       "`file_modify` for `file_write` at step 1.2")
