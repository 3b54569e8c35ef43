"""``--batch``: a run's model calls as OpenAI Batch API batches, against a fake Batch API on
127.0.0.1 (``tests/fake_batch.py``) answering as the ``reference`` model: results, per-example
errors of expired, half-failed and refused batches, the ledger a resume polls (kill -9 between
submitting and collecting sends nothing twice), and the cost at batch prices."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_batch import FakeBatchAPI, Mode
from helpers import wait_until
from reference_server import ReferenceResponder, answer

from tooleval_agents.models.batch import BatchSettings
from tooleval_agents.models.batch.ledger import BATCHES
from tooleval_agents.models.retry import RetryPolicy
from tooleval_agents.results.costs import describe
from tooleval_agents.run.runner import run_experiment

FAST = BatchSettings(size=6, wait=60, poll=0.05)
"""The six SS samples' requests make one batch, whenever they come (a full batch leaves)."""


@pytest.fixture(scope="module")
def gold(samples: Path) -> Any:
    """The reference model's answers to a flat AppBench SS request body."""
    model = ReferenceResponder("appbench", "ss", "flat", data_dir=samples).model
    return lambda body: answer(model, body)


def _run(api: FakeBatchAPI, samples: Path, out: Path, **options: Any) -> Any:
    return run_experiment(
        "appbench", subset="ss", strategy="flat", model="openai:gpt-4o-mini",
        model_kwargs={"base_url": api.base_url, "api_key": "sk-test"}, data_dir=samples,
        out=out, cache=False, progress=False, batch=options.pop("batch", FAST), **options)


def _ledger(run_dir: str | Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (Path(run_dir) / BATCHES).read_text().splitlines()]


def _kinds(run_dir: str | Path) -> list[str | None]:
    lines = (Path(run_dir) / "examples.jsonl").read_text().splitlines()
    return [json.loads(x)["error_kind"] for x in lines]


def test_a_batched_run_is_scored_as_a_direct_one_at_batch_prices(gold: Any, samples: Path,
                                                                 tmp_path: Path) -> None:
    with FakeBatchAPI(gold) as api:
        summary = _run(api, samples, tmp_path)
    assert summary.metrics["success"] == 100.0 and summary.counts["ok"] == 6
    assert api.created == 1 and api.direct == 0  # one batch, no call sent one by one
    events = [e["event"] for e in _ledger(summary.run_dir)]
    assert events == ["prepared", "submitted", "ended"]
    usage, cost = summary.usage, summary.cost
    assert usage["batched_calls"] == usage["model_calls"] == 6
    assert usage["batched_input_tokens"] == usage["input_tokens"] > 0
    # gpt-4o-mini at batch rates: half the standard input and output prices
    expected = (usage["input_tokens"] * 0.075 + usage["output_tokens"] * 0.30) / 1e6
    assert cost["model_usd"] == pytest.approx(expected)
    assert "6 of 6 model calls batched (batch prices)" in describe(cost)


@pytest.mark.parametrize(("mode", "kind", "ok"), [("expire", "batch_expired", 3),
                                                   ("fail", "batch_failed", 0),
                                                   ("half_fail", "server_error", 3)])
def test_requests_a_batch_did_not_answer_fail_per_example_with_their_kind(
        gold: Any, samples: Path, tmp_path: Path, mode: Mode, kind: str, ok: int) -> None:
    with FakeBatchAPI(gold, mode=mode) as api:
        summary = _run(api, samples, tmp_path, retry=RetryPolicy(max_attempts=1))
    assert summary.counts["ok"] == ok
    assert summary.counts["infra_errors"] == 6 - ok
    assert sorted(k for k in _kinds(summary.run_dir) if k) == [kind] * (6 - ok)
    ended = [e for e in _ledger(summary.run_dir) if e["event"] == "ended"]
    assert len(ended) == 1 and len(ended[0]["failed"]) == (6 - ok if mode != "half_fail" else 0)


def test_a_resume_sends_again_only_what_its_batch_did_not_answer(gold: Any, samples: Path,
                                                                  tmp_path: Path) -> None:
    with FakeBatchAPI(gold, mode="expire") as api:
        first = _run(api, samples, tmp_path)
        api.mode = "complete"
        again = _run(api, samples, tmp_path, batch=BatchSettings(size=3, wait=60, poll=0.05))
    assert first.counts["infra_errors"] == 3 and again.counts["ok"] == 6
    assert api.created == 2  # the expired half, and nothing else
    assert again.session["ran"] == 3


def _cli(base_url: str, samples: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "tooleval_agents.cli", "run", "appbench", "--category", "ss",
            "--strategy", "flat", "--model", "openai:gpt-4o-mini", "--model-arg",
            f"base_url={base_url}", "--batch", "--batch-size", "6", "--batch-wait", "0.2",
            "--data-dir",
            str(samples), "--out", str(out), "--no-cache", "--no-progress", "--json"]


def test_kill_9_between_submitting_and_collecting_resumes_without_a_second_batch(
        gold: Any, samples: Path, tmp_path: Path) -> None:
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    with FakeBatchAPI(gold, hold=True) as api:
        command = _cli(api.base_url, samples, tmp_path)
        proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        wait_until(lambda: any(("GET", f"/v1/batches/{b}") in api.log for b in api.batches),
                   "the batch to be polled", proc)
        os.kill(proc.pid, signal.SIGKILL)  # submitted, polled, not collected
        proc.wait()
        ledger = next(tmp_path.glob("appbench-plan-ss-flat-*"))
        assert [e["event"] for e in _ledger(ledger)] == ["prepared", "submitted"]
        api.release()
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["counts"]["ok"] == 6 and report["usage"]["batched_calls"] == 6
    assert api.created == 1  # polled again, never sent again
    assert [e["event"] for e in _ledger(ledger)] == ["prepared", "submitted", "ended"]


def test_batch_needs_a_provider_model(samples: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tooleval_agents.cli import app

    result = CliRunner().invoke(app, ["run", "appbench", "--category", "ss", "--model",
                                      "reference", "--batch", "--data-dir", str(samples),
                                      "--out", str(tmp_path)])
    assert result.exit_code == 2 and "--batch" in result.output
    assert not list(tmp_path.iterdir())
