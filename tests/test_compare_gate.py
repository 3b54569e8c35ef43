"""``tooleval compare --fail-if-worse METRIC[:MARGIN]`` and ``Comparison.worse``: the second
run (new) against the first (baseline), by the paired bootstrap interval of their difference
and the metric's direction; worse exits 1 saying by how much, not worse 0, a gate that cannot
tell (n/a, not paired) 3, a bad metric, margin or number of runs 2. And the CI recipe
(docs/ci/tooleval-gate.yml): its shell steps run as a workflow would, on a pull request whose
agent lost its tools (the gate fails) and on one that kept them (it passes)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import REPO, cli
from run_dirs import appbench_gold, appbench_noisy, empty, make_run

from tooleval_agents import GateVerdict, compare
from tooleval_agents.results.gate import EXIT_CODES

WORKFLOW = REPO / "docs" / "ci" / "tooleval-gate.yml"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Finished AppBench runs over the samples: on SS the gold answers, half of them
    corrupted, none; the gold on SM (not paired with the others)."""
    root = tmp_path_factory.mktemp("gate")
    samples = REPO / "datasets"
    return {"gold": make_run(root, "gold", data_dir=samples, answer=appbench_gold),
            "noisy": make_run(root, "noisy", data_dir=samples, answer=appbench_noisy(0.5),
                              model="noisy-reference:0.5"),
            "empty": make_run(root, "empty", data_dir=samples, answer=empty, model="empty"),
            "other": make_run(root, "other", data_dir=samples, answer=appbench_gold,
                              subset="sm")}


def gate(*args: Any) -> tuple[int, str]:
    result = cli("compare", *args, "--n-boot", "200")
    return result.exit_code, " ".join(result.output.split())


def test_a_worse_new_run_exits_1_and_says_by_how_much(runs: dict[str, Path]) -> None:
    code, said = gate(runs["gold"], runs["empty"], "--fail-if-worse", "success")
    assert code == 1, said
    assert ("gate: success (higher is better, margin 0.00): new empty is worse than baseline "
            "reference by 100.00 (new - baseline -100.00, 95% CI [-100.00, -100.00], 6 "
            "examples both scored)") in said
    # the same pair the other way round: the new run is better, not worse
    code, said = gate(runs["empty"], runs["gold"], "--fail-if-worse", "success")
    assert code == 0 and "new reference is not worse than baseline empty" in said
    # the same run against itself is not worse; a margin wider than the loss passes too
    assert gate(runs["gold"], runs["gold"], "--fail-if-worse", "success")[0] == 0
    assert gate(runs["gold"], runs["empty"], "--fail-if-worse", "success:100")[0] == 0


def test_a_metric_where_lower_is_better_is_worse_when_it_rises(runs: dict[str, Path]) -> None:
    comparison = compare([runs["gold"], runs["noisy"]], n_boot=200)
    errors = comparison.table.loc["value_error_independent"]
    assert errors.iloc[1] > errors.iloc[0]  # the corrupted answers hold wrong values
    verdict = comparison.worse("value_error_independent")
    assert verdict.direction == "lower" and verdict.diff is not None and verdict.diff > 0
    assert verdict.worse == (verdict.ci_low is not None and verdict.ci_low > 0)
    assert comparison.worse("success").direction == "higher"


def test_a_gate_that_cannot_tell_exits_3(runs: dict[str, Path]) -> None:
    # edge_f1 has nothing to count in SS (no call depends on another): n/a, never a pass
    code, said = gate(runs["gold"], runs["noisy"], "--fail-if-worse", "edge_f1")
    assert code == 3, said
    assert "cannot tell whether new noisy-reference:0.5 is worse than baseline reference: " \
        "edge_f1 is n/a (nothing to count)" in said
    # runs over other splits are not paired
    code, said = gate(runs["gold"], runs["other"], "--fail-if-worse", "success")
    assert code == 3 and "cannot tell whether new sm n=5 is worse than baseline ss n=6: " \
        "they are over different splits" in said, said


