"""``tooleval run``: options, subset mapping, JSON output, resume after kill -9, no secrets."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, Fault, FaultShare
from helpers import (
    HANG_GUARD_S,
    SECRET,
    TESTS,
    assert_no_secret,
    cli,
    default_sigint,
    wait_for_examples,
)
from toy_benchmark import echo_answer, register_toy, write_toy
from typer.testing import CliRunner, Result

from tooleval_agents.cli import app
from tooleval_agents.results.rundir import EXAMPLES, RunDir


@pytest.fixture(autouse=True)
def _toy(monkeypatch: pytest.MonkeyPatch) -> None:
    register_toy(monkeypatch)


invoke = partial(cli, "run")
"""``tooleval run ARGS``."""


def test_json_output_has_the_score_shape(tmp_path: Path) -> None:
    data = write_toy(tmp_path / "data", n=4, boom=(2,))
    result = invoke("toy", "--lang", "en", "--model", "reference", "--out", tmp_path / "runs",
                    "--data-dir", data, "--no-cache", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["metrics"] == {"accuracy": 75.0}  # 3 of 4: the failed workflow counts
    assert report["counts"]["examples"] == 4 and report["counts"]["agent_errors"] == 1
    assert report["experiment"] == "toy-echo-en-echo-reference"
    assert report["strategy"] == "echo"  # the benchmark's default
    assert Path(report["run_dir"], "summary.json").is_file()


def test_lang_and_category_map_to_subsets_generically(tmp_path: Path) -> None:
    data = write_toy(tmp_path / "data")
    write_toy(data, subset="c1")
    common = ["--model", "reference", "--out", tmp_path / "runs", "--data-dir", data,
              "--no-cache", "--json"]
    result = invoke("toy", *common)
    assert result.exit_code == 2 and "--lang en|all or --category c1|all" in result.output
    result = invoke("toy", "--category", "en", *common)
    assert result.exit_code == 2 and "unknown --category 'en'" in result.output
    result = invoke("toy", "--lang", "c1", *common)
    assert result.exit_code == 2 and "unknown --lang 'c1'" in result.output
    result = invoke("toy", "--lang", "en", "--category", "c1", *common)
    assert result.exit_code == 2 and "give one of --subset, --lang and --category" in result.output
    result = invoke("toy", "--category", "all", "--task", "all", *common)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["subset"] == "c1"
    result = invoke("toy", "--lang", "all", *common)
    assert json.loads(result.stdout)["subset"] == "en"


def test_unknown_benchmark_or_task_fails_clearly(tmp_path: Path) -> None:
    result = invoke("nope", "--model", "reference")
    assert result.exit_code == 2 and "unknown benchmark" in result.output
    result = invoke("toy", "--task", "x", "--lang", "en", "--model", "reference")
    assert result.exit_code == 2 and "no task 'x'" in result.output
    result = invoke("toy", "--lang", "en", "--model", "gpt4", "--out", tmp_path,
                    "--data-dir", write_toy(tmp_path / "d"))
    # refused before any split starts: a bad argument
    assert result.exit_code == 2 and "provider:model" in result.output


def test_rerun_resumes_without_running_anything(tmp_path: Path) -> None:
    data = write_toy(tmp_path / "data")
    args = ("toy", "--lang", "en", "--model", "reference", "--out", tmp_path / "runs",
            "--data-dir", data, "--no-cache", "--json", "--progress", "-O", "delay=0")
    first = invoke(*args)
    assert first.exit_code == 0, first.output
    run_dir = Path(json.loads(first.stdout)["run_dir"])
    lines = (run_dir / EXAMPLES).read_text()
    second = invoke(*args)
    assert second.exit_code == 0, second.output
    assert (run_dir / EXAMPLES).read_text() == lines  # nothing ran again
    assert json.loads(second.stdout)["metrics"] == json.loads(first.stdout)["metrics"]
    changed = invoke(*args[:-2], "-O", "delay=0.01")  # other options: a run of their own
    assert changed.exit_code == 0, changed.output
    assert Path(json.loads(changed.stdout)["run_dir"]) != run_dir
    assert (run_dir / EXAMPLES).read_text() == lines


def test_provider_faults_via_cli_and_no_key_written(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    data = write_toy(tmp_path / "data", n=8)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    faults = [FaultShare(0.25, Fault(503))]
    with FakeOpenAI(rules=[(r"item \d+", echo_answer)], api_key=SECRET,
                    faults=faults) as server:
        result = invoke("toy", "--lang", "en", "--model", "openai:fake-model", "--model-arg",
                        f"base_url={server.base_url}", "--model-arg", "temperature=0",
                        "--max-attempts", "2", "--out", tmp_path / "runs", "--data-dir", data,
                        "--json", "--rps", "200")
    report = json.loads(result.stdout)
    counts = report["counts"]
    assert counts["ok"] + counts["infra_errors"] == 8 and counts["retried"] >= 1
    # Infra errors left after the retries: exit 2 (retry by running again), else 0.
    assert result.exit_code == (2 if counts["infra_errors"] else 0), result.output
    cache = Path(os.environ["XDG_CACHE_HOME"])
    assert_no_secret(tmp_path / "runs", cache)
    assert SECRET not in result.output


def _cli_script(args: list[str]) -> list[str]:
    code = (f"import sys; sys.path.insert(0, {str(TESTS)!r}); import toy_benchmark; "
            "toy_benchmark.register_toy(); from tooleval_agents.cli import main; "
            f"sys.argv = ['tooleval', *{args!r}]; main()")
    return [sys.executable, "-c", code]


TOY_RUN_DIR = "toy-echo-en-echo-reference*"
"""The toy run's directory (its name ends with the hash of its options)."""


