"""Profile ``paper``: the official AppBench scorer (``evaluation.get_appbench_analysis`` as
the official driver ``code/appbench/test.py`` calls it), bug for bug. The official code is not
copied: :mod:`tooleval_agents.evaluators.appbench.paper_read` reads answers its way, this module
judges them its way, and ``tests/test_appbench_paper_parity.py`` runs the official functions (read
from the user's fetched copy) on the same answers and compares.

**Reading** (:mod:`tooleval_agents.evaluators.appbench.paper_read`): the answer's predicted apps and
API strings as ``discompose_app_api`` splits them, every API string one predicted API (its name
``""`` when none can be read); the gold API names and arguments read from ``api_results``
the same way (a gold line without a readable call cannot be scored: the official script
raises on it; here the sample gets a scoring failure).

**Metrics per sample** (the official ones, per sample; the corpus pools them):

* F1 app / F1 API parts: ``|pred|`` = predicted apps (non-empty names) / API strings,
  ``|gold|`` = ``used_app`` / gold lines, hits = 1 if any predicted app (API name) is among
  the gold ones, lowercased, else 0 (the official ``labels = labels.remove(pred)`` caps hits
  at one per sample). Pooled micro over the corpus.
* ``app_em`` / ``api_em``: at least one prediction, and the sorted lowercased apps (API
  names, ``""`` included) equal the gold ones (paper Table 11).
* ``success`` (the official ``complete_match``): ``app_em`` and ``api_em``, and every gold
  API -- keyed by name, so a repeated API keeps only its **last** line, on both sides -- was
  predicted with every gold key holding a matching value. A value matches when, lowercased
  and stripped of ``'``, it equals the gold value or one is a substring of the other; else
  when it matches the user-aware literal of the key that way; else when it matches the value
  an earlier judged argument of the same key matched with (the official
  ``past_pred_argu_name_values``). Before that, a predicted value that is a known short city
  name (:data:`PRED_CORRECTIONS`) is replaced by the full one. Extra arguments, returned
  arguments, call order and whether a dependency names something an earlier call returns are
  not checked.
* The Table-4 error analysis (:mod:`tooleval_agents.evaluators.appbench.errors`) is ours, computed
  from the same judging: a missing gold key is a key error, a value that matches nothing a value
  error; dependent = the gold value has no ``'`` (the official test).

Speed: the gold side of a sample (names, arguments, values lowercased, the time/space kind of
each argument, the gold's scales) is read once per gold content (:func:`paper_gold`) and kept;
an answer is read into plain lists and dicts, and the
:class:`~tooleval_agents.contracts.ExampleScore` is built directly from numbers computed here
(no intermediate records, no validation of values this module made). The error analysis is
computed in the same pass.

Deliberate difference: the official run dropped samples whose inference raised (SS N=196).
Here every sample stays in every denominator; an errored inference is an empty answer, unless
:func:`tooleval_agents.evaluators.appbench.scoring.score_appbench` is called with
``drop_errors=True``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

from tooleval_agents.appbench.records import AppBenchSample, AppCall
from tooleval_agents.contracts import ExampleScore, Part
from tooleval_agents.evaluators.appbench.errors import DEPENDENT_ARGS, is_time_value, key_kinds
from tooleval_agents.evaluators.appbench.paper_read import extract_call, read_answer

PRED_CORRECTIONS: dict[str, str] = {
    "la": "los angeles", "lax": "los angeles", "ciudad de mexico": "mexico city",
    "nyc": "new york", "sd": "san diego", "sfo": "san francisco", "chi-town": "chicago",
}
"""The official scorer's corrections of a predicted value (the whole value, lowercased,
without ``'``), applied before comparing; gold values are not corrected."""


def _pred_value(value: str) -> str:
    """A predicted value as the official check compares it: lowercased, corrected, ``'``
    stripped."""
    value = value.lower().strip("'")
    return PRED_CORRECTIONS.get(value, value)


def value_matches(predicted: str, gold: str, user_aware: str | None = None) -> bool:
    """Official value check of one argument (without the earlier-match rule): lowercased and
    stripped of ``'``, equal or a substring either way, of the gold value or else of the
    user-aware literal of the key; a known short city name is corrected first.

    >>> value_matches("'NYC'", "'New York'"), value_matches("'Korean'", "category", "Korean")
    (True, True)
    >>> value_matches("'3'", "'4'")
    False
    """
    p, g = _pred_value(predicted), gold.lower().strip("'")
    if p == g or p in g or g in p:
        return True
    if user_aware is None:
        return False
    u = user_aware.lower().strip("'")
    return p == u or p in u or u in p


# --- the gold side, read once per gold content -------------------------------------------------

