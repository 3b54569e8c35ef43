"""compare(): metric table, paired bootstrap CIs, intersections, costs; ``tooleval compare``.

Run directories are built with :mod:`run_dirs` from real scorer outputs (gold, corrupted and
empty answers scored through the registry), so these tests depend only on the run-directory
contract, not on the runner.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from run_dirs import appbench_noisy, empty, make_run
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.data.langsmith_datasets import to_examples
from tooleval_agents.registry import get_benchmark
from tooleval_agents.results import compare as compare_module
from tooleval_agents.results.compare import BLOCK, _draws, compare, load_run
from tooleval_agents.results.compare_view import comparison_markdown, short_labels
from tooleval_agents.results.reports import write_report
from tooleval_agents.results.rundir import RunDir

# ------------------------------------------------------------------------------------- tests

def test_self_comparison_is_zero_with_zero_ci(tmp_path: Path, samples: Path) -> None:
    run = make_run(tmp_path, "a", subset="sm", data_dir=samples, answer=appbench_noisy(0.5))
    result = compare([run, run], n_boot=200, seed=1)
    assert len(result.table.columns) == 2  # the same experiment twice gets two labels
    diffs = result.differences
    assert set(diffs["metric"]) >= {"success", "app_f1", "api_f1"}
    numeric = diffs.dropna(subset=["diff"])
    assert (numeric["diff"] == 0).all()
    assert (numeric["ci_low"] == 0).all() and (numeric["ci_high"] == 0).all()
    assert not numeric["significant"].any()


def test_clearly_better_run_has_ci_excluding_zero(tmp_path: Path, samples: Path) -> None:
    good = make_run(tmp_path, "good", data_dir=samples)
    bad = make_run(tmp_path, "bad", data_dir=samples, answer=empty, model="empty")
    result = compare([bad, good], n_boot=300, seed=0)
    row = result.differences.set_index("metric").loc["success"]
    # Gold answers succeed on every sample and empty ones on none: b - a is exactly 100.
    assert row["diff"] == pytest.approx(100.0)
    assert row["ci_low"] > 0 and row["significant"]
    assert result.table.loc["success", row["run_b"]] == pytest.approx(100.0)
    assert result.table.loc["success", row["run_a"]] == pytest.approx(0.0)


def test_bootstrap_on_real_data_is_seeded_and_separates_noise(
        tmp_path: Path, shared_data: Path) -> None:
    first_120 = range(120)  # enough for a clear CI, quick to score
    gold = make_run(tmp_path, "gold", data_dir=shared_data, source="official", only=first_120)
    noisy = make_run(tmp_path, "noisy", data_dir=shared_data, source="official",
                     answer=appbench_noisy(0.5), model="noisy-reference:0.5", only=first_120)
    runs = [load_run(gold), load_run(noisy)]
    first = compare(runs, metrics=["success", "app_f1"], n_boot=100, seed=7)
    again = compare(runs, metrics=["success", "app_f1"], n_boot=100, seed=7)
    other = compare(runs, metrics=["success", "app_f1"], n_boot=100, seed=8)
    cols = ["diff", "ci_low", "ci_high"]
    assert np.array_equal(first.differences[cols].to_numpy(), again.differences[cols].to_numpy())
    assert not np.array_equal(first.differences[cols].to_numpy(),
                              other.differences[cols].to_numpy())
    success = first.differences.set_index("metric").loc["success"]
    assert success["n_examples"] == 120
    assert success["ci_low"] <= success["diff"] <= success["ci_high"]
    assert success["ci_high"] < 0  # half the answers corrupted: clearly worse than gold
    assert list(first.table.index) == ["success", "app_f1"]


def test_pooled_metric_is_recomputed_per_resample(tmp_path: Path, samples: Path) -> None:
    """A micro-F1 CI comes from aggregate() on each resample: its bounds are values that
    aggregate() can produce on some resample, and the point diff is the full-set diff."""
    a = make_run(tmp_path, "a", subset="mm", data_dir=samples, answer=appbench_noisy(1.0))
    b = make_run(tmp_path, "b", subset="mm", data_dir=samples)
    result = compare([a, b], metrics=["api_f1"], n_boot=400, seed=3)
    row = result.differences.iloc[0]
    ra, rb = load_run(a), load_run(b)
    assert row["diff"] == pytest.approx(rb.metrics()["api_f1"] - ra.metrics()["api_f1"])
    assert row["ci_low"] <= row["diff"] <= row["ci_high"]


def test_different_example_sets_compare_on_intersection(tmp_path: Path,
                                                        samples: Path) -> None:
    full = make_run(tmp_path, "full", data_dir=samples)
    part = make_run(tmp_path, "part", data_dir=samples, answer=empty, model="empty",
                    only={0, 1, 2}, infra={1})
    result = compare([full, part], n_boot=100)
    row = result.differences.set_index("metric").loc["success"]
    assert row["n_examples"] == 2  # examples 0 and 2: 1 is an infra error in "part"
    assert row["only_a"] == len(load_run(full).scores) - 2 and row["only_b"] == 0
    assert any("compared on the 2 examples both scored" in n for n in result.notes)
    assert any("1 infra error(s) excluded" in n for n in result.notes)
    assert result.costs.loc[row["run_b"], "infra_errors"] == 1
    assert result.costs.loc[row["run_b"], "scored"] == 2
    assert result.costs.loc[row["run_b"], "examples"] == 3  # recorded, infra error included


def test_runs_on_other_splits_get_no_paired_difference(tmp_path: Path,
                                                       samples: Path) -> None:
    ss = make_run(tmp_path, "ss", data_dir=samples)
    sm = make_run(tmp_path, "sm", subset="sm", data_dir=samples)
    result = compare([ss, sm], n_boot=50)
    assert result.differences.empty
    assert any("1 pair(s) of runs over different splits" in n for n in result.notes)
    assert list(result.table.columns) == [load_run(ss).label, load_run(sm).label]


def test_costs_are_means_per_recorded_example(tmp_path: Path, samples: Path) -> None:
    """Token means count every recorded example, infra errors included (summary.json's
    definition); make_run records an infra error with no tokens."""
    run = make_run(tmp_path, "a", data_dir=samples, tokens=(1000, 50, 3), infra={0})
    costs = compare([run], n_boot=0).costs.iloc[0]
    n = int(costs["examples"])
    assert costs["scored"] == n - 1 and costs["infra_errors"] == 1
    assert costs["mean_input_tokens"] == pytest.approx(1000 * (n - 1) / n)
    assert costs["mean_output_tokens"] == pytest.approx(50 * (n - 1) / n)
    assert costs["mean_model_calls"] == pytest.approx(3 * (n - 1) / n)
    assert costs["total_input_tokens"] == 1000 * (n - 1)
    assert costs["mean_latency_s"] == pytest.approx(0.5)  # over the scored examples


def test_unknown_metric_and_missing_scores_are_clear_errors(tmp_path: Path,
                                                            samples: Path) -> None:
    run = make_run(tmp_path, "a", data_dir=samples)
    with pytest.raises(KeyError, match="no_such_metric"):
        compare([run], metrics=["no_such_metric"])
    rd = RunDir(run)
    first = next(iter(rd.results().values()))
    rd.append(first.model_copy(update={"score": None, "attempt": 2}))
    with pytest.raises(ValueError, match="without a stored score"):
        load_run(run)
    assert len(load_run(run, rescore=True).scores) == len(rd.results())


def test_cli_compare_json_and_table(tmp_path: Path, samples: Path) -> None:
    good = make_run(tmp_path, "good", data_dir=samples)
    bad = make_run(tmp_path, "bad", data_dir=samples, answer=empty, model="empty")
    runner = CliRunner()
    result = runner.invoke(app, ["compare", str(bad), str(good), "--json", "--metric",
                                 "success", "--n-boot", "100"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert list(data["metrics"]) == ["success"]
    (diff,) = data["differences"]
    assert diff["diff"] == pytest.approx(100.0) and diff["significant"] is True
    assert data["bootstrap"] == {"n_boot": 100, "seed": 0, "confidence": 0.95}
    assert set(data["costs"]) == {r["label"] for r in data["runs"]}
    table = runner.invoke(app, ["compare", str(bad), str(good), "--n-boot", "50"])
    assert table.exit_code == 0, table.output
    assert "success" in table.stdout and "CI" in table.stdout
    missing = runner.invoke(app, ["compare", str(tmp_path / "nope")])
    assert missing.exit_code != 0 and "not a run directory" in missing.output


def test_run_with_only_infra_errors_has_no_metrics(tmp_path: Path, samples: Path) -> None:
    good = make_run(tmp_path, "good", data_dir=samples)
    down = make_run(tmp_path, "down", data_dir=samples, model="down", infra=range(100))
    result = compare([good, down], n_boot=20)
    label = load_run(down).label
    assert result.table[label].isna().all()  # no example scored: no metric, not zeros
    assert (result.differences["n_examples"] == 0).all()
    assert result.costs.loc[label, "scored"] == 0
    assert any("no example scored by both" in n for n in result.notes)


def _per_resample(run: Any, ids: Any, seed: int, n_boot: int, names: Any) -> Any:
    """The reference for ``compare._boot_metrics``, a plain loop: ``n_boot`` resamples of the
    examples with replacement (numpy ``default_rng(seed)``, as ``compare`` documents), each
    scored with the run's aggregate over its list of scores; n/a as NaN."""
    scores = [run.scores[i] for i in ids]
    drawn = np.random.default_rng(seed).integers(0, len(ids), size=(n_boot, len(ids)))
    rows = []
    for row in drawn:
        metrics = run.scorer.aggregate([scores[i] for i in row])
        rows.append([np.nan if metrics.get(m) is None else float(metrics[m]) for m in names])
    return np.array(rows, dtype=float).reshape(n_boot, len(names))


