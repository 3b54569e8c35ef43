"""Append-only files (issue 22, item 2): no torn line is built on, and the first failed write
stops the work (a full disk is simulated by replacing the journals' one write call)."""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import HANG_GUARD_S
from toy_benchmark import register_toy, scripted, write_toy
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.data import journal
from tooleval_agents.data.journal import JournalFile, JournalWriteError, repair_torn_tail
from tooleval_agents.results.records import ExampleResult
from tooleval_agents.results.rundir import EXAMPLES, LOCK, RunDir
from tooleval_agents.results.transcripts import PROMPTS, PromptStore, read_prompts
from tooleval_agents.run.runner import run_experiment
from tooleval_agents.run.setup import LOOKAHEAD

REPO = Path(__file__).resolve().parents[1]


class FullDisk:
    """Stands in for the journals' ``os.write``: ``budget`` bytes in all (over every file),
    then ``ENOSPC`` -- a write may be cut short first, as on a real full disk."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.refused = 0

    def __call__(self, fd: int, data: Any) -> int:
        if self.budget <= 0:
            self.refused += 1
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written = os.write(fd, bytes(data[:self.budget]))
        self.budget -= written
        return written


@pytest.fixture(autouse=True)
def _toy(monkeypatch: pytest.MonkeyPatch) -> None:
    register_toy(monkeypatch)


def full_disk(monkeypatch: pytest.MonkeyPatch, budget: int) -> FullDisk:
    disk = FullDisk(budget)
    monkeypatch.setattr(journal, "_write", disk)
    return disk


# ----------------------------------------------------------------------------- JournalFile

def test_a_torn_last_line_is_cut_before_the_next_append(tmp_path: Path) -> None:
    file = tmp_path / PROMPTS
    file.write_bytes(b'{"id": "a", "value": "kept"}\n{"id": "b", "val')  # a crash mid-line
    store = PromptStore(tmp_path)
    new = store.put({"role": "user", "content": "stored after the crash"})
    store.close()
    assert file.read_bytes().endswith(b"\n")
    prompts = read_prompts(tmp_path)
    assert set(prompts) == {"a", new}  # was: the new record glued onto the torn one, lost
    assert prompts[new]["content"] == "stored after the crash"
    assert all(json.loads(line) for line in file.read_text().splitlines())


def test_repair_reads_the_tail_backwards(tmp_path: Path) -> None:
    file = tmp_path / "big.jsonl"
    line = b'{"x": "' + b"y" * 100_000 + b'"}\n'
    file.write_bytes(line * 3 + b'{"torn": "' + b"z" * 200_000)  # tail longer than a chunk
    assert repair_torn_tail(file) is True
    assert file.read_bytes() == line * 3
    assert repair_torn_tail(file) is False and repair_torn_tail(tmp_path / "none") is False
    file.write_bytes(b"no newline at all")
    assert repair_torn_tail(file) is True and file.read_bytes() == b""


@pytest.mark.parametrize("sync", ["each", "group", "none"])
def test_a_failed_write_is_undone_and_ends_the_file(tmp_path: Path, sync: Any,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    file = tmp_path / "sub" / "examples.jsonl"
    out = JournalFile(file, sync=sync)
    out.append('{"n": 1}', '{"n": 2}')
    disk = full_disk(monkeypatch, budget=5)  # the next line is cut after 5 bytes
    with pytest.raises(JournalWriteError) as failed:
        out.append('{"n": 3, "long": "' + "x" * 100 + '"}')
    message = str(failed.value)
    assert str(file) in message and "No space left on device" in message
    assert "\n" not in message and "run the same command again" in message
    assert file.read_bytes() == b'{"n": 1}\n{"n": 2}\n'  # the partial line was cut back
    assert out.failed is not None
    with pytest.raises(JournalWriteError, match="No space left"):
        out.append('{"n": 4}')  # nothing is written after the first failure
    assert disk.refused == 1  # ... not even tried
    out.close()  # the failure was reported already: closing does not raise it again
    assert file.read_bytes() == b'{"n": 1}\n{"n": 2}\n'


def test_a_failed_background_fsync_is_reported(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    out = JournalFile(tmp_path / "x.jsonl", sync="group")

    def broken_fsync(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(journal.os, "fsync", broken_fsync)
    out.append('{"n": 1}')
    with pytest.raises(JournalWriteError, match="Input/output error"):
        out.close()


def test_a_group_commit_syncs_the_files_it_refers_to_first(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    synced: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}").rsplit("/", 1)[-1])
        real(fd)

    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc to name the synced files")
    monkeypatch.setattr(journal.os, "fsync", fsync)
    prompts = JournalFile(tmp_path / "prompts.jsonl", sync="none")
    examples = JournalFile(tmp_path / "examples.jsonl", sync="group", sync_first=(prompts,))
    prompts.append('{"id": "p"}')
    examples.append('{"example_id": "e"}')
    examples.close()
    prompts.close()
    assert synced[:2] == ["prompts.jsonl", "examples.jsonl"]


# ----------------------------------------------------------------------------- a run, disk full

def _check_files(run_dir: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every line of examples.jsonl and prompts.jsonl is whole JSON, every stored prompt a
    result refers to is there (the viewer's "missing from prompts.jsonl")."""
    lines = [json.loads(ln) for ln in (run_dir / EXAMPLES).read_text().splitlines()]
    prompts = read_prompts(run_dir)
    assert len(prompts) == len((run_dir / PROMPTS).read_text().splitlines())
    for line in lines:
        for call in line["model_calls"]:
            assert all(m in prompts for m in call["messages"])
    return lines, prompts


