"""Rebuild the two UltraTool test sets upstream never published: ``tool_selection`` and
``tool_creation_awareness``, from a file with the ``test.json`` schema.

The paper (§3.3, §3.4, §4.1) fixes the shape: both use toolsets of **8 tools**; selection adds
interference tools to the sample's own tools (its error example in appendix B.5 shows look-alikes
such as several ``delete_*`` tools); creation awareness removes some needed tools from the
toolset ("1" = the step's tool is absent and must be created, "0" = present). How we fill in
what the paper leaves open, and why:

* **Pool.** Interference tools come from the *other* samples of the same file (same language):
  one skeleton per tool name (first occurrence, verbatim upstream dict), never a name of the
  sample's own tools, never a tool whose description equals one of theirs (a renamed duplicate).
* **Selection** (``fill="lookalike"``): candidates are ranked by their highest similarity to any
  of the sample's tools (rapidfuzz ``token_set_ratio`` over name words + description, CJK
  characters as tokens); the fillers are a seeded draw from the :data:`TOP_K` best.
* **Creation awareness.** *Which tools are removed*: when the line-aligned upstream
  ``test_set/tool_creation.json`` is available, exactly the tools it asks to create. The paper
  builds one reduced toolset for both creation dimensions, and that file is consistent with it:
  its reference is the first step calling each removed tool, removed tools never appear in its
  (2-tool) toolset, and its own-tool count (147 in 1000 toolsets) is what the first 2 of a
  shuffled 8-tool set give. So our labels are upstream's labels (1752 "1" of 2381 steps).
  Otherwise a seeded ``k ~ uniform{1..n}`` of the ``n`` needed tools is removed, the distribution
  that file shows (e.g. 277 / 286 two-tool samples lost 1 / 2 tools); all may be removed.
  *Fillers* (``fill="random"``): a seeded uniform draw from the pool, as upstream's fillers are
  (mean token_set_ratio to the sample's tools 39.2, random tools 41.9), excluding the
  :data:`GUARD_K` nearest neighbours of each removed tool, so that a renamed duplicate
  (``exchange_rate_query`` for a removed ``currency_exchange_rate``) cannot turn a gold "1" wrong.
* Toolset order is shuffled with the seed; each sample's generator is seeded from
  ``(task, seed, line index)``, so the output is byte-for-byte reproducible and seeds differ.
* A sample without tool-call steps still gets its line (plan, toolset, ``reference: []``).
  A file too small to supply 8 distinct tools gives shorter toolsets, counted in the metadata.

Records have the official shape (``input``, ``toolset``, ``reference``) and are written as the
official files are (JSON Lines, ``ensure_ascii=False``); provenance goes to ``<out>.meta.json``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError
from rapidfuzz import fuzz, process

from tooleval_agents.data.datadir import cache_dir
from tooleval_agents.data.jsonio import (
    atomic_write_text,
    data_lines,
    dump_jsonl,
    first_error,
    parse_json,
)
from tooleval_agents.errors import DataFormatError, DatasetMissingError
from tooleval_agents.terminal import printable
from tooleval_agents.ultratool.paths import raw_path
from tooleval_agents.ultratool.records import Lang, RawSample, UltraToolTask

log = logging.getLogger(__name__)

RebuiltTask = Literal["tool_selection", "tool_creation_awareness"]
Fill = Literal["lookalike", "random"]
"""How the toolset is filled up: look-alikes of the sample's tools, or a uniform draw."""

BUILDER_VERSION = "1"
"""Bump when the output for a given input and seed changes (invalidates cached rebuilds)."""
TOOLSET_SIZE = 8
"""Paper §4.1: "The toolset sizes for T-hat and T-bar ... are both set to 8"."""
TOP_K = 20
"""Look-alike fillers are drawn from this many most similar pool tools."""
GUARD_K = 10
"""Nearest neighbours of each removed tool kept out of a creation-awareness toolset."""
NEIGHBOURS = 100
"""Ranked neighbours kept per tool: more than TOP_K + GUARD_K + a sample's own tools need."""
DEFAULT_FILL: dict[RebuiltTask, Fill] = {"tool_selection": "lookalike",
                                         "tool_creation_awareness": "random"}
REBUILT: tuple[RebuiltTask, ...] = ("tool_selection", "tool_creation_awareness")

