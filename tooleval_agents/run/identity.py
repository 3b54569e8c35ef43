"""What a run measures, and the directory that holds it.

A run's identity is everything that decides its results: the split, the strategy (and its
code, when it is the user's), the user's agent (its code: :mod:`tooleval_agents.run.usercode`),
the model and its arguments, the options, the judge, epochs and tool faults. Each is a *part*
(:func:`run_identity` takes them by name, so a new kind of system under test adds a part:
an external command, a server); the identity's digest is over every part, but for how a part
was named (its :data:`NAMED` key: ``--agent ag.py:build`` and ``from ag import build`` are one
agent when their code is one). ``config.json`` keeps it
(:attr:`~tooleval_agents.results.records.RunConfig.identity`).

One directory holds one identity. A run's directory is ``<out>/<name>/``, its readable name
(:func:`~tooleval_agents.run.naming.readable_name`); when that directory holds a run of
another identity (an edited agent, other settings), the run goes to a numbered sibling,
``<name>-v2/``, ``-v3/``..., the first that holds its identity or nothing, and says why in one
line naming what changed (:func:`place_run`). A later run of an identity finds its own
directory again: reverting an edit resumes the original run, and nothing already paid for is
discarded.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tooleval_agents.data.paths import inside
from tooleval_agents.errors import DataFormatError
from tooleval_agents.redaction import redact
from tooleval_agents.results.records import RunConfig
from tooleval_agents.results.rundir import CONFIG, EXAMPLES, RunDir
from tooleval_agents.run.experiment import _jsonable


class RunIdentity(BaseModel):
    """What a run measures (``config.json`` ``identity``)."""

    digest: str
    """sha256 (16 hex digits) over every part (their :data:`NAMED` keys left out): equal
    digests, the same system under test."""
    parts: dict[str, Any]
    """Each part by name (secrets masked): ``split``, ``strategy``, ``agent``, ``agent_cmd``,
    ``model``, ``strategy_options``, ``scoring_options``, ``judge``, ``epochs``,
    ``tool_faults``, ``inputs``; a part of code holds ``{"name" (a strategy's) or "named" (an
    agent's), "files": {file: sha256}, "code": sha256}``."""


NAMED = "named"
"""The key of a part that says how the user named it (``ag.py:build``, ``--agent-name``):
kept and shown, never digested (the same code under another name is the same run)."""


def run_identity(parts: Mapping[str, Any]) -> RunIdentity:
    """The identity of a run made of ``parts`` (any JSON-able values; a part that is ``None``
    or empty is left out, so adding a kind of part keeps the digests of runs without it).

    >>> a = run_identity({"split": "toy-echo-en", "epochs": None})
    >>> a == run_identity({"split": "toy-echo-en"}), a == run_identity({"split": "toy-x"})
    (True, False)
    >>> b = run_identity({"agent": {"named": "ag.py:build", "files": {"ag.py": "1"}}})
    >>> b.digest == run_identity({"agent": {"named": "ag:build", "files": {"ag.py": "1"}}}).digest
    True
    """
    clean = {k: v for k, v in redact(_jsonable(dict(parts))).items() if v not in (None, {}, [])}
    measured = {k: _measured(v) for k, v in clean.items()}
    text = json.dumps(measured, sort_keys=True, ensure_ascii=False, default=str)
    return RunIdentity(digest=hashlib.sha256(text.encode("utf-8")).hexdigest()[:16],
                       parts=clean)


def _measured(part: Any) -> Any:
    """A part without how it was named (:data:`NAMED`)."""
    return {k: v for k, v in part.items() if k != NAMED} if isinstance(part, dict) else part


_PART_NAMES = {"strategy_options": "strategy options", "scoring_options": "scoring options",
               "tool_faults": "tool faults", "split": "split", "agent_cmd": "agent command",
               "agent_version": "agent version"}
_CODE = ("files", "code", NAMED)
"""The keys of a part of code that say what its code is, and how it was named."""


def identity_change(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """What differs between two identities' parts, in one phrase (``agent ag.py:build: its
    code changed (ag.py)``; ``model: temperature 0 -> 0.7``).

    >>> identity_change({"agent": {"named": "a.py:f", "files": {"a.py": "1"}}},
    ...                 {"agent": {"named": "a:f", "files": {"a.py": "2"}}})
    'agent a:f: its code changed (a.py)'
    """
    said = []
    for name in sorted(set(old) | set(new)):
        before, after = old.get(name), new.get(name)
        if _measured(before) != _measured(after):
            said.append(_part_change(name, before, after))
    return "; ".join(said) or "identity"


def _part_change(name: str, before: Any, after: Any) -> str:
    label = _PART_NAMES.get(name, name)
    if name == "inputs":  # label -> digest of each file read
        changed = _changed(before or {}, after or {})
        return (f"{'a file' if len(changed) == 1 else 'files'} it reads changed: "
                + ", ".join(changed[:3]))
    if not (isinstance(before, dict) and isinstance(after, dict)):
        return f"{label}: {_short(before)} -> {_short(after)}"
    if "name" in after and before.get("name") != after.get("name"):  # another strategy
        return f"{label}: {before.get('name')} -> {after.get('name')}"
    keys = sorted(k for k in set(before) | set(after)
                  if k not in _CODE and before.get(k) != after.get(k))
    if keys or "files" not in after:
        return f"{label}: " + ", ".join(f"{k} {_short(before.get(k))} -> {_short(after.get(k))}"
                                        for k in keys[:3])
    named = after.get(NAMED) or after.get("name")
    changed = _changed(before.get("files") or {}, after.get("files") or {})
    return (f"{label} {named}" if named else label) + ": its code changed" + (
        f" ({', '.join(changed[:3])})" if changed else "")


def _changed(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """The keys whose values differ (a file whose digest changed, or that came or went)."""
    return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))


def _short(value: Any) -> str:
    text = "none" if value is None else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass(frozen=True)
class Placement:
    """Where a run goes (:func:`place_run`)."""

    path: Path
    note: str | None = None
    """Why it is not ``<out>/<name>`` (that directory holds a run of another identity)."""


def _held(path: Path) -> RunConfig | bool | None:
    """What a candidate directory holds: its config; ``None``: nothing (free); ``True``: a
    run whose config cannot be read (the run's own checks say so in one line)."""
    if not (path / CONFIG).is_file():
        examples = path / EXAMPLES
        return True if examples.is_file() and examples.stat().st_size else None
    try:
        return RunDir(path).read_config()
    except DataFormatError:
        return True


def place_run(out: Path | str, name: str, identity: RunIdentity,
              adopts: Callable[[RunConfig], bool] = lambda config: False) -> Placement:
    """The directory of the run ``identity`` under ``out`` (see the module docstring):
    ``<out>/<name>`` or its first numbered sibling that holds this identity, else the first
    that holds nothing. A run recorded before identities existed is this one when ``adopts``
    says its settings are these. A directory whose run cannot be read is taken as this one's
    (resuming it says what is wrong)."""
    base = inside(out, name, what="run name")
    first_other: str | None = None
    number = 1
    while True:
        path = base if number == 1 else base.with_name(f"{name}-v{number}")
        held = _held(path)
        if held is None or held is True:
            return Placement(path, _moved(base, path, first_other))
        assert isinstance(held, RunConfig)
        recorded = held.identity
        if (recorded is not None and recorded.get("digest") == identity.digest) or (
                recorded is None and adopts(held)):
            return Placement(path, _moved(base, path, first_other))
        if first_other is None:
            first_other = ("a run recorded without its identity (by an earlier version)"
                           if recorded is None else
                           identity_change(recorded.get("parts") or {}, identity.parts))
        number += 1


def _moved(base: Path, path: Path, why: str | None) -> str | None:
    if path == base or why is None:
        return None
    return (f"{base} holds a run of something else ({why}): this run's results are in "
            f"{path}")


__all__ = ["NAMED", "Placement", "RunIdentity", "identity_change", "place_run", "run_identity"]
