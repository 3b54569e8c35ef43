"""The rebuilt UltraTool test sets (tool_selection, tool_creation_awareness): shape, labels,
interference tools, reproducibility, cache, loader and CLI."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

import pytest
from rapidfuzz import fuzz
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.errors import DataFormatError, DatasetMissingError
from tooleval_agents.ultratool.loaders import load_raw, load_task, raw_path, task_path
from tooleval_agents.ultratool.rebuild import (
    build_tool_creation_awareness,
    build_tool_selection,
    meta_path,
    rebuilt_path,
    upstream_removal,
    write_rebuilt,
)
from tooleval_agents.ultratool.records import Lang, RawSample

TASKS = ("tool_selection", "tool_creation_awareness")
Raws = dict[str, tuple[list[dict[str, Any]], list[RawSample]]]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(t) for t in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def raws(shared_data: Path) -> Raws:
    """Per language: the raw ``test.json`` lines as dicts, and as parsed records."""
    return {lang: (_lines(raw_path(shared_data, lang)), load_raw(shared_data, lang))
            for lang in ("en", "zh")}


@pytest.fixture(scope="module")
def built(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str],
                                                                               Path]:
    """Both tasks x both languages, seed 0, as the loader builds them (upstream removal)."""
    out_dir = tmp_path_factory.mktemp("rebuilt")
    paths = {}
    for lang in ("en", "zh"):
        raw = raw_path(shared_data, lang)
        for task in TASKS:
            out = out_dir / f"{lang}-{task}.json"
            removed = upstream_removal(raw) if task == "tool_creation_awareness" else None
            write_rebuilt(task, raw, lang, out, 0, removed=removed)  # type: ignore[arg-type]
            paths[(lang, task)] = out
    return paths


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_rebuilt_sets_have_the_official_shape(shared_data: Path, built: dict[tuple[str, str], Path],
                                              raws: Raws, lang: Lang) -> None:
    raw_lines, raw = raws[lang]
    example = json.loads(  # the official one-shot example: the shape to follow
        (task_path(shared_data, "tool_selection", lang).parent.parent / "example"
         / "tool_selection.json").read_text(encoding="utf-8"))
    for task in TASKS:
        text = built[(lang, task)].read_text(encoding="utf-8")
        records = [json.loads(t) for t in text.splitlines()]
        assert len(records) == 1000
        assert text == "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        for rec, line, sample in zip(records, raw_lines, raw, strict=True):
            assert list(rec) == list(example) == ["input", "toolset", "reference"]
            names = [t["name"] for t in rec["toolset"]]
            assert len(names) == 8 and len(set(names)) == 8
            calls = [s.call.name if s.kind == "tool_call" and s.call else None
                     for s in sample.plan]
            assert rec["input"] == [
                {"step": s["step"], "tool": ""} if c else {"step": s["step"]}
                for s, c in zip(line["plan"], calls, strict=True)]
            assert [r["step"] for r in rec["reference"]] == [
                s["step"] for s, c in zip(line["plan"], calls, strict=True) if c]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_selection_gold_tools_are_in_the_toolset_verbatim(
        built: dict[tuple[str, str], Path], raws: Raws, lang: Lang) -> None:
    raw_lines, raw = raws[lang]
    # Every skeleton in the file, serialised as written upstream (key order included).
    verbatim = {json.dumps(t, ensure_ascii=False) for line in raw_lines for t in line["tools"]}
    records = _lines(built[(lang, "tool_selection")])
    for rec, line, sample in zip(records, raw_lines, raw, strict=True):
        names = [t["name"] for t in rec["toolset"]]
        gold = [s.call.name for s in sample.plan if s.kind == "tool_call" and s.call]
        assert [r["tool"] for r in rec["reference"]] == gold
        assert set(gold) <= set(names)
        assert {t["name"] for t in line["tools"]} <= set(names)
        for own in line["tools"]:
            assert rec["toolset"][names.index(own["name"])] == own
        assert all(json.dumps(t, ensure_ascii=False) in verbatim for t in rec["toolset"])
    # The gold tools are not always first: the order is shuffled.
    firsts = [r["toolset"][0]["name"] == r["reference"][0]["tool"] for r in records]
    assert 0 < sum(firsts) < 500


def _name_sim(a: str, b: str) -> float:
    """An independent look-alike measure: token order-free similarity of tool names only."""
    return fuzz.token_sort_ratio(a.replace("_", " "), b.replace("_", " "))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_interference_tools_are_lookalikes_from_other_samples(
        built: dict[tuple[str, str], Path], raws: Raws, lang: Lang) -> None:
    raw_lines = raws[lang][0]
    holders: dict[str, set[int]] = {}
    for i, line in enumerate(raw_lines):
        for t in line["tools"]:
            holders.setdefault(t["name"], set()).add(i)
    pool = sorted(holders)
    rng = random.Random(7)
    chosen, randoms = [], []
    for i, (rec, line) in enumerate(zip(_lines(built[(lang, "tool_selection")]), raw_lines,
                                        strict=True)):
        own = {t["name"] for t in line["tools"]}
        own_desc = {t["description"] for t in line["tools"]}
        for tool in rec["toolset"]:
            if tool["name"] in own:
                continue
            assert holders[tool["name"]] - {i}, "interference tools come from other samples"
            assert tool["description"] not in own_desc
            chosen.append(max(_name_sim(tool["name"], o) for o in own))
            other = rng.choice([p for p in pool if p not in own])
            randoms.append(max(_name_sim(other, o) for o in own))
    mean_chosen, mean_random = sum(chosen) / len(chosen), sum(randoms) / len(randoms)
    assert mean_chosen > mean_random + 5, (mean_chosen, mean_random)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_creation_awareness_labels_follow_the_toolset_and_upstream_removals(
        shared_data: Path, built: dict[tuple[str, str], Path], raws: Raws, lang: Lang) -> None:
    raw = raws[lang][1]
    creation = _lines(task_path(shared_data, "tool_creation", lang))
    out = built[(lang, "tool_creation_awareness")]
    records = _lines(out)
    positives = 0
    for rec, sample, tc in zip(records, raw, creation, strict=True):
        names = {t["name"] for t in rec["toolset"]}
        removed = {item["tool"]["name"] for item in tc["reference"]}
        calls = [s.call.name for s in sample.plan if s.kind == "tool_call" and s.call]
        labels = [r["tool"] for r in rec["reference"]]
        assert labels == ["0" if c in names else "1" for c in calls]
        # Upstream's reduced toolset lacks exactly the tools its tool_creation set asks for.
        assert labels == ["1" if c in removed else "0" for c in calls]
        assert "1" in labels
        positives += labels.count("1")
    meta = json.loads(meta_path(out).read_text(encoding="utf-8"))
    # tool_creation asks for 1544 steps (one per tool removed from the published data).
    assert meta["counts"]["removed_tools"] == 1544
    assert meta["counts"]["labels_1"] == positives
    assert meta["removal"]["path"].endswith("tool_creation.json")


def test_same_seed_is_byte_identical_and_seeds_differ(shared_data: Path, tmp_path: Path,
                                                      built: dict[tuple[str, str], Path]) -> None:
    raw = raw_path(shared_data, "en")
    for task in TASKS:
        removed = upstream_removal(raw) if task == "tool_creation_awareness" else None
        again = write_rebuilt(task, raw, "en", tmp_path / f"{task}.0.json", 0,  # type: ignore[arg-type]
                              removed=removed)
        other = write_rebuilt(task, raw, "en", tmp_path / f"{task}.1.json", 1,  # type: ignore[arg-type]
                              removed=removed)
        first = built[("en", task)].read_bytes()
        assert (tmp_path / f"{task}.0.json").read_bytes() == first
        assert (tmp_path / f"{task}.1.json").read_bytes() != first
        assert again["output_sha256"] == hashlib.sha256(first).hexdigest()
        assert other["seed"] == 1 and again["seed"] == 0
        assert again["raw"]["sha256"] == hashlib.sha256(raw.read_bytes()).hexdigest()
        assert again["builder_version"] and again["source"] == "rebuilt"
    # Seeded removal (no tool_creation.json) removes at least one tool of every sample.
    seeded = build_tool_creation_awareness(raw, "en", seed=3)
    assert all(any(r["tool"] == "1" for r in rec["reference"]) for rec in seeded)


# ---------------------------------------------------------------- any file with the raw schema


def _tool(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "description": description,
            "arguments": {"type": "object", "properties": {
                "query": {"description": "What to look up", "type": "string"}}},
            "results": {"type": "object", "properties": {
                "status": {"type": "boolean", "description": "Whether it worked"}}}}


def _sample(tools: list[dict[str, Any]], calls: list[str] | None = None) -> dict[str, Any]:
    calls = [t["name"] for t in tools] if calls is None else calls
    plan = [{"step": "1. Do the task", "tool": "null"},
            {"step": "1.1 Gather information (City: Paris)", "tool": "No tool required"}]
    plan += [{"step": f"1.{i + 2} Use {c}", "tool": f"{c}(query='Paris, today')"}
             for i, c in enumerate(calls)]
    return {"question": "Help me.", "plan": plan, "tools": tools, "domain": "Test"}


TOPICS = ["weather forecast", "flight booking", "hotel search", "music playlist", "train ticket",
          "restaurant review", "stock price", "calendar event", "email sending", "news search",
          "parking lot", "movie showtime", "recipe finder", "taxi ride", "gym class",
          "library book", "museum ticket", "dentist appointment", "pet grooming", "car rental"]


def _write_raw(path: Path) -> Path:
    samples = [_sample([_tool("currency_exchange_rate", "Query the current exchange rate"),
                        _tool("file_write", "Write content to a file")])]
    samples.append(_sample([_tool("exchange_rate_query", "Query the current exchange rate "
                                  "between two currencies")]))
    samples.append(_sample([_tool("get_exchange_rate", "Get the exchange rate of a currency")]))
    for topic in TOPICS:
        name = topic.replace(" ", "_")
        samples.append(_sample([_tool(f"{name}_query", f"Query {topic} information"),
                                _tool(f"{name}_update", f"Update {topic} records")]))
    samples.append(_sample([_tool("weather_forecast_query", "Query weather forecast information")],
                           calls=[]))  # no tool-call step
    path.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in samples),
                    encoding="utf-8")
    return path


def test_builders_work_on_any_raw_file(tmp_path: Path) -> None:
    raw = _write_raw(tmp_path / "mine.json")
    dicts = _lines(raw)
    for build in (build_tool_selection, build_tool_creation_awareness):
        records = build(raw, "en", seed=0)
        assert len(records) == len(dicts)
        assert records == build(dicts, "en", seed=0)
        assert all(len({t["name"] for t in r["toolset"]}) == len(r["toolset"]) == 8
                   for r in records)
        assert records[-1]["reference"] == []  # the sample without tool-call steps keeps its line
        assert records[-1]["input"] == [{"step": s["step"]} for s in dicts[-1]["plan"]]
    # Removing currency_exchange_rate never brings in its renamed duplicates.
    for seed in range(30):
        rec = build_tool_creation_awareness(raw, "en", seed=seed,
                                            removed=[{"currency_exchange_rate"}] + [()] * 23)[0]
        names = {t["name"] for t in rec["toolset"]}
        assert "currency_exchange_rate" not in names and "file_write" in names
        assert not names & {"exchange_rate_query", "get_exchange_rate"}
        assert [r["tool"] for r in rec["reference"]] == ["1", "0"]
    # Seeded removal: reproducible, at least one tool, sometimes both of two.
    assert build_tool_creation_awareness(raw, "en", seed=3) == build_tool_creation_awareness(
        dicts, "en", seed=3) != build_tool_creation_awareness(raw, "en", seed=4)
    removed_counts = {sum(r["tool"] == "1" for r in build_tool_creation_awareness(
        raw, "en", seed=seed)[0]["reference"]) for seed in range(30)}
    assert removed_counts == {1, 2}


def test_small_pools_give_short_toolsets_and_bad_lines_name_their_place(tmp_path: Path) -> None:
    tiny = tmp_path / "tiny.json"
    tiny.write_text("".join(json.dumps(_sample([_tool(n, f"{n} tool")])) + "\n"
                            for n in ("a_tool", "b_tool", "c_tool")), encoding="utf-8")
    meta = write_rebuilt("tool_selection", tiny, "en", tmp_path / "out.json")
    assert [len(r["toolset"]) for r in _lines(tmp_path / "out.json")] == [3, 3, 3]
    assert meta["counts"]["short_toolsets"] == 3
    broken = tmp_path / "broken.json"
    lines = tiny.read_text(encoding="utf-8").splitlines()
    broken.write_text(lines[0] + "\n" + lines[1].replace('"tools"', '"toolz"') + "\n",
                      encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"broken\.json:2"):
        build_tool_selection(broken, "en")
    with pytest.raises(DataFormatError, match="line-aligned"):
        build_tool_creation_awareness(tiny, "en", removed=[{"a_tool"}])


# ---------------------------------------------------------------- loader, cache, CLI


def test_loader_builds_once_into_the_user_cache(shared_data: Path, tmp_path: Path) -> None:
    records = load_task(shared_data, "tool_selection", "en")
    assert len(records) == 1000
    assert all(r.meta and r.meta.source == "rebuilt" and r.meta.lang == "en" for r in records)
    path = rebuilt_path(shared_data, "tool_selection", "en")
    assert path.name == "tool_selection.seed0.json" and path.parent.name == "en"
    assert not path.is_relative_to(shared_data)
    stamp = path.stat().st_mtime_ns
    assert rebuilt_path(shared_data, "tool_selection", "en") == path
    assert path.stat().st_mtime_ns == stamp  # cache hit: not rebuilt
    with pytest.raises(DatasetMissingError):
        rebuilt_path(tmp_path, "tool_selection", "en")


def test_cli_builds_the_file(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "sel.json"
    result = CliRunner().invoke(app, ["data", "build", "ultratool", "--task", "tool_selection",
                                      "--lang", "zh", "--seed", "2", "--out", str(out),
                                      "--data-dir", str(shared_data)])
    assert result.exit_code == 0, result.output
    assert len(_lines(out)) == 1000
    assert json.loads(meta_path(out).read_text(encoding="utf-8"))["seed"] == 2
    raw = _write_raw(tmp_path / "mine.json")
    out2 = tmp_path / "tca.json"
    result = CliRunner().invoke(app, ["data", "build", "ultratool", "--task",
                                      "tool_creation_awareness", "--lang", "en", "--raw",
                                      str(raw), "--out", str(out2), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["removal"]["method"].startswith("seeded")
    bad = CliRunner().invoke(app, ["data", "build", "appbench", "--task", "tool_selection",
                                   "--lang", "en", "--out", str(tmp_path / "x.json")])
    # Only benchmarks with unpublished sets add a build command (AppBench publishes all).
    assert bad.exit_code == 2 and "No such command 'appbench'" in bad.output
