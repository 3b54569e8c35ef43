"""Records and files of ``tooleval build ultratool`` (the paper's §2 construction pipeline):
the seed queries read from ``--queries``, the queries to annotate, the journal that makes a
build resumable, and the summary.

**Journal.** ``<out>.journal.jsonl`` gets one line per finished unit of work, appended and
flushed as soon as it is done: an *expansion* (the generalised and complicated rewrites of a
seed query) or a *sample* (one query annotated into a ``test.json`` line, or the reason it
failed). A re-run reads it and skips what is there; an ``error`` line (the model could not be
reached, or raised) is retried, a ``failed`` line (the model's answer was unusable) is kept
unless ``--retry-failed``. ``--out`` itself is rewritten whole (atomically) from the journal
after every run, built samples in seed order, then the tool merge applied.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tooleval_agents.data.journal import JournalFile
from tooleval_agents.data.jsonio import (
    atomic_write_text,
    dump_jsonl,
    first_error,
    iter_jsonl,
    parse_json,
)
from tooleval_agents.errors import DataFormatError
from tooleval_agents.ultratool.records import RawSample, ToolSkeleton
from tooleval_agents.ultratool.stubs import execute_plan, plan_items

DEFAULT_DOMAIN = "General"
"""Domain of a seed query that names none."""

Status = Literal["built", "failed", "error"]
"""``built``: done; ``failed``: the model's answer was unusable (kept); ``error``: the model
could not be asked (retried by a re-run)."""
Stage = Literal["generalise", "complicate", "plan", "create", "refine", "annotate", "check"]
"""Where a query stopped: a model stage, or ``check`` (the finished sample did not run clean on
the simulated tools)."""


class SeedQuery(BaseModel):
    """A line of the ``--queries`` file (paper §2.2: a real user query, with the tools an
    expert expects it to need)."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1)
    """The user's request."""
    id: str = ""
    """Stable name of the query in the journal (default: ``q<line number>``)."""
    domain: str = DEFAULT_DOMAIN
    """Domain label copied to every sample made from it (e.g. ``Calendar``)."""
    tools: list[ToolSkeleton] = Field(default_factory=list)
    """The initial toolset suggested with the query (may be empty: tools are then created)."""


class BuildQuery(BaseModel):
    """One query to annotate: a seed query or one of its rewrites."""

    key: str
    """``<seed id>/<variant>``, the journal key."""
    seed: str
    """The seed query's id."""
    variant: str
    """``original``, ``generalised-1``, ``generalised-2``, ``complicated-1``..."""
    query: str
    """The text to annotate."""
    domain: str
    """Domain label."""
    tools: list[ToolSkeleton] = Field(default_factory=list)
    """The seed's initial toolset."""


class JournalEntry(BaseModel):
    """A line of the journal."""

    kind: Literal["expansion", "sample"]
    """What finished: a seed's rewrites, or one query's annotation."""
    key: str
    """``<seed id>/expand`` or the :attr:`BuildQuery.key`."""
    seed: str
    """The seed query's id."""
    status: Status
    """Outcome (see :data:`Status`)."""
    query: str = ""
    """The query annotated (samples) or the seed query (expansions)."""
    stage: Stage | None = None
    """Where a failed or errored query stopped."""
    reason: str | None = None
    """Why, one line."""
    variants: dict[str, str] = Field(default_factory=dict)
    """Expansions: variant name -> rewritten query."""
    sample: dict[str, Any] | None = None
    """Built samples: the ``test.json`` line before the tool merge."""

    @property
    def final(self) -> bool:
        return self.status != "error"


