"""AppBench argument-level error analysis (paper §5.3, Table 4).

Every argument of a gold call the model did call is judged once (which predicted call that is
depends on the profile: the aligned call in ``strict``, the last call of the same API name in
``paper``):

* **key error**: the gold key is missing from the predicted call (a wrong key name shows up as
  a missing key);
* **value error**: the key is there but the value does not match.

Each is split by the gold argument's kind: **independent** (a literal value the user gave) or
**dependent** (the gold value names an earlier call's returned argument). Arguments of gold
calls the model did not make at all are API errors, not argument errors, and are not judged.

Metrics (all 0-100):

* ``key_error_independent`` / ``key_error_dependent`` / ``value_error_independent`` /
  ``value_error_dependent``: share of **samples** (every sample in the denominator) with at
  least one such error. Per-sample shares are what Table 4 reports: its dependent-error rates
  fall in MS "because of a smaller percentage of dependency cases", and SS has none ("-"):
  the two ``dependent`` flags are n/a (``None``) over a corpus in which no judged gold
  argument is a dependency (every SS corpus), not a 0 that reads as "no error".
* ``value_error_time_share`` / ``value_error_space_share``: share of all value-error
  **arguments** (pooled over the corpus) that are time- or space-related (Table 4 "T/S"). An
  argument may be both or neither; with no value errors the share is n/a.

Time- and space-related arguments (decided on the gold key, whose name states the slot):

* time: a key word (split on ``_``) in :data:`TIME_WORDS` (``date``, ``time``, ``year``, ``day``:
  ``departure_date``, ``show_time``, ``date_of_journey``...), or a gold literal shaped like a
  date or clock time (``2019-03-05``, ``13:30``, ``7:30 pm``);
* space: a key word in :data:`SPACE_WORDS` (``location``, ``city``, ``address``, ``from``,
  ``to``, ``where``, ``origin``, ``destination``, ``airport``, ``station``, ``area``, ``venue``:
  ``where_to``, ``from_city``, ``pickup_location``, ``destination_airport``...).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from tooleval_agents.contracts import ExampleScore, Metrics, Part
from tooleval_agents.results.corpus import Scores, as_corpus

ArgKind = Literal["independent", "dependent"]
ArgStatus = Literal["ok", "key_error", "value_error"]

TIME_WORDS = frozenset({"date", "time", "year", "day"})
SPACE_WORDS = frozenset({"location", "city", "address", "from", "to", "where", "origin",
                         "destination", "airport", "station", "area", "venue"})
_TIME_VALUE = re.compile(r"^\s*(\d{4}-\d{1,2}-\d{1,2}|\d{1,2}:\d{2}(\s*[ap]\.?m\.?)?)\s*$", re.I)

FLAG_METRICS = ("key_error_independent", "key_error_dependent", "value_error_independent",
                "value_error_dependent")
SHARE_METRICS = ("value_error_time_share", "value_error_space_share")
ERROR_METRICS = FLAG_METRICS + SHARE_METRICS
DEPENDENT_ARGS = "dependent_args"
"""Part of a sample: its judged gold arguments that are dependencies (hits) of all judged."""


class ArgOutcome(BaseModel):
    """How one gold argument of a called API fared."""

    call: int
    """Index of the gold call (in ``api_results`` order)."""
    api: str
    """The gold API name."""
    key: str
    """The gold argument key (without ``#``)."""
    kind: ArgKind
    """Literal (independent) or dependency on an earlier call (dependent)."""
    status: ArgStatus
    """``ok``, ``key_error`` (key missing) or ``value_error`` (value does not match)."""
    gold: str
    """The gold value (a literal, or the returned-argument name for a dependency)."""
    predicted: str | None = None
    """The predicted value as written, ``None`` when the key is missing."""


def is_time_arg(key: str, gold_value: str = "") -> bool:
    """Whether an argument is time-related (see the module docstring).

    >>> is_time_arg("departure_date"), is_time_arg("theater_name", "19:30"), is_time_arg("city")
    (True, True, False)
    """
    return bool(TIME_WORDS & set(key.lower().lstrip("#").split("_"))) or bool(
        _TIME_VALUE.match(gold_value))


def is_space_arg(key: str) -> bool:
    """Whether an argument is space-related (see the module docstring).

    >>> is_space_arg("where_to"), is_space_arg("pickup_location"), is_space_arg("ride_type")
    (True, True, False)
    """
    return bool(SPACE_WORDS & set(key.lower().lstrip("#").split("_")))


_KEY_KINDS: dict[str, tuple[bool, bool]] = {}


def key_kinds(key: str) -> tuple[bool, bool]:
    """``(time-related by its words, space-related)`` of an argument key: the key half of
    :func:`is_time_arg` and :func:`is_space_arg`, kept per key (the keys are the catalog's
    few dozen slot names).

    >>> key_kinds("#departure_date"), key_kinds("where_to")
    ((True, False), (False, True))
    """
    kinds = _KEY_KINDS.get(key)
    if kinds is None:
        words = set(key.lower().lstrip("#").split("_"))
        kinds = (bool(TIME_WORDS & words), bool(SPACE_WORDS & words))
        if len(_KEY_KINDS) >= 4096:
            _KEY_KINDS.clear()
        _KEY_KINDS[key] = kinds
    return kinds


def is_time_value(gold_value: str) -> bool:
    """The value half of :func:`is_time_arg`: a literal shaped like a date or clock time."""
    return _TIME_VALUE.match(gold_value) is not None


def error_part(outcomes: Sequence[ArgOutcome]) -> tuple[dict[str, float], dict[str, Part]]:
    """Per-sample flags (0/100) and pooled time/space parts of a sample's argument outcomes."""
    scores = {
        f"{status}_{kind}": 100.0 if any(o.status == status and o.kind == kind
                                         for o in outcomes) else 0.0
        for status in ("key_error", "value_error") for kind in ("independent", "dependent")
    }
    wrong = [o for o in outcomes if o.status == "value_error"]
    parts = {
        "value_error_time_share": Part(hits=sum(is_time_arg(o.key, o.gold) for o in wrong),
                                       total=len(wrong)),
        "value_error_space_share": Part(hits=sum(is_space_arg(o.key) for o in wrong),
                                        total=len(wrong)),
        DEPENDENT_ARGS: Part(hits=sum(o.kind == "dependent" for o in outcomes),
                             total=len(outcomes)),
    }
    return scores, parts


def aggregate_errors(scores: Scores) -> Metrics:
    """The six Table-4 metrics over a corpus; the dependent-argument rates are n/a when the
    corpus has no dependent argument (nothing to count)."""
    c = as_corpus(scores)
    none_dependent = c.hits(DEPENDENT_ARGS) == 0
    out = {name: c.na_where(none_dependent, c.mean(name))
           if name in ("key_error_dependent", "value_error_dependent") else c.mean(name)
           for name in FLAG_METRICS}
    out.update({name: c.pooled(name) for name in SHARE_METRICS})
    return out


def error_counts(scores: Sequence[ExampleScore]) -> dict[str, int]:
    """Argument counts behind the shares: value errors, and how many are time / space."""
    return {
        "value_error_args": int(sum(s.parts["value_error_time_share"].total for s in scores
                                    if "value_error_time_share" in s.parts)),
        "value_error_time_args": int(sum(s.parts["value_error_time_share"].hits for s in scores
                                         if "value_error_time_share" in s.parts)),
        "value_error_space_args": int(sum(s.parts["value_error_space_share"].hits for s in scores
                                          if "value_error_space_share" in s.parts)),
    }
