"""The UltraTool ``plan_create_use`` workflow (graphs/ultratool/plan_create_use.py) and its scorer
(evaluators/ultratool/plan_create_use.py).

With the ``reference`` model every stage answers the gold, so the workflow must rebuild and
execute every gold plan: all calls valid, all references resolved, plan metrics and tool-set F1
100. The real-data run covers the first 300 samples per language (all 2 x 1000 took ~110 s
here); set ``TOOLEVAL_FULL_REFERENCE=1`` to run all of them.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel

from tooleval_agents.contracts import ExampleFields, ExampleScore, Split, StrategyContext
from tooleval_agents.data.jsonio import LazySequence
from tooleval_agents.errors import DataFormatError
from tooleval_agents.evaluators.ultratool.execution import gold_tools
from tooleval_agents.evaluators.ultratool.plan_create_use import (
    aggregate_plan_create_use,
    gold_tool_names,
    score_plan_create_use,
)
from tooleval_agents.graphs.ultratool.plan_create_use import STAGE_TASKS, PlanCreateUse, to_call
from tooleval_agents.graphs.ultratool.prompts import MARKERS, PromptLang
from tooleval_agents.graphs.ultratool.toolsets import (
    GUARD_SIMILARITY,
    agent_toolsets,
    example_toolset,
)
from tooleval_agents.models.chat_models import ScriptedChatModel
from tooleval_agents.models.reference import (
    AnswerKey,
    NoisyReferenceChatModel,
    ReferenceChatModel,
    last_input_block,
)
from tooleval_agents.registry import get_benchmark, get_strategy
from tooleval_agents.ultratool.loaders import load_raw, raw_path
from tooleval_agents.ultratool.rebuild import (
    TOOLSET_SIZE,
    removed_from_tool_creation,
    sibling_tool_creation,
    tool_similarity,
)
from tooleval_agents.ultratool.records import PlanStep, RawSample, ToolCall, UltraToolTask

LANGS: tuple[PromptLang, ...] = ("en", "zh")
FULL_LIMIT = None if os.environ.get("TOOLEVAL_FULL_REFERENCE") else 300
PERFECT = {"plan_numbering_valid": 100.0, "plan_step_count_ratio": 100.0,
           "plan_step_count_diff": 0.0, "plan_rouge_l": 100.0, "valid_calls": 100.0,
           "resolved_references": 100.0, "tool_set_f1": 100.0, "executable": 100.0}
"""Corpus figures of a perfect agent (the gold plans run clean on the stubs)."""


@functools.cache
def _all_examples(data_dir: Path, lang: str) -> tuple[Split, Sequence[ExampleFields]]:
    # Each example made when first read: most tests read the first few.
    bench = get_benchmark("ultratool")
    split = bench.split("raw", lang)
    records = bench.load(split, data_dir)
    return split, LazySequence(len(records), lambda i: bench.to_example(split, records[i]))


def _examples(data_dir: Path, lang: str,
              limit: int | None = None) -> tuple[Split, list[ExampleFields]]:
    split, examples = _all_examples(data_dir, lang)
    return split, list(examples[:limit])


def _key(strategy: PlanCreateUse, split: Split, examples: Sequence[ExampleFields]) -> AnswerKey:
    return AnswerKey.build((strategy.input_key(split, e.inputs),
                            strategy.gold_answers(split, e.inputs, e.outputs)) for e in examples)


def _graph(model: BaseChatModel, split: Split, data_dir: Path) -> Any:
    return PlanCreateUse(data_dir=data_dir).build(
        StrategyContext(model=model, split=split, data_dir=data_dir))


async def _run_all(graph: Any, examples: Sequence[ExampleFields],
                   concurrency: int = 16) -> list[dict[str, Any]]:
    semaphore = asyncio.Semaphore(concurrency)

    async def one(example: ExampleFields) -> dict[str, Any]:
        async with semaphore:
            return dict(await graph.ainvoke({"inputs": example.inputs}))

    return list(await asyncio.gather(*(one(e) for e in examples)))


def _score(examples: Sequence[ExampleFields],
           states: Sequence[dict[str, Any]]) -> list[ExampleScore]:
    return [score_plan_create_use(e.inputs, s, e.outputs) for e, s in zip(examples, states,
                                                                          strict=True)]


def _gold(example: ExampleFields) -> RawSample:
    return RawSample.model_validate({**example.inputs, **example.outputs})


def _gold_calls(example: ExampleFields) -> list[dict[str, Any]]:
    return [{"step": s.step, "tool": s.call.name, "param": s.call.args}
            for s in _gold(example).plan if s.call is not None]


def _check_perfect(data_dir: Path, lang: str, limit: int | None) -> list[dict[str, Any]]:
    split, examples = _examples(data_dir, lang, limit)
    assert examples
    strategy = PlanCreateUse(data_dir=data_dir)
    graph = _graph(ReferenceChatModel(answer_key=_key(strategy, split, examples)), split, data_dir)
    states = asyncio.run(_run_all(graph, examples))
    for example, state in zip(examples, states, strict=True):
        assert state["parse_error"] is None
        prediction = state["prediction"]
        assert prediction["plan"] == "\n".join(s["step"] for s in example.outputs["plan"])
        assert prediction["calls"] == _gold_calls(example)
        removed = strategy.toolset(split, example.inputs).removed
        assert [t["name"] for t in prediction["created_tools"]] == list(removed)
        # One model call per stage; creation is skipped only when nothing is missing.
        assert state["usage"]["model_calls"] == (6 if removed else 5)
    aggregate = aggregate_plan_create_use(_score(examples, states))
    assert {k: aggregate[k] for k in PERFECT} == PERFECT
    return states


# --------------------------------------------------------------------------------------------
# Reference model: every gold plan rebuilt stage by stage and executed.

@pytest.mark.parametrize("lang", LANGS)
def test_reference_model_executes_sample_plans(samples: Path, lang: str) -> None:
    _check_perfect(samples, lang, None)


@pytest.mark.parametrize("lang", LANGS)
def test_reference_model_executes_real_gold_plans(shared_data: Path, lang: str) -> None:
    states = _check_perfect(shared_data, lang, FULL_LIMIT)
    # Upstream removes at least one tool of every sample, so every sample creates one.
    assert all(s["prediction"]["created_tools"] for s in states)


def test_registered() -> None:
    strategy = get_strategy("ultratool", "plan_create_use")
    assert isinstance(strategy, PlanCreateUse)
    assert strategy.tasks == ("raw",)


# --------------------------------------------------------------------------------------------
# The agent's toolset.

@pytest.mark.parametrize("lang", LANGS)
def test_toolset_lacks_exactly_upstreams_removed_tools(shared_data: Path,
                                                       lang: PromptLang) -> None:
    _, examples = _examples(shared_data, lang)
    toolsets = agent_toolsets(shared_data, lang)
    # Upstream's tool_creation.json asks for the first step calling each removed tool.
    upstream = removed_from_tool_creation(sibling_tool_creation(raw_path(shared_data, lang)))
    assert len(examples) == len(upstream) == 1000
    for example, removed in zip(examples, upstream, strict=True):
        toolset = toolsets[example.inputs["question"].strip()]
        names = [t.name for t in toolset.tools]
        own = {t["name"] for t in example.outputs["tools"]}
        assert len(names) == len(set(names)) == TOOLSET_SIZE
        assert set(toolset.removed) == set(removed)
        assert own - set(names) == set(removed)
        gone = [t for t in example.outputs["tools"] if t["name"] in removed]
        for tool in toolset.tools:
            if tool.name not in own:
                assert all(tool_similarity(tool.official(), g) < GUARD_SIMILARITY for g in gone)


def test_explicit_toolset_wins_and_unknown_questions_fail(samples: Path) -> None:
    split, examples = _examples(samples, "en")
    strategy = PlanCreateUse(data_dir=samples)
    tools = [t for t in examples[0].outputs["tools"]]
    given = strategy.toolset(split, {**examples[0].inputs, "toolset": tools})
    assert given.names == {t["name"] for t in tools} and given.removed == ()
    # With every tool given, nothing is missing: the creation stages have nothing to do.
    gold = {a.marker: a.text for a in strategy.gold_answers(
        split, {**examples[0].inputs, "toolset": tools}, examples[0].outputs)}
    assert json.loads(gold[MARKERS["tool_creation"]["en"]]) == []
    with pytest.raises(LookupError, match="no toolset"):
        strategy.toolset(split, {"question": "not a question of the data", "domain": "x"})
    # The lookup itself: by question, its stray whitespace ignored; a toolset must be a list.
    found = example_toolset({"question": f" {examples[0].inputs['question']}\n"}, samples, "en")
    assert found == agent_toolsets(samples, "en")[examples[0].inputs["question"].strip()]
    with pytest.raises(ValueError, match="must be a list"):
        example_toolset({"question": "q", "toolset": "search"}, samples, "en")
    graph = _graph(ScriptedChatModel(rules=[], default="1. x"), split, samples)
    with pytest.raises(LookupError, match="not in"):
        graph.invoke({"inputs": {"question": "not a question of the data", "domain": "x"}})


def test_misaligned_sets_are_a_clear_error(samples: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(samples / "ultratool", data / "ultratool")
    selection = data / "ultratool/data/English-dataset/test_set/tool_selection.json"
    lines = selection.read_text(encoding="utf-8").splitlines(keepends=True)
    selection.write_text("".join([lines[1], lines[0], *lines[2:]]), encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"tool_selection.json:1: .*line-aligned"):
        agent_toolsets(data, "en")


# --------------------------------------------------------------------------------------------
# Prompts.

def _capture(data_dir: Path, lang: str, example: ExampleFields) -> list[str]:
    split, examples = _examples(data_dir, lang)
    key = _key(PlanCreateUse(data_dir=data_dir), split, examples)
    seen: list[str] = []

    def answer(prompt: str) -> str:
        seen.append(prompt)
        return key.lookup(prompt)[1].text

    _graph(ScriptedChatModel(rules=[(".", answer)]), split, data_dir).invoke(
        {"inputs": example.inputs})
    return seen


@pytest.mark.parametrize("lang", LANGS)
def test_each_stage_prompt_has_its_marker_and_the_question_block(samples: Path,
                                                                 lang: PromptLang) -> None:
    split, examples = _examples(samples, lang)
    prompts = _capture(samples, lang, examples[0])
    assert len(prompts) == len(STAGE_TASKS)
    expected = PlanCreateUse(data_dir=samples).input_key(split, examples[0].inputs)
    for prompt, task in zip(prompts, STAGE_TASKS.values(), strict=True):
        found = [t for t, markers in MARKERS.items() if markers[lang] in prompt]
        assert found == [task]
        assert last_input_block(prompt) == expected
        assert prompt.count("<input>") == 1
    # Stage context (plan, toolset) comes after the question block.
    assert "Toolset" in prompts[-1].split("</input>")[1] or "工具集" in prompts[-1].split(
        "</input>")[1]


# --------------------------------------------------------------------------------------------
# Models that go wrong.

def _gold_but(data_dir: Path, lang: PromptLang, examples: Sequence[ExampleFields],
              overrides: dict[UltraToolTask, Callable[[str], str]]) -> BaseChatModel:
    """Gold answers, except for the stages (by task) given in ``overrides``."""
    split = get_benchmark("ultratool").split("raw", lang)
    key = _key(PlanCreateUse(data_dir=data_dir), split, examples)
    rules: list[tuple[str, Any]] = [(MARKERS[task][lang], fn) for task, fn in overrides.items()]
    rules.append((".", lambda prompt: key.lookup(prompt)[1].text))
    return ScriptedChatModel(rules=rules)


def _asked(prompt: str) -> list[str]:
    """The steps a stage prompt asks about (those with a ``tool`` field in the plan shown)."""
    line = prompt.split("</input>")[1].split("\n")[1]
    return [s["step"] for s in json.loads(line[line.index("["):]) if "tool" in s]


def _all_zero(prompt: str) -> str:
    # "Every tool is already there".
    return json.dumps([{"step": s, "tool": "0"} for s in _asked(prompt)])


def _broken_tool(prompt: str) -> str:
    return json.dumps([{"step": s, "tool": {"name": "bad name"}} for s in _asked(prompt)])


@pytest.mark.parametrize("forgets", ["tool_creation_awareness", "tool_creation"])
@pytest.mark.parametrize("lang", LANGS)
def test_forgotten_tool_creation_makes_its_calls_invalid(shared_data: Path, lang: PromptLang,
                                                         forgets: UltraToolTask) -> None:
    split, examples = _examples(shared_data, lang, 40)
    answer = _all_zero if forgets == "tool_creation_awareness" else (lambda prompt: "[]")
    model = _gold_but(shared_data, lang, examples, {forgets: answer})
    states = asyncio.run(_run_all(_graph(model, split, shared_data), examples))
    strategy = PlanCreateUse(data_dir=shared_data)
    calls = invalid = 0
    for example, state in zip(examples, states, strict=True):
        removed = set(strategy.toolset(split, example.inputs).removed)
        assert state["prediction"]["created_tools"] == []
        assert state["prediction"]["calls"] == _gold_calls(example)
        for call in state["trace"]:
            calls += 1
            if call["tool"] in removed:
                invalid += 1
                assert call["error"].startswith(f"unknown tool {call['tool']!r}")
            else:
                assert call["error"] is None
    assert invalid > 0
    aggregate = aggregate_plan_create_use(_score(examples, states))
    assert aggregate["valid_calls"] == pytest.approx(100.0 * (calls - invalid) / calls)
    assert aggregate["valid_calls"] < 100.0
    assert aggregate["executable"] < 100.0


def test_unreadable_plan_stops_early_and_scores_zero(samples: Path) -> None:
    split, examples = _examples(samples, "en")
    model = ScriptedChatModel(rules=[], default="Sorry, I cannot plan this.")
    state = _graph(model, split, samples).invoke({"inputs": examples[0].inputs})
    assert state["usage"]["model_calls"] == 1
    assert state["parse_error"] is not None and state["parse_error"].startswith("plan:")
    assert state["prediction"]["calls"] == [] and state["trace"] == []
    score = score_plan_create_use(examples[0].inputs, state, examples[0].outputs)
    assert score.scores["executable"] == 0.0 and score.scores["tool_set_f1"] == 0.0
    assert score.scores["plan_rouge_l"] == 0.0


def test_invalid_created_skeleton_is_rejected(samples: Path) -> None:
    split, examples = _examples(samples, "en")
    model = _gold_but(samples, "en", examples, {"tool_creation": _broken_tool})
    state = _graph(model, split, samples).invoke({"inputs": examples[1].inputs})
    assert state["usage"]["model_calls"] == 6
    assert state["prediction"]["created_tools"] == []
    rejected = state["scratch"]["rejected_tools"]
    assert rejected and len(rejected) == len(state["scratch"]["missing_steps"])
    assert all(any("name must be an identifier" in p for p in r["problems"]) for r in rejected)


# --------------------------------------------------------------------------------------------
# Determinism.

def test_runs_are_deterministic_even_with_noisy_answers(samples: Path,
                                                        shared_data: Path) -> None:
    for data_dir, limit in ((samples, None), (shared_data, 60)):
        for lang in LANGS:
            split, examples = _examples(data_dir, lang, limit)
            key = _key(PlanCreateUse(data_dir=data_dir), split, examples)
            runs = []
            for _ in range(2):
                model = NoisyReferenceChatModel(answer_key=key, rate=0.6, seed=3)
                states = asyncio.run(_run_all(_graph(model, split, data_dir), examples))
                runs.append([{k: s.get(k) for k in ("raw_outputs", "prediction", "trace",
                                                     "parse_error", "scratch")}
                             for s in states])
            assert runs[0] == runs[1]
            scores = aggregate_plan_create_use(_score(examples, runs[0]))
            # None: a pooled metric with nothing to count in this sample (n/a)
            assert all(scores[k] is None or 0.0 <= scores[k] <= 100.0  # type: ignore[operator]
                       for k in PERFECT if k != "plan_step_count_diff")


# --------------------------------------------------------------------------------------------
# Pieces.

def test_to_call_reads_argument_objects_and_text() -> None:
    call = to_call("f", {"n": 5, "xs": ["a", "b"], "ref": "<earlier id>"})
    assert isinstance(call, ToolCall)
    assert call.args == {"n": "5", "xs": "['a', 'b']", "ref": "<earlier id>"}
    assert call.references == ["<earlier id>"]
    assert to_call("f", "") == ToolCall(name="f", args={}, raw="f()")
    text_call = to_call("f", "a='x', b=2")
    assert isinstance(text_call, ToolCall) and text_call.args == {"a": "x", "b": "2"}
    assert to_call("f", [1, 2]) == "f([1, 2])"


def test_scorer_never_shrinks_the_call_denominator() -> None:
    reference = {"plan": [{"step": "1. Do", "tool": "null"},
                          {"step": "1.1 Query", "tool": "rate(currency='GBP')"}], "tools": []}
    calls = [{"step": "1.1 Query", "tool": "rate", "param": {"currency": "GBP"}}]
    outputs = {"prediction": {"plan": "1. Do\n1.1 Query", "calls": calls, "created_tools": []}}
    score = score_plan_create_use({"question": "q"}, outputs, reference)
    assert score.error == "the outputs hold no execution trace"
    assert score.parts["valid_calls"].total == 1 and score.parts["valid_calls"].hits == 0
    assert score.scores["executable"] == 0.0
    assert score.scores["plan_rouge_l"] == 100.0
    empty = score_plan_create_use({"question": "q"}, {"prediction": None, "trace": []},
                                  reference)
    assert empty.error is None and empty.scores["executable"] == 0.0
    assert empty.scores["tool_set_f1"] == 0.0


def test_a_step_id_written_twice_holds_one_call(samples: Path) -> None:
    split, _ = _examples(samples, "en")
    rate = {"name": "rate", "description": "Exchange rate.",
            "arguments": {"type": "object", "properties": {"currency": {"type": "string"}}},
            "results": {"type": "object", "properties": {"rate": {"type": "number"}}}}
    step = "1.1 Query the rate"
    answers = {
        "planning": f"1. Get the rate\n{step}\n{step}\n1.2 Report <rate>",
        "tool_usage_awareness": json.dumps([{"step": step, "tool": "1"}]),
        "tool_creation_awareness": json.dumps([{"step": step, "tool": "0"}]),
        "tool_selection": json.dumps([{"step": step, "tool": "rate"}]),
        "tool_usage": json.dumps([{"step": step, "tool": "rate",
                                   "param": {"currency": "GBP"}}]),
    }
    model = ScriptedChatModel(rules=[(MARKERS[t]["en"], a) for t, a in answers.items()])  # type: ignore[index]
    inputs = {"question": "What is the pound worth?", "domain": "Finance", "toolset": [rate]}
    state = _graph(model, split, samples).invoke({"inputs": inputs})
    assert state["usage"]["model_calls"] == 5
    assert len(state["prediction"]["calls"]) == len(state["trace"]) == 1
    reference = {"plan": [{"step": "1. Get the rate", "tool": "null"},
                          {"step": step, "tool": "rate(currency='GBP')"}], "tools": [rate]}
    score = score_plan_create_use(inputs, state, reference)
    assert score.error is None and score.scores["executable"] == 100.0


def test_gold_tool_names_are_execution_gold_tools(shared_data: Path) -> None:
    for lang in ("en", "zh"):
        for sample in load_raw(shared_data, lang):
            reference = {"plan": [s.official() for s in sample.plan]}
            assert gold_tool_names(reference) == gold_tools(sample)
    odd = [{"step": "1. a", "tool": "null"}, {"step": "1.1 b", "tool": "convert(<rate"}]
    assert gold_tool_names({"plan": odd}) == gold_tools([PlanStep(**s) for s in odd]) == {
        "convert"}
