"""Answers produced anywhere, as a file: one per example of a split, read into workflow outputs
(what ``tooleval score`` reads unless :meth:`~tooleval_agents.registry.Benchmark.read_predictions`
reads the benchmark's own format)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tooleval_agents.data.jsonio import parse_json
from tooleval_agents.errors import DataFormatError


def read_answers(path: Path, count: int) -> list[dict[str, Any] | None]:
    """The answers of a predictions file as workflow outputs, one per example (``None``: the
    file has none for it). Items are answer texts, or ``{"index", "output"}`` objects
    (``index`` optional: the position counts); ``null`` is a failed inference (no answer).

    Raises:
        DataFormatError: not JSON / JSON Lines, an item of another shape, an index out of
            range or repeated, or more answers than examples.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataFormatError(path, f"not UTF-8 text ({exc.reason})") from exc
    try:
        whole = parse_json(text)
        items = whole if isinstance(whole, list) else [whole]
    except json.JSONDecodeError:
        items = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    items.append(parse_json(line))
                except json.JSONDecodeError as exc:
                    raise DataFormatError(path, f"not JSON ({exc.msg})", line=number) from None
    out: list[dict[str, Any] | None] = [None] * count
    for position, item in enumerate(items):
        index, answer = position, item
        if isinstance(item, dict):
            if "output" not in item:
                raise DataFormatError(path, f"item {position} has no 'output' key")
            index, answer = item.get("index", position), item["output"]
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count:
            raise DataFormatError(path, f"item {position}: index {index!r} is not one of the "
                                  f"split's {count} examples")
        if out[index] is not None:
            raise DataFormatError(path, f"item {position}: a second answer for index {index}")
        if answer is not None:
            if not isinstance(answer, str):
                answer = json.dumps(answer, ensure_ascii=False)
            out[index] = {"raw_outputs": [answer], "prediction": answer}
    return out
