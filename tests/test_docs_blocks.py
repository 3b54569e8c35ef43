"""The code blocks of the README and the documentation pages run as written, and print what
they promise (:mod:`docs_blocks` says how a block is read and run).

Each page's blocks run in page order, in a fresh folder laid out as a fresh clone after the
set-up command: ``.venv``, the bundled ``datasets/``, the main job's ``runs/`` (the README's
first command, run once here), a fresh home and cache, no keys in the environment. Blocks that
need fetched data run the same way against the shared real data, laid out where ``tooleval data
fetch`` puts it; blocks that need a local model run against SmolLM2 when
``TOOLEVAL_REQUIRE_REAL_MODEL`` is set (CI), and skip with the reason otherwise.

The pages' ``tooleval`` commands (``tooleval ...`` and ``.venv/bin/tooleval ...``) start warm,
forked from a server that imported the heavy modules once per worker (:mod:`warm_cli`,
tests/test_warm_cli.py); the set-up command's main job runs the real entry script.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_clis import agent_program
from docs_blocks import NEEDS, REPO, SHOWN, blocks, iter_code_blocks, missing_output, pages, session
from helpers import made_once, needs_bwrap
from local_model import REQUIRE, missing
from user_folder import imported, user_folder
from warm_cli import serving, warm_venv

DRIVER = Path(__file__).with_name("docs_blocks.py")
KEYS = ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
        "TOOLEVAL_DATA_DIR", "LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2")


def page_id(page: Path) -> str:
    return page.relative_to(REPO).as_posix()


def pages_with(needs: str | None) -> list[Path]:
    return [p for p in pages() if any(b.kind and b.needs == needs for b in blocks(p))]


def clone(tmp_path: Path, *, warm: bool = False) -> tuple[Path, dict[str, str]]:
    """A directory laid out as a fresh clone after the set-up command, and its environment:
    also a user's own project (:mod:`user_folder`: their ``evaluators.py``, ``graphs/``...,
    which nothing of ours may import). ``warm``: ``.venv`` is this virtualenv but for
    ``bin/tooleval``, the shim that starts a command warm (:func:`warm_cli.warm_venv`), first
    on the PATH; else ``.venv`` is a link to this virtualenv."""
    work = tmp_path / "clone"
    work.mkdir()
    if warm:
        warm_venv(work / ".venv")
    else:
        (work / ".venv").symlink_to(Path(sys.prefix))
    # A clone's, which pages run (a copy: a sealed agent sees the clone, not where a link
    # would point).
    shutil.copytree(REPO / "examples", work / "examples",
                    ignore=shutil.ignore_patterns("__pycache__"))
    user_folder(work)
    (tmp_path / "home").mkdir()
    env = {k: v for k, v in os.environ.items() if k not in KEYS and not k.startswith("XDG_")}
    bin_folder = work / ".venv" / "bin" if warm else Path(sys.prefix) / "bin"
    env.update(PATH=f"{bin_folder}{os.pathsep}{env.get('PATH', '')}",
               HOME=str(tmp_path / "home"), COLUMNS="100", NO_COLOR="1")
    return work, env


def main_job() -> str:
    """The set-up block's run (the main job) without the install."""
    first = blocks(REPO / "README.md")[0]
    return next(part.strip() for part in first.code.splitlines()[0].split("&&")
                if part.strip().startswith(".venv/bin/tooleval run"))


def run_main_job(folder: Path) -> None:
    """The set-up command's main job, in a clone laid out in ``folder``."""
    work, env = clone(folder)
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", main_job()], cwd=work, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "appbench: 4 runs over 4 splits" in done.stdout  # the main job's table


@pytest.fixture(scope="module")
def main_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``runs/`` as the set-up command leaves it (made once per test session, copied into
    each page's folder)."""
    return made_once(tmp_path_factory, "main-job", run_main_job) / "clone" / "runs"


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, str], Path]]:
    """A warm ``tooleval`` server (:mod:`warm_cli`) for every page this worker runs (the
    variables that point the pages' shims at it, its log): started in the environment of a
    clone, as every page's is but for its home and PATH, which nothing warm reads at import (a
    page whose environment differs where it matters runs cold: the log says so)."""
    folder = tmp_path_factory.mktemp("warm-cli")
    env = clone(folder, warm=True)[1]
    log = folder / "warm-cli.log"
    with serving(log, env) as variables:
        yield variables, log


