"""Regression tests for the review of compare / reports / rescore / results / redaction / CLI.

One section per finding: pairing only runs over the same data, scoring options that need
``--rescore``, torn UTF-8 tails of examples.jsonl, unique report rows and figure names, one
definition of token means, secrets in model parameters and env values, ``tooleval run`` exit
codes, benchmark-free generic CLI code, stale re-scored summaries, ``dataset_hash`` without
the runner.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pandas as pd
import pytest
from fake_openai import FakeOpenAI, Fault, FaultShare
from test_compare import appbench_gold, empty, kv_gold, make_run
from test_runner import SECRET, echo_answer, register_toy, write_toy
from typer.testing import CliRunner, Result

from tooleval_agents.cli import app
from tooleval_agents.data.langsmith_datasets import to_examples
from tooleval_agents.errors import DataFormatError
from tooleval_agents.registry import get_benchmark
from tooleval_agents.results.compare import compare, load_run
from tooleval_agents.results.reports import write_report
from tooleval_agents.results.rescore import RESCORED_SUMMARY, read_rescored, rescore_run
from tooleval_agents.results.rundir import (
    EXAMPLES,
    ExampleResult,
    RunDir,
    RunSummary,
    Usage,
    dataset_hash,
)
from tooleval_agents.results.summary import summarize

REPO = Path(__file__).resolve().parents[1]


def _reordered_samples(samples: Path, target: Path) -> Path:
    """A copy of the bundled AppBench SS samples in reverse order (same split, same ids)."""
    folder = target / "appbench" / "data" / "test"
    folder.mkdir(parents=True)
    records = json.loads((samples / "appbench/data/test/test_ss.json").read_text("utf-8"))
    (folder / "test_ss.json").write_text(json.dumps(records[::-1], ensure_ascii=False),
                                         encoding="utf-8")
    return target


# ------------------------------------------------------------ 1. pairing needs the same data

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


# ---------------------------------------------------- 2. scoring options need --rescore

def test_scoring_options_without_rescore_are_refused(tmp_path: Path, samples: Path) -> None:
    run = make_run(tmp_path, "a", data_dir=samples)
    with pytest.raises(ValueError, match="--rescore"):
        load_run(run, scoring_options={"scoring": "paper"})
    with pytest.raises(ValueError, match="--rescore"):
        write_report([run], tmp_path / "rep", scoring_options={"scoring": "paper"}, n_boot=0)
    runner = CliRunner()
    for command in (["compare", str(run)], ["report", str(run), "--out", str(tmp_path / "r")]):
        result = runner.invoke(app, [*command, "-o", "scoring=paper"])
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
    result = CliRunner().invoke(app, ["compare", str(run), "--rescore", "-o", "scoring=paper",
                                      "--json", "--n-boot", "0"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["runs"][0]["scoring_options"] == {"scoring": "paper"}


# ------------------------------------------------------------- 3. torn UTF-8 last line

def _chinese_results(path: Path, n: int = 3) -> RunDir:
    rd = RunDir(path)
    for i in range(n):
        rd.append(ExampleResult(example_id=f"e{i}", index=i, status="ok",
                                outputs={"prediction": f"调用工具 {i}：查询天气"}))
    return rd


def test_last_line_torn_inside_a_utf8_character_is_ignored(tmp_path: Path) -> None:
    rd = _chinese_results(tmp_path / "run")
    line = ExampleResult(example_id="e9", index=9, status="ok",
                         outputs={"prediction": "中文输出"}).model_dump_json().encode()
    cut = line.index("中".encode()) + 1  # inside the 3-byte character
    with (rd.path / EXAMPLES).open("ab") as fh:
        fh.write(line[:cut])
    results = rd.results()
    assert sorted(results) == ["e0", "e1", "e2"]
    assert results["e1"].outputs["prediction"] == "调用工具 1：查询天气"
    assert rd.repair_torn_tail() is True
    assert (rd.path / EXAMPLES).read_bytes().endswith(b"\n")
    assert rd.results() == results and rd.repair_torn_tail() is False


def test_bad_complete_lines_name_their_line(tmp_path: Path) -> None:
    rd = _chinese_results(tmp_path / "run")
    file = rd.path / EXAMPLES
    lines = file.read_bytes().split(b"\n")
    lines[1] = lines[1].replace("调".encode(), "调".encode()[:2])  # invalid UTF-8 on line 2
    file.write_bytes(b"\n".join(lines))
    with pytest.raises(DataFormatError, match=r"examples\.jsonl:2: not UTF-8"):
        rd.results()
    rd = _chinese_results(tmp_path / "run2")
    with (rd.path / EXAMPLES).open("ab") as fh:
        fh.write(b"{not json}\n")
    _chinese_results(tmp_path / "run2", n=1)  # a good line after the bad one
    with pytest.raises(DataFormatError, match=r"examples\.jsonl:4:"):
        rd.results()


# ------------------------------------------------------ 4. report rows and figure names

def test_runs_sharing_a_system_label_keep_their_own_rows(tmp_path: Path,
                                                          samples: Path) -> None:
    # Deep, equal prefixes: the run labels (paths) agree on their first 80 characters.
    deep = tmp_path / ("x" * 90)
    a_ss = make_run(deep / "a", "appbench-plan-ss", data_dir=samples)
    a_sm = make_run(deep / "a", "appbench-plan-sm", subset="sm", data_dir=samples)
    b_ss = make_run(deep / "b", "appbench-plan-ss", data_dir=samples, answer=empty)
    ut_a = make_run(deep / "a", "ut", benchmark="ultratool", task="tool_usage_awareness",
                    subset="en", data_dir=samples, answer=kv_gold, strategy="one_shot")
    ut_b = make_run(deep / "b", "ut", benchmark="ultratool", task="tool_usage_awareness",
                    subset="en", data_dir=samples, answer=empty, strategy="one_shot")
    report = write_report([a_ss, a_sm, b_ss, ut_a, ut_b], tmp_path / "rep", n_boot=0,
                          all_figures=True)  # the per-run heatmaps
    table3 = pd.read_csv(report.out_dir / "appbench_table3.csv").set_index("system")
    assert sorted(table3.index) == ["reference (hierarchical) [a]",
                                    "reference (hierarchical) [b]"]
    assert table3.loc["reference (hierarchical) [a]", "ss_success"] == 100.0
    assert table3.loc["reference (hierarchical) [a]", "sm_success"] == 100.0  # same row
    assert table3.loc["reference (hierarchical) [b]", "ss_success"] == 0.0
    table2 = pd.read_csv(report.out_dir / "ultratool_table2.csv").set_index("system")
    assert table2.loc["reference (one_shot) [a]", "tool_usage_awareness_global"] == 100.0
    assert table2.loc["reference (one_shot) [b]", "tool_usage_awareness_global"] == 0.0
    runs = pd.read_csv(report.out_dir / "runs.csv")
    assert set(runs["system"]) == {"reference (hierarchical) [a]", "reference (hierarchical) [b]",
                                   "reference (one_shot) [a]", "reference (one_shot) [b]"}
    heatmaps = [p for p in report.figures if p.name.startswith("appbench_scale_")]
    assert len(heatmaps) == 3 and len({p.name for p in heatmaps}) == 3


def test_the_same_run_twice_gets_two_rows(tmp_path: Path, samples: Path) -> None:
    run = make_run(tmp_path, "a", data_dir=samples)
    report = write_report([run, run], tmp_path / "rep", n_boot=0, all_figures=True)
    table3 = pd.read_csv(report.out_dir / "appbench_table3.csv")
    assert len(table3) == 2 and table3["system"].is_unique
    heatmaps = {p.name for p in report.figures if p.name.startswith("appbench_scale_")}
    assert len(heatmaps) == 2


# ---------------------------------------------------------------- 5. token means

def test_compare_token_means_match_the_summary(tmp_path: Path, samples: Path) -> None:
    run = make_run(tmp_path, "a", data_dir=samples, tokens=(1000, 40, 2), infra={1})
    rd = RunDir(run)
    spent = next(r for r in rd.results().values() if r.status == "infra_error")
    # An infra error that spent tokens before failing (e.g. a timeout after a first call).
    rd.append(spent.model_copy(update={"usage": Usage(input_tokens=300, output_tokens=0,
                                                      model_calls=1), "attempt": 2}))
    data = load_run(run)
    summary = summarize("a", data.scorer.aggregate, list(rd.results().values()),
                        examples=data.config.dataset.examples)
    costs = compare([run], n_boot=0).costs.iloc[0]
    for key in ("input_tokens", "output_tokens", "model_calls"):
        assert costs[f"mean_{key}"] == pytest.approx(summary.usage[f"{key}_per_example"])
    assert costs["total_input_tokens"] == summary.usage["input_tokens"]
    n = len(rd.results())
    assert costs["mean_input_tokens"] == pytest.approx((1000 * (n - 1) + 300) / n)


# ------------------------------------------------------------------- 6. secrets

def test_model_params_drop_transport_and_register_header_values() -> None:
    from langchain_openai import ChatOpenAI

    from tooleval_agents.models.redaction import is_secret_name, model_params, redact_text

    header = f"sub-{uuid.uuid4().hex[:12]}"
    query = uuid.uuid4().hex
    password = f"pw{uuid.uuid4().hex[:8]}"
    model = ChatOpenAI(model="gpt-4o-mini", api_key=SECRET,
                       base_url=f"http://user:{password}@127.0.0.1:9/v1?code={query}",
                       default_headers={"Ocp-Apim-Subscription-Key": header,
                                        "Content-Type": "application/json"},
                       default_query={"code": query})
    params = model_params(model)
    text = json.dumps(params)
    for secret in (SECRET, header, query, password):
        assert secret not in text
    assert "default_headers" not in params and "default_query" not in params
    assert params["openai_api_base"] == "http://127.0.0.1:9/v1"
    assert params["model_name"] == "gpt-4o-mini"
    # Registered: masked wherever they show up later (errors, stored outputs).
    for secret in (header, query, password):
        assert secret not in redact_text(f"401 for key {secret}", shapes=False)
    assert redact_text("application/json", shapes=False) == "application/json"
    for name in ("Ocp-Apim-Subscription-Key", "X-Auth", "auth", "my_key", "x-goog-api-key",
                 "Cookie", "OPENAI_API_KEY"):
        assert is_secret_name(name), name
    for name in ("author", "monkey", "keyboard", "max_tokens", "input_tokens", "model"):
        assert not is_secret_name(name), name


def test_env_values_that_are_not_key_like_are_never_masked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tooleval_agents.models.redaction import known_secrets, redact

    key = uuid.uuid4().hex
    monkeypatch.setenv("FOO_API_KEY", "Seattle")
    monkeypatch.setenv("BAR_SECRET", "my-default-region")
    monkeypatch.setenv("BAZ_API_KEY", key)
    secrets = known_secrets()
    assert "Seattle" not in secrets and "my-default-region" not in secrets
    assert key in secrets
    outputs = {"prediction": f"getweather(city='Seattle') my-default-region {key}"}
    clean = redact(outputs, shapes=False, names=False)
    assert clean["prediction"] == "getweather(city='Seattle') my-default-region <redacted>"


def test_run_outputs_are_not_altered_by_word_valued_env_keys(
        tmp_path: Path, samples: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """FOO_API_KEY=Seattle used to turn 'Seattle' in stored outputs into '<redacted>', so a
    re-score of the stored outputs differed from the run's own score."""
    from tooleval_agents.run.runner import run_experiment

    monkeypatch.setenv("FOO_API_KEY", "Seattle")
    summary = run_experiment("appbench", task="plan", subset="ss", model="reference",
                             out=tmp_path / "runs", data_dir=samples, upload=False,
                             progress=False, cache=False)
    run = tmp_path / "runs" / summary.experiment
    stored = (run / EXAMPLES).read_text(encoding="utf-8")
    assert "Seattle" in stored and "<redacted>" not in stored
    rescored = rescore_run(run, write=False)
    assert rescored.changed == 0 and rescored.metrics == summary.metrics


