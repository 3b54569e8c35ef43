"""Issue 33, the smaller items: a run's own files are never an export's output, a kill or a
full disk leaves nothing half-made beside an output and the error names the file, a damaged
result line is set aside and run again, a changed line is no example of the run, LangSmith's
odd answers read in one line, and a repeated ``--tool-faults`` key is refused. Each test starts
from the issue's command."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from helpers import needs_inspect
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.results.rundir import DAMAGED, RunDir

TOOLEVAL = [sys.executable, "-m", "tooleval_agents.cli"]


def _run(samples: Path, out: Path, *more: str) -> Path:
    done = CliRunner().invoke(app, ["run", "appbench", "--category", "ss", "--model",
                                    "reference", "--data-dir", str(samples), "--out", str(out),
                                    "--no-cache", *more])
    assert done.exit_code == 0, done.output
    (run,) = [p for p in out.iterdir() if (p / "config.json").is_file()]
    return run


@pytest.fixture
def run_dir(samples: Path, tmp_path: Path) -> Path:
    return _run(samples, tmp_path / "runs")


@pytest.mark.parametrize("name", ["config.json", "summary.json"])
def test_export_onto_the_runs_own_file_is_refused(run_dir: Path, samples: Path,
                                                  name: str) -> None:
    before = (run_dir / name).read_bytes()
    done = CliRunner().invoke(app, ["export", "run", str(run_dir), "--out",
                                    str(run_dir / name)])
    assert done.exit_code == 2 and f"is the run's own {name}" in done.output
    assert "Traceback" not in done.output and (run_dir / name).read_bytes() == before
    assert CliRunner().invoke(app, ["view", str(run_dir), "--out",
                                    str(run_dir.parent / "site")]).exit_code == 0
    _run(samples, run_dir.parent)  # the next run resumes the directory


SLOW_FSYNC = """
import os, sys, time
real = os.fsync
def slow(fd):
    path = os.readlink(f"/proc/self/fd/{fd}")
    if ".inspect_tmp_" in path:  # inspect's writer, its file written: the moment to be killed
        print("WRITING", path, flush=True)
        time.sleep(120)
    return real(fd)
os.fsync = slow
from tooleval_agents.cli import app
app(sys.argv[1:])
"""


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc (Linux)")
def test_kill_9_during_an_export_leaves_nothing_beside_its_output(run_dir: Path,
                                                                  tmp_path: Path) -> None:
    needs_inspect()  # the export writes inspect_ai's log
    out = tmp_path / "logs" / "run.eval"
    out.parent.mkdir()
    child = subprocess.Popen([sys.executable, "-c", SLOW_FSYNC, "export", "run",
                              str(run_dir), "--out", str(out)], stdout=subprocess.PIPE,
                             text=True)
    assert child.stdout is not None
    line = child.stdout.readline()
    assert line.startswith("WRITING"), line
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert sorted(p.name for p in out.parent.iterdir()) == []  # no .inspect_tmp_*.writing
    shutil.rmtree(Path(line.split()[1]).parent)  # inspect's folder, in the temporary folder
    done = CliRunner().invoke(app, ["export", "run", str(run_dir), "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert sorted(p.name for p in out.parent.iterdir()) == ["run.eval"]


def _limited(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))  # writes past it: EFBIG


def _full_disk(*command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``tooleval COMMAND`` with every file it writes capped at 4 KB (a disk that fills)."""
    env = {**os.environ, "MPLCONFIGDIR": str(cwd / "mpl")}
    return subprocess.run([*TOOLEVAL, *command], capture_output=True, text=True, cwd=cwd,
                          env=env, preexec_fn=lambda: _limited(4096), timeout=300)


