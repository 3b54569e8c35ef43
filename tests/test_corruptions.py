"""The ``noisy-reference`` corruptions: each kind on hand-written answers, the seeded draw
(identity at rate 0, always a change at rate 1, about ``rate`` of the answers corrupted,
deterministic across processes), and robustness on arbitrary and on real gold answers."""

from __future__ import annotations

import ast
import contextlib
import copy
import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooleval_agents.appbench.corruptions import FORMATS as APPBENCH_FORMATS
from tooleval_agents.appbench.lines import parse_call_line
from tooleval_agents.appbench.names import API_APPS, APP_APIS
from tooleval_agents.appbench.records import AppBenchSample, AppCall
from tooleval_agents.contracts import GoldAnswer
from tooleval_agents.models import corruptions
from tooleval_agents.models.corruptions import (
    FALLBACK_KIND,
    AnswerFormat,
    apply_kind,
    corrupt,
    draw,
    kinds_of,
    register_format,
)
from tooleval_agents.models.reference import (
    AnswerKey,
    NoisyReferenceChatModel,
)
from tooleval_agents.registry import get_benchmark
from tooleval_agents.ultratool.corruptions import next_step_id
from tooleval_agents.ultratool.records import step_id

FORMATS: tuple[AnswerFormat, ...] = ("plan_text", "json_steps", "json_object", "app_list",
                                     "call_lines")
SEEDS = range(25)  # rng seeds per kind check: every random branch of a kind gets exercised

# --- small hand-written answers, shaped like the workflows' gold answers --------------------

USAGE: list[dict[str, Any]] = [
    {"step": "1.2 Look up the forecast", "tool": "weather_query",
     "param": {"city": "Hangzhou", "date": "2024-06-01"}},
    {"step": "2.1 Convert the amount", "tool": "currency_convert",
     "param": {"amount": "250", "from": "USD", "to": "CNY"}},
    {"step": "2.2 Save the note", "tool": "note_create",
     "param": {"title": "Trip budget", "content": "<converted amount>"}},
]
AWARENESS: list[dict[str, Any]] = [
    {"step": "1.1 Gather the trip details", "tool": "0"},
    {"step": "1.2 Look up the forecast", "tool": "1"},
    {"step": "2.1 Convert the amount", "tool": "1"},
    {"step": "2.2 Decide what to pack", "tool": "0"},
]
SELECTION = [{k: v for k, v in s.items() if k != "param"} for s in USAGE]
SKELETON: dict[str, Any] = {
    "name": "currency_convert",
    "description": "Convert an amount between two currencies.",
    "arguments": {"type": "object", "properties": {
        "amount": {"description": "Amount to convert", "type": "number"},
        "from": {"description": "Source currency code", "type": "string"},
        "to": {"description": "Target currency code", "type": "string"}}},
    "results": {"type": "object", "properties": {
        "converted": {"description": "Converted amount", "type": "number"}}},
}
CREATION = [{"step": "2.1 Convert the amount", "tool": SKELETON}]
PLAN = """1. Plan the trip
1.1 Gather the trip details (City: Hangzhou, Date: 2024-06-01)
1.2 Look up the forecast
2. Prepare the budget
2.1 Convert the amount
2.2 Save the note
2.3 Decide what to pack"""
APPS = ["Restaurants", "Rents"]
CALLS = """\
Restaurants: [restaurant_name, location, category = findrestaurants(#category='Thai', #location='San Jose')]
Restaurants: [restaurant_name, date, time = reserverestaurant(#date='2019-03-08', #location=location, #restaurant_name=restaurant_name, #time='18:00')]
Rents: [destination, ride_fare = getride(#destination='Downtown Campbell', #number_of_seats='2', #ride_type='Pool')]"""  # noqa: E501


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def each_seed(text: str, fmt: AnswerFormat, kind: str) -> list[str]:
    """The kind applied with several generators; it must apply to these answers."""
    outs = [apply_kind(text, fmt, kind, random.Random(s)) for s in SEEDS]
    assert all(o is not None and o != text for o in outs), (kind, outs)
    return [o for o in outs if o is not None]


