"""The AppBench construction workflow (paper §3.3): ``tooleval build appbench``.

extract (planning paths from SGD dialogues, :mod:`tooleval_agents.appbench.sgd_paths`) ->
annotate, one branch per path (``Send``): a model writes one instruction, a judge scores it
(fluency, diversity, consistency) and a check without a model lists free-text values the
instruction lost -> write (the kept samples, official test-file format).

Every finished path is appended to a journal (``<out>.build.jsonl``) at once, so a re-run after a
crash or Ctrl-C skips it; the model calls go through the project's response cache, so a path
that was interrupted half-way costs nothing twice. A provider error leaves its path out of the
journal (a re-run retries it); an unreadable judge answer is journaled as ``failed``.
"""

from __future__ import annotations

import json
import math
import operator
import threading
from collections import Counter
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send
from pydantic import BaseModel, Field

from tooleval_agents.appbench.catalog import load_catalog
from tooleval_agents.appbench.names import CATEGORIES, Category
from tooleval_agents.appbench.records import AppBenchSample, BuildInfo, Catalog
from tooleval_agents.appbench.sgd_paths import SgdPath, Skipped, compose, split_paths, to_sample
from tooleval_agents.data.journal import JournalFile
from tooleval_agents.data.jsonio import parse_json
from tooleval_agents.errors import DataFormatError, ToolevalError
from tooleval_agents.graphs.appbench.build_prompts import (
    JUDGE_SYSTEM,
    SCORE_KEYS,
    WRITER_SYSTEM,
    judge_prompt,
    read_instruction,
    read_scores,
    writer_prompt,
)

Status = Literal["kept", "rejected", "failed"]


class BuildSettings(BaseModel):
    """What to build."""

    sgd_dir: Path
    """SGD directory holding ``<split>/dialogues_*.json``."""
    split: str
    """train, dev or test."""
    out: Path
    """Output file (a JSON array of samples in the official format); a name holding
    ``{category}`` gives one file per category (``.../test_{category}.json``: a data
    directory the runner and scorer read with ``--data-dir``)."""
    categories: tuple[Category, ...] = CATEGORIES
    """Categories to keep."""
    threshold: float = 6.0
    """Keep an instruction whose mean judge score is at least this (1-10)."""
    paths_only: bool = False
    """Stop after extraction: every path, with an empty ``input``."""
    limit: int | None = None
    """At most this many paths (after the category filter), in extraction order."""
    compose_ms: int = 0
    """Also join single-call paths of different apps into up to this many MS paths, as the
    official MS set did."""
    max_concurrency: int = 4
    """Paths annotated at once."""


class JournalEntry(BaseModel):
    """A finished path."""

    key: str
    """The path's id (dialogue ids joined with ``+``)."""
    status: Status
    """kept (in the output), rejected (below the threshold or values lost), failed (the
    judge's answer held no scores)."""
    sample: dict[str, Any]
    """The sample in the official format, with ``build`` (scores, provenance)."""
    reason: str = ""
    """Why it was rejected or failed."""


class BuildSummary(BaseModel):
    """What a build did."""

    out: str
    """The output file."""
    paths: int
    """Paths extracted (after category filter and limit)."""
    skipped: dict[str, int]
    """Dialogues without a path, by reason."""
    by_category: dict[str, int]
    """Paths per category."""
    statuses: dict[str, int] = Field(default_factory=dict)
    """kept / rejected / failed over the journal, and ``errors`` (provider errors: retried on
    the next run)."""
    reused: int = 0
    """Paths finished by an earlier run (skipped now)."""
    written: int = 0
    """Samples in the output file."""


