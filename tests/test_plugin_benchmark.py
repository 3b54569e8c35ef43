"""A third benchmark installed as a plugin (an entry point in a scratch folder, like a pip-installed
package) gets every command -- run, score, score --run, compare, report -- with its own report
table, its own scoring option and languages of its own, and no core file names it.

The plugin lives only here (tests), written to ``tmp_path`` and put on ``PYTHONPATH`` of one
child process, which discovers it by its entry point as an installed package is discovered and
runs each command through the ``tooleval`` app (Typer's CliRunner: one import of the stack for
every command, not one per command); the test's own process never registers it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

PLUGIN = '''
"""trivia: one-line questions in French and Spanish (a toy plugin for the tests)."""
from pathlib import Path
from typing import Any, Literal

from langchain_core.runnables import RunnableLambda
from pydantic import BaseModel

from tooleval_agents import (Benchmark, ExampleFields, ExampleScore, GoldAnswer, Located, Options,
                             Part, Scorer, Split, Strategy, StrategyContext, pooled)

MARKER = "Answer in one word."


class Question(BaseModel):
    question: str
    answer: str


class TriviaScoring(Options):
    scoring: Literal["lenient", "exact"] = "lenient"


class Direct(Strategy):
    benchmark, name = "trivia", "direct"

    def build(self, ctx: StrategyContext) -> Any:
        async def ask(state: dict) -> dict:
            prompt = f"{MARKER}\\n<input>{state['inputs']['question']}</input>"
            reply = await ctx.model.ainvoke(prompt)
            return {"raw_outputs": [reply.text], "prediction": reply.text}
        return RunnableLambda(ask)

    def input_key(self, split: Split, inputs: dict) -> str:
        return inputs["question"]

    def gold_answers(self, split: Split, inputs: dict, reference_outputs: dict) -> list:
        return [GoldAnswer(MARKER, reference_outputs["answer"], "plan_text")]


class Trivia(Benchmark):
    name = "trivia"
    title = "Trivia"

    def splits(self) -> list[Split]:
        return [Split("trivia", "qa", lang, "language") for lang in ("fr", "es")]

    def locate(self, split: Split, data_dir: Path) -> Located:
        return Located(Path(data_dir) / "trivia" / f"{split.subset}.jsonl", "official")

    def load(self, split: Split, data_dir: Path) -> list[Question]:
        text = self.locate(split, data_dir).path.read_text(encoding="utf-8")
        return [Question.model_validate_json(line) for line in text.splitlines() if line]

    def to_example(self, split: Split, record: Question) -> ExampleFields:
        return ExampleFields({"question": record.question}, {"answer": record.answer})

    def scoring_options(self, split: Split) -> type[Options]:
        return TriviaScoring

    def scorer(self, split: Split, *, options: dict | None = None) -> Scorer:
        exact = (options or {}).get("scoring") == "exact"

        def score(inputs: dict, outputs: dict, reference: dict) -> ExampleScore:
            said, gold = str(outputs.get("prediction") or ""), reference["answer"]
            hit = said == gold if exact else said.strip().lower() == gold.lower()
            return ExampleScore(scores={"correct": 100.0 * hit},
                                parts={"correct": Part(hits=hit, total=1)})

        return Scorer(score=score, aggregate=lambda s: {"correct": pooled(s, "correct")},
                      headline=("correct",))

    def default_strategy(self, split: Split) -> str:
        return "direct"

    def strategies(self) -> list[Strategy]:
        return [Direct()]

    def read_predictions(self, split: Split, path: Path, count: int) -> list[dict]:
        return [{"prediction": line} for line in path.read_text(encoding="utf-8").splitlines()]

    def report_tables(self, runs: list) -> list:
        import pandas as pd
        from tooleval_agents.results.reports import ReportTable

        frame = pd.DataFrame({"run": [r.label for r in runs],
                              "correct": [r.metrics().get("correct") for r in runs]})
        return [ReportTable("trivia_scoreboard", "Trivia scoreboard", frame.set_index("run"))]


BENCHMARK = Trivia()
'''

QUESTIONS = [("Capitale de la France ?", "Paris"), ("Capitale du Pérou ?", "Lima"),
             ("Capitale de l'Italie ?", "Rome"), ("Capitale du Japon ?", "Tokyo")]


DRIVER = """
import json, sys
from typer.testing import CliRunner
from tooleval_agents.cli import app

for line in sys.stdin:
    result = CliRunner().invoke(app, json.loads(line))
    escaped = result.exception if not isinstance(result.exception, SystemExit) else None
    print(json.dumps({"returncode": result.exit_code, "stdout": result.stdout,
                      "stderr": result.stderr + (f"Traceback: {escaped!r}" if escaped else "")}),
          flush=True)
