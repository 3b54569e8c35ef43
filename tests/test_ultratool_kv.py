"""UltraTool key-value metrics: hand-made answers move each metric the way the paper and the
official scorer define it, and every metric stays in [0, 100]."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooleval_agents.contracts import ExampleScore
from tooleval_agents.errors import DataFormatError
from tooleval_agents.evaluators.ultratool.kv import (
    aggregate,
    create_awareness_evaluator,
    create_kv_evaluator,
    score_awareness,
    score_tool_selection,
    score_tool_usage,
)
from tooleval_agents.evaluators.ultratool.scoring import (
    TABLE2_COLUMNS,
    load_predictions,
    overall,
    score_task,
)

AWARE_GOLD = [{"step": "1.1 Get the path (Path: D:/a.txt)", "tool": "0"},
              {"step": "1.2 Write the file", "tool": "1"},
              {"step": "1.3 Confirm", "tool": "0"}]


def aware(answer: Any, gold: list[dict[str, Any]] = AWARE_GOLD,
          task: Any = "tool_usage_awareness") -> ExampleScore:
    return score_awareness({}, {"output": answer}, {"reference": gold}, task=task)


def labels(*values: Any) -> str:
    return json.dumps([{"step": g["step"], "tool": v} for g, v in zip(AWARE_GOLD, values,
                                                                         strict=False)])


# --- awareness --------------------------------------------------------------------------------

def test_awareness_perfect_and_one_wrong_label() -> None:
    perfect = aware(labels("0", "1", "0"))
    assert perfect.scores["tool_usage_awareness_global"] == 100.0
    assert perfect.scores["tool_usage_awareness_local"] == 100.0
    one_wrong = aware(labels("0", "0", "0"))
    assert one_wrong.scores["tool_usage_awareness_global"] == 0.0
    assert one_wrong.scores["tool_usage_awareness_local"] == pytest.approx(200 / 3)


def test_awareness_missing_step_is_wrong_and_extra_steps_are_ignored() -> None:
    missing = aware(labels("0", "1"))
    assert missing.scores["tool_usage_awareness_local"] == pytest.approx(200 / 3)
    assert "incomplete_output" in missing.labels["error_kinds"]
    extra = [*json.loads(labels("0", "1", "0")), {"step": "2.1 Extra", "tool": "1"}]
    result = aware(json.dumps(extra))
    assert result.scores["tool_usage_awareness_local"] == 100.0
    assert "redundant_output" in result.labels["error_kinds"]


def test_awareness_matches_on_step_id_and_takes_the_first_duplicate() -> None:
    answer = [{"step": "1.1 a different wording", "tool": "0"},
              {"step": "1.2", "tool": "0"}, {"step": "1.2 again", "tool": "1"},
              {"step": "1.3 Confirm", "tool": "0"}]
    result = aware(json.dumps(answer))
    assert result.parts["tool_usage_awareness_local"].hits == 2  # 1.2 uses the first: "0"


@pytest.mark.parametrize(("value", "right"), [
    ("1", True), (1, True), (True, True), (" 1 ", True), (1.0, True),
    ("0", False), ("yes", False), ("1.0", False), (None, False), ([1], False), ("", False),
])
def test_awareness_label_values(value: Any, right: bool) -> None:
    answer = json.loads(labels("0", "1", "0"))
    answer[1]["tool"] = value
    result = aware(json.dumps(answer))  # never raises on odd values
    assert result.parts["tool_usage_awareness_local"].hits == (3 if right else 2)


def test_awareness_of_tool_creation_uses_its_own_metric_names() -> None:
    result = aware(labels("0", "1", "0"), task="tool_creation_awareness")
    assert result.scores["tool_creation_awareness_global"] == 100.0
    assert "tool_usage_awareness_global" not in result.scores


def test_unreadable_answer_counts_every_step_wrong_and_bad_json() -> None:
    result = aware("Sorry, I can't do that.")
    assert result.scores == {"tool_usage_awareness_global": 0.0,
                             "tool_usage_awareness_local": 0.0, "json_format_rate": 0.0}
    assert result.labels["error_kinds"] == "not_following_instructions"


def test_global_is_over_samples_and_local_is_pooled_over_steps() -> None:
    one_step = [{"step": "1.1 a", "tool": "1"}]
    scores = [aware(json.dumps(one_step), gold=one_step),           # 1/1 right
              aware(labels("1", "0", "1")),                          # 0/3 right
              aware("not an answer")]                                # 0/3, bad JSON
    metrics = aggregate("tool_usage_awareness", scores)
    assert metrics["tool_usage_awareness_global"] == pytest.approx(100 / 3)
    assert metrics["tool_usage_awareness_local"] == pytest.approx(100 * 1 / 7)  # not mean 33.3
    assert metrics["json_format_rate"] == pytest.approx(100 * 2 / 3)


# --- selection --------------------------------------------------------------------------------

SEL_GOLD = [{"step": "1.2 Write", "tool": "file_write"}, {"step": "2.1 Delete",
                                                          "tool": "file_delete"}]
TOOLSET = [{"name": n, "description": "", "arguments": {"type": "object", "properties": {}},
            "results": {"type": "object", "properties": {}}}
           for n in ("file_write", "file_delete", "delete_schedule")]


def select(*names: Any) -> ExampleScore:
    answer = [{"step": g["step"], "tool": n} for g, n in zip(SEL_GOLD, names, strict=True)]
    return score_tool_selection({"toolset": TOOLSET}, {"output": repr(answer)},
                                {"reference": SEL_GOLD})


@pytest.mark.parametrize(("names", "hits"), [
    (("file_write", "file_delete"), 2),
    (("file\\_write", "file_delete"), 2),    # markdown-escaped underscore
    (("File_write", "file_delete"), 1),      # case-sensitive
    (("file_write", "delete_schedule"), 1),  # look-alike interference tool
    (("file_write", None), 1),
    (("file_write", ["file_delete"]), 1),
])
def test_selection_compares_names_exactly(names: tuple[Any, ...], hits: int) -> None:
    result = select(*names)
    assert result.parts["tool_selection_local"].hits == hits
    assert result.scores["tool_selection_global"] == (100.0 if hits == 2 else 0.0)


def test_selection_flags_tools_outside_the_toolset() -> None:
    assert "hallucination" in select("file_write", "rm_rf").labels["error_kinds"]
    assert "error_kinds" not in select("file_write", "file_delete").labels


# --- tool usage -------------------------------------------------------------------------------

USAGE_GOLD = [{"step": "1.2 Write", "tool": "file_write",
               "param": {"file_path": "abcd", "content": "hello"}},
              {"step": "2.1 Convert", "tool": "currency", "param": {"amount": "5000",
                                                                    "note": ""}}]


def usage(params: list[Any] | None, gold: list[dict[str, Any]] = USAGE_GOLD) -> ExampleScore:
    answer = [] if params is None else [
        {"step": g["step"], "tool": g["tool"], "param": p}
        for g, p in zip(gold, params, strict=False)]
    return score_tool_usage({}, {"output": repr(answer)}, {"reference": gold})


def test_usage_exact_answer_scores_100() -> None:
    result = usage([{"file_path": "abcd", "content": "hello"}, {"amount": "5000", "note": ""}])
    assert result.scores["tool_usage"] == 100.0


@pytest.mark.parametrize(("first", "expected"), [
    ({"file_path": "abcd", "content": "hello"}, 1.0),
    ({"file_path": "abce", "content": "hello"}, (0.75 + 1) / 2),   # 1 edit in 4 characters
    ({"file_path": "ABCD", "content": "hello"}, (0 + 1) / 2),      # case-sensitive
    ({"file_path": "abcd"}, 0.5),                                   # missing key scores 0
    ({"file_path": "abcd", "content": "hello", "extra": "x"}, 1.0),  # extra keys ignored
    ({"file\\_path": "abcd", "content": "hello"}, 1.0),            # escaped underscore
    ("file_path=abcd", 0.0),                                        # non-dict param
    ({}, 0.0),
])
def test_usage_step_score(first: Any, expected: float) -> None:
    result = usage([first, {"amount": "5000", "note": ""}])
    # The second step is always right: the example score is the mean of the two steps.
    assert result.scores["tool_usage"] == pytest.approx(100 * (expected + 1) / 2)
    assert result.parts["tool_usage"].total == 2


@pytest.mark.parametrize(("second", "expected"), [
    ({"amount": 5000, "note": ""}, 1.0),          # str(5000) == "5000"
    ({"amount": "5000", "note": "x"}, 0.5),       # empty gold needs an empty prediction
    ({"amount": "5000", "note": None}, 1.0),
    ({"amount": "500", "note": ""}, (0.75 + 1) / 2),
])
def test_usage_value_types_and_empty_gold(second: dict[str, Any], expected: float) -> None:
    result = usage([{"file_path": "abcd", "content": "hello"}, second])
    assert result.scores["tool_usage"] == pytest.approx(100 * (1 + expected) / 2)


def test_usage_list_values_compare_as_their_python_text() -> None:
    gold = [{"step": "1.1 Plan", "tool": "t", "param": {"cities": "['Tokyo', 'Kyoto']"}}]
    assert usage([{"cities": ["Tokyo", "Kyoto"]}], gold).scores["tool_usage"] == 100.0


def test_usage_missing_step_scores_0_and_pools_over_steps() -> None:
    result = usage([{"file_path": "abcd", "content": "hello"}])  # step 2.1 missing
    assert result.scores["tool_usage"] == 50.0
    other = usage([{"file_path": "abcd", "content": "hello"}],
                  gold=USAGE_GOLD[:1])  # 1 step, right
    assert aggregate("tool_usage", [result, other])["tool_usage"] == pytest.approx(
        100 * 2 / 3)


def test_usage_flags_argument_names_outside_the_skeleton() -> None:
    toolset = [{"name": "file_write", "arguments": {"properties": {"file_path": {},
                                                                   "content": {}}}}]
    answer = [{"step": "1.2 Write", "tool": "file_write",
               "param": {"file_path": "abcd", "contents": "hello"}}]
    result = score_tool_usage({"toolset": toolset}, {"output": json.dumps(answer)},
                              {"reference": USAGE_GOLD[:1]})
    assert "hallucination" in result.labels["error_kinds"]


# --- properties -------------------------------------------------------------------------------

_ids = st.sampled_from(["1.1", "1.2", "2.1", "1.", "x", ""])
_any = st.one_of(st.text(max_size=6), st.integers(), st.none(), st.booleans(),
                 st.lists(st.text(max_size=3), max_size=2))
_answer_items = st.lists(st.fixed_dictionaries(
    {"step": st.builds(lambda i, t: f"{i} {t}", _ids, st.text(max_size=5))},
    optional={"tool": _any, "param": st.one_of(_any, st.dictionaries(
        st.sampled_from(["a", "b", "c"]), _any, max_size=3))}), max_size=5)
_gold_params = st.dictionaries(st.sampled_from(["a", "b", "c"]), st.text(max_size=6),
                               max_size=3)


@settings(max_examples=200, deadline=None)
@given(_answer_items, st.lists(st.tuples(_ids, st.sampled_from(["0", "1"]), _gold_params),
                               max_size=4), st.booleans())
def test_every_metric_stays_in_0_100(items: list[dict[str, Any]],
                                     gold_rows: list[tuple[str, str, dict[str, str]]],
                                     as_text: bool) -> None:
    output: Any = json.dumps(items) if as_text else items
    aware_gold = [{"step": f"{i} s", "tool": t} for i, t, _ in gold_rows]
    usage_gold = [{"step": f"{i} s", "tool": "t", "param": p} for i, _, p in gold_rows]
    results = {
        "tool_usage_awareness": score_awareness({}, {"output": output},
                                                {"reference": aware_gold}),
        "tool_selection": score_tool_selection({"toolset": TOOLSET}, {"output": output},
                                               {"reference": aware_gold}),
        "tool_usage": score_tool_usage({}, {"output": output}, {"reference": usage_gold}),
    }
    for task, result in results.items():
        assert all(0.0 <= v <= 100.0 for v in result.scores.values())
        metrics = aggregate(task, [result, result])  # type: ignore[arg-type]
        assert all(v is None or 0.0 <= v <= 100.0 for v in metrics.values())  # None: n/a


# --- LangSmith evaluators ---------------------------------------------------------------------

def test_langsmith_row_and_summary_evaluators() -> None:
    row, summary = create_awareness_evaluator(task="tool_usage_awareness")
    inputs: dict[str, Any] = {"input": []}
    reference = {"reference": AWARE_GOLD}
    feedback = row(inputs, {"output": labels("0", "1", "1")}, reference)
    by_key = {f["key"]: f for f in feedback}
    assert by_key["tool_usage_awareness_local"]["score"] == pytest.approx(200 / 3)
    assert "1.3" in by_key["tool_usage_awareness_local"]["comment"]
    totals = summary([inputs, inputs], [{"output": labels("0", "1", "0")}, {"output": ""}],
                     [reference, reference])
    assert {t["key"]: t["score"] for t in totals} == pytest.approx(
        {"tool_usage_awareness_global": 50.0, "tool_usage_awareness_local": 50.0,
         "json_format_rate": 50.0})
    row, _ = create_kv_evaluator(task="tool_usage")
    assert row.__name__ == "tool_usage_row"


# --- corpus scoring and prediction files ------------------------------------------------------

def test_score_task_counts_failures_without_shrinking_denominators() -> None:
    records = [{"input": [], "reference": AWARE_GOLD}] * 3
    outputs = [labels("0", "1", "0"), "no list here", None]
    report = score_task("tool_usage_awareness", records, outputs)
    assert report.counts.samples == 3 and report.counts.steps == 9
    assert report.counts.parse_failures == 2 and report.counts.missing_outputs == 1
    assert report.counts.parse_failure_kinds == {"no_list_found": 1, "empty_output": 1}
    assert report.metrics["tool_usage_awareness_global"] == pytest.approx(100 / 3)
    assert report.metrics["json_format_rate"] == pytest.approx(100 / 3)
    with pytest.raises(ValueError, match="aligned"):
        score_task("tool_usage_awareness", records, outputs[:2])


def test_overall_is_the_mean_of_the_nine_table2_columns() -> None:
    # Paper Table 2, GPT-4: the Overall column is 76.04 (Chinese) and 74.58 (English).
    zh = [76.39, 58.80, 76.65, 65.55, 60.70, 89.76, 80.70, 89.22, 86.62]
    en = [74.07, 56.10, 75.18, 61.17, 62.50, 90.85, 79.30, 88.69, 83.32]
    assert round(overall(dict(zip(TABLE2_COLUMNS, zh, strict=True))) or 0, 2) == 76.04
    assert round(overall(dict(zip(TABLE2_COLUMNS, en, strict=True))) or 0, 2) == 74.58
    assert overall(dict(zip(TABLE2_COLUMNS[:-1], en, strict=False))) is None


RECORDS = [{"input": [], "reference": AWARE_GOLD[:1]}, {"input": [], "reference": AWARE_GOLD}]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pred.json"
    path.write_text(text, encoding="utf-8")
    return path


def test_load_predictions_formats(tmp_path: Path) -> None:
    published = "".join(json.dumps({"data": r, "init output": f"out{i}"}) + "\n"
                        for i, r in enumerate(RECORDS))
    assert load_predictions(write(tmp_path, published), RECORDS) == ["out0", "out1"]
    ours = '{"index": 1, "output": "b"}\n\n{"index": 0, "output": null}\n'
    assert load_predictions(write(tmp_path, ours), RECORDS) == [None, "b"]
    assert load_predictions(write(tmp_path, '{"index": 1, "output": "b"}\n'),
                            RECORDS) == [None, "b"]  # absent = missing, never dropped
    assert load_predictions(write(tmp_path, '["a", null]'), RECORDS) == ["a", None]


@pytest.mark.parametrize(("text", "message", "line"), [
    ('{"index": 0, "output": "a"}\n{"index": 1, "output": "b"\n', "invalid JSON", 2),
    ('{"index": 0, "output": "a"}\n{"index": 0, "output": "b"}\n', "appears twice", 2),
    ('{"index": 0, "output": "a"}\n{"index": 7, "output": "b"}\n', "index must be", 2),
    ('{"index": 0, "output": 3}\n', "as a string", 1),
    ('{"index": 0, "output": "a"}\n{"data": {}, "init output": "b"}\n', "mixes", 2),
    ('{"foo": 1}\n', "expected", 1),
])
def test_load_predictions_errors_name_the_line(tmp_path: Path, text: str, message: str,
                                               line: int) -> None:
    with pytest.raises(DataFormatError, match=message) as info:
        load_predictions(write(tmp_path, text), RECORDS)
    assert info.value.line == line


def test_load_predictions_detects_a_misaligned_published_file(tmp_path: Path) -> None:
    swapped = "".join(json.dumps({"data": r, "init output": "x"}) + "\n"
                      for r in reversed(RECORDS))
    with pytest.raises(DataFormatError, match="differs from test record 0") as info:
        load_predictions(write(tmp_path, swapped), RECORDS)
    assert info.value.line == 1
    with pytest.raises(DataFormatError, match="1 predictions for 2"):
        load_predictions(write(tmp_path, json.dumps({"data": RECORDS[0],
                                                     "init output": "x"})), RECORDS)
    with pytest.raises(DataFormatError, match="3 predictions for 2"):
        load_predictions(write(tmp_path, '["a", "b", "c"]'), RECORDS)