class Journal:
    """``<out>.build.jsonl``: one :class:`JournalEntry` per finished path (thread-safe; a
    :class:`~tooleval_agents.data.journal.JournalFile`: a torn last line is cut before the first
    append, the first failed write ends the build)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file = JournalFile(path, sync="each")

    def load(self) -> dict[str, JournalEntry]:
        """The finished paths. A line that is not JSON was cut by a crash (the next append
        starts on a new line) and is ignored; its path is done again."""
        if not self.path.is_file():
            return {}
        out: dict[str, JournalEntry] = {}
        lines = self.path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, start=1):
            try:
                data = parse_json(line)
            except ValueError:
                continue
            try:
                entry = JournalEntry.model_validate(data)
            except ValueError as exc:
                raise DataFormatError(self.path, f"not a journal entry: {exc}",
                                      line=number) from exc
            out[entry.key] = entry
        return out

    def append(self, entry: JournalEntry) -> None:
        """Record ``entry`` (fsynced).

        Raises:
            JournalWriteError: it could not be written (nor can anything after it).
        """
        self.file.append(entry.model_dump_json())


CATEGORY_FIELD = "{category}"


def journal_path(out: Path) -> Path:
    """``<out>.build.jsonl`` (``{category}`` in the name read as ``all``)."""
    return out.with_name(out.name.replace(CATEGORY_FIELD, "all") + ".build.jsonl")


def compose_ms(paths: list[SgdPath], n: int) -> list[SgdPath]:
    """Up to ``n`` MS paths, each joining 2, 3, 3, 2, 3, 3... single-call paths of different
    apps, every single-call path used once, in key order (deterministic)."""
    singles = sorted((p for p in paths if len(p.calls) == 1), key=lambda p: p.key)
    out: list[SgdPath] = []
    sizes = (2, 3, 3)
    while singles and len(out) < n:
        size = sizes[len(out) % len(sizes)]
        group = [singles.pop(0)]
        for candidate in list(singles):
            if len(group) == size:
                break
            if candidate.calls[0].app not in {g.calls[0].app for g in group}:
                group.append(candidate)
                singles.remove(candidate)
        if len(group) < 2:
            break
        out.append(compose(group))
    return out


def extract(settings: BuildSettings) -> tuple[list[SgdPath], Counter[str]]:
    """The paths of the split to annotate, and the skipped dialogues by reason."""
    paths: list[SgdPath] = []
    skipped: Counter[str] = Counter()
    for item in split_paths(settings.sgd_dir, settings.split):
        if isinstance(item, Skipped):
            skipped[item.reason.split(".")[0] if item.reason.startswith("unmapped")
                    else item.reason] += 1
        else:
            paths.append(item)
    if settings.compose_ms:
        paths += compose_ms(paths, settings.compose_ms)
    kept = [p for p in paths if p.category in settings.categories]
    return kept[:settings.limit] if settings.limit is not None else kept, skipped


def missing_values(sample: AppBenchSample, instruction: str, catalog: Catalog) -> list[str]:
    """Free-text literal values (non-categorical ``str`` arguments: names, places) that the
    instruction does not contain; dates, times, counts and enumerations may be reworded."""
    text = instruction.lower()
    missing = []
    for call in sample.calls:
        spec = catalog.api(call.app or "", call.api)
        for key, value in call.literal_args.items():
            arg = spec and (spec.required.get(key) or spec.optional.get(key))
            if arg and arg.type == "str" and not arg.values and value.lower() not in text:
                missing.append(value)
    return list(dict.fromkeys(missing))


def _ask(model: BaseChatModel, system: str, user: str) -> str:
    return model.invoke([SystemMessage(system), HumanMessage(user)]).text


def annotate(path: SgdPath, settings: BuildSettings, writer: BaseChatModel,
             judge: BaseChatModel, catalog: Catalog) -> JournalEntry:
    """Write and judge the instruction of one path (provider errors propagate)."""
    gold = to_sample(path, catalog=catalog)
    info = BuildInfo(dialogues=path.dialogues, split=settings.split, category=path.category)
    instruction = read_instruction(_ask(writer, WRITER_SYSTEM, writer_prompt(path, gold)))
    sample = gold.model_copy(update={"input": instruction})
    status: Status = "kept"
    reason = ""
    if not instruction:
        status, reason = "failed", "the writer's answer held no instruction"
    else:
        info.missing_values = missing_values(sample, instruction, catalog)
        verdict = read_scores(_ask(judge, JUDGE_SYSTEM, judge_prompt(path, gold, instruction)))
        if verdict is None:
            status, reason = "failed", "the judge's answer held no scores"
        else:
            info.scores, info.judge_reason = verdict
            mean = math.fsum(info.scores.values()) / len(SCORE_KEYS)
            if mean < settings.threshold:
                status, reason = "rejected", f"mean score {mean:.2f} < {settings.threshold}"
            elif info.missing_values:
                status, reason = "rejected", f"values lost: {info.missing_values}"
    return JournalEntry(key=path.key, status=status, reason=reason,
                        sample={**sample.official(), "build": info.model_dump(mode="json")})


def paths_only_entry(path: SgdPath, settings: BuildSettings, catalog: Catalog) -> JournalEntry:
    """A path with an empty ``input`` (``--paths-only``)."""
    info = BuildInfo(dialogues=path.dialogues, split=settings.split, category=path.category)
    sample = to_sample(path, catalog=catalog)
    return JournalEntry(key=path.key, status="kept",
                        sample={**sample.official(), "build": info.model_dump(mode="json")})


class BuildState(TypedDict, total=False):
    """The workflow's state."""

    paths: list[SgdPath]
    """Every extracted path, in output order."""
    skipped: dict[str, int]
    """Dialogues without a path, by reason."""
    pending: list[SgdPath]
    """Paths no earlier run finished."""
    errors: Annotated[list[str], operator.add]
    """Provider errors of this run (their paths are retried next time)."""
    path: SgdPath
    """The path of one annotate branch (its ``Send`` input)."""


