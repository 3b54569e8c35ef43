"""Every failure a user meets is one clear line and a documented exit code, never a traceback
(unless ``--debug``): a missing API key, LangSmith out of reach, a run directory held by another
process (and one left by a killed process), an unexpected error.

Most commands run in this process through the console script's own entry (``run_cli`` on the
app, as ``tooleval`` runs it); LangSmith out of reach (its client caches the environment) and a
run directory held by another process run as real ``python -m tooleval_agents.cli`` processes."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from helpers import HANG_GUARD_S

from tooleval_agents.cli import app
from tooleval_agents.cli.base import DEBUG, run_cli
from tooleval_agents.results.rundir import RunDir

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "datasets"
RUN = ["run", "appbench", "--category", "ss", "--limit", "1", "--data-dir", str(SAMPLES),
       "--no-progress"]


def tooleval(*args: str | Path, env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess[str]:
    """``tooleval ARGS`` as a real process."""
    return subprocess.run([sys.executable, "-m", "tooleval_agents.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=HANG_GUARD_S,
                          env={**os.environ, **(env or {})}, cwd=REPO)


def tooleval_here(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                  *args: str | Path, remove: tuple[str, ...] = ()
                  ) -> subprocess.CompletedProcess[str]:
    """``tooleval ARGS`` in this process, as the console script runs it (exit code, output)."""
    for name in remove:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "argv", ["tooleval", *map(str, args)])
    capsys.readouterr()
    code: Any = 0
    try:
        run_cli(app)
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return subprocess.CompletedProcess(args, 0 if code is None else code, out.out, out.err)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def assert_one_line(result: subprocess.CompletedProcess[str], code: int, *needles: str) -> None:
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    for needle in needles:
        assert needle in errors[0], errors[0]


def test_missing_api_key(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                         monkeypatch: pytest.MonkeyPatch) -> None:
    result = tooleval_here(capsys, monkeypatch, *RUN, "--model", "openai:gpt-4o", "--out",
                           tmp_path, remove=("OPENAI_API_KEY",))
    assert_one_line(result, 1, "cannot create model 'openai:gpt-4o'", "OPENAI_API_KEY")


def test_langsmith_out_of_reach_with_upload_on(tmp_path: Path) -> None:
    key = "lsv2_pt_failurepathsecret0000000000000000"
    result = tooleval(*RUN, "--model", "reference", "--out", tmp_path, env={
        "LANGSMITH_API_KEY": key, "LANGSMITH_ENDPOINT": f"http://127.0.0.1:{closed_port()}"})
    # Local first: the run is kept and scored, one line says why it was not uploaded.
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    [warning] = [line for line in result.stderr.splitlines() if "LangSmith unavailable" in line]
    assert "stays local" in warning and "tooleval upload" in warning
    assert key not in result.stderr and key[-6:] not in result.stderr


def test_a_second_process_on_a_held_run_directory_stops(tmp_path: Path) -> None:
    run_dir = tmp_path / "appbench-plan-ss-hierarchical-reference"
    with RunDir(run_dir).lock():
        result = tooleval(*RUN, "--model", "reference", "--out", tmp_path, "--no-cache")
    assert_one_line(result, 1, "is in use by process", str(os.getpid()))
    assert not (run_dir / "examples.jsonl").exists()  # it ran nothing


def test_a_lock_left_by_a_killed_process_is_taken_over(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = tmp_path / "appbench-plan-ss-hierarchical-reference"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from tooleval_agents.results.rundir import RunDir\n"
         f"with RunDir({str(run_dir)!r}).lock():\n    print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True, cwd=REPO)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert (run_dir / ".lock").read_text().strip() == str(holder.pid)  # left behind
    result = tooleval_here(capsys, monkeypatch, *RUN, "--model", "reference", "--out", tmp_path,
                           "--no-cache")
    assert result.returncode == 0, result.stderr
    assert (run_dir / "summary.json").is_file()
    assert not (run_dir / ".lock").exists()  # the run that took it over removed it


def test_an_unexpected_error_is_one_line_unless_debug(capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    broken = typer.Typer()

    @broken.command()
    def boom() -> None:
        raise RuntimeError("the disk said no\nsecond line")

    monkeypatch.setattr(sys, "argv", ["tooleval"])
    monkeypatch.setitem(DEBUG, "on", False)
    with pytest.raises(SystemExit) as exit_info:
        run_cli(broken)
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert "RuntimeError: the disk said no" in err and "second line" not in err
    assert "--debug" in err
    monkeypatch.setitem(DEBUG, "on", True)
    with pytest.raises(RuntimeError):
        run_cli(broken)


def test_version(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    result = tooleval_here(capsys, monkeypatch, "--version")
    assert result.returncode == 0 and result.stdout.startswith("tooleval-agents ")


def test_offline_fetch_says_how_and_leaves_no_empty_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    result = tooleval_here(capsys, monkeypatch, "data", "fetch", "sgd", "--data-dir", data,
                           "--base-url", f"http://127.0.0.1:{closed_port()}/", "--retries", "0",
                           "--no-progress")
    assert_one_line(result, 1, "--base-url", "still failing")
    assert not (data / "sgd").exists()  # no folder left behind for a file never written


def test_damaged_data_file_names_the_place_and_the_repair(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(SAMPLES / "appbench", tmp_path / "appbench")
    damaged = tmp_path / "appbench" / "data" / "test" / "test_ss.json"
    text = damaged.read_text(encoding="utf-8")
    damaged.write_text(text[: len(text) // 2], encoding="utf-8")
    result = tooleval_here(capsys, monkeypatch, "run", "appbench", "--category", "ss",
                           "--model", "reference", "--data-dir", tmp_path, "--out",
                           tmp_path / "runs", "--no-progress")
    assert_one_line(result, 1, "test_ss.json:", "invalid JSON at column", "tooleval data verify")