@pytest.mark.parametrize(("args", "words"), [
    (["--fail-if-worse", "tool_calls"], "metric 'tool_calls' has no direction"),
    (["--fail-if-worse", "value_error_time_share"], "has no direction"),
    (["--fail-if-worse", "sucess"], "did you mean 'success'?"),
    (["--fail-if-worse", "success:-1"], "MARGIN a number 0 or more"),
    (["--fail-if-worse", "success:x"], "MARGIN a number 0 or more"),
    (["--fail-if-worse", "success", "--n-boot", "0"], "--n-boot must be 1 or more"),
])
def test_a_bad_gate_is_a_usage_error(runs: dict[str, Path], args: list[str],
                                     words: str) -> None:
    result = cli("compare", runs["gold"], runs["noisy"], *args)
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and said.startswith("error: ") and words in said, said


def test_the_gate_compares_two_runs(runs: dict[str, Path]) -> None:
    code, said = gate(runs["gold"], runs["noisy"], runs["empty"], "--fail-if-worse", "success")
    assert code == 2 and "compares two runs, the baseline first and the new one second; " \
        "got 3" in said


def test_the_gate_in_json_and_from_python(runs: dict[str, Path]) -> None:
    result = cli("compare", runs["gold"], runs["empty"], "--n-boot", "200", "--json",
                 "--fail-if-worse", "success", "-m", "app_f1")
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["gate"]["status"] == "worse" and payload["gate"]["exit_code"] == 1
    assert payload["gate"]["diff"] == -100.0 and "success" in payload["metrics"]
    comparison = compare([runs["gold"], runs["empty"]], n_boot=200)
    verdict = comparison.worse("success", margin=2.0)
    assert isinstance(verdict, GateVerdict) and verdict.worse and verdict.exit_code == 1
    labels = [r.label for r in comparison.runs]
    turned = comparison.worse("success", baseline=labels[1], new=labels[0])
    assert turned.status == "not_worse" and turned.diff == 100.0
    assert EXIT_CODES == {"not_worse": 0, "worse": 1, "undecided": 3}  # as docs/running.md
    with pytest.raises(ValueError, match="has no direction"):
        comparison.worse("agent_turns")
    with pytest.raises(KeyError, match="unknown metric"):
        comparison.worse("sucess")


# ----------------------------------------------------------------------------- the CI recipe

AGENT = """from langchain.agents import create_agent


def build(model, tools):
    return create_agent(model, tools)
"""


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _steps() -> list[dict[str, Any]]:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    return [s for s in workflow["jobs"]["gate"]["steps"] if "run" in s]


@pytest.mark.parametrize(("edit", "status"), [("", 0), ("tools", 1)],
                         ids=["agent-kept", "agent-lost-its-tools"])
def test_the_ci_recipe_runs_and_gates(edit: str, status: int, tmp_path: Path) -> None:
    workspace, origin = tmp_path / "workspace", tmp_path / "origin.git"
    workspace.mkdir()
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    (workspace / "my_agent.py").write_text(AGENT)
    for args in (("init", "-q", "-b", "main"), ("add", "my_agent.py"),
                 ("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "agent"),
                 ("remote", "add", "origin", str(origin)), ("push", "-q", "origin", "main"),
                 ("fetch", "-q", "origin"), ("checkout", "-qb", "pr")):
        _git(workspace, *args)
    if edit:  # the pull request's agent: no tools for its model
        (workspace / "my_agent.py").write_text(AGENT.replace("create_agent(model, tools)",
                                                               "create_agent(model, [])"))
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    venv_bin = str(Path(shutil.which("tooleval") or REPO / ".venv/bin/tooleval").parent)
    env = {**os.environ, **{k: str(v) for k, v in workflow["env"].items()},
           "GITHUB_BASE_REF": "main", "GITHUB_WORKSPACE": str(workspace),
           "PATH": f"{venv_bin}{os.pathsep}{os.environ['PATH']}"}
    install, *steps = _steps()
    # the one step not run here: the suite's own install is the tooleval it runs
    assert install["name"] == "Install" and install["run"] == 'pip install "$TOOLEVAL"'
    outcome = None
    for step in steps:
        outcome = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                                  step["run"]], cwd=workspace, env=env, capture_output=True,
                                 text=True, timeout=600)
        if step["name"] != "Gate":
            assert outcome.returncode == 0, (step["name"], outcome.stderr[-2000:])
    assert outcome is not None and outcome.returncode == status, outcome.stdout[-3000:]
    said = " ".join(outcome.stdout.split())
    assert ("is worse than baseline" if status else "is not worse than baseline") in said