RawInput = Path | str | Sequence[dict[str, Any] | RawSample]
"""A ``test.json``-schema file, or its samples (raw JSON dicts, or records)."""
Removed = Path | str | Sequence[Collection[str]]
"""Tools to remove per sample: a line-aligned ``tool_creation.json`` or one name set per line."""

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_CJK = re.compile(r"([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff])")


# --------------------------------------------------------------------------- input


@dataclass
class _Sample:
    """A raw line: the upstream dict (kept verbatim) and the tool-call steps' tool names."""

    obj: dict[str, Any]
    calls: list[str | None]
    """Per plan step: the called tool's name, ``None`` for parent and tool-free steps."""
    where: Path | str
    """Source file (or ``<samples>``), for error messages."""
    line: int
    """1-based line (or item) number."""


def _read_samples(raw: RawInput) -> tuple[list[_Sample], str | None]:
    """Samples plus the sha256 of the source file (``None`` for in-memory samples)."""
    if isinstance(raw, str | Path):
        path = Path(raw)
        if not path.is_file():
            raise FileNotFoundError(f"raw UltraTool file not found: {path}")
        out: list[_Sample] = []
        for number, text in data_lines(path):
            try:
                obj = parse_json(text)
            except json.JSONDecodeError as exc:
                raise DataFormatError(path, f"invalid JSON ({exc.msg})", line=number) from exc
            out.append(_sample(obj, path, number))
        return out, _sha256(path.read_bytes())
    items: list[_Sample] = []
    for index, item in enumerate(raw):
        # Records lose the upstream key order of skeletons; dicts keep it.
        obj = item.official() if isinstance(item, RawSample) else item
        items.append(_sample(obj, "<samples>", index + 1))
    return items, None


def _sample(obj: Any, path: Path | str, line: int) -> _Sample:
    if not isinstance(obj, dict):
        raise DataFormatError(path, f"expected a JSON object, got {type(obj).__name__}", line=line)
    try:
        rec = RawSample.model_validate(obj)
    except ValidationError as exc:
        where, msg = first_error(exc)
        raise DataFormatError(path, msg, line=line, field=where) from exc
    names = {t.name for t in rec.tools}
    calls: list[str | None] = []
    for i, step in enumerate(rec.plan):
        if step.kind != "tool_call":
            calls.append(None)
        elif step.call is not None:
            calls.append(step.call.name)
        elif step.tool.strip() in names:  # a bare tool name without arguments
            calls.append(step.tool.strip())
        else:
            raise DataFormatError(path, f"tool call is not 'name(args)': {step.tool[:80]!r}",
                                  line=line, field=f"plan.{i}.tool")
    return _Sample(obj=obj, calls=calls, where=path, line=line)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------- tool pool


def _tool_text(tool: dict[str, Any]) -> str:
    """Name words and description, lower-cased; CJK characters become separate tokens."""
    name = _CAMEL.sub(" ", str(tool.get("name", ""))).replace("_", " ")
    text = f"{name} {tool.get('description', '')}".lower()
    return " ".join(_CJK.sub(r" \1 ", text).split())


def tool_similarity(a: dict[str, Any], b: dict[str, Any]) -> float:
    """The look-alike score (0-100) between two tool skeletons.

    >>> tool_similarity({"name": "file_write", "description": "Write a file"},
    ...                 {"name": "file_read", "description": "Read a file"}) > 50
    True
    """
    return float(fuzz.token_set_ratio(_tool_text(a), _tool_text(b)))


def _norm(text: Any) -> str:
    return " ".join(str(text).lower().split())


_RANKINGS: dict[str, dict[str, list[tuple[float, int]]]] = {}
"""Pool digest -> tool text -> ranked neighbours (a few pools, most recent last)."""


