"""The runner's own start-up cost (issue 23): `tooleval run` loads its command module only, an
AppBench run of distinct calls never imports networkx, and the plain-Python dependency graph
answers as networkx did."""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

from tooleval_agents.appbench.depgraph import (
    build_dag,
    component_sizes,
    dependencies,
    same_labelled_dag,
    sources,
)
from tooleval_agents.appbench.lines import parse_call_line
from tooleval_agents.appbench.records import AppCall
from tooleval_agents.evaluators.appbench.strict import align

REPO = Path(__file__).resolve().parents[1]


def _loaded(code: str) -> list[str]:
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, cwd=REPO).stdout
    names: list[str] = json.loads(out.strip().splitlines()[-1])
    return names


def test_a_run_command_line_loads_the_run_command_alone() -> None:
    loaded = _loaded("from tooleval_agents.cli import app_for\napp_for(['run', 'appbench'])")
    assert [m for m in loaded if m.startswith("tooleval_agents.cli.")] == [
        "tooleval_agents.cli.advice", "tooleval_agents.cli.agent_cmd", "tooleval_agents.cli.base",
        "tooleval_agents.cli.cost_options", "tooleval_agents.cli.options",
        "tooleval_agents.cli.run", "tooleval_agents.cli.run_output"]
    everything = _loaded("from tooleval_agents.cli import app_for\napp_for(['--help'])")
    assert {"tooleval_agents.cli.compare", "tooleval_agents.cli.view",
            "tooleval_agents.ultratool.build_cli"} <= set(everything)


def test_a_run_command_line_runs_and_help_still_lists_every_command(tmp_path: Path) -> None:
    tooleval = [sys.executable, "-m", "tooleval_agents.cli"]
    done = subprocess.run([*tooleval, "run", "appbench", "--category", "ss", "--model",
                           "reference", "--limit", "1", "--data-dir", str(REPO / "datasets"),
                           "--out", str(tmp_path), "--no-cache", "--json"],
                          capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert '"success": 100.0' in done.stdout
    shown = subprocess.run([*tooleval, "--help"], capture_output=True, text=True, cwd=REPO,
                           check=True).stdout
    for command in ("run", "compare", "view", "report", "list", "score", "data"):
        assert f" {command} " in shown, command


def test_an_appbench_run_of_distinct_calls_does_not_import_networkx(tmp_path: Path) -> None:
    loaded = _loaded(
        "from tooleval_agents.run.runner import run_experiment\n"
        f"run_experiment('appbench', task='plan', subset='ss', model='reference', limit=1, "
        f"data_dir={str(REPO / 'datasets')!r}, out={str(tmp_path)!r}, cache=False)")
    assert "tooleval_agents.evaluators.appbench.graph_metrics" in loaded  # it was scored
    assert "networkx" not in loaded


def _random_plan(rng: random.Random, apis: str) -> list[AppCall]:
    """Up to 5 calls over ``apis``, each returning one of three names and maybe depending on
    another: repeated APIs, shared returns and unresolved dependencies all occur."""
    calls = []
    for _ in range(rng.randint(0, 5)):
        api, back = rng.choice(apis), rng.choice("xyz")
        dep = f", #k{rng.randint(0, 1)}={rng.choice('xyzw')}" if rng.random() < 0.6 else ""
        calls.append(parse_call_line(f"{back} = {api}(#a='{rng.randint(0, 1)}'{dep})"))
    return calls


def _nx_align(pred: list[AppCall], gold: list[AppCall]) -> dict[int, int]:
    graph = nx.Graph()
    span = len(pred) + len(gold) + 1
    for (i, p), (j, g) in itertools.product(enumerate(pred), enumerate(gold)):
        if p.api == g.api:
            same = sum(p.literal_args.get(k) == v for k, v in g.literal_args.items())
            same += sum(p.dependent_args.get(k) == v for k, v in g.dependent_args.items())
            graph.add_edge(("p", i), ("g", j),
                           weight=((p.app == g.app) * 100 + same) * span + span - abs(i - j))
    return dict(sorted((a[1], b[1]) if a[0] == "p" else (b[1], a[1])
                       for a, b in nx.max_weight_matching(graph, maxcardinality=True)))


@pytest.mark.parametrize("apis", ["fgh", "ff"])  # distinct labels mostly; always repeated
def test_plain_python_graph_answers_as_networkx(apis: str) -> None:
    rng = random.Random(len(apis))
    for _ in range(400):
        pred, gold = _random_plan(rng, apis), _random_plan(rng, apis)
        graph = build_dag(pred)
        edges, unresolved = dependencies(pred)
        assert sorted(graph.edges) == sorted(edges)
        assert unresolved == graph.graph["unresolved"]
        assert sources(pred) == {(i, k): j for j, i, keys in graph.edges(data="args")
                                 for k in keys}
        assert component_sizes(pred) == sorted(
            map(len, nx.weakly_connected_components(graph)), reverse=True)
        assert align(pred, gold) == _nx_align(pred, gold)
        labels = [[c.api for c in calls] for calls in (pred, gold)]
        expected = nx.is_isomorphic(_labelled(pred), _labelled(gold),
                                    node_match=lambda a, b: a["label"] == b["label"])
        assert same_labelled_dag(labels[0], dependencies(pred)[0], labels[1],
                                 dependencies(gold)[0]) == expected


def _labelled(calls: list[AppCall]) -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_nodes_from((i, {"label": c.api}) for i, c in enumerate(calls))
    graph.add_edges_from(dependencies(calls)[0])
    return graph
