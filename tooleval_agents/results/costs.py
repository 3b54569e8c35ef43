"""What a run cost in dollars: tokens times a dated price table.

The table ships as ``prices.json`` (USD per million input, cached-input and output tokens per
``provider:model``, and the date the prices were read); a JSON file of the same shape named
by ``TOOLEVAL_PRICES`` overrides or extends it (its own ``as_of`` dates its entries). The
offline models cost nothing; a model in neither table has an unknown price, said as such,
never guessed. The judge's tokens are priced with the judge's model, apart from the agent's.

Example::

    price_for("openai:gpt-4o-mini")     # Price(input=0.15, output=0.6, cached_input=0.075...)
    run_cost(model="openai:gpt-4o-mini", judge=None, usage=summary.usage, examples=50,
             successes=40)
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from tooleval_agents.data.jsonio import parse_json

PRICES = Path(__file__).resolve().parent / "prices.json"
ENV = "TOOLEVAL_PRICES"


@dataclass(frozen=True)
class Price:
    """USD per million tokens of one model."""

    input: float
    output: float
    cached_input: float | None = None
    """Cached input tokens (``None``: billed as input)."""
    as_of: str = ""
    """When the price was read."""

    def cost(self, input_tokens: float, output_tokens: float, cached: float = 0.0) -> float:
        """Dollars for these tokens (``cached`` is part of ``input_tokens``)."""
        cached_rate = self.input if self.cached_input is None else self.cached_input
        return ((input_tokens - cached) * self.input + cached * cached_rate
                + output_tokens * self.output) / 1_000_000


def _read(path: Path) -> tuple[dict[str, Price], set[str]]:
    try:
        data = parse_json(path.read_text(encoding="utf-8"))
        as_of = str(data.get("as_of", ""))
        table = {name: Price(input=float(p["input"]), output=float(p["output"]),
                             cached_input=(float(p["cached_input"]) if "cached_input" in p
                                           else None), as_of=str(p.get("as_of", as_of)))
                 for name, p in (data.get("models") or {}).items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"price table {path}: {exc} (expected {{\"as_of\": ..., \"models\": "
                         "{\"provider:model\": {\"input\": ..., \"output\": ...}}}, USD per "
                         "1M tokens)") from None
    return table, set(data.get("free") or ())


@lru_cache(maxsize=4)
def _table(override: str | None) -> tuple[dict[str, Price], frozenset[str]]:
    table, free = _read(PRICES)
    if override:
        extra, extra_free = _read(Path(override))
        table, free = {**table, **extra}, free | extra_free
    return table, frozenset(free)


def price_for(model: str | None) -> Price | None:
    """The price of a model spec (``provider:model``; a bare name matches a listed
    ``provider:name``), ``Price(0, 0)`` for the offline models, ``None`` when unknown.

    >>> price_for("noisy-reference:0.3").cost(1000, 1000)
    0.0
    >>> price_for("openai:no-such-model") is None
    True
    """
    if not model:
        return None
    table, free = _table(os.environ.get(ENV) or None)
    if model.split(":", 1)[0] in free:
        return Price(input=0.0, output=0.0)
    if model in table:
        return table[model]
    name = model.split(":", 1)[-1]
    matches = [p for spec, p in table.items() if spec.split(":", 1)[-1] == name]
    return matches[0] if len(matches) == 1 else None


def run_cost(*, model: str | None, judge: str | None, usage: dict[str, float],
             examples: int, successes: float | None,
             not_reported: bool = False) -> dict[str, Any]:
    """Dollar cost of a run from its summary's ``usage`` totals: the model's, the judge's,
    the total, per example and per success (``None`` where a price is unknown or nothing
    succeeded), the price dates, and the models whose price is unknown. ``not_reported``: the
    model's tokens are not known (an agent command that reported none): no cost."""
    if not_reported:
        return {"model_usd": None, "total_usd": None, "per_example_usd": None,
                "per_success_usd": None, "prices_as_of": [], "unknown_price": [],
                "not_reported": True}
    out: dict[str, Any] = {}
    unknown: list[str] = []
    dates: set[str] = set()
    parts = [("model", model, "input_tokens", "output_tokens", "cached_input_tokens")]
    if judge is not None or usage.get("judge_calls"):
        parts.append(("judge", judge, "judge_input_tokens", "judge_output_tokens",
                      "judge_cached_input_tokens"))
    for key, spec, tin, tout, cached in parts:
        price = price_for(spec)
        if price is None:
            unknown.append(spec or key)
            out[f"{key}_usd"] = None
            continue
        if price.as_of:
            dates.add(price.as_of)
        out[f"{key}_usd"] = price.cost(usage.get(tin, 0.0), usage.get(tout, 0.0),
                                       usage.get(cached, 0.0))
    known = [v for k, v in out.items() if k.endswith("_usd")]
    total = None if any(v is None for v in known) else math.fsum(known)
    out["total_usd"] = total
    out["per_example_usd"] = total / examples if total is not None and examples else None
    out["per_success_usd"] = (total / successes if total is not None and successes else None)
    out["prices_as_of"] = sorted(dates)
    out["unknown_price"] = unknown
    return out


def describe(cost: dict[str, Any]) -> str:
    """One line: ``$0.0123 (model $0.0100, judge $0.0023), $0.0004 per success; prices as of
    2025-06-01`` or what is unknown."""
    if not cost:
        return "cost: not computed"
    if cost.get("not_reported"):
        return "cost: not reported (the agent reported no token usage)"
    if cost.get("total_usd") is None:
        names = ", ".join(cost.get("unknown_price") or [])
        return (f"cost: unknown price for {names} (add it to a price file named by "
                f"{ENV})")
    parts = [f"cost: ${cost['total_usd']:.4f}"]
    if cost.get("judge_usd") is not None:
        parts.append(f" (model ${cost['model_usd']:.4f}, judge ${cost['judge_usd']:.4f})")
    if cost.get("per_success_usd") is not None:
        parts.append(f", ${cost['per_success_usd']:.4f} per success")
    if cost.get("prices_as_of"):
        parts.append(f"; prices as of {', '.join(cost['prices_as_of'])}")
    return "".join(parts)


__all__ = ["ENV", "PRICES", "Price", "describe", "price_for", "run_cost"]