def test_a_full_disk_stops_the_run_at_the_first_failed_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = write_toy(tmp_path / "data", n=40)
    out = tmp_path / "runs"
    kwargs: dict[str, Any] = {"out": out, "data_dir": data, "progress": False, "cache": False,
                              "max_concurrency": 4, "strategy_options": {"delay": 0.01}}
    model = scripted()
    disk = full_disk(monkeypatch, budget=20_000)  # room for some results, not for 40
    with pytest.raises(JournalWriteError) as failed:
        run_experiment("toy", subset="en", model=model, **kwargs)
    run_dir = next(out.iterdir())
    assert str(run_dir) in str(failed.value) and "\n" not in str(failed.value)
    lines, _ = _check_files(run_dir)
    kept = len(lines)
    assert 0 < kept < 40
    # Before: every example still ran (80 calls for 17 kept results). Now only those in
    # flight when the write failed may have called the model: max_concurrency of them, and
    # the examples a scheduled run keeps open to pick its next request from.
    assert model.calls <= kept + 4 + LOOKAHEAD < 40
    assert disk.refused <= 1 + 4  # the failure, and at most the writes already under way
    assert not (run_dir / LOCK).exists()
    assert not (run_dir / "summary.json").exists()

    monkeypatch.setattr(journal, "_write", os.write)  # space freed: resume
    again = scripted()
    summary = run_experiment("toy", subset="en", model=again, **kwargs)
    assert again.calls == 40 - kept
    assert summary.counts["ok"] == 40 and summary.metrics == {"accuracy": 100.0}
    lines, _ = _check_files(run_dir)
    assert sorted(r["index"] for r in lines) == list(range(40))  # once each
    assert not (run_dir / LOCK).exists()


