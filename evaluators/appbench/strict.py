"""Profile ``strict`` (the default): AppBench scored call by call, nothing dropped.

Predicted calls come from :func:`tooleval_agents.evaluators.appbench.parse.parse_answer`; gold calls
are :attr:`AppBenchSample.calls` (one per gold line, MM #10's 7 included). Names are compared in
:func:`~tooleval_agents.evaluators.appbench.parse.normalise_call` form (case, ``#``, spaces; API
prefixes such as ``Restaurants_`` removed); literal values after
:func:`~tooleval_agents.evaluators.appbench.parse.normalise_value` (case, quotes, whitespace).

* **Unparsed pieces**: every piece :func:`~tooleval_agents.evaluators.appbench.parse.parse_answer`
  records as unparsed is a predicted call
  (:func:`~tooleval_agents.evaluators.appbench.parse.unparsed_call`: its app when it reads ``App:
  [``, an API that matches nothing, no arguments): it counts in ``|pred|``, the EMs and the graph
  metrics, and strict success needs none. A call that did not parse is not just missing: it was an
  attempt, and a wrong one.
* **F1 app / F1 API**: multiset hits (``sum(min(pred[x], gold[x]))``), one app and one API name
  per call, pooled micro over the corpus.
* **Alignment**: predicted and gold calls are paired one-to-one, only calls with the same API
  name, by a maximum-cardinality maximum-weight matching (networkx): first as many pairs as
  possible, then the same app, then most arguments agreeing (key, kind and value or dependency
  name), then nearest positions (repeated calls of one API pair in order).
* **Arguments** of an aligned pair: a gold literal needs a literal with an equal normalised
  value; a gold dependency ``#k=name`` needs a dependency naming the same returned argument
  **and** resolving (latest earlier predicted call returning it, as in
  :func:`tooleval_agents.appbench.depgraph.dependencies`) to the predicted call aligned with the
  gold source call. A dependency on a call the prediction places later, or on a call returning
  nothing of that name, is wrong.
* **Success**: every gold call aligned, no extra predicted call (unparsed pieces included),
  every aligned pair with the same app, the same argument keys (no missing, no extra), every
  argument right, and no call with argument text that names no key
  (:attr:`~tooleval_agents.appbench.records.AppCall.unparsed`, a positional
  ``getweather('Paris')``): that text is an argument error.
* ``app_em`` / ``api_em`` (paper Table 11): the multiset of apps (API names) of the calls equals
  the gold one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from tooleval_agents.appbench.depgraph import sources
from tooleval_agents.appbench.records import AppBenchSample, AppCall
from tooleval_agents.contracts import ExampleScore, Part
from tooleval_agents.evaluators.appbench.errors import ArgOutcome, ArgStatus, error_part
from tooleval_agents.evaluators.appbench.parse import normalise_call, parse_answer, unparsed_call
from tooleval_agents.evaluators.metrics_common import f1


def _multiset_hits(pred: Sequence[object], gold: Sequence[object]) -> int:
    return sum((Counter(pred) & Counter(gold)).values())


def _agreeing_args(p: AppCall, g: AppCall) -> int:
    same = sum(p.literal_args.get(k) == v for k, v in g.literal_args.items())
    return same + sum(p.dependent_args.get(k) == v for k, v in g.dependent_args.items())


def align(pred: Sequence[AppCall], gold: Sequence[AppCall]) -> dict[int, int]:
    """Predicted call index -> gold call index, for normalised calls (see the module docstring).

    >>> from tooleval_agents.appbench.lines import parse_call_line as p
    >>> gold = [p("Media: [a = findmovies(#genre='drama')]"),
    ...         p("Media: [a = findmovies(#genre='comedy')]")]
    >>> align([gold[1], gold[0], p("Hotels: [b = searchhouse()]")], gold)
    {0: 1, 1: 0}
    """
    candidates = [(i, j) for i, pc in enumerate(pred) for j, gc in enumerate(gold)
                  if pc.api == gc.api]
    if _is_matching(candidates):  # the only maximum matching: no choice to weigh
        return dict(candidates)
    import networkx as nx  # deferred: 0.1 s, only when calls compete for a partner

    graph = nx.Graph()
    span = len(pred) + len(gold) + 1
    for i, j in candidates:
        pc, gc = pred[i], gold[j]
        weight = (((pc.app == gc.app) * 100 + _agreeing_args(pc, gc)) * span
                  + span - abs(i - j))
        graph.add_edge(("p", i), ("g", j), weight=weight)
    pairs = nx.max_weight_matching(graph, maxcardinality=True)
    out = {}
    for a, b in pairs:
        (_, i), (_, j) = sorted((a, b), key=lambda node: node[0] != "p")
        out[i] = j
    return dict(sorted(out.items()))


def _is_matching(pairs: Sequence[tuple[int, int]]) -> bool:
    """Whether no predicted and no gold call is in two of the candidate ``pairs``."""
    return (len({i for i, _ in pairs}) == len(pairs)
            and len({j for _, j in pairs}) == len(pairs))


def judge_arguments(pred: Sequence[AppCall], gold: Sequence[AppCall],
                    pairs: dict[int, int]) -> tuple[list[ArgOutcome], int]:
    """Outcome of every gold argument of an aligned gold call, and the number of extra
    predicted keys (keys the gold call does not have)."""
    pred_src, gold_src = sources(pred), sources(gold)
    outcomes: list[ArgOutcome] = []
    extra = 0
    for i, j in pairs.items():
        p, g = pred[i], gold[j]
        extra += len(p.arg_names - g.arg_names)
        for key, value in g.literal_args.items():
            got = p.literal_args.get(key, p.dependent_args.get(key))
            status: ArgStatus = "ok" if p.literal_args.get(key) == value else "value_error"
            if got is None:
                status = "key_error"
            outcomes.append(ArgOutcome(call=j, api=g.api, key=key, kind="independent",
                                       status=status, gold=value, predicted=got))
        for key, name in g.dependent_args.items():
            got = p.dependent_args.get(key, p.literal_args.get(key))
            if got is None:
                status = "key_error"
            else:
                want = gold_src.get((j, key))
                have = pred_src.get((i, key))
                right_source = (have is None if want is None
                                else have is not None and pairs.get(have) == want)
                same_name = p.dependent_args.get(key) == name
                status = "ok" if same_name and right_source else "value_error"
            outcomes.append(ArgOutcome(call=j, api=g.api, key=key, kind="dependent",
                                       status=status, gold=name, predicted=got))
    return outcomes, extra


def strict_calls(sample: AppBenchSample, output: object) -> tuple[list[AppCall], list[AppCall],
                                                                  int]:
    """Normalised predicted calls, normalised gold calls, and the number of unparsed pieces.

    The predicted calls are the parsed calls followed by one
    :func:`~tooleval_agents.evaluators.appbench.parse.unparsed_call` stand-in per unparsed piece
    (the last ``unparsed`` items of the list).
    """
    parsed = parse_answer(output)
    pred = [*parsed.calls, *(unparsed_call(piece) for piece in parsed.unparsed)]
    return [normalise_call(c) for c in pred], normalised_gold(sample), len(parsed.unparsed)


_GOLD_CALLS: dict[tuple[tuple[str, ...], tuple[str, ...]], list[AppCall]] = {}


def normalised_gold(sample: AppBenchSample) -> list[AppCall]:
    """:func:`~tooleval_agents.evaluators.appbench.parse.normalise_call` of every gold call, kept
    per gold content (``used_app``, ``api_results``: what :attr:`AppBenchSample.calls` reads); the
    calls are frozen, each caller gets its own list.

    Raises:
        ValueError: a gold line that does not parse (a malformed sample).
    """
    key = (tuple(sample.output.used_app), tuple(sample.output.api_results))
    calls = _GOLD_CALLS.get(key)
    if calls is None:
        calls = [normalise_call(c) for c in sample.calls]
        if len(_GOLD_CALLS) >= 8192:
            _GOLD_CALLS.clear()
        _GOLD_CALLS[key] = calls
    return list(calls)


def score_strict(sample: AppBenchSample, output: object) -> ExampleScore:
    """Score one answer with the strict rules (see the module docstring).

    >>> from tooleval_agents.appbench.records import AppBenchOutput
    >>> s = AppBenchSample(input="q", output=AppBenchOutput(used_app=["Weather"],
    ...     used_api=[{"getweather": {"city": "Paris"}}], result_arguments=[["temperature"]],
    ...     api_results=["temperature = getweather(#city='Paris')"], middle_arguments=[],
    ...     user_aware_arguments={"city": "Paris"}))
    >>> r = score_strict(s, "Weather: [t = getweather(#city=' paris ', #date='2019-03-01')]")
    >>> r.scores["success"], r.scores["api_f1"], r.comments["success"]
    (0.0, 100.0, '1 extra argument key(s)')
    """
    return score_strict_calls(*strict_calls(sample, output))


def score_strict_calls(pred: Sequence[AppCall], gold: Sequence[AppCall],
                       unparsed: int) -> ExampleScore:
    """:func:`score_strict` of calls already read by :func:`strict_calls` (the graph metrics
    read the same calls: they are read once)."""
    parsed = pred[:len(pred) - unparsed]
    pairs = align(pred, gold)  # an unparsed stand-in never aligns: its API matches nothing
    outcomes, extra_keys = judge_arguments(pred, gold, pairs)
    pred_apps, gold_apps = [c.app for c in pred], [c.app for c in gold]
    pred_apis, gold_apis = [c.api for c in pred], [c.api for c in gold]
    app_hits, api_hits = _multiset_hits(pred_apps, gold_apps), _multiset_hits(pred_apis, gold_apis)
    wrong_app = sum(pred[i].app != gold[j].app for i, j in pairs.items())
    bad_args = sum(o.status != "ok" for o in outcomes)
    positional = sum(c.unparsed is not None for c in parsed)
    problems = [
        f"{n} {what}" for n, what in (
            (len(gold) - len(pairs), "gold call(s) not made"),
            (len(parsed) - len(pairs), "extra call(s)"),
            (wrong_app, "call(s) with the wrong app"),
            (bad_args, "argument(s) missing or wrong"),
            (positional, "call(s) with argument text naming no key"),
            (extra_keys, "extra argument key(s)"),
            (unparsed, "unparsed call piece(s)"),
        ) if n
    ]
    success = (len(pairs) == len(gold) == len(pred) and not unparsed
               and not (wrong_app or bad_args or extra_keys or positional))
    flags, error_parts = error_part(outcomes)
    n_pred, n_gold = len(pred), len(gold)
    return ExampleScore(
        scores={
            "success": 100.0 * success,
            "app_f1": f1(app_hits, n_pred, n_gold),
            "api_f1": f1(api_hits, n_pred, n_gold),
            "app_em": 100.0 * (Counter(pred_apps) == Counter(gold_apps)),
            "api_em": 100.0 * (Counter(pred_apis) == Counter(gold_apis)),
            **flags,
        },
        parts={
            "app_precision": Part(hits=app_hits, total=n_pred),
            "app_recall": Part(hits=app_hits, total=n_gold),
            "api_precision": Part(hits=api_hits, total=n_pred),
            "api_recall": Part(hits=api_hits, total=n_gold),
            **error_parts,
        },
        comments={"success": "; ".join(problems) or "every call and argument matches"},
    )
