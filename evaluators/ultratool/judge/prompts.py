"""Prompts of the UltraTool point-wise LLM judge, in English and Chinese.

Written for this project from the rubric in the UltraTool paper (Appendix B.2-B.4: the score
dimensions, "the reference answer would score 8", the bands of the overall score); the wording is
ours, not the upstream prompt. Planning has six dimensions, tool creation five; both add an
overall score. Every score is an integer from 1 to 10.

The dimension labels double as the names the tolerant parser in
:mod:`tooleval_agents.evaluators.ultratool.judge.judge`
recognises, together with the keys the official judge outputs use (``Accuracy Score``,
``准确性分数``, ``Overall Score``, ``Total Score``, ``总分``...).

Example::

    prompt = build_prompt("planning", "en", question="...", reference="1. ...", answer="1. ...")
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from tooleval_agents.ultratool.records import Lang

JudgeTask = Literal["planning", "tool_creation"]
"""What the judge scores: a whole plan, or one created tool skeleton."""

OVERALL = "overall"
"""Key of the overall score in :class:`~tooleval_agents.evaluators.ultratool.judge.judge.Judgment`
and the structured schema."""


@dataclass(frozen=True)
class Dimension:
    """A score dimension: its key, its display name per language and its definition."""

    key: str
    """snake_case key, e.g. ``syntactic_soundness`` (also the metric suffix)."""
    en: str
    """English name, e.g. ``Syntactic Soundness`` (the official judge key adds `` Score``)."""
    zh: str
    """Chinese name, e.g. ``语法健全性`` (the official judge key adds ``分数``)."""
    definition_en: str
    """What a high score requires, in English."""
    definition_zh: str
    """The same in Chinese."""

    def name(self, lang: Lang) -> str:
        return self.en if lang == "en" else self.zh

    def definition(self, lang: Lang) -> str:
        return self.definition_en if lang == "en" else self.definition_zh

    def score_key(self, lang: Lang) -> str:
        """The JSON key of this dimension, e.g. ``Accuracy Score`` / ``准确性分数``."""
        return f"{self.en} Score" if lang == "en" else f"{self.zh}分数"


PLANNING_DIMENSIONS: tuple[Dimension, ...] = (
    Dimension(
        "accuracy", "Accuracy", "准确性",
        "the plan pursues the goals of the user's request. It reads the request correctly and "
        "uses the information the request gives correctly, and it adds no task or constraint "
        "the user did not ask for.",
        "任务规划与用户请求的目标相符，正确理解请求并正确使用请求中给出的信息，"
        "不添加用户没有提出的任务或限制。",
    ),
    Dimension(
        "completeness", "Completeness", "完整性",
        "every task and every constraint in the request shows up in some step of the plan; "
        "nothing is left out.",
        "请求中的每一项任务和每一个约束都在规划的某个步骤中得到体现，没有遗漏。",
    ),
    Dimension(
        "executability", "Executability", "可执行性",
        "the plan hangs together logically. Every step is sensible and can be carried out, in an "
        "order that fulfils the request step by step; no missing step blocks a later one and no "
        "superfluous step would make the execution go wrong.",
        "规划整体逻辑连贯，每一步都合理且可以执行，按顺序逐步执行即可完成请求；"
        "不缺少会导致后续步骤无法执行的步骤，也没有会导致执行出错的多余步骤。",
    ),
    Dimension(
        "syntactic_soundness", "Syntactic Soundness", "语法健全性",
        "the steps are written in fluent, well-formed language without grammatical errors.",
        "步骤的表述通顺流畅、语言规范，没有语法错误。",
    ),
    Dimension(
        "structural_rationality", "Structural Rationality", "结构合理性",
        "the plan is an ordered tree: parent steps and their sub-steps relate sensibly and the "
        "whole is organised efficiently.",
        "规划是一棵有序的树，父步骤与子步骤之间的关系合理，整体组织高效。",
    ),
    Dimension(
        "efficiency", "Efficiency", "高效性",
        "the plan is concise: its steps are clear and specific, not split more finely than "
        "needed, and the procedure is not long-winded.",
        "规划简洁高效，步骤清楚具体，不过度拆分，流程不冗长繁琐。",
    ),
)

TOOL_CREATION_DIMENSIONS: tuple[Dimension, ...] = (
    Dimension(
        "format_compliance", "Format Compliance", "格式遵从性",
        "the created tool has exactly the format of the reference tool: a tool name (\"name\"), "
        "a description (\"description\"), an argument list (\"arguments\" with \"type\" and "
        "\"properties\") and return values (\"results\" with \"type\" and \"properties\").",
        "创造的工具与参考工具格式完全一致：包含工具名（\"name\"）、工具描述（\"description\"）、"
        "参数列表（\"arguments\"，其中有\"type\"和\"properties\"）和返回值"
        "（\"results\"，其中有\"type\"和\"properties\"）。",
    ),
    Dimension(
        "accuracy", "Accuracy", "准确性",
        "the tool serves the goal of the step it is created for and meets that need correctly.",
        "工具符合它所服务的步骤的目标，能正确满足该需求。",
    ),
    Dimension(
        "content_reasonableness", "Content Reasonableness", "内容合理性",
        "every field holds sensible content: the descriptions are clear and grammatical, and the "
        "types of the arguments and of the return values make sense.",
        "每个字段的内容都合理：描述清楚、语法正确，参数和返回值的类型都恰当。",
    ),
    Dimension(
        "executability", "Executability", "可执行性",
        "the name and the description say what the tool does, the argument list is complete and "
        "the return values are complete.",
        "工具名和描述准确表达工具的功能，参数列表完备，返回值完备。",
    ),
    Dimension(
        "richness", "Richness", "丰富度",
        "the tool carries rich information and depth, takes the context into account and is "
        "varied.",
        "工具信息丰富、有深度，考虑了上下文，并具有多样性。",
    ),
)

DIMENSIONS: dict[JudgeTask, tuple[Dimension, ...]] = {
    "planning": PLANNING_DIMENSIONS,
    "tool_creation": TOOL_CREATION_DIMENSIONS,
}
"""The score dimensions of each judged task, in the paper's order (overall not included)."""

