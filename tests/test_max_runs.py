"""``tooleval run --max-runs N``: a sweep's runs at once in one process -- in flight together,
the same results as one after the other, one rate limit per endpoint, a progress row per run,
and nothing lost to kill -9 (the same command resumes every run)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI
from helpers import HANG_GUARD_S, wait_until
from reference_server import ReferenceResponder
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.models.endpoints import rate_limiter_for, shared_rate_limits
from tooleval_agents.run.board import ProgressBoard
from tooleval_agents.run.concurrent import arun_at_once

GRID = ("run", "appbench", "--category", "ss", "--model", "reference", "--model",
        "noisy-reference:0.5", "--strategy", "hierarchical", "--strategy", "flat", "--limit", "4")


def _results(run_dir: str) -> list[tuple[Any, ...]]:
    rows = [json.loads(x) for x in (Path(run_dir) / "examples.jsonl").read_text().splitlines()]
    return sorted((r["index"], r["status"], json.dumps(r["outputs"], sort_keys=True),
                   json.dumps(r["score"], sort_keys=True)) for r in rows)


def test_runs_at_once_give_the_results_of_runs_one_after_the_other(samples: Path,
                                                                   tmp_path: Path) -> None:
    rows = {}
    for runs in ("1", "4"):
        result = CliRunner().invoke(app, [*GRID, "--max-runs", runs, "--data-dir", str(samples),
                                          "--out", str(tmp_path / runs), "--no-cache",
                                          "--json"])
        assert result.exit_code == 0, result.output
        rows[runs] = json.loads(result.stdout)
    assert [(r["strategy"], r["model"]) for r in rows["1"]] == \
        [(r["strategy"], r["model"]) for r in rows["4"]]  # the grid's order
    for one, many in zip(rows["1"], rows["4"], strict=True):
        assert one["metrics"] == many["metrics"]
        assert _results(one["run_dir"]) == _results(many["run_dir"])  # example by example


def _server(samples: Path, latency: float) -> FakeOpenAI:
    return FakeOpenAI(ReferenceResponder("appbench", "ss", "flat", data_dir=samples,
                                         latency=latency))


def test_the_runs_of_a_sweep_are_in_flight_together(samples: Path, tmp_path: Path) -> None:
    gold = ReferenceResponder("appbench", "ss", "flat", data_dir=samples)
    both = threading.Event()
    first_of: dict[str, int] = {}

    def responder(request: Any) -> Any:
        # No answer until both runs have sent a request: one after the other, the second
        # would only start once the first had its answers.
        first_of.setdefault(request.body["model"], request.n)
        if len(first_of) == 2:
            both.set()
        both.wait(timeout=HANG_GUARD_S)
        return gold(request)

    with FakeOpenAI(responder) as server:
        result = CliRunner().invoke(app, [
            "run", "appbench", "--category", "ss", "--strategy", "flat", "--model",
            "openai:m1", "--model", "openai:m2", "--model-arg", f"base_url={server.base_url}",
            "--max-runs", "2", "--max-concurrency", "1", "--limit", "3", "--data-dir",
            str(samples), "--out", str(tmp_path), "--no-cache", "--json"],
            env={"OPENAI_API_KEY": "sk-test"})
        assert result.exit_code == 0, result.output
    assert both.is_set()
    assert sorted(first_of.values()) == [0, 1]  # each run's first request before any answer
    assert sorted(r.body["model"] for r in server.log) == ["m1"] * 3 + ["m2"] * 3


def test_runs_on_one_endpoint_share_its_rate_limit() -> None:
    from langchain_openai import ChatOpenAI

    a = ChatOpenAI(model="a", api_key="k", base_url="http://127.0.0.1:1/v1")
    b = ChatOpenAI(model="b", api_key="k", base_url="http://127.0.0.1:1/v1")
    c = ChatOpenAI(model="c", api_key="k", base_url="http://127.0.0.1:2/v1")
    assert rate_limiter_for(a, 5) is not rate_limiter_for(b, 5)  # runs alone: their own
    with shared_rate_limits():
        assert rate_limiter_for(a, 5) is rate_limiter_for(b, 5)
        assert rate_limiter_for(a, 5) is not rate_limiter_for(c, 5)
    assert rate_limiter_for(a, None) is None


def test_at_most_max_runs_jobs_run_at_once_and_results_keep_the_jobs_order() -> None:
    running, most = 0, 0

    def job(n: int) -> Any:
        async def go() -> int:
            nonlocal running, most
            running += 1
            most = max(most, running)
            await asyncio.sleep(0.01 * (5 - n))  # later jobs finish first
            running -= 1
            return n
        return go

    assert asyncio.run(arun_at_once([job(n) for n in range(5)], max_runs=2)) == [0, 1, 2, 3, 4]
    assert most == 2
    with pytest.raises(ValueError, match="max_runs"):
        asyncio.run(arun_at_once([job(0)], max_runs=0))


def test_a_failing_job_cancels_the_others_and_propagates() -> None:
    cancelled = []

    async def slow() -> int:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return 0

    async def bad() -> int:
        raise RuntimeError("cell failed")

    with pytest.raises(RuntimeError, match="cell failed"):
        asyncio.run(arun_at_once([slow, bad], max_runs=2))
    assert cancelled == [True]


def test_the_progress_board_has_a_row_for_every_run() -> None:
    board = ProgressBoard(["ss flat m1", "ss flat m2", "ss flat m3"])
    task = board.start(1, "appbench-plan-ss-flat-m2", total=5, done=2)
    board.advance(task, "success 50.0")
    board.finish(2, "error: ToolevalError")
    tasks = board.progress.tasks
    assert [t.description for t in tasks] == ["ss flat m1", "appbench-plan-ss-flat-m2",
                                              "ss flat m3"]
    assert [t.completed for t in tasks] == [0, 3, 0]
    assert [t.fields["headline"] for t in tasks] == ["waiting", "success 50.0",
                                                     "error: ToolevalError"]


def test_kill_9_mid_sweep_loses_nothing_and_the_same_command_resumes_every_run(
        samples: Path, tmp_path: Path) -> None:
    with _server(samples, 0.3) as server:
        command = [sys.executable, "-m", "tooleval_agents.cli", "run", "appbench",
                   "--category", "ss", "--strategy", "flat", "--model", "openai:m1",
                   "--model", "openai:m2", "--model-arg", f"base_url={server.base_url}",
                   "--max-runs", "2", "--max-concurrency", "1", "--data-dir", str(samples),
                   "--out", str(tmp_path), "--no-cache", "--no-progress", "--json"]
        env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
        proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)

        def finished() -> list[int]:
            return [len(f.read_text().splitlines())
                    for f in sorted(tmp_path.glob("*/examples.jsonl"))]
        wait_until(lambda: len(finished()) >= 2 and min(finished()) >= 1,
                   "both runs to finish an example", proc)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        before = finished()
        sent_before = len(server.log)
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [r["counts"]["ok"] for r in rows] == [6, 6]
    assert [r["session"]["resumed"] for r in rows] == before  # nothing finished ran again
    assert len(server.log) - sent_before == 12 - sum(before)
