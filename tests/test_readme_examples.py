"""The README's worked examples (add a metric, a strategy, a benchmark) run as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def section_code(title: str) -> str:
    """The Python blocks of a README section, in order, as one script."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    section = text[start:end if end != -1 else None]
    return "\n\n".join(re.findall(r"```python\n(.*?)```", section, re.S))


def test_how_it_is_built_examples_run(tmp_path: Path) -> None:
    code = section_code("How it is built")
    assert "class Capitals(Benchmark)" in code and "class Ask(Strategy)" in code
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "{'exact': 50.0}"
    run_dir = tmp_path / "runs" / "capitals-qa-en-ask-scripted"
    assert (run_dir / "summary.json").is_file() and (run_dir / "examples.jsonl").is_file()


def test_python_example_runs_offline(tmp_path: Path) -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("From Python (offline")
    code = re.search(r"```python\n(.*?)```", text[start:], re.S)
    assert code is not None
    (tmp_path / "datasets").symlink_to(REPO / "datasets")
    result = subprocess.run([sys.executable, "-c", code.group(1)], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    first = result.stdout.splitlines()[0].split()
    assert 0.0 <= float(first[0]) <= 100.0 and first[2].endswith(
        "appbench-plan-mm-hierarchical-noisy-reference_0.3")
    assert "score.success" in result.stdout


def test_own_agent_example_runs_offline(tmp_path: Path) -> None:
    code = section_code("Evaluate your own agent")
    assert "create_agent" in code and "agent=my_agent" in code
    (tmp_path / "datasets").symlink_to(REPO / "datasets")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["100.0", "100.0"]
    assert len(code.strip().splitlines()) <= 12
