"""External agents as the system under test (``tooleval run ... --agent-cmd``): a scripted
outside agent, a separate process speaking MCP, scores 100; agents that crash, hang, print
garbage or flood end as their error kind while the other examples go on untouched, and a child
that left the agent's process group (``setsid``) is ended with its example; the run's exit
status says when nothing was measured; resume after ``kill -9`` runs the cut example again
from a clean session, and the run lock holds; the command is part of the run's identity;
placeholders and environment."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import wait_until
from typer.testing import CliRunner

from tooleval_agents import agent_io_for, get_benchmark
from tooleval_agents.cli import app
from tooleval_agents.data.langsmith_datasets import to_examples
from tooleval_agents.mcp.external import read_usage
from tooleval_agents.mcp.log import CALLS, read_log
from tooleval_agents.mcp.sessions import request_text
from tooleval_agents.registry import get_strategy
from tooleval_agents.results.rundir import RunDir, RunLockedError
from tooleval_agents.run.runner import run_experiment
from tooleval_agents.tool_faults import example_key

AGENT = Path(__file__).parent / "scripted_mcp_agent.py"
SCRIPTED = f"{sys.executable} {AGENT}"


def plans(samples: Path, subset: str, out: Path) -> tuple[Path, list[dict[str, Any]]]:
    """The gold tool plan of every sample of an AppBench split, by the request its agent reads
    (what the scripted agent plays), and the examples' inputs."""
    split = get_benchmark("appbench").split("plan", subset)
    io, strategy = agent_io_for("appbench", subset=subset), get_strategy("appbench", "tools")
    found, inputs = {}, []
    for example in to_examples(split, samples):
        given = dict(example.inputs or {})
        inputs.append(given)
        gold = strategy.gold_answers(split, given, example.outputs or {})  # type: ignore[attr-defined]
        found[request_text(io.messages(given))] = json.loads(gold[0].text)
    path = out / f"plans-{subset}.json"
    path.write_text(json.dumps(found), encoding="utf-8")
    return path, inputs


def results(run_dir: Path | str) -> list[Any]:
    return sorted(RunDir(run_dir).results().values(), key=lambda r: r.index)


