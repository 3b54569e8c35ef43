"""The append-only files of runs and builds -- a run's ``examples.jsonl`` and ``prompts.jsonl``,
the journals of the build commands -- written through one class, :class:`JournalFile`, so each
gets the same guarantees:

* **No torn line is built on.** A crash or a full disk can leave a last line half-written. It
  is cut off before the file's first append (:func:`repair_torn_tail`), so the next line never
  glues onto it (the glued pair would be unreadable, and both records lost for good).
* **The first failed write ends the file.** A write that fails (``ENOSPC``, ``EIO``...) is
  undone -- the file is cut back to its last complete line -- and every later append raises
  the same :class:`JournalWriteError`, whose one-line message names the file. A caller stops
  its work there instead of computing results it cannot keep.
* **Sealed lines** (:func:`seal`): a line may end with a digest of its own bytes, so a line
  changed after it was written is noticed (:func:`seal_state`) rather than trusted. It
  catches edits, not forgery: anyone can recompute the digest.

Durability (``sync``): ``each`` fsyncs every append; ``group`` leaves the fsync to a
background thread, one call covering every line written since its last (a process crash loses
nothing written; an OS crash may lose the last moments' lines, which a resume redoes);
``none`` never fsyncs, unless another file's group commit lists it in ``sync_first``. A group
fsync waits :data:`GROUP_WINDOW_S` after its first line, so one fsync covers the lines of that
moment: an fsync per line woke the thread (and took the GIL from the event loop) once per
example, a few percent of a fast run's CPU. A run
writes its results in ``group`` mode: waiting for a thread to write and fsync each line held
the example's concurrency slot for tens of milliseconds when the event loop was busy (the
thread needs the GIL back after every system call, and a busy loop hands it over only every
switch interval, 5 ms).

Example::

    journal = JournalFile(run_dir / "examples.jsonl", sync="group")
    try:
        journal.append(seal(line))
    except JournalWriteError as exc:
        ...  # stop: nothing more can be kept
    finally:
        journal.close()
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import queue
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from tooleval_agents.errors import ToolevalError

SyncMode = Literal["each", "group", "none"]
"""When appended lines are fsynced (see the module docstring)."""

_write = os.write
"""The one system call that writes a journal (tests replace it to simulate a full disk)."""

_TAIL_CHUNK = 1 << 16


class JournalWriteError(ToolevalError):
    """A journal could not be written (or synced): the file, the reason, what to do."""

    def __init__(self, path: Path, cause: OSError) -> None:
        self.path = Path(path)
        self.cause = cause
        reason = cause.strerror or str(cause) or type(cause).__name__
        code = f" (errno {cause.errno})" if cause.errno else ""
        super().__init__(
            f"could not write {self.path}: {reason}{code}. Work stopped at the first failed "
            "write; every line written before it is kept. Free some space (or fix the "
            "file's permissions), then run the same command again to resume")


def _complete_length(fd: int, size: int) -> int:
    """Length of the file up to and including its last newline, read backwards in chunks."""
    end = size
    while end > 0:
        start = max(0, end - _TAIL_CHUNK)
        os.lseek(fd, start, os.SEEK_SET)  # not pread: Windows has none
        at = os.read(fd, end - start).rfind(b"\n")
        if at >= 0:
            return start + at + 1
        end = start
    return 0


def repair_torn_tail(path: Path | str) -> bool:
    """Cut a last line left half-written (no trailing newline) off ``path``; True when
    something was cut (False also when there is no file)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        size = os.fstat(fd).st_size
        keep = _complete_length(fd, size)
        if keep == size:
            return False
        os.ftruncate(fd, keep)
        return True
    finally:
        os.close(fd)


GROUP_WINDOW_S = 0.05
"""How long a group fsync waits after the first line it covers (``close`` does not wait)."""