def test_a_full_disk_names_the_file_and_leaves_no_half_site(run_dir: Path,
                                                            tmp_path: Path) -> None:
    needs_inspect()  # the export writes inspect_ai's log
    site = tmp_path / "site"
    done = _full_disk("view", str(run_dir), "--out", str(site), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "could not write " + str(site) in done.stderr + done.stdout
    assert "Traceback" not in done.stderr and not (site / ".data.new").exists()
    report = tmp_path / "report"
    done = _full_disk("report", str(run_dir), "--out", str(report), cwd=tmp_path)
    assert done.returncode == 1 and "could not write " + str(report) in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    # .json: inspect's .eval writer builds its zip in a temporary file, whose destructor
    # prints inspect's own lines when that disk is full too
    log = tmp_path / "run.json"
    done = _full_disk("export", "run", str(run_dir), "--out", str(log), cwd=tmp_path)
    assert done.returncode == 1 and f"could not write {log}" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and sorted(p.name for p in tmp_path.iterdir()
                                                      if p.name.startswith(".")) == []


def test_a_damaged_line_is_set_aside_and_its_example_run_again(run_dir: Path,
                                                               samples: Path) -> None:
    file = run_dir / "examples.jsonl"
    lines = file.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2][:50] + b"\x00\xff" + lines[2][70:]  # a disk error in line 3
    file.write_bytes(b"".join(lines))
    for command in (["view", str(run_dir), "--out", str(run_dir.parent / "site")],
                    ["compare", str(run_dir)]):
        done = CliRunner().invoke(app, command)
        assert done.exit_code == 1 and "examples.jsonl:3:" in done.output
        assert "run the same `tooleval run` command to set it aside" in done.output
    _run(samples, run_dir.parent)  # the resume sets it aside and runs its example again
    assert (run_dir / DAMAGED).read_bytes() == lines[2]
    assert len(RunDir(run_dir).results()) == 6
    done = CliRunner().invoke(app, ["view", str(run_dir), "--out", str(run_dir.parent / "s")])
    assert done.exit_code == 0 and "6 examples" in done.output


def test_a_line_without_a_digest_is_no_extra_example(run_dir: Path, tmp_path: Path) -> None:
    needs_inspect()  # the export writes inspect_ai's log
    file = run_dir / "examples.jsonl"
    line = json.loads(file.read_text(encoding="utf-8").splitlines()[0])
    line.pop("line_digest")
    line["example_id"] += "-copy"  # made by hand: no seal, an id of no example of the run
    with file.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")
    done = CliRunner().invoke(app, ["view", str(run_dir), "--out", str(tmp_path / "site")])
    assert done.exit_code == 0 and "6 examples" in done.output, done.output
    runs = (tmp_path / "site" / "data" / "runs.js").read_text(encoding="utf-8")
    assert '"examples":6,"split_examples":6' in runs and "line 7" in runs
    done = CliRunner().invoke(app, ["export", "run", str(run_dir), "--out",
                                    str(tmp_path / "x.json")])
    assert done.exit_code == 0 and "wrote 6 samples" in done.output, done.output
    done = CliRunner().invoke(app, ["upload", str(run_dir), "--dry-run"])
    assert done.exit_code == 0 and "6 result(s) to send" in done.output, done.output


@pytest.fixture
def odd_langsmith(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, bytes]]:
    """A server on 127.0.0.1 answering every request with ``answer["body"]``."""
    answer = {"body": b"garbage"}

    class Handler(BaseHTTPRequestHandler):
        def _reply(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer["body"])))
            self.end_headers()
            self.wfile.write(answer["body"])

        do_GET = do_POST = do_PATCH = _reply

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2_pt_test")
    monkeypatch.setenv("LANGSMITH_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
    try:
        yield answer
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(("body", "said"), [
    (b"garbage", "JSONDecodeError"),
    (b'{"unexpected": [1, 2]}', "ValidationError: 3 validation errors for Dataset"),
    (b'[{"id": 5, "name": 7}]', "ValidationError"),
])
def test_upload_names_langsmith_when_its_answer_is_not_langsmiths(
        run_dir: Path, odd_langsmith: dict[str, bytes], body: bytes, said: str) -> None:
    odd_langsmith["body"] = body
    done = CliRunner().invoke(app, ["upload", str(run_dir)])
    assert done.exit_code == 1
    error = [line for line in done.output.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and "LangSmith at http://127.0.0.1:" in error[0]
    assert said in error[0] and "not LangSmith's API" in error[0]
    assert "For further information" not in done.output and "Traceback" not in done.output


def test_upload_without_a_key_suggests_what_upload_has(run_dir: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    done = CliRunner().invoke(app, ["upload", str(run_dir)])
    assert done.exit_code == 1 and "LANGSMITH_API_KEY" in done.output
    assert "--no-upload" not in done.output and "--dry-run" in done.output


def test_a_repeated_tool_faults_key_is_refused(samples: Path, tmp_path: Path) -> None:
    done = CliRunner().invoke(app, ["run", "appbench", "--category", "ss", "--model",
                                    "reference", "--data-dir", str(samples), "--out",
                                    str(tmp_path), "--tool-faults", "rate=0.1,rate=0.2"])
    assert done.exit_code == 2 and "rate is given twice" in done.output
    assert not any(tmp_path.iterdir())
