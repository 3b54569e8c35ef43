"""Check :mod:`~tooleval_agents.appbench.sgd_paths` against the published AppBench samples.

A sample's source dialogues are found from its ``used_api`` (API name and every concrete
argument equal to an SGD ``service_call``), independently of the extraction rules; the
extracted path of those dialogues (joined in the sample's order when its calls come from
several, as in MS) must then give the sample's gold lines (``api_results``) exactly.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel

from tooleval_agents.appbench.records import AppBenchSample, Catalog
from tooleval_agents.appbench.sgd_paths import (
    SgdPath,
    Skipped,
    call_lines,
    compose,
    dialogue_path,
    intent_map,
)

MISS_KINDS = ("not there", "skipped", "call count", "lines differ")
"""Why a sample is not reproduced: a gold call is in none of the dialogues; its dialogue gives
no path; the path has more or fewer calls than the sample; same calls, other lines."""


class SampleMatch(BaseModel):
    """The outcome for one published sample."""

    index: int
    """Position in ``test_<category>.json``."""
    dialogues: list[str]
    """Source dialogue ids found (empty when a call is in none)."""
    matched: bool
    """Extracted lines == gold lines."""
    kind: str | None = None
    """One of :data:`MISS_KINDS` when not matched."""
    detail: str = ""
    """The first difference, for a person."""


def _call_key(api: str, args: dict[str, Any]) -> str:
    return api + json.dumps({str(k): str(v) for k, v in args.items()}, sort_keys=True)


class DialogueIndex:
    """Where each service call of a set of dialogues is, and each dialogue's path."""

    def __init__(self, dialogues: Iterable[dict[str, Any]]) -> None:
        self.where: dict[str, list[str]] = defaultdict(list)
        """Call key -> dialogue ids holding that call."""
        self.paths: dict[str, SgdPath | Skipped] = {}
        """Dialogue id -> its path, or why it has none."""
        for dialogue in dialogues:
            did = str(dialogue["dialogue_id"])
            self.paths[did] = dialogue_path(dialogue)
            for turn in dialogue.get("turns", []):
                for frame in turn.get("frames", []):
                    call = frame.get("service_call")
                    mapped = call and intent_map().get(
                        (frame.get("service"), call.get("method")))
                    if mapped:
                        self.where[_call_key(mapped[1], call.get("parameters") or {})].append(did)

    def sources(self, sample: AppBenchSample) -> list[str] | None:
        """The dialogues a sample's calls come from, in order: consecutive calls share one
        dialogue while they can; ``None`` when a call is in none."""
        groups: list[set[str]] = []
        for used in sample.output.used_api:
            (api, args), = used.items()
            found = set(self.where.get(_call_key(api, args), ()))
            if not found:
                return None
            if groups and groups[-1] & found:
                groups[-1] &= found
            else:
                groups.append(found)
        return [min(g) for g in groups]


def match_sample(index: int, sample: AppBenchSample, dialogues: DialogueIndex,
                 catalog: Catalog | None = None) -> SampleMatch:
    """Whether the extraction reproduces one sample's gold lines."""
    sources = dialogues.sources(sample)
    if sources is None:
        return SampleMatch(index=index, dialogues=[], matched=False, kind="not there")
    paths = [dialogues.paths[d] for d in sources]
    skipped = [p for p in paths if isinstance(p, Skipped)]
    if skipped:
        return SampleMatch(index=index, dialogues=sources, matched=False, kind="skipped",
                           detail=f"{skipped[0].dialogue}: {skipped[0].reason}")
    path = compose(p for p in paths if isinstance(p, SgdPath))
    lines, gold = call_lines(path.calls, catalog), sample.output.api_results
    if lines == gold:
        return SampleMatch(index=index, dialogues=sources, matched=True)
    if len(lines) != len(gold):
        return SampleMatch(index=index, dialogues=sources, matched=False, kind="call count",
                           detail=f"path {[c.api for c in path.calls]}, sample "
                                  f"{[next(iter(u)) for u in sample.output.used_api]}")
    first = next(i for i, (a, b) in enumerate(zip(lines, gold, strict=True)) if a != b)
    return SampleMatch(index=index, dialogues=sources, matched=False, kind="lines differ",
                       detail=f"call {first}: got {lines[first]!r}, gold {gold[first]!r}")


class CategoryMatch(BaseModel):
    """Outcomes of one category's samples."""

    samples: int
    """Samples in the file."""
    there: int
    """Samples whose every call is in the dialogues given."""
    matched: int
    """Samples reproduced exactly."""
    misses: dict[str, int]
    """Kind -> count, over the samples that are there."""
    results: list[SampleMatch]
    """Every sample's outcome."""

    @property
    def share(self) -> float:
        """Matched / there (0 when none is there)."""
        return self.matched / self.there if self.there else 0.0


def match_category(samples: Sequence[AppBenchSample], dialogues: DialogueIndex,
                   catalog: Catalog | None = None) -> CategoryMatch:
    """Match every sample of a category file."""
    results = [match_sample(i, s, dialogues, catalog) for i, s in enumerate(samples)]
    there = [r for r in results if r.kind != "not there"]
    misses = Counter(r.kind for r in there if not r.matched and r.kind)
    return CategoryMatch(samples=len(results), there=len(there),
                         matched=sum(r.matched for r in there),
                         misses=dict(misses), results=results)
