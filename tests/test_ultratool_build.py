"""``tooleval build ultratool``: the construction pipeline with a scripted model
(:mod:`ultratool_build_script`), its failure paths, resuming, and the six test sets derived
from what it builds."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI
from typer.testing import CliRunner
from ultratool_build_script import reply, scripted_model

from tooleval_agents.cli import app
from tooleval_agents.graphs.ultratool.build_prompts import TITLES
from tooleval_agents.graphs.ultratool.build_run import build_ultratool
from tooleval_agents.models.chat_models import ScriptedChatModel
from tooleval_agents.ultratool.calls import parse_call
from tooleval_agents.ultratool.construction import (
    BuildSummary,
    Journal,
    SeedQuery,
    journal_path,
    read_queries,
    sample_problems,
)
from tooleval_agents.ultratool.loaders import load_raw_file, load_task_file
from tooleval_agents.ultratool.records import TASKS, Lang, ToolSkeleton
from tooleval_agents.ultratool.stubs import execute_plan, plan_items

QUERIES = Path(__file__).resolve().parents[1] / "datasets" / "ultratool" / "seed_queries"


def _build(seeds: list[SeedQuery], out: Path, lang: Lang = "en", model: Any = None,
           **options: Any) -> BuildSummary:
    return asyncio.run(build_ultratool(seeds, model or scripted_model(), lang, out, **options))


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_sample_queries_give_a_test_json_from_which_every_set_is_derived(
        lang: Lang, tmp_path: Path) -> None:
    seeds = read_queries(QUERIES / f"queries.{lang}.jsonl")
    out = tmp_path / "test.json"
    summary = _build(seeds, out, lang)
    # 5 seeds, each with 2 generalised and 2 complicated rewrites: 25 queries, all built.
    assert (summary.seeds, summary.queries, summary.built, summary.failed, summary.errors) == \
        (5, 25, 25, 0, 0)
    assert summary.merged_tools == 1  # send_confirmation + send_confirmations
    raw = load_raw_file(out, lang)
    assert len(raw) == 25 and {s.domain for s in raw} == {
        "Calendar", "Weather", "Finance", "Shopping", "Document"}
    nested = 0
    for sample in raw:
        trace = execute_plan(plan_items(sample.plan), sample.tools)
        assert trace.calls and trace.valid_calls == len(trace.calls)
        assert trace.resolved == trace.references
        nested += trace.references
        assert sample_problems(sample.official()) == []
    assert nested > 0  # some calls take an earlier call's result
    assert len({t.name for s in raw for t in s.tools}) == 4

    sets = tmp_path / "sets"
    result = CliRunner().invoke(app, ["data", "build", "ultratool", "--task", "all", "--lang",
                                      lang, "--raw", str(out), "--out", str(sets)])
    assert result.exit_code == 0, result.output
    records = {task: load_task_file(sets / f"{task}.json", task, lang) for task in TASKS}
    assert {task: len(r) for task, r in records.items()} == dict.fromkeys(TASKS, 25)
    for sample, planning in zip(raw, records["planning"], strict=True):
        assert planning.reference == "\n".join(s.step for s in sample.plan)  # type: ignore[attr-defined]
    calls = 0
    for usage in records["tool_usage"]:
        tools = [ToolSkeleton.model_validate(t.official()) for t in usage.toolset]  # type: ignore[attr-defined]
        items = [(r.step, parse_call(f"{r.tool}(" + ", ".join(
            f"{k}={v!r}" if not v.startswith("<") else f"{k}={v}"
            for k, v in r.param.items()) + ")")) for r in usage.reference]  # type: ignore[attr-defined]
        trace = execute_plan(items, tools)
        assert trace.valid_calls == len(items) and trace.resolved == trace.references
        calls += len(items)
    assert calls == 50  # two calls per sample
    for selection in records["tool_selection"]:
        names = {t.name for t in selection.toolset}  # type: ignore[attr-defined]
        assert all(r.tool in names for r in selection.reference)  # type: ignore[attr-defined]
    assert sum(len(r.reference) for r in records["tool_creation"]) > 0  # type: ignore[attr-defined]


def _seeds(*queries: str) -> list[SeedQuery]:
    return [SeedQuery(id=f"s{i}", query=q) for i, q in enumerate(queries, start=1)]


def test_malformed_answers_are_recorded_failures_with_their_stage(tmp_path: Path) -> None:
    out = tmp_path / "test.json"
    summary = _build(_seeds("Book a table for two tonight.", "NO-PLAN order pizza",
                            "BROKEN-JSON water the plants", "BAD-TOOL fly me to Mars"),
                     out, expand=False)
    assert (summary.queries, summary.built, summary.failed, summary.errors) == (4, 1, 3, 0)
    assert summary.failures_by_stage == {"plan": 1, "create": 1, "annotate": 1}
    why = {f.key: f.reason or "" for f in summary.failures}
    assert "no numbered step" in why["s2/original"]
    assert "no JSON list" in why["s3/original"]
    assert "'teleport', which is not in the toolset" in why["s4/original"]
    assert [s["question"] for s in _lines(out)] == ["Book a table for two tonight."]
    # The failures are final: a re-run asks nothing again.
    again = _build(_seeds("Book a table for two tonight.", "NO-PLAN order pizza",
                          "BROKEN-JSON water the plants", "BAD-TOOL fly me to Mars"),
                   out, model=ScriptedChatModel(rules=[]), expand=False)
    assert (again.resumed, again.built, again.failed) == (4, 1, 3)


def test_a_model_error_is_reported_and_retried_while_finished_queries_are_skipped(
        tmp_path: Path) -> None:
    out = tmp_path / "test.json"
    seeds = _seeds("Send my CV to the recruiter.", "RAISE Rename the holiday photos.")
    first = _build(seeds, out)
    # The seed whose every call raises: its expansion errs, so only its original is tried.
    assert (first.queries, first.built, first.errors) == (6, 5, 2)
    assert {f.key: f.stage for f in first.failures} == {"s2/expand": "generalise",
                                                        "s2/original": "plan"}
    assert all("RuntimeError: scripted provider failure" in (f.reason or "")
               for f in first.failures)

    asked: list[str] = []

    def recovered(prompt: str) -> str:
        asked.append(prompt)
        return reply(prompt.replace("RAISE", "raise"))

    second = _build(seeds, out, model=ScriptedChatModel(rules=[(r".", recovered)]))
    assert (second.queries, second.built, second.errors, second.failed) == (10, 10, 0, 0)
    assert second.resumed == 1 + 5  # s1's expansion and its 5 queries
    # Only the errored work ran: s2's two expansion calls, then 5 queries x 4 stages (the
    # merge's naming calls aside).
    stages = [p for p in asked if not p.startswith(TITLES["en"]["merge"])]
    assert len(stages) == 2 + 5 * 4
    assert all("Rename the holiday photos" in p for p in stages)
    assert len(_lines(out)) == 10


def test_a_line_cut_by_a_crash_is_redone(tmp_path: Path) -> None:
    out = tmp_path / "test.json"
    seeds = _seeds("Plan a picnic on Sunday.")
    _build(seeds, out, expand=False)
    with journal_path(out).open("a", encoding="utf-8") as fh:
        fh.write('{"kind": "sample", "key": "s2/orig')  # the crash cut this line
    assert Journal(journal_path(out)).unreadable == 1
    summary = _build(_seeds("Plan a picnic on Sunday.", "Return the library books."), out,
                     expand=False)
    assert (summary.resumed, summary.built) == (1, 2)


def test_cli_builds_resumes_and_replays_the_cache(tmp_path: Path) -> None:
    out = tmp_path / "built" / "test.json"
    with FakeOpenAI(rules=[(r".", reply)]) as server:
        args = ["build", "ultratool", "--queries", str(QUERIES / "queries.en.jsonl"), "--lang",
                "en", "--model", "openai:scripted", "--model-arg", f"base_url={server.base_url}",
                "--model-arg", "api_key=sk-test", "--out", str(out), "--no-expand", "--json"]
        first = CliRunner().invoke(app, args)
        assert first.exit_code == 0, first.output
        summary = json.loads(first.stdout)
        assert (summary["built"], summary["failed"], summary["resumed"]) == (5, 0, 0)
        requests = len(server.log)
        # 4 stages per query, and one call naming a merged tool per group of similar ones.
        assert requests == 5 * 4 + len(summary["merge_notes"]) + (summary["merged_tools"] > 0)
        again = CliRunner().invoke(app, args)
        assert again.exit_code == 0 and json.loads(again.stdout)["resumed"] == 5
        assert len(server.log) == requests  # the journal skipped the queries, the cache the merge
        journal_path(out).unlink()
        out.unlink()
        replay = CliRunner().invoke(app, args)
        assert replay.exit_code == 0 and json.loads(replay.stdout)["built"] == 5
        assert len(server.log) == requests  # everything from the response cache
        assert len(_lines(out)) == 5


def test_cli_rejects_bad_options_in_one_line(tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"query": "Water the plants."}\n{"query": ""}\n', encoding="utf-8")
    base = ["build", "ultratool", "--out", str(tmp_path / "t.json"), "--queries"]
    bad_lang = CliRunner().invoke(app, [*base, str(queries), "--lang", "fr", "--model", "x:y"])
    assert bad_lang.exit_code == 2 and "choose en or zh" in bad_lang.output
    bad_line = CliRunner().invoke(app, [*base, str(queries), "--lang", "en", "--model",
                                        "openai:m", "--model-arg", "api_key=sk-test"])
    assert bad_line.exit_code == 1 and "q.jsonl:2: query" in bad_line.output
    offline = CliRunner().invoke(app, [*base, str(QUERIES / "queries.en.jsonl"), "--lang",
                                       "en", "--model", "reference"])
    assert offline.exit_code == 2 and "cannot build new data" in offline.output
    missing = CliRunner().invoke(app, [*base, str(tmp_path / "none.jsonl"), "--lang", "en",
                                       "--model", "openai:m"])
    assert missing.exit_code == 2 and "no such file" in missing.output
    assert not (tmp_path / "t.json").exists()
