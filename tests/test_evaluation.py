"""``evaluators_for`` in a user's own ``langsmith.evaluate`` (against the fake LangSmith on
127.0.0.1): the same metrics as ``tooleval score`` for the same answers, and as ``tooleval run
--agent`` for a ``create_agent`` graph as the target."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from appbench_answers import answer_sets
from fake_langsmith import FakeLangSmith, loopback_only
from langsmith import evaluate
from typer.testing import CliRunner

from tooleval_agents import agent_io_for, evaluators_for
from tooleval_agents.cli import app
from tooleval_agents.contracts import ExampleScore, Scorer, Split
from tooleval_agents.data.langsmith_datasets import push, to_examples
from tooleval_agents.evaluation import score_one, scorer_evaluators
from tooleval_agents.evaluators.base import langsmith_evaluators
from tooleval_agents.models.reference import AnswerKey
from tooleval_agents.models.specs import resolve_model
from tooleval_agents.registry import get_benchmark, get_strategy
from tooleval_agents.run.runner import run_experiment

SECRET = f"lsv2_pt_secret_{uuid.uuid4().hex}"
Target = Callable[[dict[str, Any]], dict[str, Any]]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLangSmith]:
    with loopback_only(monkeypatch) as refused, FakeLangSmith(api_key=SECRET) as server:
        yield server
        assert refused == [] and server.unknown == []


def _key(inputs: dict[str, Any]) -> str:
    return json.dumps(inputs, sort_keys=True, ensure_ascii=False)


def evaluated(fake: FakeLangSmith, split: Split, data_dir: Path, target: Target,
              **options: Any) -> tuple[dict[str, float], set[str], int]:
    """Push ``split``, run ``evaluate(target, data=split.name, ...)`` with
    ``evaluators_for``: the summary (as computed; LangSmith's copy is checked against it),
    the row feedback keys and the number of runs."""
    client = fake.client()
    [pushed] = push([split], data_dir, client=client)
    assert pushed.error is None
    row, summary = evaluators_for(split.benchmark, task=split.task, subset=split.subset,
                                  data_dir=data_dir, **options)
    sent: list[dict[str, Any]] = []  # as computed: the SDK rounds a feedback score to 1e-4

    def kept(inputs: list[dict[str, Any]], outputs: list[dict[str, Any]],
             reference_outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        sent.extend(summary(inputs, outputs, reference_outputs))
        return sent

    results = evaluate(target, data=split.name, evaluators=[row], summary_evaluators=[kept],
                       client=client, max_concurrency=4)
    experiment = str(results.experiment_id)
    with fake.lock:
        runs = {str(r["id"]) for r in fake.runs.values()
                if str(r.get("session_id")) == experiment and r.get("reference_example_id")}
        mine = [f for f in fake.feedback.values() if str(f.get("run_id")) in runs]
        pooled = {f["key"]: f["score"] for f in fake.feedback.values()
                  if f.get("run_id") is None and str(f.get("session_id")) == experiment}
    assert pooled == pytest.approx({f["key"]: f["score"] for f in sent}, abs=1e-4)
    return {f["key"]: f["score"] for f in sent}, {f["key"] for f in mine}, len(runs)


def cli_score(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["score", *args, "--json"])
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def assert_same(ours: dict[str, float], theirs: dict[str, Any], at_least: Sequence[str]) -> None:
    shared = [k for k in theirs if k in ours]
    assert set(at_least) <= set(shared), (sorted(ours), sorted(theirs))
    assert {k: ours[k] for k in shared} == pytest.approx({k: theirs[k] for k in shared},
                                                         rel=1e-12, abs=1e-9)


# ----------------------------------------------------------------------------- tooleval score

def test_appbench_ss_answers_score_as_tooleval_score(fake: FakeLangSmith, shared_data: Path,
                                                     tmp_path: Path) -> None:
    bench = get_benchmark("appbench")
    split = bench.split("plan", "ss")
    samples = list(bench.load(split, shared_data))
    examples = to_examples(split, shared_data)
    # Varied answers (gold, wrong, corrupted, restyled), one per distinct input: the target
    # sees only the inputs (a few SS inputs are shared by several samples).
    sets = [answers for _, answers in answer_sets(samples, seed="ss")]
    by_input = {_key(e.inputs): sets[i % len(sets)][i] for i, e in enumerate(examples)}
    answers = [by_input[_key(e.inputs)] for e in examples]
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(answers), encoding="utf-8")

    pooled, keys, n = evaluated(fake, split, shared_data,
                                lambda inputs: {"output": by_input[_key(inputs)]})
    assert n == len(examples) == 200
    report = cli_score("appbench", "--category", "ss", "--predictions", str(path),
                       "--data-dir", str(shared_data))
    assert_same(pooled, report["metrics"], ("success", "app_f1", "api_f1", "app_em", "api_em"))
    assert 0 < pooled["success"] < 100  # the answers are neither all right nor all wrong
    assert {"success", "app_f1", "api_f1", "executed_success"} <= keys


ULTRATOOL_FIRST = 200
"""The first UltraTool tool-usage examples of the 1000 (with GPT-4's published answers to them:
right, partly right and unreadable ones); LangSmith's ``evaluate`` of all 1000 took five
times as long for the same comparison."""


def test_ultratool_tool_usage_answers_score_as_tooleval_score(
        fake: FakeLangSmith, shared_data: Path, tmp_path: Path) -> None:
    split = get_benchmark("ultratool").split("tool_usage", "en")
    source = get_benchmark("ultratool").locate(split, shared_data).path
    data = tmp_path / "data"
    subset = data / source.relative_to(shared_data)
    subset.parent.mkdir(parents=True)
    subset.write_text("".join(source.read_text(encoding="utf-8").splitlines(keepends=True)
                              [:ULTRATOOL_FIRST]), encoding="utf-8")
    examples = to_examples(split, data)
    published = shared_data / "ultratool" / "predictions" / "English-dataset" / "gpt-4"
    lines = (published / "tool_usage.json").read_text(encoding="utf-8").splitlines()
    texts = [json.loads(line)["init output"] for line in lines if line.strip()]
    assert len(texts) == 1000 and len(examples) == ULTRATOOL_FIRST
    by_input = {_key(e.inputs): texts[i] for i, e in enumerate(examples)}
    path = tmp_path / "tool_usage.json"
    path.write_text(json.dumps([by_input[_key(e.inputs)] for e in examples]), encoding="utf-8")

    pooled, keys, n = evaluated(fake, split, data,
                                lambda inputs: {"output": by_input[_key(inputs)]})
    assert n == len(examples)
    report = cli_score("ultratool", "--task", "tool_usage", "--lang", "en", "--predictions",
                       str(path), "--data-dir", str(data))
    metrics = report.get("metrics") or report["results"][0]["metrics"]
    assert_same(pooled, metrics, ("tool_usage", "json_format_rate"))
    assert 0 < pooled["tool_usage"] < 100
    assert "tool_usage" in keys


# ----------------------------------------------------------------------------- create_agent

def reference_model(split: Split, data_dir: Path) -> Any:
    """The offline ``reference`` model with the gold tool plans of the ``tools`` strategy, as
    ``tooleval run --model reference`` builds it."""
    strategy = get_strategy(split.benchmark, "tools")
    examples = to_examples(split, data_dir)
    key = AnswerKey.build((strategy.input_key(split, e.inputs),  # type: ignore[attr-defined]
                           strategy.gold_answers(split, e.inputs,  # type: ignore[attr-defined]
                                                 e.outputs or {}))
                          for e in examples)
    return resolve_model("reference", answer_key=key)


def test_create_agent_target_matches_tooleval_run_agent(fake: FakeLangSmith, samples: Path,
                                                        tmp_path: Path) -> None:
    from langchain.agents import create_agent

    split = get_benchmark("appbench").split("plan", "ss")
    run = run_experiment("appbench", subset="ss", model="reference", data_dir=samples,
                         agent="langchain.agents:create_agent", out=tmp_path / "runs",
                         progress=False, cache=False, upload=False)
    io = agent_io_for("appbench", subset="ss")
    agent = create_agent(reference_model(split, samples), io.tools({}))

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        state: dict[str, Any] = agent.invoke({"messages": io.messages(inputs)})
        return state

    pooled, keys, n = evaluated(fake, split, samples, target)
    assert n == run.counts["examples"] > 0
    figures = ("success", "executed_success", "trajectory_strict", "trajectory_unordered",
               "trajectory_subset", "trajectory_superset", "tool_error_rate", "tool_calls",
               "agent_turns")
    measured = {k: v for k, v in run.metrics.items() if v is not None}
    assert set(figures) <= set(measured)
    assert set(pooled) == set(measured)  # every metric of the run, nothing else
    assert pooled == pytest.approx(measured, rel=1e-12, abs=1e-9)
    assert pooled["executed_success"] == 100.0 and pooled["trajectory_strict"] == 100.0
    assert {"success", "executed_success", "trajectory_strict"} <= keys, keys


def test_agent_state_with_serialized_messages_reads_the_same(samples: Path) -> None:
    from langchain.agents import create_agent
    from langchain_core.load import dumpd

    split = get_benchmark("appbench").split("plan", "ss")
    example = to_examples(split, samples)[0]
    io = agent_io_for("appbench", subset="ss")
    agent = create_agent(reference_model(split, samples), io.tools({}))
    state = agent.invoke({"messages": io.messages(example.inputs)})
    row, _ = evaluators_for("appbench", subset="ss", data_dir=samples)
    direct = row(example.inputs, state, example.outputs)
    for messages in ([dumpd(m) for m in state["messages"]],
                     [m.model_dump() for m in state["messages"]]):
        assert row(example.inputs, {"messages": messages}, example.outputs) == direct
    assert {f["key"]: f.get("score") for f in direct}["trajectory_strict"] == 100.0


# ----------------------------------------------------------------------------- contract

def test_ultratool_agent_io_reads_tool_calls_as_the_answer(samples: Path) -> None:
    from langchain_core.messages import AIMessage, ToolMessage

    split = get_benchmark("ultratool").split("tool_usage", "en")
    example = next(e for e in to_examples(split, samples)
                   if any("tool" in s for s in e.inputs["input"]))
    io = agent_io_for("ultratool", task="tool_usage", subset="en")
    tools = {t.name for t in io.tools(example.inputs)}
    gold = [s for s in example.outputs["reference"] if s.get("tool")]
    assert {s["tool"] for s in gold} <= tools
    assert "Plan" in str(io.messages(example.inputs)[0].content)
    calls = [{"name": s["tool"], "args": s["param"], "id": f"c{i}"} for i, s in enumerate(gold)]
    final = [*io.messages(example.inputs), AIMessage("", tool_calls=calls),
             *(ToolMessage("{}", tool_call_id=c["id"]) for c in calls), AIMessage("done")]
    row, _ = evaluators_for("ultratool", task="tool_usage", subset="en")
    scores = {f["key"]: f.get("score") for f in row(example.inputs, {"messages": final},
                                                example.outputs)}
    assert scores["tool_usage"] == 100.0 and scores["trajectory_strict"] == 100.0
    empty = {f["key"]: f.get("score") for f in row(example.inputs, None, example.outputs)}
    assert empty["tool_usage"] == 0.0  # a failed target is a wrong answer, not dropped


def test_judged_task_without_judge_names_the_parameter() -> None:
    with pytest.raises(ValueError, match=r"judge="):
        evaluators_for("ultratool", task="tool_creation", subset="en")
    with pytest.raises(ValueError, match="offline models cannot judge"):
        evaluators_for("ultratool", task="planning", subset="en", judge="reference")
    with pytest.raises(ValueError, match="'scoring'"):
        evaluators_for("appbench", subset="ss", scoring="lenient")
    with pytest.raises(ValueError, match="several subsets"):
        evaluators_for("appbench")
    with pytest.raises(ValueError, match="not played by a tool-calling agent"):
        agent_io_for("ultratool", task="planning", subset="en")
    # Planning without a judge: the offline structure metrics only.
    row, _ = evaluators_for("ultratool", task="planning", subset="en")
    assert row.__name__ == "ultratool-planning-en_row"


def test_summary_reuses_the_row_scores() -> None:
    calls: list[str] = []

    def score(inputs: dict[str, Any], outputs: dict[str, Any],
              reference: dict[str, Any]) -> ExampleScore:
        calls.append(inputs["q"])
        if outputs.get("a") == "boom":
            raise RuntimeError("the judge fell over")
        return ExampleScore(scores={"exact": 100.0 * (outputs.get("a") == reference["a"])})

    def aggregate(scores: Sequence[ExampleScore]) -> dict[str, float | None]:
        return {"exact": sum(s.scores.get("exact", 0.0) for s in scores) / len(scores),
                "never": None}

    row, summary = scorer_evaluators(Scorer(score=score, aggregate=aggregate), name="toy")
    rows = [({"q": "1"}, {"a": "x"}, {"a": "x"}), ({"q": "2"}, {"a": "boom"}, {"a": "y"})]
    feedback = [row(*r) for r in rows]
    assert feedback[0] == [{"key": "exact", "score": 100.0, "comment": None}]
    assert feedback[1][0]["key"] == "scoring_error"
    assert "the judge fell over" in feedback[1][0]["comment"]
    assert summary(*map(list, zip(*rows, strict=True))) == [{"key": "exact", "score": 50.0}]
    assert calls == ["1", "2"]  # scored once each: the summary pooled the row scores
    assert summary([{"q": "3"}], [{"a": "z"}], [{"a": "z"}]) == [{"key": "exact", "score": 100}]
    assert score_one(Scorer(score=score, aggregate=aggregate), {"q": "4"}, {"a": "boom"},
                     {}).error == "scoring failed: RuntimeError: the judge fell over"
    # An evaluator family's adapter (two pure functions) gives the same two evaluators.
    family_row, family_summary = langsmith_evaluators("toy", score, aggregate)
    assert family_row({"q": "5"}, {"a": "x"}, {"a": "x"}) == feedback[0]
    assert family_summary(*map(list, zip(*rows, strict=True))) == [{"key": "exact",
                                                                      "score": 50.0}]
