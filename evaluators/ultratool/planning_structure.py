"""Offline, deterministic planning metrics: numbering, step count and ROUGE-L against the gold plan.

They need no judge model, so they are always available (the LLM judge of the paper is in
:mod:`tooleval_agents.evaluators.ultratool.judge.judge`). All are computed on the plan after
:func:`clean_plan`, the cut the
official judge pipeline applied before judging.

* ``plan_numbering_valid`` (0 or 100 per plan): every non-blank line is a numbered step and the
  numbers form a valid tree: the first step is ``1``, and each next step is either the first
  child of the previous one (``1.2`` -> ``1.2.1``) or the next sibling of the previous step or of
  one of its ancestors (``1.2.1`` -> ``1.2.2``, ``1.3`` or ``2``). A top-level step may be
  written ``1.`` or ``1``; a trailing dot on sub-steps is accepted too.
* ``plan_step_count_ratio`` (0-100): ``100 * min(p, g) / max(p, g)`` for ``p`` predicted and
  ``g`` gold numbered steps (parents included); 100 when the counts agree.
* ``plan_step_count_diff`` (a count, not a percentage): ``|p - g|``; 0 is perfect.
* ``plan_rouge_l`` (0-100): ROUGE-L F1 (sentence-level LCS, beta = 1, as TaskBench reports via
  ``rouge_score``) between the step texts with their numbers removed. Tokens: lower-cased runs of
  ``[a-z0-9]`` (what ``rouge_score``'s default tokenizer keeps in English) plus every CJK
  character as a token of its own, so Chinese is compared character by character and English
  word by word with one tokenizer (``rouge_score`` itself drops all Chinese text). LCS length
  comes from rapidfuzz.

Example::

    score = score_plan_structure("1. Open file\\n1.1 Read it", reference="1. Open file\\n1.1 Read")
    score.scores["plan_numbering_valid"]  # 100.0
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pydantic import BaseModel
from rapidfuzz.distance import LCSseq

from tooleval_agents.contracts import ExampleScore, Metrics, feedback
from tooleval_agents.evaluators.parsing import clean_plan_text, numbering_problems, step_number
from tooleval_agents.results.corpus import Scores, as_corpus

NUMBERING = "plan_numbering_valid"
STEP_RATIO = "plan_step_count_ratio"
STEP_DIFF = "plan_step_count_diff"
ROUGE_L = "plan_rouge_l"
STRUCTURE_METRICS: tuple[str, ...] = (NUMBERING, STEP_RATIO, STEP_DIFF, ROUGE_L)
"""Metric names, in report order."""

# A step line starts with its number: ``1.2``/``1.2.3`` (then anything but a digit, so ``1.1创建``
# counts) or a lone ``1`` followed by a dot, a space or the line end (so ``10个苹果`` does not).
_STEP = re.compile(r"^\s*(?>(\d+(?:\.\d+)+)|(\d+)(?=[.\s]|$))\.?(?!\d)\s*(.*)$")
# Kana, CJK ideographs (with extension A and compatibility forms) and Hangul: one token per char.
_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(rf"[a-z0-9]+|[{_CJK}]")


def clean_plan(text: str | None) -> str:
    """The plan text as the official pipeline sent it to the judge (see
    :func:`tooleval_agents.evaluators.parsing.clean_plan_text`: the one implementation of that
    cut)."""
    return clean_plan_text(text) if text else ""


class PlanLine(BaseModel):
    """A non-blank line of a plan."""

    number: tuple[int, ...] | None
    """The step number as integers (``1.2`` -> ``(1, 2)``); None for a line that is no step."""
    text: str
    """The line without its number."""


def _lines(text: str | None) -> Iterator[tuple[tuple[int, ...] | None, str]]:
    """``(step number or None, text)`` of each non-blank line (plain tuples: the metrics
    read every line of a long answer, and most stop at the first line that is no step)."""
    for raw in (text or "").splitlines():
        if not raw.strip():
            continue
        m = _STEP.match(raw)
        number = step_number(m.group(1) or m.group(2)) if m else None
        if m and number is not None:
            yield number, m.group(3).strip()
        else:  # no step number, or one longer than int() reads: a line of text
            yield None, raw.strip()


def parse_plan(text: str | None) -> list[PlanLine]:
    """The non-blank lines of a plan, each with its step number when it has one."""
    return [PlanLine(number=number, text=body) for number, body in _lines(text)]


class NumberingCheck(BaseModel):
    """Whether a plan's numbering is a valid tree, and the first problem if not."""

    valid: bool
    """All lines are steps, the first is 1, and each number follows from the previous one."""
    problem: str | None = None
    """The first offending line, e.g. ``1.3 follows 1.1 (expected 1.1.1 or 1.2)``."""


