"""Dependency DAG of an AppBench plan, its parallel and sequential scale, and the Table-2
statistics of a category.

A call that passes ``#k=name`` depends on the latest earlier call returning ``name``. The weakly
connected components of the resulting DAG run in parallel; the calls inside one run in sequence
(paper §3.4, §5.1 and appendix A.2).
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import mean

import networkx as nx
from pydantic import BaseModel

from tooleval_agents.appbench.records import AppCall

Unresolved = tuple[int, str, str]
"""``(call index, argument key, returned-argument name)`` of a dependency no earlier call meets."""


def build_dag(calls: Sequence[AppCall]) -> nx.DiGraph:
    """The dependency DAG: node ``i`` (attribute ``call``) per call; edge ``j -> i`` (attribute
    ``args``: the set of argument keys of ``i`` it feeds) from the latest ``j < i`` whose
    ``returns`` holds the name a dependent argument of ``i`` refers to. Dependencies that no
    earlier call returns are listed in ``G.graph["unresolved"]`` instead.

    >>> from tooleval_agents.appbench.lines import parse_call_line
    >>> calls = [parse_call_line("name = findrestaurants(#location='Paris')"),
    ...          parse_call_line("name = reserverestaurant(#name=name, #time=time)")]
    >>> g = build_dag(calls)
    >>> list(g.edges(data="args")), g.graph["unresolved"]
    ([(0, 1, {'name'})], [(1, 'time', 'time')])
    """
    graph = nx.DiGraph()
    unresolved: list[Unresolved] = []
    for i, call in enumerate(calls):
        graph.add_node(i, call=call)
        for key, name in call.dependent_args.items():
            source = next((j for j in range(i - 1, -1, -1) if name in calls[j].returns), None)
            if source is None:
                unresolved.append((i, key, name))
            elif graph.has_edge(source, i):
                graph.edges[source, i]["args"].add(key)
            else:
                graph.add_edge(source, i, args={key})
    graph.graph["unresolved"] = unresolved
    return graph


def is_topological(calls: Sequence[AppCall]) -> bool:
    """Whether every dependency refers to a value an earlier call returns."""
    return not build_dag(calls).graph["unresolved"]


def component_sizes(calls: Sequence[AppCall]) -> list[int]:
    """Sizes of the weakly connected components of the DAG, largest first."""
    graph = build_dag(calls)
    return sorted((len(c) for c in nx.weakly_connected_components(graph)), reverse=True)


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
        unresolved=sum(len(build_dag(p).graph["unresolved"]) for p in plans),
    )
