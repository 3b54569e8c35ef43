"""``tooleval build appbench``: the construction workflow on hand-made SGD dialogues with the
offline ``scripted`` model (and a loopback OpenAI server for the response cache)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from typer.testing import CliRunner

from tooleval_agents.appbench.build_models import ScriptedBuildModel
from tooleval_agents.appbench.loaders import load_category, load_file
from tooleval_agents.appbench.names import CATEGORIES
from tooleval_agents.appbench.records import AppBenchSample
from tooleval_agents.cli import app
from tooleval_agents.contracts import StrategyContext
from tooleval_agents.errors import ToolevalError
from tooleval_agents.graphs.appbench.build import BuildSettings, Journal, journal_path, run_build
from tooleval_agents.graphs.appbench.build_prompts import read_scores
from tooleval_agents.graphs.appbench.demos import choose_demos, load_pool
from tooleval_agents.models.chat_models import ScriptedChatModel
from tooleval_agents.registry import get_benchmark, get_strategy
from tooleval_agents.run.runner import run_experiment

FIXTURE = Path(__file__).parent / "fixtures" / "sgd"
KEYS = ["1_00000", "1_00001", "1_00002", "1_00005"]  # the dialogues that give a path


def build(*args: str | Path) -> Any:
    return CliRunner().invoke(app, ["build", "appbench", "--sgd", str(FIXTURE), "--split",
                                    "test", "--no-progress", *map(str, args)])


def test_build_loads_and_scores_100_with_the_reference_model(tmp_path: Path) -> None:
    out = tmp_path / "data" / "appbench" / "data" / "test" / "test_{category}.json"
    result = build("--model", "scripted", "--out", out)
    assert result.exit_code == 0, result.output
    assert "wrote 4 samples" in result.output
    for category in ("ss", "sm", "ms", "mm"):
        [sample] = load_category(tmp_path / "data", category)
        assert sample.build is not None and sample.build.category == category
        assert sample.build.scores["consistency"] == 10
        # Every literal value is in the instruction the scripted writer made.
        assert all(v in sample.input for v in sample.output.user_aware_arguments.values())
        summary = run_experiment("appbench", model="reference", subset=category,
                                 out=tmp_path / "runs",
                                 data_dir=tmp_path / "data", cache=False, progress=False,
                                 upload=False)
        assert summary.metrics["success"] == 100.0, category
        assert summary.metrics["executed_success"] == 100.0, category


def test_resumes_from_the_journal(tmp_path: Path) -> None:
    out = tmp_path / "built.json"
    settings = BuildSettings(sgd_dir=FIXTURE, split="test", out=out)
    model = ScriptedBuildModel()
    first = run_build(settings, model, model)
    assert (first.paths, first.reused, first.written) == (4, 0, 4)
    assert model.calls == 8  # a writer and a judge call per path
    # A crash after two paths: the journal keeps them (and half a line), the output is gone.
    journal = journal_path(out)
    lines = journal.read_text(encoding="utf-8").splitlines()
    journal.write_text("\n".join(lines[:2]) + "\n" + lines[2][:40], encoding="utf-8")
    out.unlink()
    again = ScriptedBuildModel()
    second = run_build(settings, again, again)
    assert (second.reused, second.written, again.calls) == (2, 4, 4)
    assert sorted(Journal(journal).load()) == KEYS
    assert [s.build.dialogues[0] for s in load_file(out, "mm")
            if s.build] == KEYS  # extraction order


def test_paths_only_writes_every_path_without_a_model(tmp_path: Path) -> None:
    out = tmp_path / "paths.json"
    result = build("--paths-only", "--out", out, "--category", "sm", "--category", "ss")
    assert result.exit_code == 0, result.output
    samples = load_file(out, "ss")
    assert [s.input for s in samples] == ["", ""]
    assert [s.build.category for s in samples if s.build] == ["ss", "sm"]
    assert not journal_path(out).exists()


def test_threshold_rejects_and_keeps_the_scores(tmp_path: Path) -> None:
    out = tmp_path / "strict.json"
    model = ScriptedBuildModel()
    summary = run_build(BuildSettings(sgd_dir=FIXTURE, split="test", out=out, threshold=8.0),
                        model, model)
    entries = Journal(journal_path(out)).load()
    rejected = [e for e in entries.values() if e.status == "rejected"]
    assert rejected and summary.statuses["rejected"] == len(rejected)
    assert all(e.sample["build"]["scores"] and "mean score" in e.reason for e in rejected)
    assert summary.written == len(entries) - len(rejected)


def test_lost_values_and_unreadable_answers_are_recorded(tmp_path: Path) -> None:
    # A writer that drops the names: every path with a free-text value is rejected.
    vague = FakeListChatModel(responses=["<instruction>Book it all for me.</instruction>",
                                         '{"fluency": 9, "diversity": 9, "consistency": 9}'] * 4)
    out = tmp_path / "vague.json"
    run_build(BuildSettings(sgd_dir=FIXTURE, split="test", out=out, max_concurrency=1),
              vague, vague)
    entries = Journal(journal_path(out)).load()
    assert {e.status for e in entries.values()} == {"rejected"}
    assert "Portland" in entries["1_00000"].sample["build"]["missing_values"]
    # A judge whose answer holds no scores: failed, journaled, nothing raised.
    garbled = ScriptedBuildModel(garble=True)
    out2 = tmp_path / "garbled.json"
    summary = run_build(BuildSettings(sgd_dir=FIXTURE, split="test", out=out2),
                        ScriptedBuildModel(), garbled)
    assert summary.statuses == {"failed": 4} and summary.written == 0
    assert read_scores('{"fluency": 11, "diversity": 5, "consistency": 5}') is None


def test_provider_answers_are_cached_and_errors_retried(tmp_path: Path) -> None:
    scripted = ScriptedBuildModel()

    def respond(prompt: str) -> str:
        return str(scripted.reply(prompt, []))

    out = tmp_path / "openai.json"  # answers cached in the per-test cache directory
    with FakeOpenAI(rules=[(r".", respond)], api_key="sk-test") as server:
        common = ["--model", "openai:gpt-test", "--model-arg", f"base_url={server.base_url}",
                  "--model-arg", "api_key=sk-test", "--out", out]
        server.fail_next(400)  # one path fails with a provider error: left for the next run
        first = build(*common, "--max-concurrency", "1")
        assert first.exit_code == 1, first.output
        assert "run the same command again" in first.output
        assert len(Journal(journal_path(out)).load()) == 3
        second = build(*common)
        assert second.exit_code == 0, second.output
        assert len(Journal(journal_path(out)).load()) == 4
        calls = len(server.ok())
        journal_path(out).unlink()
        third = build(*common)  # everything again, from the response cache
        assert third.exit_code == 0 and len(server.ok()) == calls
    assert json.loads(out.read_text(encoding="utf-8"))[0]["build"]["dialogues"] == ["1_00000"]


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    no_model = build("--out", tmp_path / "x.json")
    assert no_model.exit_code == 2 and "--model is required" in no_model.output
    bad = build("--paths-only", "--out", tmp_path / "x.json", "--category", "xx")
    assert bad.exit_code == 2 and "--category xx" in bad.output
    missing = build("--paths-only", "--out", tmp_path / "x.json", "--sgd", tmp_path / "none")
    assert missing.exit_code == 2 and "not a directory" in missing.output
    empty = CliRunner().invoke(app, ["build", "appbench", "--sgd", str(tmp_path), "--split",
                                     "dev", "--paths-only", "--out", str(tmp_path / "x.json")])
    assert empty.exit_code == 1 and "tooleval data fetch sgd" in empty.output
    assert "Traceback" not in empty.output


# ---------------------------------------------------------------------------- few-shot pool


def _pool_setup(tmp_path: Path) -> tuple[Path, Path, list[AppBenchSample]]:
    """A built test split (one sample per category) and a pool holding every test sample twice
    (verbatim, and reworded with the same gold calls) beside nothing else."""
    data = tmp_path / "data"
    assert build("--model", "scripted", "--out",
                 data / "appbench" / "data" / "test" / "test_{category}.json").exit_code == 0
    tests = [s for c in CATEGORIES for s in load_category(data, c)]
    pool_items = []
    for sample in tests:
        item = {**sample.official(), "build": {"dialogues": ["x"], "split": "train",
                                                "category": "ss"}}
        pool_items += [item, {**item, "input": "Reworded: " + sample.input[::-1]}]
    pool = tmp_path / "pool.json"
    pool.write_text(json.dumps(pool_items), encoding="utf-8")
    return data, pool, tests


def test_few_shot_pool_never_shows_the_sample_itself(tmp_path: Path) -> None:
    data, pool_file, tests = _pool_setup(tmp_path)
    pool = load_pool(pool_file)
    bench = get_benchmark("appbench")
    for category in CATEGORIES:
        split = bench.split("plan", category)
        [sample] = load_category(data, category)
        prompts: list[str] = []

        def remember(prompt: str, prompts: list[str] = prompts) -> str:
            prompts.append(prompt)
            return "nothing"

        model = ScriptedChatModel(rules=[(".", remember)])
        graph = get_strategy("appbench", "few_shot").build(StrategyContext(
            model=model, split=split, data_dir=data, options={"k": 3, "pool": str(pool_file)}))
        state = graph.invoke({"inputs": {"input": sample.input}})
        chosen = state["scratch"]["demos"]
        assert len(chosen) == 3 and state["scratch"]["demo_source"].startswith("pool_")
        for i in chosen:  # other samples' calls only: never this one, in any wording
            assert pool[i].output.api_results != sample.output.api_results
            assert pool[i].input.strip() != sample.input.strip()
        [prompt] = prompts
        assert prompt.count(sample.input.strip()) == 1  # only as the question itself
    # Without a pool the split itself is the pool (today's behaviour), still never the sample.
    assert choose_demos(tests, tests[0].input, 3)[0] == [1, 2, 3]


def test_few_shot_pool_built_from_test_dialogues_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "from_test.json"
    assert build("--paths-only", "--out", out).exit_code == 0
    with pytest.raises(ToolevalError, match="SGD test split"):
        load_pool(out)
    with pytest.raises(ToolevalError, match="no such file"):
        load_pool(tmp_path / "missing.json")