def _write_json(path: Path, items: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(items, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)  # atomic: a crash never leaves half a file


def output_files(settings: BuildSettings) -> list[Path]:
    """The file(s) a build writes."""
    if CATEGORY_FIELD not in settings.out.name:
        return [settings.out]
    return [settings.out.with_name(settings.out.name.replace(CATEGORY_FIELD, c))
            for c in settings.categories]


def write_output(settings: BuildSettings, order: list[str],
                 entries: dict[str, JournalEntry]) -> None:
    """The kept samples in path order, as JSON arrays (one per category when the output name
    holds ``{category}``)."""
    samples = [entries[k].sample for k in order if k in entries and entries[k].status == "kept"]
    if CATEGORY_FIELD not in settings.out.name:
        _write_json(settings.out, samples)
        return
    for category, path in zip(settings.categories, output_files(settings), strict=True):
        _write_json(path, [s for s in samples if s["build"]["category"] == category])


class Tracker:
    """Progress of a build: told the number of paths to annotate, then each one finished."""

    def start(self, total: int) -> None:
        """``total`` paths are to be annotated."""

    def done(self, entry: JournalEntry | None) -> None:
        """A path is finished (``None``: a provider error)."""


def build_workflow(settings: BuildSettings, writer: BaseChatModel | None,
                   judge: BaseChatModel | None, journal: Journal, tracker: Tracker,
                   ) -> CompiledStateGraph[Any, Any, Any, Any]:
    """extract -> annotate (one branch per pending path) -> write."""
    catalog = load_catalog()

    def extract_node(state: BuildState) -> dict[str, Any]:
        paths, skipped = extract(settings)
        if not paths and not skipped:
            raise ToolevalError(f"no SGD dialogues in {settings.sgd_dir / settings.split} "
                                "(dialogues_*.json); `tooleval data fetch sgd --include "
                                f"'{settings.split}/dialogues_*'` gets them")
        finished = {} if settings.paths_only else journal.load()
        pending = [p for p in paths if p.key not in finished]
        tracker.start(0 if settings.paths_only else len(pending))
        return {"paths": paths, "skipped": dict(skipped), "pending": pending}

    def fan_out(state: BuildState) -> list[Send] | str:
        if settings.paths_only or not state["pending"]:
            return "write"
        return [Send("annotate", {"path": p}) for p in state["pending"]]

    def annotate_node(state: BuildState) -> dict[str, Any]:
        assert writer is not None and judge is not None
        if (failed := journal.file.failed) is not None:  # its result could not be kept
            raise failed
        try:
            entry = annotate(state["path"], settings, writer, judge, catalog)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # a provider error: retried on the next run
            tracker.done(None)
            return {"errors": [f"{state['path'].key}: {type(exc).__name__}: {exc}"[:300]]}
        journal.append(entry)
        tracker.done(entry)
        return {}

    def write_node(state: BuildState) -> dict[str, Any]:
        if settings.paths_only:
            entries = {p.key: paths_only_entry(p, settings, catalog) for p in state["paths"]}
        else:
            entries = journal.load()
        write_output(settings, [p.key for p in state["paths"]], entries)
        return {}

    graph = StateGraph(BuildState)
    graph.add_node("extract", extract_node)
    graph.add_node("annotate", annotate_node)
    graph.add_node("write", write_node)
    graph.add_edge(START, "extract")
    graph.add_conditional_edges("extract", fan_out, ["annotate", "write"])
    graph.add_edge("annotate", "write")
    graph.add_edge("write", END)
    return graph.compile(name="appbench-build")


class _Bar(Tracker):
    """A rich progress bar on stderr with the running counts of statuses."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                             TimeRemainingColumn(), console=Console(stderr=True))
        self._task = self._bar.add_task("annotating", total=None)

    def start(self, total: int) -> None:
        if total:
            self._bar.update(self._task, total=total)
            self._bar.start()

    def done(self, entry: JournalEntry | None) -> None:
        with self._lock:
            self._counts[entry.status if entry else "error"] += 1
            self._bar.update(self._task, advance=1, description="annotating " + " ".join(
                f"{k}={v}" for k, v in sorted(self._counts.items())))

    def stop(self) -> None:
        self._bar.stop()


def run_build(settings: BuildSettings, writer: BaseChatModel | None = None,
              judge: BaseChatModel | None = None, *, progress: bool = False) -> BuildSummary:
    """Build the file ``settings.out`` (see the module docstring).

    Raises:
        ToolevalError: no dialogue file for the split, or no model without ``paths_only``.
    """
    if not settings.paths_only and (writer is None or judge is None):
        raise ToolevalError("a model is needed to write instructions (or use --paths-only)")
    journal = Journal(journal_path(settings.out))
    finished = journal.load()
    bar = _Bar() if progress else None
    try:
        workflow = build_workflow(settings, writer, judge, journal, bar or Tracker())
        final = workflow.invoke({}, config={"max_concurrency": settings.max_concurrency})
    finally:
        journal.file.close()
        if bar is not None:
            bar.stop()
    paths: list[SgdPath] = final["paths"]
    keys = {p.key for p in paths}
    entries = {} if settings.paths_only else journal.load()
    statuses: Counter[str] = Counter(e.status for k, e in entries.items() if k in keys)
    if final.get("errors"):
        statuses["errors"] = len(final["errors"])
    files = output_files(settings)
    written = sum(len(json.loads(f.read_text(encoding="utf-8"))) for f in files)
    return BuildSummary(
        out=", ".join(str(f) for f in files), paths=len(paths), skipped=final["skipped"],
        by_category=dict(Counter(p.category for p in paths)), statuses=dict(statuses),
        reused=0 if settings.paths_only else len(keys & set(finished)), written=written)