def check_numbering(text: str | None) -> NumberingCheck:
    """Check hierarchical numbering (``1.``, ``1.1``, ``1.1.1``, ``1.2``, ``2.`` ...).

    >>> check_numbering("1. a\\n1.1 b\\n2. c").valid
    True
    >>> check_numbering("1. a\\n1.2 b").problem
    '1.2 follows 1 (expected 1.1 or 2)'
    """
    numbers: list[tuple[int, ...]] = []
    for i, (number, _) in enumerate(_lines(text), start=1):
        if number is None:
            return NumberingCheck(valid=False, problem=f"line {i} is not a numbered step")
        numbers.append(number)
    if not numbers:
        return NumberingCheck(valid=False, problem="no steps")
    problems = numbering_problems(numbers)
    if problems:
        return NumberingCheck(valid=False, problem=problems[0])
    return NumberingCheck(valid=True)


def count_steps(text: str | None) -> int:
    """Number of numbered steps (parents included)."""
    return sum(1 for number, _ in _lines(text) if number is not None)


def tokens(text: str) -> list[str]:
    """ROUGE tokens: lower-cased ``[a-z0-9]+`` words and single CJK characters."""
    return _TOKEN.findall(text.lower())


def _plan_tokens(text: str | None) -> list[str]:
    return [t for _, body in _lines(text) for t in tokens(body)]


def rouge_l(prediction: str | None, reference: str | None) -> float:
    """ROUGE-L F1 (0-100) between the step texts of two plans (step numbers removed).

    >>> rouge_l("1. open the file", "1. open the file")
    100.0
    """
    pred, ref = _plan_tokens(prediction), _plan_tokens(reference)
    if not pred or not ref:
        return 0.0
    lcs = LCSseq.similarity(pred, ref)
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(pred), lcs / len(ref)
    return 100.0 * 2 * precision * recall / (precision + recall)


def score_plan_structure(prediction: str | None, reference: str) -> ExampleScore:
    """All structure metrics of one predicted plan (cut with :func:`clean_plan` first).

    Example::

        score_plan_structure("1. a\\n1.1 b", "1. a\\n1.1 b\\n1.2 c").scores
        # numbering 100, step-count ratio 66.67 (2 vs 3), diff 1, ROUGE-L 80 (P 1, R 2/3)
    """
    plan = clean_plan(prediction)
    check = check_numbering(plan)
    p, g = count_steps(plan), count_steps(reference)
    ratio = 100.0 * min(p, g) / max(p, g) if min(p, g) > 0 else 0.0
    return ExampleScore(
        scores={NUMBERING: 100.0 if check.valid else 0.0, STEP_RATIO: ratio,
                STEP_DIFF: float(abs(p - g)), ROUGE_L: rouge_l(plan, reference)},
        comments={NUMBERING: check.problem or "valid", STEP_RATIO: f"{p} steps vs {g} in gold",
                  STEP_DIFF: f"{p} steps vs {g} in gold"},
    )


HIGHER_IS_BETTER = (NUMBERING, STEP_RATIO, ROUGE_L)
"""The structure metrics a better plan has higher; ``plan_step_count_diff`` lower."""
LOWER_IS_BETTER = (STEP_DIFF,)


def aggregate_plan_structure(scores: Scores) -> Metrics:
    """Mean of each structure metric over all plans (an empty prediction scores 0, diff = g)."""
    c = as_corpus(scores)
    return {k: c.mean(k) for k in STRUCTURE_METRICS}


OUTPUT_KEYS: tuple[str, ...] = ("plan", "output", "answer", "prediction", "init output")
"""Keys tried in order for the predicted plan in a run's outputs dict."""


def prediction_text(outputs: Any, keys: Sequence[str] = OUTPUT_KEYS) -> str:
    """The predicted plan text in a run's outputs (a string, or a dict under a known key)."""
    if isinstance(outputs, str):
        return outputs
    if isinstance(outputs, dict):
        for key in keys:
            value = outputs.get(key)
            if isinstance(value, str):
                return value
    return ""


def create_plan_structure_evaluator() -> Callable[..., list[dict[str, Any]]]:
    """A LangSmith row evaluator returning the four structure metrics as feedback.

    Example::

        evaluate(target, data=examples, evaluators=[create_plan_structure_evaluator()])
        # feedback keys: plan_numbering_valid, plan_step_count_ratio, plan_step_count_diff,
        #                plan_rouge_l
    """

    def plan_structure(inputs: dict[str, Any], outputs: dict[str, Any],
                       reference_outputs: dict[str, Any]) -> list[dict[str, Any]]:
        reference = (reference_outputs or {}).get("reference", "")
        return feedback(score_plan_structure(prediction_text(outputs), str(reference)))

    return plan_structure