# ---------------------------------------------------------- 7. tooleval run exit codes

def _run(tmp_path: Path, *extra: str) -> Result:
    return CliRunner().invoke(app, ["run", "toy", "--lang", "en", "--out",
                                    str(tmp_path / "runs"), "--data-dir",
                                    str(tmp_path / "data"), "--json", *extra])


def test_rejected_key_exits_non_zero_and_says_fix_the_key(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    register_toy(monkeypatch)
    write_toy(tmp_path / "data", n=4)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-WRONGKEY99")
    with FakeOpenAI(rules=[(r"item \d+", echo_answer)], api_key=SECRET) as server:
        result = _run(tmp_path, "--model", "openai:fake-model", "--model-arg",
                      f"base_url={server.base_url}", "--max-attempts", "1", "--no-cache")
    assert result.exit_code == 3, result.output
    output = result.output
    assert "Fix the key" in output and "retry them" not in output
    assert "WRONGKEY99" not in output


def test_provider_failures_left_exit_non_zero_and_say_retry(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    register_toy(monkeypatch)
    write_toy(tmp_path / "data", n=4)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeOpenAI(rules=[(r"item \d+", echo_answer)], api_key=SECRET,
                    faults=[FaultShare(1.0, Fault(503))]) as server:
        result = _run(tmp_path, "--model", "openai:fake-model", "--model-arg",
                      f"base_url={server.base_url}", "--max-attempts", "1", "--no-cache")
    assert result.exit_code == 3, result.output
    output = result.output
    assert "run the same command again to retry them" in output
    report = json.loads(result.stdout)
    assert report["counts"]["infra_errors"] == 4
    assert report["infra_error_kinds"] == {"server_error": 4}


def test_complete_run_exits_zero_and_bad_option_names_its_flag(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    register_toy(monkeypatch)
    write_toy(tmp_path / "data", n=3)
    ok = _run(tmp_path, "--model", "reference", "--no-cache")
    assert ok.exit_code == 0, ok.output
    bad = _run(tmp_path, "--model", "reference", "--model-arg", "temperature")
    assert bad.exit_code == 2
    assert "--model-arg" in bad.output and "KEY=VALUE" in bad.output


# ------------------------------------------------- 8. generic CLI code names no benchmark

@pytest.mark.parametrize("module", sorted(
    p.relative_to(REPO / "tooleval_agents").as_posix()
    for p in [REPO / "tooleval_agents" / "cli" / "base.py",
              *(REPO / "tooleval_agents" / "cli").glob("*.py")]))
def test_generic_cli_modules_name_no_benchmark(module: str) -> None:
    text = (REPO / "tooleval_agents" / module).read_text(encoding="utf-8").lower()
    assert "ultratool" not in text and "appbench" not in text


def test_score_without_run_lists_the_registered_subcommands(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.models import CommandInfo

    from tooleval_agents.cli.base import score_app

    def newbench() -> None:
        """A benchmark registered by a plugin."""

    monkeypatch.setattr(score_app, "registered_commands",
                        [*score_app.registered_commands, CommandInfo(callback=newbench)])
    result = CliRunner().invoke(app, ["score", "--json"])  # options, but no --run
    assert result.exit_code == 2
    (error,) = [line for line in result.output.splitlines() if "give --run DIR" in line]
    assert "newbench" in error and "appbench" in error  # every registered subcommand


# ------------------------------------------------------- 9. stale re-scored summaries

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


# ------------------------------------------------------- 10. dataset_hash in results.py

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
