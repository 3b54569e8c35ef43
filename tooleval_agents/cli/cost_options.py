"""The ``tooleval run`` options that trade time for money: ``--max-runs`` (a sweep's runs at once)
and ``--batch`` (provider batch APIs), with what ``--batch`` becomes for a run (docs/cost.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from tooleval_agents.cli.base import FLAG, fail
from tooleval_agents.models.batch.settings import BatchSettings

MaxRunsArg = Annotated[int, typer.Option(
        "--max-runs", metavar="N", min=1, help="Runs of a sweep going at once in this "
        "process, each with its own --max-concurrency (runs on the same endpoint share its "
        "--rps); the results are those of one run after the other.")]
BatchArg = Annotated[bool, typer.Option(
        "--batch", metavar=FLAG, help="Send the model's and the judge's calls as provider "
        "batches (OpenAI and OpenAI-compatible: the Batch API), at batch prices; answers come "
        "within the provider's window (up to 24 h), and the same command resumes by polling "
        "the batches sent (docs/cost.md).")]
BatchSizeArg = Annotated[int, typer.Option(
        "--batch-size", metavar="N", min=1, help="With --batch: requests per batch at most.")]
BatchWaitArg = Annotated[float, typer.Option(
        "--batch-wait", metavar="SECONDS", min=0.0, help="With --batch: seconds a batch "
        "waits for more requests after its first (and between status checks, 30 s at most).")]


def batch_settings(models: list[str], batch: bool, size: int, wait: float
                   ) -> BatchSettings | bool:
    """``--batch`` and its bounds as a run's setting (status checks every ``wait`` seconds, 30
    at most); exit 2 for a sweep with an offline model, which has nothing to batch."""
    if not batch:
        return False
    from tooleval_agents.models.specs import is_offline

    offline = [m for m in models if is_offline(m)]
    if offline:
        raise fail(f"--batch: the offline model {offline[0]} answers at once; batches are for "
                   "provider models", 2)
    return BatchSettings(size=size, wait=wait, poll=max(0.05, min(30.0, wait)))


__all__ = ["BatchArg", "BatchSizeArg", "BatchWaitArg", "MaxRunsArg", "batch_settings"]
