"""Issue 33, "One run, one set of numbers": each case built from the issue's own commands.

1. An edited agent gets a run of its own (never its old scores), on the CLI and from Python;
   reverting the edit resumes the original run.
2. A cached answer keeps its tokens: cold and warm runs give the same summary and per-example
   tokens, and report what their sessions paid apart.
3. One directory, one set of numbers: a smaller ``--limit`` runs and rewrites nothing, and
   ``run``, the sweep table, ``compare``, ``report`` and the viewer agree on n and figures.
4. A crashing agent is an ``agent_error`` (with where it raised), and a run in which every
   example ended so exits 1.
8. Epoch runs resume, after a finished run and after a kill -9.
9. A stopped run's old summary is never taken for its figures (``export``, ``view``,
   ``compare``).
"""

from __future__ import annotations

import csv
import importlib.util
import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from helpers import needs_inspect, wait_for_examples
from typer.testing import CliRunner

from tooleval_agents import run_experiment
from tooleval_agents.cli import app
from tooleval_agents.results.rundir import EXAMPLES, SUMMARY, RunDir
from tooleval_agents.viewer import build_site

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "datasets"
AGENT = """from langchain.agents import create_agent


def build(model, tools):
    return create_agent(model, tools)
"""


@pytest.fixture(autouse=True)
def _own_user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A user cache of this test's own: no benchmark data fetched (the issue's commands run on
    the bundled samples) and a cold response cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))


def tooleval(*args: str | Path) -> Any:
    return CliRunner().invoke(app, [*map(str, args)])


def summary_of(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / SUMMARY).read_text())


def lines_of(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run_dir / EXAMPLES).read_text().splitlines()]


def warnings_of(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING)


# ----------------------------------------------------------------------------- case 1

