"""Plan-graph metrics for AppBench: the predicted and gold call DAGs compared.

The DAGs are :func:`tooleval_agents.appbench.depgraph.dependencies` of the calls (edge ``j -> i``
when call ``i`` uses a result the latest earlier call ``j`` returns). Calls are compared in
:func:`tooleval_agents.evaluators.appbench.parse.normalise_call` form.

* ``node_f1``: nodes labelled ``app.api`` (TaskBench style), multiset hits, pooled micro over the
  corpus; ``edge_f1``: edges labelled ``(source label, target label)``, likewise. When neither
  the predictions nor the gold have any edge (SS), ``edge_f1`` is n/a: the example has no
  ``edge_f1`` score (its comment says why) and the corpus value is ``None``, never a 100 (or a
  0) that no edge earned.
* ``graph_em``: share of samples whose predicted DAG is isomorphic to the gold one with equal
  node labels.
* ``pred_topological``: share of samples whose prediction has a parsed call and lists every
  call after the calls it depends on (no dependency left unresolved).

The predicted calls may hold stand-ins for unparsed pieces
(:func:`tooleval_agents.evaluators.appbench.parse.unparsed_call`, label ``app.?``): they are nodes
(so they lower node precision and break graph equality) without edges.

Success by the gold's (parallel, sequential) scale, as in paper Figure 4, is computed by
:mod:`tooleval_agents.evaluators.appbench.scoring` from the ``parallel_scale`` /
``sequential_scale`` labels set here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from tooleval_agents.appbench.depgraph import (
    dependencies,
    is_topological,
    same_labelled_dag,
    scales,
)
from tooleval_agents.appbench.records import AppCall
from tooleval_agents.contracts import ExampleScore, Metrics, Part
from tooleval_agents.evaluators.appbench.parse import UNPARSED_API
from tooleval_agents.evaluators.metrics_common import corpus_f1, f1
from tooleval_agents.results.corpus import Scores, as_corpus

GRAPH_METRICS = ("node_f1", "edge_f1", "graph_em", "pred_topological")


def node_label(call: AppCall) -> str:
    """``app.api`` (``?.api`` without an app)."""
    return f"{call.app or '?'}.{call.api}"


def graph_scores(pred: Sequence[AppCall], gold: Sequence[AppCall]) -> ExampleScore:
    """Graph scores of one sample, for normalised calls.

    >>> from tooleval_agents.appbench.lines import parse_call_line as p
    >>> gold = [p("A: [x = f(#a='1')]"), p("A: [y = g(#x=x)]")]
    >>> r = graph_scores([gold[1], gold[0]], gold)
    >>> r.scores
    {'node_f1': 100.0, 'edge_f1': 0.0, 'graph_em': 0.0, 'pred_topological': 0.0}
    """
    p_labels, g_labels = [node_label(c) for c in pred], [node_label(c) for c in gold]
    pe, ge = dependencies(pred)[0], dependencies(gold)[0]
    p_nodes, g_nodes = Counter(p_labels), Counter(g_labels)
    p_edges = Counter((p_labels[a], p_labels[b]) for a, b in pe)
    g_edges = Counter((g_labels[a], g_labels[b]) for a, b in ge)
    node_hits = sum((p_nodes & g_nodes).values())
    edge_hits = sum((p_edges & g_edges).values())
    n_pe, n_ge = sum(p_edges.values()), sum(g_edges.values())
    same = same_labelled_dag(p_labels, pe, g_labels, ge)
    parallel, sequential = scales(gold)
    parsed = any(c.api != UNPARSED_API for c in pred)
    scores = {"node_f1": f1(node_hits, len(pred), len(gold), empty=100.0),
              "edge_f1": f1(edge_hits, n_pe, n_ge),
              "graph_em": 100.0 * same,
              "pred_topological": 100.0 * (parsed and is_topological(pred))}
    comments = {}
    if not n_pe and not n_ge:
        del scores["edge_f1"]
        comments["edge_f1"] = "n/a: no dependency expected and none predicted"
    return ExampleScore(
        scores=scores,
        comments=comments,
        parts={
            "node_precision": Part(hits=node_hits, total=len(pred)),
            "node_recall": Part(hits=node_hits, total=len(gold)),
            "edge_precision": Part(hits=edge_hits, total=n_pe),
            "edge_recall": Part(hits=edge_hits, total=n_ge),
        },
        labels={"parallel_scale": str(parallel), "sequential_scale": str(sequential)},
    )


def aggregate_graph(scores: Scores) -> Metrics:
    """Corpus node/edge F1 (pooled) and the shares of exact graphs and valid orders.

    A scoring failure keeps the parts it has in the pools (its gold calls stay in the node
    recall). With no edge expected and none predicted (SS) ``edge_f1`` is n/a (``None``):
    nothing was there to get right or wrong.
    """
    c = as_corpus(scores)
    out: Metrics = {f"{kind}_f1": corpus_f1(c, c.hits(f"{kind}_precision"),
                                            c.total(f"{kind}_precision"),
                                            c.total(f"{kind}_recall"))
                    for kind in ("node", "edge")}
    out["graph_em"] = c.mean("graph_em")
    out["pred_topological"] = c.mean("pred_topological")
    return out
