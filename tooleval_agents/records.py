"""Metadata shared by every benchmark record."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Source = Literal["official", "rebuilt", "sample"]
"""Where a split comes from: the upstream files, our rebuild of a missing upstream split, or the
hand-written samples bundled in ``datasets/``."""

Lang = Literal["en", "zh"]


class RecordMeta(BaseModel):
    """Where a record was read from. Not part of the official record format."""

    model_config = ConfigDict(frozen=True)

    benchmark: str
    """Benchmark name, e.g. ``ultratool``."""
    task: str
    """Task (UltraTool dimension, ``raw`` for ``test.json``) or AppBench category."""
    index: int
    """0-based position among the file's records (blank lines skipped); record i of every
    UltraTool file of a language is one sample."""
    lang: Lang | None = None
    """Language (UltraTool only)."""
    source: Source = "official"
    """Official, rebuilt or bundled sample."""
    path: str | None = Field(default=None)
    """File the record was read from."""
