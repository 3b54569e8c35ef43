"""Load UltraTool files (JSON Lines named ``.json``) into validated records.

The ``load_*`` functions validate the whole file (a bad line fails the load); the ``read_*``
ones give a :class:`~tooleval_agents.data.jsonio.LazySequence`, each record validated when first
read (what a run uses: ``--limit 1`` validates one record).

Every function takes the *data directory* (see :mod:`tooleval_agents.data.datadir`) and a language.
Files that upstream never published (``tool_selection``, ``tool_creation_awareness``) are rebuilt
from ``test.json`` by :mod:`tooleval_agents.ultratool.rebuild` unless the user supplies them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, overload

from pydantic import ValidationError

from tooleval_agents.contracts import RecordMeta, Source
from tooleval_agents.data.datadir import source_of
from tooleval_agents.data.inputs import note_file
from tooleval_agents.data.jsonio import LazySequence, first_error, load_json, read_jsonl
from tooleval_agents.errors import DataFormatError, DatasetMissingError
from tooleval_agents.ultratool.paths import (
    example_path,
    raw_path,
    task_path,
)
from tooleval_agents.ultratool.rebuild import rebuilt_path
from tooleval_agents.ultratool.records import (
    RECORD_TYPES,
    AwarenessRecord,
    Lang,
    PlanningRecord,
    RawSample,
    ToolCreationRecord,
    ToolSelectionRecord,
    ToolUsageRecord,
    UltraToolTask,
    _Task,
)

REBUILT_TASKS: tuple[UltraToolTask, ...] = ("tool_selection", "tool_creation_awareness")
"""Test sets missing upstream; we rebuild them from ``test.json``."""


def _require(path: Path, data_dir: Path) -> Path:
    if not path.is_file():
        raise DatasetMissingError("ultratool", path, Path(data_dir))
    return path


def _meta(task: str, lang: Lang, source: Source, path: Path) -> Any:
    def finish(record: Any, index: int) -> None:
        record.meta = RecordMeta(benchmark="ultratool", task=task, index=index, lang=lang,
                                 source=source, path=str(path))
    return finish


def read_raw_file(path: Path, lang: Lang, source: Source = "official") -> LazySequence[RawSample]:
    """Any file with the ``test.json`` schema, each record validated when first read."""
    return read_jsonl(Path(path), RawSample, finish=_meta("raw", lang, source, Path(path)))


def load_raw_file(path: Path, lang: Lang, source: Source = "official") -> list[RawSample]:
    """Load any file with the ``test.json`` schema (the test or dev set, or a user's own)."""
    return list(read_raw_file(path, lang, source))


def load_raw(data_dir: Path, lang: Lang) -> list[RawSample]:
    """Load ``test.json`` of a language (noted as an input of a run that reads it: the
    toolsets an agent is shown are built from it)."""
    path = _require(raw_path(data_dir, lang), data_dir)
    note_file(path, data_dir)
    return load_raw_file(path, lang, source_of(data_dir))


def read_task_file(path: Path, task: UltraToolTask, lang: Lang,
                   source: Source = "official") -> LazySequence[_Task]:
    """A test-set file of ``task``, each record validated when first read."""
    return read_jsonl(Path(path), RECORD_TYPES[task], finish=_meta(task, lang, source, Path(path)))


def load_task_file(path: Path, task: UltraToolTask, lang: Lang,
                   source: Source = "official") -> list[_Task]:
    """Load a test-set file of ``task`` from an explicit path."""
    return list(read_task_file(path, task, lang, source))


@overload
def load_task(data_dir: Path, task: Literal["planning"], lang: Lang, *,
              seed: int | None = None) -> list[PlanningRecord]: ...
@overload
def load_task(data_dir: Path, task: Literal["tool_usage_awareness", "tool_creation_awareness"],
              lang: Lang, *, seed: int | None = None) -> list[AwarenessRecord]: ...
@overload
def load_task(data_dir: Path, task: Literal["tool_selection"], lang: Lang, *,
              seed: int | None = None) -> list[ToolSelectionRecord]: ...
@overload
def load_task(data_dir: Path, task: Literal["tool_creation"], lang: Lang, *,
              seed: int | None = None) -> list[ToolCreationRecord]: ...
@overload
def load_task(data_dir: Path, task: Literal["tool_usage"], lang: Lang, *,
              seed: int | None = None) -> list[ToolUsageRecord]: ...
@overload
def load_task(data_dir: Path, task: UltraToolTask, lang: Lang, *,
              seed: int | None = None) -> list[_Task]: ...
def load_task(data_dir: Path, task: UltraToolTask, lang: Lang, *, seed: int | None = None,
              ) -> list[Any]:
    """Load a dimension's test set.

    For ``tool_selection`` and ``tool_creation_awareness``, an official file in ``test_set/`` is
    used when present and ``seed`` is ``None``; otherwise the rebuilt set (cached per user) is
    returned, with ``meta.source == "rebuilt"``. An explicit ``seed`` always gives the rebuilt
    set of that seed, even when an official file exists (``seed`` is ignored for the other
    tasks). The file read is noted as an input of a run that reads it
    (:mod:`tooleval_agents.data.inputs`).
    """
    path = task_path(data_dir, task, lang)
    if task in REBUILT_TASKS and (seed is not None or not path.is_file()):
        built = rebuilt_path(data_dir, task, lang, seed=seed)
        note_file(built, data_dir)
        return load_task_file(built, task, lang, "rebuilt")
    note_file(_require(path, data_dir), data_dir)
    return load_task_file(path, task, lang, source_of(data_dir))


def load_example(data_dir: Path, task: UltraToolTask, lang: Lang) -> _Task:
    """Load the one-shot demonstration (a pretty-printed JSON object) of a task (noted as an
    input of a run that reads it: its prompts show it)."""
    path = _require(example_path(data_dir, task, lang), data_dir)
    note_file(path, data_dir)
    data = load_json(path)
    model = RECORD_TYPES[task]
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        field, msg = first_error(exc)
        raise DataFormatError(path, msg, field=field) from exc
