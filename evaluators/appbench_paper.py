"""Profile ``paper``: the official AppBench ``evaluation.py``, bug for bug, as described in
``notes/appbench.md`` (the official code is not copied; this follows the measured behaviour).

Parsing (:func:`parse_paper_answer`): every output line of the form ``App: [ ... ( ... ]`` is a
call (``app`` = the text before the first ``:``, as written, bullets included; a bracket without
``(``, e.g. ``Note: [1]``, is not a call line: our choice, the notes do not say); the API is the
name between a returned-argument list's ``=`` and ``(`` - **without a returned-argument list the
API name is empty** - lowercased and, when it holds ``_``, cut to the part after the first ``_``
(``book_stylist_appointment`` -> ``stylist_appointment``; the gold names are cut the same way).
Arguments: the text inside the outer parentheses split on ``", "`` then on ``=`` (key = first
piece, value = second, pieces without ``=`` ignored); keys lowercased, ``#`` kept.

Gold: apps are ``used_app``; API names and arguments come from the gold lines ``api_results``
parsed the same way. (Where the two disagree, MM #10 has 5 ``used_app`` for 7 lines.)

Metrics per sample:

* F1 app / F1 API parts: ``|pred|`` = predicted lines, ``|gold|`` = ``used_app`` / gold lines,
  and hits = 1 if any predicted app (API) is among the gold ones, else 0 (the official
  ``labels = labels.remove(pred)`` caps hits at one per sample). Pooled micro over the corpus.
* ``app_em`` / ``api_em`` (paper Table 11): the sorted lowercased predicted apps (APIs), one per
  line, equal the gold ones.
* ``success``: apps equal ``used_app`` as multisets, API names equal the gold ones as multisets,
  and for every gold API - keyed by name, so a repeated API keeps only its **last** call, on both
  sides - every gold key is present with a matching value (:func:`value_matches`). Extra
  arguments, returned arguments, call order and whether a dependency names something an earlier
  call returns are not checked.

Speed: the gold side of a sample (its lines read the official way, the values normalised, the
time/space kind of each argument, the gold's scales) is read once per gold content
(:func:`paper_gold`) and kept; an answer is read into plain tuples and dicts, and the
:class:`~evaluators.base.ExampleScore` is built directly from numbers computed here (no
intermediate records, no validation of values this module made). The error analysis
(:mod:`evaluators.appbench_errors`) is computed in the same pass over the judged arguments.

Deliberate difference: the official run dropped samples whose inference raised (SS N=196).
Here every sample stays in every denominator; an errored inference is an empty answer, unless
:func:`evaluators.appbench_scoring.score_appbench` is called with ``drop_errors=True``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from evaluators.appbench_errors import DEPENDENT_ARGS, is_time_value, key_kinds
from evaluators.base import ExampleScore, Part
from tooleval_agents.appbench.records import AppBenchSample, AppCall

ALIASES: dict[str, str] = {
    "nyc": "new york", "ny": "new york", "new york city": "new york",
    "la": "los angeles", "l.a.": "los angeles",
    "sf": "san francisco", "s.f.": "san francisco", "san fran": "san francisco",
    "frisco": "san francisco",
    "sd": "san diego", "philly": "philadelphia", "vegas": "las vegas", "lv": "las vegas",
    "dc": "washington", "d.c.": "washington", "washington dc": "washington",
    "washington d.c.": "washington", "atl": "atlanta", "chi": "chicago", "sj": "san jose",
    "sac": "sacramento", "pdx": "portland", "lb": "long beach", "phx": "phoenix",
}
"""Whole-value aliases applied to both sides before comparing (notes: "nyc -> new york,
la -> los angeles, ..."); the rest is our choice: the common short names of the cities the test
data uses. Only a whole value is replaced, so ``la`` inside ``lax`` is untouched."""

_LINE = re.compile(r"^\s*(?P<app>[^:]*):\s*\[(?P<body>.*\(.*)\]")
_API = re.compile(r"^(?P<ret>.*?)=\s*(?P<api>[^(=]*)\(")
"""The official reading as patterns: a call line, and the API name of its body. The readers
below find the same spans with ``str`` searches (no backtracking), for a line without
``\n``: ``_LINE`` matches iff the line has a ``:``, the text after the first one is (after
whitespace) ``[``, and the text from there to the line's last ``]`` holds a ``(``: that text
is the body, the app is before the ``:``. ``_API`` matches iff a ``(`` follows the first
``=``; the name runs from the last ``=`` before that ``(`` to it. ``tests/test_appbench_parse.py``
checks both readings agree on arbitrary and call-like text."""


@dataclass(frozen=True, slots=True)
class PaperCall:
    """One predicted or gold line as the official scorer reads it (a plain dataclass: several
    are made per answer, and nothing here needs validating)."""

    app: str
    """Text before the first ``:`` (stripped); empty for a gold line."""
    api: str
    """Lowercased API name, cut after the first ``_``; empty without a returned-argument list."""
    args: dict[str, str] = field(default_factory=dict)
    """``#key`` (lowercased) -> value as written (quotes kept)."""


def paper_api(name: str) -> str:
    """Official API-name normalisation: lowercase, then the part after the first ``_``.

    >>> paper_api("Restaurants_FindRestaurants"), paper_api("book_stylist_appointment")
    ('findrestaurants', 'stylist_appointment')
    """
    name = name.strip().lower()
    return name.split("_", 1)[1] if "_" in name else name


def _body_api(body: str) -> str:
    """The API name of a call body (``_API``'s ``api`` group), lowercased and cut after its
    first ``_``; empty when there is none."""
    eq = body.find("=")
    if eq < 0:
        return ""
    opening = body.find("(", eq + 1)
    if opening < 0:
        return ""
    api = body[body.rfind("=", eq, opening) + 1:opening].strip().lower()
    return api.split("_", 1)[1] if "_" in api else api


def _body_args(body: str) -> dict[str, str]:
    """The arguments of a call body the official way: the text inside the outer parentheses
    split on ``", "`` then on ``=`` (key = first piece lowercased, value = second piece)."""
    args: dict[str, str] = {}
    start = body.find("(")
    if start >= 0:
        end = body.rfind(")")
        for piece in (body[start + 1:end] if end > start else body[start + 1:]).split(", "):
            key, sep, rest = piece.partition("=")
            if sep:
                args[key.strip().lower()] = rest.partition("=")[0].strip()
    return args


def _read_body(body: str) -> tuple[str, dict[str, str]]:
    """``(api, args)`` of a call body, the official way (see :func:`parse_paper_body`)."""
    if "\n" in body:  # ``_API``'s ``.*?`` stops at a line break: only a gold line can have one
        m = _API.match(body)
        return (paper_api(m.group("api")) if m else ""), _body_args(body)
    return _body_api(body), _body_args(body)


def parse_paper_body(app: str, body: str) -> PaperCall:
    """``r1, ... = api(#k='v', ...)`` -> :class:`PaperCall`, the official way."""
    api, args = _read_body(body)
    return PaperCall(app=app.strip(), api=api, args=args)


def _read_answer(text: object) -> list[tuple[str, str, dict[str, str]]]:
    """``(app, api, args)`` of every call line of an answer (see :func:`parse_paper_answer`;
    ``_LINE`` and :func:`_read_body` read with ``str`` searches and inlined: this is the hot
    loop of ``paper`` scoring)."""
    if not isinstance(text, str):
        return []
    out = []
    for line in text.split("\n"):
        colon = line.find(":")
        if colon < 0:
            continue
        rest = line[colon + 1:].lstrip()
        if rest[:1] != "[":
            continue
        close = rest.rfind("]")
        if close < 0:
            continue
        body = rest[1:close]
        opening = body.find("(")
        if opening < 0:
            continue
        # the API name: from the last ``=`` before the first ``(`` after the first ``=``
        eq = body.find("=")
        call = -1 if eq < 0 else opening if eq < opening else body.find("(", eq + 1)
        if call < 0:
            api = ""
        else:
            api = body[body.rfind("=", eq, call) + 1:call].strip().lower()
            if "_" in api:
                api = api.split("_", 1)[1]
        args: dict[str, str] = {}
        end = body.rfind(")")
        for piece in (body[opening + 1:end] if end > opening else body[opening + 1:]).split(", "):
            key, sep, value = piece.partition("=")
            if sep:
                args[key.strip().lower()] = value.partition("=")[0].strip()
        out.append((line[:colon].strip(), api, args))
    return out


def parse_paper_answer(text: object) -> list[PaperCall]:
    """Every ``App: [ ... ]`` line of an output, read the official way (never raises).

    >>> [(c.app, c.api) for c in parse_paper_answer("Hotels: [a = Hotels_SearchHouse(#x='1')]\\n"
    ...                                              "Hotels: [searchhouse(#x='1')]\\nnote")]
    [('Hotels', 'searchhouse'), ('Hotels', '')]
    """
    return [PaperCall(app=app, api=api, args=args) for app, api, args in _read_answer(text)]


def gold_paper_calls(sample: AppBenchSample) -> list[PaperCall]:
    """The gold lines read the official way (apps are not on the lines: see ``used_app``)."""
    return [parse_paper_body("", line) for line in sample.output.api_results]


def _norm(value: str) -> str:
    value = value.lower().strip().strip("'\"").strip()
    return ALIASES.get(value, value)


def value_matches(predicted: str, gold: str, user_aware: str | None) -> bool:
    """Official value check: equal after lowercasing and stripping quotes (and aliases), or a
    substring either way, or equal to the user-aware literal of the key.

    >>> value_matches("'NYC'", "'New York'", None), value_matches("'Korean'", "category", "Korean")
    (True, True)
    >>> value_matches("'3'", "'4'", None)
    False
    """
    p, g = _norm(predicted), _norm(gold)
    return p == g or p in g or g in p or (user_aware is not None and p == _norm(user_aware))


# --- the gold side, read once per gold content -------------------------------------------------

class GoldArg(NamedTuple):
    """One argument of a gold call as the official check uses it."""

    key: str
    """``#key`` lowercased, as the official reading keys the predicted arguments."""
    value: str
    """:func:`_norm` of the gold value."""
    aware: str | None
    """:func:`_norm` of the user-aware literal of the key, ``None`` when there is none."""
    dependent: bool
    """The gold value is not quoted: a dependency (Table 4 "dependent")."""
    time: bool
    """Time-related (:func:`~evaluators.appbench_errors.is_time_arg` of the key without ``#``
    and the value without quotes)."""
    space: bool
    """Space-related (:func:`~evaluators.appbench_errors.is_space_arg`)."""


class PaperGold(NamedTuple):
    """What the official scorer reads from a sample's gold, with the gold's scales: computed
    once per gold content by :func:`paper_gold`."""

    apps: tuple[str, ...]
    """``used_app`` as given."""
    app_set: frozenset[str]
    apps_sorted: list[str]
    """``used_app`` sorted (the multiset the predicted apps must equal)."""
    apps_lower_sorted: list[str]
    """``used_app`` lowercased and sorted (``app_em``)."""
    api_set: frozenset[str]
    """The gold lines' API names."""
    apis_sorted: list[str]
    """The gold lines' API names, sorted (a multiset)."""
    checks: tuple[tuple[str, tuple[GoldArg, ...]], ...]
    """Per gold API name, first-seen order, the arguments of its **last** gold line."""
    lines: int
    """Gold lines (``len(api_results)``)."""
    parallel: int
    """Parallel scale of the gold plan (:func:`~tooleval_agents.appbench.depgraph.scales`)."""
    sequential: float
    """Sequential scale of the gold plan."""
    labels: tuple[str, str, str]
    """``parallel_scale``, ``sequential_scale`` and ``gold_calls`` labels."""


# A gold line in the shape every AppBench gold line has: ``r1, r2 = api(#k='v', #k2=k2)``, the
# quoted values without ``'``, ``"``, ``\`` or ``=``. On such a line the official-line parser
# (:func:`tooleval_agents.appbench.lines.parse_call_line`) finds exactly these returned names and
# these ``#k=name`` dependencies (no boundary can fall inside a value), so the gold's scales
# are read from it directly; any other line goes through :attr:`AppBenchSample.calls`.
_IDENT_RE = r"[A-Za-z_]\w*+"
_GOLD_ARG = rf"#({_IDENT_RE})=(?:'[^'\"\\=]*+'|({_IDENT_RE}))"
_GOLD_LINE = re.compile(rf"(?:({_IDENT_RE}(?:, {_IDENT_RE})*+) = )?[A-Za-z_][\w.]*+\("
                        rf"((?:{_GOLD_ARG}(?:, {_GOLD_ARG})*+)?)\)")
_GOLD_ARGS = re.compile(_GOLD_ARG)
_NOT_NAMES = frozenset(("true", "false", "none", "null"))


def _line_dependencies(line: str) -> tuple[list[str], list[str]] | None:
    """``(returned names, names the dependent arguments refer to)`` of a gold line in the
    canonical shape (see ``_GOLD_LINE``), as :func:`parse_call_line` reads them; ``None`` for
    any other line."""
    m = _GOLD_LINE.fullmatch(line)
    if m is None:
        return None
    returns = m.group(1).split(", ") if m.group(1) else []
    seen: set[str] = set()
    names = []
    for key, name in _GOLD_ARGS.findall(m.group(2)):
        key = key.lower()
        if key in seen:  # a repeated key: the first value stands
            continue
        seen.add(key)
        if name and name.lower() not in _NOT_NAMES:
            names.append(name)
    return returns, names


def plan_scales(plan: Sequence[tuple[Sequence[str], Sequence[str]]]) -> tuple[int, float]:
    """:func:`~tooleval_agents.appbench.depgraph.scales` of a plan given as ``(returned
    names, dependency names)`` per call: the weakly connected components of the dependency DAG
    (a dependency links a call to the latest earlier call returning the name; one that none
    returns links nothing), counted with a union-find instead of a graph.

    >>> plan_scales([(["a"], []), (["b"], ["a"]), (["c"], [])])
    (2, 1.5)
    """
    parent = list(range(len(plan)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = i = parent[parent[i]]
        return i

    for i, (_, names) in enumerate(plan):
        for name in names:
            for j in range(i - 1, -1, -1):
                if name in plan[j][0]:
                    parent[root(j)] = root(i)
                    break
    components = len({root(i) for i in range(len(plan))})
    return components, (len(plan) / components if components else 0.0)


def _gold_scales(sample: AppBenchSample) -> tuple[int, float]:
    plan = [_line_dependencies(line) for line in sample.output.api_results]
    calls: list[AppCall] | None = None
    if any(p is None for p in plan):
        calls = sample.calls  # the official-line parser; raises on a line that does not parse
    return plan_scales([(c.returns, list(c.dependent_args.values())) for c in calls]
                       if calls is not None else plan)  # type: ignore[arg-type]


def _read_gold(sample: AppBenchSample) -> PaperGold:
    out = sample.output
    gold = [_read_body(line) for line in out.api_results]
    apps = tuple(out.used_app)
    apis = [api for api, _ in gold]
    by_api = {api: args for api, args in gold}  # first-seen order, the last line's arguments
    aware = {k.lower(): v for k, v in out.user_aware_arguments.items()}
    checks = []
    for api, args in by_api.items():
        judged = []
        for key, value in args.items():
            name = key.lstrip("#")
            literal = aware.get(name)
            time, space = key_kinds(name)
            judged.append(GoldArg(
                key, _norm(value), None if literal is None else _norm(literal),
                not value.strip().startswith(("'", '"')),
                time or is_time_value(value.strip("'\"")), space))
        checks.append((api, tuple(judged)))
    parallel, sequential = _gold_scales(sample)
    return PaperGold(apps=apps, app_set=frozenset(apps), apps_sorted=sorted(apps),
                     apps_lower_sorted=sorted(a.lower() for a in apps), api_set=frozenset(apis),
                     apis_sorted=sorted(apis), checks=tuple(checks), lines=len(gold),
                     parallel=parallel, sequential=sequential,
                     labels=(str(parallel), str(sequential), str(len(gold))))


_GOLD_CACHE: dict[tuple[Any, ...], PaperGold] = {}
_GOLD_CACHE_SIZE = 8192


def paper_gold(sample: AppBenchSample) -> PaperGold:
    """The gold side of a sample read the official way, kept per gold content
    (``used_app``, ``api_results``, ``user_aware_arguments``): scoring the same samples
    again (several answer files, re-scoring a run, a bootstrap) reads each gold once.

    Raises:
        ValueError: a gold line the official-line parser cannot read (a malformed sample).
    """
    out = sample.output
    key = (tuple(out.used_app), tuple(out.api_results),
           tuple(out.user_aware_arguments.items()))
    gold = _GOLD_CACHE.get(key)
    if gold is None:
        gold = _read_gold(sample)
        if len(_GOLD_CACHE) >= _GOLD_CACHE_SIZE:
            _GOLD_CACHE.clear()
        _GOLD_CACHE[key] = gold
    return gold


def clear_gold_cache() -> None:
    """Forget every gold read by :func:`paper_gold` (timings of a cold start)."""
    _GOLD_CACHE.clear()


# --- one answer ----------------------------------------------------------------------------------

class PaperResult(NamedTuple):
    """The numbers of one answer under the official rules (plain data: the per-example score
    and the corpus sums are both made from it)."""

    pred: int
    """Predicted call lines."""
    app_hit: int
    """1 when a predicted app is among ``used_app`` (hits capped at one per sample)."""
    api_hit: int
    """1 when a predicted API name is among the gold ones."""
    success: bool
    """Apps and API names equal the gold multisets, every gold API called, every judged
    argument right."""
    apps_ok: bool
    """Predicted apps equal ``used_app`` as multisets."""
    apis_ok: bool
    """Predicted API names equal the gold ones as multisets (also ``api_em``)."""
    args_ok: bool
    """Every gold API called and every judged argument right."""
    app_em: bool
    """Sorted lowercased apps equal."""
    key_independent: bool
    key_dependent: bool
    value_independent: bool
    value_dependent: bool
    value_errors: int
    """Judged arguments with a wrong value."""
    value_time: int
    """... of which time-related."""
    value_space: int
    """... of which space-related."""
    judged: int
    """Judged gold arguments (arguments of gold APIs the answer called)."""
    dependent: int
    """... of which dependencies."""


def paper_result(gold: PaperGold, output: object) -> PaperResult:
    """Score one answer against a gold read by :func:`paper_gold` (never raises on the
    answer)."""
    pred = _read_answer(output)
    n_pred = len(pred)
    app_set, api_set = gold.app_set, gold.api_set
    pred_by_api = {}  # a repeated API: its last call's arguments
    app_hit = api_hit = 0
    for app, api, args in pred:
        pred_by_api[api] = args
        if not app_hit and app in app_set:
            app_hit = 1
        if not api_hit and api in api_set:
            api_hit = 1

    called_all = True
    key_ind = key_dep = val_ind = val_dep = False
    judged = dependent = wrong = wrong_time = wrong_space = 0
    for api, gold_args in gold.checks:
        pred_args = pred_by_api.get(api)
        if pred_args is None:
            called_all = False
            continue
        judged += len(gold_args)
        for key, g, aware, is_dependent, is_time, is_space in gold_args:
            if is_dependent:
                dependent += 1
            predicted = pred_args.get(key)
            if predicted is None:
                if is_dependent:
                    key_dep = True
                else:
                    key_ind = True
                continue
            p = predicted.lower().strip().strip("'\"").strip()  # _norm, inlined
            p = ALIASES.get(p, p)
            if p == g or p in g or g in p or (aware is not None and p == aware):
                continue
            wrong += 1
            wrong_time += is_time
            wrong_space += is_space
            if is_dependent:
                val_dep = True
            else:
                val_ind = True

    if n_pred == len(gold.apps):
        pred_apps = [c[0] for c in pred]
        apps_ok = sorted(pred_apps) == gold.apps_sorted
        app_em = apps_ok or sorted(a.lower() for a in pred_apps) == gold.apps_lower_sorted
    else:
        apps_ok = app_em = False
    apis_ok = n_pred == gold.lines and sorted(c[1] for c in pred) == gold.apis_sorted
    args_ok = called_all and not (key_ind or key_dep or wrong)
    return PaperResult(n_pred, app_hit, api_hit, apps_ok and apis_ok and args_ok, apps_ok,
                       apis_ok, args_ok, app_em, key_ind, key_dep, val_ind, val_dep, wrong,
                       wrong_time, wrong_space, judged, dependent)


# --- score records built without validation -----------------------------------------------------
# The values below are floats, strings and dicts made here: validating them again would only
# cost time. Each record is what ``model_construct`` makes (same ``__dict__``, fields set,
# extra and private slots), built without its per-call overhead (8 records per example are a
# third of the paper profile's time). The fields-set objects are shared: every field is in
# them, so pydantic's only write to them (adding the name of an assigned field) changes
# nothing, and a copy (``model_copy``) copies them first.

_new = object.__new__
_set = object.__setattr__
_PART_FIELDS = {"hits", "total"}
_SCORE_FIELDS = {"scores", "parts", "comments", "labels", "error", "evidence"}


def fast_part(hits: float, total: float) -> Part:
    """``Part(hits=hits, total=total)`` for two floats, without validation."""
    part = _new(Part)
    _set(part, "__dict__", {"hits": hits, "total": total})
    _set(part, "__pydantic_fields_set__", _PART_FIELDS)
    _set(part, "__pydantic_extra__", None)
    _set(part, "__pydantic_private__", None)
    return part


def fast_score(scores: dict[str, float], parts: dict[str, Part], comments: dict[str, str],
               labels: dict[str, str]) -> ExampleScore:
    """``ExampleScore.model_construct(...)`` of values built here (every field set, as
    :meth:`ExampleScore.merge` makes it), without validation."""
    score = _new(ExampleScore)
    _set(score, "__dict__", {"scores": scores, "parts": parts, "comments": comments,
                             "labels": labels, "error": None, "evidence": {}})
    _set(score, "__pydantic_fields_set__", _SCORE_FIELDS)
    _set(score, "__pydantic_extra__", None)
    _set(score, "__pydantic_private__", None)
    return score


_WHY = {
    (apps_ok, apis_ok, args_ok): "; ".join(
        msg for ok, msg in ((apps_ok, "apps differ from used_app"),
                            (apis_ok, "API names differ"),
                            (args_ok, "an argument is missing or wrong")) if not ok)
    or "all apps, APIs and arguments match"
    for apps_ok in (False, True) for apis_ok in (False, True) for args_ok in (False, True)
}
"""The ``success`` comment for each outcome of the three checks."""


def paper_example(gold: PaperGold, r: PaperResult) -> ExampleScore:
    """The whole per-example score of the ``paper`` profile without graph metrics: what
    :func:`evaluators.appbench_scoring.score_example` returns (the gold's scales, the profile
    and the call counts as labels), its records built without validation (:func:`fast_part`,
    :func:`fast_score`)."""
    (n_pred, app_hit, api_hit, success, apps_ok, apis_ok, args_ok, app_em, key_ind, key_dep,
     val_ind, val_dep, wrong, wrong_time, wrong_space, judged, dependent) = r
    n_apps = len(gold.apps)
    n_gold = gold.lines
    scores = {
        "success": 100.0 if success else 0.0,
        "app_f1": 200.0 * app_hit / (n_pred + n_apps) if n_pred or n_apps else 0.0,
        "api_f1": 200.0 * api_hit / (n_pred + n_gold) if n_pred or n_gold else 0.0,
        "app_em": 100.0 if app_em else 0.0,
        "api_em": 100.0 if apis_ok else 0.0,
        "key_error_independent": 100.0 if key_ind else 0.0,
        "key_error_dependent": 100.0 if key_dep else 0.0,
        "value_error_independent": 100.0 if val_ind else 0.0,
        "value_error_dependent": 100.0 if val_dep else 0.0,
    }
    app_hit_f, api_hit_f, pred_f, wrong_f = float(app_hit), float(api_hit), float(n_pred), \
        float(wrong)
    parallel, sequential, lines = gold.labels
    return fast_score(scores, {
        "app_precision": fast_part(app_hit_f, pred_f),
        "app_recall": fast_part(app_hit_f, float(n_apps)),
        "api_precision": fast_part(api_hit_f, pred_f),
        "api_recall": fast_part(api_hit_f, float(n_gold)),
        "value_error_time_share": fast_part(float(wrong_time), wrong_f),
        "value_error_space_share": fast_part(float(wrong_space), wrong_f),
        DEPENDENT_ARGS: fast_part(float(dependent), float(judged)),
    }, {"success": _WHY[apps_ok, apis_ok, args_ok]}, {
        "parallel_scale": parallel, "sequential_scale": sequential, "scoring": "paper",
        "pred_calls": str(n_pred), "gold_calls": lines})


def score_paper(sample: AppBenchSample, output: object) -> ExampleScore:
    """Score one answer with the official rules (see the module docstring).

    >>> from tooleval_agents.appbench.records import AppBenchOutput
    >>> s = AppBenchSample(input="q", output=AppBenchOutput(used_app=["Weather"],
    ...     used_api=[{"getweather": {"city": "Paris"}}], result_arguments=[["temperature"]],
    ...     api_results=["temperature = getweather(#city='Paris')"], middle_arguments=[],
    ...     user_aware_arguments={"city": "Paris"}))
    >>> answer = "Weather: [t = getweather(#city='paris', #date='2019-03-01')]"
    >>> score_paper(s, answer).scores["success"]
    100.0
    """
    gold = paper_gold(sample)
    full = paper_example(gold, paper_result(gold, output))
    return ExampleScore.model_construct(scores=full.scores, parts=full.parts,
                                        comments=full.comments)
