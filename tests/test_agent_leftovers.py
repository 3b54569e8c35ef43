"""Nothing an agent command started outlives its example, nor the harness: a child that left
the agent's process group (``setsid``) ends with its example; ``SIGTERM`` to ``tooleval run``
winds it down as Ctrl-C does (its agents ended, its lock released, exit 143 after one line);
after ``kill -9`` of it, its agents die with it and the next run says what its lock left.
Each case unsealed (the per-agent reaper) and sealed (the sandbox's PID namespace; skipped
where ``bwrap`` cannot run)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from helpers import HANG_GUARD_S, LISTING, LISTS_TOOLS, cli, needs_bwrap, running, wait_until

from tooleval_agents.mcp.agent_process import HARNESS_ENV, end_all, left_running
from tooleval_agents.mcp.launch import descendants
from tooleval_agents.results.dirlock import LOCK

SEALED = pytest.mark.parametrize("sealed", [False, True], ids=["unsealed", "sealed"])


def marker() -> str:
    """A number no other process's command line holds: ``sleep <marker>`` marks ours."""
    return f"86400.{uuid.uuid4().int % 10**9}"


def sandbox_args(sealed: bool, *read: Path) -> list[str]:
    if not sealed:
        return []
    needs_bwrap()
    return ["--agent-sandbox", *(a for path in (LISTING, *read)
                                 for a in ("--agent-read", str(path)))]


def sleeping(mark: str) -> list[int]:
    """The ``sleep <mark>`` processes that run."""
    return [pid for pid in running(mark)
            if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].endswith(b"sleep")]


def end(mark: str) -> None:
    for pid in running(mark):
        os.kill(pid, signal.SIGKILL)


@SEALED
def test_a_child_that_left_the_process_group_ends_with_its_example(
        sealed: bool, samples: Path, tmp_path: Path) -> None:
    mark = marker()
    started = '"$TOOLEVAL_INSTRUCTION_FILE.started"'  # the example's own folder
    command = (f"{LISTS_TOOLS} >/dev/null; setsid sh -c 'touch {started}; exec sleep {mark}' & "
               f"while [ ! -e {started} ]; do sleep 0.01; done; echo done")
    try:
        run = cli("run", "appbench", "--category", "ss", "--limit", 2, "--agent-cmd",
                  command, *sandbox_args(sealed), "--data-dir", samples, "--out",
                  tmp_path / "runs", "--no-cache", "--json")
        assert run.exit_code == 0, run.output
        wait_until(lambda: not running(mark), "the escaped children to be ended")
    finally:
        end(mark)


def start_run(samples: Path, out: Path, command: str, extra: list[str],
              flag: Path | None = None) -> subprocess.Popen[str]:
    """``tooleval run`` of ``command``; ``flag`` reaches the agent as ``$HANG_FLAG`` (in the
    environment, not the command: a file the command names is part of the run's identity,
    and this one comes and goes)."""
    env = {**os.environ, **({"HANG_FLAG": str(flag)} if flag is not None else {})}
    return subprocess.Popen(
        [sys.executable, "-m", "tooleval_agents", "run", "appbench", "--category", "ss",
         "--limit", "2", "--max-concurrency", "2", "--agent-cmd", command, *extra,
         "--data-dir", str(samples), "--out", str(out), "--no-cache", "--no-progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def hanging(mark: str) -> str:
    """An agent that, while the file ``$HANG_FLAG`` exists, starts a child in a session of its
    own and sleeps; else answers at once."""
    # It hangs whether or not its listing went through: what is tested is what ends it.
    return (f'{LISTS_TOOLS} >/dev/null; if [ -e "$HANG_FLAG" ]; then setsid sleep {mark} & '
            f'sleep {mark}; fi; echo done')


@SEALED
def test_sigterm_winds_the_run_down_and_ends_its_agents(sealed: bool, samples: Path,
                                                        tmp_path: Path) -> None:
    mark, flags = marker(), tmp_path / "flags"
    flags.mkdir()
    (flags / "hang").touch()
    extra = sandbox_args(sealed, flags)
    harness = start_run(samples, tmp_path / "runs", hanging(mark), extra, flags / "hang")
    try:
        wait_until(lambda: len(sleeping(mark)) >= 4, "two agents and their children", harness)
        harness.send_signal(signal.SIGTERM)
        _, err = harness.communicate(timeout=HANG_GUARD_S)
        assert harness.returncode == 143, err
        assert "Traceback" not in err and err.count("stopped (SIGTERM)") == 1, err
        (run_dir,) = (tmp_path / "runs").iterdir()
        assert not (run_dir / LOCK).exists()  # released
        wait_until(lambda: not running(mark), "the agents and their children to be ended")
    finally:
        harness.kill()
        end(mark)


@SEALED
def test_kill_9_of_the_run_takes_its_agents_and_the_next_run_says_so(
        sealed: bool, samples: Path, tmp_path: Path) -> None:
    mark, flags = marker(), tmp_path / "flags"
    flags.mkdir()
    (flags / "hang").touch()
    extra = sandbox_args(sealed, flags)
    command = hanging(mark)
    harness = start_run(samples, tmp_path / "runs", command, extra, flags / "hang")
    try:
        wait_until(lambda: len(sleeping(mark)) >= 4, "two agents and their children", harness)
        harness.send_signal(signal.SIGKILL)
        harness.wait(timeout=HANG_GUARD_S)
        wait_until(lambda: not running(mark), "the agents to die with the harness")
    finally:
        harness.kill()
        end(mark)
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert (run_dir / LOCK).read_text().strip() == str(harness.pid)  # what kill -9 left
    (flags / "hang").unlink()
    again = start_run(samples, tmp_path / "runs", command, extra, flags / "hang")
    _, err = again.communicate(timeout=HANG_GUARD_S)
    assert again.returncode == 0, err
    said = " ".join(err.split())
    assert (f"the run before this one (process {harness.pid}) was stopped without ending"
            in said), said
    assert "none of its agent commands' processes was left running" in said
    assert not (run_dir / LOCK).exists()


def test_what_an_agent_started_is_found_below_it_and_by_its_harness() -> None:
    """The reaper's walk (:func:`launch.descendants`) finds a child that left the agent's
    process group; the next run finds a killed harness's agents by the variable each
    inherits (:func:`agent_process.left_running`), and ends them (:func:`end_all`)."""
    mark, harness = marker(), "999999999"  # no process has this PID
    agent = subprocess.Popen(["/bin/sh", "-c", f"setsid sleep {mark} & sleep {mark}; wait"],
                             env={**os.environ, HARNESS_ENV: harness})
    try:
        wait_until(lambda: len(sleeping(mark)) == 2, "the agent's two children", agent)
        assert set(sleeping(mark)) <= set(descendants(agent.pid))
        left = left_running(int(harness))
        assert set(sleeping(mark)) | {agent.pid} <= set(left)
        end_all(left)
        wait_until(lambda: not running(mark), "the agent and its children to be ended")
    finally:
        agent.kill()
        agent.wait()
        end(mark)