def run_page(page: Path, main_runs: Path, tmp_path: Path, warm: tuple[dict[str, str], Path],
             needs: str | None = None, home_data: Path | None = None,
             programs: list[Path] | None = None) -> None:
    work, env = clone(tmp_path, warm=True)
    env.update(warm[0])  # its `tooleval` commands start warm
    if programs:  # folders of programs a page's blocks run by name, first on the PATH
        env["PATH"] = os.pathsep.join([*map(str, programs), env["PATH"]])
    shutil.copytree(main_runs, work / "runs", symlinks=True)
    if home_data is not None:  # where 'tooleval data fetch' writes by default
        fetched = tmp_path / "home" / ".cache" / "tooleval-agents" / "data"
        fetched.parent.mkdir(parents=True)
        fetched.symlink_to(home_data)
    done = subprocess.run([sys.executable, str(DRIVER), str(page),
                           *(["--needs", needs] if needs else [])],
                          cwd=work, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, f"{page_id(page)}:\n{done.stderr[-6000:]}"
    assert imported(work) == [], f"{page_id(page)} imported the user's own modules"
    served = warm[1].read_text(encoding="utf-8")
    assert "Traceback" not in served, f"the warm tooleval server failed:\n{served[-3000:]}"


def test_every_code_block_runs_or_says_what_it_needs() -> None:
    every = [b for p in pages() for b in blocks(p)]
    unknown = [b.where for b in every if b.kind is None and b.lang not in SHOWN]
    assert not unknown, f"fences of no known language ({sorted(SHOWN)} are only shown): {unknown}"
    code = list(iter_code_blocks())
    bad = [(b.where, b.needs) for b in code if b.needs is not None and b.needs not in NEEDS]
    assert not bad, f"unknown needs: {bad}; known: {sorted(NEEDS)}"
    marked_shown = [b.where for b in every if b.kind is None and b.needs is not None]
    assert not marked_shown, f"a needs mark on a block that is only shown: {marked_shown}"
    assert blocks(REPO / "README.md")[0].needs == "setup"
    offline = [b for b in code if b.needs is None]
    assert len(offline) >= 30 and len(pages_with(None)) >= 10  # most of the docs run offline
    for block in code:  # a block that sets a key names what it needs; others must not set one
        sets_key = re.search(r"\b(OPENAI|LANGSMITH)_API_KEY=", block.code)
        assert not sets_key or block.needs in ("key", "local-model"), block.where
    for block in (b for b in code if b.kind == "console"):
        assert session(block.code), block.where  # commands first, then what they print


def test_console_output_is_checked_line_by_line() -> None:
    printed = "note: x\n┃ split ┃ n ┃ success ┃\n│ ss    │ 6 │   83.33 │\nresults in runs/: a, b\n"
    assert missing_output(["┃ split ┃ n ┃ success ┃", "results in runs/: a..."], printed) is None
    assert missing_output(["│ ss    │ 6 │   80.00 │"], printed) == "│ ss    │ 6 │   80.00 │"
    assert missing_output(["results in ...", "┃ split ┃ n ┃ success ┃"], printed) is not None


@pytest.mark.parametrize("page", pages_with(None), ids=page_id)
def test_offline_blocks_run_as_written(page: Path, main_runs: Path, tmp_path: Path,
                                      warm: tuple[dict[str, str], Path]) -> None:
    run_page(page, main_runs, tmp_path, warm)


@pytest.mark.parametrize("page", pages_with("fetched-data"), ids=page_id)
def test_blocks_on_fetched_data_run_as_written(page: Path, shared_data: Path, main_runs: Path,
                                               tmp_path: Path,
                                               warm: tuple[dict[str, str], Path]) -> None:
    run_page(page, main_runs, tmp_path, warm, needs="fetched-data", home_data=shared_data)


@pytest.mark.parametrize("page", pages_with("agent-programs"), ids=page_id)
def test_agent_program_blocks_run_as_written(page: Path, main_runs: Path, tmp_path: Path,
                                             warm: tuple[dict[str, str], Path]) -> None:
    programs = [agent_program(p).parent for p in ("claude-code", "codex", "openai-agents")]
    run_page(page, main_runs, tmp_path, warm, needs="agent-programs", programs=programs)


@pytest.mark.parametrize("page", pages_with("sandbox"), ids=page_id)
def test_sandbox_blocks_run_sealed(page: Path, main_runs: Path, tmp_path: Path,
                                   warm: tuple[dict[str, str], Path]) -> None:
    needs_bwrap()
    run_page(page, main_runs, tmp_path, warm, needs="sandbox")


@pytest.mark.real_model
@pytest.mark.parametrize("page", pages_with("local-model"), ids=page_id)
def test_local_model_blocks_run_with_smollm2(page: Path, main_runs: Path, tmp_path: Path,
                                             warm: tuple[dict[str, str], Path]) -> None:
    if not REQUIRE:
        pytest.skip("local-model blocks run only where TOOLEVAL_REQUIRE_REAL_MODEL=1 (CI sets "
                    "it): each page starts SmolLM2 servers and takes minutes of CPU")
    if missing() is not None:
        raise AssertionError(f"TOOLEVAL_REQUIRE_REAL_MODEL is set but {missing()}")
    run_page(page, main_runs, tmp_path, warm, needs="local-model")

