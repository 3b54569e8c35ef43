"""UltraTool's multi-dimensional point-wise LLM judge, with any LangChain chat model as judge.

Planning is scored on accuracy, completeness, executability, syntactic soundness, structural
rationality and efficiency; a created tool on format compliance, accuracy, content
reasonableness, executability and richness. Both get an overall score. Every score is 1-10 and
reported x10 (10..100); the prompt tells the judge that the reference would score 8.

How a judgment is obtained:

* The prompt (:mod:`evaluators.ultratool.judge.prompts`) is in the sample's language; a predicted
plan is
  first cut to start at ``1. `` (:func:`~evaluators.ultratool.planning_structure.clean_plan`).
* When the model supports ``with_structured_output`` the answer is requested in a pydantic
  schema (:class:`PlanningVerdict`, :class:`ToolCreationVerdict`); otherwise (the method raises
  ``NotImplementedError``, or the provider refuses the request, as llama-cpp-python's
  OpenAI-compatible server refuses ``response_format: json_schema``: the item is asked again
  for text, with the JSON layout in the prompt), or when the structured answer does not
  validate, the text is parsed
  tolerantly (:func:`parse_judge_output`: JSON, Python literals, ``Accuracy Score: 7`` lines; the
  English and Chinese dimension names and the official keys such as ``准确性分数``, ``总分``).
* A score outside 1-10 or not a number is rejected, never clamped. The retry policy lives in
  :class:`_Exchange`: up to ``max_retries`` more attempts, after an unusable answer with a note
  saying what was wrong. A judge that still fails yields a :class:`Judgment` with ``error`` set:
  feedback ``judge_error`` (score None, the reason in the comment), never a silent 0.

LangSmith feedback agrees with the corpus aggregates: an error row also carries the metric keys
with the values the aggregate counts (``planning`` 0 for a failed live judge, the error in its
comment), so LangSmith's per-key mean equals :func:`aggregate_planning`. Tool creation is pooled
over gold steps, which a per-example mean is not: every row also carries
``tool_creation_hits`` (sum of overall/10 over the example's gold steps) and
``tool_creation_steps`` (its gold steps); the corpus figure is
``100 * sum(tool_creation_hits) / sum(tool_creation_steps)`` (e.g. a summary evaluator).

Counts, not 0-100 scores, in the aggregates: ``planning_judge_errors`` and
``tool_creation_judge_errors`` (examples whose judgment failed); likewise
``plan_step_count_diff`` of :mod:`evaluators.ultratool.planning_structure`.

Example::

    from langchain_openai import ChatOpenAI
    evaluator = create_planning_judge(judge=ChatOpenAI(model="gpt-4o"))
    evaluate(target, data=examples, evaluators=[evaluator])
    # or, for one plan:
    judgment = judge_plan(ChatOpenAI(model="gpt-4o"), question=q, reference=ref, prediction=plan)
    judgment.overall, judgment.scores["efficiency"], judgment.error
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Annotated, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import Runnable
from pydantic import BaseModel, Field, model_validator

from evaluators.base import ExampleScore, Part
from evaluators.literals import literal_eval_fast
from evaluators.parsing import ParsedList, parse_list
from evaluators.ultratool.judge.prompts import (
    DIMENSIONS,
    OVERALL,
    OVERALL_ALIASES,
    REASON_KEYS,
    JudgePrompt,
    JudgeTask,
    build_prompt,
    retry_prompt,
)
from evaluators.ultratool.planning_structure import clean_plan, prediction_text
from tooleval_agents.contracts import Metrics
from tooleval_agents.data.jsonio import parse_json
from tooleval_agents.models.redaction import redact_text
from tooleval_agents.results.corpus import Scores, as_corpus
from tooleval_agents.ultratool.records import Lang, step_id

__all__ = [
    "JudgeTask",
    "Judgment",
    "PlanningVerdict",
    "ToolCreationVerdict",
    "ToolToJudge",
    "aggregate_planning",
    "aggregate_tool_creation",
    "ajudge_plan",
    "ajudge_tool",
    "create_async_planning_judge",
    "create_async_tool_creation_judge",
    "create_planning_judge",
    "create_tool_creation_judge",
    "detect_lang",
    "judge_plan",
    "judge_tool",
    "judgment_from_object",
    "parse_judge_output",
    "planning_example_score",
    "tool_creation_example_score",
    "tools_to_judge",
]

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


# ---------------------------------------------------------------------------------------------
# Structured-output schemas


class DimensionVerdict(BaseModel):
    """The judge's verdict on one dimension."""

    reason: str = Field(description="Why this score, against the definition and the reference.")
    score: int = Field(description="Integer from 1 to 10; the reference would score 8.")


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


