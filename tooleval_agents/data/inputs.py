"""What a run reads at run time that shapes what the model is asked, noted for its identity.

A run's prompts are not all in code: the official prompt sets are read from the upstream files
``tooleval data fetch`` downloaded, a benchmark's one-shot demonstrations and tool sets from
its data directory, few-shot demonstrations from a file a strategy option names. Each reader
notes what it read (:func:`note_file`: a label and the file's sha256) while the run builds its
workflow and scorer (:func:`noting`), and the run's identity holds them (``inputs``), so a
changed file is a new run, never answered from the results of the old one.

A reader whose result is cached notes again what its first call read on every later call
(:func:`noted_cache`): a second run in the same process, whose reads the cache answers, notes
the same files.

Example::

    with noting() as read:
        workflow = strategy.build(ctx)
    read   # {"appbench/code/prompts/appbench/api_for_all_agent.txt": "3f2a...", ...}
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar

R = TypeVar("R")

_NOTED: ContextVar[dict[str, str] | None] = ContextVar("tooleval_inputs", default=None)
"""The inputs noted by the innermost :func:`noting` of this context (``None``: none open)."""


@contextlib.contextmanager
def noting() -> Iterator[dict[str, str]]:
    """Collect the inputs read in the block: label -> sha256 (16 hex digits). An enclosing
    :func:`noting` gets them too."""
    outer = _NOTED.get()
    seen: dict[str, str] = {}
    token = _NOTED.set(seen)
    try:
        yield seen
    finally:
        _NOTED.reset(token)
        if outer is not None:
            outer.update(seen)


def note_input(label: str, digest: str) -> None:
    """Note one input (nothing when no :func:`noting` is open)."""
    seen = _NOTED.get()
    if seen is not None:
        seen[label] = digest


def input_label(path: Path, data_dir: Path | None = None) -> str:
    """How an input is named: its path in the data directory (the same wherever that is, and
    for the bundled samples and a fetched copy alike), else its file name (a set rebuilt in the
    user's cache, a file an option names: its digest tells its versions apart).

    >>> input_label(Path("/d/ultratool/data/English-dataset/example/planning.json"), Path("/d"))
    'ultratool/data/English-dataset/example/planning.json'
    >>> input_label(Path("/home/me/pool.json"))
    'pool.json'
    """
    if data_dir is not None:
        with contextlib.suppress(ValueError):
            return path.resolve().relative_to(Path(data_dir).resolve()).as_posix()
    return path.name


def note_file(path: Path, data_dir: Path | None = None, digest: str | None = None) -> None:
    """Note a file read (:func:`input_label`; its sha256, computed unless ``digest`` is given,
    once per version of the file)."""
    if _NOTED.get() is None:
        return
    note_input(input_label(path, data_dir), (digest or file_digest(path))[:16])


def file_digest(path: Path) -> str:
    """The sha256 of a file (hex), read once per version (path, size and modification time)."""
    stat = path.stat()
    return _digest(str(path.resolve()), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=1024)
def _digest(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def noted_cache(read: Callable[..., R], maxsize: int | None = None) -> Callable[..., R]:
    """``read`` memoised on its (hashable) arguments, its noted inputs replayed on every call
    (the cached answer still tells the run which files it came from); ``maxsize`` bounds the
    answers kept (the oldest dropped), ``None``: every one."""
    memo: dict[Any, tuple[R, dict[str, str]]] = {}
    lock = threading.Lock()

    @functools.wraps(read)
    def call(*args: Any) -> R:
        with lock:
            hit = memo.get(args)
        if hit is None:
            with noting() as seen:
                result = read(*args)
            hit = (result, dict(seen))
            with lock:
                memo[args] = hit
                while maxsize is not None and len(memo) > maxsize:
                    memo.pop(next(iter(memo)))
            return result
        for label, digest in hit[1].items():
            note_input(label, digest)
        return hit[0]

    return call


__all__ = ["file_digest", "input_label", "note_file", "note_input", "noted_cache", "noting"]