def ids(steps: list[dict[str, Any]]) -> list[str]:
    return [step_id(s["step"]) for s in steps]


def calls_of(text: str) -> list[AppCall]:
    out = []
    for line in text.split("\n"):
        app, _, body = line.partition(": [")
        out.append(parse_call_line(body.rstrip("]")).model_copy(update={"app": app}))
    return out


# --- json_steps ----------------------------------------------------------------------------

@pytest.mark.parametrize("gold", [USAGE, AWARENESS, SELECTION, CREATION])
def test_json_steps_drop_and_add(gold: list[dict[str, Any]]) -> None:
    for out in each_seed(dumps(gold), "json_steps", "drop_step"):
        steps = json.loads(out)
        assert len(steps) == len(gold) - 1 and all(s in gold for s in steps)
    for out in each_seed(dumps(gold), "json_steps", "add_step"):
        steps = json.loads(out)
        assert len(steps) == len(gold) + 1
        new = [s for s in steps if s not in gold]
        assert len(new) == 1 and step_id(new[0]["step"]) not in ids(gold)
        assert [s for s in steps if s in gold] == gold


def test_json_steps_wrong_tool() -> None:
    for out in each_seed(dumps(AWARENESS), "json_steps", "wrong_tool"):
        labels = [(a["tool"], b["tool"]) for a, b in zip(AWARENESS, json.loads(out), strict=True)]
        assert sum(x != y for x, y in labels) == 1
        assert all({x, y} in ({"0"}, {"1"}, {"0", "1"}) for x, y in labels)
    names = {s["tool"] for s in SELECTION}
    for out in each_seed(dumps(SELECTION), "json_steps", "wrong_tool"):
        changed = [(a["tool"], b["tool"]) for a, b in zip(SELECTION, json.loads(out), strict=True)
                   if a != b]
        # another tool of the answer, not an invented one, when there is one
        assert len(changed) == 1 and changed[0][1] in names - {changed[0][0]}
    alone = [SELECTION[0]]
    for out in each_seed(dumps(alone), "json_steps", "wrong_tool"):
        name = json.loads(out)[0]["tool"]
        assert name != alone[0]["tool"] and name
    for out in each_seed(dumps(CREATION), "json_steps", "wrong_tool"):
        tool = json.loads(out)[0]["tool"]
        assert tool["name"] != SKELETON["name"]
        assert {k: v for k, v in tool.items() if k != "name"} == {
            k: v for k, v in SKELETON.items() if k != "name"}


def test_json_steps_arguments() -> None:
    for out in each_seed(dumps(USAGE), "json_steps", "mutate_value"):
        steps = json.loads(out)
        diffs = [(k, a["param"][k], b["param"][k]) for a, b in zip(USAGE, steps, strict=True)
                 for k in a["param"] if a["param"][k] != b["param"].get(k)]
        assert len(diffs) == 1 and [s["param"].keys() for s in steps] == [
            s["param"].keys() for s in USAGE]
    for out in each_seed(dumps(USAGE), "json_steps", "drop_argument"):
        steps = json.loads(out)
        missing = [(k, a["step"]) for a, b in zip(USAGE, steps, strict=True)
                   for k in a["param"] if k not in b["param"]]
        assert len(missing) == 1
        assert all(b["param"][k] == a["param"][k] for a, b in zip(USAGE, steps, strict=True)
                   for k in b["param"])
    for out in each_seed(dumps(CREATION), "json_steps", "drop_argument"):
        props = json.loads(out)[0]["tool"]["arguments"]["properties"]
        assert len(props) == 2 and set(props) < set(SKELETON["arguments"]["properties"])
    # labels and tool names have no arguments
    for gold in (AWARENESS, SELECTION):
        assert apply_kind(dumps(gold), "json_steps", "mutate_value", random.Random(0)) is None


