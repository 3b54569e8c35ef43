"""The UltraTool one-shot workflows (graphs/ultratool/protocol.py).

The ``reference`` model answers each prompt with the gold answer of the example it recognises,
so a correct workflow must reproduce every reference exactly and score 100 strictly. The full
real data run is limited to the first 200 examples per split (all 1000 took ~100 s here); set
``TOOLEVAL_FULL_REFERENCE=1`` to run all of them.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel

from tooleval_agents.contracts import ExampleFields, Split, StrategyContext
from tooleval_agents.data.jsonio import LazySequence
from tooleval_agents.evaluators.ultratool.scoring import score_task
from tooleval_agents.graphs.ultratool.prompts import INSTRUCTIONS, MARKERS, PromptLang
from tooleval_agents.graphs.ultratool.protocol import UltraToolOneShot, render_input
from tooleval_agents.models.chat_models import ScriptedChatModel
from tooleval_agents.models.reference import AnswerKey, ReferenceChatModel, last_input_block
from tooleval_agents.registry import get_benchmark, get_strategy
from tooleval_agents.run.runner import as_target
from tooleval_agents.ultratool.loaders import load_example
from tooleval_agents.ultratool.records import TASKS, UltraToolTask

LANGS: tuple[PromptLang, ...] = ("en", "zh")
FULL_LIMIT = None if os.environ.get("TOOLEVAL_FULL_REFERENCE") else 200
KV_TASKS = ("tool_creation_awareness", "tool_usage_awareness", "tool_selection", "tool_usage")


def _strategy() -> UltraToolOneShot:
    strategy = get_strategy("ultratool", "one_shot")
    assert isinstance(strategy, UltraToolOneShot)
    return strategy


@functools.cache
def _all_examples(data_dir: Path, task: str, lang: str) -> tuple[Split, Sequence[ExampleFields]]:
    # Loaded once per session (rebuilding the two missing test sets takes seconds), each
    # example made when first read: most tests read the first few of 1,000.
    bench = get_benchmark("ultratool")
    split = bench.split(task, lang)
    records = bench.load(split, data_dir)
    return split, LazySequence(len(records), lambda i: bench.to_example(split, records[i]))


def _examples(data_dir: Path, task: str, lang: str,
              limit: int | None = None) -> tuple[Split, list[ExampleFields]]:
    split, examples = _all_examples(data_dir, task, lang)
    return split, list(examples[:limit])


def _reference_model(split: Split, examples: Sequence[ExampleFields]) -> ReferenceChatModel:
    strategy = _strategy()
    key = AnswerKey.build((strategy.input_key(split, e.inputs),
                           strategy.gold_answers(split, e.inputs, e.outputs)) for e in examples)
    return ReferenceChatModel(answer_key=key)


def _graph(model: BaseChatModel, split: Split, data_dir: Path) -> Any:
    return _strategy().build(StrategyContext(model=model, split=split, data_dir=data_dir))


async def _run_all(graph: Any, examples: Sequence[ExampleFields],
                   concurrency: int = 16) -> list[dict[str, Any]]:
    semaphore = asyncio.Semaphore(concurrency)

    async def one(example: ExampleFields) -> dict[str, Any]:
        async with semaphore:
            return dict(await graph.ainvoke({"inputs": example.inputs}))

    return list(await asyncio.gather(*(one(e) for e in examples)))


def _strict_scores(split: Split, examples: Sequence[ExampleFields],
                   states: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Corpus metrics of a key-value task by the project's scorer (0-100), from the raw
    answers; parse failures must be none."""
    task: Any = split.task
    lang: Any = split.subset
    records = [{**e.inputs, **e.outputs} for e in examples]
    report = score_task(task, records, [s["raw_outputs"][-1] for s in states], lang=lang)
    assert report.counts.parse_failures == 0 and report.counts.scoring_errors == 0
    return report.metrics


def _capture_prompt(task: str, lang: str, data_dir: Path,
                    inputs: dict[str, Any]) -> str:
    seen: list[str] = []

    def answer(prompt: str) -> str:
        seen.append(prompt)
        return "1. done" if task == "planning" else "[]"

    model = ScriptedChatModel(rules=[(r".", answer)])
    _graph(model, get_benchmark("ultratool").split(task, lang), data_dir).invoke(
        {"inputs": inputs})
    assert len(seen) == 1
    return seen[0]