class GoldArg(NamedTuple):
    """One argument of a gold call as the official check uses it."""

    key: str
    """``#key`` lowercased, as the official reading keys the predicted arguments."""
    value: str
    """The gold value lowercased, ``'`` stripped."""
    aware: str | None
    """The user-aware literal of the key lowercased, ``'`` stripped; ``None`` when none."""
    dependent: bool
    """The gold value has no ``'``: a dependency (Table 4 "dependent")."""
    time: bool
    """Time-related (:func:`~tooleval_agents.evaluators.appbench.errors.is_time_arg` of the key
    without ``#`` and the value without quotes)."""
    space: bool
    """Space-related (:func:`~tooleval_agents.evaluators.appbench.errors.is_space_arg`)."""


class PaperGold(NamedTuple):
    """What the official scorer reads from a sample's gold, with the gold's scales: computed
    once per gold content by :func:`paper_gold`."""

    apps: tuple[str, ...]
    """``used_app`` as given."""
    app_set: frozenset[str]
    """``used_app`` lowercased."""
    apps_sorted: list[str]
    """``used_app`` lowercased and sorted (``app_em``)."""
    name_set: frozenset[str]
    """The gold lines' API names."""
    names_sorted: list[str]
    """The gold lines' API names, sorted (``api_em``)."""
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
    names = []
    by_name: dict[str, dict[str, str]] = {}  # first-seen order, the last line's arguments
    for i, line in enumerate(out.api_results):
        call = extract_call(line)
        if call is None:
            raise ValueError(f"gold line {i} has no `name = api(...)` call the official "
                             f"reading finds: {line[:80]!r}")
        names.append(call.name)
        by_name[call.name] = call.args
    aware = {"#" + k: v for k, v in out.user_aware_arguments.items()}
    checks = []
    for name, args in by_name.items():
        judged = []
        for key, value in args.items():
            literal = aware.get(key)
            time, space = key_kinds(key.lstrip("#"))
            judged.append(GoldArg(
                key, value.lower().strip("'"),
                None if literal is None else literal.lower().strip("'"), "'" not in value,
                time or is_time_value(value.strip("'\"")), space))
        checks.append((name, tuple(judged)))
    parallel, sequential = _gold_scales(sample)
    apps = tuple(out.used_app)
    lower = [a.lower() for a in apps]
    return PaperGold(apps=apps, app_set=frozenset(lower), apps_sorted=sorted(lower),
                     name_set=frozenset(names), names_sorted=sorted(names),
                     checks=tuple(checks), lines=len(names), parallel=parallel,
                     sequential=sequential,
                     labels=(str(parallel), str(sequential), str(len(names))))


_GOLD_CACHE: dict[tuple[Any, ...], PaperGold] = {}
_GOLD_CACHE_SIZE = 8192


def paper_gold(sample: AppBenchSample) -> PaperGold:
    """The gold side of a sample read the official way, kept per gold content
    (``used_app``, ``api_results``, ``user_aware_arguments``): scoring the same samples
    again (several answer files, re-scoring a run, a bootstrap) reads each gold once.

    Raises:
        ValueError: a gold line without a call the official reading finds, or one the
            official-line parser cannot read (a malformed sample).
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
    """Predicted API strings (every one a predicted API)."""
    unnamed: int
    """... of which no API name could be read from (they match nothing)."""
    pred_apps: int
    """Predicted apps (non-empty names)."""
    app_hit: int
    """1 when a predicted app is among ``used_app`` (hits capped at one per sample)."""
    api_hit: int
    """1 when a predicted API name is among the gold ones."""
    success: bool
    """``app_em`` and ``api_em`` and ``args_ok``: the official ``complete_match``."""
    app_em: bool
    """Sorted lowercased apps equal ``used_app``'s (at least one app predicted)."""
    api_em: bool
    """Sorted API names equal the gold ones (at least one API string)."""
    args_ok: bool
    """Every gold API called and every judged argument right."""
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


def _predicted(output: object) -> tuple[list[str], list[str], dict[str, dict[str, str]]]:
    """``(apps, API names, arguments by API name)`` of an answer, the official way: a name
    per API string (``""`` when none is read), the arguments of the last string of each name
    (read with ``\\`` removed, as the official script does for arguments only)."""
    apps, apis = read_answer(output)
    names = []
    args: dict[str, dict[str, str]] = {}
    for api in apis:
        call = extract_call(api)
        names.append("" if call is None else call.name)
        if "\\" in api:
            call = extract_call(api.replace("\\", ""))
        if call is not None:
            args[call.name] = call.args
    return apps, names, args


