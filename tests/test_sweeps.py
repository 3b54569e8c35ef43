"""Sweeps in one command (repeated ``--model`` / ``--strategy``, ``-O k=1,2``), run identity
(options get their own directory), and ``--samples`` / ``--limit`` selections on the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import cli

from tooleval_agents.cli.run import option_grid
from tooleval_agents.results.rundir import RunDir


def test_repeated_models_and_strategies_run_the_grid_and_print_it(samples: Path,
                                                                  tmp_path: Path) -> None:
    args = ("run", "appbench", "--category", "ss", "--model", "reference", "--model",
            "noisy-reference:0.5", "--strategy", "hierarchical", "--strategy", "flat",
            "--limit", "3", "--data-dir", samples, "--out", tmp_path)
    shown = cli(*args)
    assert shown.exit_code == 0, shown.output
    assert "appbench-plan-ss: 4 runs" in shown.output
    assert "tooleval compare" in shown.output
    rows = json.loads(cli(*args, "--json").stdout)
    assert {(r["strategy"], r["model"]) for r in rows} == {
        (s, m) for s in ("hierarchical", "flat") for m in ("reference", "noisy-reference:0.5")}
    assert len({r["run_dir"] for r in rows}) == 4
    assert all(r["counts"]["scored"] == 3 and r["split_examples"] > 3 for r in rows)
    assert all(r["usage"]["model_calls"] > 0 for r in rows)


def test_a_swept_option_gets_a_directory_per_value(samples: Path, tmp_path: Path) -> None:
    result = cli("run", "appbench", "--category", "ss", "--model", "reference", "--strategy",
                 "few_shot", "-O", "k=1,2", "--limit", "2", "--data-dir", samples, "--out",
                 tmp_path, "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    configs = [RunDir(r["run_dir"]).read_config() for r in rows]
    assert [c.strategy_options for c in configs] == [{"k": 1}, {"k": 2}]
    assert len({r["run_dir"] for r in rows}) == 2
    assert all(Path(r["run_dir"]).name.startswith("appbench-plan-ss-few_shot-reference-")
               for r in rows)


def test_limit_then_samples_extend_one_run(samples: Path, tmp_path: Path) -> None:
    base = ("run", "appbench", "--category", "ss", "--model", "reference", "--data-dir",
            samples, "--out", tmp_path, "--no-cache", "--json")
    first = json.loads(cli(*base, "--limit", "2").stdout)
    grown = json.loads(cli(*base, "--limit", "4").stdout)
    assert first["run_dir"] == grown["run_dir"]
    assert grown["counts"]["examples"] == 4
    lines = (Path(grown["run_dir"]) / "examples.jsonl").read_text().splitlines()
    assert sorted(json.loads(x)["index"] for x in lines) == [0, 1, 2, 3]  # 2 new, 2 reused
    picked = json.loads(cli(*base, "--samples", "1,4-5").stdout)
    # the directory's selection grows to 0-5: its one set of numbers covers all of it
    assert picked["counts"]["examples"] == 6 and picked["metrics"]["success"] == 100.0
    assert len((Path(grown["run_dir"]) / "examples.jsonl").read_text().splitlines()) == 6


def test_bad_selections_are_refused_in_one_line(samples: Path, tmp_path: Path) -> None:
    backwards = cli("run", "appbench", "--category", "ss", "--model", "reference",
                    "--samples", "5-3", "--out", tmp_path)
    assert backwards.exit_code == 2
    assert "--samples: range '5-3' runs backwards; write it as 3-5" in backwards.output
    beyond = cli("run", "appbench", "--category", "ss", "--model", "reference",
                 "--samples", "9999", "--data-dir", samples, "--out", tmp_path)
    assert beyond.exit_code == 2 and "Traceback" not in beyond.output
    assert "the split has no example 9999" in beyond.output


def test_option_values_with_commas_sweep_unless_they_are_json() -> None:
    assert option_grid(["ids=[1, 2]"], "-O") == [{"ids": [1, 2]}]
    assert option_grid(["k=1,2", "m=a,b"], "-O") == [
        {"k": 1, "m": "a"}, {"k": 1, "m": "b"}, {"k": 2, "m": "a"}, {"k": 2, "m": "b"}]
    assert option_grid(None, "-O") == [{}]