def broken_json_ok(out: str, gold: Any) -> None:
    """Not JSON any more, or Python literal quoting of the same value (what GPT often writes)."""
    try:
        json.loads(out)
    except ValueError:
        with contextlib.suppress(ValueError, SyntaxError):  # cut off or a bracket missing
            assert ast.literal_eval(out) == gold
        return
    pytest.fail(f"still valid JSON: {out!r}")


@pytest.mark.parametrize("gold", [USAGE, AWARENESS, CREATION])
def test_json_steps_broken_json(gold: list[dict[str, Any]]) -> None:
    outs = each_seed(dumps(gold), "json_steps", "broken_json")
    for out in outs:
        broken_json_ok(out, gold)
    assert any(out == str(gold) for out in outs)  # the single-quote variant occurs


# --- plan_text -----------------------------------------------------------------------------

def plan_lines(text: str) -> list[tuple[str, str]]:
    return [tuple(line.split(" ", 1)) for line in text.split("\n")]  # type: ignore[misc]


def test_plan_text_kinds() -> None:
    gold = plan_lines(PLAN)
    for out in each_seed(PLAN, "plan_text", "drop_step"):
        got = plan_lines(out)
        assert len(got) == len(gold) - 1 and all(line in gold for line in got)
    for out in each_seed(PLAN, "plan_text", "add_step"):
        got = plan_lines(out)
        new = [line for line in got if line not in gold]
        assert len(got) == len(gold) + 1 and len(new) == 1
        assert new[0][0] not in {i for i, _ in gold}  # a fresh step number
    for out in each_seed(PLAN, "plan_text", "reorder_steps"):
        got = plan_lines(out)
        assert [i for i, _ in got] == [i for i, _ in gold]  # numbering kept
        assert sorted(b for _, b in got) == sorted(b for _, b in gold)
        moved = [n for n, (a, b) in enumerate(zip(gold, got, strict=True)) if a != b]
        assert len(moved) == 2
        # two sibling actions swapped, never a parent heading
        assert all(gold[n][0].count(".") == 1 and not gold[n][0].endswith(".") for n in moved)
    for out in each_seed(PLAN, "plan_text", "break_numbering"):
        lines = out.split("\n")
        assert len(lines) == len(gold)
        assert all(line.endswith(body) for line, (_, body) in zip(lines, gold, strict=True))
        assert [line.split(" ", 1)[0] for line in lines] != [i for i, _ in gold]


def test_plan_add_step_goes_after_its_sibling_group() -> None:
    for out in each_seed(PLAN, "plan_text", "add_step"):
        got = out.split("\n")
        new = next(n for n, line in enumerate(got) if line not in PLAN.split("\n"))
        new_id = got[new].split(" ", 1)[0]
        parent = new_id.rstrip(".").split(".")[:-1]
        following = [line.split(" ", 1)[0].rstrip(".").split(".") for line in got[new + 1:]]
        assert all(f[:len(parent)] != parent or not parent for f in following), out


def test_next_step_id() -> None:
    assert next_step_id("2.", {"1.", "2.", "3."}) == "4."
    assert next_step_id("1.1", {"1.1", "1.2"}) == "1.3"
    assert next_step_id("2.1.1", set()) == "2.1.2"


# --- json_object ---------------------------------------------------------------------------

def count_properties(skeleton: dict[str, Any]) -> int:
    return sum(len(skeleton[part]["properties"]) for part in ("arguments", "results"))


def test_json_object_kinds() -> None:
    text = dumps(SKELETON)
    for out in each_seed(text, "json_object", "drop_property"):
        got = json.loads(out)
        assert count_properties(got) == count_properties(SKELETON) - 1
        assert got["name"] == SKELETON["name"]
    for out in each_seed(text, "json_object", "rename_tool"):
        got = json.loads(out)
        assert got["name"] != SKELETON["name"]
        assert {**got, "name": SKELETON["name"]} == SKELETON
    for out in each_seed(text, "json_object", "broken_json"):
        broken_json_ok(out, SKELETON)
    # other JSON objects: some key goes; no "name" means no rename
    assert apply_kind('{"a": 1}', "json_object", "drop_property", random.Random(0)) == "{}"
    assert apply_kind('{"a": 1}', "json_object", "rename_tool", random.Random(0)) is None


