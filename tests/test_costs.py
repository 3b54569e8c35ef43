"""Cost: the judge's tokens apart from the model's, dollars from the dated price table (or
"unknown price", never a guess), a user's price file, cost per success; shown by run and
compare."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_judges import VERDICT, is_judge
from fake_langsmith import openai_on_loopback
from fake_openai import ChatRequest, FakeOpenAI
from helpers import appbench_responder, cli
from run_dirs import make_run

from tooleval_agents.results.compare import compare, load_run
from tooleval_agents.results.costs import ENV, price_for, run_cost
from tooleval_agents.results.records import Usage
from tooleval_agents.results.rundir import RunDir
from tooleval_agents.results.summary import summarize


@pytest.fixture(autouse=True)
def _loopback(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with openai_on_loopback(monkeypatch, "sk-test-costs", ENV):
        yield


def test_judge_tokens_are_counted_apart_and_priced_with_the_judges_model(
        samples: Path, tmp_path: Path) -> None:
    def respond(req: ChatRequest) -> str:
        return VERDICT if is_judge(req) else "1. Find the file\n2. Open it"

    with FakeOpenAI(respond) as server:
        result = cli("run", "ultratool", "--task", "planning", "--lang", "en", "--model",
                     "reference", "--judge", "openai:gpt-4o-mini", "--judge-arg",
                     f"base_url={server.base_url}", "--data-dir", samples, "--out",
                     tmp_path, "--no-cache", "--json")
        sent, answered = server.usage()
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    usage, cost = report["usage"], report["cost"]
    assert (usage["judge_input_tokens"], usage["judge_output_tokens"]) == (sent, answered)
    assert usage["judge_calls"] == report["counts"]["judged"] > 0
    lines = RunDir(report["run_dir"]).results().values()
    assert sum(r.judge_usage.input_tokens for r in lines) == sent
    assert all(r.usage.model_calls == 1 and r.judge_usage.model_calls == 1 for r in lines)
    assert cost["model_usd"] == 0.0  # the offline model is free
    assert cost["judge_usd"] == pytest.approx((sent * 0.15 + answered * 0.60) / 1e6)
    assert cost["total_usd"] == cost["judge_usd"] and cost["prices_as_of"] == ["2025-06-01"]
    shown = cli("compare", report["run_dir"], "--n-boot", "0", "--json")
    assert shown.exit_code == 0, shown.output
    [row] = json.loads(shown.stdout)["costs"].values()
    assert row["cost_usd"] == pytest.approx(cost["total_usd"])
    assert row["judge_input_tokens"] == sent


def test_an_unknown_price_is_said_and_a_users_price_file_fixes_it(
        samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    args = ("run", "appbench", "--category", "ss", "--model", "openai:fake-model",
            "--data-dir", samples, "--out", tmp_path, "--no-cache")
    with FakeOpenAI(appbench_responder(samples)) as server:
        url = ("--model-arg", f"base_url={server.base_url}")
        shown = cli(*args, *url)
        assert shown.exit_code == 0, shown.output
        assert "cost: unknown price for openai:fake-model" in shown.output
        compared = cli("compare", *tmp_path.iterdir(), "--n-boot", "0", "--json")
        assert [r["cost_usd"] for r in json.loads(compared.stdout)["costs"].values()] == [None]
        prices = tmp_path.parent / "prices.json"
        prices.write_text(json.dumps({"as_of": "2026-11-01", "models": {
            "openai:fake-model": {"input": 1.0, "output": 2.0}}}))
        monkeypatch.setenv(ENV, str(prices))
        priced = json.loads(cli(*args, *url, "--json", "--fresh").stdout)
        sent, answered = server.usage()
    cost = priced["cost"]
    assert priced["metrics"]["success"] == 100.0
    assert cost["total_usd"] == pytest.approx(
        (priced["usage"]["input_tokens"] * 1.0 + priced["usage"]["output_tokens"] * 2.0) / 1e6)
    assert cost["per_success_usd"] == pytest.approx(cost["total_usd"] / 6)  # 6 samples, all won
    assert cost["prices_as_of"] == ["2026-11-01"] and cost["success_metric"] == "success"
    assert sent > 0 and answered > 0


def test_prices_match_specs_and_bare_names_and_never_guess() -> None:
    assert price_for("openai:gpt-4o") == price_for("gpt-4o")
    assert price_for("reference") is not None and price_for("reference").cost(10, 10) == 0.0
    assert price_for("openai:qwen2.5-coder-1.5b") is None
    cost = run_cost(model="openai:local", judge="openai:gpt-4o", examples=2, successes=1,
                    usage={"input_tokens": 10.0, "judge_input_tokens": 1e6, "judge_calls": 2})
    assert cost["total_usd"] is None and cost["judge_usd"] == pytest.approx(2.5)
    assert cost["unknown_price"] == ["openai:local"]


def test_compare_token_means_match_the_summary(tmp_path: Path, samples: Path) -> None:
    run = make_run(tmp_path, "a", data_dir=samples, tokens=(1000, 40, 2), infra={1})
    rd = RunDir(run)
    spent = next(r for r in rd.results().values() if r.status == "infra_error")
    # An infra error that spent tokens before failing (e.g. a timeout after a first call).
    rd.append(spent.model_copy(update={"usage": Usage(input_tokens=300, output_tokens=0,
                                                      model_calls=1), "attempt": 2}))
    data = load_run(run)
    summary = summarize("a", data.scorer.aggregate, list(rd.results().values()),
                        examples=data.config.dataset.examples)
    costs = compare([run], n_boot=0).costs.iloc[0]
    for key in ("input_tokens", "output_tokens", "model_calls"):
        assert costs[f"mean_{key}"] == pytest.approx(summary.usage[f"{key}_per_example"])
    assert costs["total_input_tokens"] == summary.usage["input_tokens"]
    n = len(rd.results())
    assert costs["mean_input_tokens"] == pytest.approx((1000 * (n - 1) + 300) / n)