OVERALL_NAMES: dict[Lang, str] = {"en": "Overall", "zh": "总分"}
"""How the prompt names the overall score."""
OVERALL_ALIASES: tuple[str, ...] = ("overall", "overall score", "total", "total score", "总分",
                                    "总体", "总体评分", "整体", "整体评分", "综合", "综合评分")
"""Names accepted for the overall score when parsing (upstream used ``Total Score`` for English
tool creation and ``总分`` in Chinese)."""
REASON_KEYS: tuple[str, ...] = ("reason", "reasoning", "scoring reason", "rationale",
                                "explanation", "comment", "理由", "打分理由", "评分理由", "原因")
"""Keys holding the judge's justification."""

REFERENCE_SCORE = 8
"""The calibration anchor: the reference answer would score 8 on every dimension and overall."""

_SUBJECT: dict[JudgeTask, dict[Lang, str]] = {
    "planning": {"en": "the plan", "zh": "任务规划"},
    "tool_creation": {"en": "the created tool", "zh": "创造的工具"},
}

_INTRO: dict[JudgeTask, dict[Lang, str]] = {
    "planning": {
        "en": "You are an expert reviewer of task plans. You are given a user's request, a "
              "reference plan written for it, and a plan to review. Judge the plan to review "
              "against the reference on each dimension below.",
        "zh": "你是一名评审任务规划的专家。给你一个用户请求、针对该请求写好的参考规划，"
              "以及一个待评审的规划。请参照参考规划，按下面的每个维度评审待评审的规划。",
    },
    "tool_creation": {
        "en": "You are an expert reviewer of tool definitions. A plan step needed a tool that "
              "did not exist, so a tool was created for it. You are given the step, a reference "
              "tool written for it, and the created tool. Judge the created tool against the "
              "reference on each dimension below.",
        "zh": "你是一名评审工具定义的专家。计划中的某个步骤需要一个尚不存在的工具，于是为它创造了"
              "一个工具。给你这个步骤、为它写好的参考工具，以及创造的工具。请参照参考工具，"
              "按下面的每个维度评审创造的工具。",
    },
}

_CALIBRATION: dict[Lang, str] = {
    "en": "Calibration: the reference would score {ref} on every dimension and {ref} overall. "
          "The better {subject}, the higher its scores. Every score is an integer from 1 to 10.",
    "zh": "评分基准：参考答案在每个维度和总分上都可以得到{ref}分。{subject}质量越高，分数越高。"
          "每个分数都是1到10之间的整数。",
}

_BANDS: dict[Lang, str] = {
    "en": "Give the overall score from all dimensions together:\n"
          "- 1: {subject} is irrelevant to the request, contains a fundamental factual error, "
          "or is harmful.\n"
          "- 2-3: no serious error and harmless, but of low quality; it does not meet the "
          "user's needs.\n"
          "- 4-6: it mostly meets the request but is weak on some dimensions; medium quality.\n"
          "- 7-8: about as good as the reference and good on every dimension.\n"
          "- 9-10: only when it clearly surpasses the reference, fully solves the request and "
          "is close to perfect on every dimension.",
    "zh": "综合所有维度给出总分：\n"
          "- 1分：{subject}与请求无关、有根本性的事实错误，或包含有害内容；\n"
          "- 2到3分：没有严重错误且基本无害，但质量较低，没有满足用户的需求；\n"
          "- 4到6分：基本满足请求，但在部分维度上表现较差，质量中等；\n"
          "- 7到8分：质量与参考答案相当，在所有维度上表现良好；\n"
          "- 9到10分：只有明显超过参考答案、完全解决请求且在所有维度上都接近完美时才能给出。",
}

