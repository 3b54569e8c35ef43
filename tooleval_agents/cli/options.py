"""``KEY=VALUE`` arguments of the command line (``-O``, ``--model-arg``, ``--judge-arg``)."""

from __future__ import annotations

import itertools
from typing import Any

from tooleval_agents.data.jsonio import parse_json
from tooleval_agents.results.rescore import parse_options


def parse_pairs(pairs: list[str] | None, flag: str) -> dict[str, Any]:
    """``KEY=VALUE`` options (:func:`tooleval_agents.results.rescore.parse_options`: JSON values,
    else text); an error names ``flag``."""
    try:
        return parse_options(pairs or [])
    except ValueError as exc:
        raise ValueError(f"{flag}: {exc}") from None


def option_grid(pairs: list[str] | None, flag: str) -> list[dict[str, Any]]:
    """Every combination of ``KEY=VALUE`` options, where a value ``a,b,c`` that is not JSON
    (``[1, 2]`` stays one list) sweeps ``a``, ``b`` and ``c``.

    >>> option_grid(["k=3,5", "base=flat"], "-O")
    [{'k': 3, 'base': 'flat'}, {'k': 5, 'base': 'flat'}]
    """
    axes: list[list[tuple[str, str]]] = []
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"{flag} {pair!r}: expected KEY=VALUE (e.g. -O k=3)")
        values = [value]
        if sep and "," in value:
            try:
                parse_json(value)
            except ValueError:
                values = [v.strip() for v in value.split(",")]
        axes.append([(key, v) for v in values])
    return [parse_pairs([f"{k}={v}" for k, v in combo], flag)
            for combo in itertools.product(*axes)]
