"""Prompt texts of the UltraTool one-shot protocol, in English and Chinese.

They restate the paper's inference prompts (UltraTool, Appendix B.6, Figures 28-33) in our own
words, with the same inputs per task and the same output format: numbered plan text for
``planning``, a list of ``{step, tool}`` (``{step, tool, param}`` for ``tool_usage``) dicts for
the other tasks, exactly the shape of the datasets' ``reference`` field.

Differences from the paper's templates, all deliberate:

* inputs are rendered as one-line JSON (``ensure_ascii=False``) instead of Python ``str()``,
  so every example in the prompt is valid JSON and models are not invited to answer with
  Python literals;
* the example's own input sits inside ``<input>`` tags and the demonstration inside
  ``<example>`` tags (how the ``reference`` model recognises the example);
* the format example of ``tool_creation`` keeps ``results`` inside the tool dict, as in the
  gold answers (the paper's figure shows it as a separate dict, a typo); the ``tool_usage``
  text drops the paper's contradictory "``name=value``, comma-separated" wording and asks for
  the dict the output format shows;
* Chinese runs get the Chinese demonstration (the official code showed the English one).

Each task's instruction contains a distinctive phrase, :data:`MARKERS`, which the gold
answers of the ``reference`` model name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tooleval_agents.ultratool.records import UltraToolTask

PromptLang = Literal["en", "zh"]
Field = Literal["question", "plan", "toolset"]


@dataclass(frozen=True)
class Labels:
    """The words that frame a prompt's parts in one language."""

    question: str
    plan: str
    toolset: str
    output: str
    example_intro: str
    """Introduces the demonstration."""
    begin: str
    """Introduces the example to answer."""
    strict: str
    """The reminder to follow the output format and write nothing else."""


LABELS: dict[PromptLang, Labels] = {
    "en": Labels(
        question="Question:",
        plan="Plan:",
        toolset="Toolset:",
        output="Output:",
        example_intro="Here is a worked example of the task:",
        begin="Now it is your turn. Answer for this input:",
        strict="Follow the output format strictly and write nothing else: no explanation, "
               "no code fence.",
    ),
    "zh": Labels(
        question="问题：",
        plan="计划：",
        toolset="工具集：",
        output="输出：",
        example_intro="下面是该任务的一个完整样例：",
        begin="现在轮到你了。请针对下面的输入作答：",
        strict="请严格遵守输出格式，只输出结果本身，不要附加任何解释，也不要使用代码块。",
    ),
}

FIELDS: dict[UltraToolTask, tuple[tuple[str, Field], ...]] = {
    "planning": (("input", "question"),),
    "tool_creation_awareness": (("input", "plan"), ("toolset", "toolset")),
    "tool_creation": (("input", "plan"), ("toolset", "toolset")),
    "tool_usage_awareness": (("input", "plan"),),
    "tool_selection": (("input", "plan"), ("toolset", "toolset")),
    "tool_usage": (("question", "question"), ("input", "plan"), ("toolset", "toolset")),
}
"""Per task, ``(key of the example's inputs, label)`` in prompt order (the paper's order)."""

MARKERS: dict[UltraToolTask, dict[PromptLang, str]] = {
    "planning": {"en": "tree-structured, executable multi-step plan",
                 "zh": "树状结构、可执行的多步计划"},
    "tool_creation_awareness": {"en": "already offers a suitable tool",
                                "zh": "工具集中是否已有合适的工具"},
    "tool_creation": {"en": "design a new tool for each of these steps",
                      "zh": "为这些步骤各设计一个新工具"},
    "tool_usage_awareness": {"en": "requires calling a tool",
                             "zh": "是否需要调用工具"},
    "tool_selection": {"en": "pick the most suitable tool from the toolset",
                       "zh": "从工具集中挑选最合适的工具"},
    "tool_usage": {"en": "fill in the arguments of the call",
                   "zh": "填写调用工具所需的参数"},
}
"""A phrase found in one task's instruction only (per language)."""

_EN_STEPS = "Some steps of the plan have a 'tool' field. "
_ZH_STEPS = "计划中有些步骤带有'tool'字段。"

