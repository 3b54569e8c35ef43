"""Experiments in LangSmith: the upload path against the loopback fake LangSmith, and the
offline path contacting nothing at all."""

from __future__ import annotations

import json
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_langsmith import FakeLangSmith, loopback_only
from helpers import assert_no_secret
from langsmith.utils import LangSmithAuthError
from toy_benchmark import register_toy, write_toy

from tooleval_agents.data.langsmith_datasets import example_id
from tooleval_agents.errors import ToolevalError
from tooleval_agents.registry import get_benchmark
from tooleval_agents.results.rundir import CONFIG, RunDir
from tooleval_agents.run.langsmith_io import outage
from tooleval_agents.run.runner import run_experiment

SECRET = f"lsv2_pt_secret_{uuid.uuid4().hex}"


@pytest.fixture(autouse=True)
def _toy(monkeypatch: pytest.MonkeyPatch) -> None:
    register_toy(monkeypatch)


@pytest.fixture
def refused(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    with loopback_only(monkeypatch) as attempts:
        yield attempts


@pytest.fixture
def fake(refused: list[object], monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLangSmith]:
    with FakeLangSmith(api_key=SECRET) as server:
        monkeypatch.setenv("LANGSMITH_API_KEY", SECRET)
        monkeypatch.setenv("LANGSMITH_ENDPOINT", server.url)
        yield server


def _assert_clean(server: FakeLangSmith, refused: list[object]) -> None:
    assert refused == []
    assert server.unknown == [], [(r.method, r.path) for r in server.unknown]
    failed = [(r.method, r.path, r.status) for r in server.requests
              if r.status >= 400 and not (r.method == "GET" and r.path == "/datasets")]
    assert failed == []


def _experiment_runs(server: FakeLangSmith, session_id: str) -> list[dict[str, Any]]:
    with server.lock:
        return [r for r in server.runs.values() if str(r.get("session_id")) == session_id
                and r.get("reference_example_id")]


def test_offline_run_contacts_nothing(refused: list[object], tmp_path: Path) -> None:
    data = write_toy(tmp_path / "data")
    summary = run_experiment("toy", subset="en", model="reference", out=tmp_path / "runs",
                             data_dir=data, progress=False, cache=False)
    assert summary.counts["ok"] == 6
    assert refused == []
    assert RunDir(tmp_path / "runs" / summary.experiment).read_config().langsmith is None


def test_upload_pushes_dataset_and_records_the_experiment(
        fake: FakeLangSmith, refused: list[object], samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    summary = run_experiment("appbench", subset="ss", model="reference", out=out,
                             data_dir=samples, progress=False, cache=False)
    _assert_clean(fake, refused)
    n = summary.counts["examples"]
    split = get_benchmark("appbench").split("plan", "ss")
    # The dataset was absent: pushed first, with the stable example ids.
    stored = fake.dataset_examples("appbench-plan-ss")
    assert {e["id"] for e in stored} == {str(example_id(split, i)) for i in range(n)}
    # The experiment carries the metadata LangSmith's comparison view groups by.
    config = RunDir(out / summary.experiment).read_config()
    assert config.langsmith is not None
    session = fake.sessions[config.langsmith["session_id"]]
    assert session["name"] == summary.experiment == "appbench-plan-ss-hierarchical-reference"
    assert session["reference_dataset_id"] == config.langsmith["dataset_id"] == config.dataset.id
    meta = (session.get("extra") or {}).get("metadata") or {}
    assert meta["model"] == "reference" and meta["strategy"] == "hierarchical"
    assert meta["category"] == "ss" and meta["benchmark"] == "appbench"
    assert meta["metrics"]["success"] == summary.metrics["success"] == 100.0
    # One run per example, joined to its example, with its feedback.
    runs = _experiment_runs(fake, config.langsmith["session_id"])
    assert sorted(str(r["reference_example_id"]) for r in runs) == sorted(
        e["id"] for e in stored)
    run_ids = {str(r["id"]) for r in runs}
    with fake.lock:
        success = [f for f in fake.feedback.values()
                   if f.get("key") == "success" and str(f.get("run_id")) in run_ids]
    assert len(success) == n and all(f["score"] == 100.0 for f in success)
    assert_no_secret(out, secret=SECRET)


def test_resumed_upload_adds_to_the_same_experiment(
        fake: FakeLangSmith, refused: list[object], tmp_path: Path) -> None:
    data = write_toy(tmp_path / "data")
    out = tmp_path / "runs"
    first = run_experiment("toy", subset="en", model="reference", limit=6, out=out,
                           data_dir=data, progress=False, cache=False)
    config = json.loads((out / first.experiment / CONFIG).read_text())
    sessions = len(fake.sessions)
    # Forget two results: the resume runs them into the recorded experiment.
    file = out / first.experiment / "examples.jsonl"
    file.write_text("".join(file.read_text().splitlines(keepends=True)[:4]))
    second = run_experiment("toy", subset="en", model="reference", limit=6, out=out,
                            data_dir=data, progress=False, cache=False)
    assert second.counts["ok"] == 6
    assert len(fake.sessions) == sessions
    runs = _experiment_runs(fake, config["langsmith"]["session_id"])
    assert len(runs) == 8
    _assert_clean(fake, refused)


def test_upload_refuses_a_remote_dataset_that_differs(
        fake: FakeLangSmith, refused: list[object], tmp_path: Path) -> None:
    data = write_toy(tmp_path / "data")
    run_experiment("toy", subset="en", model="reference", out=tmp_path / "a", data_dir=data,
                   progress=False, cache=False)
    other = tmp_path / "other"
    write_toy(other, n=6)
    lines = (other / "toy" / "en.jsonl").read_text().replace("answer-0", "changed")
    (other / "toy" / "en.jsonl").write_text(lines)
    with pytest.raises(ToolevalError, match="does not match the local data"):
        run_experiment("toy", subset="en", model="reference", out=tmp_path / "b",
                       data_dir=other, progress=False, cache=False)


def test_no_upload_without_key_unless_asked(refused: list[object], tmp_path: Path) -> None:
    data = write_toy(tmp_path / "data")
    with pytest.raises(ToolevalError, match="LANGSMITH_API_KEY"):
        run_experiment("toy", subset="en", model="reference", out=tmp_path / "r",
                       data_dir=data, progress=False, upload=True)
    assert refused == []


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("upload", [None, True])
def test_unreachable_langsmith_keeps_the_run_local(
        refused: list[object], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        caplog: pytest.LogCaptureFixture, upload: bool | None) -> None:
    monkeypatch.setenv("LANGSMITH_API_KEY", SECRET)
    monkeypatch.setenv("LANGSMITH_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    data = write_toy(tmp_path / "data")
    summary = run_experiment("toy", subset="en", model="reference", out=tmp_path / "runs",
                             data_dir=data, progress=False, cache=False, upload=upload)
    assert summary.counts["ok"] == 6
    warned = [r.getMessage() for r in caplog.records if "LangSmith unavailable" in r.getMessage()]
    assert len(warned) == 1 and "stays local" in warned[0]
    recorded = RunDir(tmp_path / "runs" / summary.experiment).read_config().langsmith
    assert recorded is not None and recorded["uploaded"] is False


def test_only_an_outage_keeps_a_run_local() -> None:
    # What the runner treats as LangSmith being away (one line, the run stays local) and what
    # it raises (a differing dataset, a bug).
    refused_key = LangSmithAuthError("Authentication failed for /datasets. 401\nAPI key: x")
    assert outage(refused_key) == ("LangSmithAuthError: Authentication failed for /datasets. "
                                   "401")
    assert outage(ConnectionRefusedError(111, "Connection refused")) is not None
    assert outage(ToolevalError("LangSmith dataset 'x' does not match the local data")) is None
    assert outage(ValueError("a bug")) is None


def test_a_refused_key_keeps_the_run_local(
        fake: FakeLangSmith, refused: list[object], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2_pt_wrong")
    data = write_toy(tmp_path / "data")
    summary = run_experiment("toy", subset="en", model="reference", out=tmp_path / "runs",
                             data_dir=data, progress=False, cache=False)
    assert summary.counts["ok"] == 6
    recorded = RunDir(tmp_path / "runs" / summary.experiment).read_config().langsmith
    assert recorded is not None and recorded["uploaded"] is False
    assert_no_secret(tmp_path / "runs", secret="lsv2_pt_wrong")


def test_a_local_run_is_uploaded_later_once(fake: FakeLangSmith, refused: list[object],
                                            samples: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tooleval_agents.cli import app

    out = tmp_path / "runs"
    summary = run_experiment("appbench", subset="ss", model="reference", out=out,
                             data_dir=samples, progress=False, cache=False, upload=False)
    run = out / summary.experiment
    assert fake.writes() == [] and RunDir(run).read_config().langsmith is None
    dry = CliRunner().invoke(app, ["upload", str(run), "--dry-run"])
    assert dry.exit_code == 0 and "to send (dry run)" in dry.output and fake.writes() == []
    sent = CliRunner().invoke(app, ["upload", str(run), "--json"])
    assert sent.exit_code == 0, sent.output
    [row] = json.loads(sent.stdout)
    n = summary.counts["examples"]
    assert (row["results"], row["sent"], row["already"]) == (n, n, 0)
    config = RunDir(run).read_config()
    assert config.langsmith is not None and config.langsmith["uploaded_by"] == "tooleval upload"
    session = fake.sessions[config.langsmith["session_id"]]
    meta = (session.get("extra") or {}).get("metadata") or {}
    assert meta["metrics"]["success"] == 100.0 and meta["strategy"] == "hierarchical"
    runs = _experiment_runs(fake, config.langsmith["session_id"])
    assert sorted(str(r["reference_example_id"]) for r in runs) == sorted(
        e["id"] for e in fake.dataset_examples("appbench-plan-ss"))
    run_ids = {str(r["id"]) for r in runs}
    with fake.lock:
        success = [f for f in fake.feedback.values()
                   if f.get("key") == "success" and str(f.get("run_id")) in run_ids]
    assert len(success) == n and all(f["score"] == 100.0 for f in success)
    # Again: LangSmith holds every result, nothing new is written.
    before = len(fake.writes())
    again = CliRunner().invoke(app, ["upload", str(run), "--json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)[0]["sent"] == 0
    assert [w for w in fake.writes()[before:] if w[1].startswith(("/runs", "/feedback"))] == []
    assert refused == [] and fake.unknown == []
    failed = {(r.method, r.path.split("/")[1], r.status) for r in fake.requests
              if r.status >= 400}  # absent runs are looked up before they are sent
    assert failed <= {("GET", "runs", 404), ("GET", "datasets", 404)}
    assert_no_secret(out, secret=SECRET)


def test_upload_of_a_path_that_is_no_run_exits_2(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tooleval_agents.cli import app

    result = CliRunner().invoke(app, ["upload", str(tmp_path / "nothing")])
    assert result.exit_code == 2 and "is not a run directory" in result.output
