"""Repeated sampling (``--epochs``): pass@k / pass^k, spread across attempts, deterministic
attempts of the offline noisy model, re-scoring, and the 95% intervals every summary carries."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from helpers import run as offline_run

from tooleval_agents.results.epochs import EPOCH_KEY, epoch_summary
from tooleval_agents.results.intervals import bootstrap_intervals
from tooleval_agents.results.rescore import rescore_run
from tooleval_agents.results.rundir import RunDir
from tooleval_agents.run.runner import run_experiment

run = partial(offline_run, "appbench", subset="mm", strategy="hierarchical")


def test_three_epochs_give_pass_at_k_and_pass_hat_k_deterministically(samples: Path,
                                                                      tmp_path: Path) -> None:
    first = run(samples, tmp_path / "a", model="noisy-reference:0.3", epochs=3)
    again = run(samples, tmp_path / "b", model="noisy-reference:0.3", epochs=3)
    m = first.metrics
    assert m == again.metrics  # the same attempts on every rerun
    assert m["success_pass^1"] == pytest.approx(m["success"])
    assert m["success_pass^1"] > m["success_pass^3"]
    assert m["success_pass@3"] > m["success_pass@1"]
    assert first.counts["examples"] == 3 * 5 and first.counts["epochs"] == 3
    assert first.epochs["n"] == 3 and first.epochs["sd"]["success"] > 0
    low, high = first.ci["success_pass^3"]  # pass^k has an interval too
    assert low <= m["success_pass^3"] <= high
    results = sorted(first.results(), key=lambda r: (r.index, r.epoch))
    assert [(r.index, r.epoch) for r in results] == [(i, e) for i in range(5) for e in range(3)]
    assert all(EPOCH_KEY not in (r.inputs or {}) for r in results)
    predictions = {}
    for r in results:
        predictions.setdefault(r.index, []).append(r.outputs["prediction"])
    assert any(len({str(p) for p in v}) > 1 for v in predictions.values())  # attempts differ
    # Epoch 0 is the run without epochs: its attempts are the same samples.
    single = {r.index: r.outputs["prediction"] for r in run(
        samples, tmp_path / "c", model="noisy-reference:0.3").results()}
    assert {r.index: r.outputs["prediction"] for r in results if r.epoch == 0} == single
    assert RunDir(first.run_dir).read_config().epochs == 3
    assert Path(first.run_dir).name != Path(run(
        samples, tmp_path / "a", model="noisy-reference:0.3").run_dir).name


def test_an_epochs_run_rescores_to_the_same_summary(samples: Path, tmp_path: Path) -> None:
    summary = run(samples, tmp_path, model="noisy-reference:0.5", epochs=2)
    rescored = rescore_run(summary.run_dir, write=False)
    assert rescored.metrics == summary.metrics
    assert rescored.counts["examples"] == 10


def test_epochs_are_refused_with_upload_before_anything_runs(samples: Path,
                                                             tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="--epochs above 1 runs offline only"):
        run_experiment("appbench", subset="ss", model="reference", data_dir=samples,
                       out=tmp_path, upload=True, epochs=2, progress=False)
    with pytest.raises(ValueError, match="epochs must be >= 1"):
        run(samples, tmp_path, model="reference", epochs=0)


def test_every_summary_metric_has_an_interval_that_holds_it(samples: Path,
                                                             tmp_path: Path) -> None:
    summary = run(samples, tmp_path, model="noisy-reference:0.5")
    assert set(summary.ci) >= {"success", "app_f1"}
    for name, (low, high) in summary.ci.items():
        value = summary.metrics[name]
        assert value is not None and low <= value + 1e-9 and value <= high + 1e-9, name
    assert summary.ci["success"][0] < summary.ci["success"][1]


def test_pass_hat_k_counts_only_examples_with_every_attempt() -> None:
    rows = [(0, {"ok": 100.0}), (0, {"ok": 100.0}), (1, {"ok": 0.0})]  # 1 has one attempt
    metrics, _ = epoch_summary(rows, 2, ["ok"])
    assert metrics["ok_pass^2"] == 100.0
    assert epoch_summary([(0, {"ok": 0.0})], 2, ["ok"])[0]["ok_pass@2"] is None  # n/a
    assert bootstrap_intervals([[1]], lambda gs: {"m": 1.0}) == {}