@dataclass
class _Pool:
    """Every distinct tool of a file, in order of first appearance, with lazy neighbour lists."""

    names: list[str] = field(default_factory=list)
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    texts: list[str] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    by_description: dict[str, list[int]] = field(default_factory=dict)
    _ranked: dict[str, list[tuple[float, int]]] = field(default_factory=dict)

    @classmethod
    def of(cls, samples: Iterable[_Sample]) -> _Pool:
        pool = cls()
        for s in samples:
            for tool in s.obj["tools"]:
                if tool["name"] not in pool.tools:
                    pool.index[tool["name"]] = len(pool.names)
                    pool.by_description.setdefault(_norm(tool.get("description", "")),
                                                   []).append(len(pool.names))
                    pool.tools[tool["name"]] = tool
                    pool.names.append(tool["name"])
                    pool.texts.append(_tool_text(tool))
        # Rankings depend only on the pool texts: share them between builds of one file.
        digest = _sha256("\x00".join(pool.texts).encode("utf-8"))
        if digest not in _RANKINGS:
            if len(_RANKINGS) >= 4:
                _RANKINGS.pop(next(iter(_RANKINGS)))
            _RANKINGS[digest] = {}
        pool._ranked = _RANKINGS[digest]
        return pool

    def ranked(self, tool: dict[str, Any]) -> list[tuple[float, int]]:
        """``(score, pool index)`` of the :data:`NEIGHBOURS` pool tools most similar to ``tool``
        (itself included when pooled), best first, ties in pool order."""
        key = _tool_text(tool)  # not the name: samples may describe a same-named tool differently
        if key not in self._ranked:
            hits = process.extract(key, self.texts, scorer=fuzz.token_set_ratio,
                                   processor=None, limit=None)
            ranked = sorted(((float(score), idx) for _, score, idx in hits),
                            key=lambda h: (-h[0], h[1]))
            self._ranked[key] = ranked[:NEIGHBOURS]
        return self._ranked[key]


# --------------------------------------------------------------------------- building


@dataclass
class _Counts:
    samples: int = 0
    tool_steps: int = 0
    labels_1: int = 0
    removed_tools: int = 0
    samples_without_tool_steps: int = 0
    short_toolsets: int = 0
    oversize_toolsets: int = 0

    def as_dict(self, task: RebuiltTask) -> dict[str, int]:
        out = dict(self.__dict__)
        if task == "tool_selection":
            out.pop("labels_1")
            out.pop("removed_tools")
        return out


def _rng(task: RebuiltTask, seed: int, index: int) -> random.Random:
    # str seeds are hashed with SHA-512: stable across processes and PYTHONHASHSEED.
    return random.Random(f"ultratool-rebuild:{task}:{seed}:{index}")


def _own_tools(sample: _Sample, pool: _Pool) -> list[dict[str, Any]]:
    """The sample's skeletons (first per name), plus any called tool it forgot to list."""
    own: dict[str, dict[str, Any]] = {}
    for tool in sample.obj["tools"]:
        own.setdefault(tool["name"], tool)
    for name in sample.calls:
        if name is not None and name not in own:
            if name not in pool.tools:
                raise DataFormatError(sample.where, f"tool {name!r} is called but no sample "
                                      "lists its skeleton", line=sample.line, field="plan")
            own[name] = pool.tools[name]
    return list(own.values())


def _excluded(pool: _Pool, own: list[dict[str, Any]],
              guard: Collection[dict[str, Any]]) -> set[int]:
    """Pool indices never used as fillers: the sample's names, renamed duplicates of its tools
    (same description), and the nearest neighbours of the ``guard`` tools."""
    out = {pool.index[t["name"]] for t in own if t["name"] in pool.index}
    for t in own:
        out.update(pool.by_description.get(_norm(t.get("description", "")), ()))
    for tool in guard:
        out.update(idx for _, idx in pool.ranked(tool)[: GUARD_K + 1])
    return out


