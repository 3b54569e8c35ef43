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

Deliberate difference: the official run dropped samples whose inference raised (SS N=196).
Here every sample stays in every denominator; an errored inference is an empty answer, unless
:func:`evaluators.appbench_scoring.score_appbench` is called with ``drop_errors=True``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from evaluators.appbench_errors import ArgOutcome, ArgStatus, error_part
from evaluators.base import ExampleScore, Part
from evaluators.metrics_common import f1
from tooleval_agents.appbench.records import AppBenchSample

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


def parse_paper_body(app: str, body: str) -> PaperCall:
    """``r1, ... = api(#k='v', ...)`` -> :class:`PaperCall`, the official way."""
    m = _API.match(body)
    api = paper_api(m.group("api")) if m else ""
    start, end = body.find("("), body.rfind(")")
    args: dict[str, str] = {}
    if start >= 0:
        inner = body[start + 1:end] if end > start else body[start + 1:]
        for piece in inner.split(", "):
            parts = piece.split("=")
            if len(parts) >= 2:
                args[parts[0].strip().lower()] = parts[1].strip()
    return PaperCall(app=app.strip(), api=api, args=args)


def parse_paper_answer(text: object) -> list[PaperCall]:
    """Every ``App: [ ... ]`` line of an output, read the official way (never raises).

    >>> [(c.app, c.api) for c in parse_paper_answer("Hotels: [a = Hotels_SearchHouse(#x='1')]\\n"
    ...                                              "Hotels: [searchhouse(#x='1')]\\nnote")]
    [('Hotels', 'searchhouse'), ('Hotels', '')]
    """
    if not isinstance(text, str):
        return []
    out = []
    for line in text.split("\n"):
        m = _LINE.match(line)
        if m:
            out.append(parse_paper_body(m.group("app"), m.group("body")))
    return out


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


def _is_dependent(value: str) -> bool:
    return not value.strip().startswith(("'", '"'))


def _hit(pred: list[str], gold: list[str]) -> float:
    return 1.0 if any(p in gold for p in pred) else 0.0


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
    pred = parse_paper_answer(output)
    gold = gold_paper_calls(sample)
    used_app = list(sample.output.used_app)
    pred_apps, pred_apis = [c.app for c in pred], [c.api for c in pred]
    gold_apis = [c.api for c in gold]
    app_hit, api_hit = _hit(pred_apps, used_app), _hit(pred_apis, gold_apis)

    pred_by_api = {c.api: c.args for c in pred}
    gold_by_api = {c.api: (i, c.args) for i, c in enumerate(gold)}
    user_aware = {k.lower(): v for k, v in sample.output.user_aware_arguments.items()}
    outcomes: list[ArgOutcome] = []
    for api, (index, gold_args) in gold_by_api.items():
        if api not in pred_by_api:
            continue
        pred_args = pred_by_api[api]
        for key, gold_value in gold_args.items():
            predicted = pred_args.get(key)
            status: ArgStatus
            if predicted is None:
                status = "key_error"
            elif value_matches(predicted, gold_value, user_aware.get(key.lstrip("#"))):
                status = "ok"
            else:
                status = "value_error"
            outcomes.append(ArgOutcome(
                call=index, api=api, key=key.lstrip("#"), status=status,
                kind="dependent" if _is_dependent(gold_value) else "independent",
                gold=gold_value.strip("'\""), predicted=predicted))

    apps_ok = Counter(pred_apps) == Counter(used_app)
    apis_ok = Counter(pred_apis) == Counter(gold_apis)
    args_ok = set(pred_by_api) >= set(gold_by_api) and all(o.status == "ok" for o in outcomes)
    success = apps_ok and apis_ok and args_ok
    why = [] if success else [
        msg for ok, msg in ((apps_ok, "apps differ from used_app"),
                            (apis_ok, "API names differ"),
                            (args_ok, "an argument is missing or wrong")) if not ok]
    flags, error_parts = error_part(outcomes)
    return ExampleScore(
        scores={
            "success": 100.0 * success,
            "app_f1": f1(app_hit, len(pred), len(used_app)),
            "api_f1": f1(api_hit, len(pred), len(gold)),
            "app_em": 100.0 * (sorted(a.lower() for a in pred_apps)
                               == sorted(a.lower() for a in used_app)),
            "api_em": 100.0 * (sorted(pred_apis) == sorted(gold_apis)),
            **flags,
        },
        parts={
            "app_precision": Part(hits=app_hit, total=len(pred)),
            "app_recall": Part(hits=app_hit, total=len(used_app)),
            "api_precision": Part(hits=api_hit, total=len(pred)),
            "api_recall": Part(hits=api_hit, total=len(gold)),
            **error_parts,
        },
        comments={"success": "; ".join(why) or "all apps, APIs and arguments match"},
    )
