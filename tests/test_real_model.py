"""Every strategy of both benchmarks, and the judge, against a real model: SmolLM2-135M-Instruct
served by llama-cpp-python on 127.0.0.1 (:mod:`local_model`), on one example each.

A tiny model answers badly; what is asserted is what a harness owes a real model: no crash or
hang, every example scored or recorded with an error kind, denominators kept (a metric is a
number in range or n/a, never a made-up 0 or 100 over nothing), tokens recorded, and a rerun
resumes without calling the model again. Marked ``real_model``; skipped with the reason where
the ``local`` extra is not installed (``.ci/run`` installs it and requires it).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from local_model import ALIAS, REQUIRE, missing, serve

from tooleval_agents.models.retry import RetryPolicy
from tooleval_agents.registry import get_benchmark, strategies
from tooleval_agents.results.rundir import RunDir
from tooleval_agents.run.runner import run_experiment

pytestmark = [pytest.mark.real_model,
              pytest.mark.skipif(missing() is not None and not REQUIRE,
                                 reason=f"no local model: {missing()}")]

SUBSET = {"appbench": "ss", "ultratool": "en"}
LIMIT = 1
"""Examples per run: one, which is what each check needs. Prompt processing is the suite's
cost (AppBench prompts carry the whole API catalog, ~9k tokens, nearly two minutes on 2
cores; a second UltraTool example added 90 s over all cases)."""
JUDGED = {"planning", "tool_creation"}
COUNTS = {"plan_step_count_diff", "tool_calls", "agent_turns"}
"""Metrics that are counts, not 0-100 shares."""


def cases() -> list[tuple[str, str, str]]:
    """(benchmark, strategy, task): every strategy on every task it solves."""
    out = []
    for bench in ("appbench", "ultratool"):
        tasks = sorted({s.task for s in get_benchmark(bench).splits()})
        for (_, name), strategy in sorted(strategies(bench).items()):
            out += [(bench, name, t) for t in tasks
                    if strategy.tasks is None or t in strategy.tasks]
    return out


OFFICIAL = [("ultratool", "one_shot", "tool_usage")]
"""Cases run again with the official prompt set (read from the shared data's upstream files).
AppBench's official prompts are not among them: their ~11k tokens took the 135M model over two
minutes on 2 cores, a seventh of the suite, for what the offline tests already hold (the prompts
equal upstream's, a reference run scores 100: ``test_official_prompts``) and the recorded real
answers to them (``appbench_answers``) check."""
REPORT = os.environ.get("TOOLEVAL_REAL_MODEL_REPORT")
"""A file to append each case's figures to (JSON Lines: n, wall time, tokens, metrics)."""


def _report(case: str, summary: Any, seconds: float) -> None:
    if not REPORT:
        return
    row = {"case": case, "n": summary.counts["examples"], "ok": summary.counts["ok"],
           "wall_s": round(seconds, 1), "usage": summary.usage,
           "metrics": {k: summary.metrics[k] for k in list(summary.metrics)[:4]}}
    with open(REPORT, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(row) + "\n")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    if missing() is not None:
        raise AssertionError(f"TOOLEVAL_REQUIRE_REAL_MODEL is set but {missing()}")
    with serve() as url:
        yield url


@pytest.mark.parametrize(("benchmark", "strategy", "task"), cases())
def test_a_real_model_runs_every_strategy(server: str, samples: Path, tmp_path: Path,
                                          benchmark: str, strategy: str, task: str) -> None:
    check_real_run(server, samples, tmp_path, benchmark, strategy, task)


@pytest.mark.parametrize(("benchmark", "strategy", "task"), OFFICIAL)
def test_a_real_model_answers_the_official_prompts(server: str, shared_data: Path,
                                                   tmp_path: Path, benchmark: str,
                                                   strategy: str, task: str) -> None:
    check_real_run(server, shared_data, tmp_path, benchmark, strategy, task, prompts="official",
                   limit=1)


def check_real_run(server: str, data_dir: Path, tmp_path: Path, benchmark: str, strategy: str,
                   task: str, *, prompts: str | None = None, limit: int | None = None) -> None:
    """One case: run, check what a harness owes a real model, resume."""
    judge = f"openai:{ALIAS}" if task in JUDGED else None
    n = limit or LIMIT
    kwargs: dict[str, Any] = {
        "task": task, "subset": SUBSET[benchmark], "strategy": strategy,
        # Short answers keep the suite fast (a cap the harness must handle like any other).
        "model": f"openai:{ALIAS}", "model_kwargs": {"base_url": server, "api_key": "local",
                                                     "temperature": 0, "max_tokens": 96},
        # A short judge answer too: a 135M judge rarely writes a usable verdict, and an
        # unusable one must be recorded as a judge error, not wait out a long generation.
        "judge": judge, "judge_kwargs": {"base_url": server, "api_key": "local",
                                         "max_tokens": 256} if judge else None,
        "limit": n, "max_concurrency": 1, "data_dir": data_dir, "out": tmp_path,
        "upload": False, "cache": False, "progress": False, "prompts": prompts,
        "retry": RetryPolicy(max_attempts=2, timeout=240)}
    started = time.perf_counter()
    summary = run_experiment(benchmark, **kwargs)
    _report(f"{benchmark}/{strategy}/{task}" + (f" ({prompts} prompts)" if prompts else ""),
            summary, time.perf_counter() - started)
    counts = summary.counts
    assert counts["examples"] == n and counts["not_run"] == 0
    assert counts["ok"] + counts["model_errors"] + counts["agent_errors"] + \
        counts["infra_errors"] == n
    results = summary.results()
    for r in results:
        assert r.status == "ok" or r.error_kind, (r.status, r.error)
        if r.status != "infra_error":
            assert r.usage.model_calls > 0 and r.usage.input_tokens > 0, r.usage
            assert r.model_calls and r.model_calls[0].messages  # the transcript was kept
    for name, value in summary.metrics.items():
        assert value is None or name in COUNTS or 0.0 <= value <= 100.0, (name, value)
    if judge is not None:
        # Every scored example was judged (its tokens counted apart) or had nothing to judge.
        verdicts = [(r.score or {}).get("labels", {}).get("judge") for r in results
                    if r.status != "infra_error"]
        assert all(v in ("ok", "error", "missing_prediction") for v in verdicts), verdicts
        sent = sum(v in ("ok", "error") for v in verdicts)
        assert (summary.usage["judge_calls"] > 0) == (sent > 0), (verdicts, summary.usage)
    finished = {r.example_id: r.finished_at for r in results if r.status != "infra_error"}
    again = run_experiment(benchmark, **kwargs)  # resumes: only infra errors run again
    kept = {r.example_id: r.finished_at for r in again.results() if r.example_id in finished}
    assert kept == finished
    if len(finished) == n:
        assert again.metrics == summary.metrics
    assert RunDir(summary.run_dir).read_config().model["spec"] == f"openai:{ALIAS}"