VERDICTS: dict[JudgeTask, type[BaseModel]] = {
    "planning": PlanningVerdict,
    "tool_creation": ToolCreationVerdict,
}

# ---------------------------------------------------------------------------------------------
# Tolerant parsing: never raises, never returns a score outside 1-10.

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


_LOOKUPS: dict[JudgeTask, dict[str, str]] = {t: _lookup(t) for t in DIMENSIONS}


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


_LINE_PATTERNS: dict[JudgeTask, re.Pattern[str]] = {t: _line_pattern(t) for t in DIMENSIONS}


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


# ---------------------------------------------------------------------------------------------
# Calling the judge


def _redact(message: str) -> str:
    """Exception texts can echo API keys (e.g. ``Incorrect API key provided: sk-...``)."""
    return redact_text(message)


def _message_text(message: Any) -> str:
    """The text of a chat answer; tool-call arguments are rendered as JSON."""
    if isinstance(message, str):
        return message
    content = getattr(message, "content", None)
    parts: list[str] = []
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        parts += [c if isinstance(c, str) else str(c.get("text", "")) for c in content
                  if isinstance(c, str | dict)]
    for call in getattr(message, "tool_calls", None) or []:
        parts.append(json.dumps(call.get("args", {}), ensure_ascii=False))
    text = "\n".join(p for p in parts if p)
    return text if text or content is not None else str(message)


