"""Running the UltraTool construction over a file of seed queries: expansion, annotation (many
queries at once), tool merge, ``test.json`` written; resumable through the journal
(:mod:`tooleval_agents.ultratool.construction`).

Order of the output: seed by seed, each seed's original query first, then its generalised and
complicated rewrites; only built samples are written, every other query is in the summary's
``failures`` with its stage and reason.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from tooleval_agents.graphs.ultratool.build import (
    StageFailure,
    annotation_graph,
    expansion_graph,
    name_merged_tool,
)
from tooleval_agents.graphs.ultratool.build_prompts import PromptLang
from tooleval_agents.ultratool.construction import (
    BuildQuery,
    BuildSummary,
    Failure,
    Journal,
    JournalEntry,
    SeedQuery,
    journal_path,
    sample_problems,
    write_samples,
)
from tooleval_agents.ultratool.tool_merge import (
    MERGE_SIMILARITY,
    apply_merge,
    similar_groups,
    tools_by_name,
    union_skeleton,
)

Progress = Callable[[str, int, int], None]
"""``(phase, done, total)``: phase ``expanding`` or ``annotating``."""


def _failure(entry: JournalEntry) -> Failure:
    return Failure(key=entry.key, status=entry.status, stage=entry.stage, reason=entry.reason)


async def _gather(jobs: Sequence[Callable[[], Any]], concurrency: int,
                  on_done: Callable[[], None]) -> None:
    """Run ``jobs``, ``concurrency`` at a time. After the first failure (e.g. the journal
    could not be written) no job starts; those running finish, then it is raised."""
    semaphore = asyncio.Semaphore(concurrency)
    failures: list[Exception] = []

    async def one(job: Callable[[], Any]) -> None:
        async with semaphore:
            if failures:
                return
            try:
                await job()
            except Exception as exc:
                failures.append(exc)
                return
        on_done()

    await asyncio.gather(*(one(j) for j in jobs))
    if failures:
        raise failures[0]


async def _expand(seeds: Sequence[SeedQuery], model: BaseChatModel, lang: PromptLang,
                  journal: Journal, summary: BuildSummary, concurrency: int, retry_failed: bool,
                  progress: Progress) -> None:
    graph = expansion_graph(model, lang)
    todo = [s for s in seeds if journal.done(f"{s.id}/expand", retry_failed=retry_failed) is None]
    summary.resumed += len(seeds) - len(todo)
    done = [len(seeds) - len(todo)]
    progress("expanding", done[0], len(seeds))

    def job(seed: SeedQuery) -> Callable[[], Any]:
        async def run() -> None:
            state = await graph.ainvoke({"query": seed.query, "domain": seed.domain})
            failure = state.get("failure") or {}
            journal.append(JournalEntry(
                kind="expansion", key=f"{seed.id}/expand", seed=seed.id, query=seed.query,
                status=failure.get("status", "built"), stage=failure.get("stage"),
                reason=failure.get("reason"), variants=state.get("rewrites", {})))
        return run

    def tick() -> None:
        done[0] += 1
        progress("expanding", done[0], len(seeds))

    await _gather([job(s) for s in todo], concurrency, tick)


def _queries(seeds: Sequence[SeedQuery], journal: Journal, expand: bool) -> list[BuildQuery]:
    out = []
    for seed in seeds:
        variants = {"original": seed.query}
        entry = journal.entries.get(f"{seed.id}/expand")
        if expand and entry is not None:
            variants.update(entry.variants)  # a failed complication keeps the generalisations
        for variant, text in variants.items():
            out.append(BuildQuery(key=f"{seed.id}/{variant}", seed=seed.id, variant=variant,
                                  query=text, domain=seed.domain, tools=seed.tools))
    return out


async def _annotate(queries: Sequence[BuildQuery], model: BaseChatModel, lang: PromptLang,
                    journal: Journal, summary: BuildSummary, concurrency: int,
                    retry_failed: bool, progress: Progress) -> None:
    graph = annotation_graph(model, lang)
    todo = [q for q in queries if journal.done(q.key, retry_failed=retry_failed) is None]
    summary.resumed += len(queries) - len(todo)
    done = [len(queries) - len(todo)]
    progress("annotating", done[0], len(queries))

    def job(query: BuildQuery) -> Callable[[], Any]:
        async def run() -> None:
            tools = [t.official() for t in query.tools]
            state = await graph.ainvoke({"query": query.query, "domain": query.domain,
                                         "tools": tools})
            failure = state.get("failure") or {}
            journal.append(JournalEntry(
                kind="sample", key=query.key, seed=query.seed, query=query.query,
                status=failure.get("status", "built"), stage=failure.get("stage"),
                reason=failure.get("reason"),
                sample=None if failure else state.get("sample")))
        return run

    def tick() -> None:
        done[0] += 1
        progress("annotating", done[0], len(queries))

    await _gather([job(q) for q in todo], concurrency, tick)


async def merge_tools(samples: list[dict[str, Any]], model: BaseChatModel, lang: PromptLang,
                      threshold: float, summary: BuildSummary) -> list[dict[str, Any]]:
    """The samples with similar tools merged (see :mod:`tooleval_agents.ultratool.tool_merge`);
    a group whose merge the model cannot name, or after which a sample would not run clean,
    stays as it is (noted in ``summary.merge_notes``)."""
    versions = tools_by_name(samples)
    # Same name, several skeletons: one skeleton under that name.
    firsts: dict[str, dict[str, Any]] = {}
    skeletons: dict[str, dict[str, Any]] = {}
    for name, tools in versions.items():
        firsts[name] = tools[0]
        if len(tools) > 1:
            skeletons[name] = union_skeleton(tools, name, tools[0]["description"])
    plans: list[tuple[dict[str, str], dict[str, dict[str, Any]]]] = []
    if skeletons:
        plans.append(({n: n for n in skeletons}, skeletons))
    for group in similar_groups(firsts, threshold):
        members = [skeletons.get(n, firsts[n]) for n in group]
        try:
            name, description = await name_merged_tool(model, lang, members)
        except Exception as exc:  # StageFailure, or the model could not be asked
            why = str(exc) if isinstance(exc, StageFailure) else f"{type(exc).__name__}: {exc}"
            summary.merge_notes.append(f"{', '.join(group)}: not merged ({why})")
            continue
        if name in versions and name not in group:
            summary.merge_notes.append(f"{', '.join(group)}: not merged (the name {name!r} "
                                       "is another tool's)")
            continue
        plans.append(({n: name for n in group},
                      {name: union_skeleton(members, name, description)}))
    for mapping, merged in plans:
        changed = [i for i, s in enumerate(samples)
                   if any(t["name"] in mapping for t in s["tools"])]
        trial = {i: apply_merge(samples[i], mapping, merged) for i in changed}
        broken = [i for i, s in trial.items() if sample_problems(s)]
        if broken:
            summary.merge_notes.append(
                f"{', '.join(sorted(mapping))}: not merged (sample {broken[0] + 1} would not "
                f"run: {sample_problems(trial[broken[0]])[0]})")
            continue
        for i, sample in trial.items():
            samples[i] = sample
        summary.merged_tools += sum(len(versions[n]) for n in mapping) - len(merged)
    return samples


async def build_ultratool(seeds: Sequence[SeedQuery], model: BaseChatModel, lang: PromptLang,
                          out: Path, *, expand: bool = True, merge: bool = True,
                          merge_similarity: float = MERGE_SIMILARITY, concurrency: int = 4,
                          retry_failed: bool = False,
                          progress: Progress | None = None) -> BuildSummary:
    """Build (or resume building) ``out``, a ``test.json`` made from ``seeds``.

    Every finished expansion and query is in the journal (``<out>.journal.jsonl``) before the
    next starts; ``out`` is rewritten from it at the end. Interrupting loses only the queries
    in flight.
    """
    progress = progress or (lambda phase, done, total: None)
    journal = Journal(journal_path(out))
    summary = BuildSummary(out=str(out), journal=str(journal.path), seeds=len(seeds))
    try:
        if expand:
            await _expand(seeds, model, lang, journal, summary, concurrency, retry_failed,
                          progress)
        queries = _queries(seeds, journal, expand)
        summary.queries = len(queries)
        await _annotate(queries, model, lang, journal, summary, concurrency, retry_failed,
                        progress)
    finally:
        journal.file.close()

    samples: list[dict[str, Any]] = []
    keys = [f"{s.id}/expand" for s in seeds] if expand else []
    for key in [*keys, *(q.key for q in queries)]:
        entry = journal.entries[key]
        if entry.status == "built" and entry.sample is not None:
            samples.append(entry.sample)
        elif entry.status != "built":
            summary.failures.append(_failure(entry))
    summary.failed = sum(f.status == "failed" for f in summary.failures)
    summary.errors = sum(f.status == "error" for f in summary.failures)
    summary.failures_by_stage = dict(Counter(str(f.stage) for f in summary.failures))
    if merge and samples:
        samples = await merge_tools(samples, model, lang, merge_similarity, summary)
    summary.built = len(samples)
    write_samples(out, samples)
    return summary