_INPUT_LABELS: dict[JudgeTask, dict[Lang, tuple[str, str, str]]] = {
    "planning": {
        "en": ("User request", "Reference plan", "Plan to review"),
        "zh": ("用户请求", "参考规划", "待评审的规划"),
    },
    "tool_creation": {
        "en": ("Step that needs the tool", "Reference tool", "Created tool"),
        "zh": ("需要该工具的步骤", "参考工具", "创造的工具"),
    },
}

_FORMAT_JSON: dict[Lang, str] = {
    "en": "Score the dimensions one by one, each with a short reason, then give the overall "
          "score. Reply with JSON only and nothing else: a list of objects in this order\n{items}",
    "zh": "逐个维度打分并简要说明理由，最后给出总分。只输出JSON，不要输出其他内容："
          "按以下顺序输出一个对象列表\n{items}",
}

_FORMAT_STRUCTURED: dict[Lang, str] = {
    "en": "Score the dimensions one by one, each with a short reason, then give the overall "
          "score with its reason.",
    "zh": "逐个维度打分并简要说明理由，最后给出总分及其理由。",
}

_RETRY: dict[Lang, str] = {
    "en": "Your previous answer was:\n{raw}\n\nIt could not be used: {error}\n"
          "Answer again in the required format. Every score must be an integer from 1 to 10.",
    "zh": "你上一次的回答是：\n{raw}\n\n该回答无法使用：{error}\n"
          "请按要求的格式重新回答，每个分数都必须是1到10之间的整数。",
}


def overall_key(lang: Lang) -> str:
    """The JSON key of the overall score: ``Overall Score`` / ``总分``."""
    return "Overall Score" if lang == "en" else "总分"


def _json_items(task: JudgeTask, lang: Lang) -> str:
    reason = "Reason" if lang == "en" else "理由"
    score = "<1-10>" if lang == "en" else "<1到10>"
    keys = [d.score_key(lang) for d in DIMENSIONS[task]] + [overall_key(lang)]
    lines = [f'  {{"{reason}": "...", "{k}": {score}}}' for k in keys]
    return "[\n" + ",\n".join(lines) + "\n]"


class JudgePrompt(Protocol):
    """A judge prompt set: :func:`build_prompt` (ours), or the official templates
    (:func:`tooleval_agents.evaluators.ultratool.judge.official.official_judge_prompts`)."""

    def __call__(self, task: JudgeTask, lang: Lang, *, question: str, reference: str,
                 answer: str, structured: bool = False) -> str: ...


def build_prompt(task: JudgeTask, lang: Lang, *, question: str, reference: str, answer: str,
                 structured: bool = False) -> str:
    """The judge prompt for one item.

    Args:
        task: ``planning`` or ``tool_creation``.
        lang: language of the prompt (the sample's language).
        question: the user's request (planning) or the step text (tool creation).
        reference: the gold plan text or the gold tool skeleton rendered as JSON.
        answer: the prediction to judge (for planning, already cut to start at ``1. ``).
        structured: the model answers through a structured-output schema, so the prompt omits
            the JSON layout.
    """
    subject = _SUBJECT[task][lang]
    sep = ": " if lang == "en" else "："
    dims = "\n".join(f"{i}. {d.name(lang)}{sep}{d.definition(lang)}"
                     for i, d in enumerate(DIMENSIONS[task], start=1))
    q_label, r_label, a_label = _INPUT_LABELS[task][lang]
    fmt = (_FORMAT_STRUCTURED[lang] if structured
           else _FORMAT_JSON[lang].format(items=_json_items(task, lang)))
    return "\n\n".join([
        _INTRO[task][lang],
        dims,
        _CALIBRATION[lang].format(ref=REFERENCE_SCORE, subject=subject),
        _BANDS[lang].format(subject=subject),
        f"{q_label}{sep.strip()}\n{question}",
        f"{r_label}{sep.strip()}\n{reference}",
        f"{a_label}{sep.strip()}\n{answer}",
        fmt,
    ])


def retry_prompt(lang: Lang, *, raw: str, error: str) -> str:
    """The follow-up message after an unusable answer (unparseable or out-of-range scores)."""
    return _RETRY[lang].format(raw=raw, error=error)
