"""Resuming a run directory: its prior config and results (:func:`read_prior`), the examples
whose lines were edited, the checks that refuse a resume over other data or another model
server, and undoing what a failed start created."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooleval_agents.contracts import ExampleScore
from tooleval_agents.errors import DataFormatError, ToolevalError
from tooleval_agents.models.server_identity import (
    server_changed,
)
from tooleval_agents.results.epochs import epoch_id
from tooleval_agents.results.records import RunConfig
from tooleval_agents.results.rundir import (
    CONFIG,
    DAMAGED,
    EXAMPLES,
    LOCK,
    SUMMARY,
    RunDir,
    dataset_hash,
    edited_note,
    example_digest,
)
from tooleval_agents.results.selection import Picked, select
from tooleval_agents.results.transcripts import PROMPTS

if TYPE_CHECKING:
    from langsmith.schemas import Example

from tooleval_agents.run.experiment import Prior

log = logging.getLogger(__name__)


class ResumeError(ToolevalError):
    """The results directory holds a run that cannot be continued with these settings."""


def _prior_config(run_dir: RunDir) -> RunConfig | None:
    """The config of the run the directory holds (``None``: a new run). Results without a
    readable config are refused: run again, every example would be run and billed twice."""
    todo = "Start over with --fresh (its results are discarded), or move the directory away."
    if not (run_dir.path / CONFIG).is_file():
        results = run_dir.path / EXAMPLES
        if results.is_file() and results.stat().st_size:
            raise ResumeError(f"{results} holds results but {run_dir.path} has no {CONFIG}: "
                              f"they cannot be checked against this run's data and settings. "
                              f"{todo}")
        return None
    try:
        return run_dir.read_config()
    except DataFormatError as exc:
        raise ResumeError(f"{exc}: the run cannot be resumed without it. {todo}") from exc


@contextlib.contextmanager
def _undone_on_failure(run_dir: RunDir, made: Sequence[Path]) -> Iterator[None]:
    """A run that fails before its first result, in a directory it made (``made``: the
    folders it created, innermost first), leaves nothing behind: its files, then its folders,
    are removed (a half-made directory would look like a run)."""
    try:
        yield
    except BaseException:
        if made and not (run_dir.path / EXAMPLES).exists():
            for name in (CONFIG, PROMPTS, SUMMARY, LOCK):
                with contextlib.suppress(OSError):
                    (run_dir.path / name).unlink(missing_ok=True)
            for folder in made:  # a folder holding anything else stays
                with contextlib.suppress(OSError):
                    folder.rmdir()
        raise


def set_aside_damaged(run_dir: RunDir) -> None:
    """Lines of ``examples.jsonl`` that are no result (a disk error, an edit gone wrong) are
    moved to ``examples.damaged.jsonl`` (said in one warning line): their examples have no
    result then, and run again."""
    moved = run_dir.set_aside_damaged()
    if moved:
        shown = ", ".join(map(str, moved[:3])) + (f" and {len(moved) - 3} more"
                                                   if len(moved) > 3 else "")
        log.warning("%s: %d damaged line(s) (line %s) set aside in %s: their examples run "
                    "again", run_dir.path / EXAMPLES, len(moved), shown, DAMAGED)


def _edited_ids(run_dir: RunDir) -> set[str]:
    """The examples whose latest line was changed after it was written (said in one warning
    line): a resume runs them again rather than trusting them."""
    edited = run_dir.edited()
    if edited:
        log.warning("%s: their examples run again", edited_note(run_dir.path / EXAMPLES, edited))
    return {eid for _, eid in edited}


def _data_digests(every: Sequence[Example], epochs: int,
                  wanted: Mapping[str, Prior]) -> dict[str, str]:
    """The data digest of every attempt in ``wanted`` (an epoch's attempt has an id of its
    own, :func:`~tooleval_agents.results.epochs.epoch_id`, and its example's data), in one pass."""
    out: dict[str, str] = {}
    for e in every:
        base = str(e.id)
        attempts = [a for a in (epoch_id(base, k) for k in range(max(1, epochs))) if a in wanted]
        if attempts:
            digest = example_digest(e.inputs or {}, e.outputs or {})
            out.update(dict.fromkeys(attempts, digest))
    return out


@dataclass
class Resumed:
    """What a run directory already holds (nothing for a new run)."""

    old: RunConfig | None = None
    prior: dict[str, Prior] = field(default_factory=dict)
    scores: list[ExampleScore] = field(default_factory=list)
    edited: set[str] = field(default_factory=set)
    """Changed after they were written: run again, not trusted."""
    before: Picked[Example] | None = None
    """The examples the directory held (its selection, read from today's data)."""

    def done(self) -> set[str]:
        """The attempts finished before (an edited line or an infra error runs again)."""
        return {eid for eid, r in self.prior.items() if r.status != "infra_error"
                and eid not in self.edited}


def read_prior(run_dir: RunDir, every: Sequence[Example], digest: str) -> Resumed:
    """The run the directory holds: its config and results, checked against today's data
    (:class:`ResumeError` when they differ, or when another run of identity other than
    ``digest`` took the directory meanwhile)."""
    old = _prior_config(run_dir)
    if old is None:
        return Resumed()
    recorded = (old.identity or {}).get("digest")
    if recorded is not None and recorded != digest:  # a run placed here since we looked
        raise ResumeError(f"{run_dir.path} was just taken by a run of something else: run the "
                          "command again (it finds or makes its own directory)")
    run_dir.repair_torn_tail()
    set_aside_damaged(run_dir)
    found = Resumed(old, edited=_edited_ids(run_dir))
    for result in run_dir.iter_results():  # one at a time: only what resume needs
        found.prior[result.example_id] = Prior(result.status, result.attempt, result.index,
                                               result.data_digest)
        if result.status != "infra_error" and result.example_id not in found.edited:
            found.scores.append(ExampleScore.model_validate(result.score or {}))
    found.before = _check_resumable(run_dir.path, old, every,
                                    {k: v for k, v in found.prior.items()
                                     if k not in found.edited})
    return found


def _check_resumable(path: Path, old: RunConfig, every: Sequence[Example],
                     prior: Mapping[str, Prior]) -> Picked[Example]:
    """Refuse to resume over changed data; the examples the directory held before (its
    selection), to extend."""
    # Every attempt the directory holds, and the old selection, taken from today's data, must
    # be the data they ran on; the new selection may then differ (a larger --limit extends).
    digests = _data_digests(every, old.epochs, prior)
    changed = next((r for eid, r in prior.items() if r.data_digest is not None
                    and digests.get(eid) != r.data_digest), None)
    before: Picked[Example] | None
    try:
        before = select(every, old.dataset.samples)[:old.dataset.examples]
    except ValueError:
        before = None
    found = dataset_hash(before or [])
    if changed is not None:
        raise ResumeError(
            f"{path} holds a run over other data (example {changed.index} is not what it ran "
            "on: the data files or the split changed). Start over with --fresh, or keep it "
            "and choose another --out.")
    if before is None or len(before) != old.dataset.examples or found != old.dataset.hash:
        raise ResumeError(
            f"{path} holds a run over other data (its {old.dataset.examples} examples hash to "
            f"{old.dataset.hash[:12]}, the same examples here to {found[:12]}: the data files "
            "or the split changed). Start over with --fresh, or keep it and choose another "
            "--out.")
    return before


def check_server(path: Path, old: RunConfig, new: RunConfig) -> None:
    """Refuse to resume examples that ran on another model server (model file, chat template,
    build): a server that could not be asked is not a changed one."""
    if server_changed(old.model, new.model):
        raise ResumeError(f"{path} holds a run with other settings (model server: its model "
                          "file, chat template or build changed). Start over with --fresh, or "
                          "choose another --out.")


LEGACY_PARTS = frozenset({"split", "strategy", "model", "judge", "strategy_options",
                          "scoring_options", "epochs", "tool_faults"})
"""The identity parts a run recorded before identities could have (a part of another kind,
an agent's among them, means a run no earlier version could have made)."""


def legacy_matches(old: RunConfig, parts: Mapping[str, Any]) -> bool:
    """Whether a run recorded before identities were kept (``old``) is the run of identity
    ``parts`` (:attr:`~tooleval_agents.run.identity.RunIdentity.parts`): the same settings,
    and no code of the user's in it (an agent's code was never recorded, so an edited agent
    could not be told apart)."""
    if old.agent is not None or set(parts) - LEGACY_PARTS or any(
            isinstance(v, dict) and v.get("files") for v in parts.values()):
        return False
    model, judge = parts.get("model") or {}, parts.get("judge") or {}
    return (old.model.get("spec") == model.get("spec") and not model.get("args")
            and old.strategy == parts.get("strategy")
            and old.strategy_options == parts.get("strategy_options", {})
            and old.scoring_options == parts.get("scoring_options", {})
            and old.epochs == parts.get("epochs", 1)
            and old.tool_faults == parts.get("tool_faults")
            and (old.judge or {}).get("spec") == judge.get("spec"))
