"""The experiment runner (tooleval_agents/run/runner.py): results directory, model errors, resume,
cache, retries against a fake OpenAI server with scripted faults, secrets.

Most tests use the tiny ``toy`` benchmark and ``echo`` strategy of :mod:`toy_benchmark`
(the runner must know no benchmark by name); the real AppBench workflows run against the
bundled samples.
"""

from __future__ import annotations

import ast
import asyncio
import json
import signal
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from fake_openai import RESET, FakeOpenAI, Fault, FaultShare
from helpers import HANG_GUARD_S, REPO, SECRET, appbench_responder, assert_no_secret
from langchain_core.language_models import BaseChatModel
from toy_benchmark import (
    LINES_SEEN,
    echo_answer,
    register_toy,
    scripted,
    write_toy,
)

from tooleval_agents.contracts import Split
from tooleval_agents.models.chat_models import ScriptedChatModel
from tooleval_agents.models.retry import RetryPolicy
from tooleval_agents.redaction import (
    model_params,
    redact,
    redact_text,
    register_secret,
)
from tooleval_agents.registry import get_benchmark
from tooleval_agents.results.rundir import CONFIG, EXAMPLES, LOCK, SUMMARY, RunDir
from tooleval_agents.results.transcripts import PROMPTS
from tooleval_agents.run.loop import LoopThread
from tooleval_agents.run.naming import experiment_name, readable_name
from tooleval_agents.run.resume import ResumeError
from tooleval_agents.run.runner import arun_experiment, dataset_hash, run_experiment
from tooleval_agents.run.spec import RunSpec

FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.01, jitter=False,
                   timeout=None)


@pytest.fixture(autouse=True)
def _toy(monkeypatch: pytest.MonkeyPatch) -> None:
    register_toy(monkeypatch)


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    return write_toy(tmp_path / "data")


def _lines(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in (run_dir / EXAMPLES).read_text().splitlines()]


# ----------------------------------------------------------------------------- results directory

def test_reference_run_writes_config_examples_and_summary(toy: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    summary = run_experiment("toy", subset="en", model="reference", out=out, data_dir=toy,
                             progress=False, cache=False)
    name = "toy-echo-en-echo-reference"
    assert summary.experiment == name
    assert summary.metrics == {"accuracy": 100.0}
    assert summary.counts["examples"] == 6
    assert summary.counts["ok"] == 6
    assert summary.counts["infra_errors"] == summary.counts["model_errors"] == 0
    run_dir = out / name
    # the lock file that kept a second process off the running directory is gone
    assert {p.name for p in run_dir.iterdir()} == {CONFIG, EXAMPLES, SUMMARY, PROMPTS}
    assert LOCK not in {p.name for p in run_dir.iterdir()}
    lines = _lines(run_dir)
    assert sorted(r["index"] for r in lines) == list(range(6))
    assert all(r["status"] == "ok" and r["attempt"] == 1 for r in lines)
    assert all(r["outputs"]["prediction"] == f"answer-{r['index']}" for r in lines)
    assert all(r["usage"]["model_calls"] == 1 and r["usage"]["input_tokens"] > 0 for r in lines)
    config = RunDir(run_dir).read_config()
    assert (config.benchmark, config.task, config.subset, config.strategy) == (
        "toy", "echo", "en", "echo")
    assert config.model["spec"] == "reference"
    assert config.dataset.examples == 6 and len(config.dataset.hash) == 64
    assert {"langsmith", "langgraph", "langchain-core", "python"} <= set(config.versions)
    assert {k: summary.session[k] for k in ("resumed", "of", "held", "ran", "errors",
                                             "model_calls", "cache_hits")} == {
        "resumed": 0, "of": 6, "held": 6, "ran": 6, "errors": 0,
        "model_calls": summary.usage["model_calls"], "cache_hits": 0}
    # what the last session did and paid is written apart from the directory's figures
    assert RunDir(run_dir).read_summary() == summary


def test_experiment_name_is_path_safe() -> None:
    split = Split("appbench", "plan", "ss")
    assert experiment_name(split, "hierarchical", "openai:gpt-4o-mini") == \
        "appbench-plan-ss-hierarchical-openai_gpt-4o-mini"
    assert "/" not in experiment_name(split, "flat", "openrouter:meta/llama-3:free")


def test_a_run_spec_refuses_settings_that_cannot_run() -> None:
    for bad, match in (({"max_concurrency": 0}, "max_concurrency must be >= 1"),
                       ({"limit": 0}, "limit must be >= 1"),
                       ({"epochs": 0}, "epochs must be >= 1"),
                       ({"model": scripted(), "model_kwargs": {"temperature": 0}},
                        "model_kwargs apply to a model spec")):
        with pytest.raises(ValueError, match=match):
            RunSpec(**{"benchmark": "toy", "model": "reference", **bad})
    spec = RunSpec(benchmark="toy", model="reference", tool_faults="rate=0")
    assert spec.faults is None  # no call can fail
    assert RunSpec(benchmark="toy", model="reference",
                   tool_faults="rate=0.5,kinds=error,seed=1").faults is not None


def test_runner_and_cli_know_no_benchmark_by_name() -> None:
    # Adding a third benchmark touches neither the runner nor the CLI (the layering rule).
    # Docstrings may use them as examples; code (string constants, names) may not.
    for file in ("tooleval_agents/run/runner.py", "tooleval_agents/cli/run.py"):
        tree = ast.parse((REPO / file).read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef
                                    | ast.ClassDef)
                      and node.body and isinstance(node.body[0], ast.Expr)}
        words = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
                 and isinstance(n.value, str) and id(n) not in docstrings]
        words += [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)]
        words += [n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)]
        hits = [w for w in words if "ultratool" in w.lower() or "appbench" in w.lower()]
        assert hits == [], file