class JournalFile:
    """One append-only JSON Lines file (thread-safe; see the module docstring).

    Opened at the first :meth:`append` (its folder made, a torn last line cut), kept open until
    :meth:`close`; appending after ``close`` opens it again.
    """

    def __init__(self, path: Path | str, *, sync: SyncMode = "each",
                 sync_first: Sequence[JournalFile] = ()) -> None:
        self.path = Path(path)
        self.sync: SyncMode = sync
        self.sync_first = tuple(sync_first)
        """``group`` only: files fsynced just before this one, so a line here never outlives
        a line it refers to there (e.g. ``prompts.jsonl`` for ``examples.jsonl``)."""
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._size = 0
        """Bytes of complete lines in the file (where a failed write is cut back to)."""
        self._failure: OSError | None = None
        self._reported = False
        self._wake: queue.SimpleQueue[bool] = queue.SimpleQueue()
        """Tells the fsync thread to fsync (``True``: and stop)."""
        self._pending = False
        """A wake-up is queued and its fsync has not started: no need for another."""
        self._thread: threading.Thread | None = None
        self._closing = threading.Event()
        """Set by :meth:`close`: the fsync thread stops waiting for more lines."""

    @property
    def failed(self) -> JournalWriteError | None:
        """The error that ended the file (``None``: it is writable)."""
        failure = self._failure
        return None if failure is None else JournalWriteError(self.path, failure)

    def append(self, *lines: str | bytes) -> None:
        """Append ``lines`` (each one JSON text, without its newline) in one write.

        Raises:
            JournalWriteError: the write failed (it was undone), or an earlier one did.
        """
        data = b"".join((line.encode("utf-8") if isinstance(line, str) else line) + b"\n"
                        for line in lines)
        with self._lock:
            if self._failure is not None:
                self._reported = True
                raise JournalWriteError(self.path, self._failure)
            try:
                fd = self._fd if self._fd is not None else self._open()
                view = memoryview(data)
                while view:
                    written = _write(fd, view)
                    if written <= 0:  # never for a regular file; no endless loop either way
                        raise OSError(errno.EIO, os.strerror(errno.EIO))
                    view = view[written:]
                if self.sync == "each":
                    os.fsync(fd)
            except OSError as exc:
                self._fail(exc)
                raise JournalWriteError(self.path, exc) from exc
            self._size += len(data)
            if self.sync == "group" and not self._pending:
                self._pending = True
                self._wake.put(False)

    def fsync(self) -> None:
        """Fsync what was appended so far (a no-op when the file is not open)."""
        with self._lock:
            fd = None if self._fd is None else os.dup(self._fd)  # outlives a concurrent close
        if fd is not None:
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def close(self) -> None:
        """Fsync (``group``) and close the file.

        Raises:
            JournalWriteError: a background fsync failed and no append has said so yet.
        """
        with self._lock:
            fd, thread, wake, closing = self._fd, self._thread, self._wake, self._closing
            self._fd = self._thread = None
        if thread is not None:
            closing.set()
            wake.put(True)
            thread.join()
        if fd is not None:
            os.close(fd)
        with self._lock:
            failure, unreported = self._failure, not self._reported
            self._reported = True
        if failure is not None and unreported:
            raise JournalWriteError(self.path, failure)

    def _open(self) -> int:
        """Open the file (caller holds the lock), its torn last line cut."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o666)
        try:
            size = os.fstat(fd).st_size
            self._size = _complete_length(fd, size)
            if self._size != size:
                os.ftruncate(fd, self._size)
        except OSError:
            os.close(fd)
            raise
        self._fd = fd
        if self.sync == "group":
            self._wake, self._pending = queue.SimpleQueue(), False
            self._closing = threading.Event()
            self._thread = threading.Thread(target=self._sync_loop,
                                            args=(fd, self._wake, self._closing),
                                            name="tooleval-fsync", daemon=True)
            self._thread.start()
        return fd

    def _fail(self, exc: OSError) -> None:
        """Record the failure (caller holds the lock) and undo a partly written line."""
        self._failure, self._reported = exc, True
        if self._fd is not None:
            with contextlib.suppress(OSError):  # else the next opener cuts the torn line
                os.ftruncate(self._fd, self._size)

    def _sync_loop(self, fd: int, wake: queue.SimpleQueue[bool],
                   closing: threading.Event) -> None:
        while True:
            stop = wake.get() or closing.wait(GROUP_WINDOW_S)  # gather the moment's lines
            self._pending = False  # before the fsync: a line written after it wakes us again
            try:
                for other in self.sync_first:
                    other.fsync()
                os.fsync(fd)
            except OSError as exc:  # the next append (or close) reports it
                with self._lock:
                    if self._failure is None:
                        self._failure, self._reported = exc, False
            if stop:
                return


# ----------------------------------------------------------------------------- sealed lines

SEAL_KEY = "line_digest"
"""The member a sealed line ends with."""
_SEAL_HEAD = b',"' + SEAL_KEY.encode() + b'":"'
_SEAL_NAME = b'"' + SEAL_KEY.encode() + b'"'
_DIGEST = 16
_SEAL_LEN = len(_SEAL_HEAD) + _DIGEST + 2  # the head, the digest, '"}'


def _digest(body: bytes | memoryview) -> bytes:
    return hashlib.sha256(body).hexdigest()[:_DIGEST].encode("ascii")


def seal(body: str | bytes) -> bytes:
    """A JSON object's text with a last member ``"line_digest"``: the first 16 hex digits of
    the sha256 of the text without it.

    >>> seal('{"a":1}')
    b'{"a":1,"line_digest":"015abd7f5cc57a2d"}'
    >>> seal_state(seal('{"a":1}')), seal_state(b'{"a":2,"line_digest":"015abd7f5cc57a2d"}')
    ('intact', 'edited')

    Raises:
        ValueError: ``body`` is not a non-empty JSON object's text.
    """
    data = body.encode("utf-8") if isinstance(body, str) else body
    if not data.endswith(b"}") or data[:-1].rstrip().endswith(b"{"):
        raise ValueError("only a non-empty JSON object's text can be sealed")
    return data[:-1] + _SEAL_HEAD + _digest(data) + b'"}'


SealState = Literal["intact", "edited", "unsealed"]


def seal_state(line: bytes) -> SealState:
    """Whether a line (its newline may be included) is as :func:`seal` wrote it: ``intact``,
    ``edited`` (it has a seal, but the bytes changed since), or ``unsealed`` (no
    ``line_digest`` member at all: a line written before lines were sealed)."""
    end = len(line) - 1 if line.endswith(b"\n") else len(line)
    start = end - _SEAL_LEN
    if start > 0 and line[start:end - _DIGEST - 2] == _SEAL_HEAD and \
            line[end - 2:end] == b'"}':
        digest = hashlib.sha256(memoryview(line)[:start])
        digest.update(b"}")
        if digest.hexdigest()[:_DIGEST].encode("ascii") == line[end - _DIGEST - 2:end - 2]:
            return "intact"
        return "edited"
    # Reformatted, or the seal moved: a key can only appear unescaped as a member name.
    return "edited" if _SEAL_NAME in line else "unsealed"


__all__ = ["SEAL_KEY", "JournalFile", "JournalWriteError", "SealState", "SyncMode",
           "repair_torn_tail", "seal", "seal_state"]
