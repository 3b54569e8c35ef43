"""The toolset a plan_create_use agent gets for an example: the tools of its tool selection set
with those its plan creates removed (look-alikes guarded by similarity), read once per data
directory and language, or given explicitly in the inputs."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooleval_agents.data.datadir import resolve_data_dir
from tooleval_agents.data.inputs import noted_cache
from tooleval_agents.errors import DataFormatError, ToolevalError
from tooleval_agents.graphs.ultratool.prompts import PromptLang
from tooleval_agents.ultratool.loaders import REBUILT_TASKS, load_raw, load_task
from tooleval_agents.ultratool.paths import raw_path, task_path
from tooleval_agents.ultratool.rebuild import TOOLSET_SIZE, tool_similarity
from tooleval_agents.ultratool.records import (
    AwarenessRecord,
    RawSample,
    ToolSelectionRecord,
    ToolSkeleton,
)

GUARD_SIMILARITY = 80.0
"""A look-alike filler at least this similar (:func:`~tooleval_agents.ultratool.rebuild.
tool_similarity`, 0-100) to a removed tool is left out of the agent's toolset. Renamed duplicates
in the data score 80-100 (``set_reminder`` / ``create_reminder`` 80, ``check_balance`` /
``account_balance_query`` 87, ``package_status_tracker`` / ``package_status_tracking`` 100)."""


@dataclass(frozen=True)
class AgentToolset:
    """The tools a ``plan_create_use`` agent is given for one sample."""

    tools: tuple[ToolSkeleton, ...]
    """What the agent sees: the ``tool_selection`` set's tools in its (seeded, shuffled)
    order, then the creation-awareness fillers that top it up."""
    removed: tuple[str, ...] = ()
    """The sample's own tools left out (the agent must create them)."""
    guarded: tuple[str, ...] = ()
    """Fillers left out as near duplicates of a removed tool."""

    @property
    def names(self) -> set[str]:
        return {t.name for t in self.tools}


def _check_aligned(sample: RawSample, record: Any, what: str, index: int) -> None:
    steps = [s.step for s in record.input]
    if steps != [s.step for s in sample.plan]:
        raise DataFormatError((record.meta.path if record.meta else None) or what,
                              f"{what} is not the plan of test.json line {index + 1}: the sets "
                              "must be line-aligned", line=index + 1)


def build_toolset(sample: RawSample, selection: ToolSelectionRecord,
                  creation_awareness: AwarenessRecord) -> AgentToolset:
    """The agent's toolset for one sample, from its line of the two rebuilt sets (see the
    module doc): ``selection.toolset`` minus the sample's tools absent from
    ``creation_awareness.toolset`` and minus near duplicates of those, topped up to
    :data:`~tooleval_agents.ultratool.rebuild.TOOLSET_SIZE` with the creation-awareness set's
    own fillers (also checked against the removed tools).

    >>> def tool(name, text):
    ...     return {"name": name, "description": text, "arguments": {}, "results": {}}
    >>> own = [tool("set_reminder", "Set Reminder"), tool("file_write", "Write a file")]
    >>> s = RawSample(question="q", domain="d", tools=own, plan=[
    ...     {"step": "1. Remind", "tool": "set_reminder(x=1)"},
    ...     {"step": "2. Write", "tool": "file_write(y=2)"}])
    >>> steps = [{"step": "1. Remind", "tool": ""}, {"step": "2. Write", "tool": ""}]
    >>> sel = ToolSelectionRecord(input=steps, reference=[], toolset=[*own,
    ...     tool("create_reminder", "Create reminder event"), tool("weather", "Get weather")])
    >>> ca = AwarenessRecord(input=steps, reference=[], toolset=[own[1], tool("taxi", "Taxi")])
    >>> t = build_toolset(s, sel, ca)
    >>> [x.name for x in t.tools], t.removed, t.guarded
    (['file_write', 'weather', 'taxi'], ('set_reminder',), ('create_reminder',))
    """
    own = {t.name: t for t in sample.tools}
    present = {t.name for t in creation_awareness.toolset or []}
    removed = [name for name in own if name not in present]
    removed_tools = [own[name].official() for name in removed]
    tools: list[ToolSkeleton] = []
    guarded: list[str] = []
    fillers = [t for t in creation_awareness.toolset or [] if t.name not in own]
    for i, tool in enumerate([*selection.toolset, *fillers]):
        topping_up = i >= len(selection.toolset)
        if (tool.name in removed or (topping_up and len(tools) >= TOOLSET_SIZE)
                or any(t.name == tool.name for t in tools)):
            continue
        if tool.name not in own and any(
                tool_similarity(tool.official(), r) >= GUARD_SIMILARITY for r in removed_tools):
            guarded.append(tool.name)
            continue
        tools.append(tool)
    return AgentToolset(tools=tuple(tools), removed=tuple(removed), guarded=tuple(guarded))