def paper_result(gold: PaperGold, output: object) -> PaperResult:
    """Score one answer against a gold read by :func:`paper_gold` (never raises on the
    answer)."""
    apps, names, pred_args = _predicted(output)
    app_hit = app_em = api_hit = api_em = False
    if apps:
        lower = [a.lower() for a in apps]
        app_set = gold.app_set
        app_hit = any(a in app_set for a in lower)
        app_em = len(lower) == len(gold.apps) and sorted(lower) == gold.apps_sorted
    if names:
        name_set = gold.name_set
        api_hit = any(n in name_set for n in names)
        api_em = len(names) == gold.lines and sorted(names) == gold.names_sorted

    unit = 0  # gold APIs whose every argument matched
    past: dict[str, str] = {}  # key -> the first value that matched for it (official order)
    key_ind = key_dep = val_ind = val_dep = False
    judged = dependent = wrong = wrong_time = wrong_space = 0
    for name, gold_args in gold.checks:
        pred = pred_args.get(name)
        if pred is None:
            continue
        judged += len(gold_args)
        hits = 0
        for key, g, aware, is_dependent, is_time, is_space in gold_args:
            dependent += is_dependent
            predicted = pred.get(key)
            if predicted is None:
                if is_dependent:
                    key_dep = True
                else:
                    key_ind = True
                continue
            p = predicted.lower().strip("'")  # _pred_value, inlined
            p = PRED_CORRECTIONS.get(p, p)
            if p == g or p in g or g in p or (aware is not None and (
                    p == aware or p in aware or aware in p)):
                past.setdefault(key, p)
                hits += 1
                continue
            earlier = past.get(key)
            if earlier is not None and (p == earlier or p in earlier or earlier in p):
                hits += 1
                continue
            wrong += 1
            wrong_time += is_time
            wrong_space += is_space
            if is_dependent:
                val_dep = True
            else:
                val_ind = True
        unit += hits == len(gold_args)
    args_ok = unit == len(gold.checks)
    return PaperResult(len(names), names.count(""), len(apps), int(app_hit), int(api_hit),
                       app_em and api_em and args_ok, app_em, api_em, args_ok, key_ind,
                       key_dep, val_ind, val_dep, wrong, wrong_time, wrong_space, judged,
                       dependent)


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
    (app_em, api_em, args_ok): "; ".join(
        msg for ok, msg in ((app_em, "apps differ from used_app"),
                            (api_em, "API names differ"),
                            (args_ok, "an argument is missing or wrong")) if not ok)
    or "all apps, APIs and arguments match"
    for app_em in (False, True) for api_em in (False, True) for args_ok in (False, True)
}
"""The ``success`` comment for each outcome of the three checks."""


def paper_example(gold: PaperGold, r: PaperResult) -> ExampleScore:
    """The whole per-example score of the ``paper`` profile without graph metrics: what
    :func:`tooleval_agents.evaluators.appbench.scoring.score_example` returns (the gold's scales,
    the profile and the call counts as labels: ``pred_calls`` every predicted API string,
    ``unparsed`` those without a readable API name), its records built without validation
    (:func:`fast_part`, :func:`fast_score`)."""
    (n_pred, unnamed, n_apps_pred, app_hit, api_hit, success, app_em, api_em, args_ok, key_ind,
     key_dep, val_ind, val_dep, wrong, wrong_time, wrong_space, judged, dependent) = r
    n_apps = len(gold.apps)
    n_gold = gold.lines
    scores = {
        "success": 100.0 if success else 0.0,
        "app_f1": 200.0 * app_hit / (n_apps_pred + n_apps) if n_apps_pred or n_apps else 0.0,
        "api_f1": 200.0 * api_hit / (n_pred + n_gold) if n_pred or n_gold else 0.0,
        "app_em": 100.0 if app_em else 0.0,
        "api_em": 100.0 if api_em else 0.0,
        "key_error_independent": 100.0 if key_ind else 0.0,
        "key_error_dependent": 100.0 if key_dep else 0.0,
        "value_error_independent": 100.0 if val_ind else 0.0,
        "value_error_dependent": 100.0 if val_dep else 0.0,
    }
    app_hit_f, api_hit_f, wrong_f = float(app_hit), float(api_hit), float(wrong)
    parallel, sequential, lines = gold.labels
    return fast_score(scores, {
        "app_precision": fast_part(app_hit_f, float(n_apps_pred)),
        "app_recall": fast_part(app_hit_f, float(n_apps)),
        "api_precision": fast_part(api_hit_f, float(n_pred)),
        "api_recall": fast_part(api_hit_f, float(n_gold)),
        "value_error_time_share": fast_part(float(wrong_time), wrong_f),
        "value_error_space_share": fast_part(float(wrong_space), wrong_f),
        DEPENDENT_ARGS: fast_part(float(dependent), float(judged)),
    }, {"success": _WHY[app_em, api_em, args_ok]}, {
        "parallel_scale": parallel, "sequential_scale": sequential, "scoring": "paper",
        "pred_calls": str(n_pred), "unparsed": str(unnamed), "gold_calls": lines})


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
    >>> score_paper(s, answer + "\\nWeather: [city='Paris']").scores["success"]  # 2 APIs
    0.0
    """
    gold = paper_gold(sample)
    full = paper_example(gold, paper_result(gold, output))
    return ExampleScore.model_construct(scores=full.scores, parts=full.parts,
                                        comments=full.comments)
