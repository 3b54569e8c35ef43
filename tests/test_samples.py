"""The hand-written samples in ``datasets/`` load with the project's loaders and obey the
official construction rules of each file (UltraTool line alignment and toolsets, AppBench gold
lines)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from typer.testing import CliRunner

from tooleval_agents.appbench.loaders import load_category
from tooleval_agents.appbench.names import APP_APIS, CATEGORIES, Category
from tooleval_agents.appbench.records import AppBenchSample, AppCall
from tooleval_agents.ultratool.calls import parse_call
from tooleval_agents.ultratool.loaders import load_example, load_raw, load_task
from tooleval_agents.ultratool.records import (
    TASKS,
    TOOL_FREE,
    AwarenessRecord,
    Lang,
    PlanningRecord,
    RawSample,
    ToolCreationRecord,
    ToolSelectionRecord,
    ToolUsageRecord,
    UltraToolTask,
    step_id,
)

LANGS: tuple[Lang, ...] = ("en", "zh")
FREE: dict[Lang, str] = {"en": TOOL_FREE[0], "zh": TOOL_FREE[1]}


def _raw(samples: Path, lang: Lang) -> list[RawSample]:
    return load_raw(samples, lang)


def _task(samples: Path, task: UltraToolTask, lang: Lang) -> list[Any]:
    return load_task(samples, task, lang)


# --------------------------------------------------------------------------------------------
# The committed files: plain data, edited by hand, checked here
# --------------------------------------------------------------------------------------------


def test_the_samples_are_exactly_the_official_files(samples: Path) -> None:
    expected = {f"ultratool/data/{d}/{kind}"
                for d in ("English-dataset", "Chinese-dataset")
                for kind in ("test.json", *(f"{part}/{task}.json" for part in
                                            ("test_set", "example") for task in TASKS))}
    expected |= {f"appbench/data/test/test_{c}.json" for c in CATEGORIES}
    found = {p.relative_to(samples).as_posix() for p in samples.rglob("*.json")}
    assert found == expected
    assert len(found) == 2 * (1 + 2 * len(TASKS)) + len(CATEGORIES)
    assert not list(samples.rglob("*.py"))  # data only: no generator to keep in step


def test_readme_states_origin_and_licence(samples: Path) -> None:
    text = (samples / "README.md").read_text(encoding="utf-8")
    assert "Apache-2.0" in text
    assert "original" in text.lower()


# --------------------------------------------------------------------------------------------
# UltraTool
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_raw_samples_load_and_cover_the_intended_variety(samples: Path, lang: Lang) -> None:
    raw = _raw(samples, lang)
    assert len(raw) == 6
    assert all(r.meta is not None and r.meta.source == "sample" for r in raw)
    assert {r.domain for r in raw} >= {"Document", "Flight", "Finance", "Weather", "Meeting",
                                       "Shopping"}
    with_refs = [r for r in raw if any(s.call and s.call.references for s in r.plan)]
    assert len(with_refs) >= 2
    assert any(step_id(s.step).count(".") == 2 for r in raw for s in r.plan)  # 1.1.1
    for r in raw:
        kinds = [s.kind for s in r.plan]
        assert "tool_free" in kinds and "tool_call" in kinds
        assert all(s.tool == FREE[lang] for s in r.plan if s.kind == "tool_free")
        assert r.question.endswith("\n")  # as upstream
    types = {p.type for r in raw for t in r.tools
             for p in (*t.arguments.properties.values(), *t.results.properties.values())}
    assert types >= {"string", "integer", "number", "boolean", "array"}
    assert any("enum" in (p.model_extra or {})
               for r in raw for t in r.tools for p in t.arguments.properties.values())


@pytest.mark.parametrize("lang", LANGS)
def test_plan_numbering_is_hierarchical(samples: Path, lang: Lang) -> None:
    for r in _raw(samples, lang):
        ids = [step_id(s.step) for s in r.plan]
        assert len(set(ids)) == len(ids)
        for sid, s in zip(ids, r.plan, strict=True):
            parts = sid.rstrip(".").split(".")
            assert sid.endswith(".") == (len(parts) == 1)
            if len(parts) > 1:  # the parent step precedes it
                parent = ".".join(parts[:-1])
                assert parent in ids or parent + "." in ids
            assert (s.tool == "null") == (len(parts) == 1 and s.kind == "parent")


@pytest.mark.parametrize("lang", LANGS)
def test_plan_steps_and_tools_agree(samples: Path, lang: Lang) -> None:
    """The sample's tools are exactly the ones its plan calls; a ``null`` step is a top-level
    step with sub-steps, and a tool-call step has none."""
    for r in _raw(samples, lang):
        assert {s.call.name for s in r.plan if s.call} == {t.name for t in r.tools}
        ids = [step_id(s.step).rstrip(".") for s in r.plan]
        for i, s in enumerate(r.plan):
            has_children = i + 1 < len(ids) and ids[i + 1].startswith(ids[i] + ".")
            if s.tool == "null":
                assert has_children and "." not in ids[i], s.step
            if s.kind == "tool_call":
                assert not has_children, s.step


def test_languages_are_parallel(samples: Path) -> None:
    en, zh = _raw(samples, "en"), _raw(samples, "zh")
    assert len(en) == len(zh)
    for a, b in zip(en, zh, strict=True):
        assert a.domain == b.domain
        assert [t.name for t in a.tools] == [t.name for t in b.tools]
        assert [(s.id, s.kind, s.call.name if s.call else None) for s in a.plan] == \
               [(s.id, s.kind, s.call.name if s.call else None) for s in b.plan]
        assert a.question != b.question
        assert any(re.search(r"[\u4e00-\u9fff]", s.step) for s in b.plan)


def _input_steps(record: Any) -> list[str]:
    if isinstance(record, PlanningRecord):
        return record.reference.split("\n")
    return [s.step for s in record.input]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("task", TASKS)
def test_task_files_are_line_aligned_with_test_json(samples: Path, task: UltraToolTask,
                                                    lang: Lang) -> None:
    raw = _raw(samples, lang)
    records = _task(samples, task, lang)
    assert len(records) == len(raw)
    for r, rec in zip(raw, records, strict=True):
        assert rec.meta.source == "sample"
        assert _input_steps(rec) == [s.step for s in r.plan]
        if isinstance(rec, PlanningRecord):
            assert rec.input == r.question
            continue
        # the reference answers exactly the steps the input leaves open, in order
        asked = [s.step for s in rec.input if s.tool == "" or s.param == ""]
        assert [x.step for x in rec.reference] == asked
        if isinstance(rec, ToolUsageRecord):
            assert rec.question == r.question


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("task", TASKS)
def test_examples_load(samples: Path, task: UltraToolTask, lang: Lang) -> None:
    example = load_example(samples, task, lang)
    expected = {"planning": PlanningRecord, "tool_creation": ToolCreationRecord,
                "tool_usage": ToolUsageRecord, "tool_selection": ToolSelectionRecord,
                "tool_usage_awareness": AwarenessRecord,
                "tool_creation_awareness": AwarenessRecord}[task]
    assert isinstance(example, expected)
    if not isinstance(example, PlanningRecord):
        assert example.reference
    # the demo is not one of the test samples
    questions = {r.question.strip() for r in _raw(samples, lang)}
    steps = _input_steps(example)
    assert steps and steps[0] not in {s.step for r in _raw(samples, lang) for s in r.plan}
    if isinstance(example, PlanningRecord | ToolUsageRecord):
        q = example.input if isinstance(example, PlanningRecord) else example.question
        assert q.strip() not in questions


@pytest.mark.parametrize("lang", LANGS)
def test_calls_parse_and_equal_the_tool_usage_reference(samples: Path, lang: Lang) -> None:
    raw = _raw(samples, lang)
    usage = _task(samples, "tool_usage", lang)
    for r, rec in zip(raw, usage, strict=True):
        tools = {t.name: t for t in r.tools}
        gold = {x.step: x for x in rec.reference}
        call_steps = [s for s in r.plan if s.kind == "tool_call"]
        assert [s.step for s in call_steps] == list(gold)  # tool_usage drops nothing
        assert [t.name for t in rec.toolset] == list(tools)
        for s in call_steps:
            call = parse_call(s.tool)  # without the skeleton's argument names too
            assert call is not None
            assert call.name in tools
            assert set(call.args) <= tools[call.name].arg_names()
            assert gold[s.step].tool == call.name
            assert gold[s.step].param == call.args
            assert call.args == parse_call(s.tool, tools[call.name].arg_names()).args  # type: ignore[union-attr]
            for ref in call.references:
                assert any(ref in v for v in call.args.values())
        given = {x.step: x.tool for x in rec.input if x.param == ""}
        assert given == {k: v.tool for k, v in gold.items()}


@pytest.mark.parametrize("lang", LANGS)
def test_tool_usage_awareness_labels(samples: Path, lang: Lang) -> None:
    for r, rec in zip(_raw(samples, lang), _task(samples, "tool_usage_awareness", lang),
                      strict=True):
        kinds = {s.step: s.kind for s in r.plan}
        assert [x.step for x in rec.reference] == [s.step for s in r.plan if s.kind != "parent"]
        for x in rec.reference:
            assert x.tool == ("1" if kinds[x.step] == "tool_call" else "0")
        assert rec.toolset is None


@pytest.mark.parametrize("lang", LANGS)
def test_tool_selection_toolsets(samples: Path, lang: Lang) -> None:
    for r, rec in zip(_raw(samples, lang), _task(samples, "tool_selection", lang), strict=True):
        names = [t.name for t in rec.toolset]
        assert len(names) == len(set(names)) == 8
        assert {t.name for t in r.tools} <= set(names)
        by_name = {t.name: t for t in rec.toolset}
        for t in r.tools:  # the sample's own skeletons, unchanged
            assert by_name[t.name].official() == t.official()
        calls = {s.step: s.call.name for s in r.plan if s.call}
        assert {x.step: x.tool for x in rec.reference} == calls


@pytest.mark.parametrize("lang", LANGS)
def test_tool_creation_awareness_toolsets(samples: Path, lang: Lang) -> None:
    labels = []
    for r, rec in zip(_raw(samples, lang), _task(samples, "tool_creation_awareness", lang),
                      strict=True):
        assert rec.toolset is not None
        names = {t.name for t in rec.toolset}
        assert len(rec.toolset) == len(names) == 8
        calls = {s.step: s.call.name for s in r.plan if s.call}
        assert [x.step for x in rec.reference] == list(calls)
        for x in rec.reference:
            assert x.tool == ("0" if calls[x.step] in names else "1")
        labels += [x.tool for x in rec.reference]
    assert {"0", "1"} <= set(labels)


@pytest.mark.parametrize("lang", LANGS)
def test_tool_creation_asks_first_call_of_each_removed_tool(samples: Path, lang: Lang) -> None:
    repeated_removed = False
    for r, rec in zip(_raw(samples, lang), _task(samples, "tool_creation", lang), strict=True):
        assert len(rec.toolset) == 2
        available = {t.name for t in rec.toolset}
        tools = {t.name: t for t in r.tools}
        removed = [name for name in tools if name not in available]
        first: dict[str, str] = {}
        for s in r.plan:
            if s.call and s.call.name in removed:
                repeated_removed |= s.call.name in first
                first.setdefault(s.call.name, s.step)
        assert [x.step for x in rec.reference] == sorted(
            first.values(), key=[s.step for s in r.plan].index)
        for x in rec.reference:
            assert x.tool.official() == tools[x.tool.name].official()
            assert x.tool.name not in available
    assert repeated_removed  # the "first step only" rule is exercised


# --------------------------------------------------------------------------------------------
# AppBench
# --------------------------------------------------------------------------------------------


def _provider(calls: list[AppCall], i: int, name: str) -> int | None:
    """The latest call before ``i`` that returns ``name``."""
    return next((j for j in range(i - 1, -1, -1) if name in calls[j].returns), None)


def _graph(calls: list[AppCall]) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(range(len(calls)))
    for i, c in enumerate(calls):
        for key in c.dependent_args:
            j = _provider(calls, i, key)
            assert j is not None
            g.add_edge(j, i)
    return g


@pytest.mark.parametrize("category", CATEGORIES)
def test_appbench_gold_lines(samples: Path, category: Category) -> None:
    data = load_category(samples, category, "sample")
    assert 4 <= len(data) <= 6
    for s in data:
        out = s.output
        calls = s.calls
        n = len(calls)
        assert len(out.used_app) == len(out.used_api) == len(out.result_arguments) == n
        literals: dict[str, str] = {}
        for i, c in enumerate(calls):
            assert c.app == out.used_app[i]
            assert c.api in APP_APIS[c.app]
            (api, values), = out.used_api[i].items()
            assert api == c.api
            assert c.returns == out.result_arguments[i]
            keys = re.findall(r"#(\w+)=", out.api_results[i])
            assert keys == sorted(keys) and set(keys) == set(values) == c.arg_names
            for k, v in c.literal_args.items():
                assert values[k] == v
                assert literals.setdefault(k, v) == v
            for k, v in c.dependent_args.items():
                assert k == v  # always #k=k
                assert _provider(calls, i, k) is not None, f"{c.raw}: {k} returned by no call"
            assert all(re.fullmatch(r"2019-03-\d\d", v) for k, v in values.items()
                       if "date" in k)
        assert out.user_aware_arguments == literals
        assert set(out.middle_arguments) == {r for c in calls for r in c.returns}


def test_appbench_category_shapes(samples: Path) -> None:
    data = {c: load_category(samples, c, "sample") for c in CATEGORIES}
    for s in data["ss"]:
        assert len(s.calls) == 1
    for s in data["sm"]:
        assert len(set(s.output.used_app)) == 1 and len(s.calls) >= 2
    for s in data["ms"]:
        assert len(set(s.output.used_app)) == len(s.output.used_app) >= 2
    for s in data["mm"]:
        apps = s.output.used_app
        assert len(set(apps)) >= 2 and len(set(apps)) < len(apps)
    for s in (*data["ms"], *data["mm"]):
        assert any(c.dependent_args for c in s.calls), s.input
    graphs = [_graph(s.calls) for s in data["mm"]]
    assert any(nx.number_weakly_connected_components(g) == 2
               and all(len(c) == 2 for c in nx.weakly_connected_components(g)) for g in graphs)
    assert any(nx.dag_longest_path_length(g) == 2 for g in graphs)  # a chain of 3 calls


def _catalog(shared_data: Path) -> dict[str, Any]:
    return json.loads((shared_data / "appbench" / "derived" / "apps_apis.json")
                      .read_text(encoding="utf-8"))


def _names(spec: Any) -> list[str]:
    return [k.split(" ")[0] for k in spec]


def test_appbench_samples_use_the_real_catalog(samples: Path, shared_data: Path) -> None:
    catalog = _catalog(shared_data)
    for category in CATEGORIES:
        sample: AppBenchSample
        for sample in load_category(samples, category, "sample"):
            for c in sample.calls:
                assert c.app is not None
                api = catalog[c.app]["APIs"][c.api]
                required = set(_names(api["additional_required_arguments"]))
                optional = set(_names(api["optional_arguments"]))
                assert required <= c.arg_names <= required | optional, c.raw
                assert c.returns == _names(api["result_arguments"])


# --------------------------------------------------------------------------------------------
# The CLI lists every split
# --------------------------------------------------------------------------------------------


def test_data_info_lists_every_split_as_sample(samples: Path) -> None:
    from tooleval_agents.cli import app
    from tooleval_agents.registry import benchmarks

    result = CliRunner().invoke(app, ["data", "info", "--data-dir", str(samples), "--json"])
    assert result.exit_code == 0, result.output
    # Only the built-in benchmarks have samples here; a plugin installed beside them may
    # list its own splits (as missing), which this test does not count.
    builtin = ("ultratool", "appbench")
    rows = [r for r in json.loads(result.stdout)["splits"] if r["benchmark"] in builtin]
    expected = {s.name for b in builtin for s in benchmarks()[b].splits()}
    assert {r["dataset"] for r in rows} == expected
    assert len(rows) == 2 * 7 + 4
    for r in rows:
        assert r["records"] and r["records"] > 0, r
        assert r["source"] == "sample", r
