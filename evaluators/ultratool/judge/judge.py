"""UltraTool's multi-dimensional point-wise LLM judge, with any LangChain chat model as judge.

Planning is scored on accuracy, completeness, executability, syntactic soundness, structural
rationality and efficiency; a created tool on format compliance, accuracy, content
reasonableness, executability and richness. Both get an overall score. Every score is 1-10 and
reported x10 (10..100); the prompt tells the judge that the reference would score 8.

How a judgment is obtained:

* The prompt (:mod:`tooleval_agents.evaluators.ultratool.judge.prompts`) is in the sample's
  language; a predicted
plan is
  first cut to start at ``1. ``
  (:func:`~tooleval_agents.evaluators.ultratool.planning_structure.clean_plan`).
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
``plan_step_count_diff`` of :mod:`tooleval_agents.evaluators.ultratool.planning_structure`.

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
import re
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import Runnable
from pydantic import BaseModel

from tooleval_agents.evaluators.parsing import ParsedList, parse_list
from tooleval_agents.evaluators.ultratool.judge.prompts import (
    JudgePrompt,
    JudgeTask,
    build_prompt,
    retry_prompt,
)
from tooleval_agents.evaluators.ultratool.judge.reading import (
    detect_lang,
    judgment_from_object,
    parse_judge_output,
)
from tooleval_agents.evaluators.ultratool.judge.scores import (
    aggregate_planning,
    aggregate_tool_creation,
    judge_feedback,
    planning_example_score,
    tool_creation_example_score,
)
from tooleval_agents.evaluators.ultratool.judge.verdicts import (
    Judgment,
    PlanningVerdict,
    ToolCreationVerdict,
)
from tooleval_agents.evaluators.ultratool.planning_structure import clean_plan, prediction_text
from tooleval_agents.redaction import redact_text
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


# ---------------------------------------------------------------------------------------------
# Structured-output schemas


VERDICTS: dict[JudgeTask, type[BaseModel]] = {
    "planning": PlanningVerdict,
    "tool_creation": ToolCreationVerdict,
}

# ---------------------------------------------------------------------------------------------
# Tolerant parsing: never raises, never returns a score outside 1-10.


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
        prompt_set: the judge prompts (default ours,
        :func:`~tooleval_agents.evaluators.ultratool.judge.prompts.
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
    :func:`tooleval_agents.evaluators.parsing.parse_list`: JSON or Python literal, with repairs,
    never ``eval()``). Anything else gives ``[]`` (every gold step then counts 0)."""
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
