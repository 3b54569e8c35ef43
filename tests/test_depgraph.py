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


MM_MEASURED = 169
"""MM samples 0-168: the part of the published MM file the paper measured. Samples 169-199 come
from SGD train-split services (test_catalog) and move every MM graph statistic; over 0-168 the
paper's sequential and parallel scales are reproduced."""


@pytest.fixture(scope="module")
def stats(shared_data: Path) -> dict[Category, CategoryStats]:
    """Table 2's statistics per category, MM over :data:`MM_MEASURED` samples."""
    out = {}
    for c in CATEGORIES:
        samples = load_category(shared_data, c)
        out[c] = category_stats([s.calls for s in samples[:MM_MEASURED if c == "mm" else None]])
    return out


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
# fits all four columns (per call: SS 4.02, SM 4.49 fit; MS gives 4.03). MM's samples 0-168 match
# the paper's scales (avg_seq, avg_para, max_para) and its counts of apps and APIs, not its
# sizes: 2.07 apps and 3.36 APIs per sample (the paper has 2.2 and 3.3), 4.52 arguments per call
# and a longest chain of 7 calls (8). MS has 201 samples, not 200; leaving out any one of them
# keeps every matching MS cell matching (checked by hand).
MISMATCH = {
    ("ms", "avg_arguments"): "no definition of Avg. arguments fits MS (per call: 4.03)",
    ("mm", "avg_apps"): "MM 0-168 has 2.07 apps per sample, the paper 2.2",
    ("mm", "avg_apis"): "MM 0-168 has 3.36 APIs per sample, the paper 3.3",
    ("mm", "avg_arguments"): "MM 0-168 has 4.52 arguments per call, the paper 4.4",
    ("mm", "max_seq"): "MM 0-168's longest chain is 7 calls, the paper's 8",
}


def _cells() -> list:
    out = []
    for field, values in PAPER.items():
        for category, expected in zip(CATEGORIES, values, strict=True):
            reason = MISMATCH.get((category, field))
            marks = [pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)
                     ] if reason else []
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


def test_the_whole_published_mm_file_differs_from_the_papers(shared_data: Path) -> None:
    """The 31 samples after :data:`MM_MEASURED` are why the whole file's figures differ."""
    whole = category_stats([s.calls for s in load_category(shared_data, "mm")])
    assert whole.samples == MM_MEASURED + 31
    assert (round(whole.avg_apis, 2), whole.max_para, round(whole.avg_para, 2),
            round(whole.avg_seq, 2)) == (3.65, 4, 2.06, 1.77)
