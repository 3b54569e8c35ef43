"""tooleval-agents in a user's own project, which holds modules named as the repository's
top-level folders are (``evaluators.py``, ``graphs/``, ``tests/``, ``benchmarks.py``,
``datasets/``: :mod:`user_folder`), and the wheel's one import name.

* The blocks of the README and the documentation pages run in such a folder:
  ``tests/test_docs_blocks.py`` and ``tests/test_docs_examples.py`` run them there, and check
  that none of the user's modules was imported.
* A plugin benchmark and an ``--agent file.py:factory`` run there with Python started in the
  folder (``python -m tooleval_agents``): the folder comes first on ``sys.path``, where a
  user's ``graphs`` would shadow an installed top-level ``graphs`` (or be shadowed by it).
* The wheel lists ``tooleval_agents`` alone in ``top_level.txt`` and holds nothing outside it;
  installed from the wheel, the package runs in a user's folder too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from test_plugin_benchmark import PACKAGE, plugin_environment
from user_folder import imported, user_folder

REPO = Path(__file__).resolve().parents[1]
TOOLEVAL = Path(sys.executable).parent / "tooleval"
"""The console script, as a user types ``tooleval``."""


def python_in(folder: Path, *args: str | Path, env: dict[str, str] | None = None,
              ) -> subprocess.CompletedProcess[str]:
    """Python started in ``folder`` (``python -m ...``: the folder first on ``sys.path``)."""
    environ = {**(env or os.environ), "XDG_CACHE_HOME": str(folder / ".cache")}
    environ.pop("TOOLEVAL_DATA_DIR", None)
    return subprocess.run([sys.executable, *map(str, args)], cwd=folder, env=environ,
                          capture_output=True, text=True, timeout=600)


def test_the_check_sees_a_user_module_imported(tmp_path: Path) -> None:
    folder = user_folder(tmp_path)
    done = python_in(folder, "-c", "import evaluators, graphs, tests, benchmarks, datasets")
    assert done.returncode == 0, done.stderr
    assert sorted(imported(folder)) == ["benchmarks", "datasets", "evaluators", "graphs",
                                        "tests"]


def test_a_plugin_benchmark_runs_in_a_user_folder(tmp_path: Path) -> None:
    folder = user_folder(tmp_path / "project")
    (tmp_path / "metadata").mkdir()
    env = plugin_environment(tmp_path / "metadata")
    data = PACKAGE / "mirror"  # laid out as `tooleval data fetch trivia` leaves it
    for model in ("reference", "noisy-reference:0.9"):
        done = python_in(folder, "-m", "tooleval_agents", "run", "trivia", "--lang", "fr",
                         "--model", model, "--data-dir", data, "--out", "runs", "--no-cache",
                         "--json", env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        correct = json.loads(done.stdout)["metrics"]["correct"]
        assert correct == 100.0 if model == "reference" else correct < 100.0
    compared = python_in(folder, "-m", "tooleval_agents", "compare", "runs", "--json", env=env)
    assert compared.returncode == 0, compared.stderr[-3000:]
    assert len(json.loads(compared.stdout)["runs"]) == 2
    assert imported(folder) == []


AGENT = '''from langchain.agents import create_agent


def build(model, tools):
    return create_agent(model, tools, system_prompt="Call the tools the request needs.")
'''
TEAM_AGENT = '''from langchain.agents import create_agent

from graphs import NODES  # the user's own package, beside this file


def build(model, tools):
    return create_agent(model, tools, system_prompt=f"Work in steps: {', '.join(NODES)}.")
'''


def test_an_agent_file_runs_in_a_user_folder(tmp_path: Path) -> None:
    folder = user_folder(tmp_path)
    (folder / "my_agent.py").write_text(AGENT, encoding="utf-8")
    (folder / "team_agent.py").write_text(TEAM_AGENT, encoding="utf-8")
    env = {**os.environ, "XDG_CACHE_HOME": str(folder / ".cache")}
    env.pop("TOOLEVAL_DATA_DIR", None)
    typed = subprocess.run([TOOLEVAL, "run", "appbench", "--subset", "ss", "--model",
                            "reference", "--agent", "my_agent.py:build", "--out", "runs",
                            "--no-cache", "--json"], cwd=folder, env=env, capture_output=True,
                           text=True, timeout=600)
    assert typed.returncode == 0, typed.stderr[-3000:]
    assert imported(folder) == []
    # Python started in the folder: the agent's `from graphs import NODES` gets the user's
    # package while tooleval-agents runs its own workflows (tooleval_agents.graphs).
    team = python_in(folder, "-m", "tooleval_agents", "run", "appbench", "--subset", "ss",
                     "--model", "reference", "--agent", "team_agent.py:build", "--out", "runs",
                     "--no-cache", "--json")
    assert team.returncode == 0, team.stderr[-3000:]
    assert imported(folder) == ["graphs"]  # by the user's agent, not by tooleval-agents
    for done in (typed, team):
        row = json.loads(done.stdout)
        assert row["metrics"]["executed_success"] == 100.0
        assert row["metrics"]["trajectory_strict"] == 100.0
    names = sorted(p.name for p in (folder / "runs").iterdir())
    assert len(names) == 2 and "my_agent" in names[0] and "team_agent" in names[1]


def _setuptools_builds_this_project() -> bool:
    try:
        return int(version("setuptools").split(".")[0]) >= 77  # the build-system requirement
    except PackageNotFoundError:
        return False


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built once from a copy of the source (the build writes beside the
    sources), with the setuptools installed here: no download."""
    if not _setuptools_builds_this_project():
        pytest.skip("setuptools >= 77 is not installed (the dev extra has it): "
                    "pip install -e '.[dev]'")
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    for folder in ("tooleval_agents", "graphs", "evaluators", "datasets", "examples"):
        shutil.copytree(REPO / folder, source / folder, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for file in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / file, source / file)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                            "--no-build-isolation", "--no-index", "--wheel-dir", root / "dist",
                            source], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-3000:]
    (found,) = (root / "dist").glob("tooleval_agents-*.whl")
    return found