# --------------------------------------------------------------------------------------------
# Reference model: every example reproduced exactly.

@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("task", TASKS)
def test_reference_model_reproduces_samples(samples: Path, task: str, lang: str) -> None:
    split, examples = _examples(samples, task, lang)
    assert examples
    graph = _graph(_reference_model(split, examples), split, samples)
    states = asyncio.run(_run_all(graph, examples))
    for example, state in zip(examples, states, strict=True):
        assert state["prediction"] == example.outputs["reference"]
        assert state["parse_error"] is None
        assert state["trace"] == []
        assert len(state["raw_outputs"]) == 1
        usage = state["usage"]
        assert usage["model_calls"] == 1
        assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    if task in KV_TASKS:
        metrics = _strict_scores(split, examples, states)
        assert metrics and all(v == 100.0 for v in metrics.values()), metrics


def test_reference_model_on_real_data(shared_data: Path) -> None:
    """All six tasks x two languages of the real data (first FULL_LIMIT examples per split)."""
    exact: dict[tuple[str, str], float] = {}

    async def run() -> None:
        for task in TASKS:
            for lang in LANGS:
                split, examples = _examples(shared_data, task, lang, FULL_LIMIT)
                graph = _graph(_reference_model(split, examples), split, shared_data)
                states = await _run_all(graph, examples)
                hits = sum(s["prediction"] == e.outputs["reference"] and s["parse_error"] is None
                           for s, e in zip(states, examples, strict=True))
                exact[(task, lang)] = hits / len(examples)
                assert all(s["usage"]["model_calls"] == 1 for s in states)
                if task in KV_TASKS:
                    metrics = _strict_scores(split, examples, states)
                    assert metrics and all(v == 100.0 for v in metrics.values()), metrics

    asyncio.run(run())
    assert exact == {(t, lang): 1.0 for t in TASKS for lang in LANGS}


# --------------------------------------------------------------------------------------------
# Prompts.

@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("task", TASKS)
def test_prompt_layout(shared_data: Path, task: UltraToolTask, lang: PromptLang) -> None:
    split, examples = _examples(shared_data, task, lang, 1)
    inputs = examples[0].inputs
    prompt = _capture_prompt(task, lang, shared_data, inputs)
    # The example's input is the only <input> block, last, and is the strategy's input key.
    assert prompt.count("<input>") == 1 and prompt.count("</input>") == 1
    assert last_input_block(prompt) == _strategy().input_key(split, inputs)
    assert prompt.index("</example>") < prompt.index("<input>")
    assert prompt.rstrip().endswith("Output:" if lang == "en" else "输出：")
    # Its own marker, no other task's, and the instruction text.
    for other in TASKS:
        assert (MARKERS[other][lang] in prompt) == (other == task), other
    assert INSTRUCTIONS[task][lang] in prompt
    gold = _strategy().gold_answers(split, inputs, examples[0].outputs)
    assert [g.marker for g in gold] == [MARKERS[task][lang]]
    assert [g.format for g in gold] == ["plan_text" if task == "planning" else "json_steps"]


@pytest.mark.parametrize("task", TASKS)
def test_zh_prompt_shows_the_zh_demonstration(shared_data: Path, task: UltraToolTask) -> None:
    _, examples = _examples(shared_data, task, "zh", 1)
    prompt = _capture_prompt(task, "zh", shared_data, examples[0].inputs)
    demo = _strategy()
    zh = load_example(shared_data, task, "zh").official()
    en = load_example(shared_data, task, "en").official()
    zh_shown = render_input(task, "zh", zh)
    assert zh_shown in prompt
    assert render_input(task, "en", en) not in prompt
    assert "Question:" not in prompt and "Plan:" not in prompt
    assert demo.input_key(Split("ultratool", task, "zh"), zh) == zh_shown


def test_input_rendering_is_json_with_unicode(shared_data: Path) -> None:
    _, examples = _examples(shared_data, "tool_usage", "zh", 1)
    text = render_input("tool_usage", "zh", examples[0].inputs)
    lines = text.split("\n")
    assert [line[:3] for line in lines] == ["问题：", "计划：", "工具集"]
    assert "\\u" not in text  # ensure_ascii=False
    assert json.loads(lines[1].removeprefix("计划：")) == examples[0].inputs["input"]
    assert json.loads(lines[2].removeprefix("工具集：")) == examples[0].inputs["toolset"]


