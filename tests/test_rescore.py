"""rescore_run(): stored outputs scored again without the agent model; ``tooleval score --run``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from run_dirs import appbench_gold, kv_gold, make_run
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.data.langsmith_datasets import to_examples
from tooleval_agents.registry import get_benchmark
from tooleval_agents.results.records import ExampleResult
from tooleval_agents.results.rescore import (
    RESCORED_SUMMARY,
    parse_options,
    read_rescored,
    rescore_run,
)
from tooleval_agents.results.rundir import RunDir, RunSummary, dataset_hash

REPO = Path(__file__).resolve().parents[1]


def test_unchanged_run_rescores_to_its_summary(tmp_path: Path, samples: Path) -> None:
    run = make_run(tmp_path, "a", subset="mm", data_dir=samples)
    before = (run / "summary.json").read_bytes()
    original = RunDir(run).read_summary()
    summary = rescore_run(run)
    assert summary.metrics == original.metrics
    assert summary.changed == 0 and summary.notes == []
    assert summary.counts["scored"] == original.counts["scored"]
    assert summary.counts["retried"] == 0  # kept from the run's own summary
    assert summary.original_metrics == original.metrics
    assert (run / "summary.json").read_bytes() == before  # never overwritten
    written = read_rescored(run)
    assert written is not None and written.metrics == summary.metrics
    assert written.rescored_at


def test_ultratool_run_rescores_to_its_summary(tmp_path: Path, samples: Path) -> None:
    run = make_run(tmp_path, "u", benchmark="ultratool", task="tool_usage_awareness",
                   subset="en", data_dir=samples, answer=kv_gold, strategy="one_shot")
    assert rescore_run(run, write=False).metrics == RunDir(run).read_summary().metrics
    assert not (run / RESCORED_SUMMARY).exists()


def test_scoring_options_change_the_summary(tmp_path: Path, shared_data: Path) -> None:
    """Gold answers on real SM: strict F1 app 100; the official (paper) scorer caps hits at one
    per sample and gives 45.15."""
    run = make_run(tmp_path, "sm", subset="sm", data_dir=shared_data, source="official")
    assert RunDir(run).read_summary().metrics["app_f1"] == pytest.approx(100.0)
    paper = rescore_run(run, scoring_options={"scoring": "paper"}, data_dir=shared_data)
    assert round(paper.metrics["app_f1"], 2) == 45.15
    assert paper.original_metrics["app_f1"] == pytest.approx(100.0)
    assert paper.scoring_options == {"scoring": "paper"}
    assert paper.changed > 0
    assert read_rescored(run) == paper


def test_infra_errors_stay_excluded_and_counted(tmp_path: Path, samples: Path) -> None:
    run = make_run(tmp_path, "a", subset="ms", data_dir=samples, infra={0, 2})
    summary = rescore_run(run)
    n = len(RunDir(run).results())
    assert summary.counts["infra_errors"] == 2
    assert summary.counts["scored"] == n - 2
    assert summary.metrics["success"] == pytest.approx(100.0)  # gold on the others


def test_model_error_scores_as_empty_answer(tmp_path: Path, samples: Path) -> None:
    run = make_run(tmp_path, "a", data_dir=samples)
    rd = RunDir(run)
    first = next(iter(rd.results().values()))
    # A failed workflow: whatever partial outputs it left, it counts as a wrong answer.
    rd.append(first.model_copy(update={"status": "model_error", "error": "bad output",
                                       "attempt": 2}))
    summary = rescore_run(run, write=False)
    n = len(rd.results())
    assert summary.counts["model_errors"] == 1
    assert summary.metrics["success"] == pytest.approx(100.0 * (n - 1) / n)
    assert summary.changed == 1


def test_other_data_is_refused(tmp_path: Path, samples: Path, shared_data: Path) -> None:
    run = make_run(tmp_path, "a", data_dir=samples)
    with pytest.raises(ValueError, match="not the data the run used"):
        rescore_run(run, data_dir=shared_data)


def test_unknown_example_is_refused(tmp_path: Path, samples: Path) -> None:
    run = make_run(tmp_path, "a", data_dir=samples)
    RunDir(run).append(ExampleResult(example_id="not-an-id", index=99, status="ok",
                                     outputs={"output": ""}))
    with pytest.raises(ValueError, match="not one of the run's"):
        rescore_run(run)


def test_parse_options() -> None:
    assert parse_options(["scoring=paper", "n=2"]) == {"scoring": "paper", "n": 2}
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_options(["scoring"])


def test_cli_score_run_json(tmp_path: Path, samples: Path) -> None:
    run = make_run(tmp_path, "a", subset="sm", data_dir=samples)
    runner = CliRunner()
    result = runner.invoke(app, ["score", "--run", str(run), "--option", "scoring=paper",
                                 "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["written"] == str(run / RESCORED_SUMMARY)
    assert data["summary"]["scoring_options"] == {"scoring": "paper"}
    assert data["summary"]["metrics"]["app_f1"] < data["summary"]["original_metrics"]["app_f1"]
    table = runner.invoke(app, ["score", "--run", str(run), "--no-write"])
    assert table.exit_code == 0, table.output
    assert "app_f1" in table.stdout and "re-scored" in table.stdout


def test_cli_score_group_keeps_subcommands(tmp_path: Path) -> None:
    runner = CliRunner()
    help_text = runner.invoke(app, ["score", "--help"])
    assert help_text.exit_code == 0
    assert "--run" in help_text.stdout and "appbench" in help_text.stdout
    assert "ultratool" in help_text.stdout
    sub = runner.invoke(app, ["score", "appbench", "--help"])
    assert sub.exit_code == 0 and "--predictions" in sub.stdout
    bare = runner.invoke(app, ["score"])
    assert "--run" in bare.output  # no arguments: the group's help
    mixed = runner.invoke(app, ["score", "--run", str(tmp_path), "appbench", "--help"])
    assert mixed.exit_code != 0
    missing = runner.invoke(app, ["score", "--run", str(tmp_path / "nope"), "--json"])
    assert missing.exit_code == 2 and "not a run directory" in missing.output


@pytest.mark.parametrize("command", [["score", "--run"], ["compare", "--rescore"]],
                         ids=["score --run", "compare --rescore"])
def test_an_unknown_scoring_option_is_a_usage_error_and_nothing_is_written(
        tmp_path: Path, samples: Path, command: list[str]) -> None:
    # Options are checked against the benchmark's scoring options (build_scorer's check)
    # for every run before any is re-scored: exit 2, no summary.rescored.json.
    a = make_run(tmp_path, "a", subset="mm", data_dir=samples)
    b = make_run(tmp_path, "b", subset="mm", data_dir=samples)
    args = [*command, str(a)] if command[0] == "score" else [command[0], str(a), str(b),
                                                             command[1]]
    done = CliRunner().invoke(app, [*args, "-O", "bogus=1"])
    assert done.exit_code == 2, done.output
    assert "has no option 'bogus'" in done.output
    assert not (a / RESCORED_SUMMARY).exists() and not (b / RESCORED_SUMMARY).exists()
    good = CliRunner().invoke(app, [*args, "-O", "scoring=paper"])
    assert good.exit_code == 0, good.output


def test_a_scorer_gets_the_users_options_and_the_run_context_apart(tmp_path: Path,
                                                                    samples: Path) -> None:
    # A plugin's typed options model (extra keys forbidden) sees only what the user chose;
    # the data directory and the judge come in the ScoringContext.
    from tooleval_agents import ScoringContext, build_scorer, get_benchmark
    from tooleval_agents.appbench.benchmark import AppBenchBenchmark

    seen: list[tuple[dict, ScoringContext | None]] = []

    class Probe(AppBenchBenchmark):
        def scorer(self, split, *, options=None, context=None):  # type: ignore[no-untyped-def]
            seen.append((dict(options or {}), context))
            return super().scorer(split, options=options, context=context)

    bench = Probe()
    split = get_benchmark("appbench").split("plan", "mm")
    build_scorer(bench, split, {"scoring": "paper"}, ScoringContext(data_dir=samples))
    assert seen == [({"scoring": "paper"}, ScoringContext(data_dir=samples))]


def test_rescored_summary_of_an_earlier_run_is_ignored(tmp_path: Path, samples: Path) -> None:
    run = make_run(tmp_path, "a", data_dir=samples)
    rescore_run(run)
    assert read_rescored(run) is not None
    # The run is started over (--fresh): new config and summary, the old file stays.
    rd = RunDir(run)
    config = rd.read_config()
    rd.write_config(config.model_copy(update={"created_at": "2999-01-01T00:00:00.000+00:00"}))
    rd.write_summary(RunSummary(experiment=config.experiment, metrics={}, counts={}))
    assert (run / RESCORED_SUMMARY).is_file()
    assert read_rescored(run) is None


def test_rescored_summary_is_stale_after_a_resume(tmp_path: Path, samples: Path) -> None:
    run = make_run(tmp_path, "a", data_dir=samples)
    rescore_run(run)
    rd = RunDir(run)
    first = next(iter(rd.results().values()))
    rd.append(first.model_copy(update={"attempt": 2}))
    assert read_rescored(run) is None


def test_old_rescored_file_without_state_falls_back_to_mtimes(tmp_path: Path,
                                                              samples: Path) -> None:
    run = make_run(tmp_path, "a", data_dir=samples)
    rescore_run(run)
    file = run / RESCORED_SUMMARY
    data = json.loads(file.read_text(encoding="utf-8"))
    data.pop("run_state")
    file.write_text(json.dumps(data), encoding="utf-8")
    assert read_rescored(run) is not None  # written after the run's files
    summary = run / "summary.json"
    later = file.stat().st_mtime_ns + 5_000_000_000
    os.utime(summary, ns=(later, later))
    assert read_rescored(run) is None


def test_dataset_hash_lives_in_results_and_rescore_does_not_load_the_runner(
        tmp_path: Path, samples: Path) -> None:
    from tooleval_agents.run import runner
    split = get_benchmark("appbench").split("plan", "sm")
    examples = to_examples(split, samples)
    assert dataset_hash(examples) == runner.dataset_hash(examples)
    run = make_run(tmp_path, "a", subset="sm", data_dir=samples, answer=appbench_gold)
    code = ("import sys; from tooleval_agents.results.rescore import rescore_results; "
            f"rescore_results({str(run)!r}); "
            "print('tooleval_agents.run.runner' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.stdout.strip() == "False"