def test_case_1_an_edited_agent_is_never_answered_from_its_old_results(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ag.py").write_text(AGENT)
    command = ("run", "appbench", "--category", "ss", "--model", "reference", "--agent",
               "ag.py:build", "--out", "C", "--json")
    first = tooleval(*command)
    assert first.exit_code == 0, first.output
    before = json.loads(first.stdout)
    assert before["metrics"]["success"] == 100.0
    (tmp_path / "ag.py").write_text(AGENT.replace("create_agent(model, tools)",
                                                  "create_agent(model, [])"))  # no tools
    with caplog.at_level(logging.WARNING):
        edited = tooleval(*command)
    after = json.loads(edited.stdout)
    assert after["metrics"]["success"] == 0.0  # the true figure, never the old 100
    assert after["run_dir"] != before["run_dir"] and "session" in after
    assert after["session"]["resumed"] == 0 and after["session"]["ran"] == 6
    said = warnings_of(caplog)
    assert f"{before['run_dir']} holds a run of something else (agent ag.py:build: its code " \
        f"changed (ag.py)): this run's results are in {after['run_dir']}" in said
    assert Path(after["run_dir"]).name == Path(before["run_dir"]).name + "-v2"
    # nothing the user paid for is discarded: reverting the edit finds the original run
    (tmp_path / "ag.py").write_text(AGENT)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        reverted = json.loads(tooleval(*command).stdout)
    assert reverted["run_dir"] == before["run_dir"] and reverted["metrics"]["success"] == 100.0
    assert reverted["session"]["resumed"] == reverted["session"]["of"] == 6
    assert "resumed 6 of 6 examples" in warnings_of(caplog)
    config = json.loads((Path(before["run_dir"]) / "config.json").read_text())
    assert set(config["identity"]["parts"]["agent"]["files"]) == {"ag.py"}


def _load(file: Path, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """``file`` imported as a module of its own (as a user's script imports their agent)."""
    spec = importlib.util.spec_from_file_location(file.stem, file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, file.stem, module)
    spec.loader.exec_module(module)
    return module


def test_case_1_from_python_an_edited_factory_starts_a_new_run_and_says_why(
        tmp_path: Path, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "my_agents_33.py"
    source.write_text(AGENT.replace("def build", "def my_agent"))
    kwargs: dict[str, Any] = {"subset": "ss", "model": "reference", "data_dir": SAMPLES,
                              "out": tmp_path / "runs", "progress": False}
    first = run_experiment("appbench", agent=_load(source, monkeypatch).my_agent, **kwargs)
    assert first.metrics["success"] == 100.0
    # named by its module and function (a script's __main__ by its function alone)
    assert Path(first.run_dir or "").name == \
        "appbench-plan-ss-tools+my_agents_33.my_agent-reference"
    source.write_text(AGENT.replace("def build", "def my_agent").replace(
        "create_agent(model, tools)", "create_agent(model, [])"))
    with caplog.at_level(logging.WARNING):
        edited = run_experiment("appbench", agent=_load(source, monkeypatch).my_agent, **kwargs)
    assert edited.metrics["success"] == 0.0 and edited.run_dir != first.run_dir
    assert "its code changed (my_agents_33.py)" in warnings_of(caplog)
    caplog.clear()
    with caplog.at_level(logging.WARNING):  # the same code again: resumed, and said so
        again = run_experiment("appbench", agent=_load(source, monkeypatch).my_agent, **kwargs)
    assert again.run_dir == edited.run_dir and again.session["resumed"] == 6
    assert "resumed 6 of 6 examples" in warnings_of(caplog)


HELPED_AGENT = """from langchain.agents import create_agent
from prompts45 import PROMPT


def build(model, tools):
    return create_agent(model, tools, system_prompt=PROMPT)


def build_without_tools(model, tools):
    return create_agent(model, [], system_prompt=PROMPT)
"""


def test_the_same_agent_code_is_one_run_whether_named_on_the_cli_or_imported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    # issue 45 case 3: `--agent my_agent.py:build`, then `from my_agent import build`
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # where the agent's own helper module is
    (tmp_path / "my_agent45.py").write_text(HELPED_AGENT)
    (tmp_path / "prompts45.py").write_text('PROMPT = "Use the tools."\n')
    cli = tooleval("run", "appbench", "--category", "ss", "--model", "reference", "--agent",
                   "my_agent45.py:build", "--out", "runs", "--json")
    assert cli.exit_code == 0, cli.output
    first = json.loads(cli.stdout)
    module = _load(tmp_path / "my_agent45.py", monkeypatch)
    kwargs: dict[str, Any] = {"subset": "ss", "model": "reference", "out": tmp_path / "runs",
                              "data_dir": SAMPLES, "progress": False}
    with caplog.at_level(logging.WARNING):
        imported = run_experiment("appbench", agent=module.build, **kwargs)
    assert "something else" not in warnings_of(caplog)
    run_dir = tmp_path / first["run_dir"]
    assert Path(imported.run_dir or "") == run_dir  # the same code: the same run, resumed
    assert imported.session["resumed"] == 6 and imported.session["ran"] == 0
    files = json.loads((run_dir / "config.json").read_text())[
        "identity"]["parts"]["agent"]["files"]
    assert set(files) == {"my_agent45.py", "prompts45.py"}  # its helper is read too
    # another function of the same file is another agent, though its files are the same
    other = run_experiment("appbench", agent=module.build_without_tools, **kwargs)
    assert other.run_dir != imported.run_dir and other.metrics["success"] == 0.0
    # and an edit of the helper is an edit of the agent
    (tmp_path / "prompts45.py").write_text('PROMPT = "Use the tools!"\n')
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        edited = tooleval("run", "appbench", "--category", "ss", "--model", "reference",
                          "--agent", "my_agent45.py:build", "--out", "runs", "--json")
    assert json.loads(edited.stdout)["run_dir"] == first["run_dir"] + "-v2"
    assert "(agent my_agent45.py:build: its code changed (prompts45.py))" in \
        warnings_of(caplog)


def test_case_1_a_compiled_graph_is_keyed_on_what_can_be_read_of_it(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from langchain.agents import create_agent
    from langchain_core.runnables import RunnablePassthrough

    from tooleval_agents.models.reference import AnswerKey
    from tooleval_agents.models.specs import resolve_model
    from tooleval_agents.run.usercode import code_identity

    model = resolve_model("reference", answer_key=AnswerKey())
    one = create_agent(model, [], system_prompt="Use the tools.")
    other = create_agent(model, [], system_prompt="Never use the tools.")
    assert code_identity(one).readable and code_identity(one) == code_identity(
        create_agent(model, [], system_prompt="Use the tools."))
    assert code_identity(one).code != code_identity(other).code  # its prompt is read
    kwargs: dict[str, Any] = {"subset": "ss", "model": "reference", "data_dir": SAMPLES,
                              "out": tmp_path / "runs", "progress": False, "limit": 1}
    with caplog.at_level(logging.WARNING):
        opaque = run_experiment("appbench", agent=RunnablePassthrough(), **kwargs)
    assert opaque.counts["scored"] == 1
    assert "nothing of its code could be read, so a change to it will not be noticed" in \
        warnings_of(caplog)


# ----------------------------------------------------------------------------- case 2

def test_case_2_cached_answers_keep_their_tokens_and_sessions_say_what_they_paid(
        tmp_path: Path) -> None:
    cold_out, warm_out = tmp_path / "cold", tmp_path / "warm"
    command = ("run", "appbench", "--category", "sm", "--model", "reference")
    cold = tooleval(*command, "--out", cold_out)
    warm = tooleval(*command, "--out", warm_out)
    assert cold.exit_code == warm.exit_code == 0, warm.output
    name = "appbench-plan-sm-hierarchical-reference"
    a, b = summary_of(cold_out / name), summary_of(warm_out / name)
    assert a["metrics"] == b["metrics"] and a["usage"] == b["usage"] and a["cost"] == b["cost"]
    assert a["usage"]["input_tokens"] > 0 and a["usage"]["input_tokens_per_example"] > 0
    tokens = [[(r["index"], r["usage"]["input_tokens"], r["usage"]["output_tokens"])
               for r in sorted(lines_of(d / name), key=lambda r: r["index"])]
              for d in (cold_out, warm_out)]
    assert tokens[0] == tokens[1]
    # what each session paid differs, as it should, and is reported apart
    assert a["session"]["model_calls"] == a["usage"]["model_calls"] > 0
    assert a["session"]["cache_hits"] == 0 and b["session"]["model_calls"] == 0
    assert b["session"]["input_tokens"] == 0 and b["session"]["cache_hits"] == 10
    assert "this session: model calls 0, tokens paid in/out 0/0, cache hits 10" in warm.output
    assert f"tokens in/out: {int(a['usage']['input_tokens'])}/" in warm.output
    compared = json.loads(tooleval("compare", cold_out / name, warm_out / name, "--json",
                                   "--n-boot", "0").stdout)
    costs = list(compared["costs"].values())
    assert costs[0]["mean_input_tokens"] == costs[1]["mean_input_tokens"] > 0
    assert costs[0]["paid_calls"] == 10 and costs[1]["paid_calls"] == 0
    assert costs[1]["cache_hits"] == 10
    meta = _site_runs(tmp_path, [cold_out / name, warm_out / name])
    assert [m["usage"]["input_tokens"] for m in meta] == [a["usage"]["input_tokens"]] * 2
    assert sorted(m["spent"]["cache_hits"] for m in meta) == [0, 10]


def test_case_2_cache_entries_written_without_usage_are_counted_as_unknown(
        tmp_path: Path) -> None:
    command = ("run", "appbench", "--category", "sm", "--model", "reference", "--limit", "2")
    assert tooleval(*command, "--out", tmp_path / "a").exit_code == 0
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "tooleval-agents" / "responses.sqlite"
    with sqlite3.connect(cache) as db:  # as an earlier version wrote them, with no usage
        for key, value in db.execute("SELECT key, value FROM responses").fetchall():
            items = json.loads(value)
            for item in items:
                item.pop("usage", None)
                item["message"]["data"]["usage_metadata"] = None
            db.execute("UPDATE responses SET value = ? WHERE key = ?", (json.dumps(items), key))
    old = tooleval(*command, "--out", tmp_path / "b", "--json")
    summary = json.loads(old.stdout)
    assert summary["usage"]["unknown_usage"] == summary["usage"]["model_calls"] == 4
    assert any("written before the cache kept token usage" in n for n in summary["notes"])


# ----------------------------------------------------------------------------- case 3

def _site_runs(tmp_path: Path, runs: list[Path]) -> list[dict[str, Any]]:
    site = build_site(runs, tmp_path / "site")
    text = (site.out / "data" / "runs.js").read_text()
    start = text.index('TOOLEVAL.put("runs",') + len('TOOLEVAL.put("runs",')
    return list(json.loads(text[start:text.index(");\n", start)]))


def test_case_3_one_directory_one_set_of_numbers_in_all_five_places(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.chdir(tmp_path)
    command = ("run", "appbench", "--category", "ss", "--model", "noisy-reference:0.3",
               "--out", "F")
    whole = json.loads(tooleval(*command, "--json").stdout)
    run_dir = Path(whole["run_dir"])
    written = (run_dir / SUMMARY).read_bytes()
    config = (run_dir / "config.json").read_bytes()
    assert whole["counts"]["scored"] == 6 and round(whole["metrics"]["success"], 2) == 83.33
    part = tooleval(*command, "--limit", "3")  # runs nothing, rewrites nothing
    assert part.exit_code == 0, part.output
    assert (run_dir / SUMMARY).read_bytes() == written
    assert (run_dir / "config.json").read_bytes() == config
    assert "resumed 3 of 3, ran 0 new, 0 errors (the directory holds 6: its figures are over " \
        "all of them)" in part.output
    assert "examples=6, scored=6" in part.output
    # 1. run
    shown = json.loads(tooleval(*command, "--limit", "3", "--json").stdout)
    # 2. the sweep table (this run beside another)
    sweep = tooleval(*command, "--model", "reference", "--limit", "3")
    row = next(line for line in sweep.output.splitlines()
               if line.startswith("│ noisy-reference:0.3"))
    # 3. compare
    compared = json.loads(tooleval("compare", run_dir, "--json", "--n-boot", "0").stdout)
    # 4. report
    assert tooleval("report", run_dir, "--out", tmp_path / "report").exit_code == 0
    [runs_row] = csv.DictReader((tmp_path / "report" / "runs.csv").open())
    metrics_csv = (tmp_path / "report" / "metrics.csv").read_text().splitlines()
    # 5. the viewer
    [meta] = _site_runs(tmp_path, [run_dir])
    success = round(whole["metrics"]["success"], 2)
    assert shown["counts"]["scored"] == 6 and round(shown["metrics"]["success"], 2) == success
    assert row.split("│")[2].strip() == "6" and f"{success:.2f}" in row.split("│")[3]
    assert compared["runs"][0]["scored"] == 6
    assert round(next(iter(compared["metrics"]["success"].values())), 2) == success
    assert runs_row["scored"] == "6"
    assert round(float(next(x for x in metrics_csv if x.startswith("success,")).split(",")[1]),
                 2) == success
    assert meta["counts"]["scored"] == meta["examples"] == 6 and meta["state"] == "finished"
    assert round(meta["metrics"]["success"], 2) == success


# ----------------------------------------------------------------------------- case 4

BOOM = """from langchain_core.runnables import RunnableLambda


def build(model, tools):
    def blow(state):
        raise ValueError("my agent blew up")
    return RunnableLambda(blow)
"""


def test_case_4_a_crashing_agent_is_an_agent_error_and_the_run_exits_1(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "boom.py").write_text(BOOM)
    result = tooleval("run", "appbench", "--category", "ss", "--model", "reference", "--agent",
                      "boom.py:build", "--out", "D")
    assert result.exit_code == 1, result.output
    assert "agent_errors=6" in result.output and "model_errors=0" in result.output
    assert ("error: appbench-plan-ss: every example ended in agent_error (the agent or strategy "
            "raised; nothing was measured); first: ValueError: my agent blew up (at boom.py:6 "
            "in blow)") in result.output
    [run_dir] = (tmp_path / "D").iterdir()
    lines = lines_of(run_dir)
    assert {(r["status"], r["error_kind"], r["error_at"]) for r in lines} == {
        ("agent_error", "ValueError", "boom.py:6 in blow")}


# ----------------------------------------------------------------------------- case 8

def test_case_8_an_epoch_run_resumes(tmp_path: Path) -> None:
    command = ("run", "appbench", "--category", "ss", "--model", "reference", "--data-dir",
               SAMPLES, "--limit", "2", "--epochs", "2", "--out", tmp_path / "EP")
    first = tooleval(*command)
    assert first.exit_code == 0, first.output
    again = tooleval(*command)
    assert again.exit_code == 0, again.output
    assert "holds a run over other data" not in again.output
    assert "resumed 4 of 4, ran 0 new, 0 errors" in again.output


def _toy_cli(args: list[str]) -> list[str]:
    tests = Path(__file__).resolve().parent
    code = (f"import sys; sys.path.insert(0, {str(tests)!r}); import test_runner; "
            "test_runner.register_toy(); from tooleval_agents.cli import main; "
            f"sys.argv = ['tooleval', *{args!r}]; main()")
    return [sys.executable, "-c", code]


def test_case_8_an_epoch_run_killed_with_9_resumes_what_it_had_not_done(
        tmp_path: Path) -> None:
    from test_runner import write_toy

    data = write_toy(tmp_path / "data", n=10)  # 20 attempts, epoch 0 then epoch 1
    log = tmp_path / "calls.log"
    args = ["run", "toy", "--lang", "en", "--model", "reference", "--epochs", "2", "--out",
            str(tmp_path / "EP"), "--data-dir", str(data), "--no-cache", "--no-progress",
            "--max-concurrency", "2", "-O", "delay=0.25", "-O", f"call_log={log}", "--json"]
    env = {**os.environ, "TOY_RUN": "1"}
    proc = subprocess.Popen(_toy_cli(args), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    run_dir = wait_for_examples(tmp_path / "EP", 12, proc)  # epoch 1 began
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = len(RunDir(run_dir).results())
    assert 12 <= done_before < 20
    assert any(r.epoch == 1 for r in RunDir(run_dir).results().values())
    env["TOY_RUN"] = "2"
    resumed = subprocess.run(_toy_cli(args), env=env, capture_output=True, text=True,
                             timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert summary["counts"]["scored"] == 20 and summary["session"]["resumed"] == done_before
    rerun = [x for x in log.read_text().splitlines() if x.startswith("2\t")]
    assert len(rerun) == 20 - done_before  # every attempt paid for is kept


# ----------------------------------------------------------------------------- case 9

def test_case_9_a_stopped_runs_old_summary_is_never_its_figures(
        shared_data: Path, tmp_path: Path) -> None:
    base = ["run", "appbench", "--category", "mm", "--strategy", "tools", "--model",
            "reference", "--tool-faults", "rate=0.3,seed=0", "--data-dir", str(shared_data),
            "--out", str(tmp_path / "runs"), "--no-cache", "--no-progress"]
    assert tooleval(*base, "--limit", "30").exit_code == 0
    [run_dir] = (tmp_path / "runs").iterdir()
    script = ("from tooleval_agents.cli import main; import sys; "
              f"sys.argv = ['tooleval', *{[*base, '--limit', '200']!r}]; main()")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    wait_for_examples(tmp_path / "runs", 72, proc, run_dir.name)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    held = len(RunDir(run_dir).results())
    assert 72 <= held < 200 and summary_of(run_dir)["counts"]["scored"] == 30  # stale
    exported = tooleval("export", "run", run_dir, "--out", tmp_path / "log.json")
    assert exported.exit_code != 0 and not (tmp_path / "log.json").exists()
    assert "describes an earlier state of the run" in exported.output
    [meta] = _site_runs(tmp_path, [run_dir])
    compared = json.loads(tooleval("compare", run_dir, "--json", "--n-boot", "0").stdout)
    assert meta["state"] == "stopped" and meta["examples"] == held
    assert meta["counts"]["scored"] == compared["runs"][0]["scored"] == held
    assert meta["counts"]["not_run"] == 200 - held
    figure = next(iter(compared["metrics"]["success"].values()))
    assert meta["metrics"]["success"] == pytest.approx(figure)
    # the next run finishes it and its summary is the directory's again
    assert tooleval(*base, "--limit", "200").exit_code == 0
    assert summary_of(run_dir)["counts"]["scored"] == 200
    needs_inspect()
    exported = tooleval("export", "run", run_dir, "--out", tmp_path / "log.json")
    assert exported.exit_code == 0, exported.output


# ----------------------------------------------------------------------------- identities

def test_a_run_recorded_before_identities_is_resumed_unless_it_ran_code_of_the_users(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ag.py").write_text(AGENT)
    for agent in ((), ("--agent", "ag.py:build")):
        command = ("run", "appbench", "--category", "ss", "--model", "reference", "--limit",
                   "2", "--out", "old", *agent, "--json")
        first = json.loads(tooleval(*command).stdout)
        config_file = Path(first["run_dir"]) / "config.json"
        config = json.loads(config_file.read_text())
        del config["identity"]  # as an earlier version wrote it
        config_file.write_text(json.dumps(config))
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            again = json.loads(tooleval(*command).stdout)
        if not agent:  # the same settings and no code of the user's: the same run
            assert again["run_dir"] == first["run_dir"]
            assert again["session"]["resumed"] == 2
        else:  # its agent's code was never recorded: it cannot be told apart, so not trusted
            assert again["run_dir"] == first["run_dir"] + "-v2"
            assert "a run recorded without its identity (by an earlier version)" in \
                warnings_of(caplog)


def test_the_identity_of_a_run_names_what_changed() -> None:
    from tooleval_agents.run.identity import identity_change, run_identity

    a = run_identity({"split": "s", "model": {"spec": "openai:m", "args": {"temperature": 0}}})
    b = run_identity({"split": "s", "model": {"spec": "openai:m", "args": {"temperature": 1}}})
    assert a.digest != b.digest
    assert identity_change(a.parts, b.parts) == 'model: args {"temperature": 0} -> ' \
        '{"temperature": 1}'
    assert run_identity({"split": "s", "agent_cmd": None}) == run_identity({"split": "s"})


STRATEGY = """from langchain_core.runnables import RunnableLambda

from tooleval_agents.contracts import Strategy


class Blank(Strategy):
    benchmark, name = "appbench", "blank33"

    def build(self, ctx):
        async def solve(state):
            reply = await ctx.model.ainvoke("Done?")
            return {"raw_outputs": [reply.text], "prediction": ""}
        return RunnableLambda(solve)
"""


def test_a_strategy_of_the_users_is_keyed_on_its_code(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    from tooleval_agents import registry
    from tooleval_agents.models.chat_models import ScriptedChatModel

    source = tmp_path / "strat33.py"
    kwargs: dict[str, Any] = {"subset": "ss", "strategy": "blank33", "data_dir": SAMPLES,
                              "out": tmp_path / "runs", "progress": False, "cache": False,
                              "limit": 2}

    def run(text: str) -> Any:
        source.write_text(text)
        monkeypatch.setattr(registry, "_STRATEGIES", {})
        registry.register_strategy(_load(source, monkeypatch).Blank())
        return run_experiment("appbench", model=ScriptedChatModel(rules=[], default="Done."),
                              **kwargs)

    first = run(STRATEGY)
    config = json.loads((Path(first.run_dir) / "config.json").read_text())
    assert set(config["identity"]["parts"]["strategy"]["files"]) == {"strat33.py"}
    assert run(STRATEGY).run_dir == first.run_dir  # the same code: resumed
    with caplog.at_level(logging.WARNING):
        edited = run(STRATEGY.replace('"Done?"', '"Done now?"'))
    assert edited.run_dir == first.run_dir + "-v2"
    assert "strategy blank33: its code changed (strat33.py)" in warnings_of(caplog)


GRAPH = """from langchain.agents import create_agent
from langchain_core.tools import tool
from tooleval_agents.models.reference import AnswerKey
from tooleval_agents.models.specs import resolve_model
from tooleval_agents.run.usercode import code_identity


@tool
def weather(city: str, days: int = 1) -> str:
    '''The weather in a city.'''
    return city


model = resolve_model("reference", answer_key=AnswerKey())
print(code_identity(create_agent(model, [weather], system_prompt="x")).code)
print(code_identity(create_agent).code)
"""


def test_what_is_read_of_code_is_the_same_in_every_process(tmp_path: Path) -> None:
    # a set's order, an object's address: neither may change an identity between runs
    script = tmp_path / "graph33.py"
    script.write_text(GRAPH)
    seen = {subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}, timeout=120,
                           check=True).stdout for seed in ("1", "2", "3")}
    assert len(seen) == 1 and len(next(iter(seen)).split()) == 2
