"""The README's worked examples (add a metric, a strategy, a benchmark) run as written, in a
folder laid out as a user's own project (``tests/user_folder.py``: modules named
``evaluators``, ``graphs``, ``tests``, ``benchmarks``, ``datasets`` that must stay unimported)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from fake_langsmith import FakeLangSmith, loopback_only
from user_folder import imported, user_folder

from tooleval_agents.run.runner import run_experiment

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
    user_folder(tmp_path)
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert imported(tmp_path) == []
    assert result.stdout.strip().splitlines()[-1] == "{'exact': 50.0}"
    run_dir = tmp_path / "runs" / "capitals-qa-en-ask-scripted"
    assert (run_dir / "summary.json").is_file() and (run_dir / "examples.jsonl").is_file()


def test_python_example_runs_offline(tmp_path: Path) -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("From Python (offline")
    code = re.search(r"```python\n(.*?)```", text[start:], re.S)
    assert code is not None
    user_folder(tmp_path)
    result = subprocess.run([sys.executable, "-c", code.group(1)], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    first = result.stdout.splitlines()[0].split()
    assert 0.0 <= float(first[0]) <= 100.0 and first[2].endswith(
        "appbench-plan-mm-hierarchical-noisy-reference_0.3")
    assert "score.success" in result.stdout
    assert imported(tmp_path) == []


def test_own_agent_example_runs_offline(tmp_path: Path) -> None:
    code = section_code("Evaluate your own agent")
    assert "create_agent" in code and "agent=my_agent" in code
    user_folder(tmp_path)
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["100.0", "100.0"]
    assert imported(tmp_path) == []
    assert len(code.strip().splitlines()) <= 12


# The README's own block, then the agent target it defines, played by the offline reference
# model (built as `tooleval run --model reference` builds it for the tools strategy).
AGENT_RUN = '''
import json
from pathlib import Path
from tooleval_agents.data.langsmith_datasets import to_examples
from tooleval_agents.models.reference import AnswerKey
from tooleval_agents.models.specs import resolve_model
from tooleval_agents.registry import get_benchmark, get_strategy

split = get_benchmark("appbench").split("plan", "ss")
tools = get_strategy("appbench", "tools")
key = AnswerKey.build((tools.input_key(split, e.inputs),
                       tools.gold_answers(split, e.inputs, e.outputs))
                      for e in to_examples(split, Path("datasets")))
played = evaluate(agent_target(resolve_model("reference", answer_key=key)),
                  data="appbench-plan-ss", evaluators=[row], summary_evaluators=[summary])
print(json.dumps([str(results.experiment_id), str(played.experiment_id)]))
'''


def test_own_langsmith_evaluation_runs_against_a_fake_langsmith(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("## In your own LangSmith evaluation")
    push = re.search(r"```bash\n(tooleval [^\n]*)\n```", text[start:])
    assert push is not None and "data push appbench" in push.group(1)
    code = section_code("In your own LangSmith evaluation")
    assert "evaluators_for(" in code and 'data="appbench-plan-ss"' in code
    user_folder(tmp_path)
    with loopback_only(monkeypatch) as refused, FakeLangSmith() as fake:
        env = {**os.environ, "LANGSMITH_API_KEY": fake.api_key,
               "LANGSMITH_ENDPOINT": fake.url, "TOOLEVAL_DATA_DIR": str(tmp_path / "datasets")}
        pushed = subprocess.run([sys.executable, "-m", "tooleval_agents.cli",
                                 *shlex.split(push.group(1))[1:]], cwd=tmp_path, env=env,
                                capture_output=True, text=True, timeout=120)
        assert pushed.returncode == 0, pushed.stderr[-3000:]
        result = subprocess.run([sys.executable, "-c", code + AGENT_RUN], cwd=tmp_path, env=env,
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr[-3000:]
        toy, agent = json.loads(result.stdout.strip().splitlines()[-1])
        assert refused == [] and fake.unknown == []
        assert imported(tmp_path) == []
        with fake.lock:
            feedback = list(fake.feedback.values())
    pooled = {experiment: {f["key"]: f["score"] for f in feedback if f.get("run_id") is None
                           and str(f.get("session_id")) == experiment}
              for experiment in (toy, agent)}
    # The run's metric names and numbers (to LangSmith's 4 decimals).
    run = run_experiment("appbench", subset="ss", model="reference", data_dir=REPO / "datasets",
                         agent="langchain.agents:create_agent", out=tmp_path / "runs",
                         progress=False, cache=False, upload=False)
    measured = {k: v for k, v in run.metrics.items() if v is not None}
    assert pooled[agent] == pytest.approx(measured, abs=1e-4)
    assert pooled[agent]["executed_success"] == 100.0
    assert 0 < pooled[toy]["app_f1"] < 100 and pooled[toy]["success"] < 100
    assert set(pooled[toy]) <= set(run.metrics)