def test_missing_input_field_is_a_clear_error(samples: Path) -> None:
    split = get_benchmark("ultratool").split("tool_usage", "en")
    with pytest.raises(ValueError, match="lack 'toolset'"):
        _strategy().input_key(split, {"question": "q", "input": []})


# --------------------------------------------------------------------------------------------
# Parsing failures, errors, determinism, registry.

@pytest.mark.parametrize(("answer", "kind"), [
    ("I am sorry, I cannot help with that.", "no_list_found"),
    ("[{step: 1.1 Query, tool: }]]]", "invalid_json"),
    ("", "empty_output"),
])
def test_malformed_answer_sets_parse_error(samples: Path, answer: str, kind: str) -> None:
    split, examples = _examples(samples, "tool_selection", "en", 1)
    graph = _graph(ScriptedChatModel(rules=[], default=answer), split, samples)
    state = graph.invoke({"inputs": examples[0].inputs})
    assert state["prediction"] == []
    assert state["parse_error"] is not None and state["parse_error"].startswith(kind)
    assert state["raw_outputs"] == [answer]
    assert state["usage"]["model_calls"] == 1


def test_repairable_answer_is_parsed(samples: Path) -> None:
    split, examples = _examples(samples, "tool_usage_awareness", "en", 1)
    reply = "```json\n[{'step': '1.1 Find it', 'tool': '1'},]\n```"
    graph = _graph(ScriptedChatModel(rules=[], default=reply), split, samples)
    state = graph.invoke({"inputs": examples[0].inputs})
    assert state["prediction"] == [{"step": "1.1 Find it", "tool": "1"}]
    assert state["parse_error"] is None


def test_planning_answer_is_cut_at_the_first_step(samples: Path) -> None:
    split, examples = _examples(samples, "planning", "en", 1)
    reply = "Sure, here is the plan:\n1. Book\n1.1 Find a hotel"
    graph = _graph(ScriptedChatModel(rules=[], default=reply), split, samples)
    state = graph.invoke({"inputs": examples[0].inputs})
    assert state["prediction"] == "1. Book\n1.1 Find a hotel"
    assert state["parse_error"] is None
    bad = _graph(ScriptedChatModel(rules=[], default="No idea."), split, samples)
    state = bad.invoke({"inputs": examples[0].inputs})
    assert state["parse_error"] is not None and state["parse_error"].startswith("no_list_found")


def test_provider_errors_propagate(samples: Path) -> None:
    split, examples = _examples(samples, "tool_usage", "en", 1)
    graph = _graph(ScriptedChatModel(rules=[]), split, samples)  # no reply: LookupError
    with pytest.raises(LookupError):
        graph.invoke({"inputs": examples[0].inputs})


def test_two_runs_are_equal(samples: Path) -> None:
    split, examples = _examples(samples, "tool_creation", "zh")

    def run() -> list[dict[str, Any]]:
        graph = _graph(_reference_model(split, examples), split, samples)
        return asyncio.run(_run_all(graph, examples))

    assert run() == run()


def test_as_langsmith_target(samples: Path) -> None:
    split, examples = _examples(samples, "tool_usage", "zh", 2)
    graph = _graph(_reference_model(split, examples), split, samples)
    out = asyncio.run(as_target(graph)(examples[1].inputs))
    assert set(out) == {"raw_outputs", "prediction", "parse_error", "trace", "usage"}
    assert out["prediction"] == examples[1].outputs["reference"]


def test_registered_for_all_tasks(samples: Path) -> None:
    strategy = _strategy()
    assert (strategy.benchmark, strategy.name) == ("ultratool", "one_shot")
    assert strategy.tasks == TASKS
    with pytest.raises(ValueError, match="no prompt"):
        _graph(ScriptedChatModel(rules=[]), Split("ultratool", "raw", "en"), samples)
    with pytest.raises(ValueError, match="no prompt"):
        _graph(ScriptedChatModel(rules=[]), Split("appbench", "plan", "ss"), samples)
