"""Dependency DAG, parallel/sequential scales and the Table-2 statistics of AppBench."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest

from tooleval_agents.appbench.depgraph import (
    CategoryStats,
    build_dag,
    category_stats,
    component_sizes,
    is_topological,
    scales,
)
from tooleval_agents.appbench.lines import parse_call_line
from tooleval_agents.appbench.loaders import load_category
from tooleval_agents.appbench.names import CATEGORIES, Category
from tooleval_agents.appbench.records import AppCall


def _plan(*lines: str) -> list[AppCall]:
    return [parse_call_line(line) for line in lines]


def test_edges_come_from_latest_earlier_returner() -> None:
    calls = _plan(
        "Trains: [from, to = findtrains(#from='A', #to='B')]",
        "Trains: [from, total = findtrains(#from='C', #to='D')]",
        "Trains: [total = gettraintickets(#from=from, #to=to, #class='Value')]",
        "Payment: [amount = makepayment(#amount=total, #receiver='Bob')]",
    )
    g = build_dag(calls)
    assert isinstance(g, nx.DiGraph)
    assert sorted(g.nodes) == [0, 1, 2, 3]
    assert g.nodes[2]["call"] is calls[2]
    # `from` comes from call 1 (the latest); `to` only call 0 returns.
    assert dict(g.edges) == {(1, 2): {"args": {"from"}}, (0, 2): {"args": {"to"}},
                             (2, 3): {"args": {"amount"}}}
    assert g.graph["unresolved"] == []
    assert nx.is_directed_acyclic_graph(g)
    assert is_topological(calls)
    assert scales(calls) == (1, 4.0)


def test_args_share_an_edge_and_unresolved_are_recorded() -> None:
    calls = _plan(
        "a, b = f(#x='1')",
        "c = g(#a=a, #b=b)",
        "d = h(#q=zzz, #c=c)",
        "e = k(#y='2')",
    )
    g = build_dag(calls)
    assert g.edges[0, 1]["args"] == {"a", "b"}
    assert g.graph["unresolved"] == [(2, "q", "zzz")]
    assert not is_topological(calls)
    assert component_sizes(calls) == [3, 1]
    assert scales(calls) == (2, 2.0)


def test_dependency_on_a_later_call_is_unresolved() -> None:
    calls = _plan("r = f(#a=a)", "a = g(#x='1')")
    assert build_dag(calls).graph["unresolved"] == [(0, "a", "a")]
    assert build_dag(calls).number_of_edges() == 0
    assert not is_topological(calls)


def test_scales_of_simple_plans() -> None:
    assert scales([]) == (0, 0.0)
    assert scales(_plan("a = f(#x='1')")) == (1, 1.0)
    assert scales(_plan("a = f(#x='1')", "b = g(#y='2')", "c = h(#a=a)")) == (2, 1.5)


def test_category_stats_rejects_empty() -> None:
    with pytest.raises(ValueError):
        category_stats([])
    with pytest.raises(ValueError):
        category_stats([[]])


@pytest.fixture(scope="module")
def stats(shared_data: Path) -> dict[Category, CategoryStats]:
    return {c: category_stats([s.calls for s in load_category(shared_data, c)])
            for c in CATEGORIES}


# Gold plans whose dependencies name a value no earlier call returns (checked by hand):
# MM 12 (the first call, searchonewayflight, depends on airports and date nobody returned),
# MM 36 and 49 (depend on the call after them), MM 58 (reserverestaurant takes date/time that
# findrestaurants does not return, and number_of_seats that only the later getride returns).
MM_UNRESOLVED_SAMPLES = {12, 36, 49, 58}


@pytest.mark.parametrize("category", CATEGORIES)
def test_gold_dependencies_refer_to_earlier_calls(shared_data: Path, category: Category) -> None:
    bad = {i for i, s in enumerate(load_category(shared_data, category))
           if not is_topological(s.calls)}
    assert bad == (MM_UNRESOLVED_SAMPLES if category == "mm" else set())


# Paper Table 2, typed from the paper: SS, SM, MS, MM.
PAPER = {
    "apps": (9, 11, 10, 11),
    "apis": (11, 22, 12, 23),
    "avg_apps": (1.0, 1.0, 2.7, 2.2),
    "avg_apis": (1.0, 2.2, 2.7, 3.3),
    "avg_arguments": (4.0, 4.5, 3.8, 4.4),
    "max_seq": (1, 4, 4, 8),
    "max_para": (1, 1, 4, 3),
    "avg_seq": (1.0, 2.2, 1.2, 1.9),
    "avg_para": (1.0, 1.0, 2.2, 1.8),
}

# Cells the published data cannot reproduce. The paper's "Avg. arguments" has no definition that
# fits all four columns (per call: SS 4.02, SM 4.49 fit; MS gives 4.03). The published MM file
# differs from the one the paper measured: it has 3.65 calls per sample, not 3.3, and its last 31
# samples (169-199) come from SGD train-split services (see test_catalog), so no MM graph
# statistic matches except the counts of distinct apps and APIs. MS has 201 samples, not 200;
# leaving out any one of them keeps every matching MS cell matching (checked by hand).
MISMATCH = {
    ("ms", "avg_arguments"): "no definition of Avg. arguments fits MS (per call: 4.03)",
    **{("mm", f): "the published MM data differs from the paper's (3.65 calls per sample)"
       for f in ("avg_apps", "avg_apis", "avg_arguments", "max_seq", "max_para", "avg_seq",
                 "avg_para")},
}


def _cells() -> list:
    out = []
    for field, values in PAPER.items():
        for category, expected in zip(CATEGORIES, values, strict=True):
            reason = MISMATCH.get((category, field))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(category, field, expected, marks=marks,
                                    id=f"{category}-{field}"))
    return out


@pytest.mark.parametrize(("category", "field", "expected"), _cells())
def test_table2_matches_paper(stats: dict[Category, CategoryStats], category: Category,
                              field: str, expected: float) -> None:
    got = getattr(stats[category], field)
    if isinstance(expected, int):
        assert got == expected
    else:  # the paper rounds to one decimal
        assert abs(got - expected) <= 0.05 + 1e-9


def test_avg_seq_is_pooled_over_components(stats: dict[Category, CategoryStats]) -> None:
    # The per-sample mean of sequential scales would give 1.3 for MS; the paper has 1.2.
    assert round(stats["ms"].mean_sample_seq, 1) != PAPER["avg_seq"][2]
    assert stats["ms"].samples == 201