# --- app_list ------------------------------------------------------------------------------

@pytest.mark.parametrize("render", [dumps, lambda apps: "[" + ", ".join(apps) + "]"])
def test_app_list_kinds(render: Any) -> None:
    def apps_of(text: str) -> list[str]:
        return [a.strip(" '\"") for a in text.strip("[]").split(",") if a.strip()]

    text = render(APPS)
    for out in each_seed(text, "app_list", "drop_app"):
        got = apps_of(out)
        assert len(got) == 1 and set(got) < set(APPS)
    for out in each_seed(text, "app_list", "add_app"):
        got = apps_of(out)
        assert len(got) == 3 and set(APPS) < set(got) and set(got) <= set(APP_APIS)
    for out in each_seed(text, "app_list", "replace_app"):
        got = apps_of(out)
        assert len(got) == 2 and len(set(got) & set(APPS)) == 1 and set(got) <= set(APP_APIS)


# --- call_lines ----------------------------------------------------------------------------

def one_changed(out: str) -> tuple[AppCall, AppCall]:
    pairs = [(a, b) for a, b in zip(calls_of(CALLS), calls_of(out), strict=True) if a != b]
    assert len(pairs) == 1, out
    return pairs[0]


def test_appbench_declares_its_two_answer_formats() -> None:
    # The benchmark declares them (no core file names AppBench's formats); each kind applies.
    assert get_benchmark("appbench").answer_formats() == APPBENCH_FORMATS
    assert {name: kinds for name, (kinds, _) in APPBENCH_FORMATS.items()} == {
        "app_list": ("drop_app", "add_app", "replace_app"),
        "call_lines": ("wrong_app", "wrong_api", "drop_argument", "mutate_value",
                       "broken_dependency", "drop_call", "add_call", "swap_lines")}
    for kind in APPBENCH_FORMATS["call_lines"][0]:
        assert each_seed(CALLS, "call_lines", kind)


def test_call_lines_app_and_api() -> None:
    for out in each_seed(CALLS, "call_lines", "wrong_app"):
        gold, got = one_changed(out)
        assert got.app != gold.app and got.app in APP_APIS and got.api == gold.api
    for out in each_seed(CALLS, "call_lines", "wrong_api"):
        gold, got = one_changed(out)
        # Rents has three APIs, Restaurants two: the wrong API belongs to the same app
        assert got.api != gold.api and gold.app in API_APPS[got.api]
        assert got.literal_args == gold.literal_args


def test_call_lines_arguments() -> None:
    for out in each_seed(CALLS, "call_lines", "drop_argument"):
        gold, got = one_changed(out)
        assert len(got.arg_names) == len(gold.arg_names) - 1 and got.arg_names < gold.arg_names
    for out in each_seed(CALLS, "call_lines", "mutate_value"):
        gold, got = one_changed(out)
        assert got.literal_args.keys() == gold.literal_args.keys()
        assert sum(got.literal_args[k] != v for k, v in gold.literal_args.items()) == 1
        assert got.dependent_args == gold.dependent_args
    returned = {r for c in calls_of(CALLS) for r in c.returns}
    kinds = set()
    for out in each_seed(CALLS, "call_lines", "broken_dependency"):
        gold, got = one_changed(out)
        assert gold.api == "reserverestaurant"  # the only call with dependencies
        lost = set(gold.dependent_args) - {k for k, v in got.dependent_args.items()
                                           if v in returned}
        assert len(lost) == 1
        kinds.add("literal" if lost <= set(got.literal_args) else "unknown name")
    assert kinds == {"literal", "unknown name"}


