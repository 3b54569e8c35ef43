"""UltraTool's language type, kept here while its users move to
:mod:`tooleval_agents.ultratool.records`; record metadata lives in
:mod:`tooleval_agents.contracts`."""

from __future__ import annotations

from typing import Literal

from tooleval_agents.contracts import RecordMeta, Source

Lang = Literal["en", "zh"]

__all__ = ["Lang", "RecordMeta", "Source"]
