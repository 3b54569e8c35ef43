"""Small metric formulas shared by the evaluator families (one definition each).

>>> f1(2, 3, 2), f1(0, 0, 0), f1(0, 0, 0, empty=100.0)
(80.0, 0.0, 100.0)
"""

from __future__ import annotations

from tooleval_agents.results.corpus import Corpus, Sum


def f1(hits: float, n_pred: float, n_gold: float, *, empty: float = 0.0) -> float:
    """F1 on a 0-100 scale from counts: ``200 * hits / (n_pred + n_gold)`` (the harmonic mean
    of precision ``hits / n_pred`` and recall ``hits / n_gold``).

    ``empty`` is the value when both totals are 0: 0 by default; a family where "nothing to
    find and nothing predicted" is a perfect answer (plan-graph edges, tool sets) passes 100.
    """
    if not n_pred and not n_gold:
        return empty
    return 200.0 * hits / (n_pred + n_gold)


def corpus_f1(corpus: Corpus, hits: Sum, n_pred: Sum, n_gold: Sum) -> Sum:
    """Pooled F1 over a corpus (:func:`f1` of its sums); n/a when nothing was expected or
    predicted (a corpus F1 with nothing to count is neither 0 nor 100)."""
    return corpus.ratio(200.0 * hits, n_pred + n_gold)
