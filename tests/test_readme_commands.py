"""The README's shell commands run as written.

Every ``bash`` block of the README either runs offline as it stands, or the line before it
says what it needs (``<!-- needs: key -->``: one of :data:`NEEDS`). The offline blocks run in
README order, with bash, in one fresh directory that looks like a fresh clone (``.venv``, the
bundled ``datasets/``), with a fresh cache and no keys in the environment: ``runs/`` grows as a
reader's would, so ``compare`` and ``view`` find the runs made above them. The blocks that
need fetched data run the same way against the shared real data, laid out where ``tooleval
data fetch`` puts it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NEEDS = {
    "setup": "the set-up command itself (CI runs it on a fresh machine)",
    "key": "a provider or LangSmith key",
    "network": "downloads from the internet",
    "local-model": "a model server on this machine (see 'A local model')",
    "build": "a from-source build of llama.cpp (minutes)",
    "your-files": "files of your own (your answers, your queries)",
    "fetched-data": "data fetched by 'tooleval data fetch' (run here against the shared data)",
}
MARK = re.compile(r"<!-- needs: ([a-z-]+) -->\s*$")
KEYS = ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
        "TOOLEVAL_DATA_DIR", "LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2")


@dataclass(frozen=True)
class Block:
    """One ``bash`` block of the README."""

    line: int
    """The line of its opening fence."""
    code: str
    needs: str | None
    """What it needs beyond a fresh clone (a key of :data:`NEEDS`); None: runs offline."""


def blocks(page: Path = REPO / "README.md") -> list[Block]:
    """The ``bash`` blocks of a page (the README, or a page of ``docs/``)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() in ("```bash", "```sh", "```shell"):
            start, end = i, i + 1
            while not lines[end].startswith("```"):
                end += 1
            before = next((x for x in reversed(lines[:start]) if x.strip()), "")
            mark = MARK.search(before)
            found.append(Block(start + 1, "\n".join(lines[start + 1:end]),
                               mark.group(1) if mark else None))
            i = end
        i += 1
    return found


def clone(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A directory laid out as a fresh clone after the set-up command, and its environment."""
    work = tmp_path / "clone"
    work.mkdir()
    (work / ".venv").symlink_to(Path(sys.prefix))
    (work / "datasets").symlink_to(REPO / "datasets")
    (tmp_path / "home").mkdir()
    env = {k: v for k, v in os.environ.items() if k not in KEYS and not k.startswith("XDG_")}
    env.update(PATH=f"{Path(sys.prefix) / 'bin'}{os.pathsep}{env.get('PATH', '')}",
               HOME=str(tmp_path / "home"), COLUMNS="100", NO_COLOR="1")
    return work, env


def main_job() -> Block:
    """The set-up block's run (the main job), without the install: what a reader has in
    ``runs/`` before the rest of the README."""
    first = blocks()[0]
    command = next(part.strip() for part in first.code.splitlines()[0].split("&&")
                   if part.strip().startswith(".venv/bin/tooleval run"))
    return Block(first.line, command, None)


def run_blocks(chosen: list[Block], work: Path, env: dict[str, str]) -> None:
    for block in chosen:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", block.code], cwd=work, env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, (
            f"README block at line {block.line} exited {done.returncode}:\n{block.code}\n"
            f"--- stderr ---\n{done.stderr[-3000:]}")


def test_every_block_runs_offline_or_says_what_it_needs() -> None:
    found = blocks()
    assert len(found) >= 15
    unknown = [(b.line, b.needs) for b in found if b.needs is not None and b.needs not in NEEDS]
    assert not unknown, f"unknown needs: {unknown}; known: {sorted(NEEDS)}"
    assert found[0].needs == "setup"
    assert sum(b.needs is None for b in found) >= 5  # most of the tour runs offline
    for block in found:  # a block that needs a key names it, others must not set one
        sets_key = re.search(r"\b(OPENAI|LANGSMITH)_API_KEY=", block.code)
        assert not sets_key or block.needs in ("key", "local-model"), block.line


def test_offline_blocks_run_as_written(tmp_path: Path) -> None:
    work, env = clone(tmp_path)
    offline = [b for b in blocks() if b.needs is None]
    run_blocks([main_job(), *offline], work, env)
    assert any((work / "runs").iterdir())
    assert not (work / "report").exists() or any((work / "report").iterdir())


def test_blocks_on_fetched_data_run_as_written(shared_data: Path, tmp_path: Path) -> None:
    work, env = clone(tmp_path)
    fetched = tmp_path / "home" / ".cache" / "tooleval-agents" / "data"
    fetched.parent.mkdir(parents=True)
    fetched.symlink_to(shared_data)  # where 'tooleval data fetch' writes by default
    chosen = [b for b in blocks() if b.needs == "fetched-data"]
    if not chosen:
        pytest.skip("no README block needs fetched data")
    run_blocks(chosen, work, env)
