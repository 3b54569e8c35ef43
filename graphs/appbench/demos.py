"""The few-shot pool: demonstrations chosen for a request by the apps they use, from the split
itself (never the example) or from a pool file.

As in the paper, demonstrations are chosen by the sample's *gold* app multiset (sorted
``used_app``), looked up in the split by the instruction text: first the samples with the same
multiset, in file order (the official demos were the first samples using the same apps); when
fewer than ``k`` exist, the rest are the samples sharing the most apps (multiset overlap, then the
fewest extra or missing apps, then file order). The sample itself is never a demonstration:
neither its index nor any sample with the same instruction text. An instruction not in the split
gets the first ``k`` samples (``scratch["demo_source"] == "not_in_split"``). ``-O pool=FILE``
draws them from a file built by ``tooleval build appbench --split train`` instead, by the same
rule on the sample's gold apps, never a pool sample with the sample's instruction or gold calls
(``demo_source`` ``pool_same_apps``...), and refuses a pool built from the SGD test split.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from tooleval_agents.appbench.loaders import load_file
from tooleval_agents.appbench.records import AppBenchSample
from tooleval_agents.data.inputs import note_file
from tooleval_agents.errors import ToolevalError


def app_multiset(sample: AppBenchSample) -> tuple[str, ...]:
    """The sorted ``used_app`` of a sample (what the official demonstrations were matched on)."""
    return tuple(sorted(sample.output.used_app))


def rank_demos(pool: Sequence[AppBenchSample], apps: Sequence[str], k: int,
               skip: set[int]) -> tuple[list[int], str]:
    """Indices of ``k`` pool samples for a sample using ``apps``, leaving out ``skip``: the same
    app multiset first, in pool order, then the most shared apps (see the module docstring);
    and ``same_apps`` or ``filled_by_overlap``."""
    target = Counter(sorted(apps))
    ranked: list[tuple[int, int, int]] = []
    for i, s in enumerate(pool):
        if i in skip:
            continue
        other = Counter(app_multiset(s))
        overlap = sum((target & other).values())
        extra = sum(((target - other) + (other - target)).values())
        ranked.append((-overlap, extra, i))
    chosen = [i for _, _, i in sorted(ranked)[:k]]
    exact = sum(1 for i in chosen if Counter(app_multiset(pool[i])) == target)
    return chosen, "same_apps" if exact == len(chosen) else "filled_by_overlap"


def choose_demos(pool: Sequence[AppBenchSample], instruction: str, k: int,
                 ) -> tuple[list[int], str]:
    """Indices of ``k`` demonstrations for the sample with this instruction, and how they were
    found (``same_apps``, ``filled_by_overlap`` or ``not_in_split``); see the module docstring.

    Deterministic: it depends only on the pool order and the instruction.
    """
    text = instruction.strip()
    own = {i for i, s in enumerate(pool) if s.input.strip() == text}
    if not own:
        return list(range(min(k, len(pool)))), "not_in_split"
    return rank_demos(pool, pool[min(own)].output.used_app, k, own)


def choose_pool_demos(pool: Sequence[AppBenchSample], split: Sequence[AppBenchSample],
                      instruction: str, k: int) -> tuple[list[int], str]:
    """Indices of ``k`` demonstrations in a separate ``pool`` (a built train split) for the
    sample of ``split`` with this instruction, by the same rule as :func:`choose_demos` on
    the sample's gold apps; ``pool_`` + how they were found. A pool sample with the same
    instruction text or the same gold calls as the sample is never chosen. An instruction not
    in the split gets the first ``k`` such pool samples (``pool_not_in_split``)."""
    text = instruction.strip()
    sample = next((s for s in split if s.input.strip() == text), None)
    gold = sample.output.api_results if sample is not None else None
    skip = {i for i, s in enumerate(pool)
            if s.input.strip() == text or s.output.api_results == gold}
    if sample is None:
        return [i for i in range(len(pool)) if i not in skip][:k], "pool_not_in_split"
    chosen, source = rank_demos(pool, sample.output.used_app, k, skip)
    return chosen, f"pool_{source}"


def load_pool(path: Path) -> list[AppBenchSample]:
    """A few-shot pool: a file built by ``tooleval build appbench`` (any categories).

    Raises:
        ToolevalError: the file is missing, or was built from the SGD test split (the test
            samples come from those dialogues: demonstrations would leak them).
    """
    if not Path(path).is_file():
        raise ToolevalError(f"few_shot pool {path}: no such file (build one with `tooleval "
                            "build appbench --split train --out FILE`)")
    note_file(Path(path))  # its demonstrations are in the prompts
    pool = load_file(Path(path), "mm")
    if any(s.build is not None and s.build.split == "test" for s in pool):
        raise ToolevalError(f"few_shot pool {path} was built from the SGD test split, where "
                            "the AppBench test samples come from: build it with --split train")
    return pool


