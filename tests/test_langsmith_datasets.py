"""Splits as LangSmith examples, and the idempotent push against a fake LangSmith on loopback."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_langsmith import FakeLangSmith, loopback_only
from langsmith.schemas import Example
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.contracts import Split
from tooleval_agents.data.langsmith_datasets import (
    NAMESPACE,
    LangSmithNotConfiguredError,
    make_client,
    push,
    redact,
    to_examples,
)
from tooleval_agents.registry import benchmarks, get_benchmark

# Per-test secret: if it shows up in output, logs or files, it leaked.
SECRET = f"lsv2_pt_secret_{uuid.uuid4().hex}"
APPBENCH_SIZES = {"ss": 200, "sm": 200, "ms": 201, "mm": 200}
"""Official AppBench test-set sizes (the published test files)."""


def all_splits() -> list[Split]:
    return [s for b in benchmarks().values() for s in b.splits()]


def expected_ids(split: Split, n: int) -> set[uuid.UUID]:
    """The spec's id rule, written out independently of the code under test."""
    return {uuid.uuid5(NAMESPACE, f"{split.benchmark}/{split.task}/{split.subset}/{i}")
            for i in range(n)}


@pytest.fixture
def refused(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """Non-loopback connection attempts (refused); proxies and tracing off."""
    with loopback_only(monkeypatch) as attempts:
        yield attempts


@pytest.fixture
def fake(refused: list[object]) -> Iterator[FakeLangSmith]:
    with FakeLangSmith(api_key=SECRET) as server:
        yield server


def assert_clean(server: FakeLangSmith, refused: list[object]) -> None:
    assert server.unknown == [], [(r.method, r.path) for r in server.unknown]
    assert refused == []
    failed = [(r.method, r.path, r.status) for r in server.requests if r.status >= 400]
    assert failed == []


# ----------------------------------------------------------------------------- to_examples

def test_namespace_is_fixed() -> None:
    # Changing it would silently re-key every pushed dataset and experiment.
    assert uuid.UUID("fcaf03c8-7a14-4a46-9a43-31df433d9f4a") == NAMESPACE


def test_ids_follow_the_spec_and_are_stable(shared_data: Path) -> None:
    split = get_benchmark("appbench").split("plan", "ss")
    first = to_examples(split, shared_data)
    second = to_examples(split, shared_data)
    assert len(first) == APPBENCH_SIZES["ss"]
    assert [e.id for e in first] == [e.id for e in second]
    assert [e.id for e in first] == [
        uuid.uuid5(NAMESPACE, f"appbench/plan/ss/{i}") for i in range(len(first))]
    assert {e.dataset_id for e in first} == {uuid.uuid5(NAMESPACE, "appbench-plan-ss")}
    assert all(isinstance(e, Example) for e in first)


def test_ids_unique_across_splits(shared_data: Path, samples: Path) -> None:
    ids: list[uuid.UUID] = []
    for category in APPBENCH_SIZES:
        ids += [e.id for e in to_examples(Split("appbench", "plan", category), shared_data)]
    for split in get_benchmark("ultratool").splits():
        ids += [e.id for e in to_examples(split, samples)]
    assert len(ids) == len(set(ids))
    # Same index in two splits: different ids.
    a = to_examples(Split("ultratool", "planning", "en"), samples)[0]
    b = to_examples(Split("ultratool", "planning", "zh"), samples)[0]
    assert a.id != b.id


def test_appbench_examples(shared_data: Path) -> None:
    raw = json.loads((shared_data / "appbench/data/test/test_ms.json").read_text("utf-8"))
    examples = to_examples(Split("appbench", "plan", "ms"), shared_data)
    assert len(examples) == APPBENCH_SIZES["ms"] == len(raw)
    for i, (example, record) in enumerate(zip(examples, raw, strict=True)):
        assert example.inputs == {"input": record["input"]}
        assert example.outputs is not None
        assert example.outputs["used_app"] == record["output"]["used_app"]
        meta = example.metadata or {}
        assert meta["benchmark"] == "appbench" and meta["task"] == "plan"
        assert meta["category"] == "ms" and meta["source"] == "official" and meta["index"] == i
        assert isinstance(meta["parallel_scale"], int) and meta["parallel_scale"] >= 1
        assert meta["sequential_scale"] >= 1
    # ms = several apps, one API each: some sample must call two apps in parallel.
    assert max((e.metadata or {})["parallel_scale"] for e in examples) >= 2


def test_ultratool_examples_carry_the_domain_of_test_json(samples: Path) -> None:
    raw = [json.loads(line) for line in
           (samples / "ultratool/data/English-dataset/test.json").read_text("utf-8").splitlines()
           if line.strip()]
    examples = to_examples(Split("ultratool", "tool_usage", "en"), samples)
    assert len(examples) == len(raw)
    for i, (example, record) in enumerate(zip(examples, raw, strict=True)):
        meta = example.metadata or {}
        assert meta["domain"] == record["domain"]
        assert meta["language"] == "en" and meta["index"] == i and meta["source"] == "sample"
        assert example.inputs is not None and example.inputs["question"] == record["question"]
        assert example.outputs is not None and set(example.outputs) == {"reference"}


# ----------------------------------------------------------------------------- push

def test_push_creates_every_split_then_changes_nothing(
        fake: FakeLangSmith, refused: list[object], samples: Path) -> None:
    splits = all_splits()
    client = fake.client()
    results = push(splits, samples, client=client)

    assert [r.error for r in results] == [None] * len(splits)
    assert {d["name"] for d in fake.datasets.values()} == {s.name for s in splits}
    assert "ultratool-tool_usage-en" in {d["name"] for d in fake.datasets.values()}
    for split, result in zip(splits, results, strict=True):
        n = len(get_benchmark(split.benchmark).load(split, samples))
        stored = fake.dataset_examples(split.name)
        assert n > 0
        assert {uuid.UUID(e["id"]) for e in stored} == expected_ids(split, n)
        assert (result.dataset_created, result.created, result.updated, result.unchanged) == (
            True, n, 0, 0)
        assert all(e["metadata"]["source"] == "sample" for e in stored)
        ds = next(d for d in fake.datasets.values() if d["name"] == split.name)
        assert split.task in ds["description"]
        assert ds["metadata"]["benchmark"] == split.benchmark
        assert ds["metadata"]["examples"] == n
    # The multipart examples endpoint (as on LangSmith cloud) was used.
    assert any("/platform/datasets/" in p for _, p in fake.example_writes())

    mark = len(fake.requests)
    again = push(splits, samples, client=client)
    assert fake.writes(mark) == []
    assert [(r.created, r.updated, r.dataset_created, r.dataset_updated) for r in again] == [
        (0, 0, False, False)] * len(splits)
    assert [r.unchanged for r in again] == [r.created for r in results]
    assert_clean(fake, refused)


def test_push_writes_only_what_changed(
        fake: FakeLangSmith, refused: list[object], samples: Path) -> None:
    split = Split("appbench", "plan", "ss")
    client = fake.client()
    [first] = push([split], samples, client=client)
    n = first.examples
    stored = sorted(fake.dataset_examples(split.name), key=lambda e: e["id"])
    edited, removed = stored[0]["id"], stored[1]["id"]
    # Someone edits one example in LangSmith, deletes another and adds their own.
    fake.examples[edited]["outputs"] = {"used_app": ["Edited"]}
    del fake.examples[removed]
    ds_id = stored[0]["dataset_id"]
    fake.examples["00000000-0000-4000-8000-000000000001"] = {
        **stored[2], "id": "00000000-0000-4000-8000-000000000001"}
    fake.datasets[ds_id]["description"] = "stale"

    mark = len(fake.requests)
    [second] = push([split], samples, client=client)
    assert (second.created, second.updated, second.unchanged, second.extra) == (1, 1, n - 2, 1)
    assert second.dataset_updated and not second.dataset_created
    assert fake.examples[edited]["outputs"] != {"used_app": ["Edited"]}
    assert removed in fake.examples
    assert "00000000-0000-4000-8000-000000000001" in fake.examples  # kept: no --prune
    methods = [m for m, _ in fake.example_writes(mark)]
    assert sorted(methods) == ["PATCH", "POST"]
    assert fake.datasets[ds_id]["description"] != "stale"

    [third] = push([split], samples, client=client, prune=True)
    assert (third.created, third.updated, third.unchanged, third.deleted) == (0, 0, n, 1)
    assert "00000000-0000-4000-8000-000000000001" not in fake.examples
    assert len(fake.dataset_examples(split.name)) == n
    assert_clean(fake, refused)


def test_push_with_legacy_example_endpoints(refused: list[object], samples: Path) -> None:
    split = Split("ultratool", "tool_usage", "zh")
    with FakeLangSmith(api_key=SECRET, multipart=False) as server:
        client = server.client()
        [first] = push([split], samples, client=client)
        assert ("POST", "/examples/bulk") in server.example_writes()
        stored = server.dataset_examples(split.name)
        assert {uuid.UUID(e["id"]) for e in stored} == expected_ids(split, first.examples)
        mark = len(server.requests)
        push([split], samples, client=client)
        assert server.writes(mark) == []
        server.examples[stored[0]["id"]]["metadata"]["domain"] = "Elsewhere"
        mark = len(server.requests)
        [third] = push([split], samples, client=client)
        assert third.updated == 1 and server.example_writes(mark) == [("PATCH", "/examples/bulk")]
        assert_clean(server, refused)


def test_push_official_appbench(fake: FakeLangSmith, refused: list[object],
                                shared_data: Path) -> None:
    client = fake.client()
    splits = get_benchmark("appbench").splits()
    results = push(splits, shared_data, client=client)
    assert {r.dataset: r.created for r in results} == {
        f"appbench-plan-{c}": n for c, n in APPBENCH_SIZES.items()}
    for split in splits:
        stored = fake.dataset_examples(split.name)
        assert {uuid.UUID(e["id"]) for e in stored} == expected_ids(
            split, APPBENCH_SIZES[split.subset])
    mark = len(fake.requests)
    again = push(splits, shared_data, client=client)
    assert fake.example_writes(mark) == []
    assert sum(r.unchanged or 0 for r in again) == sum(APPBENCH_SIZES.values())
    assert_clean(fake, refused)


def test_missing_data_is_reported_per_split(fake: FakeLangSmith, refused: list[object],
                                            tmp_path: Path, samples: Path) -> None:
    results = push([Split("appbench", "plan", "ss"), Split("ultratool", "planning", "en")],
                   tmp_path, client=fake.client())
    assert all(r.error and "tooleval data fetch" in r.error for r in results)
    assert fake.datasets == {}
    assert_clean(fake, refused)


def test_no_key_refuses_with_instructions(refused: list[object], samples: Path) -> None:
    with pytest.raises(LangSmithNotConfiguredError, match="LANGSMITH_API_KEY") as info:
        make_client()
    assert "LANGSMITH_ENDPOINT" in str(info.value)
    with pytest.raises(LangSmithNotConfiguredError):
        push([Split("appbench", "plan", "ss")], samples)
    assert refused == []


# ----------------------------------------------------------------------------- CLI

def _scan_for_secret(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]


def test_cli_push_twice(fake: FakeLangSmith, refused: list[object], samples: Path,
                        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                        capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture,
                        tmp_path_factory: pytest.TempPathFactory) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("LANGSMITH_API_KEY", SECRET)
    runner = CliRunner()
    args = ["data", "push", "appbench", "--data-dir", str(samples), "--endpoint", fake.url]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "appbench-plan-ss" in first.output and "created" in first.output
    assert {d["name"] for d in fake.datasets.values()} == {
        f"appbench-plan-{c}" for c in APPBENCH_SIZES}

    mark = len(fake.requests)
    second = runner.invoke(app, [*args, "--json"])
    assert second.exit_code == 0, second.output
    report = json.loads(second.stdout)
    counts = {s.name: len(get_benchmark("appbench").load(s, samples))
              for s in get_benchmark("appbench").splits()}
    assert {r["dataset"]: r["unchanged"] for r in report["results"]} == counts
    assert report["totals"]["created"] == report["totals"]["updated"] == 0
    assert fake.writes(mark) == []

    (tmp_path / "push.json").write_text(second.stdout, encoding="utf-8")
    captured = capsys.readouterr()
    for text in (first.output, second.output, captured.out, captured.err, caplog.text):
        assert SECRET not in text
    assert _scan_for_secret(tmp_path) == []
    assert _scan_for_secret(tmp_path_factory.getbasetemp() / "user-cache") == []
    assert_clean(fake, refused)


def test_cli_dry_run_contacts_nothing(fake: FakeLangSmith, refused: list[object],
                                      samples: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGSMITH_ENDPOINT", fake.url)
    result = CliRunner().invoke(app, ["data", "push", "all", "--subset", "en", "--data-dir",
                                      str(samples), "--dry-run", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    names = {r["dataset"] for r in report["results"]}
    assert names == {s.name for s in get_benchmark("ultratool").splits() if s.subset == "en"}
    assert all(r["dry_run"] and r["examples"] > 0 and r["error"] is None
               for r in report["results"])
    assert fake.requests == [] and refused == []


def test_cli_without_key_fails_clearly(refused: list[object], samples: Path) -> None:
    result = CliRunner().invoke(app, ["data", "push", "appbench", "--data-dir", str(samples)])
    assert result.exit_code == 1
    assert "LANGSMITH_API_KEY" in result.output
    assert refused == []


def test_cli_rejects_unknown_selection(samples: Path) -> None:
    result = CliRunner().invoke(app, ["data", "push", "appbench", "--task", "nope",
                                      "--data-dir", str(samples), "--dry-run"])
    assert result.exit_code == 1
    assert "plan" in result.output  # lists the tasks that exist


def test_network_guard_refuses_non_loopback(refused: list[object]) -> None:
    import socket

    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("192.0.2.1", 443), timeout=1)  # TEST-NET-1, never routed
    assert refused and refused[0][0] == "192.0.2.1"  # type: ignore[index]


def test_redact_removes_key_and_masked_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGSMITH_API_KEY", SECRET)
    # Shaped like the SDK's LangSmithConnectionError message.
    message = (f"Connection error caused failure to GET /datasets. ConnectionError(...)\n"
               f"Content-Length: None\nAPI Key: {SECRET[:5]}{'*' * 20}{SECRET[-2:]}\n"
               f"headers={{'x-api-key': '{SECRET}'}}")
    cleaned = redact(message)
    assert SECRET not in cleaned and "API Key:" not in cleaned and "*****" not in cleaned
    assert "Connection error caused failure to GET /datasets" in cleaned