def _model_name(judge: BaseChatModel) -> str:
    for attr in ("model_name", "model", "model_id"):
        value = getattr(judge, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(judge).__name__


def _runnable(judge: BaseChatModel, task: JudgeTask, structured: bool) -> tuple[Runnable, bool]:
    """The judge with structured output when the model supports it, else the plain model."""
    if structured:
        try:
            return judge.with_structured_output(VERDICTS[task], include_raw=True), True
        except NotImplementedError:
            pass
    return judge, False


def _interpret(response: Any, task: JudgeTask, lang: Lang, model: str) -> Judgment:
    if isinstance(response, dict) and "raw" in response:
        raw = _message_text(response.get("raw"))
        parsed = response.get("parsed")
        if isinstance(parsed, BaseModel):
            return judgment_from_object(parsed.model_dump(), task, lang=lang, raw=raw,
                                        model=model)
        return parse_judge_output(raw, task, lang=lang, model=model)
    return parse_judge_output(_message_text(response), task, lang=lang, model=model)


_REFUSED_STRUCTURED = re.compile(r"response_format|json_schema|tool_choice|\btools?\b.{0,40}"
                                 r"not (?:be )?supported|function.?calling", re.I | re.S)
"""A provider's error that refuses structured output as such (not an answer or a timeout)."""


class _Exchange:
    """One item's conversation with the judge.

    Up to ``1 + max_retries`` calls, and only for *unusable answers*: the prompt is sent again
    with the previous answer and what was wrong with it. A failed call (an exception) ends the
    exchange as a judge error: provider retries are the model's business -- the runner's
    :class:`~tooleval_agents.models.retry.RetryingChatModel` (the one retry policy of a run, its
    ``--timeout`` included) or the client's own (``ChatOpenAI(max_retries=...)``).
    """

    def __init__(self, *, task: JudgeTask, lang: Lang, prompt: str, max_retries: int,
                 model: str, text_prompt: str | None = None) -> None:
        self.task, self.lang, self.model = task, lang, model
        self.prompt = prompt
        self.text_prompt = text_prompt
        self.max_attempts = 1 + max(0, max_retries)
        self.attempts = 0
        self.messages: list[BaseMessage] = [HumanMessage(prompt)]
        self.errors: list[str] = []
        self.last_raw: str | None = None
        self.result: Judgment | None = None

    def next_messages(self) -> list[BaseMessage] | None:
        """What to send next, or None when done."""
        if self.result is not None or self.attempts >= self.max_attempts:
            return None
        self.attempts += 1
        return self.messages

    def after_error(self, exc: Exception, runnable: Runnable,
                    judge: BaseChatModel) -> Runnable:
        """What to ask next after a call raised: the plain ``judge`` with the text prompt when
        the provider refused the structured-output request itself (e.g. llama-cpp-python's
        server rejects ``response_format: json_schema``; once per item, and that attempt does
        not count), else nothing more (:meth:`failed`)."""
        if (runnable is judge or self.text_prompt is None
                or not _REFUSED_STRUCTURED.search(str(exc))):
            self.failed(exc)
            return runnable
        self.prompt, self.text_prompt = self.text_prompt, None
        self.messages = [HumanMessage(self.prompt)]
        self.attempts -= 1
        return judge

    def failed(self, exc: Exception) -> None:
        self.errors.append(f"attempt {self.attempts}: {type(exc).__name__}: "
                           f"{_redact(str(exc))[:300]}")
        self.max_attempts = self.attempts  # the model layer already retried what it could

    def received(self, response: Any) -> None:
        judgment = _interpret(response, self.task, self.lang, self.model)
        if judgment.ok:
            self.result = judgment.model_copy(update={"attempts": self.attempts})
            return
        error = judgment.error or "no judgment"
        self.errors.append(f"attempt {self.attempts}: {error[:300]}")
        self.last_raw = judgment.raw
        note = retry_prompt(self.lang, raw=(judgment.raw or "")[:4000], error=error)
        self.messages = [HumanMessage(f"{self.prompt}\n\n{note}")]

    def outcome(self) -> Judgment:
        if self.result is not None:
            return self.result
        return Judgment(task=self.task, lang=self.lang, raw=self.last_raw, model=self.model,
                        attempts=self.attempts,
                        error=f"judge failed after {self.attempts} attempt(s): "
                              + " | ".join(self.errors))


def _run(runnable: Runnable, exchange: _Exchange, judge: BaseChatModel) -> Judgment:
    while (messages := exchange.next_messages()) is not None:
        try:
            response = runnable.invoke(messages)
        except Exception as exc:
            runnable = exchange.after_error(exc, runnable, judge)
            continue
        exchange.received(response)
    return exchange.outcome()


async def _arun(runnable: Runnable, exchange: _Exchange, judge: BaseChatModel) -> Judgment:
    while (messages := exchange.next_messages()) is not None:
        try:
            response = await runnable.ainvoke(messages)
        except Exception as exc:
            runnable = exchange.after_error(exc, runnable, judge)
            continue
        exchange.received(response)
    return exchange.outcome()


_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


def detect_lang(*texts: str | None) -> Lang:
    """``zh`` when any text contains CJK ideographs, else ``en``."""
    return "zh" if any(t and _CJK.search(t) for t in texts) else "en"


class _Item(BaseModel):
    """One thing to judge (a plan or a created tool) with its prompt."""

    task: JudgeTask
    lang: Lang
    prompt: str | None
    """None when there is nothing to judge (missing prediction)."""
    text_prompt: str | None = None
    """The prompt for a plain-text answer (the JSON layout spelled out), when ``prompt`` is
    for structured output: used if the provider refuses the structured-output request."""
    index: int | None = None
    step: str | None = None


def _plan_item(*, question: str, reference: str, prediction: str | None, lang: Lang | None,
               structured: bool, index: int | None = None,
               prompt_set: JudgePrompt = build_prompt) -> _Item:
    lang = lang or detect_lang(question, reference)
    answer = clean_plan(prediction)
    if not answer.strip():
        return _Item(task="planning", lang=lang, prompt=None, index=index)

    def prompt(as_structured: bool) -> str:
        return prompt_set("planning", lang, question=question, reference=reference,
                          answer=answer, structured=as_structured)

    return _Item(task="planning", lang=lang, prompt=prompt(structured), index=index,
                 text_prompt=prompt(False) if structured else None)


def _render_tool(tool: Any) -> str:
    return json.dumps(tool, ensure_ascii=False, indent=1) if not isinstance(tool, str) else tool


def _step_text(step: str) -> str:
    """A step without its number: what the created tool is for (upstream kept only the first
    word of English steps; we keep the whole description)."""
    parts = step.strip().split(" ", 1)
    return parts[1].strip() if len(parts) > 1 else step.strip()


def _tool_item(*, step: str, reference_tool: Any, created_tool: Any, lang: Lang | None,
               structured: bool, index: int | None = None,
               prompt_set: JudgePrompt = build_prompt) -> _Item:
    lang = lang or detect_lang(step)
    has_tool = isinstance(created_tool, dict) and bool(created_tool)
    if not has_tool:
        return _Item(task="tool_creation", lang=lang, prompt=None, index=index, step=step)

    def prompt(as_structured: bool) -> str:
        return prompt_set("tool_creation", lang, question=_step_text(step),
                          reference=_render_tool(reference_tool),
                          answer=_render_tool(created_tool), structured=as_structured)

    return _Item(task="tool_creation", lang=lang, prompt=prompt(structured), index=index,
                 step=step, text_prompt=prompt(False) if structured else None)


def _judge_item(judge: BaseChatModel, runnable: Runnable, item: _Item,
                max_retries: int) -> Judgment:
    exchange = _start(judge, item, max_retries)
    judgment = _missing(item, judge) if exchange is None else _run(runnable, exchange, judge)
    return judgment.model_copy(update={"index": item.index, "step": item.step})


async def _ajudge_item(judge: BaseChatModel, runnable: Runnable, item: _Item,
                       max_retries: int) -> Judgment:
    exchange = _start(judge, item, max_retries)
    judgment = (_missing(item, judge) if exchange is None
                else await _arun(runnable, exchange, judge))
    return judgment.model_copy(update={"index": item.index, "step": item.step})


def _start(judge: BaseChatModel, item: _Item, max_retries: int) -> _Exchange | None:
    if item.prompt is None:
        return None
    return _Exchange(task=item.task, lang=item.lang, prompt=item.prompt,
                     text_prompt=item.text_prompt, max_retries=max_retries,
                     model=_model_name(judge))


def _missing(item: _Item, judge: BaseChatModel) -> Judgment:
    return Judgment(task=item.task, lang=item.lang, missing_prediction=True,
                    model=_model_name(judge))


def judge_plan(judge: BaseChatModel, *, question: str, reference: str, prediction: str | None,
               lang: Lang | None = None, max_retries: int = 2, structured: bool = True,
               index: int | None = None,
        prompt_set: JudgePrompt | None = None) -> Judgment:
    """Judge one predicted plan against the reference plan.

    Args:
        judge: any LangChain chat model.
        question: the user's request.
        reference: the gold plan text.
        prediction: the model's raw plan output (cut to start at ``1. `` before judging);
            empty or None is not judged (``missing_prediction``, counts 0).
        lang: prompt language; detected from the question when None.
        max_retries: extra attempts after an exception or an unusable answer.
        structured: use ``with_structured_output`` when the model supports it.
        index: sample index, stored on the judgment for replay.
        prompt_set: the judge prompts (default ours, :func:`~evaluators.ultratool.judge.prompts.
            build_prompt`); a set of its own, e.g. the official templates, is answered as text
            in the layout it asks for (no structured output).
    """
    runnable, structured = _runnable(judge, "planning", structured and prompt_set is None)
    item = _plan_item(question=question, reference=reference, prediction=prediction, lang=lang,
                      structured=structured, index=index, prompt_set=prompt_set or build_prompt)
    return _judge_item(judge, runnable, item, max_retries)


async def ajudge_plan(judge: BaseChatModel, *, question: str, reference: str,
                      prediction: str | None, lang: Lang | None = None, max_retries: int = 2,
                      structured: bool = True, index: int | None = None,
        prompt_set: JudgePrompt | None = None) -> Judgment:
    """Async :func:`judge_plan`."""
    runnable, structured = _runnable(judge, "planning", structured and prompt_set is None)
    item = _plan_item(question=question, reference=reference, prediction=prediction, lang=lang,
                      structured=structured, index=index, prompt_set=prompt_set or build_prompt)
    return await _ajudge_item(judge, runnable, item, max_retries)


def judge_tool(judge: BaseChatModel, *, step: str, reference_tool: Any, created_tool: Any,
               lang: Lang | None = None, max_retries: int = 2, structured: bool = True,
               index: int | None = None,
        prompt_set: JudgePrompt | None = None) -> Judgment:
    """Judge one created tool skeleton against the gold skeleton for ``step``.

    A ``created_tool`` that is not a non-empty dict is not judged (``missing_prediction``).
    """
    runnable, structured = _runnable(judge, "tool_creation", structured and prompt_set is None)
    item = _tool_item(step=step, reference_tool=reference_tool, created_tool=created_tool,
                      lang=lang, structured=structured, index=index,
                      prompt_set=prompt_set or build_prompt)
    return _judge_item(judge, runnable, item, max_retries)


async def ajudge_tool(judge: BaseChatModel, *, step: str, reference_tool: Any,
                      created_tool: Any, lang: Lang | None = None, max_retries: int = 2,
                      structured: bool = True, index: int | None = None,
        prompt_set: JudgePrompt | None = None) -> Judgment:
    """Async :func:`judge_tool`."""
    runnable, structured = _runnable(judge, "tool_creation", structured and prompt_set is None)
    item = _tool_item(step=step, reference_tool=reference_tool, created_tool=created_tool,
                      lang=lang, structured=structured, index=index,
                      prompt_set=prompt_set or build_prompt)
    return await _ajudge_item(judge, runnable, item, max_retries)


# ---------------------------------------------------------------------------------------------
# Per-example scores, corpus aggregates and LangSmith feedback


def _metric(task: JudgeTask, key: str) -> str:
    return task if key == OVERALL else f"{task}_{key}"


def planning_example_score(judgment: Judgment) -> ExampleScore:
    """A planning judgment as 0-100 scores: ``planning`` (overall x10) and ``planning_<dim>``.

    A judge error sets ``error``; its valid scores (if any) are kept, the others are absent and
    so count 0 in :func:`aggregate_planning`.
    """
    keys = [d.key for d in DIMENSIONS["planning"]] + [OVERALL]
    if judgment.error is not None:
        partial = {_metric("planning", k): judgment.score100(k) for k in keys}
        return ExampleScore(scores={k: v for k, v in partial.items() if v is not None},
                            error=judgment.error, labels={"judge": "error"})
    if judgment.missing_prediction:
        return ExampleScore(scores={_metric("planning", k): 0.0 for k in keys},
                            comments={"planning": "no plan in the output: not judged, counts 0"},
                            labels={"judge": "missing_prediction"})
    return ExampleScore(
        scores={_metric("planning", k): judgment.score100(k) or 0.0 for k in keys},
        comments={_metric("planning", k): r for k, r in judgment.reasons.items()},
        labels={"judge": "ok"},
    )


def aggregate_planning(scores: Scores) -> Metrics:
    """Means over *all* examples: a judge error or a missing plan counts 0.

    Also ``planning_judge_errors`` (a count of examples, not 0-100) and ``planning_judged``
    (mean overall x10 over the examples without a judge error), so judge failures are visible,
    not hidden in the mean.
    """
    keys = [_metric("planning", d.key) for d in DIMENSIONS["planning"]] + ["planning"]
    c = as_corpus(scores)
    out = {k: c.mean(k) for k in keys}
    out["planning_judge_errors"] = c.errors
    out["planning_judged"] = c.na_where(not c.computed("planning"), c.ratio(
        c.score("planning", ok_only=True), c.n - c.errors))
    return out


def tool_creation_example_score(judgments: Sequence[Judgment]) -> ExampleScore:
    """One example's created tools (one judgment per gold step) as pooled parts.

    Every gold step is in the denominator: a missing tool or a judge error counts 0 (errors are
    also reported in ``error``). Example-level ``scores`` are the means over the gold steps.
    """
    keys = [d.key for d in DIMENSIONS["tool_creation"]] + [OVERALL]
    parts = {_metric("tool_creation", k): Part(total=float(len(judgments))) for k in keys}
    errors = [f"{j.step or '?'}: {j.error}" for j in judgments if j.error is not None]
    for j in judgments:
        for k in keys:  # a missing tool scores 0; an absent or invalid score adds nothing
            parts[_metric("tool_creation", k)].hits += (j.score100(k) or 0.0) / 100.0
    missing = sum(1 for j in judgments if j.missing_prediction)
    # Nothing created for any gold step: nothing went to the judge (as for an empty plan).
    label = "error" if errors else "missing_prediction" if judgments and missing == len(
        judgments) else "ok"
    result = ExampleScore(parts=parts, labels={"judge": label})
    if errors:
        result.error = "; ".join(errors)
    elif judgments:
        result.scores = {k: 100.0 * p.hits / p.total for k, p in parts.items()}
        result.comments = {"tool_creation": f"{len(judgments)} gold steps, {missing} without a "
                                            "created tool (count 0)"}
    return result


def aggregate_tool_creation(scores: Scores) -> Metrics:
    """Pooled over all gold steps (the paper's *local* level): 100 * sum(overall/10) / steps.

    Also ``tool_creation_judge_errors``: a count of examples with a failed judgment, not 0-100.
    """
    keys = [_metric("tool_creation", d.key) for d in DIMENSIONS["tool_creation"]]
    c = as_corpus(scores)
    out = {k: c.pooled(k) for k in [*keys, "tool_creation"]}
    out["tool_creation_judge_errors"] = c.errors
    return out


def _metric_keys(task: JudgeTask) -> list[str]:
    return [_metric(task, d.key) for d in DIMENSIONS[task]] + [task]


TOOL_CREATION_HITS = "tool_creation_hits"
"""Feedback key: an example's sum of overall/10 over its gold steps (pool with the steps)."""
TOOL_CREATION_STEPS = "tool_creation_steps"
"""Feedback key: an example's number of gold steps."""


def judge_feedback(result: ExampleScore, task: JudgeTask | None = None) -> list[dict[str, Any]]:
    """LangSmith feedback of a judged example.

    Without an error: the scores. With one: a ``judge_error`` item (score None, the error as
    comment) and, when ``task`` is given, every metric key of the task with the value the
    aggregate counts for it (a valid partial score, else the pooled share, else 0; the error
    is the comment of the overall key), so LangSmith's mean matches the aggregate. For
    ``tool_creation`` every row also has ``tool_creation_hits`` and ``tool_creation_steps``
    (see the module docstring for pooling them).
    """
    if result.error is None:
        out = [{"key": k, "score": v, "comment": result.comments.get(k)}
               for k, v in result.scores.items()]
    elif task is None:
        out = []
    else:
        out = []
        for key in _metric_keys(task):
            value = result.scores.get(key)
            part = result.parts.get(key)
            if value is None:
                value = 100.0 * part.hits / part.total if part is not None and part.total else 0.0
            out.append({"key": key, "score": value,
                        "comment": f"{JUDGE_ERROR}: {result.error}" if key == task else None})
    if task == "tool_creation":
        pooled_part = result.parts.get("tool_creation") or Part()
        out += [{"key": TOOL_CREATION_HITS, "score": pooled_part.hits},
                {"key": TOOL_CREATION_STEPS, "score": pooled_part.total}]
    if result.error is not None:
        out.append({"key": JUDGE_ERROR, "score": None, "comment": result.error})
    return out


# ---------------------------------------------------------------------------------------------
# LangSmith evaluators

Evaluator = Callable[[dict[str, Any], dict[str, Any], dict[str, Any]], list[dict[str, Any]]]
AsyncEvaluator = Callable[[dict[str, Any], dict[str, Any], dict[str, Any]],
                          Coroutine[Any, Any, list[dict[str, Any]]]]


def _example_plan(inputs: dict[str, Any], outputs: Any, reference_outputs: dict[str, Any],
                  lang: Lang | None, structured: bool) -> _Item:
    question = str((inputs or {}).get("input") or (inputs or {}).get("question") or "")
    reference = str((reference_outputs or {}).get("reference") or "")
    return _plan_item(question=question, reference=reference,
                      prediction=prediction_text(outputs), lang=lang, structured=structured)


def created_tools(outputs: Any) -> list[dict[str, Any]]:
    """The ``[{step, tool}]`` items of a tool-creation output: a list, a dict holding one under
    ``output``/``prediction``/``answer``/``tools``, or model text (read by
    :func:`evaluators.parsing.parse_list`: JSON or Python literal, with repairs, never
    ``eval()``). Anything else gives ``[]`` (every gold step then counts 0)."""
    if isinstance(outputs, dict):
        for key in ("output", "prediction", "answer", "tools", "created_tools", "init output"):
            if key in outputs:
                return created_tools(outputs[key])
        return []
    if isinstance(outputs, str):
        parsed = parse_list(outputs)
        return created_tools(parsed.value) if isinstance(parsed, ParsedList) else []
    if isinstance(outputs, list):
        return [x for x in outputs if isinstance(x, dict)]
    return []


def match_created(gold_step: str, predicted: Sequence[dict[str, Any]]) -> Any:
    """The ``tool`` of the first predicted item whose step id equals the gold step's id."""
    wanted = step_id(gold_step)
    for item in predicted:
        step = item.get("step")
        if isinstance(step, str) and step_id(step) == wanted:
            return item.get("tool")
    return None


class ToolToJudge(BaseModel):
    """A gold step of a tool-creation example, with the tool created for it (if any)."""

    step: str
    """The gold step text (with its number)."""
    reference_tool: Any = None
    """The gold tool skeleton."""
    created_tool: Any = None
    """The tool of the first predicted item with the same step id; None when there is none."""


def tools_to_judge(outputs: Any, reference_outputs: Any) -> list[ToolToJudge]:
    """Every gold step of ``reference_outputs["reference"]`` paired with its created tool
    (:func:`created_tools` reads the outputs: a list, a dict holding one, or model text;
    :func:`match_created` takes the first item with the step id). The one matching rule of the
    LangSmith evaluators and the runner's scorer.

    >>> ref = {"reference": [{"step": "1. Add", "tool": {"name": "add"}}]}
    >>> out = '[{"step": "1.", "tool": {"name": "a"}}, {"step": "1.", "tool": {"name": "b"}}]'
    >>> tools_to_judge({"prediction": out}, ref)[0].created_tool
    {'name': 'a'}
    """
    reference = reference_outputs.get("reference") if isinstance(reference_outputs, dict) else None
    gold = [g for g in reference or [] if isinstance(g, dict)]
    predicted = created_tools(outputs)
    return [ToolToJudge(step=str(g.get("step", "")), reference_tool=g.get("tool"),
                        created_tool=match_created(str(g.get("step", "")), predicted))
            for g in gold]


def _example_tools(inputs: dict[str, Any], outputs: Any, reference_outputs: dict[str, Any],
                   lang: Lang | None, structured: bool) -> list[_Item]:
    pairs = tools_to_judge(outputs, reference_outputs)
    lang = lang or detect_lang(*(p.step for p in pairs))
    return [_tool_item(step=p.step, reference_tool=p.reference_tool,
                       created_tool=p.created_tool, lang=lang, structured=structured)
            for p in pairs]


def create_planning_judge(*, judge: BaseChatModel, lang: Lang | None = None,
                          max_retries: int = 2, structured: bool = True) -> Evaluator:
    """A LangSmith evaluator judging a plan: feedback ``planning`` (overall x10) and
    ``planning_<dimension>``; when the judge fails, ``judge_error`` (score None) plus those keys
    at the value the aggregate counts (0 for a failed live judge), so means agree.

    Inputs ``{"input": question}``, reference outputs ``{"reference": plan}``, outputs a string
    or a dict with ``plan``/``output``/``answer``/``prediction``. ``lang`` None detects the
    language per example.

    Example::

        evaluator = create_planning_judge(judge=init_chat_model("openai:gpt-4o"))
        evaluator({"input": q}, {"output": plan}, {"reference": ref})
        # [{"key": "planning_accuracy", "score": 80.0, "comment": "..."}, ...]
    """
    runnable, structured = _runnable(judge, "planning", structured)

    def planning_judge(inputs: dict[str, Any], outputs: dict[str, Any],
                       reference_outputs: dict[str, Any]) -> list[dict[str, Any]]:
        item = _example_plan(inputs, outputs, reference_outputs, lang, structured)
        return judge_feedback(planning_example_score(
            _judge_item(judge, runnable, item, max_retries)), "planning")

    return planning_judge


def create_async_planning_judge(*, judge: BaseChatModel, lang: Lang | None = None,
                                max_retries: int = 2, structured: bool = True) -> AsyncEvaluator:
    """Async :func:`create_planning_judge` (for ``langsmith.aevaluate``)."""
    runnable, structured = _runnable(judge, "planning", structured)

    async def planning_judge(inputs: dict[str, Any], outputs: dict[str, Any],
                             reference_outputs: dict[str, Any]) -> list[dict[str, Any]]:
        item = _example_plan(inputs, outputs, reference_outputs, lang, structured)
        return judge_feedback(planning_example_score(
            await _ajudge_item(judge, runnable, item, max_retries)), "planning")

    return planning_judge


def create_tool_creation_judge(*, judge: BaseChatModel, lang: Lang | None = None,
                               max_retries: int = 2, structured: bool = True) -> Evaluator:
    """A LangSmith evaluator judging every created tool of an example.

    Reference outputs ``{"reference": [{step, tool}]}``; outputs the predicted ``[{step, tool}]``
    (or model text holding it). Each gold step is matched to the first predicted item with the
    same step id; a missing tool counts 0. Feedback ``tool_creation`` and
    ``tool_creation_<dimension>`` (means over the example's gold steps, x10), plus
    ``tool_creation_hits`` and ``tool_creation_steps``: LangSmith averages rows, while the
    paper's figure (:func:`aggregate_tool_creation`) pools steps, i.e.
    ``100 * sum(tool_creation_hits) / sum(tool_creation_steps)``. A judge failure adds
    ``judge_error`` (score None) and keeps the other keys (failed steps count 0).

    Example::

        evaluator = create_tool_creation_judge(judge=init_chat_model("openai:gpt-4o"))
    """
    runnable, structured = _runnable(judge, "tool_creation", structured)

    def tool_creation_judge(inputs: dict[str, Any], outputs: dict[str, Any],
                            reference_outputs: dict[str, Any]) -> list[dict[str, Any]]:
        items = _example_tools(inputs, outputs, reference_outputs, lang, structured)
        judgments = [_judge_item(judge, runnable, i, max_retries) for i in items]
        return judge_feedback(tool_creation_example_score(judgments), "tool_creation")

    return tool_creation_judge


def create_async_tool_creation_judge(*, judge: BaseChatModel, lang: Lang | None = None,
                                     max_retries: int = 2,
                                     structured: bool = True) -> AsyncEvaluator:
    """Async :func:`create_tool_creation_judge`."""
    runnable, structured = _runnable(judge, "tool_creation", structured)

    async def tool_creation_judge(inputs: dict[str, Any], outputs: dict[str, Any],
                                  reference_outputs: dict[str, Any]) -> list[dict[str, Any]]:
        items = _example_tools(inputs, outputs, reference_outputs, lang, structured)
        judgments = [await _ajudge_item(judge, runnable, i, max_retries) for i in items]
        return judge_feedback(tool_creation_example_score(judgments), "tool_creation")

    return tool_creation_judge
