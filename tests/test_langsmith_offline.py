"""``langsmith.evaluate`` with no LangSmith: the recipe of ``docs/langsmith.md`` ("Offline, with
no LangSmith") contacts nobody, even with LangSmith's settings in the environment (its output is
checked by ``tests/test_docs_blocks.py``), and the offline models and a split's examples come
from the public API (:func:`tooleval_agents.reference_model`,
:func:`tooleval_agents.examples_for`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from docs_blocks import REPO, section_blocks
from fake_langsmith import FakeLangSmith
from test_compare_from_python import run_block

import tooleval_agents

PAGE = REPO / "docs" / "langsmith.md"
SECTION = "Offline, with no LangSmith"
SHOWN = 'frame[["feedback.success", "feedback.executed_success"]].mean()'
"""What the page's next block shows (and the docs test checks) of the recipe's results."""


def test_the_offline_evaluate_recipe_runs_and_contacts_nobody(tmp_path: Path) -> None:
    (block,) = section_blocks(PAGE, SECTION, "python")
    assert "upload_results=False" in block and "reference_model(" in block
    (shown,) = section_blocks(PAGE, SECTION, "pycon")
    assert f">>> {SHOWN}" in shown
    with FakeLangSmith() as fake:
        # LangSmith's endpoint is a local server: any request the recipe made would land
        # here, even with tracing asked for
        done = run_block(f"{block}\nprint({SHOWN})\n", tmp_path, LANGSMITH_ENDPOINT=fake.url,
                         LANGSMITH_API_KEY=fake.api_key, LANGSMITH_TRACING="true")
        with fake.lock:
            requests = [(r.method, r.path) for r in fake.requests]
    assert done.returncode == 0, done.stderr[-3000:]
    assert requests == []
    means = dict(re.findall(r"^feedback\.(\w+) +([0-9.]+)$", done.stdout, re.M))
    assert means == {"success": "100.0", "executed_success": "100.0"}


@pytest.mark.parametrize(("model", "success"), [("reference", 100.0),
                                              ("noisy-reference:1.0", 0.0)])
def test_reference_model_plays_a_split_from_the_public_api(model: str, success: float,
                                                           samples: Path) -> None:
    from langchain.agents import create_agent

    io = tooleval_agents.agent_io_for("appbench", subset="sm")
    row, _ = tooleval_agents.evaluators_for("appbench", subset="sm")
    played = tooleval_agents.reference_model("appbench", subset="sm", model=model,
                                             data_dir=samples)
    agent = create_agent(played, io.tools({}))
    examples = tooleval_agents.examples_for("appbench", subset="sm", data_dir=samples)
    assert len(examples) == 5 and len({e.id for e in examples}) == 5
    scores = []
    for example in examples:
        state = agent.invoke({"messages": io.messages(example.inputs or {})})
        feedback = {f["key"]: f.get("score") for f in row(
            inputs=example.inputs, outputs=state, reference_outputs=example.outputs)}
        scores.append(feedback["success"])
    assert sum(scores) / len(scores) == success  # every answer corrupted at rate 1.0


def test_reference_model_refuses_a_hosted_model() -> None:
    with pytest.raises(ValueError, match="not 'reference' or 'noisy-reference"):
        tooleval_agents.reference_model("appbench", subset="ss", model="openai:gpt-4o")