"""
"""Runs the ``tooleval`` commands it reads (one JSON list of arguments a line) and answers each
with its exit code and output; an exception that escaped the command shows as a traceback."""


@dataclass
class Completed:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("plugin")
    (root / "toyplug.py").write_text(PLUGIN, encoding="utf-8")
    dist = root / "toyplug-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toyplug\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[tooleval_agents.benchmarks]\ntrivia = toyplug:BENCHMARK\n")
    data = root / "data" / "trivia"
    data.mkdir(parents=True)
    (data / "fr.jsonl").write_text("\n".join(json.dumps({"question": q, "answer": a})
                                             for q, a in QUESTIONS), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(root), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return {"root": root, "data": root / "data", "env": env}


@pytest.fixture
def tooleval(plugin: dict[str, Any]) -> Iterator[Any]:
    """``tooleval(*args)``: one command in the child process that sees the plugin."""
    child = subprocess.Popen([sys.executable, "-c", DRIVER], env=plugin["env"], text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, encoding="utf-8")
    watchdog = threading.Timer(240, child.kill)  # a hung command fails the test, not CI
    watchdog.start()
    assert child.stdin is not None and child.stdout is not None
    stdin, stdout = child.stdin, child.stdout

    def command(*args: str | Path) -> Completed:
        stdin.write(json.dumps([str(a) for a in args]) + "\n")
        stdin.flush()
        line = stdout.readline()
        assert line, f"the tooleval child process died running {args}"
        return Completed(**json.loads(line))

    try:
        yield command
    finally:
        watchdog.cancel()
        stdin.close()
        child.kill()  # its interpreter's shutdown (LangSmith threads) proves nothing here
        child.wait(timeout=60)


def test_a_plugin_benchmark_gets_every_command(plugin: dict[str, Any], tooleval: Any,
                                               tmp_path: Path) -> None:
    runs, data = tmp_path / "runs", plugin["data"]
    gold = tooleval("run", "trivia", "--lang", "fr", "--model", "reference",
                    "--data-dir", data, "--out", runs, "--no-cache", "--json")
    assert gold.returncode == 0, gold.stderr
    assert json.loads(gold.stdout)["metrics"] == {"correct": 100.0}
    noisy = tooleval("run", "trivia", "--lang", "fr", "--model", "noisy-reference:0.9",
                     "--scoring", "exact", "--data-dir", data, "--out", runs, "--no-cache",
                     "--json")
    assert noisy.returncode == 0, noisy.stderr
    assert json.loads(noisy.stdout)["metrics"]["correct"] < 100.0
    bad = tooleval("run", "trivia", "--lang", "fr", "--model", "reference",
                   "--scoring", "fuzzy", "--data-dir", data, "--out", runs)
    assert bad.returncode != 0 and "'lenient' or 'exact'" in bad.stderr
    assert "Traceback" not in bad.stderr

    gold_dir = runs / "trivia-qa-fr-direct-reference"
    noisy_dir = Path(json.loads(noisy.stdout)["run_dir"])  # named with its scoring's hash
    assert noisy_dir.name.startswith("trivia-qa-fr-direct-noisy-reference_0.9-")
    rescored = tooleval("score", "--run", gold_dir, "-o", "scoring=exact",
                        "--data-dir", data, "--json")
    assert rescored.returncode == 0, rescored.stderr
    assert json.loads(rescored.stdout)["summary"]["metrics"] == {"correct": 100.0}

    answers = tmp_path / "answers.txt"
    answers.write_text("Paris\nlima\nMilan\nTokyo\n", encoding="utf-8")
    scored = tooleval("score", "trivia", "--lang", "fr", "--predictions", answers,
                      "--data-dir", data, "--json")
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout)["metrics"] == {"correct": 75.0}
    perfect = tmp_path / "perfect.txt"
    perfect.write_text("Paris\nLima\nRome\nTokyo\n", encoding="utf-8")
    both = tooleval("score", "trivia", "--lang", "fr", "--predictions",
                    tmp_path / "*.txt", "--data-dir", data, "--json")  # the generic command
    assert both.returncode == 0, both.stderr
    assert [(Path(e["predictions"]).name, e["metrics"]) for e in json.loads(both.stdout)] == [
        ("answers.txt", {"correct": 75.0}), ("perfect.txt", {"correct": 100.0})]

    compared = tooleval("compare", gold_dir, noisy_dir)
    assert compared.returncode == 0, compared.stderr
    assert "correct" in compared.stdout

    report = tooleval("report", gold_dir, noisy_dir, "--out", tmp_path / "report")
    assert report.returncode == 0, report.stderr
    markdown = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "Trivia scoreboard" in markdown
    assert (tmp_path / "report" / "trivia_scoreboard.csv").is_file()


def test_the_plugin_is_invisible_to_this_process() -> None:
    from tooleval_agents.registry import benchmarks

    assert "trivia" not in benchmarks()  # no test depends on which plugins are installed
