"""Paths built from data or user text stay inside the folder they belong to.

A manifest's file path, a run's name, a benchmark or task name a report names a file after: each
comes from text someone else wrote (a plugin, a data file, a ``config.json``, the command line)
and is joined under a root we write into. :func:`inside` is the one check they all go through:
the joined path must resolve (symlinks followed) to somewhere strictly inside the root.
A file the user names is read wherever it is; only what we *write* under a root is checked.

Example::

    >>> inside("/data", "appbench", "data/test/test_ss.json")
    PosixPath('/data/appbench/data/test/test_ss.json')
    >>> inside("/data", "../x/pwned.txt", what="file path")
    Traceback (most recent call last):
      ...
    PathEscapeError: file path '../x/pwned.txt' leaves /data ('..' is not allowed in it)
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath, PureWindowsPath

from tooleval_agents.errors import ToolevalError


class PathEscapeError(ToolevalError, ValueError):
    """A path built from data or user text would leave the folder it belongs to."""


def _problem(text: str) -> str | None:
    """Why ``text`` cannot name something inside a folder, read without the file system
    (``None``: it can)."""
    if not text.strip():
        return "it is empty"
    if "\0" in text:
        return "it contains a NUL character"
    if PurePosixPath(text).is_absolute() or PureWindowsPath(text).anchor:
        return "it is an absolute path"
    parts = PurePosixPath(text.replace("\\", "/")).parts
    if ".." in parts:
        return "'..' is not allowed in it"
    if not parts:
        return "it names the folder itself"
    return None


def check_relative(text: str, *, what: str, root: Path | str) -> None:
    """Refuse ``text`` unless it reads as a relative path that stays inside ``root`` (no
    absolute path, no ``..``, no NUL; ``root`` only names the folder in the message). What a
    manifest is checked with when it loads, before any data directory is known."""
    problem = _problem(text)
    if problem is not None:
        raise PathEscapeError(f"{what} {text!r} leaves {root} ({problem})")


def inside(root: Path | str, *parts: str | Path, what: str = "path") -> Path:
    """``root`` joined with ``parts``, refused (:class:`PathEscapeError`, naming ``what`` and
    the text) unless it stays strictly inside ``root``: no part may be empty, absolute, hold
    ``..`` or a NUL, and the joined path, symlinks resolved, must lie under the resolved
    ``root``. Returns the joined path as written (not resolved)."""
    shown = "/".join(str(p) for p in parts)
    for part in parts:
        check_relative(str(part), what=what, root=root)
    joined = Path(root).joinpath(*parts)
    base = Path(root).resolve()
    real = joined.resolve()
    if real == base or not real.is_relative_to(base):
        raise PathEscapeError(f"{what} {shown!r} leaves {root} (a symbolic link under it "
                              f"points to {real})")
    return joined


__all__ = ["PathEscapeError", "check_relative", "inside"]
