"""Planning paths extracted from SGD dialogues (AppBench paper §3.3), deterministically.

A dialogue's path is every ``service_call`` of its system turns, in order, each mapped to the
catalog's app and API by :data:`~tooleval_agents.appbench.catalog.API_INTENTS` (renamed APIs
included). Rules measured against the published test files (``benchmarks/sgd_paths.py``):

- every call is kept, refinements of the same API included (an SM path ``findbus``,
  ``findbus`` is two calls);
- an argument is a dependency (``#k=k``) when an earlier call of the path returns an argument
  of that name (the catalog's result slots), whatever the values; otherwise it is a literal with
  the SGD parameter value (``#k='v'``). Arguments are sorted by name;
- in SS paths (only there: the official SS file does so, the others do not) a transactional API
  returns the single argument ``success_flag`` instead of its result slots;
- the category follows from the counts: one app and one call SS, one app and several calls SM,
  several apps with one call each MS, several apps one of which has several calls MM.

A dialogue with a call of a service the catalog does not hold gives no path. MS samples of the
official set join single-call dialogues of different apps: :func:`compose` does that.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from tooleval_agents.appbench.catalog import API_INTENTS, load_catalog
from tooleval_agents.appbench.names import Category
from tooleval_agents.appbench.records import AppBenchOutput, AppBenchSample, Catalog
from tooleval_agents.data.jsonio import DAMAGED, load_json
from tooleval_agents.errors import DataFormatError

SPLITS = ("train", "dev", "test")


class SgdCall(BaseModel):
    """One SGD service call mapped to the catalog."""

    app: str
    """AppBench app (``Rents``)."""
    api: str
    """AppBench API (``getcarsavailable``)."""
    args: dict[str, str]
    """SGD ``service_call.parameters``: slot -> canonical value."""
    turn: int
    """Index of the system turn that made the call."""


class Turn(BaseModel):
    """An utterance of the dialogue."""

    speaker: str
    """``USER`` or ``SYSTEM``."""
    text: str
    """The utterance."""


class SgdPath(BaseModel):
    """The calls of one dialogue (or of several joined by :func:`compose`)."""

    dialogues: list[str]
    """SGD dialogue ids, in order."""
    calls: list[SgdCall]
    """The mapped service calls, in order."""
    turns: list[Turn] = Field(default_factory=list)
    """The utterances, dialogue after dialogue."""

    @property
    def key(self) -> str:
        """A stable id: the dialogue ids joined with ``+``."""
        return "+".join(self.dialogues)

    @property
    def category(self) -> Category:
        return classify(self.calls)


class Skipped(BaseModel):
    """A dialogue that gives no path, and why."""

    dialogue: str
    """SGD dialogue id."""
    reason: str
    """``no service call`` or ``unmapped <service>.<intent>``."""


@cache
def intent_map() -> dict[tuple[str, str], tuple[str, str]]:
    """(SGD service, intent) -> (app, API)."""
    return {intent: (app, api) for app, apis in API_INTENTS.items()
            for api, intent in apis.items()}


def classify(calls: Sequence[SgdCall]) -> Category:
    """SS / SM / MS / MM from the number of apps and of calls per app.

    >>> classify([SgdCall(app="Trains", api="findtrains", args={}, turn=1)])
    'ss'
    """
    per_app = Counter(c.app for c in calls)
    if len(per_app) == 1:
        return "ss" if len(calls) == 1 else "sm"
    return "ms" if max(per_app.values()) == 1 else "mm"


def dialogue_path(dialogue: dict[str, Any]) -> SgdPath | Skipped:
    """The path of one SGD dialogue, or why it has none."""
    did = str(dialogue.get("dialogue_id", "?"))
    calls: list[SgdCall] = []
    turns: list[Turn] = []
    for index, turn in enumerate(dialogue.get("turns", [])):
        turns.append(Turn(speaker=str(turn.get("speaker", "")),
                          text=str(turn.get("utterance", ""))))
        for frame in turn.get("frames", []):
            call = frame.get("service_call")
            if not call:
                continue
            service, method = str(frame.get("service")), str(call.get("method"))
            mapped = intent_map().get((service, method))
            if mapped is None:
                return Skipped(dialogue=did, reason=f"unmapped {service}.{method}")
            params = {str(k): str(v) for k, v in (call.get("parameters") or {}).items()}
            calls.append(SgdCall(app=mapped[0], api=mapped[1], args=params, turn=index))
    if not calls:
        return Skipped(dialogue=did, reason="no service call")
    return SgdPath(dialogues=[did], calls=calls, turns=turns)


def read_dialogues(path: Path) -> list[dict[str, Any]]:
    """An SGD ``dialogues_NNN.json`` file (a JSON array of dialogues)."""
    data = load_json(Path(path))
    if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
        raise DataFormatError(Path(path), "expected a JSON array of SGD dialogues")
    if not data:
        raise DataFormatError(Path(path), f"no dialogues: the array is empty{DAMAGED}")
    return data


def dialogue_files(sgd_dir: Path, split: str) -> list[Path]:
    """``<sgd_dir>/<split>/dialogues_*.json``, sorted."""
    return sorted((Path(sgd_dir) / split).glob("dialogues_*.json"))


def split_paths(sgd_dir: Path, split: str) -> Iterator[SgdPath | Skipped]:
    """Every dialogue of a split, as a path or a skip, file by file."""
    for path in dialogue_files(sgd_dir, split):
        for dialogue in read_dialogues(path):
            yield dialogue_path(dialogue)


def compose(paths: Iterable[SgdPath]) -> SgdPath:
    """Paths joined into one (the official MS samples join single-call dialogues): calls and
    turns concatenated; dependencies are recomputed over the whole when it is rendered."""
    items = list(paths)
    return SgdPath(dialogues=[d for p in items for d in p.dialogues],
                   calls=[c for p in items for c in p.calls],
                   turns=[t for p in items for t in p.turns])


SUCCESS_FLAG = "success_flag"
"""What a transactional API returns in the official SS file."""


def returned_args(calls: Sequence[SgdCall], catalog: Catalog | None = None) -> list[list[str]]:
    """The returned-argument names of each call (catalog order; ``success_flag`` for a
    transactional call of an SS path)."""
    catalog = catalog or load_catalog()
    flag = classify(calls) == "ss" if calls else False
    out: list[list[str]] = []
    for call in calls:
        spec = catalog.api(call.app, call.api)
        if spec is None:
            out.append([])
        elif flag and spec.is_transactional:
            out.append([SUCCESS_FLAG])
        else:
            out.append(list(spec.results))
    return out


def call_lines(calls: Sequence[SgdCall], catalog: Catalog | None = None) -> list[str]:
    """The gold lines ``r1, ... = api(#k='v', #k2=k2)`` of a path (dependencies by name)."""
    returned: set[str] = set()
    lines = []
    for call, results in zip(calls, returned_args(calls, catalog), strict=True):
        args = ", ".join(f"#{k}={k}" if k in returned else f"#{k}='{v}'"
                         for k, v in sorted(call.args.items()))
        lines.append(f"{', '.join(results)} = {call.api}({args})")
        returned.update(results)
    return lines


def to_sample(path: SgdPath, instruction: str = "", catalog: Catalog | None = None,
              ) -> AppBenchSample:
    """The path as a record of the official test files (``input`` = ``instruction``)."""
    catalog = catalog or load_catalog()
    results = returned_args(path.calls, catalog)
    literal: dict[str, str] = {}
    returned: set[str] = set()
    for call, names in zip(path.calls, results, strict=True):
        literal.update({k: v for k, v in sorted(call.args.items()) if k not in returned})
        returned.update(names)
    middle = list(dict.fromkeys(n for names in results for n in names))
    output = AppBenchOutput(
        used_app=[c.app for c in path.calls],
        used_api=[{c.api: dict(sorted(c.args.items()))} for c in path.calls],
        api_results=call_lines(path.calls, catalog),
        result_arguments=results, middle_arguments=middle, user_aware_arguments=literal)
    return AppBenchSample(input=instruction, output=output)
