"""What the UltraTool judge gives: a judgment of one plan or tool (scores per dimension, the
overall score, reasons, what went wrong) and the structured verdicts asked of a model that
supports them."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, model_validator

from tooleval_agents.evaluators.ultratool.judge.prompts import (
    DIMENSIONS,
    OVERALL,
    JudgeTask,
)
from tooleval_agents.ultratool.records import Lang

Score = Annotated[float, Field(ge=1, le=10, allow_inf_nan=False)]
"""A judge score: 1 to 10 inclusive."""


JUDGE_ERROR = "judge_error"
"""Feedback key of an example whose judgment failed."""


class Judgment(BaseModel):
    """One judgment: a plan, or one created tool, scored on every dimension plus overall."""

    task: JudgeTask
    """``planning`` or ``tool_creation``."""
    lang: Lang
    """Language of the prompt (the sample's language)."""
    scores: dict[str, Score] = Field(default_factory=dict)
    """Dimension key (e.g. ``syntactic_soundness``) -> 1..10. With ``error`` set it holds only
    the valid scores of a partly unusable answer (none after a failed live judge call)."""
    reasons: dict[str, str] = Field(default_factory=dict)
    """Dimension key or ``overall`` -> the judge's reason, when it gave one."""
    overall: Score | None = None
    """Overall score 1..10; None when nothing was judged or it was missing or invalid."""
    raw: str | None = None
    """The judge's last answer as text (tool-call arguments as JSON in structured mode)."""
    model: str | None = None
    """Judge model name."""
    error: str | None = None
    """Why no usable judgment was obtained (after all retries). The item counts 0 in the corpus
    metric and is reported as a judge error, never as a score."""
    missing_prediction: bool = False
    """Nothing to judge (empty plan / no created tool): not sent to the judge, counts 0."""
    attempts: int = 0
    """Calls made to the judge for this item."""
    index: int | None = None
    """0-based sample index in its test set (to align replayed judgments)."""
    step: str | None = None
    """For tool creation: the gold step the created tool is for."""

    @model_validator(mode="after")
    def _complete(self) -> Judgment:
        wanted = {d.key for d in DIMENSIONS[self.task]}
        unknown = set(self.scores) - wanted
        if unknown:
            raise ValueError(f"unknown {self.task} dimensions: {sorted(unknown)}")
        if self.error is None and not self.missing_prediction:
            missing = sorted(wanted - set(self.scores))
            if missing or self.overall is None:
                raise ValueError(f"judgment without error lacks scores: {missing or ['overall']}")
        return self

    @property
    def ok(self) -> bool:
        """A usable judgment (all scores present, no error)."""
        return self.error is None and not self.missing_prediction

    def score100(self, key: str = OVERALL) -> float | None:
        """A score x10 (10..100); 0 for a missing prediction; None when absent or invalid."""
        if self.missing_prediction:
            return 0.0
        value = self.overall if key == OVERALL else self.scores.get(key)
        return None if value is None else 10.0 * value


class DimensionVerdict(BaseModel):
    """The judge's verdict on one dimension."""

    reason: str = Field(description="Why this score, against the definition and the reference.")
    score: Literal[1, 2, 3, 4, 5, 6, 7, 8, 9, 10] = Field(
        description="Integer from 1 to 10; the reference would score 8.")
    """An enum, not an integer with bounds: a server that decodes under the schema's grammar
    (llama-cpp-python's) ignores ``minimum``/``maximum``, but cannot write 12 outside an enum."""


class PlanningVerdict(BaseModel):
    """Scores of a task plan on six dimensions plus an overall score (each 1-10)."""

    accuracy: DimensionVerdict
    completeness: DimensionVerdict
    executability: DimensionVerdict
    syntactic_soundness: DimensionVerdict
    structural_rationality: DimensionVerdict
    efficiency: DimensionVerdict
    overall: DimensionVerdict


class ToolCreationVerdict(BaseModel):
    """Scores of a created tool on five dimensions plus an overall score (each 1-10)."""

    format_compliance: DimensionVerdict
    accuracy: DimensionVerdict
    content_reasonableness: DimensionVerdict
    executability: DimensionVerdict
    richness: DimensionVerdict
    overall: DimensionVerdict