def _fill(rng: random.Random, pool: _Pool, own: list[dict[str, Any]], slots: int, fill: Fill,
          guard: Collection[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    if slots <= 0:
        return []
    excluded = _excluded(pool, own, guard)
    if fill == "lookalike" and own:
        # The k allowed tools most similar to any own tool (ties: pool order).
        k = max(TOP_K, slots)
        best: dict[int, float] = {}
        for tool in own:
            for score, idx in pool.ranked(tool):
                if score > best.get(idx, -1.0) and idx not in excluded:
                    best[idx] = score
        candidates = sorted(best, key=lambda i: (-best[i], i))[:k]
        if len(candidates) < k:  # tiny pools: the rest in pool order
            rest = [i for i in range(len(pool.names)) if i not in excluded and i not in best]
            candidates += rest[: k - len(candidates)]
    else:
        candidates = [i for i in range(len(pool.names)) if i not in excluded]
    chosen = rng.sample(candidates, min(slots, len(candidates)))
    return [pool.tools[pool.names[i]] for i in chosen]


def _input(sample: _Sample) -> list[dict[str, str]]:
    return [{"step": s["step"], "tool": ""} if name is not None else {"step": s["step"]}
            for s, name in zip(sample.obj["plan"], sample.calls, strict=True)]


def _finish(rng: random.Random, toolset: list[dict[str, Any]], counts: _Counts,
            steps: int) -> list[dict[str, Any]]:
    rng.shuffle(toolset)
    counts.samples += 1
    counts.tool_steps += steps
    counts.samples_without_tool_steps += steps == 0
    counts.short_toolsets += len(toolset) < TOOLSET_SIZE
    counts.oversize_toolsets += len(toolset) > TOOLSET_SIZE
    return toolset


def _selection(samples: list[_Sample], seed: int, fill: Fill,
               counts: _Counts) -> list[dict[str, Any]]:
    pool = _Pool.of(samples)
    out = []
    for index, sample in enumerate(samples):
        rng = _rng("tool_selection", seed, index)
        own = _own_tools(sample, pool)
        toolset = own + _fill(rng, pool, own, TOOLSET_SIZE - len(own), fill)
        reference = [{"step": s["step"], "tool": name}
                     for s, name in zip(sample.obj["plan"], sample.calls, strict=True)
                     if name is not None]
        toolset = _finish(rng, toolset, counts, len(reference))
        out.append({"input": _input(sample), "toolset": toolset, "reference": reference})
    return out


def _creation_awareness(samples: list[_Sample], seed: int, fill: Fill, counts: _Counts,
                        removed: Sequence[Collection[str]] | None) -> list[dict[str, Any]]:
    pool = _Pool.of(samples)
    if removed is not None and len(removed) != len(samples):
        raise DataFormatError("<removed>", f"{len(removed)} removal sets for {len(samples)} "
                              "samples: they must be line-aligned")
    out = []
    for index, sample in enumerate(samples):
        rng = _rng("tool_creation_awareness", seed, index)
        own = _own_tools(sample, pool)
        needed = list(dict.fromkeys(n for n in sample.calls if n is not None))
        if removed is not None:
            gone = set(removed[index])
            if not gone <= set(needed):
                raise DataFormatError(sample.where, "the removal set names tools the sample "
                                      f"does not call: {sorted(gone - set(needed))}",
                                      line=sample.line)
        elif needed:
            gone = set(rng.sample(needed, rng.randint(1, len(needed))))
        else:
            gone = set()
        kept = [t for t in own if t["name"] not in gone]
        gone_tools = [t for t in own if t["name"] in gone]
        toolset = kept + _fill(rng, pool, own, TOOLSET_SIZE - len(kept), fill, guard=gone_tools)
        present = {t["name"] for t in toolset}
        reference = [{"step": s["step"], "tool": "0" if name in present else "1"}
                     for s, name in zip(sample.obj["plan"], sample.calls, strict=True)
                     if name is not None]
        counts.labels_1 += sum(r["tool"] == "1" for r in reference)
        counts.removed_tools += len(gone)
        toolset = _finish(rng, toolset, counts, len(reference))
        out.append({"input": _input(sample), "toolset": toolset, "reference": reference})
    return out


def removed_from_tool_creation(path: Path | str) -> list[list[str]]:
    """Per line of an upstream ``tool_creation.json``: the names of the tools it asks to create
    (the tools removed from that sample's reduced toolset)."""
    path = Path(path)
    out: list[list[str]] = []
    for number, text in data_lines(path):
        try:
            obj = parse_json(text)
            out.append([item["tool"]["name"] for item in obj["reference"]])
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise DataFormatError(path, f"not a tool_creation record ({exc!r})",
                                  line=number) from exc
    return out


def _removed_sets(removed: Removed | None) -> Sequence[Collection[str]] | None:
    if isinstance(removed, str | Path):
        return removed_from_tool_creation(removed)
    return removed


def build_tool_selection(raw_path_or_samples: RawInput, lang: Lang, seed: int = 0, *,
                         fill: Fill = "lookalike") -> list[dict[str, Any]]:
    """``tool_selection`` records, one per raw sample, in the official shape.

    ``toolset`` = the sample's tools + interference tools from the other samples (8 in all,
    shuffled); ``input`` = every plan step, tool-call steps with ``"tool": ""``; ``reference`` =
    ``[{step, tool: gold name}]`` per tool-call step. ``lang`` is recorded by the writers; the
    similarity treats CJK characters as tokens in any language.

    >>> recs = build_tool_selection("test.json", "en", seed=0)  # doctest: +SKIP
    >>> len(recs[0]["toolset"])  # doctest: +SKIP
    8
    """
    samples, _ = _read_samples(raw_path_or_samples)
    return _selection(samples, seed, fill, _Counts())


def build_tool_creation_awareness(raw_path_or_samples: RawInput, lang: Lang, seed: int = 0, *,
                                  removed: Removed | None = None,
                                  fill: Fill = "random") -> list[dict[str, Any]]:
    """``tool_creation_awareness`` records, one per raw sample, in the official shape.

    ``removed``: upstream's ``tool_creation.json`` (line-aligned) or one set of tool names per
    sample; by default a seeded ``k ~ uniform{1..n}`` of the ``n`` called tools is removed.
    ``reference`` = ``[{step, tool: "1" if the step's tool is absent from the toolset else "0"}]``.
    """
    samples, _ = _read_samples(raw_path_or_samples)
    return _creation_awareness(samples, seed, fill, _Counts(), _removed_sets(removed))


# --------------------------------------------------------------------------- writing, cache


def meta_path(out: Path) -> Path:
    """The provenance sidecar of a rebuilt file: ``<out>.meta.json``."""
    return out.with_name(out.name + ".meta.json")


def _method(task: RebuiltTask, fill: Fill, removal: str) -> str:
    filler = (f"look-alikes: seeded draw among the {TOP_K} pool tools most similar to the "
              "sample's tools (rapidfuzz token_set_ratio, name words + description)"
              if fill == "lookalike" else
              "seeded uniform draw from the pool")
    head = f"toolset of {TOOLSET_SIZE}: "
    if task == "tool_selection":
        body = f"the sample's tools + interference tools ({filler})"
    else:
        body = (f"the sample's tools minus the removed ones ({removal}) + fillers ({filler}, "
                f"excluding the {GUARD_K} nearest neighbours of each removed tool)")
    return (head + body + "; pool = tools of the other samples of the same file (one skeleton per "
            "name, no own names, no own descriptions); order shuffled with the seed")




def _check_removal(sets: Sequence[Collection[str]], samples: list[_Sample],
                   where: Path | str) -> None:
    if len(sets) != len(samples):
        raise DataFormatError(where, f"{len(sets)} removal sets for {len(samples)} raw samples: "
                              "they must be line-aligned")
    for names, sample in zip(sets, samples, strict=True):
        extra = set(names) - {n for n in sample.calls if n is not None}
        if extra:
            raise DataFormatError(where, f"removes tools raw line {sample.line} does not call: "
                                  f"{sorted(extra)}", line=sample.line)


def _build(task: RebuiltTask, samples: list[_Sample], lang: Lang, seed: int,
           removed: Removed | None, fill: Fill | None,
           raw: Path | str, raw_sha: str | None) -> tuple[str, dict[str, Any]]:
    """The JSON Lines text and its provenance metadata."""
    if task not in REBUILT:
        raise ValueError(f"cannot rebuild {task!r}: only {', '.join(REBUILT)}")
    fill = fill or DEFAULT_FILL[task]
    counts = _Counts()
    removal: dict[str, Any] = {}
    if task == "tool_selection":
        records = _selection(samples, seed, fill, counts)
    else:
        sets = _removed_sets(removed)
        if isinstance(removed, str | Path):
            _check_removal(sets or [], samples, removed)
            removal = {"method": "upstream tool_creation.json (the same reduced toolset)",
                       "path": str(removed), "sha256": _sha256(Path(removed).read_bytes())}
        elif removed is not None:
            _check_removal(removed, samples, "<removed>")
            removal = {"method": "given per-sample sets"}
        else:
            removal = {"method": "seeded: k ~ uniform{1..n} of the n called tools"}
        records = _creation_awareness(samples, seed, fill, counts, sets)
    text = dump_jsonl(records)
    meta: dict[str, Any] = {
        "benchmark": "ultratool",
        "task": task,
        "lang": lang,
        "source": "rebuilt",
        "builder": __name__,
        "builder_version": BUILDER_VERSION,
        "seed": seed,
        "raw": {"path": str(raw), "sha256": raw_sha},
        "method": _method(task, fill, removal.get("method", "")),
        "params": {"toolset_size": TOOLSET_SIZE, "fill": fill, "top_k": TOP_K,
                   "guard_k": GUARD_K},
        "counts": counts.as_dict(task),
        "output_sha256": _sha256(text.encode("utf-8")),
    }
    if removal:
        meta["removal"] = removal
    return text, meta


def _write(out: Path, text: str, meta: dict[str, Any]) -> None:
    atomic_write_text(out, text)
    atomic_write_text(meta_path(out), json.dumps(meta, ensure_ascii=False, indent=2) + "\n")


def write_rebuilt(task: RebuiltTask, raw_path: Path | str, lang: Lang, out: Path | str,
                  seed: int = 0, *, removed: Removed | None = None,
                  fill: Fill | None = None) -> dict[str, Any]:
    """Build ``task`` from the ``test.json``-schema file ``raw_path``; write ``out`` (JSON Lines,
    one line per raw line) and ``<out>.meta.json``, both atomically. Returns the metadata.

    ``removed`` (creation awareness): see :func:`build_tool_creation_awareness`.
    ``fill``: default look-alikes for selection, uniform draw for creation awareness.
    """
    samples, sha = _read_samples(raw_path)
    text, meta = _build(task, samples, lang, seed, removed, fill, raw_path, sha)
    _write(Path(out), text, meta)
    return meta


def sibling_tool_creation(raw_file: Path | str) -> Path:
    """Where upstream keeps the ``tool_creation`` set of a ``test.json``."""
    return Path(raw_file).parent / "test_set" / "tool_creation.json"


def upstream_removal(raw_file: Path | str) -> Path | None:
    """The ``test_set/tool_creation.json`` beside ``raw_file`` if it fits it, else ``None``.

    It fits when it has one line per raw sample and removes only tools that sample calls; a
    misfit (e.g. a hand-made data dir) is logged and seeded removal is used instead.
    """
    return _upstream_removal(raw_file, _read_samples(raw_file)[0])


def _upstream_removal(raw_file: Path | str, samples: list[_Sample]) -> Path | None:
    candidate = sibling_tool_creation(raw_file)
    if not candidate.is_file():
        return None
    try:
        _check_removal(removed_from_tool_creation(candidate), samples, candidate)
    except DataFormatError as exc:
        log.warning("not taking the removed tools from %s: %s", printable(candidate),
                    printable(exc))
        return None
    return candidate


def rebuilt_path(data_dir: Path, task: UltraToolTask, lang: Lang,
                 seed: int | None = None) -> Path:
    """The cached rebuilt test set of ``task`` for ``<data_dir>``'s ``test.json``, built if absent.

    Cached under ``cache_dir()/rebuilt/<sha256(test.json)[:16]>/<lang>/<task>.seed<N>.json``
    (data directories may be read-only), default seed 0. Rebuilt when the sidecar shows another
    builder version, raw file or ``tool_creation.json``. Creation awareness takes its removed
    tools from the data dir's ``test_set/tool_creation.json`` when it fits.

    Raises:
        DatasetMissingError: ``test.json`` is missing.
    """
    if task not in REBUILT:
        raise ValueError(f"{task!r} is published upstream; only {', '.join(REBUILT)} are rebuilt")
    rtask: RebuiltTask = task
    seed = 0 if seed is None else seed
    raw = raw_path(Path(data_dir), lang)
    if not raw.is_file():
        raise DatasetMissingError("ultratool", raw, Path(data_dir))
    sha = _sha256(raw.read_bytes())
    out = cache_dir() / "rebuilt" / sha[:16] / lang / f"{task}.seed{seed}.json"
    sibling = sibling_tool_creation(raw)
    sibling_sha = (_sha256(sibling.read_bytes())
                   if rtask == "tool_creation_awareness" and sibling.is_file() else None)
    if out.is_file() and _cache_fresh(out, sha, sibling_sha):
        return out
    samples, _ = _read_samples(raw)
    removed = _upstream_removal(raw, samples) if sibling_sha else None
    text, meta = _build(rtask, samples, lang, seed, removed, None, raw, sha)
    meta["tool_creation_sha256"] = sibling_sha
    _write(out, text, meta)
    return out


def _cache_fresh(out: Path, sha: str, sibling_sha: str | None) -> bool:
    try:
        meta = json.loads(meta_path(out).read_text(encoding="utf-8"))
        return bool(meta["builder_version"] == BUILDER_VERSION
                    and meta["raw"]["sha256"] == sha
                    and meta.get("tool_creation_sha256") == sibling_sha
                    and meta["output_sha256"] == _sha256(out.read_bytes()))
    except (OSError, ValueError, KeyError, TypeError):
        return False
