"""The AppBench workflows (graphs/appbench/planning.py): hierarchical, flat, few_shot,
execute_repair.

The ``reference`` model answers each prompt with the gold answer of the example it recognises,
so every strategy must reproduce every gold plan exactly: strict metrics 100 and executed
success 100. Three SS samples (#21, #159, #173) share one instruction (a leaked generation
prompt) with different gold plans: no model can tell them apart, the reference model refuses
them (checked), and the full-data run checks the other 798 samples.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel

from tooleval_agents.appbench.catalog import load_catalog
from tooleval_agents.appbench.names import APP_APIS, CATEGORIES
from tooleval_agents.appbench.records import AppBenchSample
from tooleval_agents.appbench.stubs import AppExecutor
from tooleval_agents.contracts import ExampleFields, Split, StrategyContext
from tooleval_agents.evaluators.appbench.execution import (
    aggregate_appbench_execution,
    score_appbench_execution,
)
from tooleval_agents.evaluators.appbench.parse import gold_answer, parse_answer
from tooleval_agents.evaluators.appbench.scoring import score_appbench
from tooleval_agents.graphs.appbench.planning import (
    CatalogText,
    app_multiset,
    choose_demos,
    parse_app_list,
    plan_prompt,
    read_plan,
    select_prompt,
)
from tooleval_agents.graphs.appbench.prompts import PLAN_MARKER, REPAIR_MARKER, SELECT_MARKER, TODAY
from tooleval_agents.models.chat_models import ScriptedChatModel
from tooleval_agents.models.reference import (
    AnswerKey,
    NoisyReferenceChatModel,
    ReferenceChatModel,
    input_digest,
    last_input_block,
)
from tooleval_agents.registry import get_benchmark, get_strategy
from tooleval_agents.run.runner import as_target

STRATEGIES = ("hierarchical", "flat", "few_shot", "execute_repair")
_EXAMPLE_BLOCK = re.compile(r"<example>\n(.*?)\n</example>", re.S)


@functools.cache
def _split(data_dir: Path, category: str) -> tuple[Split, tuple[AppBenchSample, ...],
                                                   tuple[ExampleFields, ...]]:
    bench = get_benchmark("appbench")
    split = bench.split("plan", category)
    loaded = tuple(bench.load(split, data_dir))
    records = tuple(r for r in loaded if isinstance(r, AppBenchSample))
    assert len(records) == len(loaded)
    return split, records, tuple(bench.to_example(split, r) for r in records)


def _unique(records: Sequence[AppBenchSample]) -> list[int]:
    """Indices of the samples whose instruction no other sample shares."""
    texts = Counter(r.input.strip() for r in records)
    return [i for i, r in enumerate(records) if texts[r.input.strip()] == 1]


def _key(strategy: str, split: Split, examples: Sequence[ExampleFields]) -> AnswerKey:
    st = get_strategy("appbench", strategy)
    return AnswerKey.build((st.input_key(split, e.inputs),
                            st.gold_answers(split, e.inputs, e.outputs)) for e in examples)


def _graph(strategy: str, model: BaseChatModel, split: Split, data_dir: Path,
           **options: Any) -> Any:
    return get_strategy("appbench", strategy).build(
        StrategyContext(model=model, split=split, data_dir=data_dir, options=options))


async def _run(graph: Any, examples: Sequence[ExampleFields],
               concurrency: int = 16) -> list[dict[str, Any]]:
    semaphore = asyncio.Semaphore(concurrency)

    async def one(example: ExampleFields) -> dict[str, Any]:
        async with semaphore:
            return dict(await graph.ainvoke({"inputs": example.inputs}))

    return list(await asyncio.gather(*(one(e) for e in examples)))


def _check_reference_run(data_dir: Path, category: str) -> dict[str, float]:
    """Run every strategy with the reference model; assert exact gold calls and perfect scores.

    With the reference model every strategy's final answer is the same gold text (asserted),
    so the corpus is scored once per category."""
    split, records, examples = _split(data_dir, category)
    keep = _unique(records)
    samples = [records[i] for i in keep]
    shown = [examples[i] for i in keep]

    async def run_all() -> list[list[dict[str, Any]]]:
        graphs = [_graph(s, ReferenceChatModel(answer_key=_key(s, split, shown)), split,
                         data_dir) for s in STRATEGIES]
        return list(await asyncio.gather(*(_run(g, shown) for g in graphs)))

    per_strategy = asyncio.run(run_all())
    for strategy, states in zip(STRATEGIES, per_strategy, strict=True):
        for sample, state in zip(samples, states, strict=True):
            got = [(c["app"], c["api"], c["returns"], c["literal_args"], c["dependent_args"])
                   for c in state["scratch"]["calls"]]
            want = [(c.app, c.api, c.returns, c.literal_args, c.dependent_args)
                    for c in sample.calls]
            assert got == want, (strategy, sample.meta)
            assert state["parse_error"] is None
    outputs = [s["prediction"] for s in per_strategy[0]]
    for states in per_strategy[1:]:
        assert [s["prediction"] for s in states] == outputs
    metrics = score_appbench(samples, outputs, scoring="strict").metrics
    catalog = load_catalog()
    executed = aggregate_appbench_execution(
        [score_appbench_execution(s, parse_answer(o).calls, catalog)
         for s, o in zip(samples, outputs, strict=True)])
    figures = {k: metrics[k] for k in ("app_f1", "api_f1", "success", "app_em", "api_em")}
    figures["executed_success"] = executed["executed_success"]
    assert figures == dict.fromkeys(figures, 100.0), figures
    return figures


# ---------------------------------------------------------------------------- reference runs


def test_reference_model_on_bundled_samples(samples: Path) -> None:
    for category in CATEGORIES:
        _check_reference_run(samples, category)


@pytest.mark.parametrize("category", CATEGORIES)
def test_reference_model_on_real_data(shared_data: Path, category: str) -> None:
    split, records, examples = _split(shared_data, category)
    left_out = [i for i in range(len(records)) if i not in set(_unique(records))]
    # Only the leaked generation prompts (6 SS inputs are one) are ambiguous, and the
    # reference model refuses them rather than answer with another sample's gold.
    assert all(records[i].input.startswith("Generate a complex instruction") for i in left_out)
    key = _key("flat", split, examples)
    assert key.ambiguous == {input_digest(records[i].input) for i in left_out}
    if left_out:
        graph = _graph("flat", ReferenceChatModel(answer_key=key), split, shared_data)
        with pytest.raises(LookupError, match="several examples share the input"):
            graph.invoke({"inputs": examples[left_out[0]].inputs})
    _check_reference_run(shared_data, category)


def test_as_target_outputs(samples: Path) -> None:
    split, _, examples = _split(samples, "mm")
    graph = _graph("hierarchical", ReferenceChatModel(answer_key=_key(
        "hierarchical", split, examples)), split, samples)
    out = asyncio.run(as_target(graph)(examples[0].inputs))
    assert isinstance(out["prediction"], str)
    assert out["prediction"].splitlines()[0].startswith("Restaurants: [")
    assert out["usage"]["model_calls"] == 2
    assert len(out["raw_outputs"]) == 2


# ---------------------------------------------------------------------------- prompts


def _capture(answer: str = "Weather: [city = getweather(#city='Paris')]",
             apps: str = '["Weather"]') -> tuple[ScriptedChatModel, list[str]]:
    prompts: list[str] = []

    def remember(reply: str) -> Any:
        def answer_with(prompt: str) -> str:
            prompts.append(prompt)
            return reply
        return answer_with

    model = ScriptedChatModel(rules=[(re.escape(SELECT_MARKER), remember(apps)),
                                     (".", remember(answer))])
    return model, prompts


def test_flat_prompt_shows_all_apps_and_apis(samples: Path) -> None:
    split, _, examples = _split(samples, "ss")
    model, prompts = _capture()
    asyncio.run(_graph("flat", model, split, samples).ainvoke({"inputs": examples[0].inputs}))
    (prompt,) = prompts
    for app, apis in APP_APIS.items():
        assert f"App {app}: " in prompt
        assert all(f"API {api}: " in prompt for api in apis)
    assert PLAN_MARKER in prompt and SELECT_MARKER not in prompt and REPAIR_MARKER not in prompt
    assert last_input_block(prompt) == examples[0].inputs["input"].strip()
    # Types, formats, enumerations and today's date as in the official prompt.
    assert f'"{TODAY}"' in prompt or TODAY in prompt
    assert "check_in_date (date, yyyy-mm-dd)" in prompt
    assert "pickup_time (time, hh:mm, 24-hour)" in prompt
    assert "ride_type (str; one of: Pool, Regular, Luxury)" in prompt


def test_hierarchical_stage2_shows_only_selected_apps(samples: Path) -> None:
    split, _, examples = _split(samples, "mm")
    model, prompts = _capture(apps='I would use ["Restaurants", "rent"]')
    state = asyncio.run(_graph("hierarchical", model, split, samples).ainvoke(
        {"inputs": examples[0].inputs}))
    select, plan = prompts
    assert SELECT_MARKER in select and PLAN_MARKER not in select
    assert all(f"- {app}: " in select for app in APP_APIS)
    assert state["scratch"]["selected_apps"] == ["Restaurants", "Rents"]
    shown = {"Restaurants", "Rents"}
    for app, apis in APP_APIS.items():
        assert (f"App {app}: " in plan) == (app in shown)
        for api in apis:
            owners = {a for a, names in APP_APIS.items() if api in names}
            assert (f"API {api}: " in plan) == bool(owners & shown), api


def test_app_selection_is_read_tolerantly_with_a_fallback(samples: Path) -> None:
    catalog = load_catalog()
    assert parse_app_list("Hotels\nweather\n", catalog) == (["Hotels", "Weather"], [])
    assert parse_app_list("[Restaurants, Trains]", catalog) == (["Restaurants", "Trains"], [])
    assert parse_app_list('["Movie", "Cinema"]', catalog) == (["Movies"], ["Cinema"])
    split, _, examples = _split(samples, "ss")
    model, prompts = _capture(apps="I cannot tell.")
    state = asyncio.run(_graph("hierarchical", model, split, samples).ainvoke(
        {"inputs": examples[0].inputs}))
    assert state["scratch"]["app_selection_fallback"] is True
    assert all(f"App {app}: " in prompts[1] for app in APP_APIS)


def test_markers_are_distinct_per_prompt() -> None:
    text = CatalogText(load_catalog())
    select, plan = select_prompt(text, "q"), plan_prompt(text, "q")
    assert SELECT_MARKER in select and PLAN_MARKER not in select
    assert PLAN_MARKER in plan and SELECT_MARKER not in plan and REPAIR_MARKER not in plan
    with pytest.raises(ValueError, match="<input>"):
        plan_prompt(text, "q", demos=["a demo with <input> inside"])


def test_read_plan_keeps_unparsed_pieces_and_flags_empty_answers() -> None:
    text = ("Here you go:\n```\nWeather: [city = getweather(#city='Paris')]\n"
            "Hotels: [book it please]\n```")
    out = read_plan(text)
    assert out["prediction"] == ("Weather: [city = getweather(#city='Paris')]\n"
                                 "Hotels: [book it please]")
    assert out["parse_error"] is None and len(out["calls"]) == 1
    assert out["unparsed"] == ["Hotels: [book it please]"]
    empty = read_plan("I am not sure.")
    assert empty["prediction"] == "" and empty["parse_error"]


# ---------------------------------------------------------------------------- few-shot


@pytest.mark.parametrize("category", CATEGORIES)
def test_few_shot_demos_never_include_the_sample(shared_data: Path, category: str) -> None:
    _, records, _ = _split(shared_data, category)
    for i, record in enumerate(records):
        chosen, _ = choose_demos(records, record.input, 3)
        assert len(chosen) == 3 and i not in chosen
        assert all(records[j].input.strip() != record.input.strip() for j in chosen)
        # Same app multiset first (earliest in file order), then the most shared apps.
        target = Counter(app_multiset(record))
        same = [j for j, r in enumerate(records)
                if Counter(app_multiset(r)) == target and r.input.strip() != record.input.strip()]
        assert chosen[:len(same)] == same[:3]
        if len(same) < 3:
            def overlap(j: int, target: Counter[str] = target) -> int:
                return sum((Counter(app_multiset(records[j])) & target).values())
            rest = [j for j in range(len(records)) if j not in chosen and j not in same
                    and records[j].input.strip() != record.input.strip()]
            assert min(overlap(j) for j in chosen) >= max(overlap(j) for j in rest)


def test_few_shot_prompt_uses_example_blocks_only(shared_data: Path) -> None:
    split, records, examples = _split(shared_data, "ss")
    model, prompts = _capture()
    graph = _graph("few_shot", model, split, shared_data, k=4)
    picks = (0, 21, 159)  # 21 and 159 share their instruction
    states = [graph.invoke({"inputs": examples[i].inputs}) for i in picks]
    for i, prompt, state in zip(picks, prompts, states, strict=True):
        blocks = _EXAMPLE_BLOCK.findall(prompt)
        assert len(blocks) == 4 and state["scratch"]["demo_source"] == "same_apps"
        assert prompt.count("<input>") == 1
        assert last_input_block(prompt) == records[i].input.strip()
        assert all(records[i].input.strip() not in b for b in blocks)
        for j, block in zip(state["scratch"]["demos"], blocks, strict=True):
            assert gold_answer(records[j]) in block


def test_few_shot_rejects_bad_k(samples: Path) -> None:
    split, _, _ = _split(samples, "ss")
    with pytest.raises(ValueError, match="'k'"):
        _graph("few_shot", _capture()[0], split, samples, k=-1)


# ---------------------------------------------------------------------------- execute_repair


def _clean_sample(samples: Path) -> tuple[Split, AppBenchSample, ExampleFields, str, str]:
    """A bundled sample whose gold plan runs cleanly on the stubs without gold, and one
    required literal argument of it."""
    catalog = load_catalog()
    for category in CATEGORIES:
        split, records, examples = _split(samples, category)
        for record, example in zip(records, examples, strict=True):
            if not AppExecutor(catalog).execute(record.calls).ok:
                continue
            for call in record.calls:
                spec = catalog.api(call.app or "", call.api)
                required = [k for k in call.literal_args if spec and k in spec.required]
                if required:
                    return split, record, example, call.raw, required[0]
    raise AssertionError("no bundled sample runs cleanly")


def _without(line: str, arg: str) -> str:
    """A gold line with one literal argument removed."""
    return re.sub(rf"#{arg}='[^']*'(, )?", "", line).replace(", )", ")")


def test_execute_repair_fixes_a_missing_argument_in_round_two(samples: Path) -> None:
    split, record, example, line, arg = _clean_sample(samples)
    gold = gold_answer(record)
    broken = gold.replace(line, _without(line, arg))
    assert f"#{arg}=" in line and f"#{arg}=" not in _without(line, arg)
    apps = str(sorted({c.app or "" for c in record.calls})).replace("'", '"')
    model = ScriptedChatModel(rules=[
        (re.escape(SELECT_MARKER), apps),
        (rf"missing_required: .*requires '{arg}'.*{re.escape(REPAIR_MARKER)}", gold),
        (re.escape(PLAN_MARKER), broken),
    ])
    state = asyncio.run(_graph("execute_repair", model, split, samples).ainvoke(
        {"inputs": example.inputs}))
    rounds = state["scratch"]["rounds"]
    assert [r["round"] for r in rounds] == [1, 2]
    assert rounds[0]["errors"] >= 1 and rounds[1]["errors"] == 0
    assert any(f"requires '{arg}'" in p for p in rounds[0]["problems"])
    assert state["prediction"] == gold and state["raw_outputs"] == [apps, broken, gold]
    # Per-round token cost: round 1 = selection + plan, round 2 = the repair call.
    assert [r["usage"]["model_calls"] for r in rounds] == [2, 1]
    assert all(r["usage"]["input_tokens"] > 0 for r in rounds)
    for field in ("input_tokens", "output_tokens", "model_calls"):
        assert sum(r["usage"][field] for r in rounds) == state["usage"][field]
    # The trace holds every executed call of both rounds, errors on the broken one.
    by_round = Counter(t["round"] for t in state["trace"])
    assert by_round == {1: len(record.calls), 2: len(record.calls)}
    kinds = [e["kind"] for t in state["trace"] if t["round"] == 1 for e in t["errors"]]
    assert "missing_required" in kinds


def test_execute_repair_stops_at_max_rounds_and_can_plan_flat(samples: Path) -> None:
    split, record, example, line, arg = _clean_sample(samples)
    never_fixed = gold_answer(record).replace(line, _without(line, arg))
    model = ScriptedChatModel(rules=[(".", never_fixed)])
    state = asyncio.run(_graph("execute_repair", model, split, samples, max_rounds=2,
                               base="flat").ainvoke({"inputs": example.inputs}))
    assert len(state["scratch"]["rounds"]) == 2 and state["usage"]["model_calls"] == 2
    assert "selected_apps" not in state["scratch"]
    with pytest.raises(ValueError, match="max_rounds"):
        _graph("execute_repair", model, split, samples, max_rounds=0)
    with pytest.raises(ValueError, match="base"):
        _graph("execute_repair", model, split, samples, base="tree")


def test_execute_repair_does_not_see_the_gold(samples: Path) -> None:
    # An unparsable answer is an error to repair too; the stubs run without the gold (no call
    # can reach a gold call).
    split, _, examples = _split(samples, "ms")
    model = ScriptedChatModel(rules=[(re.escape(SELECT_MARKER), '["Weather"]'),
                                     (".", "I would call the weather app.")])
    state = asyncio.run(_graph("execute_repair", model, split, samples).ainvoke(
        {"inputs": examples[0].inputs}))
    assert len(state["scratch"]["rounds"]) == 3 and state["parse_error"]
    assert all("no call line" in r["problems"][0] for r in state["scratch"]["rounds"])
    key = _key("execute_repair", split, examples)
    ref = asyncio.run(_graph("execute_repair", ReferenceChatModel(answer_key=key), split,
                             samples).ainvoke({"inputs": examples[0].inputs}))
    assert ref["trace"] and all(t["gold_index"] is None for t in ref["trace"])


# ---------------------------------------------------------------------------- determinism


def test_runs_are_deterministic_across_concurrency(samples: Path, shared_data: Path) -> None:
    runs: list[list[tuple[Any, ...]]] = []
    for concurrency in (1, 16, 16):
        out: list[tuple[Any, ...]] = []
        for data_dir, category, limit in ((samples, "mm", None), (shared_data, "mm", 24)):
            split, _, examples = _split(data_dir, category)
            shown = list(examples[:limit])
            for strategy in STRATEGIES:
                model = NoisyReferenceChatModel(answer_key=_key(strategy, split, shown),
                                                rate=0.6, seed=7)
                states = asyncio.run(_run(_graph(strategy, model, split, data_dir), shown,
                                          concurrency))
                out += [(strategy, s["raw_outputs"], s["prediction"], s["trace"], s["usage"],
                         s["scratch"]) for s in states]
        runs.append(out)
    assert runs[0] == runs[1] == runs[2]
    # The noise really reached the plans and triggered repairs.
    repaired = [o for o in runs[0] if o[0] == "execute_repair" and len(o[5]["rounds"]) > 1]
    assert repaired