def test_prompts_file_full_is_the_same_stop(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    data = write_toy(tmp_path / "data", n=12)
    out = tmp_path / "runs"
    real = journal._write
    model = scripted()
    written: list[str] = []

    def prompts_fill(fd: int, data: Any) -> int:  # only prompts.jsonl's device is full
        name = os.readlink(f"/proc/self/fd/{fd}").rsplit("/", 1)[-1]
        written.append(name)
        if name == PROMPTS and written.count(PROMPTS) > 8:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc to tell the files apart")
    monkeypatch.setattr(journal, "_write", prompts_fill)
    with pytest.raises(JournalWriteError, match=r"prompts\.jsonl: No space left"):
        run_experiment("toy", subset="en", model=model, out=out, data_dir=data,
                       progress=False, cache=False, max_concurrency=1)
    run_dir = next(out.iterdir())
    lines, _ = _check_files(run_dir)
    # the example whose prompt could not be stored, and at most the examples open beside it
    assert len(lines) + 1 <= model.calls <= len(lines) + 1 + LOOKAHEAD
    assert not (run_dir / LOCK).exists()


def test_the_command_says_it_in_one_line_naming_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = write_toy(tmp_path / "data", n=10)
    full_disk(monkeypatch, budget=3_000)
    result = CliRunner().invoke(app, ["run", "toy", "--lang", "en", "--model", "reference",
                                      "--out", str(tmp_path / "runs"), "--data-dir", str(data),
                                      "--no-cache", "--max-concurrency", "1"])
    assert result.exit_code == 1, result.output
    errors = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in result.output
    assert "jsonl: No space left on device" in errors[0]
    assert str(tmp_path / "runs") in errors[0]


def test_run_dir_append_is_sealed_and_refuses_on_a_full_disk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rd = RunDir(tmp_path / "run")
    rd.append(ExampleResult(example_id="e0", index=0, status="ok"))
    before = (rd.path / EXAMPLES).read_bytes()
    assert b'"line_digest":"' in before and rd.edited() == []
    full_disk(monkeypatch, budget=10)
    with pytest.raises(JournalWriteError, match=r"examples\.jsonl"):
        rd.append(ExampleResult(example_id="e1", index=1, status="ok"))
    assert (rd.path / EXAMPLES).read_bytes() == before


# ----------------------------------------------------------------------------- the lock

def test_the_lock_file_goes_with_its_holder(tmp_path: Path) -> None:
    rd = RunDir(tmp_path / "run")
    with rd.lock():
        assert (rd.path / LOCK).read_text().strip() == str(os.getpid())
        holder = subprocess.run(
            [sys.executable, "-c", "from tooleval_agents.results.rundir import RunDir\n"
             f"with RunDir({str(rd.path)!r}).lock(): pass"],
            capture_output=True, text=True, cwd=REPO, timeout=HANG_GUARD_S)
        assert holder.returncode == 1 and "is in use by process" in holder.stderr
    assert not (rd.path / LOCK).exists()
    with pytest.raises(RuntimeError), rd.lock():
        raise RuntimeError("a run that failed")
    assert not (rd.path / LOCK).exists()
    with rd.lock():  # and it can be taken again
        assert (rd.path / LOCK).exists()


# ----------------------------------------------------------------------------- builds

def test_build_journals_cut_a_torn_line_and_stop_at_a_full_disk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tooleval_agents.graphs.appbench.build import Journal as PathJournal
    from tooleval_agents.graphs.appbench.build import JournalEntry as PathEntry
    from tooleval_agents.ultratool.construction import Journal as QueryJournal
    from tooleval_agents.ultratool.construction import JournalEntry as QueryEntry

    entries: list[tuple[Callable[[Path], Any], Any, Path]] = [
        (PathJournal, PathEntry(key="p1", status="kept", sample={}), tmp_path / "a.build.jsonl"),
        (QueryJournal, QueryEntry(kind="sample", key="q1", seed="s", query="q",
                                  status="built"), tmp_path / "b.journal.jsonl")]
    for make, entry, path in entries:
        path.write_text('{"key": "p0", "sta')  # a crash mid-line
        book = make(path)
        book.append(entry)
        assert path.read_text() == entry.model_dump_json() + "\n"
        disk = full_disk(monkeypatch, budget=4)
        with pytest.raises(JournalWriteError, match=re.escape(path.name)):
            book.append(entry)
        with pytest.raises(JournalWriteError):
            book.append(entry)
        assert disk.refused == 1 and path.read_text() == entry.model_dump_json() + "\n"
        book.file.close()
        monkeypatch.setattr(journal, "_write", os.write)


def test_a_build_starts_no_job_after_a_failure() -> None:
    import asyncio

    from tooleval_agents.graphs.ultratool.build_run import _gather

    started: list[int] = []

    def job(n: int) -> Callable[[], Any]:
        async def run() -> None:
            started.append(n)
            await asyncio.sleep(0.01)
            if n == 2:
                raise JournalWriteError(Path("x.journal.jsonl"),
                                        OSError(errno.ENOSPC, "No space left on device"))
        return run

    with pytest.raises(JournalWriteError):
        asyncio.run(_gather([job(n) for n in range(20)], 2, lambda: None))
    assert max(started) <= 3  # jobs 0-3 had started (two at a time); none after


def test_the_appbench_build_stops_at_a_full_disk(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from tooleval_agents.appbench.build_models import ScriptedBuildModel
    from tooleval_agents.graphs.appbench.build import BuildSettings, run_build

    settings = BuildSettings(sgd_dir=Path(__file__).parent / "fixtures" / "sgd", split="test",
                             out=tmp_path / "built.json", max_concurrency=1)
    model = ScriptedBuildModel()
    full_disk(monkeypatch, budget=1)
    with pytest.raises(JournalWriteError, match=r"built\.json\.build\.jsonl: No space"):
        run_build(settings, model, model)
    assert model.calls == 2  # one path (a writer and a judge call); none started after it
    assert (tmp_path / "built.json.build.jsonl").read_bytes() == b""


def test_a_group_commit_covers_the_lines_of_a_moment_with_one_fsync(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(fd)
        real(fd)

    # A window far longer than the test's guard: close returns because it ends the wait, not
    # because the window ran out.
    monkeypatch.setattr(journal, "GROUP_WINDOW_S", 100 * HANG_GUARD_S)
    monkeypatch.setattr(journal.os, "fsync", fsync)
    out = JournalFile(tmp_path / "examples.jsonl", sync="group")
    for n in range(20):
        out.append(f'{{"n": {n}}}')
    closing = threading.Thread(target=out.close)
    closing.start()
    closing.join(HANG_GUARD_S)
    assert not closing.is_alive(), "close waited for the group window"
    assert len(synced) == 1  # one fsync for the 20 lines, at close
    assert len((tmp_path / "examples.jsonl").read_bytes().splitlines()) == 20