def question_key(question: str) -> str:
    """How toolsets are keyed: the question without surrounding whitespace (upstream questions
    end with a stray newline)."""
    return question.strip()


@functools.partial(noted_cache, maxsize=8)  # a cached answer still notes the files it read
def _toolsets(data_dir: str, lang: PromptLang, versions: tuple[int, ...]
              ) -> dict[str, AgentToolset]:
    path = Path(data_dir)
    raws = load_raw(path, lang)
    selection = load_task(path, "tool_selection", lang)
    awareness = load_task(path, "tool_creation_awareness", lang)
    for name, records in (("tool_selection", selection), ("tool_creation_awareness", awareness)):
        if len(records) != len(raws):
            raise DataFormatError(data_dir, f"{lang} {name} has {len(records)} lines, test.json "
                                  f"{len(raws)}: the sets must be line-aligned")
    out: dict[str, AgentToolset] = {}
    for i, (raw, sel, aware) in enumerate(zip(raws, selection, awareness, strict=True)):
        _check_aligned(raw, sel, "tool_selection", i)
        _check_aligned(raw, aware, "tool_creation_awareness", i)
        out.setdefault(question_key(raw.question), build_toolset(raw, sel, aware))
    return out


def agent_toolsets(data_dir: Path | str | None, lang: PromptLang) -> dict[str, AgentToolset]:
    """Every sample's toolset in a data directory, by :func:`question_key` (cached per
    version of the files they come from)."""
    root = resolve_data_dir(data_dir).resolve()
    files = [raw_path(root, lang), *(task_path(root, task, lang) for task in REBUILT_TASKS)]
    versions = tuple(p.stat().st_mtime_ns if p.is_file() else 0 for p in files)
    return _toolsets(str(root), lang, versions)


def read_toolsets(data_dir: Path | str | None, lang: PromptLang) -> None:
    """Read a data directory's toolsets as a workflow is built, so the files they come from
    are noted in the run's identity before it runs (its examples look theirs up later); a
    directory without them is left to the examples' own lookups, which say what is wrong."""
    with contextlib.suppress(ToolevalError, OSError):
        agent_toolsets(data_dir, lang)


def _explicit_toolset(inputs: Mapping[str, Any]) -> AgentToolset | None:
    tools = inputs.get("toolset")
    if tools is None:
        return None
    if not isinstance(tools, list):
        raise ValueError(f"inputs['toolset'] must be a list of tool skeletons, got "
                         f"{type(tools).__name__}")
    return AgentToolset(tools=tuple(ToolSkeleton.model_validate(t) for t in tools))


def example_toolset(inputs: Mapping[str, Any], data_dir: Path | str | None,
                    lang: PromptLang) -> AgentToolset:
    """An example's toolset: ``inputs["toolset"]``, else looked up by question in
    ``data_dir`` (default data directory when ``None``)."""
    explicit = _explicit_toolset(inputs)
    if explicit is not None:
        return explicit
    found = agent_toolsets(data_dir, lang).get(question_key(inputs["question"]))
    if found is None:
        raise LookupError(f"no toolset for the question {inputs['question'][:80]!r} in "
                          f"{resolve_data_dir(data_dir)} ({lang}); pass inputs['toolset'] or "
                          "the data directory the example comes from")
    return found


