"""A judge's answer read as scores: JSON, Python literals or lines of `dimension: score`, in
English or Chinese, fenced or not, with the dimensions named as the prompts name them (linear
and total: a reply that holds no score is a judge error, never an exception)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from tooleval_agents.data.jsonio import parse_json
from tooleval_agents.evaluators.literals import literal_eval_fast
from tooleval_agents.evaluators.ultratool.judge.prompts import (
    DIMENSIONS,
    OVERALL,
    OVERALL_ALIASES,
    REASON_KEYS,
    JudgeTask,
)
from tooleval_agents.evaluators.ultratool.judge.verdicts import Judgment
from tooleval_agents.ultratool.records import Lang

_SEP = re.compile(r"[\s_\-]+")


_SCORE_SUFFIXES = (" score", "分数", "得分", "评分")


_SCORE_KEYS = {"score", "分数", "得分", "评分", "value", "rating"}


_NAME_KEYS = {"dimension", "name", "维度", "指标"}


_NUMBER = re.compile(r"(-?[0-9]{1,6}(?:\.[0-9]{1,6})?)\s*(?:/\s*10|分|points?)?", re.IGNORECASE)


_MAX_LITERAL = 200_000  # longer texts skip ast.literal_eval (it is slow on huge input)


def _norm(key: str) -> str:
    return _SEP.sub(" ", key.strip().strip("\"'*:：").lower()).strip()


_REASONS = {_norm(k) for k in REASON_KEYS}


def _lookup(task: JudgeTask) -> dict[str, str]:
    table = {_norm(a): OVERALL for a in OVERALL_ALIASES}
    for d in DIMENSIONS[task]:
        for name in (d.key, d.en, d.zh):
            table[_norm(name)] = d.key
    return table


def _dimension_of(key: str, task: JudgeTask) -> str | None:
    """``Accuracy Score``, ``准确性分数``, ``总分``... -> dimension key or ``overall``."""
    name = _norm(key)
    table = _LOOKUPS[task]
    if name in table:
        return table[name]
    for suffix in _SCORE_SUFFIXES:
        if name.endswith(suffix) and name[: -len(suffix)].strip() in table:
            return table[name[: -len(suffix)].strip()]
    return None


def _as_score(value: Any) -> tuple[float | None, str | None]:
    """A judge value as a 1-10 score, or the reason it is not one."""
    if isinstance(value, bool):
        return None, f"not a number: {value!r}"
    if isinstance(value, str):
        m = _NUMBER.fullmatch(value.strip())
        if not m:
            return None, f"not a number: {value[:40]!r}"
        value = m.group(1)
    elif not isinstance(value, int | float):
        return None, f"not a number: {type(value).__name__}"
    try:
        number = float(value)
    except (OverflowError, ValueError):
        return None, "not a number"
    if not math.isfinite(number) or not 1.0 <= number <= 10.0:
        return None, f"{number:g} is outside 1-10"
    return number, None


class _Found:
    """Raw values collected from a judge answer, first occurrence wins."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.reasons: dict[str, str] = {}

    def add(self, dim: str, value: Any, reason: str | None) -> None:
        if dim not in self.values:
            self.values[dim] = value
            if reason:
                self.reasons[dim] = reason


def _walk(node: Any, task: JudgeTask, found: _Found, context: str | None, depth: int) -> None:
    """Collect scores from parsed JSON: lists of ``{reason, "X Score": n}``, ``{x: {reason,
    score}}``, ``{dimension: x, score: n}`` and flat ``{"X Score": n, ...}`` all work."""
    if depth > 20:
        return
    if isinstance(node, Mapping):
        items = [(str(k), v) for k, v in node.items()]
        reason = next((v for k, v in items if _norm(k) in _REASONS and isinstance(v, str)), None)
        named = context
        for k, v in items:
            if _norm(k) in _NAME_KEYS and isinstance(v, str):
                named = _dimension_of(v, task) or named
        keyed = [(k, _dimension_of(k, task), v) for k, v in items]
        scalars = sum(1 for _, d, v in keyed if d is not None and not isinstance(v, Mapping | list))
        for k, dim, v in keyed:
            nested = isinstance(v, Mapping | list)
            if dim is not None and not nested:
                found.add(dim, v, reason if scalars == 1 else None)
            elif dim is not None:
                _walk(v, task, found, dim, depth + 1)
            elif named is not None and _norm(k) in _SCORE_KEYS and not nested:
                found.add(named, v, reason)
            elif nested:
                _walk(v, task, found, None, depth + 1)
    elif isinstance(node, list | tuple):
        for item in node:
            _walk(item, task, found, context, depth + 1)


def _load(candidate: str) -> Any:
    try:
        return parse_json(candidate)
    except json.JSONDecodeError:
        pass
    if len(candidate) > _MAX_LITERAL:
        return None
    try:
        # Compiling judge text can warn (``'\d'``: invalid escape sequence): not our code's
        # problem, and it must not leak to stderr (literal_eval_fast silences it).
        return literal_eval_fast(candidate)
    except Exception:  # SyntaxError, ValueError, MemoryError, RecursionError...: not a literal
        return None


_FENCE_HEAD = re.compile(r"[A-Za-z]*\s*")