def test_a_scripted_outside_agent_scores_100(samples: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    path, inputs = plans(samples, "sm", tmp_path)
    monkeypatch.setenv("SCRIPTED_PLANS", str(path))
    monkeypatch.setenv("SCRIPTED_USAGE", "1")
    summary = run_experiment("appbench", subset="sm", agent_cmd=SCRIPTED, agent_name="scripted",
                             data_dir=samples, out=tmp_path, cache=False, progress=False,
                             upload=False, max_concurrency=2)
    assert summary.metrics["success"] == 100.0 and summary.counts["scored"] == len(inputs)
    assert summary.counts["usage_reported"] == len(inputs)
    assert summary.usage["input_tokens"] == 10 * len(inputs)  # what the agent reported
    run_dir = Path(summary.run_dir)  # type: ignore[arg-type]
    assert run_dir.name == "appbench-plan-sm-tools+scripted-external"
    config = RunDir(run_dir).read_config()
    assert (config.agent, config.agent_cmd, config.strategy) == ("scripted", SCRIPTED, "tools")
    log = list(read_log(run_dir / CALLS))
    for result in results(run_dir):  # the trajectory scored is what its session logged
        process = next(t for t in result.outputs["trace"] if t["kind"] == "agent_process")
        scored = [(t["name"], t["args"]) for t in result.outputs["trace"]
                  if t["kind"] == "tool_call"]
        logged = [(r["tool"], r["arguments"]) for r in log
                  if r["kind"] == "call" and r["session"] == process["session"]]
        assert scored == logged and process["exit_code"] == 0 and process["usage_reported"]
        assert [r["event"] for r in log if r["kind"] == "session"
                and r["session"] == process["session"]] == ["opened", "closed"]


def test_tool_faults_reach_an_outside_agent_as_in_a_run(samples: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    path, _ = plans(samples, "sm", tmp_path)
    monkeypatch.setenv("SCRIPTED_PLANS", str(path))
    summary = run_experiment("appbench", subset="sm", agent_cmd=SCRIPTED, data_dir=samples,
                             out=tmp_path, cache=False, progress=False, upload=False,
                             tool_faults="rate=0.5,kinds=error+malformed,seed=4")
    assert 0 < summary.metrics["faulted_examples"] < 100
    assert summary.metrics["success"] < 100  # a faulted call did not reach its service
    faulted = {(r["session"], r["fault"]) for r in read_log(Path(summary.run_dir) / CALLS)  # type: ignore[arg-type]
               if r["kind"] == "call" and r["fault"]}
    drawn = {(t["session"], f["fault"]) for r in results(summary.run_dir)  # type: ignore[arg-type]
             for t in r.outputs["trace"] if t["kind"] == "agent_process"
             for f in r.outputs["trace"] if f["kind"] == "tool_fault"}
    assert faulted == drawn and faulted  # the server drew them, the run scored them


DISPATCH = """#!/bin/sh
mode=$(grep -F "$TOOLEVAL_EXAMPLE" "$MODES" | cut -d' ' -f2)
case "$mode" in
  crash) cat > /dev/null; echo "boom" >&2; exit 3 ;;
  garbage) printf '\\377\\376 not text' ;;
  flood) head -c 2000000 /dev/zero | tr '\\000' x ;;
  late) SCRIPTED_MODE=late exec "$PY" "$AGENT" ;;
  *) exec "$PY" "$AGENT" ;;
esac
"""


def test_misbehaving_agents_end_as_their_error_kind_and_the_others_go_on(
        samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, inputs = plans(samples, "ss", tmp_path)
    modes = ["crash", "garbage", "flood", "late", "good", "good"][:len(inputs)]
    (tmp_path / "modes.txt").write_text("".join(
        f"{example_key(i, 0)} {m}\n" for i, m in zip(inputs, modes, strict=True)))
    script = tmp_path / "dispatch.sh"
    script.write_text(DISPATCH)
    marker = tmp_path / "late.marker"
    for key, value in {"SCRIPTED_PLANS": path, "MODES": tmp_path / "modes.txt",
                       "PY": sys.executable, "AGENT": AGENT, "SCRIPTED_MARKER": marker}.items():
        monkeypatch.setenv(key, str(value))
    run = CliRunner().invoke(app, [
        "run", "appbench", "--category", "ss", "--agent-cmd", f"sh {script}",
        "--agent-name", "mixed", "--data-dir", str(samples), "--out", str(tmp_path / "runs"),
        "--no-cache", "--json", "--max-concurrency", str(len(inputs))])
    # Some examples were measured: the failures are scored.
    assert run.exit_code == 0, run.output
    row = json.loads(run.stdout)
    assert (row["counts"]["ok"], row["counts"]["agent_errors"]) == (3, 3)
    by_mode = dict(zip(modes, results(row["run_dir"]), strict=False))
    assert by_mode["crash"].error_kind == "agent_exit" and "status 3" in by_mode["crash"].error
    assert "boom" in by_mode["crash"].error
    assert by_mode["garbage"].error_kind == "agent_output" and "UTF-8" in by_mode["garbage"].error
    assert by_mode["flood"].error_kind == "agent_output"
    for failed in ("crash", "garbage", "flood"):  # scored as an empty answer, never dropped
        assert by_mode[failed].score["scores"]["success"] == 0.0
    good = [r for m, r in zip(modes, results(row["run_dir"]), strict=True) if m in ("good", "late")]
    assert all(r.score["scores"]["success"] == 100.0 for r in good)
    # The child that left the agent's process group (setsid) was ended with its example:
    # it never saw its session end, nor called after it.
    escaped = int(Path(f"{marker}.pid").read_text())
    assert not marker.exists() and not alive(escaped)
    log = list(read_log(Path(row["run_dir"]) / CALLS))
    assert not [r for r in log if r["kind"] == "late_call"]
    sessions = [t["session"] for r in good for t in r.outputs["trace"]
                if t["kind"] == "agent_process"]
    for result, session in zip(good, sessions, strict=True):  # nothing of another example
        assert [(t["name"], t["args"]) for t in result.outputs["trace"]
                if t["kind"] == "tool_call"] == [
            (r["tool"], r["arguments"]) for r in log
            if r["kind"] == "call" and r["session"] == session]


def test_a_hanging_agent_is_killed_with_its_process_group(samples: Path,
                                                         tmp_path: Path) -> None:
    pids = tmp_path / "pgid"
    hang = f"echo $$ > {pids}; sleep 600 & sleep 600"
    run = CliRunner().invoke(app, [
        "run", "appbench", "--category", "ss", "--limit", "1", "--agent-cmd", hang,
        "--agent-timeout", "1", "--data-dir", str(samples), "--out", str(tmp_path / "runs"),
        "--no-cache", "--json"])
    assert run.exit_code == 1, run.output  # the agent failed on every example: nothing measured
    row = json.loads(run.stdout)
    (result,) = results(row["run_dir"])
    assert result.status == "agent_error" and result.error_kind == "agent_timeout"
    assert "agent_timeout 1" in run.stderr
    assert live_members(int(pids.read_text())) == []  # the shell and its background sleep


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie, which waits for its reaper, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def live_members(pgid: int) -> list[int]:
    """The processes of a group that still run (zombies, which wait for a reaper, are
    dead)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # it ended while read
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def test_the_command_names_its_run_and_gets_its_placeholders(samples: Path,
                                                            tmp_path: Path) -> None:
    seen = tmp_path / "seen.txt"
    command = (f"printf '%s\\n' {{url}} \"$TOOLEVAL_MCP_URL\" {{token}} \"$TOOLEVAL_MCP_TOKEN\" "
               f"{{model}} {{usage_file}} \"$TOOLEVAL_USAGE_FILE\" > {seen}; cat > {seen}.in; "
               f"cat {{instruction_file}} > {seen}.file; echo done")
    args = ["run", "appbench", "--category", "ss", "--limit", "1", "--agent-cmd", command,
            "--model", "reference", "--data-dir", str(samples), "--out",
            str(tmp_path / "runs"), "--no-cache", "--json"]
    first = CliRunner().invoke(app, args)
    # It never opened its session: not a weak answer but an agent that never reached its
    # tools, counted and said (exit 1: nothing of it was measured).
    assert first.exit_code == 1, first.output
    assert "the agent never reached its tools on any example (agent_no_tools 1)" in first.stderr
    url, env_url, token, env_token, model, usage, env_usage = seen.read_text().splitlines()
    assert url == env_url and "/s/" in url and token == env_token and token
    assert model == "reference" and usage == env_usage
    request = (tmp_path / "seen.txt.in").read_text()
    assert "Request: " in request and (tmp_path / "seen.txt.file").read_text() == request
    row = json.loads(first.stdout)
    assert Path(row["run_dir"]).name == "appbench-plan-ss-tools+agent-reference"
    again = CliRunner().invoke(app, args)
    assert json.loads(again.stdout)["run_dir"] == row["run_dir"]  # the same run: resumed
    assert json.loads(again.stdout)["session"]["resumed"] == 1
    other = CliRunner().invoke(app, [*args[:7], command + " ", *args[8:]])
    assert json.loads(other.stdout)["run_dir"] != row["run_dir"]  # another command


def test_resume_after_kill_9_runs_the_cut_example_from_a_clean_session(
        samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, inputs = plans(samples, "sm", tmp_path)
    marker, out = tmp_path / "killed.marker", tmp_path / "runs"
    cut = request_text(agent_io_for("appbench", subset="sm").messages(inputs[1]))
    env = {**os.environ, "SCRIPTED_PLANS": str(path), "SCRIPTED_MODE": "kill_me",
           "SCRIPTED_KILL": cut[-60:], "SCRIPTED_MARKER": str(marker)}
    first = subprocess.Popen(
        [sys.executable, "-m", "tooleval_agents", "run", "appbench", "--category", "sm",
         "--limit", "3", "--agent-cmd", SCRIPTED, "--agent-name", "scripted",
         "--max-concurrency", "1", "--data-dir", str(samples), "--out", str(out),
         "--no-cache", "--no-progress"], env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: marker.exists() and bool(marker.read_text()),
                   "the cut example's agent to make its first call", first)
        (run_dir,) = out.iterdir()
        with pytest.raises(RunLockedError, match="in use"), RunDir(run_dir).lock():
            pass  # a second run of it now stops at once
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
        if marker.exists() and marker.read_text():  # ended with the harness, as it should be
            with contextlib.suppress(ProcessLookupError):
                os.killpg(os.getpgid(int(marker.read_text())), signal.SIGKILL)
    monkeypatch.setenv("SCRIPTED_PLANS", str(path))
    summary = run_experiment("appbench", subset="sm", limit=3, agent_cmd=SCRIPTED,
                             agent_name="scripted", data_dir=samples, out=out, cache=False,
                             progress=False, upload=False, max_concurrency=1)
    assert summary.run_dir == str(run_dir) and summary.session["resumed"] == 1
    assert summary.metrics["success"] == 100.0 and summary.counts["scored"] == 3
    log = list(read_log(run_dir / CALLS))
    scored = {t["session"] for r in results(run_dir) for t in r.outputs["trace"]
              if t["kind"] == "agent_process"}
    opened = {r["session"] for r in log if r.get("event") == "opened"}
    closed = {r["session"] for r in log if r.get("event") == "closed"}
    cut_off = opened - closed  # the session kill -9 ended: in the log, in no result
    assert len(cut_off) == 1 and not cut_off & scored
    assert any(r["kind"] == "call" and r["session"] in cut_off for r in log)


def test_an_agent_calling_its_siblings_session_is_refused_and_counted(
        samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Two agents at once; each reads the other's TOOLEVAL_MCP_URL from /proc/<pid>/environ and
    # calls it with its own key (as the probe did): refused, logged, counted.
    path, _ = plans(samples, "ss", tmp_path)
    marker = tmp_path / "snoop"
    marker.mkdir()
    for key, value in {"SCRIPTED_PLANS": path, "SCRIPTED_MODE": "snoop",
                       "SCRIPTED_MARKER": marker}.items():
        monkeypatch.setenv(key, str(value))
    summary = run_experiment("appbench", subset="ss", limit=2, agent_cmd=SCRIPTED,
                             agent_name="snoop", data_dir=samples, out=tmp_path, cache=False,
                             progress=False, upload=False, max_concurrency=2)
    seen = [json.loads(f.read_text()) for f in marker.glob("done-*")]
    assert [s["statuses"] for s in seen] == [[401], [401]]  # each found its sibling: refused
    assert summary.counts["foreign_calls"] == 2
    assert any("another example's session" in note for note in summary.notes)
    assert summary.metrics["success"] == 100.0  # its own example, untouched
    run_dir = Path(summary.run_dir)  # type: ignore[arg-type]
    log = list(read_log(run_dir / CALLS))
    sessions = {t["session"] for r in results(run_dir) for t in r.outputs["trace"]
                if t["kind"] == "agent_process"}
    refused = [(r["session"], r["key_of"]) for r in log if r["kind"] == "foreign_call"]
    assert len(refused) == 2 and {s for pair in refused for s in pair} == sessions
    assert all(a != b for a, b in refused)
    assert "INTRUDER" not in json.dumps([r for r in log if r["kind"] == "call"])
    assert [r.tool_calls.foreign for r in results(run_dir)] == [1, 1]  # type: ignore[union-attr]
    # Nothing the run wrote holds a key, and the agents did not run in the run directory.
    assert seen[0]["key"] != seen[1]["key"]
    for written in (p for p in run_dir.rglob("*") if p.is_file()):
        assert not any(s["key"] in written.read_text(errors="replace") for s in seen), written
    assert all(Path(s["cwd"]).resolve() != run_dir.resolve() for s in seen)


def test_usage_counts_past_2_53_are_unreadable(tmp_path: Path) -> None:
    usage = tmp_path / "usage.json"
    usage.write_text(json.dumps({"input_tokens": 10**29, "output_tokens": 2}))
    assert read_usage(usage) is None  # not reported, rather than a number no reader keeps
    usage.write_text("\n".join(json.dumps({"input_tokens": 2**52}) for _ in range(3)))
    assert read_usage(usage) is None  # the sum too
    usage.write_text(json.dumps({"input_tokens": 2**53, "output_tokens": 2, "model_calls": 1}))
    assert read_usage(usage) == {"input_tokens": 2**53, "output_tokens": 2,
                                 "cached_input_tokens": 0, "model_calls": 1}
