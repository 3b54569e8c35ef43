"""Errors the package raises on purpose: each says what is wrong and what to do."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path


class ToolevalError(Exception):
    """Base class of the package's own errors."""


class UsageError(ToolevalError, ValueError):
    """A bad argument, option, name or path on the command line: every command exits 2 on it
    (``cli.base.handle_errors``), before anything runs or is written."""


class NotARunError(UsageError, FileNotFoundError):
    """A path given as a run directory holds no run."""


class UnknownNameError(UsageError, KeyError):
    """A name (benchmark, strategy, metric, ...) that is not known: the message lists the
    known ones and ends with :func:`did_you_mean`."""

    def __str__(self) -> str:  # a KeyError's str would quote the message
        return str(self.args[0]) if self.args else ""


class DataFormatError(ToolevalError, ValueError):
    """A data file does not have the expected shape.

    The message names the file, the 1-based line (JSON Lines) or record index (JSON arrays),
    and the field path, e.g. ``test.json:17: plan.2.tool: Input should be a valid string``.
    """

    def __init__(
        self, path: Path | str, message: str, *, line: int | None = None, field: str | None = None
    ) -> None:
        self.path = Path(path)
        self.line = line
        self.field = field
        where = f"{self.path}" + (f":{line}" if line is not None else "")
        what = f"{field}: {message}" if field else message
        super().__init__(f"{where}: {what}")


class DatasetMissingError(ToolevalError, FileNotFoundError):
    """A benchmark's files are not where the data directory says they should be."""

    def __init__(self, benchmark: str, expected: Path, data_dir: Path) -> None:
        self.benchmark = benchmark
        self.expected = expected
        self.data_dir = data_dir
        super().__init__(
            f"{benchmark} data not found: expected {expected}.\n"
            f"Get it with:  tooleval data fetch {benchmark} --data-dir {data_dir}\n"
            f"or point to an existing copy with --data-dir DIR or TOOLEVAL_DATA_DIR=DIR "
            f"(DIR holds {benchmark}/ as laid out by 'tooleval data fetch')."
        )


class OutputWriteError(ToolevalError, OSError):
    """A file a command writes could not be written (a full disk, a read-only folder): the
    file and the reason, in one line; the file is left as it was."""

    def __init__(self, path: Path | str, cause: OSError) -> None:
        self.path = Path(path)
        self.cause = cause
        reason = cause.strerror or str(cause) or type(cause).__name__
        code = f" (errno {cause.errno})" if cause.errno else ""
        super().__init__(f"could not write {self.path}: {reason}{code}; it was left as it was. "
                         "Free some space (or fix the folder's permissions), then run the "
                         "command again")


class ChecksumError(ToolevalError):
    """A downloaded file's sha256 differs from the pinned manifest."""


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``" did you mean 'X'?"`` for the known name closest to a mistyped ``name``, else ``""``:
    the one suggestion every name lookup (benchmarks, strategies, metrics, models) appends."""
    close = difflib.get_close_matches(name, [str(k) for k in known], n=1, cutoff=0.6)
    return f" did you mean {close[0]!r}?" if close else ""
