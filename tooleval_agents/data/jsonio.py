"""Reading JSON / JSON Lines files into pydantic records with precise error locations, and
writing files safely."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
import uuid
from array import array
from collections.abc import Callable, Iterator, Sequence
from itertools import accumulate
from pathlib import Path
from typing import Any, TypeVar, overload

from pydantic import BaseModel, ValidationError

from tooleval_agents.errors import DataFormatError, OutputWriteError

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


def first_error(exc: ValidationError) -> tuple[str, str]:
    """``(field path, message)`` of the first error, e.g. ``("plan.2.tool", "Input should be a
    valid string")``; the path is ``<record>`` for an error on the whole record."""
    err = exc.errors(include_url=False)[0]
    field = ".".join(str(p) for p in err["loc"]) or "<record>"
    return field, err["msg"]


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*+"?', re.S)
"""A JSON string, to its closing quote or the end (one pass, no retries)."""


MAX_NESTING = 200
"""The deepest bracket nesting :func:`parse_json` reads: deeper is a decode error on every
Python version. The reader's own limit is its recursion limit, which moves with the version
(about 1,000 levels on 3.11, 10,000 on 3.13) and with the caller's stack depth, so the same
answer would parse on one machine and fail on another; 200 is also Python's own limit for
literals (``ast.literal_eval``), and far beyond any answer or data record."""


def parse_json(text: str) -> Any:
    """``json.loads`` for text from outside (model or judge answers, data files) whose only
    failure is :class:`json.JSONDecodeError`: nesting deeper than :data:`MAX_NESTING` and an
    integer longer than Python's digit limit (``sys.get_int_max_str_digits``, 4300) are
    decode errors at their position, not ``RecursionError`` / a bare ``ValueError``.

    >>> try:
    ...     parse_json('{"a": ' + '[' * 300)
    ... except json.JSONDecodeError as exc:
    ...     print(exc)
    nested deeper than 200 levels: line 1 column 206 (char 205)
    """
    too_deep = _too_deep_at(text, MAX_NESTING)
    if too_deep is not None:
        raise json.JSONDecodeError(f"nested deeper than {MAX_NESTING} levels", text, too_deep)
    return _decode(json.loads, text)


def _raw_decode(text: str, at: int) -> tuple[Any, int]:
    """``JSONDecoder().raw_decode(text, at)`` failing as :func:`parse_json` does."""
    return _decode(lambda t: _DECODER.raw_decode(t, at), text, at)


_DECODER = json.JSONDecoder()


def _decode(decode: Callable[[str], T], text: str, at: int = 0) -> T:
    try:
        return decode(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise json.JSONDecodeError("nested deeper than the JSON reader allows", text,
                                   _deepest(text, at)) from None
    except ValueError as exc:  # int("1" * 5000): the digit limit
        limit = sys.get_int_max_str_digits()
        raise json.JSONDecodeError(f"a number with more than {limit} digits", text,
                                   _long_number(text, at, limit)) from exc


def _deepest(text: str, start: int) -> int:
    """Where the bracket nesting of a JSON text (outside strings) is deepest."""
    depths = _depths(text, start)
    return start + depths.index(max(depths))


def nests_deeper(text: str, limit: int) -> bool:
    """Whether the bracket nesting of a JSON text (outside strings) goes deeper than
    ``limit``. Linear, and nearly free for a text with few brackets.

    >>> nests_deeper('[[1], "[[["]', 1), nests_deeper('[[1], "[[["]', 2)
    (True, False)
    """
    return _too_deep_at(text, limit) is not None


def _too_deep_at(text: str, limit: int) -> int | None:
    """Where the bracket nesting of a JSON text (outside strings) first goes deeper than
    ``limit`` (``None``: it never does). The scan runs in C over the text with each string
    cut to ``""``; only the strings before that point are then walked, to map it back."""
    if text.count("[") + text.count("{") <= limit:
        return None
    depths = _running_depth(_JSON_STRING.sub('""', text))
    if max(depths) <= limit:
        return None
    at, cut = depths.index(limit + 1), 0  # ``cut``: characters the strings before it lost
    for m in _JSON_STRING.finditer(text):
        if m.start() - cut > at:
            break
        cut += m.end() - m.start() - 2
    return at + cut


def _depths(text: str, start: int) -> list[int]:
    """The nesting depth after each character of ``text[start:]`` (brackets inside JSON
    strings do not count)."""
    return _running_depth(_JSON_STRING.sub(_blank, text[start:]))  # same length, no brackets


def _running_depth(text: str) -> list[int]:
    """The bracket nesting after each character of ``text`` (every bracket counts). The
    per-character work runs in C (a translation, running sums): a Python loop per bracket made
    a 100k-character nesting ~40 times slower than the reader on a text a tenth as long."""
    steps = text.encode("ascii", "replace").translate(_STEP)  # one byte per character
    return list(accumulate(array("b", steps))) or [0]


_STEP = bytes(1 if c in b"[{" else 255 if c in b"]}" else 0 for c in range(256))
"""+1 for an opening bracket, -1 (as a signed byte) for a closing one, 0 for the rest."""


def _blank(m: re.Match[str]) -> str:
    return "_" * (m.end() - m.start())


def _long_number(text: str, start: int, limit: int) -> int:
    """Where the first integer longer than ``limit`` digits starts (``start`` if none is)."""
    # Only a run's first digit can start a match: one pass over the text.
    m = re.compile(rf"(?<!\d)\d{{{limit + 1},}}").search(text, start) if limit else None
    return m.start() if m else start


def iter_jsonl(path: Path) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for every non-blank line of a UTF-8 JSON Lines file."""
    try:
        with path.open(encoding="utf-8") as fh:
            for number, text in enumerate(fh, start=1):
                if text.strip():
                    yield number, text
    except UnicodeDecodeError as exc:
        raise DataFormatError(path, f"not UTF-8 text ({exc.reason})") from exc


DAMAGED = (" -- damaged or cut short? `tooleval data verify SOURCE` checks a fetched copy "
           "against its pinned sha256 and `tooleval data fetch SOURCE` restores it")


def data_lines(path: Path) -> list[tuple[int, str]]:
    """:func:`iter_jsonl` of a data file, which must hold a record (an empty split measures
    nothing: the file is named, not a symptom further on)."""
    lines = list(iter_jsonl(path))
    if not lines:
        raise DataFormatError(path, f"no records: the file is empty{DAMAGED}")
    return lines


class LazySequence(Sequence[T]):
    """``count`` items, item ``i`` made by ``make(i)`` when first read, then kept (with
    ``keep=False``: made again at each read, so a long pass holds one at a time). Records
    read from a file this way are validated one by one as they are read: a run of
    ``--limit 1`` validates one record, not the split, and ``len()`` costs nothing."""

    def __init__(self, count: int, make: Callable[[int], T], *, keep: bool = True) -> None:
        self._make = make
        self._count = count
        self._done: list[T | None] | None = [None] * count if keep else None

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        position = range(self._count)[index]  # IndexError and negative indices as for a list
        if self._done is None:
            return self._make(position)
        item = self._done[position]
        if item is None:
            item = self._done[position] = self._make(position)
        return item

    def __iter__(self) -> Iterator[T]:
        return (self[i] for i in range(len(self)))

    def make(self, index: int) -> T:
        """Item ``index`` made anew and not kept (one kept already is returned)."""
        position = range(self._count)[index]
        kept = None if self._done is None else self._done[position]
        return self._make(position) if kept is None else kept


class _Spans(Sequence[tuple[int, str]]):
    """The items of a JSON array as ``(index, JSON text)``, sliced from the file's text when
    read: one copy of the text, not a parsed object tree per item."""

    def __init__(self, text: str, bounds: array[int]) -> None:
        self._text = text
        self._bounds = bounds  # start, end, start, end, ...

    def __len__(self) -> int:
        return len(self._bounds) // 2

    @overload
    def __getitem__(self, index: int) -> tuple[int, str]: ...
    @overload
    def __getitem__(self, index: slice) -> list[tuple[int, str]]: ...
    def __getitem__(self, index: int | slice) -> tuple[int, str] | list[tuple[int, str]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        position = range(len(self))[index]
        return position, self._text[self._bounds[2 * position]:self._bounds[2 * position + 1]]


def _validator(path: Path, items: Sequence[tuple[int, Any]], model: type[M],
               context: dict[str, Any] | None,
               finish: Callable[[M, int], None] | None, *,
               text: bool = False, by_line: bool = False) -> Callable[[int], M]:
    """Validation of item ``position``: ``items`` are ``(where, item)`` pairs, the item its
    JSON ``text`` or parsed, ``where`` its 1-based line (``by_line``: a JSON Lines file) or
    its index in a JSON array; ``finish(record, position)`` completes a fresh record (sets
    its ``meta``)."""
    def validate(position: int) -> M:
        where, item = items[position]
        try:
            if text:
                record = model.model_validate_json(item, context=context)
            else:
                record = model.model_validate(item, context=context)
        except ValidationError as exc:
            if exc.errors()[0]["type"] == "json_invalid":
                raise DataFormatError(path, f"invalid JSON ({exc.errors()[0]['msg']})"
                                      f"{DAMAGED}", line=where if by_line else None) from exc
            field, msg = first_error(exc)
            if by_line:
                raise DataFormatError(path, msg, line=where, field=field) from exc
            raise DataFormatError(path, msg, field=f"[{where}].{field}") from exc
        if finish is not None:
            finish(record, position)
        return record
    return validate


def read_jsonl(path: Path, model: type[M], context: dict[str, Any] | None = None,
               finish: Callable[[M, int], None] | None = None) -> LazySequence[M]:
    """The lines of a JSON Lines file as ``model`` records, each validated when first read
    (a bad one raises :class:`DataFormatError` with its line and field); blank lines skipped.
    A file without a record is refused (a data file: an empty split measures nothing)."""
    items = data_lines(path)
    return LazySequence(len(items), _validator(path, items, model, context, finish,
                                               text=True, by_line=True))


def read_array(path: Path, model: type[M], context: dict[str, Any] | None = None,
               finish: Callable[[M, int], None] | None = None) -> LazySequence[M]:
    """A JSON array file as ``model`` records, each validated when first read (errors name
    the record index). The items are kept as their JSON text, not as parsed objects: a split
    of 20,000 records costs the file's size, not several times it.

    Raises:
        DataFormatError: not UTF-8, invalid JSON (with its line; records nested deeper than
            :data:`MAX_NESTING` too), not an array, or an empty one (a data file: an empty
            split measures nothing).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataFormatError(path, f"not UTF-8 text ({exc.reason})") from exc
    if not text.strip():
        raise DataFormatError(path, f"no records: the file is empty{DAMAGED}")
    bounds = array("q")
    try:
        # The array adds a level: its records nest as deep as parse_json reads, on every
        # Python version (the reader's own limit moves with it).
        if nests_deeper(text, MAX_NESTING + 1):
            raise json.JSONDecodeError(f"nested deeper than {MAX_NESTING} levels", text,
                                       _depths(text, 0).index(MAX_NESTING + 2))
        at = _skip_space(text, 0)
        if not text.startswith("[", at):
            value, _ = _raw_decode(text, at)  # a syntax error, else another value
            raise DataFormatError(path, f"expected a JSON array, got {type(value).__name__}")
        at = _skip_space(text, at + 1)
        while not text.startswith("]", at):
            _, end = _raw_decode(text, at)  # parsed once to find its end
            bounds.extend((at, end))
            at = _skip_space(text, end)
            if text.startswith(",", at):
                at = _skip_space(text, at + 1)
            elif not text.startswith("]", at):
                raise json.JSONDecodeError("Expecting ',' delimiter", text, at)
        if _skip_space(text, at + 1) != len(text):
            raise json.JSONDecodeError("Extra data", text, _skip_space(text, at + 1))
    except json.JSONDecodeError as exc:
        raise DataFormatError(path, f"invalid JSON at column {exc.colno}: {exc.msg}{DAMAGED}",
                              line=exc.lineno) from exc
    if not bounds:
        raise DataFormatError(path, f"no records: the array is empty{DAMAGED}")
    spans = _Spans(text, bounds)
    return LazySequence(len(spans), _validator(path, spans, model, context, finish,
                                               text=True))


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\n\r":
        at += 1
    return at


def read_items(path: Path, items: Any, model: type[M], context: dict[str, Any] | None = None,
               finish: Callable[[M, int], None] | None = None) -> LazySequence[M]:
    """A parsed JSON array as ``model`` records, each validated when first read (errors name
    the record index)."""
    if not isinstance(items, list):
        raise DataFormatError(path, f"expected a JSON array, got {type(items).__name__}")
    pairs = list(enumerate(items))
    return LazySequence(len(pairs), _validator(path, pairs, model, context, finish))


def load_jsonl(path: Path, model: type[M], context: dict[str, Any] | None = None) -> list[M]:
    """Validate every line of a JSON Lines file as ``model``.

    Raises:
        DataFormatError: with file, line and field of the first bad record.
    """
    return list(read_jsonl(path, model, context))


def load_json(path: Path) -> Any:
    """Parse a whole JSON file, reporting the line of a syntax error."""
    try:
        return parse_json(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataFormatError(path, f"invalid JSON at column {exc.colno}: {exc.msg}{DAMAGED}",
                              line=exc.lineno) from exc
    except UnicodeDecodeError as exc:
        raise DataFormatError(path, f"not UTF-8 text ({exc.reason})") from exc


def read_model(path: Path, model: type[M]) -> M:
    """A JSON file as one ``model`` record (a run's ``config.json``...).

    Raises:
        DataFormatError: naming the file and the first problem (invalid JSON, a field).
    """
    try:
        return model.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        field, msg = first_error(exc)
        where = "" if field == "<record>" else f"{field}: "
        raise DataFormatError(path, f"not a valid {path.name} ({where}{msg})") from exc


def validate_items(path: Path, items: Any, model: type[M],
                   context: dict[str, Any] | None = None) -> list[M]:
    """Validate a parsed JSON array as ``model`` records; errors name the record index."""
    return list(read_items(path, items, model, context))


def dump_jsonl(records: list[dict[str, Any]]) -> str:
    """Serialise records as the official files are written: one compact object per line,
    ``ensure_ascii=False``, newline-terminated."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


@contextlib.contextmanager
def writing(path: Path | str) -> Iterator[None]:
    """An ``OSError`` raised in the block (a full disk, permissions) as an
    :class:`~tooleval_agents.errors.OutputWriteError` naming ``path``, the file being written:
    the disk's own error names none, or a temporary file's."""
    try:
        yield
    except OutputWriteError:
        raise
    except OSError as exc:
        raise OutputWriteError(path, exc) from exc


def atomic_write_text(path: Path, text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` (creating its folder) through a temporary file renamed
    over it, so readers never see a half-written file and concurrent writers do not clash.

    Raises:
        OutputWriteError: the file could not be written (it names ``path``).
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    with writing(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            tmp.write_bytes(text.encode("utf-8"))
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