def fenced_block(text: str) -> str | None:
    """The body of the first fenced block: from after the first triple backtick and its
    language tag to the next triple backtick; None when no fence closes. What
    ``re.search(r"```[A-Za-z]*\\s*(.*?)```", text, re.S)`` finds, in one pass (the pattern
    retried every shorter tag when no fence closed).

    >>> fenced_block("Sure:\\n```json\\n[1]\\n```"), fenced_block("```json [1]")
    ('[1]\\n', None)
    """
    at = text.find("```")
    if at < 0:
        return None
    body = _FENCE_HEAD.match(text, at + 3).end()  # type: ignore[union-attr]  # may be empty
    end = text.find("```", body)
    return text[body:end] if end >= 0 else None


def _candidates(text: str) -> list[str]:
    """Substrings that may hold the JSON answer: the text, a fenced block, ``[...]``, ``{...}``."""
    out = [text.strip()]
    fenced = fenced_block(text)
    if fenced is not None:
        out.append(fenced.strip())
    for open_, close in (("[", "]"), ("{", "}")):
        i, j = text.find(open_), text.rfind(close)
        if 0 <= i < j:
            out.append(text[i : j + 1])
    return list(dict.fromkeys(c for c in out if c))


def _line_pattern(task: JudgeTask) -> re.Pattern[str]:
    names = sorted(_LOOKUPS[task], key=len, reverse=True)
    alternatives = "|".join(r"[\s_]+".join(map(re.escape, n.split(" "))) for n in names)
    return re.compile(
        rf"(?<![A-Za-z])(?P<name>{alternatives})(?:[\s_]*(?:score|分数|得分|评分))?"
        r"[\s\"'*]*[:：=][\s\"'*]*(?P<value>[^\s,，;；\"'*}\]]{1,20})",
        re.IGNORECASE,
    )


def _wanted(task: JudgeTask) -> list[str]:
    return [d.key for d in DIMENSIONS[task]] + [OVERALL]


def _finish(found: _Found, task: JudgeTask, lang: Lang, raw: str | None,
            model: str | None) -> Judgment:
    scores: dict[str, float] = {}
    problems: list[str] = []
    for key in _wanted(task):
        if key not in found.values:
            problems.append(f"{key}: missing")
            continue
        score, problem = _as_score(found.values[key])
        if problem:
            problems.append(f"{key}: {problem}")
        elif score is not None:
            scores[key] = score
    overall = scores.pop(OVERALL, None)
    # With an error the valid scores are kept (a replayed official judgment with dimension
    # scores 0 but a valid overall still counts that overall, as the paper did).
    return Judgment(task=task, lang=lang, scores=scores, overall=overall,
                    reasons=dict(found.reasons), raw=raw, model=model,
                    error="unusable judge output: " + "; ".join(problems) if problems else None)


def judgment_from_object(obj: Any, task: JudgeTask, *, lang: Lang, raw: str | None = None,
                         model: str | None = None) -> Judgment:
    """A judgment from an already-parsed answer (e.g. the ``eval`` list of the official files).

    Never raises: a missing, non-numeric or out-of-range score gives a judgment with ``error``.
    """
    found = _Found()
    try:
        _walk(obj, task, found, None, 0)
    except Exception as exc:  # odd objects (unhashable keys, huge ints): recorded, not raised
        return Judgment(task=task, lang=lang, raw=raw, model=model,
                        error=f"unusable judge output ({type(exc).__name__})")
    return _finish(found, task, lang, raw, model)


def parse_judge_output(text: str, task: JudgeTask, *, lang: Lang,
                       model: str | None = None) -> Judgment:
    """Parse a judge's text answer tolerantly.

    Tries JSON, then Python literals, on the whole text, a fenced block and the outermost
    ``[...]``/``{...}``; scores still missing are looked for in ``Name Score: 7`` lines (English
    or Chinese names). Never raises and never returns a score outside 1-10: unusable output
    gives a :class:`Judgment` with ``error`` set.

    Example::

        parse_judge_output('[{"理由": "...", "准确性分数": 7}, ..., {"总分": 8}]', "planning",
                           lang="zh").overall  # 8.0
        parse_judge_output("Accuracy Score: 11 ...", "planning", lang="en").error
        # 'unusable judge output: accuracy: 11 is outside 1-10; completeness: missing; ...'
    """
    try:
        best = _Found()
        for candidate in _candidates(text):
            obj = _load(candidate)
            if obj is None:
                continue
            found = _Found()
            _walk(obj, task, found, None, 0)
            if len(found.values) > len(best.values):
                best = found
            if len(best.values) == len(_wanted(task)):
                break
        if len(best.values) < len(_wanted(task)):
            # "Overall: good ... Overall Score: 7": per dimension the first *valid* value wins,
            # else the first one (so the error names it).
            lines: dict[str, list[str]] = {}
            for m in _LINE_PATTERNS[task].finditer(text):
                dim = _dimension_of(m.group("name"), task)
                if dim is not None and dim not in best.values:
                    lines.setdefault(dim, []).append(m.group("value"))
            for dim, values in lines.items():
                valid = [v for v in values if _as_score(v)[1] is None]
                best.add(dim, (valid or values)[0], None)
        return _finish(best, task, lang, text, model)
    except Exception as exc:  # the parser must never raise; the text is kept for inspection
        return Judgment(task=task, lang=lang, raw=text, model=model,
                        error=f"unusable judge output ({type(exc).__name__})")


_LOOKUPS: dict[JudgeTask, dict[str, str]] = {t: _lookup(t) for t in DIMENSIONS}
_LINE_PATTERNS: dict[JudgeTask, re.Pattern[str]] = {t: _line_pattern(t) for t in DIMENSIONS}


_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


def detect_lang(*texts: str | None) -> Lang:
    """``zh`` when any text contains CJK ideographs, else ``en``."""
    return "zh" if any(t and _CJK.search(t) for t in texts) else "en"