def test_call_lines_whole_calls() -> None:
    gold = calls_of(CALLS)
    for out in each_seed(CALLS, "call_lines", "drop_call"):
        got = calls_of(out)
        assert len(got) == 2 and all(c in gold for c in got)
    for out in each_seed(CALLS, "call_lines", "add_call"):
        got = calls_of(out)
        assert len(got) == 4 and all(c in got for c in gold)
        extra = [c for c in got if c not in gold]
        assert len(extra) <= 1  # a repeated call, or a sibling API of the same app
        if extra:
            assert any(extra[0].app == g.app and extra[0].api in APP_APIS[g.app or ""]
                       for g in gold)
    for out in each_seed(CALLS, "call_lines", "swap_lines"):
        got = calls_of(out)
        assert sorted(c.raw for c in got) == sorted(c.raw for c in gold) and got != gold


def test_call_lines_without_app_prefix() -> None:
    bare = "\n".join(c.raw for c in calls_of(CALLS))
    assert apply_kind(bare, "call_lines", "wrong_app", random.Random(0)) is None
    out = apply_kind(bare, "call_lines", "wrong_api", random.Random(0))
    assert out is not None and out != bare


# --- the draw ------------------------------------------------------------------------------

GOLD: dict[AnswerFormat, str] = {
    "plan_text": PLAN, "json_steps": dumps(USAGE), "json_object": dumps(SKELETON),
    "app_list": dumps(APPS), "call_lines": CALLS,
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_share_corrupted_follows_rate(fmt: AnswerFormat) -> None:
    # Binomial(1000, 0.3): mean 300, sd 14.5; outside 240..360 has probability < 1e-4.
    text = GOLD[fmt]
    low = [corrupt(text, fmt, rate=0.3, seed=s) != text for s in range(1000)]
    assert 240 <= sum(low) <= 360
    # the draw does not depend on the rate: a higher rate corrupts a superset, the same way
    high = [corrupt(text, fmt, rate=0.6, seed=s) for s in range(1000)]
    assert all(h != text for h, lo in zip(high, low, strict=True) if lo)
    assert all(corrupt(text, fmt, rate=0.3, seed=s) == high[s] for s in range(1000) if low[s])
    assert 540 <= sum(h != text for h in high) <= 660  # Binomial(1000, 0.6), sd 15.5


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_kind_is_drawn(fmt: AnswerFormat) -> None:
    n = 100 * len(kinds_of(fmt))
    kinds = Counter(draw(GOLD[fmt], fmt, rate=1.0, seed=s).kind for s in range(n))
    assert set(kinds) == set(kinds_of(fmt))
    assert min(kinds.values()) >= 50  # about 100 each (uniform over the kinds that apply)


def test_fallback_when_no_kind_applies() -> None:
    for fmt in FORMATS:
        d = draw("no structure here", fmt, rate=1.0, seed="x")
        assert d.text != "no structure here"
        assert d.kind in (FALLBACK_KIND, "broken_json", "drop_step", "add_step")
    d = draw("nothing to select", "app_list", rate=1.0, seed=1)
    assert d.kind == FALLBACK_KIND and "nothing to select".startswith(d.text)


def test_errors_are_explicit() -> None:
    with pytest.raises(ValueError, match="rate"):
        corrupt("x", "plan_text", rate=1.5, seed=0)
    with pytest.raises(ValueError, match="format"):
        corrupt("x", "yaml", rate=0.5, seed=0)
    with pytest.raises(ValueError, match="no corruption"):
        apply_kind("x", "plan_text", "wrong_app", random.Random(0))


def test_formats_are_an_open_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unknown formats name the known ones (the benchmarks' own included); a registered
    format is drawn like the built-in ones."""
    with pytest.raises(ValueError, match=r"known: (?=.*'plan_text')(?=.*'call_lines')"):
        kinds_of("yaml")
    monkeypatch.setitem(corruptions.KINDS, "upper", ("shout",))
    monkeypatch.setitem(corruptions._APPLY, "upper", lambda text, kind, rng: text.upper())
    assert draw("quiet", "upper", rate=1.0, seed=0) == corruptions.Corruption("QUIET", "shout")
    register_format("upper", ("shout",), lambda text, kind, rng: None)
    assert draw("quiet", "upper", rate=1.0, seed=0).kind == FALLBACK_KIND


def test_deterministic_across_processes() -> None:
    """Seeds go through SHA-256, not the per-process salted ``hash()``."""
    code = ("import json, sys; from tooleval_agents.models.corruptions import corrupt; "
            "g = json.loads(sys.stdin.read()); "
            "print(json.dumps([corrupt(t, f, rate=0.5, seed=f'run/{s}') "
            "for f, t in g.items() for s in range(40)]))")
    # this process's hash salt is random; the child's is fixed, so the two differ
    run = subprocess.run([sys.executable, "-c", code], input=json.dumps(GOLD), text=True,
                         capture_output=True, check=True, env={"PYTHONHASHSEED": "12345"},
                         cwd=Path(__file__).resolve().parents[1])
    here = [corrupt(t, f, rate=0.5, seed=f"run/{s}") for f, t in GOLD.items() for s in range(40)]
    assert json.loads(run.stdout) == here
    assert 0 < sum(o != t for o, t in zip(here, [t for t in GOLD.values() for _ in range(40)],
                                          strict=True)) < len(here)


# --- property tests ------------------------------------------------------------------------

step_ids = st.lists(st.integers(0, 12), min_size=1, max_size=3).map(
    lambda p: ".".join(map(str, p)) + ("." if len(p) == 1 else ""))
json_steps = st.lists(st.fixed_dictionaries(
    {"step": st.tuples(step_ids, st.text(max_size=12)).map(" ".join)},
    optional={"tool": st.one_of(st.sampled_from(["0", "1", "", "file_copy", "x"]),
                                st.text(max_size=8), st.dictionaries(st.text(max_size=5),
                                                                     st.text(max_size=5))),
              "param": st.one_of(st.just(""), st.dictionaries(st.text(max_size=6),
                                                              st.text(max_size=8)))}),
    max_size=5).map(dumps)
values = st.one_of(st.text(max_size=10).map(lambda v: "'" + v.replace("'", "") + "'"),
                   st.from_regex(r"[a-z_]{1,8}", fullmatch=True), st.text(max_size=6))
call_line = st.builds(
    lambda app, ret, api, args: f"{app}: [{ret} = {api}({', '.join(args)})]",
    st.one_of(st.sampled_from(sorted(APP_APIS)), st.from_regex(r"[A-Z][a-z]{0,6}", fullmatch=True)),
    st.from_regex(r"[a-z_]{1,6}(, [a-z_]{1,6}){0,2}", fullmatch=True),
    st.one_of(st.sampled_from(sorted(API_APPS)), st.from_regex(r"[a-z_]{1,8}", fullmatch=True)),
    st.lists(st.builds(lambda k, v: f"#{k}={v}", st.from_regex(r"[a-z_]{1,6}", fullmatch=True),
                       values), max_size=4))
plans = st.lists(st.tuples(step_ids, st.text(min_size=1, max_size=10)).map(" ".join),
                 max_size=6).map("\n".join)
app_lists = st.lists(st.one_of(st.sampled_from(sorted(APP_APIS)), st.text(max_size=6)),
                     max_size=5).map(dumps)
any_text = st.one_of(st.text(), json_steps, plans, app_lists,
                     st.lists(call_line, max_size=4).map("\n".join),
                     st.dictionaries(st.text(max_size=5), st.recursive(
                         st.text(max_size=5), lambda c: st.dictionaries(st.text(max_size=4), c,
                                                                        max_size=3),
                         max_leaves=6), max_size=4).map(dumps))
seeds = st.one_of(st.integers(), st.text(max_size=20))


@settings(max_examples=400, deadline=None)
@given(text=any_text, fmt=st.sampled_from(FORMATS), seed=seeds)
def test_property_never_raises_and_rate_bounds(text: str, fmt: AnswerFormat, seed: Any) -> None:
    assert corrupt(text, fmt, rate=0.0, seed=seed) == text
    once = corrupt(text, fmt, rate=1.0, seed=seed)
    assert once == corrupt(text, fmt, rate=1.0, seed=seed)
    assert (once != text) == bool(text)
    mid = corrupt(text, fmt, rate=0.5, seed=seed)
    assert mid in (text, once)


@settings(max_examples=150, deadline=None)
@given(text=any_text, seed=seeds, kind_index=st.integers(0, 7))
def test_property_each_kind_never_raises(text: str, seed: Any, kind_index: int) -> None:
    for fmt in FORMATS:
        kind = kinds_of(fmt)[kind_index % len(kinds_of(fmt))]
        out = apply_kind(text, fmt, kind, random.Random(str(seed)))
        assert out is None or isinstance(out, str)


# --- real gold answers ---------------------------------------------------------------------

def appbench_gold(path: Path) -> list[tuple[str, str]]:
    """(app list, call lines) of every sample, as the AppBench workflows' gold answers."""
    out = []
    for raw in json.loads(path.read_text(encoding="utf-8")):
        sample = AppBenchSample.model_validate(raw)
        calls = sample.calls
        apps = list(dict.fromkeys(c.app for c in calls if c.app))
        out.append((dumps(apps), "\n".join(f"{c.app}: [{c.raw}]" for c in calls)))
    return out


def test_real_gold_answers_always_corrupt(shared_data: Path) -> None:
    """Every real AppBench gold answer and the first UltraTool references of each task: rate 1
    changes each one with a kind of its format (never the fallback), rate 0 keeps it."""
    cases: list[tuple[str, AnswerFormat]] = []
    for cat in ("ss", "sm", "ms", "mm"):
        for apps, lines in appbench_gold(shared_data / f"appbench/data/test/test_{cat}.json"):
            cases += [(apps, "app_list"), (lines, "call_lines")]
    test_set = shared_data / "ultratool/data/English-dataset/test_set"
    for task in ("planning", "tool_usage_awareness", "tool_creation", "tool_usage"):
        with (test_set / f"{task}.json").open(encoding="utf-8") as f:
            for _, line in zip(range(150), f, strict=False):
                ref = json.loads(line)["reference"]
                cases.append((ref, "plan_text") if task == "planning"
                             else (dumps(ref), "json_steps"))
                if task == "tool_creation":
                    cases += [(dumps(step["tool"]), "json_object") for step in ref]
    assert len(cases) > 2000
    kinds: Counter[str] = Counter()
    for n, (text, fmt) in enumerate(cases):
        d = draw(text, fmt, rate=1.0, seed=n)
        assert d.text != text and d.kind in kinds_of(fmt), (fmt, text)
        kinds[f"{fmt}/{d.kind}"] += 1
        assert corrupt(text, fmt, rate=0.0, seed=n) == text
    assert len(kinds) == sum(len(kinds_of(f)) for f in FORMATS)  # every kind occurs on real data


# --- the noisy-reference model --------------------------------------------------------------

def test_noisy_reference_model_uses_corruptions() -> None:
    key = AnswerKey.build([(f"request {i}", [GoldAnswer("Write the calls.", CALLS,
                                                        "call_lines")]) for i in range(40)])
    prompts = [f"Plan.\n<input>\nrequest {i}\n</input>\nWrite the calls." for i in range(40)]
    exact = NoisyReferenceChatModel(answer_key=key, rate=0.0)
    assert all(exact.invoke(p).content == CALLS for p in prompts)
    noisy = NoisyReferenceChatModel(answer_key=key, rate=1.0, seed=3)
    answers = [noisy.invoke(p).content for p in prompts]
    assert all(a != CALLS for a in answers)
    assert answers == [noisy.invoke(p).content for p in prompts]  # per example, not per call
    assert len(set(answers)) > 20  # different examples get different corruptions
    other_seed = NoisyReferenceChatModel(answer_key=key, rate=1.0, seed=4)
    assert [other_seed.invoke(p).content for p in prompts] != answers


def test_deeply_nested_json_falls_back_instead_of_raising() -> None:
    text = "[" * 700 + "1" + "]" * 700
    with pytest.raises(RecursionError):  # json.loads reads it; a deep copy recurses too far
        copy.deepcopy(json.loads(text))
    for seed in range(5):
        out = draw(text, "json_object", rate=1.0, seed=seed)
        assert out.text != text
