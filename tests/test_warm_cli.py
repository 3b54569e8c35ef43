"""``tooleval`` started warm (:mod:`warm_cli`) answers as the real entry script does: the same
output, the same exit status, its standard input read, stdout and stderr in the same order; it
falls back to the real script where no server takes the command; the laid-out ``.venv`` is a
working virtualenv. (That a killed shim ends its command is not tested: under pytest-xdist 1 run
in 5 the command outlived its shim; the pages never kill one.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from warm_cli import SCRIPTS, SOCKET, serving, warm_venv

REAL = SCRIPTS / "tooleval"
INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "test", "version": "1"}}}) + "\n"
COMMANDS = {
    "list": (["list"], None),
    "exit-2": (["run", "appbench", "--subset", "nosuch", "--model", "reference"], None),
    "stdin": (["serve", "appbench", "--transport", "stdio", "--subset", "ss"], INITIALIZE),
    "interleaved": (["run", "appbench", "--subset", "ss", "--model", "reference",
                     "--no-cache", "--out", "runs"], None),
}
"""Name -> (arguments, standard input)."""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("warm-home")


@pytest.fixture(scope="module")
def env(home: Path) -> dict[str, str]:
    """The commands' environment (and the server's): a home of their own, no keys."""
    kept = {k: v for k, v in os.environ.items()
            if not k.startswith(("XDG_", "PYTEST_", "LANGSMITH_", "LANGCHAIN_", "OPENAI_"))}
    return {**kept, "HOME": str(home), "COLUMNS": "100", "NO_COLOR": "1"}


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return warm_venv(tmp_path_factory.mktemp("warm-venv") / ".venv")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory,
           env: dict[str, str]) -> Iterator[tuple[dict[str, str], Path]]:
    """A warm server (the variables that point at it, its log)."""
    log = tmp_path_factory.mktemp("warm-server") / "warm-cli.log"
    with serving(log, env) as variables:
        yield variables, log


def tooleval(program: Path, args: list[str], cwd: Path, env: dict[str, str],
             stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """A command, its stdout and stderr merged in the order written."""
    cwd.mkdir(parents=True, exist_ok=True)
    return subprocess.run([str(program), *args], cwd=cwd, env=env, input=stdin, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600,
                          check=False)


def log_lines(log: Path, kind: str) -> list[str]:
    return [line for line in log.read_text(encoding="utf-8").splitlines()
            if line.startswith(kind + " ")]


@pytest.mark.parametrize("name", COMMANDS)
def test_warm_command_answers_as_the_entry_script(name: str, venv: Path, env: dict[str, str],
                                                  server: tuple[dict[str, str], Path],
                                                  tmp_path: Path) -> None:
    args, stdin = COMMANDS[name]
    variables, log = server
    before = len(log_lines(log, "warm"))
    real = tooleval(REAL, args, tmp_path / "real", env, stdin)
    warm = tooleval(venv / "bin" / "tooleval", args, tmp_path / "warm", {**env, **variables},
                    stdin)
    assert len(log_lines(log, "warm")) == before + 1  # it did start warm
    assert (warm.returncode, warm.stdout) == (real.returncode, real.stdout)
    expected = {"list": 0, "exit-2": 2, "stdin": 0, "interleaved": 0}[name]
    assert real.returncode == expected, real.stdout[-2000:]
    if name == "stdin":  # the server answered the request it read
        assert '"serverInfo":{"name":"tooleval"' in warm.stdout
    if name == "interleaved":  # stderr's note first, then stdout's table
        note, table = warm.stdout.index("note: no appbench data"), warm.stdout.index("examples=6")
        assert note < table
        assert (tmp_path / "warm" / "runs").is_dir()  # in the caller's folder


def test_without_a_server_the_shim_runs_the_entry_script(venv: Path, env: dict[str, str],
                                                         tmp_path: Path) -> None:
    real = tooleval(REAL, ["list"], tmp_path, env)
    assert real.returncode == 0
    for variables in ({}, {SOCKET: str(tmp_path / "no-such-socket")}):
        cold = tooleval(venv / "bin" / "tooleval", ["list"], tmp_path, {**env, **variables})
        assert (cold.returncode, cold.stdout) == (0, real.stdout)


def test_an_environment_the_server_was_not_started_in_runs_cold(
        venv: Path, env: dict[str, str], server: tuple[dict[str, str], Path],
        tmp_path: Path) -> None:
    variables, log = server
    changed = {**env, **variables, "PYTHONHASHSEED": "7"}  # read as the interpreter starts
    done = tooleval(venv / "bin" / "tooleval", ["list"], tmp_path, changed)
    assert done.returncode == 0 and "appbench" in done.stdout
    assert any("PYTHONHASHSEED" in line for line in log_lines(log, "cold"))


def test_the_laid_out_virtualenv_works(venv: Path, env: dict[str, str], tmp_path: Path) -> None:
    python = subprocess.run([str(venv / "bin" / "python"), "-c",
                             "import sys, tooleval_agents; print(sys.prefix)"], cwd=tmp_path,
                            env=env, capture_output=True, text=True, check=False)
    assert python.returncode == 0, python.stderr
    assert Path(python.stdout.strip()) == venv  # a virtualenv of its own, the real one's files
    pip = subprocess.run([str(venv / "bin" / "pip"), "--version"], env=env,
                         capture_output=True, text=True, check=False)
    assert pip.returncode == 0 and "pip" in pip.stdout, pip.stderr
    assert (venv / "bin" / "tooleval").read_text(encoding="utf-8").startswith(
        f"#!{sys.executable} -IS")