@pytest.mark.parametrize("subset", ["ss", "mm"])
def test_bootstrap_on_arrays_gives_the_numbers_of_one_aggregate_per_resample(
        tmp_path: Path, shared_data: Path, subset: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Real AppBench data: pooled F1s, means, n/a-able error rates and graph F1s all resampled.
    first = range(60)
    gold = make_run(tmp_path, "gold", subset=subset, data_dir=shared_data, source="official",
                    only=first)
    noisy = make_run(tmp_path, "noisy", subset=subset, data_dir=shared_data, source="official",
                     answer=appbench_noisy(0.5), model="noisy-reference:0.5", only=first)
    runs = [load_run(gold), load_run(noisy)]
    fast = compare(runs, n_boot=BLOCK + 21, seed=5).differences  # a block and a part
    monkeypatch.setattr(compare_module, "_boot_metrics", _per_resample)
    slow = compare(runs, n_boot=BLOCK + 21, seed=5).differences
    assert len(fast) > 20 and list(fast["metric"]) == list(slow["metric"])
    for column in ("a", "b", "diff", "ci_low", "ci_high"):
        x, y = fast[column].to_numpy(float), slow[column].to_numpy(float)
        assert np.array_equal(np.isnan(x), np.isnan(y)), column
        assert np.allclose(x[~np.isnan(x)], y[~np.isnan(y)], rtol=0, atol=1e-9), column
    assert (fast["significant"] == slow["significant"]).all()
    assert fast["ci_low"].notna().sum() > 10  # intervals were computed, not all n/a


def test_resamples_are_drawn_in_blocks_with_the_numbers_of_one_draw() -> None:
    whole = np.random.default_rng(3).integers(0, 37, size=(2 * BLOCK + 5, 37))
    assert np.array_equal(np.concatenate(list(_draws(3, 2 * BLOCK + 5, 37))), whole)


def _reordered_samples(samples: Path, target: Path) -> Path:
    """A copy of the bundled AppBench SS samples in reverse order (same split, same ids)."""
    folder = target / "appbench" / "data" / "test"
    folder.mkdir(parents=True)
    records = json.loads((samples / "appbench/data/test/test_ss.json").read_text("utf-8"))
    (folder / "test_ss.json").write_text(json.dumps(records[::-1], ensure_ascii=False),
                                         encoding="utf-8")
    return target


def test_same_split_in_another_order_is_not_paired(tmp_path: Path, samples: Path) -> None:
    other = _reordered_samples(samples, tmp_path / "reordered")
    split = get_benchmark("appbench").split("plan", "ss")
    mine, theirs = to_examples(split, samples), to_examples(split, other)
    # The danger: the same example ids name different samples.
    assert [e.id for e in mine] == [e.id for e in theirs]
    assert mine[0].inputs != theirs[0].inputs
    a = make_run(tmp_path / "runs", "a", data_dir=samples)
    b = make_run(tmp_path / "runs", "b", data_dir=other, answer=empty, model="empty")
    result = compare([a, b], n_boot=20)
    assert result.differences.empty
    assert any("different data" in n and "dataset hash" in n for n in result.notes)
    # Each run's own metrics are still shown.
    assert result.table.loc["success"].tolist() == [100.0, 0.0]


def test_same_data_is_still_paired(tmp_path: Path, samples: Path) -> None:
    a = make_run(tmp_path / "runs", "a", data_dir=samples)
    b = make_run(tmp_path / "runs", "b", data_dir=samples, answer=empty, model="empty")
    result = compare([a, b], n_boot=20)
    assert not result.differences.empty
    assert not any("different data" in n for n in result.notes)


def test_scoring_options_without_rescore_are_refused(tmp_path: Path, samples: Path) -> None:
    run = make_run(tmp_path, "a", data_dir=samples)
    with pytest.raises(ValueError, match="--rescore"):
        load_run(run, scoring_options={"scoring": "paper"})
    with pytest.raises(ValueError, match="--rescore"):
        write_report([run], tmp_path / "rep", scoring_options={"scoring": "paper"}, n_boot=0)
    runner = CliRunner()
    for command in (["compare", str(run)], ["report", str(run), "--out", str(tmp_path / "r")]):
        result = runner.invoke(app, [*command, "-O", "scoring=paper"])
        assert result.exit_code == 2, result.output
        assert "--rescore" in result.output
    assert not (tmp_path / "r").exists()


def test_rescore_options_show_in_config_labels_and_runs_csv(tmp_path: Path,
                                                             samples: Path) -> None:
    run = make_run(tmp_path, "a", data_dir=samples)
    loaded = load_run(run, rescore=True, scoring_options={"scoring": "paper"})
    assert loaded.config.scoring_options == {"scoring": "paper"}
    report = write_report([run], tmp_path / "rep", rescore=True,
                          scoring_options={"scoring": "paper"}, n_boot=0)
    runs = pd.read_csv(report.out_dir / "runs.csv")
    assert runs["scoring"].tolist() == ["scoring=paper"]
    table3 = pd.read_csv(report.out_dir / "appbench_table3.csv")
    assert table3["system"].tolist() == ["reference (hierarchical, scoring=paper)"]
    result = CliRunner().invoke(app, ["compare", str(run), "--rescore", "-O", "scoring=paper",
                                      "--json", "--n-boot", "0"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["runs"][0]["scoring_options"] == {"scoring": "paper"}


def test_runs_are_named_by_what_differs_and_the_tables_show_the_headline(
        tmp_path: Path, samples: Path) -> None:
    gold = make_run(tmp_path, "gold", data_dir=samples)
    noisy = make_run(tmp_path, "noisy", data_dir=samples, answer=appbench_noisy(1.0),
                     model="noisy-reference:1.0")
    twin = make_run(tmp_path, "twin", data_dir=samples)
    runs = compare([gold, noisy, twin], n_boot=0).runs  # labels made unique
    assert list(short_labels(runs).values()) == ["reference #1", "noisy-reference:1.0",
                                                 "reference #2"]
    result = compare([gold, noisy], n_boot=50, seed=1)
    short = comparison_markdown(result)
    every = comparison_markdown(result, all_metrics=True)
    assert "| success |" in short and "| graph_em |" not in short
    assert "| graph_em |" in every
    assert "more metric(s) not shown (all_metrics=True shows every one)" in short

