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
OPTIONAL_RATES = ("cached_input", "batch_input", "batch_output", "batch_cached_input")
"""Rates a price table's entry may give besides ``input`` and ``output``."""
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
    batch_input: float | None = None
    """Input tokens of a call sent in a provider batch (``None``: no batch price known)."""
    batch_output: float | None = None
    batch_cached_input: float | None = None
    """Cached input tokens of a batched call (``None``: billed as batch input)."""

    def cost(self, input_tokens: float, output_tokens: float, cached: float = 0.0,
             batched: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> float | None:
        """Dollars for these tokens (``cached`` is part of ``input_tokens``; ``batched``: the
        input, output and cached input tokens of batched calls, part of the totals, at batch
        prices); ``None`` when batched tokens have no batch price.

        >>> Price(input=2.0, output=8.0, cached_input=0.5).cost(1_000_000, 0, 500_000)
        1.25
        >>> Price(input=2.0, output=8.0, batch_input=1.0, batch_output=4.0).cost(
        ...     1_000_000, 1_000_000, batched=(1_000_000, 1_000_000, 0))
        5.0
        """
        b_in, b_out, b_cached = batched
        if (b_in or b_out) and (self.batch_input is None or self.batch_output is None):
            return None
        cached_rate = self.input if self.cached_input is None else self.cached_input
        standard = ((input_tokens - b_in - (cached - b_cached)) * self.input
                    + (cached - b_cached) * cached_rate + (output_tokens - b_out) * self.output)
        if not (b_in or b_out):
            return standard / 1_000_000
        assert self.batch_input is not None and self.batch_output is not None
        b_rate = self.batch_input if self.batch_cached_input is None else self.batch_cached_input
        return (standard + (b_in - b_cached) * self.batch_input + b_cached * b_rate
                + b_out * self.batch_output) / 1_000_000


def _read(path: Path) -> tuple[dict[str, Price], set[str]]:
    try:
        data = parse_json(path.read_text(encoding="utf-8"))
        as_of = str(data.get("as_of", ""))
        table = {name: Price(input=float(p["input"]), output=float(p["output"]),
                             as_of=str(p.get("as_of", as_of)),
                             **{k: float(p[k]) for k in OPTIONAL_RATES if k in p})
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
    parts = [("model", model, "")]
    if judge is not None or usage.get("judge_calls"):
        parts.append(("judge", judge, "judge_"))
    for key, spec, pre in parts:
        price = price_for(spec)
        batched = tuple(usage.get(f"{pre}batched_{k}", 0.0)
                        for k in ("input_tokens", "output_tokens", "cached_input_tokens"))
        dollars = None if price is None else price.cost(
            usage.get(f"{pre}input_tokens", 0.0), usage.get(f"{pre}output_tokens", 0.0),
            usage.get(f"{pre}cached_input_tokens", 0.0), batched)  # type: ignore[arg-type]
        if dollars is None:
            unknown.append((spec or key) + (" (batch)" if price is not None else ""))
            out[f"{key}_usd"] = None
            continue
        if price is not None and price.as_of:
            dates.add(price.as_of)
        out[f"{key}_usd"] = dollars
    known = [v for k, v in out.items() if k.endswith("_usd")]
    total = None if any(v is None for v in known) else math.fsum(known)
    out["total_usd"] = total
    out["per_example_usd"] = total / examples if total is not None and examples else None
    out["per_success_usd"] = (total / successes if total is not None and successes else None)
    out["prices_as_of"] = sorted(dates)
    out["unknown_price"] = unknown
    tokens_in = usage.get("input_tokens", 0.0) + usage.get("judge_input_tokens", 0.0)
    cached = usage.get("cached_input_tokens", 0.0) + usage.get("judge_cached_input_tokens", 0.0)
    out["cached_input_share"] = cached / tokens_in if tokens_in else None
    out["batched_calls"] = int(usage.get("batched_calls", 0.0)
                               + usage.get("judge_batched_calls", 0.0))
    out["model_calls"] = int(usage.get("model_calls", 0.0) + usage.get("judge_calls", 0.0))
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
                f"{ENV})") + _caches_and_batches(cost)
    parts = [f"cost: ${cost['total_usd']:.4f}"]
    if cost.get("judge_usd") is not None:
        parts.append(f" (model ${cost['model_usd']:.4f}, judge ${cost['judge_usd']:.4f})")
    if cost.get("per_success_usd") is not None:
        parts.append(f", ${cost['per_success_usd']:.4f} per success")
    if cost.get("prices_as_of"):
        parts.append(f"; prices as of {', '.join(cost['prices_as_of'])}")
    return "".join(parts) + _caches_and_batches(cost)


def _caches_and_batches(cost: dict[str, Any]) -> str:
    """``; 62% of input tokens from the provider's cache; 40 of 40 calls batched``: what was
    billed at the cached and batch rates (nothing when neither applied)."""
    out = ""
    share = cost.get("cached_input_share")
    if share:
        out += f"; {100 * share:.0f}% of input tokens from the provider's prompt cache"
    if cost.get("batched_calls"):
        out += (f"; {cost['batched_calls']} of {cost.get('model_calls') or '?'} model calls "
                "batched (batch prices)")
    return out


__all__ = ["ENV", "PRICES", "Price", "describe", "price_for", "run_cost"]
