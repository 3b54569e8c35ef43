"""Issue 44 item 4, "Identity of what is measured, all of it": what a run reads at run time that
shapes what the model is asked is part of its identity, so changing it is a new run (a
numbered sibling, said in one line), never answered from the old results.

* Each file a run reads as it builds its workflow (a demonstration, a toolset, few-shot
  demonstrations and their pool, the official prompts' upstream files, pinned or not): changed,
  the next run goes to ``-v2``, says which file changed, and its prompts hold the change.
* An agent command (``--agent-cmd``): the files it names, the modules its Python script
  imports, its folder's lock file, and ``--agent-version``.
"""

from __future__ import annotations

import json
import logging
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import LISTING, cli

from tooleval_agents.data import upstream
from tooleval_agents.data.fetch import source_manifest
from tooleval_agents.data.inputs import file_digest, note_input, noting
from tooleval_agents.evaluators.ultratool.judge.official import official_judge_prompts
from tooleval_agents.run.setup import read_late
from tooleval_agents.run.usercode import command_files

MARK = "MARK45"
"""What an edit writes into a file: found in the prompts of the run after the edit."""


def _json_lines(edit: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    """An edit of every record of a JSON Lines file."""
    def apply(path: Path) -> None:
        records = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
        for record in records:
            edit(record)
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                        encoding="utf-8")
    return apply


def _json(edit: Callable[[Any], None]) -> Callable[[Path], None]:
    def apply(path: Path) -> None:
        value = json.loads(path.read_text(encoding="utf-8"))
        edit(value)
        path.write_text(json.dumps(value, ensure_ascii=False, indent=2), encoding="utf-8")
    return apply


def _mark_tool(record: dict[str, Any]) -> None:
    record["toolset"][0]["description"] += f" {MARK}"


def _mark_input(record: dict[str, Any]) -> None:
    record["input"] = f"{MARK} {record['input']}"


def _mark_question(record: dict[str, Any]) -> None:
    record["question"] = f"{MARK} {record['question']}"


def _mark_demos(samples: list[dict[str, Any]]) -> None:
    """Every sample but the first (the example run: its demonstrations are the others)."""
    for sample in samples[1:]:
        sample["input"] = f"{MARK} {sample['input']}"


def _mark_apps(apps: dict[str, Any]) -> None:
    for desc in apps.values():
        desc["desc"] += f" {MARK}"


def _mark_text(path: Path) -> None:
    path.write_text(path.read_text(encoding="utf-8").replace("{app_api_list}",
                                                             "{app_api_list} " + MARK, 1),
                    encoding="utf-8")


@dataclass(frozen=True)
class Input:
    """A file a run reads at run time, and a run that reads it."""

    args: tuple[str, ...]
    file: str
    """Its path in the data directory (the label the identity gives it)."""
    edit: Callable[[Path], None]
    official: bool = False
    """An official prompt file: the run reads the shared upstream copy."""


INPUTS = {
    "ultratool one_shot: the task's demonstration": Input(
        ("ultratool", "--task", "planning", "--lang", "en"),
        "ultratool/data/English-dataset/example/planning.json", _json(_mark_input)),
    "ultratool tools: the toolsets an agent is shown": Input(
        ("ultratool", "--task", "raw", "--lang", "en", "--strategy", "tools"),
        "ultratool/data/English-dataset/test_set/tool_selection.json",
        _json_lines(_mark_tool)),
    "ultratool plan_create_use: a stage's demonstration": Input(
        ("ultratool", "--task", "raw", "--lang", "en", "--strategy", "plan_create_use"),
        "ultratool/data/English-dataset/example/tool_usage.json", _json(_mark_question)),
    "appbench few_shot: the demonstrations": Input(
        ("appbench", "--category", "ss", "--strategy", "few_shot"),
        "appbench/data/test/test_ss.json", _json(_mark_demos)),
    "appbench official: the app descriptions (not pinned)": Input(
        ("appbench", "--category", "ss", "--strategy", "flat", "--prompts", "official"),
        "appbench/derived/apps_apis.json", _json(_mark_apps), official=True),
    "appbench official: the planning template (pinned)": Input(
        ("appbench", "--category", "ss", "--strategy", "flat", "--prompts", "official"),
        "appbench/code/prompts/appbench/api_for_all_agent.txt", _mark_text, official=True),
}
OFFICIAL_FILES = ("appbench/code/agents/meta_agent.py",
                  "appbench/code/prompts/appbench/api_for_all_agent.txt",
                  "appbench/derived/apps_apis.json", "appbench/data/test/test_ss.json")


