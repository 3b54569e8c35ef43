"""The LangSmith blocks (marked ``needs: key``) run as written against a fake LangSmith on
127.0.0.1: the push command, the docs' ``evaluate`` recipe with its toy target and with the
``create_agent`` target played by the offline reference model, and the README tour's block.
The numbers LangSmith receives are the run's own (to its 4 decimals)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from docs_blocks import REPO, section_blocks
from fake_langsmith import FakeLangSmith, loopback_only
from user_folder import imported, user_folder

from tooleval_agents.run.runner import run_experiment

PAGE = REPO / "docs" / "langsmith.md"


# The docs' own block, then the agent target it defines, played by the offline reference
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

README_RUN = '''
import json
print(json.dumps(str(results.experiment_id)))
'''


def test_langsmith_blocks_run_against_a_fake_langsmith(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (push,) = section_blocks(PAGE, "In your own LangSmith evaluation", "bash")
    assert push.startswith("tooleval data push appbench")
    code = "\n\n".join(section_blocks(PAGE, "In your own LangSmith evaluation", "python"))
    assert "evaluators_for(" in code and 'data="appbench-plan-ss"' in code
    (tour,) = [code for code in section_blocks(REPO / "README.md", "A five-minute tour",
                                               "python") if "evaluators_for(" in code]
    user_folder(tmp_path)
    with loopback_only(monkeypatch) as refused, FakeLangSmith() as fake:
        env = {**os.environ, "LANGSMITH_API_KEY": fake.api_key,
               "LANGSMITH_ENDPOINT": fake.url, "TOOLEVAL_DATA_DIR": str(tmp_path / "datasets")}
        pushed = subprocess.run([sys.executable, "-m", "tooleval_agents.cli",
                                 *shlex.split(push)[1:]], cwd=tmp_path, env=env,
                                capture_output=True, text=True, timeout=120)
        assert pushed.returncode == 0, pushed.stderr[-3000:]
        result = subprocess.run([sys.executable, "-c", code + AGENT_RUN], cwd=tmp_path, env=env,
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr[-3000:]
        toy, agent = json.loads(result.stdout.strip().splitlines()[-1])
        readme = subprocess.run([sys.executable, "-c", tour + README_RUN], cwd=tmp_path,
                                env=env, capture_output=True, text=True, timeout=300)
        assert readme.returncode == 0, readme.stderr[-3000:]
        tour_run = json.loads(readme.stdout.strip().splitlines()[-1])
        assert refused == [] and fake.unknown == []
        assert imported(tmp_path) == []
        with fake.lock:
            feedback = list(fake.feedback.values())
    pooled = {experiment: {f["key"]: f["score"] for f in feedback if f.get("run_id") is None
                           and str(f.get("session_id")) == experiment}
              for experiment in (toy, agent, tour_run)}
    # The run's metric names and numbers (to LangSmith's 4 decimals).
    run = run_experiment("appbench", subset="ss", model="reference", data_dir=REPO / "datasets",
                         agent="langchain.agents:create_agent", out=tmp_path / "runs",
                         progress=False, cache=False, upload=False)
    measured = {k: v for k, v in run.metrics.items() if v is not None}
    assert pooled[agent] == pytest.approx(measured, abs=1e-4)
    assert pooled[agent]["executed_success"] == 100.0
    assert 0 < pooled[toy]["app_f1"] < 100 and pooled[toy]["success"] < 100
    assert pooled[tour_run] == pooled[toy]  # the README's toy target is the docs' one
    assert set(pooled[toy]) <= set(run.metrics)
