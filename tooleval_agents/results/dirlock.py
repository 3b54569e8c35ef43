"""The lock that keeps a second process off a run directory while one runs it: ``.lock``,
held with ``flock`` and holding the holder's PID. Two processes on one run would run, and
bill, every example twice.

The OS releases the lock when its holder dies, so a lock left by a killed process is taken
over, and the new holder learns whose it was (:attr:`Held.stale`: the run then says what that
process left); a holder that ends removes the file (no ``.lock`` is left behind by a run that ended,
however it ended). Readers (the viewer's "running") ask whether the lock is held, not only
whether its PID is alive. Without ``fcntl`` (e.g. on Windows) nothing is locked.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tooleval_agents.errors import ToolevalError

try:  # POSIX; elsewhere a run directory is not locked
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

LOCK = ".lock"
"""Held (``flock``) by the process running the directory; holds its PID."""


class RunLockedError(ToolevalError):
    """Another process is running the same results directory."""


@dataclass(frozen=True)
class Held:
    """A directory this process holds (:func:`hold_directory`)."""

    stale: int | None = None
    """The PID in a ``.lock`` its holder left behind (it was killed, or crashed, while it
    held the directory); ``None``: the directory was free."""


@contextlib.contextmanager
def hold_directory(path: Path | str) -> Iterator[Held]:
    """Hold ``path`` (made if absent) for this process until the block ends.

    Raises:
        RunLockedError: another process holds it (the message names its PID).
    """
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    fd = _take(path / LOCK)
    try:
        left = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield Held(int(left) if left.isdigit() and int(left) > 0 else None)
    finally:
        with contextlib.suppress(OSError):  # removed while held: nobody else has it locked
            (path / LOCK).unlink()
        os.close(fd)  # releases the lock


def holder(path: Path | str) -> int | None:
    """The PID of the live process running the directory ``path``, ``None`` when none does
    (no ``.lock``, or one a killed process left). A live PID is not enough: a killed run's PID
    may be reused (PID 1 in a container is always alive), so the lock must be held, as
    :func:`hold_directory` takes it over when it is not (:func:`is_held`)."""
    file = Path(path) / LOCK
    try:
        text = file.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.isdigit() or int(text) <= 0:  # being written, or not ours
        return None
    try:
        os.kill(int(text), 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return None
    except PermissionError:  # alive, another user's
        pass
    return int(text) if is_held(file) else None


def is_held(file: Path | str) -> bool:
    """Whether a process holds the lock ``file`` (``flock``): tried with a shared lock,
    released at once (a run starting at that instant waits for it, :func:`_take`); without
    ``fcntl`` a lock counts as held; no file, none is."""
    if fcntl is None:
        return True
    try:
        fd = os.open(file, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:  # BlockingIOError: another process holds it
        return True
    finally:
        os.close(fd)  # releases the shared lock, if it was taken
    return False


def _take(file: Path) -> int:
    """The locked descriptor of ``file``. A holder removes the file as it ends, so the file
    locked must still be the one at the path, or another process may lock a new one."""
    for _ in range(100):  # bounded: each retry means another holder just ended
        fd = os.open(file, os.O_RDWR | os.O_CREAT, 0o644)
        if fcntl is None:
            return fd
        try:
            _flock_exclusive(fd)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            os.close(fd)
            raise RunLockedError(
                f"{file.parent} is in use by process {holder or '(unknown)'}: another tooleval "
                "run of this experiment is running. Wait for it to finish (or stop it), then "
                "run the command again.") from None
        with contextlib.suppress(FileNotFoundError):
            if os.stat(file).st_ino == os.fstat(fd).st_ino:
                return fd
        os.close(fd)
    raise RunLockedError(f"{file}: could not be locked (its holders keep changing)")


READER_WAIT_S = 0.2
"""How long a run waits for the lock before it is in use: a reader (:func:`is_held`) holds
it for microseconds, a running process for as long as it runs."""


def _flock_exclusive(fd: int) -> None:
    """``flock(LOCK_EX)`` without blocking for long (``BlockingIOError``: it is held)."""
    assert fcntl is not None
    deadline = time.monotonic() + READER_WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


__all__ = ["LOCK", "Held", "RunLockedError", "hold_directory", "holder", "is_held"]
