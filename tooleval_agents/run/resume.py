"""Resuming a run directory: its prior config, the examples whose lines were edited, the checks
that refuse a resume with other data or settings, and undoing what a failed start created."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tooleval_agents.errors import DataFormatError, ToolevalError
from tooleval_agents.models.server_identity import (
    server_changed,
)
from tooleval_agents.results.rundir import (
    CONFIG,
    EXAMPLES,
    LOCK,
    SUMMARY,
    RunConfig,
    RunDir,
    dataset_hash,
    edited_note,
    example_digest,
)
from tooleval_agents.run.selection import select
from tooleval_agents.run.transcripts import PROMPTS

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


def _edited_ids(run_dir: RunDir) -> set[str]:
    """The examples whose latest line was changed after it was written (said in one warning
    line): a resume runs them again rather than trusting them."""
    edited = run_dir.edited()
    if edited:
        log.warning("%s: their examples run again", edited_note(run_dir.path / EXAMPLES, edited))
    return {eid for _, eid in edited}


def _check_resumable(path: Path, old: RunConfig, new: RunConfig, every: Sequence[Example],
                     prior: Mapping[str, Prior]) -> None:
    # Every example the directory holds, and the old selection, taken from today's data, must
    # be the data they ran on; the new selection may then differ (a larger --limit extends).
    digests = {str(e.id): example_digest(e.inputs or {}, e.outputs or {}) for e in every
               if str(e.id) in prior}  # one pass, a digest kept per example the run holds
    changed = next((r for eid, r in prior.items() if r.data_digest is not None
                    and digests.get(eid) != r.data_digest), None)
    before: Sequence[Example]
    try:
        before = select(every, old.dataset.samples)[:old.dataset.examples]
    except ValueError:
        before = []
    found = dataset_hash(before)
    if changed is not None:
        raise ResumeError(
            f"{path} holds a run over other data (example {changed.index} is not what it ran "
            "on: the data files or the split changed). Start over with --fresh, or keep it "
            "and choose another --out.")
    if len(before) != old.dataset.examples or found != old.dataset.hash:
        raise ResumeError(
            f"{path} holds a run over other data (its {old.dataset.examples} examples hash to "
            f"{old.dataset.hash[:12]}, the same examples here to {found[:12]}: the data files "
            "or the split changed). Start over with --fresh, or keep it and choose another "
            "--out.")
    differs = [what for what, a, b in (
        ("model", old.model.get("spec"), new.model.get("spec")),
        ("strategy", old.strategy, new.strategy),
        ("agent", old.agent, new.agent),
        ("agent command", old.agent_cmd, new.agent_cmd),
        ("strategy options", old.strategy_options, new.strategy_options),
        ("scoring options", old.scoring_options, new.scoring_options),
        ("judge", (old.judge or {}).get("spec"), (new.judge or {}).get("spec")),
        ("tool faults", old.tool_faults, new.tool_faults),
        ("model server: its model file, chat template or build changed",
         server_changed(old.model, new.model), False),
    ) if a != b]
    if differs:
        raise ResumeError(f"{path} holds a run with other settings ({', '.join(differs)}). "
                          "Start over with --fresh, or choose another --out.")


