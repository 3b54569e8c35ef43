"""Records and loaders on the real data, and precise errors on broken files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import appbench_file

from tooleval_agents.appbench import records as appbench_records
from tooleval_agents.appbench.lines import parse_call_line
from tooleval_agents.appbench.loaders import load_category, load_file
from tooleval_agents.errors import DataFormatError, DatasetMissingError
from tooleval_agents.ultratool.calls import parse_call
from tooleval_agents.ultratool.loaders import (
    load_example,
    load_raw,
    load_raw_file,
    load_task,
    load_task_file,
    raw_path,
    task_path,
)
from tooleval_agents.ultratool.records import TASKS

OFFICIAL = ("planning", "tool_creation", "tool_usage_awareness", "tool_usage")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ultratool_official_files_load_aligned(shared_data: Path, lang: str) -> None:
    raw = load_raw(shared_data, lang)
    assert len(raw) == 1000
    assert {s.kind for r in raw for s in r.plan} == {"parent", "tool_free", "tool_call"}
    for task in OFFICIAL:
        records = load_task(shared_data, task, lang)
        assert len(records) == 1000
        assert [r.meta.index for r in records[:3] if r.meta] == [0, 1, 2]
        assert all(r.meta and r.meta.source == "official" and r.meta.lang == lang
                   for r in records)
    # Line i is the same sample in every file: the planning input is the raw question.
    planning = load_task(shared_data, "planning", lang)
    assert all(p.input == r.question for p, r in zip(planning, raw, strict=True))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_official_round_trip_is_byte_identical(shared_data: Path, lang: str) -> None:
    """``official()`` gives the upstream object back (key order aside for skeletons)."""
    for task in ("planning", "tool_usage_awareness", "tool_usage"):
        path = task_path(shared_data, task, lang)
        lines = path.read_text(encoding="utf-8").splitlines()[:200]
        records = load_task(shared_data, task, lang)[:200]
        for line, rec in zip(lines, records, strict=True):
            assert rec.official() == json.loads(line)
    raw_line = raw_path(shared_data, lang).read_text(encoding="utf-8").splitlines()[5]
    assert load_raw(shared_data, lang)[5].official() == json.loads(raw_line)


def test_call_strings_parse_to_the_official_tool_usage_params(shared_data: Path) -> None:
    """The parsed gold calls agree with upstream's own key-values for most steps; where they
    differ, upstream truncated the value at ', ' (e.g. 'Hello, AI' -> 'Hell')."""
    raw = load_raw(shared_data, "en")
    usage = load_task(shared_data, "tool_usage", "en")
    agree = total = 0
    for sample, rec in zip(raw, usage, strict=True):
        calls = {s.id: s.call for s in sample.plan if s.call}
        for ref in rec.reference:
            call = calls.get(ref.step.split(" ", 1)[0])
            total += 1
            if call is not None and call.args == ref.param:
                agree += 1
            elif call is not None:
                # Every disagreement is on the same keys, with upstream's value shorter.
                assert set(call.args) == set(ref.param) or not ref.param
    assert total == 2281
    assert agree / total > 0.88


def test_parse_call_handles_unescaped_quotes_and_references() -> None:
    call = parse_call("query_balance(date='yesterday's date', acct=<account id>, n=5)",
                      {"date", "acct", "n"})
    assert call is not None
    assert call.args == {"date": "yesterday's date", "acct": "<account id>", "n": "5"}
    assert call.references == ["<account id>"]
    listed = parse_call("f(tags=['a, b', 'c'], x='y')")
    assert listed is not None and listed.args == {"tags": "['a, b', 'c']", "x": "y"}
    assert parse_call("No tool required") is None


def test_examples_load_for_every_task_and_language(shared_data: Path) -> None:
    for lang in ("en", "zh"):
        for task in TASKS:
            demo = load_example(shared_data, task, lang)
            assert demo.reference


@pytest.mark.parametrize(("category", "count"), [("ss", 200), ("sm", 200), ("ms", 201),
                                                 ("mm", 200)])
def test_appbench_categories(shared_data: Path, category: str, count: int) -> None:
    samples = load_category(shared_data, category)
    assert len(samples) == count
    for s in samples:
        calls = s.calls
        assert len(calls) == len(s.output.api_results)
        assert all(c.app for c in calls)
        # Keys are sorted alphabetically upstream and every literal is user-aware.
        for c in calls:
            for k, v in c.literal_args.items():
                assert s.output.user_aware_arguments.get(k) is not None or v


def test_appbench_mm10_has_more_calls_than_apps(shared_data: Path) -> None:
    sample = load_category(shared_data, "mm")[10]
    assert len(sample.output.used_app) == 5
    assert [c.app for c in sample.calls] == ["Movies"] * 4 + ["Restaurants"] * 3


def test_parse_call_line_forms() -> None:
    gold = parse_call_line("a, b = findbus(#from_city='San Francisco', #to_city=to_city)")
    assert (gold.app, gold.api, gold.returns) == (None, "findbus", ["a", "b"])
    assert gold.literal_args == {"from_city": "San Francisco"}
    assert gold.dependent_args == {"to_city": "to_city"}
    answer = parse_call_line("Restaurants: [x = reserverestaurant(#name=\"Joe's, Bar\")]")
    assert answer.app == "Restaurants" and answer.literal_args == {"name": "Joe's, Bar"}
    with pytest.raises(ValueError, match="not an API call"):
        parse_call_line("I cannot help with that.")


# --- broken input: file, line and field are named --------------------------------------------

def test_bad_jsonl_line_names_file_line_and_field(tmp_path: Path) -> None:
    good = {"input": "q", "reference": "1. a"}
    path = tmp_path / "planning.json"
    path.write_text(json.dumps(good) + "\n" + json.dumps({"input": "q"}) + "\n",
                    encoding="utf-8")
    with pytest.raises(DataFormatError) as info:
        load_task_file(path, "planning", "en")
    assert info.value.line == 2 and info.value.field == "reference"
    assert "planning.json:2: reference" in str(info.value)


def test_invalid_json_line_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "test.json"
    path.write_text('{"question": "q", "plan": [}\n', encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"test.json:1: invalid JSON"):
        load_raw_file(path, "en")


def test_nested_field_error_in_raw_sample(tmp_path: Path) -> None:
    rec = {"question": "q", "plan": [{"step": "1. a", "tool": 3}], "tools": [], "domain": "d"}
    path = tmp_path / "test.json"
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError) as info:
        load_raw_file(path, "en")
    assert info.value.field == "plan.0.tool"


def test_appbench_bad_record_names_index_and_field(tmp_path: Path) -> None:
    path = tmp_path / "test_ss.json"
    path.write_text(json.dumps([{"input": "x", "output": {"used_app": []}}]), encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"\[0\]\.output\.used_api"):
        load_file(path, "ss")
    path.write_text("[1, 2", encoding="utf-8")
    with pytest.raises(DataFormatError, match="invalid JSON"):
        load_file(path, "ss")


def test_missing_data_says_how_to_fetch(tmp_path: Path) -> None:
    with pytest.raises(DatasetMissingError) as info:
        load_category(tmp_path, "ss")
    assert f"tooleval data fetch appbench --data-dir {tmp_path}" in str(info.value)
    with pytest.raises(DatasetMissingError, match="tooleval data fetch ultratool"):
        load_raw(tmp_path, "zh")


def test_a_run_reads_records_lazily_and_a_bad_one_fails_when_read(tmp_path: Path) -> None:
    """Benchmark.load validates a record when it is first read (a run of --limit 1 reads one):
    the bad line 2 stops nothing until it is read, then names its file, line and field."""
    from tooleval_agents.registry import get_benchmark
    from tooleval_agents.results.selection import select

    folder = tmp_path / "ultratool" / "data" / "English-dataset" / "test_set"
    folder.mkdir(parents=True)
    good = {"input": "q", "reference": "1. a"}
    (folder / "planning.json").write_text(json.dumps(good) + "\n" + json.dumps({"input": "q"})
                                          + "\n", encoding="utf-8")
    bench = get_benchmark("ultratool")
    records = bench.load(bench.split("planning", "en"), tmp_path)
    assert len(records) == 2 and records[0].meta.index == 0  # type: ignore[attr-defined]
    assert list(select(records, limit=1)) == [records[0]]
    with pytest.raises(DataFormatError) as info:
        list(records)
    assert info.value.line == 2 and info.value.field == "reference"


def test_bad_gold_line_is_reported_at_load_with_file_record_and_line(
        tmp_path: Path, shared_data: Path) -> None:
    path = appbench_file(tmp_path, shared_data, "Weather: [x = getweather(#city='a')")
    with pytest.raises(DataFormatError) as err:
        load_file(path, "ss")
    assert err.value.path == path
    assert err.value.field == "[1].output.api_results.0"
    assert "not an API call line" in str(err.value)


def test_gold_calls_are_parsed_once_and_follow_the_content(
        tmp_path: Path, shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    [sample, *_] = load_file(appbench_file(tmp_path, shared_data), "ss")
    twin = sample.model_copy()
    parsed: list[str] = []
    real = appbench_records.parse_call_line

    def counting(text: str) -> Any:
        parsed.append(text)
        return real(text)

    monkeypatch.setattr(appbench_records, "parse_call_line", counting)
    first = sample.calls
    assert sample.calls == first
    assert len(parsed) == len(sample.output.api_results)  # second access: no parsing
    assert sample == twin  # the cache does not make equal samples differ
    line = "weather = getweather(#city='Oslo')"
    changed = sample.model_copy(update={"output": sample.output.model_copy(
        update={"api_results": [line], "used_app": ["Weather"]})})
    assert [(c.app, c.api, c.literal_args) for c in changed.calls] == [
        ("Weather", "getweather", {"city": "Oslo"})]
    assert sample.calls == first


def test_bad_demonstration_names_the_field(tmp_path: Path, shared_data: Path) -> None:
    rel = Path("ultratool/data/English-dataset/example/planning.json")
    data = json.loads((shared_data / rel).read_text(encoding="utf-8"))
    data["reference"] = 5
    (tmp_path / rel).parent.mkdir(parents=True)
    (tmp_path / rel).write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DataFormatError) as err:
        load_example(tmp_path, "planning", "en")
    assert err.value.field == "reference" and err.value.path == tmp_path / rel