def test_kill_9_then_rerun_resumes_without_redoing_finished_examples(tmp_path: Path) -> None:
    data = write_toy(tmp_path / "data", n=12, boom=(2,))
    log = tmp_path / "calls.log"
    args = ["run", "toy", "--lang", "en", "--model", "reference", "--out",
            str(tmp_path / "runs"), "--data-dir", str(data), "--no-cache", "--no-progress",
            "--max-concurrency", "12", "-O", f"call_log={log}", "--json"]
    # Examples 4-11 wait for ever: the kill lands after exactly 0-3 (2 a model error).
    env = {**os.environ, "TOY_RUN": "1", "TOY_HOLD_FROM": "4"}
    proc = subprocess.Popen(_cli_script(args), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    run_dir = wait_for_examples(tmp_path / "runs", 4, proc, TOY_RUN_DIR)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    finished = {r.index for r in RunDir(run_dir).results().values()}
    assert finished == {0, 1, 2, 3}

    env = {**os.environ, "TOY_RUN": "2"}
    done = subprocess.run(_cli_script(args), env=env, capture_output=True, text=True,
                          timeout=HANG_GUARD_S)
    assert done.returncode == 0, done.stderr
    resumed = json.loads(done.stdout)
    rerun = [line.split("\t")[1] for line in log.read_text().splitlines()
             if line.startswith("2\t")]
    asked = {int(q.split()[3].rstrip("?")) for q in rerun}
    assert asked == set(range(4, 12))  # finished examples made no model call
    assert len(rerun) == len(asked)

    # The same summary as an uninterrupted run.
    whole = invoke("toy", "--lang", "en", "--model", "reference", "--out", tmp_path / "whole",
                   "--data-dir", data, "--no-cache", "--json")
    assert whole.exit_code == 0, whole.output
    uninterrupted = json.loads(whole.stdout)
    assert resumed["metrics"] == uninterrupted["metrics"] == {"accuracy": pytest.approx(
        100 * 11 / 12)}
    assert resumed["counts"] == uninterrupted["counts"]


def test_ctrl_c_mid_run_is_one_line_and_resumes(tmp_path: Path) -> None:
    data = write_toy(tmp_path / "data", n=40)
    args = ["run", "toy", "--lang", "en", "--model", "reference", "--out",
            str(tmp_path / "runs"), "--data-dir", str(data), "--no-cache", "--no-progress",
            "--max-concurrency", "40", "--json"]
    # Examples 3-39 wait for ever: the interrupt lands mid-run, whatever the machine's load.
    env = {**os.environ, "TOY_RUN": "1", "TOY_HOLD_FROM": "3"}
    proc = subprocess.Popen(_cli_script(args), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_sigint)
    wait_for_examples(tmp_path / "runs", 3, proc, TOY_RUN_DIR)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=HANG_GUARD_S)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    assert "cannot schedule new futures" not in err
    env = {**os.environ, "TOY_RUN": "2"}
    done = subprocess.run(_cli_script(args), env=env, capture_output=True, text=True,
                          timeout=HANG_GUARD_S)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["counts"]["scored"] == 40


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