def read_queries(path: Path) -> list[SeedQuery]:
    """Seed queries from ``path``: JSON Lines (``.jsonl``/``.json``; each line a
    :class:`SeedQuery` object or a string), else one query per non-blank line of text.

    Raises:
        DataFormatError: a malformed line, or two queries with one id.
        FileNotFoundError: no such file.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"--queries: no such file {path}")
    out: list[SeedQuery] = []
    as_json = path.suffix in (".jsonl", ".json")
    for number, text in iter_jsonl(path):
        try:
            obj: Any = parse_json(text) if as_json else text.strip()
            query = SeedQuery(query=obj) if isinstance(obj, str) else \
                SeedQuery.model_validate(obj)
        except json.JSONDecodeError as exc:
            raise DataFormatError(path, f"invalid JSON ({exc.msg})", line=number) from exc
        except ValidationError as exc:
            where, msg = first_error(exc)
            raise DataFormatError(path, msg, line=number, field=where) from exc
        out.append(query if query.id else query.model_copy(update={"id": f"q{number}"}))
    seen = Counter(q.id for q in out)
    twice = sorted(i for i, n in seen.items() if n > 1)
    if twice:
        raise DataFormatError(path, f"query ids must be unique: {', '.join(twice)}")
    if not out:
        raise DataFormatError(path, "no query in the file")
    return out


def journal_path(out: Path) -> Path:
    """The journal of a build writing ``out``: ``<out>.journal.jsonl``."""
    return out.with_name(out.name + ".journal.jsonl")


class Journal:
    """The finished work of a build (last line per key wins), appended line by line through a
    :class:`~tooleval_agents.data.journal.JournalFile` (a torn last line is cut before the first
    append; the first failed write ends the build)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.file = JournalFile(self.path, sync="each")
        self.entries: dict[str, JournalEntry] = {}
        self.unreadable = 0
        """Lines that could not be read (a line cut by a crash): their work is redone."""
        if self.path.is_file():
            for _, text in iter_jsonl(self.path):
                try:
                    entry = JournalEntry.model_validate_json(text)
                except ValidationError:
                    self.unreadable += 1
                    continue
                self.entries[entry.key] = entry

    def done(self, key: str, *, retry_failed: bool = False) -> JournalEntry | None:
        """The entry of ``key`` if its work need not run again."""
        entry = self.entries.get(key)
        if entry is None or not entry.final or (retry_failed and entry.status == "failed"):
            return None
        return entry

    def append(self, entry: JournalEntry) -> None:
        """Record ``entry`` durably (synced before returning).

        Raises:
            JournalWriteError: it could not be written (nor can anything after it).
        """
        self.file.append(entry.model_dump_json())
        self.entries[entry.key] = entry


class Failure(BaseModel):
    """A query that was not built."""

    key: str
    """Journal key."""
    status: Status
    """``failed`` or ``error``."""
    stage: Stage | None
    """Where it stopped."""
    reason: str | None
    """Why."""


class BuildSummary(BaseModel):
    """What a build run did (printed by the command, ``--json`` for scripts)."""

    out: str
    """The ``test.json`` written."""
    journal: str
    """The journal file."""
    seeds: int = 0
    """Seed queries read."""
    queries: int = 0
    """Queries to annotate (seeds and their rewrites)."""
    built: int = 0
    """Samples written to ``out``."""
    failed: int = 0
    """Queries whose model answers were unusable (kept failed; ``--retry-failed`` asks again)."""
    errors: int = 0
    """Queries the model could not be asked about (a re-run retries them)."""
    resumed: int = 0
    """Units of work taken from the journal instead of being done again."""
    failures_by_stage: dict[str, int] = Field(default_factory=dict)
    """Failed or errored queries per stage."""
    failures: list[Failure] = Field(default_factory=list)
    """Each query not built, with its reason."""
    merged_tools: int = 0
    """Tools replaced by a merged tool."""
    merge_notes: list[str] = Field(default_factory=list)
    """Groups of similar tools left unmerged, and why."""


def write_samples(out: Path, samples: list[dict[str, Any]]) -> None:
    """Write ``test.json`` as upstream does (JSON Lines, ``ensure_ascii=False``), atomically."""
    atomic_write_text(Path(out), dump_jsonl(samples))


def sample_problems(sample: dict[str, Any]) -> list[str]:
    """Why a built ``test.json`` line is unusable; ``[]`` when it validates as a raw sample,
    calls at least one tool, and every call runs on the simulated tools with every ``<...>``
    reference resolved (:func:`~tooleval_agents.ultratool.stubs.execute_plan`)."""
    try:
        record = RawSample.model_validate(sample)
    except ValidationError as exc:
        where, msg = first_error(exc)
        return [f"{where}: {msg}" if where else msg]
    calls = [s for s in record.plan if s.kind == "tool_call"]
    if not calls:
        return ["the plan calls no tool"]
    trace = execute_plan(plan_items(record.plan), record.tools)
    problems = [f"step {c.step}: {c.error}" for c in trace.calls if c.error]
    problems += [f"step {c.step}: reference {r} has no earlier result"
                 for c in trace.calls for r in c.unresolved_references]
    return problems