def test_the_wheel_installs_one_import_name(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (top_level,) = [n for n in names if n.endswith(".dist-info/top_level.txt")]
        assert archive.read(top_level).decode().split() == ["tooleval_agents"]
    assert {n.split("/")[0] for n in names} == {"tooleval_agents", top_level.split("/")[0]}
    assert {"tooleval_agents/graphs/appbench/planning.py",
            "tooleval_agents/evaluators/trajectory.py",
            "tooleval_agents/appbench/samples/appbench/data/test/test_ss.json",
            # the presets, and the example agent --agent-preset openai-agents runs
            "tooleval_agents/mcp/presets/claude_code.py",
            "tooleval_agents/examples/openai_agents_sdk.py"} <= set(names)


def test_the_installed_wheel_runs_in_a_user_folder(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                                "--no-index", "--target", site, wheel], capture_output=True,
                               text=True, timeout=600)
    assert installed.returncode == 0, installed.stderr[-3000:]
    folder = user_folder(tmp_path / "project")
    (folder / "datasets" / "appbench").unlink()  # no samples but the wheel's own
    env = {**os.environ, "PYTHONPATH": str(site)}  # the wheel's package before this checkout
    done = python_in(folder, "-m", "tooleval_agents", "run", "appbench", "--subset", "ss",
                     "--model", "reference", "--out", "runs", "--no-cache", "--json", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["metrics"]["success"] == 100.0
    config = json.loads(next((folder / "runs").glob("*/config.json")).read_text())
    assert Path(config["dataset"]["data_dir"]).is_relative_to(site)  # the wheel's samples
    agent = python_in(folder, "-c", "from tooleval_agents.mcp.presets.openai_agents import "
                      "script; print(script())", env=env)  # --agent-preset openai-agents's
    assert Path(agent.stdout.strip()).is_relative_to(site), agent.stderr[-2000:]
    assert imported(folder) == []
