"""Prompts of the UltraTool construction pipeline (:mod:`tooleval_agents.graphs.ultratool.build`),
in English and Chinese, written for this project in the spirit of the paper's construction prompts
(Figs. 16-23: query generalisation and complication, plan annotation, tool creation, plan
refinement, tool-call annotation) and of its manual tool merge (§2.3). No text is taken from them.

Every prompt starts with its stage title (:data:`TITLES`, which a scripted test model routes
on), puts the query inside ``<input>`` tags (:func:`tooleval_agents.graphs.common.input_block`) and
asks for an answer the pipeline can check: a numbered plan, or JSON.
"""

from __future__ import annotations

from typing import Literal

PromptLang = Literal["en", "zh"]
BuildStage = Literal["generalise", "complicate", "plan", "create", "refine", "annotate", "merge"]

TOOL_FREE: dict[PromptLang, str] = {"en": "No tool required", "zh": "不需要工具"}
"""The ``tool`` value of a step solved without a tool, as in ``test.json``."""

TITLES: dict[PromptLang, dict[BuildStage, str]] = {
    "en": {"generalise": "Rewrite a request into similar new requests",
           "complicate": "Make a request harder",
           "plan": "Break a request into a tree of steps",
           "create": "Design the tools a plan is missing",
           "refine": "Refine a plan into atomic steps",
           "annotate": "Attach tool calls to a plan",
           "merge": "Name a merged tool"},
    "zh": {"generalise": "把请求改写成相似的新请求",
           "complicate": "让请求更复杂",
           "plan": "把请求拆成树状步骤",
           "create": "设计计划缺少的工具",
           "refine": "把计划细化为原子步骤",
           "annotate": "为计划标注工具调用",
           "merge": "为合并后的工具命名"},
}

_EN: dict[BuildStage, str] = {
    "generalise": """{title}

Below is a request a user made to an AI assistant. Write 2 new requests of the same kind that
a real user could send: keep the type of need, but change the topic details, the wording, the
places, dates and numbers, so that neither looks like a copy of the original. Each must be
clear and answerable on its own.

{input}

Answer with JSON only: {{"rewrites": ["first new request", "second new request"]}}""",
    "complicate": """{title}

Below is a request a user made to an AI assistant. Write 2 harder versions of it. Each adds
one or two extra actions or constraints that fit the original goal and that would take more
tool calls or more reasoning to satisfy. Do not use if/then branches, do not ask for a script
or a program, do not mention that the request was rewritten, and stay concise.

{input}

Answer with JSON only: {{"rewrites": ["first harder request", "second harder request"]}}""",
    "plan": """{title}

You plan work for an assistant that can reason and call external tools. Turn the request
below into a plan shaped like a tree: numbered top-level tasks (1., 2., ...) each split into
sub-steps (1.1, 1.2, ...; deeper levels such as 1.2.1 only where needed). Every line is a
short description of what to do. Sibling steps should be of similar size; split a step until
each leaf is something the assistant can do directly or with one tool. Cover every part and
constraint of the request and invent nothing; avoid repeated or overlapping steps and keep the
tree as small as it can be. The plan does not depend on any particular tool.

Write one step per line, number first, for example:
1. Collect the booking details
1.1 Read the travel date from the request
2. Make the booking

{input}

Answer with the plan only.""",
    "create": """{title}

Below are a request, its plan and the tools already available. Decide which plan steps need
an external tool, and whether an available tool can do each of them. For every need no
available tool covers, design a new tool: general enough to be reused with other values
(parameters instead of fixed text), no broader than needed, and in exactly the format of the
available tools: {{"name": snake_case identifier, "description": ..., "arguments": {{"type":
"object", "properties": {{arg: {{"type": ..., "description": ...}}}}}}, "results": same shape}}.
Types are JSON-schema types (string, integer, number, boolean, array, object).

{input}

Plan:
{plan}

Available tools:
{tools}

Answer with a JSON list of the new tools only ([] when none is needed).""",
    "refine": """{title}

Below are a request, a first plan and the tools that can be used. Improve the plan so that
every leaf step is atomic: either one thing the assistant does itself (find a value in the
request, decide, compare, write text) or one call of a tool. Remove redundant steps; split,
merge or reword steps where that makes them atomic; add missing steps. When a step picks up a
concrete value, name it at the end of the step as (Kind: value), e.g. (Departure city:
Lisbon), so that later tool calls can take it from there. Before a tool step, earlier steps
must obtain every value the call needs; after it, a step should check or use what it returned.
Keep the tree numbering (1., 1.1, 1.1.1 ...) consistent.

{input}

First plan:
{plan}

Tools:
{tools}

Answer with JSON only: a list of {{"step": "number and text"}} objects in plan order.""",
    "annotate": """{title}

Below are a request, its plan and the toolset. For each step of the plan, say how it is
carried out, in a "tool" field:
- "null" for a step that has sub-steps;
- "{tool_free}" for a leaf step the assistant does without a tool;
- a call such as tool_name(arg1='value', arg2=<what an earlier step returned>) for a leaf
  step that needs a tool of the toolset. Use only argument names the tool defines. Every value
  must come from the request, from user information, or from an earlier step: a value that an
  earlier tool call returns is written in angle brackets naming that result, unquoted.

{input}

Plan:
{plan}

Toolset:
{tools}

Answer with JSON only: a list of {{"step": "number and text", "tool": "..."}} objects, one per
plan step, in plan order, with the step texts unchanged.""",
    "merge": """{title}

The tools below do nearly the same job and will be merged into one tool that accepts all of
their arguments and returns all of their results. Give the merged tool a name (a snake_case
identifier) and a one-sentence description covering what they all do.

{input}

Answer with JSON only: {{"name": "...", "description": "..."}}""",
}

