"""Seeded tool faults (``--tool-faults``): the spec, the hash-decided faults, what the agent
sees of each kind, the run identity, the trace records and metrics, resume, the CLI."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import run as offline_run
from langchain.agents import create_agent
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from typer.testing import CliRunner

from tooleval_agents.appbench.records import AppBenchSample
from tooleval_agents.cli import app
from tooleval_agents.contracts import ExampleScore, Part
from tooleval_agents.evaluators.appbench.parse import gold_answer
from tooleval_agents.graphs.appbench.prompts import PLAN_MARKER, REPAIR_MARKER, SELECT_MARKER
from tooleval_agents.graphs.tool_agent import FaultyTool, faulty_tools
from tooleval_agents.models.chat_models import ScriptedChatModel
from tooleval_agents.registry import get_benchmark
from tooleval_agents.results.fault_metrics import fault_metrics, fault_parts
from tooleval_agents.results.rescore import rescore_run
from tooleval_agents.results.rundir import RunDir
from tooleval_agents.run.runner import run_experiment
from tooleval_agents.tool_execution import run_tool_call
from tooleval_agents.tool_faults import (
    KINDS,
    FaultSession,
    ToolFaults,
    fault_session,
    parse_tool_faults,
)


def _run(samples: Path, out: Path, subset: str, faults: str | None, **kw: Any) -> Any:
    return offline_run("appbench", samples, out, subset=subset,
                       strategy=kw.pop("strategy", "tools"), model="reference",
                       tool_faults=faults, **kw)


def _results(out: Path, name: str) -> dict[str, dict[str, Any]]:
    return {r.example_id: r.model_dump(mode="json", include={"outputs", "score", "status"})
            for r in RunDir(out / name).iter_results()}


# ----------------------------------------------------------------------------- the spec

def test_the_spec_reads_rate_kinds_and_seed_and_rejects_the_rest() -> None:
    assert parse_tool_faults("rate=0.2,kinds=error+timeout,seed=7") == ToolFaults(
        rate=0.2, kinds=("error", "timeout"), seed=7)
    assert parse_tool_faults("rate=0.1") == ToolFaults(rate=0.1, kinds=KINDS, seed=0)
    assert not ToolFaults(rate=0.0).active
    for bad, said in (("rate=1.5", "between 0 and 1"), ("rate=x", "must be a number"),
                      ("kinds=error+flood", "unknown kind(s) flood"),
                      ("speed=3", "is not rate=R")):
        with pytest.raises(ValueError, match="--tool-faults: .*" + said.split("(")[0]):
            parse_tool_faults(bad)


# ----------------------------------------------------------------------------- decisions

def _faults(seed: int, example: str, calls: int = 200) -> list[Any]:
    session = FaultSession(ToolFaults(rate=0.3, seed=seed), example)
    return [session.draw("t", {"i": i}) for i in range(calls)]


def test_faults_are_decided_by_seed_example_and_position_only() -> None:
    assert _faults(0, "a") == _faults(0, "a")
    assert _faults(0, "a") != _faults(1, "a") and _faults(0, "a") != _faults(0, "b")
    drawn = [f for f in _faults(0, "a") if f is not None]
    assert 40 <= len(drawn) <= 80  # 30% of 200
    assert {f.kind for f in drawn} == set(KINDS)


def test_a_transient_fault_may_pass_on_retry_a_persistent_one_never() -> None:
    escaped = {"timeout": 0, "rate_limit": 0}
    for n in range(300):
        session = FaultSession(ToolFaults(rate=0.5, seed=n), "x")
        first = session.draw("t", {"q": 1})
        if first is None:
            continue
        again = [session.draw("t", {"q": 1}) for _ in range(3)]
        assert all(a is None or a.position == first.position for a in again)
        if first.transient:
            escaped[first.kind] += any(a is None for a in again)
        else:
            assert all(a is not None and a.kind == first.kind for a in again)
            assert [a.attempt for a in again if a] == [1, 2, 3]
    assert min(escaped.values()) > 0


def test_without_faults_every_call_is_free_of_faults_in_the_long_run() -> None:
    # The reference prediction: an n-call example meets no fault with probability (1-r)^n.
    rate, n = 0.2, 3
    clean = sum(all(f is None for f in _faults_session(rate, k, n)) for k in range(3000))
    assert abs(clean / 3000 - (1 - rate) ** n) < 0.03


def _faults_session(rate: float, k: int, n: int) -> list[Any]:
    session = FaultSession(ToolFaults(rate=rate, seed=0), f"ex{k}")
    return [session.draw("t", {"i": i}) for i in range(n)]


# ----------------------------------------------------------------------------- what the agent sees

@tool
def lookup(city: str) -> dict[str, str]:
    """Look a city up."""
    return {"city": city, "country": "France"}


def _seen(kind: str) -> Any:
    async def call() -> Any:
        with fault_session(ToolFaults(rate=1.0, kinds=(kind,)), {"q": 1}, 0) as session:  # type: ignore[arg-type]
            message = await run_tool_call(lookup, {"id": "c1", "name": "lookup",
                                                   "args": {"city": "Paris"}})
            assert session is not None and session.faulted_ids == {"c1"}
            return message, session.records()

    return asyncio.run(call())


@pytest.mark.parametrize(("kind", "said"), [("error", "500 Internal Server Error"),
                                            ("timeout", "timed out after 30 s"),
                                            ("rate_limit", "429 Too Many Requests")])
def test_error_kinds_answer_as_a_provider_error(kind: str, said: str) -> None:
    message, records = _seen(kind)
    assert message.status == "error" and said in message.text
    assert records[0] == {"kind": "tool_fault", "fault": kind, "tool": "lookup", "position": 0,
                          "attempt": 0, "transient": kind != "error",
                          **({"simulated_delay_s": 30.0} if kind == "timeout" else {})}


def test_malformed_and_empty_payloads() -> None:
    whole = json.dumps({"city": "Paris", "country": "France"})
    malformed, _ = _seen("malformed")
    assert malformed.status == "success" and whole.startswith(malformed.text)
    with pytest.raises(ValueError):
        json.loads(malformed.text)
    empty, _ = _seen("empty")
    assert empty.status == "success" and empty.text == ""


def test_a_users_agent_gets_tools_under_the_same_faults() -> None:
    wrapped = faulty_tools([lookup])[0]
    assert isinstance(wrapped, FaultyTool)
    assert convert_to_openai_tool(wrapped) == convert_to_openai_tool(lookup)
    call = {"type": "tool_call", "id": "c1", "name": "lookup", "args": {"city": "Paris"}}

    async def calls() -> tuple[Any, Any]:
        clean = await wrapped.ainvoke(call)  # no faults on: the tool itself
        with fault_session(ToolFaults(rate=1.0, kinds=("rate_limit",)), {"q": 1}, 0):
            return clean, await wrapped.ainvoke(call)

    clean, faulted = asyncio.run(calls())
    assert clean.status == "success" and json.loads(clean.text)["country"] == "France"
    assert faulted.status == "error" and "429" in faulted.text


# ----------------------------------------------------------------------------- runs

def test_rate_zero_is_the_run_without_faults(samples: Path, tmp_path: Path) -> None:
    plain = _run(samples, tmp_path / "a", "mm", None)
    zero = _run(samples, tmp_path / "b", "mm", "rate=0,seed=5")
    assert plain.experiment == zero.experiment == "appbench-plan-mm-tools-reference"
    assert plain.metrics == zero.metrics and "recovery_rate" not in zero.metrics
    assert _results(tmp_path / "a", plain.experiment) == _results(tmp_path / "b",
                                                                  zero.experiment)


def test_reference_fails_exactly_where_a_fault_hit(samples: Path, tmp_path: Path) -> None:
    """The reference replays the gold calls and never retries: every fault is fatal, so an
    example succeeds iff it succeeded clean and met no fault; repeated runs are identical."""
    for subset in ("mm", "sm"):
        clean = _results(tmp_path, _run(samples, tmp_path, subset, None).experiment)
        summary = _run(samples, tmp_path, subset, "rate=0.3,seed=0")
        assert summary.experiment.startswith(f"appbench-plan-{subset}-tools-reference-")
        config = RunDir(tmp_path / summary.experiment).read_config()
        assert config.tool_faults == {"rate": 0.3, "kinds": list(KINDS), "seed": 0}
        faulted = _results(tmp_path, summary.experiment)
        hit = 0
        for eid, result in faulted.items():
            trace = result["outputs"]["trace"]
            faults = [r for r in trace if r["kind"] == "tool_fault"]
            hit += bool(faults)
            ok = result["score"]["scores"]["success"] == 100.0
            assert ok == (clean[eid]["score"]["scores"]["success"] == 100.0 and not faults)
        assert hit > 0
        assert summary.metrics["faulted_examples"] == pytest.approx(100 * hit / len(faulted))
        assert summary.metrics["recovery_rate"] == 0.0
        assert summary.metrics["retries_per_fault"] == 0.0
        # The reference repeats no call: exactly its faulted calls are wasted.
        calls = sum(r["calls"] for x in faulted.values() for r in x["outputs"]["trace"]
                    if r["kind"] == "tool_faults")
        faults = sum(r["kind"] == "tool_fault" for x in faulted.values()
                     for r in x["outputs"]["trace"])
        assert summary.metrics["wasted_calls"] == pytest.approx(100 * faults / calls)
        again = _run(samples, tmp_path / "again", subset, "rate=0.3,seed=0")
        assert _results(tmp_path / "again", again.experiment) == faulted


def test_a_users_agent_meets_the_same_faults_as_ours(samples: Path, tmp_path: Path) -> None:
    # langchain's create_agent runs the tools itself (its ToolNode), given faulty_tools.
    own = _run(samples, tmp_path, "mm", "rate=0.3,seed=0")
    user = _run(samples, tmp_path, "mm", "rate=0.3,seed=0",
                agent=lambda model, tools: create_agent(model, tools))
    assert "+" in user.experiment and own.metrics["faulted_examples"] > 0
    for key in ("success", "faulted_examples", "recovery_rate", "calls_after_persistent_fault"):
        assert user.metrics[key] == own.metrics[key], key


def test_ultratool_tool_usage_meets_faults(samples: Path, tmp_path: Path) -> None:
    kw = {"task": "tool_usage", "subset": "en", "strategy": "tools", "model": "reference",
          "data_dir": samples, "upload": False, "progress": False, "cache": False}
    clean = run_experiment("ultratool", out=tmp_path, **kw)
    faulted = run_experiment("ultratool", out=tmp_path, tool_faults="rate=0.3,seed=0", **kw)
    assert faulted.metrics["faulted_examples"] > 0 and faulted.metrics["recovery_rate"] == 0.0
    assert faulted.metrics["tool_usage"] < clean.metrics["tool_usage"] == 100.0


def test_execute_repair_sees_faults_and_recovers(samples: Path, tmp_path: Path) -> None:
    summary = _run(samples, tmp_path, "mm", "rate=0.3,seed=0", strategy="execute_repair")
    assert summary.metrics["faulted_examples"] > 0
    assert summary.metrics["recovery_rate"] == 100.0  # the plan is right: faults cost rounds
    results = _results(tmp_path, summary.experiment)
    kinds = {e["kind"] for r in results.values() for t in r["outputs"]["trace"]
             for e in t.get("errors", ())}
    assert "tool_fault" in kinds


def _repair_run(samples: Path, out: Path, on_fault: str) -> Any:
    """execute_repair over mm sample 0 with every call failing (a persistent error): a
    scripted model plans the gold and, shown the faults, re-submits the plan (``retry``) or
    drops the first call (``drop``)."""
    bench = get_benchmark("appbench")
    record = next(iter(bench.load(bench.split("plan", "mm"), samples)))
    assert isinstance(record, AppBenchSample)
    gold = gold_answer(record)
    dropped = "\n".join(gold.splitlines()[1:])
    apps = str(sorted({c.app or "" for c in record.calls})).replace("'", '"')
    model = ScriptedChatModel(rules=[
        (re.escape(SELECT_MARKER), apps),
        (rf"tool_fault.*{re.escape(REPAIR_MARKER)}", gold if on_fault == "retry" else dropped),
        (re.escape(PLAN_MARKER), gold)], model_name=f"scripted-{on_fault}")
    return run_experiment("appbench", subset="mm", strategy="execute_repair", model=model,
                          samples="0", data_dir=samples, out=out, upload=False,
                          progress=False, cache=False, tool_faults="rate=1,kinds=error")


def test_a_repair_loop_that_resubmits_recovers_one_that_drops_calls_does_not(
        samples: Path, tmp_path: Path) -> None:
    retry, drop = _repair_run(samples, tmp_path, "retry"), _repair_run(samples, tmp_path, "drop")
    for summary in (retry, drop):
        assert summary.metrics["faulted_examples"] == 100.0
        assert summary.metrics["retries_per_fault"] > 0  # the plan ran again, round by round
    assert retry.metrics["recovery_rate"] == 100.0 and drop.metrics["recovery_rate"] == 0.0
    # Every call failed (a persistent error), so every call was wasted.
    assert retry.metrics["wasted_calls"] == drop.metrics["wasted_calls"] == 100.0


def test_a_resumed_run_meets_the_same_faults(samples: Path, tmp_path: Path) -> None:
    whole = _run(samples, tmp_path / "whole", "mm", "rate=0.3,seed=0")
    part = tmp_path / "part" / whole.experiment
    part.mkdir(parents=True)
    for name in ("config.json", "prompts.jsonl"):
        (part / name).write_bytes((tmp_path / "whole" / whole.experiment / name).read_bytes())
    lines = (tmp_path / "whole" / whole.experiment / "examples.jsonl").read_text().splitlines()
    (part / "examples.jsonl").write_text(lines[0] + "\n" + lines[1][:40])  # killed mid-write
    resumed = _run(samples, tmp_path / "part", "mm", "rate=0.3,seed=0")
    assert resumed.experiment == whole.experiment
    assert _results(tmp_path / "part", whole.experiment) == _results(tmp_path / "whole",
                                                                     whole.experiment)


def test_a_faulted_run_rescores_to_its_summary(samples: Path, tmp_path: Path) -> None:
    summary = _run(samples, tmp_path, "mm", "rate=0.3,seed=0")
    rescored = rescore_run(tmp_path / summary.experiment)
    assert rescored.metrics == summary.metrics and rescored.metrics["faulted_examples"] > 0


def test_fault_metrics_are_na_where_nothing_was_faulted() -> None:
    clean = ExampleScore(parts={"faulted_examples": Part(hits=0, total=1),
                                "recovery_rate": Part(), "retries_per_fault": Part(),
                                "calls_after_persistent_fault": Part()})
    assert fault_metrics([clean, clean]) == {
        "faulted_examples": 0.0, "recovery_rate": None, "wasted_calls": None,
        "retries_per_fault": None, "calls_after_persistent_fault": None}


# ----------------------------------------------------------------------------- wasted calls

def _scripted_agent(seed: int) -> tuple[dict[str, Any], int]:
    """A scripted agent over three lookups under transient faults: it retries each call until
    it goes through (at most 6 attempts), then makes the first call once more (a wasteful
    repeat). Returns the example's ``tool_faults`` summary and the calls the agent itself saw
    wasted (error answers, plus the repeat when the first call had gone through)."""
    async def run() -> tuple[dict[str, Any], int]:
        wasted = 0
        with fault_session(ToolFaults(rate=0.5, kinds=("rate_limit", "timeout"), seed=seed),
                           {"q": seed}, 0) as session:
            answered: list[bool] = []
            for k, city in enumerate(("Paris", "Lyon", "Nice")):
                for attempt in range(6):
                    message = await run_tool_call(lookup, {"id": f"c{k}.{attempt}",
                                                           "name": "lookup",
                                                           "args": {"city": city}})
                    if message.status != "error":
                        break
                    wasted += 1
                answered.append(message.status != "error")
            await run_tool_call(lookup, {"id": "again", "name": "lookup",
                                         "args": {"city": "Paris"}})
            assert session is not None
            wasted += answered[0]
            if not answered[0] and "again" in session.faulted_ids:
                wasted += 1  # the repeat of a call never answered failed again
            return session.records()[-1], wasted

    return asyncio.run(run())


def test_wasted_calls_are_the_faulted_calls_and_repeats_of_answered_ones() -> None:
    seen = set()
    for seed in range(20):
        summary, wasted = _scripted_agent(seed)
        assert summary["wasted"] == wasted, seed
        assert wasted >= summary["faults"] and summary["calls"] >= wasted
        seen.add(summary["faults"])
        score = ExampleScore(scores={"success": 100.0})
        parts = fault_parts({"trace": [summary]}, score, "success").parts
        assert parts["wasted_calls"] == Part(hits=wasted, total=summary["calls"])
    assert len(seen) > 2  # the seeds gave different numbers of faults


def test_wasted_calls_pool_over_calls_and_are_na_without_calls() -> None:
    def example(wasted: int, calls: int) -> ExampleScore:
        summary = {"kind": "tool_faults", "calls": calls, "faults": wasted, "retries": 0,
                   "calls_after_persistent": 0, "wasted": wasted, "persistent": False}
        return fault_parts({"trace": [summary]}, ExampleScore(), "success")

    # 1 of 1 and 1 of 9 calls: pooled 2 of 10 (20%), not the mean of 100% and 11%.
    assert fault_metrics([example(1, 1), example(1, 9)])["wasted_calls"] == pytest.approx(20.0)
    assert fault_metrics([example(0, 0), example(0, 0)])["wasted_calls"] is None
    old = fault_parts({"trace": [{"kind": "tool_faults", "calls": 3, "faults": 1}]},
                      ExampleScore(), "success")  # a trace written before "wasted" existed
    assert old.parts["wasted_calls"] == Part()


# ----------------------------------------------------------------------------- the CLI

def test_cli_sweeps_fault_settings_and_rejects_a_bad_one(samples: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(app, ["run", "appbench", "--category", "mm", "--model", "reference",
                              "--tool-faults", "rate=2", "--out", str(tmp_path)])
    assert bad.exit_code == 2 and "rate must be between 0 and 1" in bad.output
    assert "Traceback" not in bad.output and not list(tmp_path.iterdir())
    ok = runner.invoke(app, ["run", "appbench", "--category", "mm", "--strategy", "tools",
                             "--model", "reference", "--data-dir", str(samples), "--out",
                             str(tmp_path), "--no-upload", "--json", "--tool-faults", "rate=0",
                             "--tool-faults", "rate=0.3,seed=0"])
    assert ok.exit_code == 0, ok.output
    rows = json.loads(ok.stdout)
    assert [r.get("tool_faults") for r in rows] == ["rate=0", "rate=0.3,seed=0"]
    assert rows[0]["experiment"] == "appbench-plan-mm-tools-reference"
    assert rows[1]["metrics"]["success"] < rows[0]["metrics"]["success"]
    assert rows[1]["metrics"]["recovery_rate"] == 0.0
