"""UltraTool's point-wise LLM judge: prompts, the official prompts read at run time, judging,
replay of recorded judgments and agreement.

Its one entry is :func:`ultratool_judge` (:mod:`tooleval_agents.evaluators.ultratool.judge.entry`):
live judging and the replay of recorded judgments are two modes of it; the other modules are its
parts. ``DIMENSIONS`` names what the judge scores (report tables)."""

from tooleval_agents.evaluators.ultratool.judge.entry import (
    Prompts,
    UltraToolJudge,
    ultratool_judge,
)
from tooleval_agents.evaluators.ultratool.judge.prompts import DIMENSIONS
from tooleval_agents.evaluators.ultratool.judge.scores import judge_metrics

__all__ = ["DIMENSIONS", "Prompts", "UltraToolJudge", "judge_metrics", "ultratool_judge"]
