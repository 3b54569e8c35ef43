"""Requests a prefix cache can serve: the scheduler that sends the one sharing the longest prefix
with the last next (stage-major at concurrency 1, nothing a model sees changed), our AppBench
prompts with what examples share first, and the transcripts' send order the benchmark reads."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI
from reference_server import ReferenceResponder

from tooleval_agents.appbench.catalog import load_catalog
from tooleval_agents.graphs.appbench.planning import CatalogText, plan_prompt, repair_prompt
from tooleval_agents.graphs.appbench.prompts import PLAN_RULES
from tooleval_agents.models.scheduling import PrefixScheduler, common_prefix
from tooleval_agents.run.runner import run_experiment


def test_the_waiting_request_sharing_the_longest_prefix_goes_next() -> None:
    order: list[str] = []

    async def main() -> None:
        scheduler = PrefixScheduler(slots=1)

        async def call(key: str) -> None:
            async with scheduler.slot(key):
                order.append(key)
                await asyncio.sleep(0.01)

        first = asyncio.create_task(call("select: catalog ... example 1"))
        await asyncio.sleep(0)  # it holds the slot; the others queue in this order
        rest = [asyncio.create_task(call(k)) for k in (
            "plan: hotels ... example 1", "select: catalog ... example 2",
            "plan: trains ... example 2", "select: catalog ... example 3")]
        await asyncio.gather(first, *rest)
        assert scheduler.sent == 5

    asyncio.run(main())
    # the selections first (they share the catalog), then the plans, oldest first at a tie
    assert order == ["select: catalog ... example 1", "select: catalog ... example 2",
                     "select: catalog ... example 3", "plan: hotels ... example 1",
                     "plan: trains ... example 2"]


def test_a_cancelled_waiter_gives_its_turn_to_the_next() -> None:
    async def main() -> list[str]:
        scheduler = PrefixScheduler(slots=1)
        order: list[str] = []

        async def call(key: str) -> None:
            async with scheduler.slot(key):
                order.append(key)
                await asyncio.sleep(0.01)

        first = asyncio.create_task(call("a"))
        await asyncio.sleep(0)
        gone, kept = asyncio.create_task(call("ab")), asyncio.create_task(call("b"))
        await asyncio.sleep(0)
        gone.cancel()
        await asyncio.gather(first, kept, return_exceptions=True)
        await asyncio.wait_for(call("c"), 1)  # the slot was not lost
        return order

    assert asyncio.run(main()) == ["a", "b", "c"]


def test_common_prefix() -> None:
    assert common_prefix("abcdef", "abcxyz") == 3
    assert common_prefix("abc", "abc") == 3
    assert common_prefix("", "abc") == 0
    assert common_prefix("x" * 1000 + "a", "x" * 1000 + "b") == 1000


def test_hierarchical_at_concurrency_1_runs_stage_major_with_unchanged_results(
        samples: Path, tmp_path: Path) -> None:
    responder = ReferenceResponder("appbench", "ss", "hierarchical", data_dir=samples)
    with FakeOpenAI(responder) as server:
        summary = run_experiment(
            "appbench", subset="ss", strategy="hierarchical", model="openai:gold",
            model_kwargs={"base_url": server.base_url, "api_key": "sk-test"},
            data_dir=samples, out=tmp_path, max_concurrency=1, cache=False, progress=False)
    stages = ["select" if "Name the apps" in r.prompt else "plan" for r in server.log]
    assert stages == ["select"] * 6 + ["plan"] * 6
    assert summary.metrics["success"] == 100.0  # what the model saw is unchanged
    # Each call's send time is kept: the order above, read back from the run directory.
    calls = [(c["sent_at"], c["messages"]) for line in
             (Path(str(summary.run_dir)) / "examples.jsonl").read_text().splitlines()
             for c in json.loads(line)["model_calls"]]
    assert all(sent is not None for sent, _ in calls)
    assert len({tuple(m) for _, m in sorted(calls)[:6]}) == 6


@pytest.fixture(scope="module")
def text() -> CatalogText:
    return CatalogText(load_catalog())


def test_planning_prompts_of_different_apps_share_the_rules_first(text: CatalogText) -> None:
    hotels = plan_prompt(text, "Book a hotel in Paris.", ["Hotels"])
    trains = plan_prompt(text, "A train to Lyon.", ["Trains"])
    shared = common_prefix(hotels, trains)
    assert shared >= hotels.index(PLAN_RULES) + len(PLAN_RULES)  # every example's rules
    # The request is last: everything before it is the same for two requests on one app.
    other = plan_prompt(text, "Find a cheap hotel in Rome.", ["Hotels"])
    assert common_prefix(hotels, other) == hotels.index("<input>") + len("<input>\n")


def test_the_repair_prompt_starts_as_the_planning_prompt_did(text: CatalogText) -> None:
    plan = plan_prompt(text, "Book a hotel in Paris.", ["Hotels"])
    repair = repair_prompt(text, "Book a hotel in Paris.", ["Hotels"], "Hotels: [x = y()]",
                           ["call 1: unknown API"])
    assert common_prefix(plan, repair) >= plan.index("</input>") + len("</input>")
