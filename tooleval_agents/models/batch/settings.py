"""What ``--batch`` is told (:class:`BatchSettings`) and the one error of a request its batch did
not run (:class:`BatchRequestError`): light, imported wherever a run's settings are."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BatchSettings:
    """How calls are gathered into batches.

    Example::

        RunSpec(benchmark="appbench", subset="ss", model="openai:gpt-4o-mini",
                batch=BatchSettings(size=200, wait=60))
    """

    size: int = 100
    """Requests per batch at most (a full batch leaves at once)."""
    wait: float = 30.0
    """Seconds a batch waits for more requests after its first one."""
    poll: float = 30.0
    """Seconds between two status checks of a batch that runs."""

    def __post_init__(self) -> None:
        if self.size < 1:
            raise ValueError(f"batch size must be >= 1, got {self.size}")
        if self.wait < 0 or self.poll <= 0:
            raise ValueError("batch wait must be >= 0 and poll > 0 seconds")


class BatchRequestError(Exception):
    """A request its batch did not run: ``kind`` is ``batch_expired``, ``batch_cancelled`` or
    ``batch_failed`` (an infrastructure failure of the example, run again by a resume)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind



__all__ = ["BatchRequestError", "BatchSettings"]