def _data(tmp_path: Path, samples: Path, official: bool, shared: Path | None) -> Path:
    data = tmp_path / "data"
    if not official:
        shutil.copytree(samples, data)
        return data
    assert shared is not None
    for name in OFFICIAL_FILES:
        (data / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(shared / name, data / name)
    return data


def _repin(monkeypatch: pytest.MonkeyPatch, data: Path, name: str) -> None:
    """Pin the edited upstream file, as a project release pinning another upstream commit
    would (a file that differs from its pin is refused)."""
    source, path = name.split("/", 1)
    entry = source_manifest(source)
    sha = file_digest(data / name)
    files = [f.model_copy(update={"sha256": sha}) if f.path == path else f for f in entry.files]
    repinned = entry.model_copy(update={"files": files})
    monkeypatch.setattr(upstream, "source_manifest", lambda s: repinned if s == source
                        else source_manifest(s))


def _prompts(run_dir: Path) -> str:
    return (run_dir / "prompts.jsonl").read_text(encoding="utf-8")


@pytest.mark.parametrize("case", list(INPUTS), ids=list(INPUTS))
def test_a_changed_input_is_a_new_run_said_in_one_line(
        case: str, samples: Path, tmp_path: Path, request: pytest.FixtureRequest,
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    given = INPUTS[case]
    shared = request.getfixturevalue("shared_data") if given.official else None
    data = _data(tmp_path, samples, given.official, shared)
    command = ("run", *given.args, "--model", "reference", "--limit", "1", "--data-dir", data,
               "--out", tmp_path / "runs", "--no-cache", "--json")
    first = cli(*command)
    assert first.exit_code == 0, first.output
    before = Path(json.loads(first.stdout)["run_dir"])
    inputs = json.loads((before / "config.json").read_text())["identity"]["parts"]["inputs"]
    assert inputs[given.file] == file_digest(data / given.file)[:16]  # read, and known
    given.edit(data / given.file)
    if given.file.startswith("appbench/code/"):
        _repin(monkeypatch, data, given.file)
    with caplog.at_level(logging.WARNING):
        edited = cli(*command)
    assert edited.exit_code == 0, edited.output
    after = Path(json.loads(edited.stdout)["run_dir"])
    assert after == before.with_name(before.name + "-v2")
    said = [r.getMessage() for r in caplog.records if "something else" in r.getMessage()]
    assert said == [f"{before} holds a run of something else (a file it reads changed: "
                    f"{given.file}): this run's results are in {after}"]
    assert MARK in _prompts(after) and MARK not in _prompts(before)  # it changed the request
    assert not [r for r in caplog.records if "after its identity was fixed" in r.getMessage()]


def test_the_official_judge_templates_are_noted(shared_data: Path) -> None:
    # the judge's requests come from evaluation/config.py (a run's scorer is built while the
    # run notes what it reads, as its workflow is)
    with noting() as read:
        official_judge_prompts(shared_data)
    assert list(read) == ["ultratool/evaluation/config.py"]
    with noting() as again:  # cached: the same file noted again
        official_judge_prompts(shared_data)
    assert again == read


# ----------------------------------------------------------------------------- agent commands

AGENT = f"""import os
import sys
from helper45 import ANSWER

sys.path.append({str(LISTING.parent)!r})
from listing_agent import reach  # an agent that never reached its tools is agent_no_tools

sys.stdin.read()
reach(os.environ["TOOLEVAL_MCP_URL"], os.environ["TOOLEVAL_MCP_TOKEN"])
print(ANSWER)
"""


def test_an_agent_commands_files_and_version_are_its_identity(
        samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.chdir(tmp_path)
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "agent.py").write_text(AGENT)
    (agent / "helper45.py").write_text('ANSWER = "done"\n')
    (agent / "requirements.txt").write_text("httpx==0.28.1\n")
    command = f"{sys.executable} agent/agent.py"

    def run(*more: str) -> tuple[Path, str]:
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            result = cli("run", "appbench", "--category", "ss", "--limit", "1", "--agent-cmd",
                         command, *more, "--data-dir", samples, "--out", "runs", "--no-cache",
                         "--json")
        assert result.exit_code == 0, result.output
        said = [r.getMessage() for r in caplog.records if "something else" in r.getMessage()]
        return Path(json.loads(result.stdout)["run_dir"]), " ".join(said)

    first, _ = run()
    files = json.loads((first / "config.json").read_text())["identity"]["parts"][
        "agent_cmd"]["files"]
    assert {"agent/agent.py", "agent/helper45.py", "agent/requirements.txt"} <= set(files)
    assert run() == (first, "")  # the same files: the same run, resumed
    (agent / "agent.py").write_text(AGENT + "# edited\n")
    edited, said = run()
    assert edited == first.with_name(first.name + "-v2")
    assert said == (f"{first} holds a run of something else (agent command agent: its code "
                    f"changed (agent/agent.py)): this run's results are in {edited}")
    for name, text in (("helper45.py", 'ANSWER = "done."\n'),
                       ("requirements.txt", "httpx==0.28.0\n")):
        (agent / name).write_text(text)
        again, said = run()
        assert again.name.startswith(first.name + "-v") and again != edited
        assert "its code changed (" in said and f"agent/{name}" in said
        edited = again
    versioned, said = run("--agent-version", "1.2.0")
    assert versioned != edited and 'agent version: none -> "1.2.0"' in said
    assert run("--agent-version", "1.2.0")[0] == versioned  # resumed


def test_the_files_an_agent_command_names(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "dist").mkdir(parents=True)
    (project / "dist" / "main.js").write_text("console.log('hi')")
    (project / "package-lock.json").write_text("{}")
    (project / "pkg").mkdir()
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "run.py").write_text("from pkg import tools\n")
    (project / "pkg" / "tools.py").write_text("X = 1\n")
    (project / "uv.lock").write_text("")
    (project / "agent.toml").write_text("")

    def named(command: str) -> set[str]:
        return set(command_files(command, project))

    # a lock file in the script's folder or the nearest parent that has one
    assert named("node dist/main.js {url}") == {"dist/main.js", "package-lock.json",
                                                "uv.lock"}
    # a string run by a shell, an option's value, python -m and the modules it imports
    assert named("sh -c 'python -m pkg.run --config=agent.toml'") == {
        "pkg/run.py", "pkg/__init__.py", "pkg/tools.py", "agent.toml", "package-lock.json",
        "uv.lock"}
    assert named("claude -p {instruction}") == set()  # a program on PATH: by its name
    assert named("python 'unbalanced") == set()  # the shell will say what is wrong
    before = command_files("node dist/main.js", project)
    (project / "package-lock.json").write_text('{"lockfileVersion": 3}')
    assert command_files("node dist/main.js", project) != before


def test_an_input_read_after_the_identity_is_fixed_is_said(
        caplog: pytest.LogCaptureFixture) -> None:
    # every reader of ours reads as the workflow is built; one that read later would be said
    with caplog.at_level(logging.WARNING), read_late({"a.json": "1"}, "run-x"):
        note_input("a.json", "1")  # known to the identity, at that digest
        note_input("b.json", "2")
    assert [r.getMessage() for r in caplog.records] == [
        "run-x: read b.json as it ran, after its identity was fixed: a change to it would "
        "not be noticed"]