_ZH: dict[BuildStage, str] = {
    "generalise": """{title}

下面是用户向 AI 助手提出的一个请求。请写出 2 个同类型的新请求，
要像真实用户会发的那样：需求类型不变，但话题细节、措辞、地点、日期和数字都要换掉，不能看起来像原请求的翻版。每个新请求都要清楚、可以单独回答。

{input}

只输出 JSON：{{"rewrites": ["第一个新请求", "第二个新请求"]}}""",
    "complicate": """{title}

下面是用户向 AI 助手提出的一个请求。请写出 2 个更难的版本：
每个版本在原目标的基础上增加一两个相关的操作或约束，使完成它需要更多的工具调用或推理。不要使用"如果……就……"之类的分支，不要要求编写脚本或程序，
不要提到这是改写的请求，并保持简洁。

{input}

只输出 JSON：{{"rewrites": ["第一个更难的请求", "第二个更难的请求"]}}""",
    "plan": """{title}

你为一个能推理、也能调用外部工具的助手制定计划。请把下面的请求拆成树状计划：编号的顶层任务（1.、2.……），
每个任务再分成子步骤（1.1、1.2……；只在必要时使用 1.2.1 这样的更深层级）。每行简短地描述要做的事。
同一层级的步骤粒度应相近；不断拆分，直到每个叶子步骤都能由助手直接完成或用一个工具完成。
覆盖请求的所有部分和约束，不要臆造需求；避免重复或重叠的步骤，让树尽可能小。计划不依赖任何具体工具。

每行一个步骤，编号在前，例如：
1. 收集预订信息
1.1 从请求中读出出行日期
2. 完成预订

{input}

只输出计划。""",
    "create": """{title}

下面给出一个请求、它的计划和已有的工具。请判断哪些计划步骤需要外部工具，以及已有工具能否完成它们。
对已有工具覆盖不了的每个需求设计一个新工具：足够通用、可用其他取值复用（用参数而不是写死的文本），
功能不超出所需，格式与已有工具完全一致：
{{"name": 蛇形命名的标识符, "description": ..., "arguments": {{"type": "object",
"properties": {{参数: {{"type": ..., "description": ...}}}}}}, "results": 同样结构}}。
类型使用 JSON Schema 类型（string、integer、number、boolean、array、object）。

{input}

计划：
{plan}

已有工具：
{tools}

只输出新工具组成的 JSON 列表（不需要新工具时输出 []）。""",
    "refine": """{title}

下面给出一个请求、初步计划和可用的工具。请改进计划，使每个叶子步骤都是原子操作：要么是助手自己完成的一件事
（从请求中找出某个值、做决定、比较、写文本），要么是一次工具调用。删除多余的步骤；必要时拆分、合并或改写步骤；
补上缺失的步骤。当某个步骤得到一个具体的值时，在步骤末尾用（类别：值）写明，例如（出发城市：里斯本），
以便后面的工具调用从这里取值。工具步骤之前的步骤必须取得调用所需的每个值；之后应有步骤检查或使用它的返回结果。
保持树状编号（1.、1.1、1.1.1……）一致。

{input}

初步计划：
{plan}

工具：
{tools}

只输出 JSON：按计划顺序排列的 {{"step": "编号和内容"}} 对象列表。""",
    "annotate": """{title}

下面给出一个请求、它的计划和工具集。请在 "tool" 字段中说明计划的每个步骤如何完成：
- 有子步骤的步骤填 "null"；
- 助手不用工具就能完成的叶子步骤填 "{tool_free}"；
- 需要工具集中某个工具的叶子步骤填一次调用，例如 tool_name(arg1='值', arg2=<前面步骤返回的结果>)。
  只使用该工具定义的参数名。每个值都必须来自请求、用户信息或前面的步骤：前面工具调用返回的值用尖括号
  写出该结果的名称，不加引号。

{input}

计划：
{plan}

工具集：
{tools}

只输出 JSON：按计划顺序、每个计划步骤一个的 {{"step": "编号和内容", "tool": "..."}} 对象列表，
步骤内容保持不变。""",
    "merge": """{title}

下面这些工具的功能几乎相同，将被合并成一个工具：它接受所有这些工具的参数，返回所有这些工具的结果。
请为合并后的工具起一个名字（蛇形命名的标识符），并用一句话描述它们共同的功能。

{input}

只输出 JSON：{{"name": "...", "description": "..."}}""",
}

TEMPLATES: dict[PromptLang, dict[BuildStage, str]] = {"en": _EN, "zh": _ZH}


def render(stage: BuildStage, lang: PromptLang, *, input: str, plan: str = "",
           tools: str = "") -> str:
    """The prompt of ``stage``; ``input`` is the already wrapped ``<input>`` block."""
    return TEMPLATES[lang][stage].format(title=TITLES[lang][stage], input=input, plan=plan,
                                         tools=tools, tool_free=TOOL_FREE[lang])
