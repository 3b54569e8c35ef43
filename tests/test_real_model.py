"""Every strategy of both benchmarks, and the judge, against a real model: SmolLM2-135M-Instruct
served by llama-cpp-python on 127.0.0.1 (:mod:`local_model`), on one example each.

A tiny model answers badly; what is asserted is that it answered -- each case's example was
answered and scored (``ok``) with its model calls, input and output tokens and transcript
recorded -- and what a harness owes a real model: no crash or hang, denominators kept (a
metric is a number in range or n/a, never a made-up 0 or 100 over nothing), a judged example
judged (its verdict usable: the judge answers under the server's grammar, see
:func:`judge_server`), and a rerun resumes without calling the model again. Marked
``real_model``; skipped with the reason where the ``local`` extra is not installed
(``.ci/run`` installs it and requires it: there a missing model fails).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import HANG_GUARD_S
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
JUDGE_TOKENS = 512
"""The judge's answer cap: a verdict of seven dimensions, each a reason and a score."""
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


def _report(case: str, summary: Any, seconds: float, verdicts: list[str | None],
            record_property: Callable[[str, object], None]) -> None:
    """The case's figures: in the test's report (the suite's summary prints them) and, with
    ``TOOLEVAL_REAL_MODEL_REPORT``, a line of that file."""
    row = {"case": case, "n": summary.counts["examples"], "ok": summary.counts["ok"],
           "model_calls": summary.usage.get("model_calls"),
           "input_tokens": summary.usage.get("input_tokens"),
           **({"verdicts": ",".join(str(v) for v in verdicts)} if verdicts else {})}
    for key, value in row.items():
        record_property(key, value)
    if REPORT:
        with open(REPORT, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({**row, "wall_s": round(seconds, 1), "usage": summary.usage,
                                 "metrics": {k: summary.metrics[k]
                                             for k in list(summary.metrics)[:4]}}) + "\n")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    if missing() is not None:
        raise AssertionError(f"TOOLEVAL_REQUIRE_REAL_MODEL is set but {missing()}")
    with serve() as url:
        yield url


@pytest.mark.parametrize(("benchmark", "strategy", "task"), cases())
def test_a_real_model_runs_every_strategy(server: str, samples: Path, tmp_path: Path,
                                          benchmark: str, strategy: str, task: str,
                                          record_property: Callable[[str, object], None]
                                          ) -> None:
    check_real_run(server, samples, tmp_path, benchmark, strategy, task, record_property)


@pytest.mark.parametrize(("benchmark", "strategy", "task"), OFFICIAL)
def test_a_real_model_answers_the_official_prompts(server: str, shared_data: Path,
                                                   tmp_path: Path, benchmark: str,
                                                   strategy: str, task: str,
                                                   record_property: Callable[[str, object],
                                                                             None]) -> None:
    check_real_run(server, shared_data, tmp_path, benchmark, strategy, task, record_property,
                   prompts="official", limit=1)


def check_real_run(server: str, data_dir: Path, tmp_path: Path, benchmark: str, strategy: str,
                   task: str, record_property: Callable[[str, object], None], *,
                   prompts: str | None = None, limit: int | None = None) -> None:
    """One case: run, check that the model answered and what a harness owes it, resume."""
    judge = f"openai:{ALIAS}" if task in JUDGED else None
    n = limit or LIMIT
    kwargs: dict[str, Any] = {
        "task": task, "subset": SUBSET[benchmark], "strategy": strategy,
        # Short answers keep the suite fast (a cap the harness must handle like any other).
        "model": f"openai:{ALIAS}", "model_kwargs": {"base_url": server, "api_key": "local",
                                                     "temperature": 0, "max_tokens": 96},
        # The judge's verdict is a forced call of its schema's tool, which the server decodes
        # under the schema's grammar (models.openai_compat): room for the seven dimensions'
        # reasons and scores.
        "judge": judge, "judge_kwargs": {"base_url": server, "api_key": "local",
                                         "max_tokens": JUDGE_TOKENS} if judge else None,
        "limit": n, "max_concurrency": 1, "data_dir": data_dir, "out": tmp_path,
        "upload": False, "cache": False, "progress": False, "prompts": prompts,
        "retry": RetryPolicy(max_attempts=2, timeout=HANG_GUARD_S)}
    started = time.perf_counter()
    summary = run_experiment(benchmark, **kwargs)
    seconds = time.perf_counter() - started
    results = summary.results()
    verdicts = [(r.score or {}).get("labels", {}).get("judge") for r in results
                if r.status != "infra_error"] if judge else []
    _report(f"{benchmark}/{strategy}/{task}" + (f" ({prompts} prompts)" if prompts else ""),
            summary, seconds, verdicts, record_property)
    counts = summary.counts
    assert counts["examples"] == n and counts["not_run"] == 0
    assert counts["ok"] + counts["model_errors"] + counts["agent_errors"] + \
        counts["infra_errors"] == n
    # The model answered: an example answered and scored, its calls, tokens and transcript kept.
    ok = [r for r in results if r.status == "ok"]
    assert ok, [(r.status, r.error_kind, r.error) for r in results]
    for r in ok:
        assert r.score is not None and r.outputs, r
        assert r.usage.model_calls > 0 and r.usage.input_tokens > 0, r.usage
        assert r.usage.output_tokens > 0, r.usage
        assert r.model_calls and r.model_calls[0].messages  # the transcript was kept
        assert any(call.output for call in r.model_calls), r.model_calls  # and the answers
    for name, value in summary.metrics.items():
        assert value is None or name in COUNTS or 0.0 <= value <= 100.0, (name, value)
    if judge is not None:
        # Every scored example was judged (its tokens counted apart) or had nothing to judge,
        # and a verdict came back usable: a judge that only ever fails proves nothing.
        assert all(v in ("ok", "error", "missing_prediction") for v in verdicts), verdicts
        sent = sum(v in ("ok", "error") for v in verdicts)
        assert (summary.usage["judge_calls"] > 0) == (sent > 0), (verdicts, summary.usage)
        assert "ok" in verdicts or "error" not in verdicts, verdicts
        if task == "planning":  # a plan is always there to judge
            assert "ok" in verdicts, [(r.score or {}).get("comments") for r in results]
    # A rerun resumes: every example finished, none runs again, the same numbers.
    finished = {r.example_id: r.finished_at for r in results}
    again = run_experiment(benchmark, **kwargs)
    assert {r.example_id: r.finished_at for r in again.results()} == finished
    assert again.session["ran"] == 0 and again.session["model_calls"] == 0, again.session
    assert again.metrics == summary.metrics
    assert RunDir(summary.run_dir).read_config().model["spec"] == f"openai:{ALIAS}"
