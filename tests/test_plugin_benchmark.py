"""A third benchmark installed as a plugin gets every command -- list, data fetch / info, run,
score, score --run, compare, report, view, and ``run --agent-cmd``, its tools served over MCP
-- with its own data source, report table, scoring option and languages, and no core file
names it.

The plugin is the package in ``tests/plugins/trivia`` (written against the public names of
``tooleval_agents`` only: a test checks it imports no other project module). It is installed
by path: its folder on ``PYTHONPATH`` of one child process, with the metadata pip writes from its
``pyproject.toml`` (the entry point); the child discovers it as an installed package is
discovered and runs each command through the ``tooleval`` app (Typer's CliRunner: one import
of the stack for every command, not one per command). The test's own process never registers it.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import threading
import tomllib
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest
from helpers import HANG_GUARD_S
from http_fixtures import serve_directory

from tooleval_agents import registry
from tooleval_agents.run.runner import run_experiment

PACKAGE = Path(__file__).parent / "plugins" / "trivia"
SCRIPTED = Path(__file__).parent / "scripted_mcp_agent.py"
"""An outside agent speaking MCP (it plays the plans it is given)."""
"""The plugin's source: a package folder with its ``pyproject.toml``, as its author ships it."""


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


def plugin_environment(root: Path) -> dict[str, str]:
    """An environment in which Python finds the plugin installed: its package on
    ``PYTHONPATH`` with the metadata pip writes from its ``pyproject.toml`` (the entry point),
    written in ``root``."""
    project = tomllib.loads((PACKAGE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    dist = root / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    (dist / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items())
        for group, points in project["entry-points"].items()))
    return {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(root), str(PACKAGE), *filter(None, [os.environ.get("PYTHONPATH")])])}


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("plugin")
    return {"root": root, "mirror": PACKAGE / "mirror", "env": plugin_environment(root)}


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
        child.wait(timeout=HANG_GUARD_S)


def test_a_plugin_benchmark_gets_every_command(plugin: dict[str, Any], tooleval: Any,
                                               tmp_path: Path) -> None:
    runs, data = tmp_path / "runs", tmp_path / "data"
    listed = tooleval("list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "trivia" in {b["benchmark"] for b in json.loads(listed.stdout)}
    missing = tooleval("run", "trivia", "--lang", "fr", "--model", "reference",
                       "--data-dir", data, "--out", runs)
    assert missing.returncode == 1 and "tooleval data fetch trivia" in missing.stderr
    with serve_directory(plugin["mirror"]) as mirror:
        fetched = tooleval("data", "fetch", "trivia", "--data-dir", data,
                           "--base-url", mirror.url + "/", "--json")
    assert fetched.returncode == 0, fetched.stderr + fetched.stdout
    assert (data / "trivia" / "fr.jsonl").read_bytes() == \
        (plugin["mirror"] / "trivia" / "fr.jsonl").read_bytes()
    info = tooleval("data", "info", "--data-dir", data)
    assert info.returncode == 0 and "trivia" in info.stdout, info.stderr

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

    # Served over MCP with no code of its own (its AgentIO), played by an outside agent.
    plans = tmp_path / "plans.json"
    questions = [json.loads(line) for line in (plugin["mirror"] / "trivia" / "fr.jsonl")
                 .read_text(encoding="utf-8").splitlines()]
    plans.write_text(json.dumps({f"Answer in one word. {q['question']}": {
        "calls": [{"id": "0", "name": "count_letters", "args": {"text": q["question"]}}],
        "final": q["answer"]} for q in questions}), encoding="utf-8")
    outside = tooleval("run", "trivia", "--lang", "fr", "--agent-cmd",
                       f"SCRIPTED_PLANS={plans} {sys.executable} {SCRIPTED}", "--agent-name",
                       "scripted", "--data-dir", data, "--out", runs, "--json")
    assert outside.returncode == 0, outside.stderr
    assert json.loads(outside.stdout)["metrics"] == {"correct": 100.0}
    calls = [json.loads(line) for line in (Path(json.loads(outside.stdout)["run_dir"])
                                           / "mcp_calls.jsonl").read_text().splitlines()]
    assert sorted(c["arguments"]["text"] for c in calls if c["kind"] == "call") == sorted(
        q["question"] for q in questions)

    gold_dir = runs / "trivia-qa-fr-direct-reference"
    noisy_dir = Path(json.loads(noisy.stdout)["run_dir"])  # named with its scoring's hash
    assert noisy_dir.name.startswith("trivia-qa-fr-direct-noisy-reference_0.9-")
    rescored = tooleval("score", "--run", gold_dir, "-O", "scoring=exact",
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

    site = tooleval("view", runs, "--out", tmp_path / "site")
    assert site.returncode == 0, site.stderr
    pages = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "site").rglob("*")
                    if p.is_file() and p.suffix in (".html", ".js", ".json"))
    assert "Capitale du Japon" in pages and "trivia-qa-fr-direct-reference" in pages


def test_the_plugin_imports_only_public_names() -> None:
    # What docs/plugins.md tells a plugin author to use: the package ``tooleval_agents`` itself,
    # never one of its modules (they may move; the names it re-exports do not).
    imported = {node.module for path in (PACKAGE / "tooleval_trivia").glob("*.py")
                for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(node, ast.ImportFrom) and node.module}
    assert {m for m in imported if m.split(".")[0] in ("tooleval_agents", "graphs",
                                                      "evaluators")} == {"tooleval_agents"}


def test_the_plugin_is_invisible_to_this_process() -> None:
    from tooleval_agents.registry import benchmarks

    assert "trivia" not in benchmarks()  # no test depends on which plugins are installed


def test_broken_plugin_is_skipped_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    group = registry.ENTRY_POINT_GROUP
    eps = [EntryPoint("broken", "no_such_module_for_tooleval_tests:BENCH", group),
           EntryPoint("ultratool", "tooleval_agents.ultratool.benchmark:BENCHMARK", group),
           EntryPoint("appbench", "tooleval_agents.appbench.benchmark:BENCHMARK", group)]
    monkeypatch.setattr(registry, "entry_points", lambda group: eps)
    monkeypatch.setattr(registry, "_REGISTRY", {})
    monkeypatch.setattr(registry, "_LOADED", False)
    with pytest.warns(RuntimeWarning, match="'broken'.*failed to load"):
        found = registry.benchmarks()
    assert set(found) == {"ultratool", "appbench"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        registry.benchmarks()  # loaded once: no second warning


def test_only_a_benchmark_can_be_registered(samples: Path, tmp_path: Path) -> None:
    """A path given where a benchmark goes (``run_experiment(data_dir, ...)``) is refused; it
    once joined the registry under its folder's name and broke every later run's listing."""
    before = registry.benchmarks()
    with pytest.raises(TypeError, match="must be a Benchmark, not PosixPath"):
        registry.register(samples)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be a Benchmark"):
        run_experiment(samples, model="reference", out=tmp_path,  # type: ignore[arg-type]
                       progress=False, upload=False)
    assert registry.benchmarks() == before