INSTRUCTIONS: dict[UltraToolTask, dict[PromptLang, str]] = {
    "planning": {
        "en": (
            "You are an expert planning assistant. Read the user's question carefully and "
            "break the task down into a tree-structured, executable multi-step plan that "
            "accomplishes it: each top-level step is split into sub-steps, which may be split "
            "further. Write the plan as plain text, one numbered step per line, for example:\n"
            "1. Task 1\n1.1 Task 1.1\n1.2 Task 1.2\n1.2.1 Task 1.2.1\n...\n2. Task 2\n..."
        ),
        "zh": (
            "你是一名专业的计划制定助手。请仔细理解用户的问题，把任务拆解成一个"
            "树状结构、可执行的多步计划来完成它：每个顶层步骤拆分为若干子步骤，子步骤还可以继续"
            "拆分。计划以纯文本输出，每行一个带编号的步骤，例如：\n"
            "1. 任务1\n1.1 任务1.1\n1.2 任务1.2\n1.2.1 任务1.2.1\n...\n2. 任务2\n..."
        ),
    },
    "tool_creation_awareness": {
        "en": (
            "You are a professional AI assistant. You are given a plan and a toolset. "
            + _EN_STEPS
            + "For each of these steps, judge whether the toolset already offers a suitable "
            "tool for it: write '0' if it does, or '1' if it does not and a new tool would have "
            "to be created. Answer with a JSON list of objects, one per step that has a 'tool' "
            "field, each with the keys 'step' (the step text, copied from the plan) and 'tool' "
            "(your judgment, '0' or '1'), for example:\n"
            '[{"step": "2.1 step 2.1", "tool": "1"}, {"step": "4.2 step 4.2", "tool": "0"}, '
            "...]"
        ),
        "zh": (
            "你是一名专业的人工智能助手。给你一个计划和一个工具集，" + _ZH_STEPS
            + "你的任务是逐一判断对这些步骤而言，工具集中是否已有合适的工具：有则'tool'字段填"
            "'0'，没有（需要创造新工具）则填'1'。请输出一个JSON列表，每个带有'tool'字段的步骤"
            "对应一个字典，包含'step'（从计划中原样照抄的步骤）和'tool'（判断结果，'0'或'1'）"
            "两个字段，例如：\n"
            '[{"step": "2.1 步骤2.1", "tool": "1"}, {"step": "4.2 步骤4.2", "tool": "0"}, ...]'
        ),
    },
    "tool_creation": {
        "en": (
            "You are a professional tool creation assistant. You are given a plan and a "
            "toolset. " + _EN_STEPS
            + "No existing tool serves them: design a new tool for each of these steps, in the "
            "same format as the tools of the toolset, and put it in the step's 'tool' field. "
            "Answer with a JSON list of objects, one per step that has a 'tool' field, each "
            "with the keys 'step' (the step text, copied from the plan) and 'tool' (the tool "
            "you created, an object), for example:\n"
            '[{"step": "2.3 step 2.3", "tool": {"name": "...", "description": "...", '
            '"arguments": {"type": "object", "properties": {...}}, "results": {"type": '
            '"object", "properties": {...}}}}, ...]'
        ),
        "zh": (
            "你是一名专业的工具创造助手。给你一个计划和一个工具集，" + _ZH_STEPS
            + "现有工具都无法完成这些步骤：请参照工具集中工具的格式，为这些步骤各设计一个新工具，"
            "并填入该步骤的'tool'字段。请输出一个JSON列表，每个带有'tool'字段的步骤对应一个"
            "字典，包含'step'（从计划中原样照抄的步骤）和'tool'（你创造的工具，字典格式）两个"
            "字段，例如：\n"
            '[{"step": "2.3 步骤2.3", "tool": {"name": "...", "description": "...", '
            '"arguments": {"type": "object", "properties": {...}}, "results": {"type": '
            '"object", "properties": {...}}}}, ...]'
        ),
    },
    "tool_usage_awareness": {
        "en": (
            "You are a professional AI assistant. You are given a plan. " + _EN_STEPS
            + "For each of these steps, judge whether carrying it out requires calling a tool: "
            "write '1' if it does, '0' if it does not. Answer with a JSON list of objects, one "
            "per step that has a 'tool' field, each with the keys 'step' (the step text, copied "
            "from the plan) and 'tool' (your judgment, '0' or '1'), for example:\n"
            '[{"step": "1.1 step 1.1", "tool": "0"}, {"step": "2.3 step 2.3", "tool": "1"}, '
            "...]"
        ),
        "zh": (
            "你是一名专业的人工智能助手。给你一个计划，" + _ZH_STEPS
            + "你的任务是逐一判断完成这些步骤是否需要调用工具：需要则'tool'字段填'1'，不需要则"
            "填'0'。请输出一个JSON列表，每个带有'tool'字段的步骤对应一个字典，包含'step'（从"
            "计划中原样照抄的步骤）和'tool'（判断结果，'0'或'1'）两个字段，例如：\n"
            '[{"step": "1.1 步骤1.1", "tool": "0"}, {"step": "2.3 步骤2.3", "tool": "1"}, ...]'
        ),
    },
    "tool_selection": {
        "en": (
            "You are a professional tool selection assistant. You are given a plan and a "
            "toolset. " + _EN_STEPS
            + "For each of these steps, pick the most suitable tool from the toolset and write "
            "its name (the tool's 'name' field) in the step's 'tool' field. Answer with a JSON "
            "list of objects, one per step that has a 'tool' field, each with the keys 'step' "
            "(the step text, copied from the plan) and 'tool' (the name of the chosen tool), "
            "for example:\n"
            '[{"step": "2.1 step 2.1", "tool": "tool_name_1"}, ...]'
        ),
        "zh": (
            "你是一名专业的工具选择助手。给你一个计划和一个工具集，" + _ZH_STEPS
            + "请为这些步骤逐一从工具集中挑选最合适的工具，并把该工具的名称（工具的'name'字段）"
            "填入步骤的'tool'字段。请输出一个JSON列表，每个带有'tool'字段的步骤对应一个字典，"
            "包含'step'（从计划中原样照抄的步骤）和'tool'（所选工具的名称）两个字段，例如：\n"
            '[{"step": "2.1 步骤2.1", "tool": "工具名1"}, ...]'
        ),
    },
    "tool_usage": {
        "en": (
            "You are a professional assistant for filling in tool arguments. You are given a "
            "user's question, a plan for it and a toolset. Some steps of the plan have a 'tool' "
            "field (a tool name) and an empty 'param' field. For each of these steps, look the "
            "tool up by name in the toolset and fill in the arguments of the call: argument "
            "names come from the 'properties' of the tool's 'arguments' (you need not use all "
            "of them); argument values come from the question and from the information in the "
            "steps before it, and a value that is the result of an earlier tool call is written "
            "in angle brackets, like <value>. Write every value as a string. Answer with a JSON "
            "list of objects, one per step that has a 'tool' field, each with the keys 'step' "
            "(the step text, copied from the plan), 'tool' (the step's tool name) and 'param' "
            "(an object from argument name to value), for example:\n"
            '[{"step": "3.2 step 3.2", "tool": "tool_name_1", "param": {"argument_1": '
            '"value 1", "argument_2": "<value 2>", ...}}, ...]'
        ),
        "zh": (
            "你是一名专业的工具参数填充助手。给你用户的问题、对应的计划和一个工具集，计划中有些"
            "步骤带有'tool'字段（工具名）和空的'param'字段。请对这些步骤逐一先按名称在工具集中"
            "找到对应的工具，再填写调用工具所需的参数：参数名取自该工具'arguments'中的"
            "'properties'（不必全部使用）；参数值来自用户问题以及该步骤之前各步骤中的信息，若参数"
            "值是之前某次工具调用的返回结果，则用尖括号标出，如<参数值>。所有参数值都写成字符串。"
            "请输出一个JSON列表，每个带有'tool'字段的步骤对应一个字典，包含'step'（从计划中原样"
            "照抄的步骤）、'tool'（该步骤的工具名）和'param'（参数名到参数值的字典）三个字段，"
            "例如：\n"
            '[{"step": "3.2 步骤3.2", "tool": "工具名1", "param": {"参数名1": "参数值1", '
            '"参数名2": "<参数值2>", ...}}, ...]'
        ),
    },
}
"""The task statement and output format of each task (each contains the task's marker)."""

