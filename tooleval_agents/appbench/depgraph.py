"""Dependency DAG of an AppBench plan, its parallel and sequential scale, and the Table-2
statistics of a category.

A call that passes ``#k=name`` depends on the latest earlier call returning ``name``. The weakly
connected components of the resulting DAG run in parallel; the calls inside one run in sequence
(paper §3.4, §5.1 and appendix A.2).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from statistics import mean
from typing import TYPE_CHECKING

from pydantic import BaseModel

from tooleval_agents.appbench.records import AppCall

if TYPE_CHECKING:
    import networkx as nx

Unresolved = tuple[int, str, str]
"""``(call index, argument key, returned-argument name)`` of a dependency no earlier call meets."""
Edges = dict[tuple[int, int], set[str]]
"""``(source call, dependent call) -> the argument keys of the dependent call it feeds``."""


def dependencies(calls: Sequence[AppCall]) -> tuple[Edges, list[Unresolved]]:
    """The DAG's edges -- ``(j, i) -> the argument keys of i that j feeds`` from the latest
    ``j < i`` whose ``returns`` holds the name a dependent argument of ``i`` refers to, in the
    order found -- and the dependencies no earlier call returns. Plain Python: a run computes
    this for every example, and networkx costs 0.1 s to import (:func:`build_dag` loads it).

    >>> from tooleval_agents.appbench.lines import parse_call_line
    >>> dependencies([parse_call_line("name = findrestaurants(#location='Paris')"),
    ...               parse_call_line("name = reserverestaurant(#name=name, #time=time)")])
    ({(0, 1): {'name'}}, [(1, 'time', 'time')])
    """
    edges: Edges = {}
    unresolved: list[Unresolved] = []
    for i, call in enumerate(calls):
        for key, name in call.dependent_args.items():
            source = next((j for j in range(i - 1, -1, -1) if name in calls[j].returns), None)
            if source is None:
                unresolved.append((i, key, name))
            else:
                edges.setdefault((source, i), set()).add(key)
    return edges, unresolved


def sources(calls: Sequence[AppCall]) -> dict[tuple[int, str], int]:
    """``(call index, dependent key) -> index of the call it resolves to`` (the DAG's edges)."""
    return {(i, key): j for (j, i), keys in dependencies(calls)[0].items() for key in keys}


def build_dag(calls: Sequence[AppCall]) -> nx.DiGraph:
    """The dependency DAG as a networkx graph: node ``i`` (attribute ``call``) per call; edge
    ``j -> i`` (attribute ``args``: the set of argument keys of ``i`` it feeds) per edge of
    :func:`dependencies`, whose unresolved dependencies are ``G.graph["unresolved"]``.

    >>> from tooleval_agents.appbench.lines import parse_call_line
    >>> calls = [parse_call_line("name = findrestaurants(#location='Paris')"),
    ...          parse_call_line("name = reserverestaurant(#name=name, #time=time)")]
    >>> g = build_dag(calls)
    >>> list(g.edges(data="args")), g.graph["unresolved"]
    ([(0, 1, {'name'})], [(1, 'time', 'time')])
    """
    import networkx as nx  # deferred: 0.1 s, only for the callers that want a graph

    edges, unresolved = dependencies(calls)
    graph = nx.DiGraph()
    graph.add_nodes_from((i, {"call": call}) for i, call in enumerate(calls))
    graph.add_edges_from((j, i, {"args": keys}) for (j, i), keys in edges.items())
    graph.graph["unresolved"] = unresolved
    return graph


def is_topological(calls: Sequence[AppCall]) -> bool:
    """Whether every dependency refers to a value an earlier call returns."""
    return not dependencies(calls)[1]


def component_sizes(calls: Sequence[AppCall]) -> list[int]:
    """Sizes of the weakly connected components of the DAG, largest first."""
    root = list(range(len(calls)))  # union-find over the edges

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    for j, i in dependencies(calls)[0]:
        root[find(j)] = find(i)
    return sorted(Counter(find(i) for i in range(len(calls))).values(), reverse=True)


def same_labelled_dag(labels_a: Sequence[str], edges_a: Iterable[tuple[int, int]],
                      labels_b: Sequence[str], edges_b: Iterable[tuple[int, int]]) -> bool:
    """Whether two DAGs (nodes ``0..n-1`` labelled ``labels``, ``edges`` as pairs) are
    isomorphic with equal node labels. Decided here when the label counts or edge counts differ
    or every label is distinct (the one candidate mapping is label to label); else by
    networkx's VF2 (loaded then).

    >>> same_labelled_dag(["a", "b"], [(0, 1)], ["b", "a"], [(1, 0)])
    True
    """
    edges_a, edges_b = set(edges_a), set(edges_b)
    if len(edges_a) != len(edges_b) or Counter(labels_a) != Counter(labels_b):
        return False
    if len(set(labels_a)) == len(labels_a):
        return ({(labels_a[x], labels_a[y]) for x, y in edges_a}
                == {(labels_b[x], labels_b[y]) for x, y in edges_b})
    import networkx as nx  # deferred: only plans that repeat a label get here

    def graph(labels: Sequence[str], edges: set[tuple[int, int]]) -> nx.DiGraph:
        g = nx.DiGraph()
        g.add_nodes_from((i, {"label": label}) for i, label in enumerate(labels))
        g.add_edges_from(edges)
        return g

    return bool(nx.is_isomorphic(graph(labels_a, edges_a), graph(labels_b, edges_b),
                                 node_match=lambda a, b: a["label"] == b["label"]))


def scales(calls: Sequence[AppCall]) -> tuple[int, float]:
    """``(parallel scale, sequential scale)``: the number of weakly connected components and
    their average size (paper §5.1). An empty plan gives ``(0, 0.0)``.

    >>> from tooleval_agents.appbench.lines import parse_call_line
    >>> scales([parse_call_line(x) for x in ("a = f(#x='1')", "b = g(#a=a)", "c = h(#y='2')")])
    (2, 1.5)
    """
    sizes = component_sizes(calls)
    return len(sizes), (sum(sizes) / len(sizes) if sizes else 0.0)


class CategoryStats(BaseModel):
    """The statistics of AppBench Table 2 for one category (one plan per sample)."""

    samples: int
    """Number of samples."""
    apps: int
    """Distinct apps used over the category (# Apps)."""
    apis: int
    """Distinct (app, API) pairs used over the category (# APIs)."""
    avg_apps: float
    """Mean number of distinct apps per sample (Avg. Apps)."""
    avg_apis: float
    """Mean number of calls per sample (Avg. APIs)."""
    avg_arguments: float
    """Mean number of arguments (literal and dependent) per call, over all calls
    (Avg. arguments)."""
    max_seq: int
    """Largest component over the category (Max. Seq.)."""
    avg_seq: float
    """Mean component size over all components of the category (Avg. Seq.): this pooled mean is
    what reproduces the paper's MS value (1.2); the mean of per-sample sequential scales is
    :attr:`mean_sample_seq`."""
    max_para: int
    """Most components in one sample (Max. Para.)."""
    avg_para: float
    """Mean number of components per sample (Avg. Para.)."""
    mean_sample_seq: float
    """Mean over samples of the sequential scale of :func:`scales` (not in the paper)."""
    unresolved: int
    """Dependencies no earlier call returns, over the category (left out of the components)."""


def category_stats(plans: Sequence[Sequence[AppCall]]) -> CategoryStats:
    """Table-2 statistics of a category, from one plan (list of calls) per sample.

    Calls without an app (``app is None``) count for APIs but not for apps. Raises
    ``ValueError`` on an empty category or an empty plan (the averages would be undefined).
    """
    if not plans or any(not p for p in plans):
        raise ValueError("category_stats needs at least one sample and one call per sample")
    sizes = [component_sizes(p) for p in plans]
    calls = [c for p in plans for c in p]
    return CategoryStats(
        samples=len(plans),
        apps=len({c.app for c in calls if c.app is not None}),
        apis=len({(c.app, c.api) for c in calls}),
        avg_apps=mean(len({c.app for c in p if c.app is not None}) for p in plans),
        avg_apis=mean(len(p) for p in plans),
        avg_arguments=mean(len(c.arg_names) for c in calls),
        max_seq=max(max(s) for s in sizes),
        avg_seq=sum(map(sum, sizes)) / sum(map(len, sizes)),
        max_para=max(len(s) for s in sizes),
        avg_para=mean(len(s) for s in sizes),
        mean_sample_seq=mean(sum(s) / len(s) for s in sizes),
        unresolved=sum(len(dependencies(p)[1]) for p in plans),
    )