def test_results_are_appended_as_examples_finish(toy: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    options = {"count_lines": str(tmp_path / "lines")}
    run_dir = out / readable_name(Split("toy", "echo", "en"), "echo", "reference",
                                  settings=options)
    (tmp_path / "lines").symlink_to(run_dir / EXAMPLES)
    LINES_SEEN.clear()
    run_experiment("toy", subset="en", model="reference", out=out, data_dir=toy,
                   progress=False, cache=False, max_concurrency=1, strategy_options=options)
    # One at a time: example k starts when the k examples before it are on disk.
    assert list(range(6)) == LINES_SEEN


def test_workflow_failures_are_scored_as_wrong_not_dropped(tmp_path: Path) -> None:
    data = write_toy(tmp_path / "data", n=5, boom=(1, 3))
    summary = run_experiment("toy", subset="en", model="reference", out=tmp_path / "runs",
                             data_dir=data, progress=False, cache=False)
    # 3 of 5 right: the two failed workflows count in the denominator.
    assert summary.metrics["accuracy"] == pytest.approx(60.0)
    # The strategy's own code raised: the system under test's error, not the model's.
    assert summary.counts["agent_errors"] == 2 and summary.counts["model_errors"] == 0
    assert summary.counts["scored"] == 5
    failed = [r for r in _lines(tmp_path / "runs" / summary.experiment)
              if r["status"] == "agent_error"]
    assert sorted(r["index"] for r in failed) == [1, 3]
    assert all(r["error_kind"] == "ValueError" and "cannot be parsed" in r["error"]
               for r in failed)
    assert all(r["error_at"].startswith("toy_benchmark.py:") and r["error_at"].endswith(
        " in parse") for r in failed)  # the last frame in the user's code
    assert all(r["score"]["scores"]["accuracy"] == 0.0 for r in failed)


def test_limit_and_default_split_resolution(toy: Path, tmp_path: Path) -> None:
    summary = run_experiment("toy", subset="en", model="reference", limit=2,
                             out=tmp_path / "r", data_dir=toy, progress=False, cache=False)
    assert summary.counts["examples"] == 2
    with pytest.raises(ValueError, match="several subsets"):
        run_experiment("toy", model="reference", out=tmp_path / "r", data_dir=toy,
                       progress=False)
    with pytest.raises(KeyError, match="unknown strategy"):
        run_experiment("toy", subset="en", strategy="nope", model="reference",
                       out=tmp_path / "r", data_dir=toy, progress=False)


# ----------------------------------------------------------------------------- resume

class Flaky(Exception):
    """A provider-style failure: HTTP 503."""

    status_code = 503


def flaky_model(bad: set[int]) -> ScriptedChatModel:
    """Answers toy prompts, but items in ``bad`` always fail with a 503."""

    def reply(prompt: str) -> str:
        answer = echo_answer(prompt)
        if int(answer.split("-")[1]) in bad:
            raise Flaky("upstream unavailable")
        return answer

    return ScriptedChatModel(rules=[(r"item \d+", reply)])


def test_resume_retries_only_infra_errors(toy: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    first = flaky_model({2, 4})
    s1 = run_experiment("toy", subset="en", model=first, out=out, data_dir=toy,
                        progress=False, cache=False, retry=FAST)
    assert s1.counts["infra_errors"] == 2 and s1.counts["ok"] == 4
    assert s1.metrics["accuracy"] == 100.0  # infra errors are not wrong answers
    assert s1.counts["retried"] == 2
    assert first.calls == 4 + 2 * FAST.max_attempts
    run_dir = out / s1.experiment
    infra = [r for r in _lines(run_dir) if r["status"] == "infra_error"]
    assert {r["error_kind"] for r in infra} == {"server_error"}
    assert all(r["retries"] == FAST.max_attempts - 1 for r in infra)

    second = scripted()
    s2 = run_experiment("toy", subset="en", model=second, out=out, data_dir=toy,
                        progress=False, cache=False, retry=FAST)
    assert second.calls == 2  # only the two infrastructure errors ran again
    assert s2.counts["ok"] == 6 and s2.counts["infra_errors"] == 0
    assert s2.counts["retried"] == 2
    latest = RunDir(run_dir).results()
    assert sorted(r.index for r in latest.values() if r.attempt == 2) == [2, 4]

    third = scripted()
    s3 = run_experiment("toy", subset="en", model=third, out=out, data_dir=toy,
                        progress=False, cache=False)
    assert third.calls == 0
    assert s3.metrics == s2.metrics and s3.counts == s2.counts


def test_a_selection_extends_a_run_and_changed_data_is_refused(toy: Path,
                                                               tmp_path: Path) -> None:
    out = tmp_path / "runs"
    kwargs: dict[str, Any] = {"out": out, "data_dir": toy, "progress": False, "cache": False}

    def run(**kw: Any) -> tuple[Any, int]:
        model = scripted()
        summary = run_experiment("toy", subset="en", model=model, **kwargs, **kw)
        return summary, model.calls

    first, calls = run(limit=3)
    assert calls == 3 and first.counts["examples"] == 3
    before = _lines(out / first.experiment)
    grown, calls = run(limit=5)  # a larger --limit runs only the new examples
    assert calls == 2 and grown.counts["examples"] == grown.counts["ok"] == 5
    assert grown.experiment == first.experiment
    assert _lines(out / first.experiment)[:3] == before
    summary_file = out / first.experiment / SUMMARY
    written = summary_file.read_bytes()
    shrunk, calls = run(limit=2)  # a smaller one runs nothing and rewrites nothing
    assert calls == 0 and shrunk.counts["examples"] == 5  # the directory's one set of numbers
    assert shrunk.session["resumed"] == shrunk.session["of"] == 2
    assert shrunk.session["held"] == 5 and summary_file.read_bytes() == written
    assert len(_lines(out / first.experiment)) == 5
    picked, calls = run(samples="1,4-5")
    assert calls == 1 and picked.counts["examples"] == 6  # 5 is new; 1 and 4 ran before
    assert RunDir(out / first.experiment).read_config().dataset.model_dump(
        include={"examples", "samples", "total"}) == {"examples": 6, "samples": None,
                                                      "total": 6}
    with pytest.raises(ValueError, match=r"the split has no example 9 \(its indices are 0-5\)"):
        run(samples="9")
    other, calls = run(limit=3, strategy_options={"delay": 0.0})
    assert calls == 3 and other.experiment == f"{first.experiment}-delay=0"  # its own
    write_toy(toy, n=6, boom=[0])  # the data of the first examples changed
    with pytest.raises(ResumeError, match=r"other data.*--fresh"):
        run(limit=3)
    summary, calls = run(limit=4, fresh=True)
    assert calls == 4 and summary.counts["examples"] == 4
    assert len(_lines(out / summary.experiment)) == 4


def test_torn_last_line_is_repaired_on_resume(toy: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    kwargs: dict[str, Any] = {"out": out, "data_dir": toy, "progress": False, "cache": False}
    s1 = run_experiment("toy", subset="en", model=scripted(), **kwargs)
    file = out / s1.experiment / EXAMPLES
    lines = file.read_text().splitlines(keepends=True)
    file.write_text("".join(lines[:4]) + lines[4][:30])  # a crash mid-write
    model = scripted()
    s2 = run_experiment("toy", subset="en", model=model, **kwargs)
    assert s2.counts["ok"] == 6 and model.calls == 2
    assert all(json.loads(ln) for ln in file.read_text().splitlines())


def test_dataset_hash_depends_on_ids_inputs_and_references(toy: Path) -> None:
    from tooleval_agents.data.langsmith_datasets import to_examples

    examples = to_examples(get_benchmark("toy").split("echo", "en"), toy)
    base = dataset_hash(examples)
    assert dataset_hash(examples) == base
    assert dataset_hash(examples[:-1]) != base
    changed = [e.model_copy(update={"outputs": {"answer": "x"}}) if i == 0 else e
               for i, e in enumerate(examples)]
    assert dataset_hash(changed) != base


# ----------------------------------------------------------------------------- cache

def test_second_identical_run_makes_no_model_calls(toy: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    first = scripted()
    s1 = run_experiment("toy", subset="en", model=first, out=tmp_path / "a", data_dir=toy,
                        progress=False, cache=cache)
    assert first.calls == 6 and s1.usage["input_tokens"] > 0 and s1.counts["cached"] == 0
    second = scripted()
    s2 = run_experiment("toy", subset="en", model=second, out=tmp_path / "b", data_dir=toy,
                        progress=False, cache=cache)
    assert second.calls == 0
    assert s2.metrics == s1.metrics
    assert s2.counts["cached"] == 6
    # Tokens belong to the answer: the same on a warm cache; what was paid is counted apart.
    assert s2.usage == s1.usage and s2.cost == s1.cost and s2.usage["model_calls"] == 6
    assert s2.session["model_calls"] == s2.session["input_tokens"] == 0
    assert s2.session["cache_hits"] == s2.spent["cache_hits"] == 6
    assert s1.session["model_calls"] == 6 and s1.session["input_tokens"] > 0
    lines = _lines(tmp_path / "b" / s2.experiment)
    assert all(r["outputs"]["usage"]["model_calls"] == 1 for r in lines)
    assert all(r["spent"]["model_calls"] == 0 and r["usage"]["cache_hits"] == 1 for r in lines)


def test_no_cache_for_sampled_models(toy: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    for out in ("a", "b"):
        model = scripted()
        object.__setattr__(model, "temperature", 0.7)  # a sampling model: never cached
        run_experiment("toy", subset="en", model=model, out=tmp_path / out, data_dir=toy,
                       progress=False, cache=cache)
        assert model.calls == 6


def test_judge_is_passed_to_the_scorer_and_cached(toy: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    judge = ScriptedChatModel(rules=[(r"answer-[0-4] right", "yes")], default="no")
    summary = run_experiment("toy", subset="en", model="reference", judge=judge,
                             out=tmp_path / "a", data_dir=toy, progress=False, cache=cache)
    assert summary.metrics["judged"] == pytest.approx(100 * 5 / 6)  # answer-5: "no"
    assert judge.calls == 6
    config = RunDir(tmp_path / "a" / summary.experiment).read_config()
    assert config.judge is not None and config.judge["spec"] == "scripted"
    again = ScriptedChatModel(rules=[(r"answer-[0-4] right", "yes")], default="no")
    run_experiment("toy", subset="en", model="reference", judge=again, out=tmp_path / "b",
                   data_dir=toy, progress=False, cache=cache)
    assert again.calls == 0  # the judge's answers were cached too
    with pytest.raises(ValueError, match="cannot judge"):
        run_experiment("toy", subset="en", model="reference", judge="reference",
                       out=tmp_path / "c", data_dir=toy, progress=False)


# ----------------------------------------------------------------------------- real workflows

def test_appbench_reference_run_on_samples(samples: Path, tmp_path: Path) -> None:
    summary = run_experiment("appbench", subset="ss", model="reference", out=tmp_path / "r",
                             data_dir=samples, progress=False, cache=False)
    assert summary.counts["ok"] == summary.counts["examples"] > 0
    assert summary.metrics["success"] == 100.0  # the reference model proves the wiring
    assert summary.experiment == "appbench-plan-ss-hierarchical-reference"


def test_appbench_workflow_failures_score_as_empty_answers(samples: Path,
                                                          tmp_path: Path) -> None:
    def garbled(prompt: str) -> str:
        raise ValueError("Weather: [city = getweather(#city='Seattle')]")  # not an answer

    model = ScriptedChatModel(rules=[(".", garbled)])
    summary = run_experiment("appbench", subset="ss", model=model, out=tmp_path / "r",
                             data_dir=samples, progress=False, cache=False)
    n = summary.counts["examples"]
    assert summary.counts["model_errors"] == summary.counts["scored"] == n
    assert summary.metrics["success"] == summary.metrics["app_f1"] == 0.0
    lines = _lines(tmp_path / "r" / summary.experiment)
    assert all(r["score"]["labels"]["pred_calls"] == "0" for r in lines)


def test_provider_faults_are_retried_and_none_is_lost(samples: Path, tmp_path: Path) -> None:
    # Request n fails when floor((n+1)*share) > floor(n*share): resets at 6, 13; 429 at 4, 9,
    # 14; 500 at 3, 7, 11 (the first matching rule wins). A timed-out try is one more
    # retryable kind: test_retry times one out on a controllable clock.
    faults = [FaultShare(0.15, RESET), FaultShare(0.2, Fault(429)),
              FaultShare(0.25, Fault(500))]
    policy = RetryPolicy(max_attempts=2, base_delay=0.001, jitter=False)
    out = tmp_path / "runs"
    cache = tmp_path / "cache.sqlite"
    with FakeOpenAI(appbench_responder(samples), api_key=SECRET, faults=faults) as server:
        kwargs: dict[str, Any] = {
            "subset": "ss", "model": "openai:fake-model", "out": out, "data_dir": samples,
            "progress": False, "retry": policy, "cache": cache, "max_concurrency": 4,
            "model_kwargs": {"base_url": server.base_url, "api_key": SECRET,
                             "temperature": 0}}
        s1 = run_experiment("appbench", **kwargs)
        statuses = server.statuses()
        reset = [r for r in server.log if r.fault is not None and r.fault.kind == "reset"]
    n = s1.counts["examples"]
    assert 429 in statuses and 500 in statuses and reset
    assert s1.counts["ok"] + s1.counts["model_errors"] + s1.counts["infra_errors"] == n
    assert s1.counts["retried"] >= 1
    lines = _lines(out / s1.experiment)
    assert sorted({r["index"] for r in lines}) == list(range(n))  # no example lost
    for r in lines:
        if r["status"] == "ok":
            assert r["score"]["scores"]["success"] == 100.0
        else:
            assert r["status"] == "infra_error"
            assert r["error_kind"] in {"rate_limit", "server_error", "connection"}
            assert r["score"] is None
    assert s1.counts["scored"] == s1.counts["ok"]
    if s1.counts["scored"]:
        assert s1.metrics["success"] == 100.0  # infra errors are not wrong answers

    # The next run (same command, a healthy server) retries exactly the infra errors.
    infra = {r["example_id"] for r in lines if r["status"] == "infra_error"}
    with FakeOpenAI(appbench_responder(samples), api_key=SECRET) as server:
        kwargs["model_kwargs"] = {**kwargs["model_kwargs"], "base_url": server.base_url}
        s2 = run_experiment("appbench", **kwargs)
    assert s2.counts["ok"] == n and s2.metrics["success"] == 100.0
    retried = {r.example_id for r in RunDir(out / s1.experiment).results().values()
               if r.attempt == 2}
    assert retried == infra
    assert_no_secret(out, *tmp_path.glob("cache.sqlite*"))
    config = json.loads((out / s1.experiment / CONFIG).read_text())
    assert config["model"]["spec"] == "openai:fake-model"
    assert config["model"]["params"]["max_retries"] == 0  # our policy is the only one


def test_auth_failure_stops_the_run_and_is_not_retried(toy: Path, tmp_path: Path) -> None:
    with FakeOpenAI(default="x", api_key="sk-the-right-key-000") as server:
        summary = run_experiment(
            "toy", subset="en", model="openai:fake-model", out=tmp_path / "runs",
            data_dir=toy, progress=False, cache=False, retry=FAST, max_concurrency=1,
            model_kwargs={"base_url": server.base_url, "api_key": SECRET})
        assert len(server.log) == 1  # a 401 fails the same way every time
    assert summary.counts["infra_errors"] == 6 and summary.metrics == {}
    kinds = [r["error_kind"] for r in _lines(tmp_path / "runs" / summary.experiment)]
    assert kinds.count("auth") == 1 and kinds.count("aborted") == 5
    assert_no_secret(tmp_path / "runs")


def test_no_api_key_in_any_file(toy: Path, tmp_path: Path) -> None:
    from langchain_openai import ChatOpenAI

    out = tmp_path / "runs"
    cache = tmp_path / "cache.sqlite"
    with FakeOpenAI(rules=[(r"item \d+", echo_answer)], api_key=SECRET) as server:
        for model in ("openai:fake-model", ChatOpenAI(
                model="fake-model", base_url=server.base_url, api_key=SECRET, max_retries=0,
                temperature=0, default_headers={"X-Api-Key": SECRET})):
            kwargs = ({"model_kwargs": {"base_url": server.base_url, "api_key": SECRET}}
                      if isinstance(model, str) else {})
            summary = run_experiment("toy", subset="en", model=model, out=out, data_dir=toy,
                                     progress=False, cache=cache, **kwargs)
            assert summary.counts["ok"] == 6
    assert_no_secret(out, *tmp_path.glob("cache.sqlite*"))


# ----------------------------------------------------------------------------- event loops

def test_repeated_sync_runs_with_chatopenai_share_one_loop(toy: Path, tmp_path: Path) -> None:
    # A second asyncio.run() with ChatOpenAI failed "Event loop is closed".
    with FakeOpenAI(rules=[(r"item \d+", echo_answer)]) as server:
        for out in ("a", "b"):
            summary = run_experiment(
                "toy", subset="en", model="openai:fake-model", out=tmp_path / out,
                data_dir=toy, progress=False, cache=False,
                model_kwargs={"base_url": server.base_url, "api_key": "sk-x-000000"})
            assert summary.counts["ok"] == 6, summary.counts


def test_usable_inside_a_running_event_loop(toy: Path, tmp_path: Path) -> None:
    async def main() -> tuple[float, float]:
        # As in Jupyter: the sync call runs on the runner's own loop thread.
        sync = run_experiment("toy", subset="en", model="reference", out=tmp_path / "a",
                              data_dir=toy, progress=False, cache=False)
        direct = await arun_experiment("toy", subset="en", model="reference",
                                       out=tmp_path / "b", data_dir=toy, progress=False,
                                       cache=False)
        return sync.metrics["accuracy"], direct.metrics["accuracy"]

    assert asyncio.run(main()) == (100.0, 100.0)


# ----------------------------------------------------------------------------- secrets

def test_redaction_by_name_value_and_shape() -> None:
    token = f"tok-{uuid.uuid4().hex}"
    register_secret(token)
    value = {"api_key": "abc", "headers": {"Authorization": "Bearer xyz12345678"},
             "note": f"failed with {token}", "max_tokens": 5, "input_tokens": 7}
    clean = redact(value)
    assert clean["api_key"] == "<redacted>"
    assert clean["headers"]["Authorization"] == "<redacted>"
    assert token not in clean["note"]
    assert clean["max_tokens"] == 5 and clean["input_tokens"] == 7  # counts, not secrets
    assert "sk-" not in redact_text("Incorrect API key provided: sk-abcdefgh12345678")
    assert redact({"token": "x"}, names=False) == {"token": "x"}


def test_model_params_hold_no_secret() -> None:
    from langchain_openai import ChatOpenAI

    model: BaseChatModel = ChatOpenAI(model="gpt-4o-mini", api_key=SECRET, temperature=0,
                                      base_url="http://127.0.0.1:9/v1",
                                      default_headers={"Authorization": f"Bearer {SECRET}"})
    params = model_params(model)
    assert params["model_name"] == "gpt-4o-mini" and params["temperature"] == 0
    assert SECRET not in json.dumps(params)
    assert "openai_api_key" not in params


def test_an_interrupt_winds_down_every_task_of_the_run_loop() -> None:
    # LangSmith starts tasks of its own beside the run; left running after Ctrl-C they died at
    # interpreter shutdown with tracebacks on stderr (seen in CI under load). The run gets a
    # loop of its own (the process-wide one carries the tasks of earlier tests), and the signal
    # is sent once run() has started, never before.
    started = threading.Event()
    side: list[asyncio.Task[None]] = []
    sent: list[bool] = []

    async def run() -> None:
        side.append(asyncio.get_running_loop().create_task(asyncio.sleep(HANG_GUARD_S)))
        started.set()
        await asyncio.sleep(HANG_GUARD_S)

    def interrupt() -> None:
        if started.wait(HANG_GUARD_S):
            sent.append(True)
            # A real signal, to the main thread: only the thread that receives it stops waiting
            # (sent to the process, it may land on another thread, and the main one waits on).
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

    own = LoopThread()
    # Started as a shell's background job, this process may ignore SIGINT: handle it as a
    # terminal's Ctrl-C would be, for this test only.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Thread(target=interrupt, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            own.run(run())
    finally:
        signal.signal(signal.SIGINT, previous)
        own.close()
    assert sent == [True]
    assert side and side[0].done() and side[0].cancelled()


def test_a_run_goes_through_langsmith_in_batches_and_records_every_example(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # LangSmith keeps each evaluate call's rows until it returns: a run is cut in batches so
    # memory does not grow with the run. 40 examples, 1 at a time, batches of 16.
    import tooleval_agents.run.experiment as runner_module

    calls: list[int] = []
    real = runner_module.BATCH
    monkeypatch.setattr(runner_module, "BATCH", 4)
    import langsmith.evaluation as evaluation

    original = evaluation.aevaluate

    async def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(len(kwargs["data"]))
        return await original(*args, **kwargs)

    monkeypatch.setattr(evaluation, "aevaluate", counting)
    data = write_toy(tmp_path / "data", n=40)
    summary = run_experiment("toy", subset="en", model="reference", out=tmp_path / "runs",
                             data_dir=data, progress=False, cache=False, max_concurrency=1)
    assert real == 256 and calls == [16, 16, 8]
    assert summary.counts["scored"] == 40 and summary.metrics == {"accuracy": 100.0}
    lines = _lines(tmp_path / "runs" / summary.experiment)
    assert sorted(r["index"] for r in lines) == list(range(40))
