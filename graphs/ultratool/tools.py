"""UltraTool's tool usage and tool selection with native tool calling: strategy ``tools``
(on task ``raw`` it runs :mod:`tooleval_agents.graphs.ultratool.create_tools`: plan, create, use).

The sample's toolset becomes LangChain tools (:func:`~tooleval_agents.ultratool.stubs.
skeleton_tool`: schema-checked, simulated results, never code), the agent gets the question
(tool usage) and the plan, and calls the tools. Its calls become the answer the key-value
metrics read:

* ``tool_usage``: each plan step that names a tool takes the arguments of the agent's next
  call of that tool (the k-th step naming ``T`` gets the k-th call of ``T``): ``{"step",
  "tool", "param"}``; a step whose tool was never called gets ``param`` ``{}``.
* ``tool_selection``: the steps that need a tool (``"tool": ""``), in order, take the names of
  the agent's calls, in order: ``{"step", "tool"}``; steps left over get ``""``.

The toolset differs per sample, so the agent is built per example (a user's factory too,
``--agent``). Graph: ``agent -> END`` (:func:`tooleval_agents.graphs.tool_agent.agent_node`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from pydantic import ValidationError

from tooleval_agents.agents import ToolCallRecord
from tooleval_agents.contracts import (
    AgentIO,
    FixedTools,
    GoldAnswer,
    Split,
    Strategy,
    StrategyContext,
)
from tooleval_agents.graphs.common import NodeUpdate, render_json
from tooleval_agents.graphs.mcp_agent import mcp_agent_node
from tooleval_agents.graphs.state import WorkflowState
from tooleval_agents.graphs.tool_agent import (
    DEFAULT_MAX_TURNS,
    ToolCallOptions,
    agent_model,
    agent_node,
    agent_outputs,
    faulty_tools,
    react_agent,
)
from tooleval_agents.graphs.ultratool import create_tools as create_use
from tooleval_agents.graphs.ultratool.plan_create_use import example_toolset
from tooleval_agents.graphs.ultratool.prompts import PromptLang
from tooleval_agents.graphs.ultratool.toolsets import read_toolsets
from tooleval_agents.models.reference_tools import TOOL_PLAN, PlannedCall, ToolPlan
from tooleval_agents.tool_faults import is_faulted
from tooleval_agents.ultratool.records import ToolSkeleton
from tooleval_agents.ultratool.tools import skeleton_tool

if TYPE_CHECKING:
    from tooleval_agents.mcp.client import McpToolbox

TASKS = ("tool_usage", "tool_selection", "raw")
GUIDANCE = {
    ("tool_usage", "en"): (
        "Carry out the plan below for the user's question with your tools. Every step that "
        "names a tool is done by one call of that tool, in the order of the steps, with the "
        "arguments the step needs (values from the question, the step, or earlier tool "
        "answers). Steps without a tool need no call. Then answer in one line."),
    ("tool_usage", "zh"): (
        "请用你的工具执行下面针对用户问题的计划。每个标明工具的步骤都按步骤顺序调用一次该工具，"
        "并给出该步骤所需的参数（取自问题、步骤本身或先前工具的返回）。没有工具的步骤无需调用。"
        "完成后用一句话回答。"),
    ("tool_selection", "en"): (
        "Some steps of the plan below need a tool (\"tool\": \"\"). For each of them, in the "
        "order of the steps, call the tool of your toolset that performs it, with the "
        "arguments the step states. Then answer in one line."),
    ("tool_selection", "zh"): (
        "下面计划中有些步骤需要工具（\"tool\": \"\"）。请按步骤顺序，为每个这样的步骤调用工具集中"
        "能完成它的工具，参数取自步骤内容。完成后用一句话回答。"),
}
LABELS = {"en": ("Question", "Plan"), "zh": ("问题", "计划")}


def _task_lang(split: Split) -> tuple[str, str]:
    if split.benchmark != "ultratool" or split.task not in TASKS or split.subset not in LABELS:
        raise ValueError(f"strategy ultratool/tools cannot run split {split.key}")
    return split.task, split.subset


def input_text(task: str, lang: str, inputs: dict[str, Any]) -> str:
    """The example as the agent reads it: question (tool usage) and plan."""
    question, plan = LABELS[lang]
    lines = []
    if task == "tool_usage":
        lines.append(f"{question}: {str(inputs.get('question') or '').strip()}")
    lines.append(f"{plan}: {render_json(inputs.get('input'))}")
    return "\n".join(lines)


def toolset(inputs: dict[str, Any]) -> tuple[list[BaseTool], list[str]]:
    """The sample's tools, and the skeletons that could not become one (left out, named)."""
    tools: list[BaseTool] = []
    skipped: list[str] = []
    for raw in inputs.get("toolset") or []:
        try:
            tools.append(skeleton_tool(ToolSkeleton.model_validate(raw)))
        except (ValidationError, ValueError, TypeError) as exc:
            name = raw.get("name") if isinstance(raw, dict) else None
            skipped.append(f"{name or '?'}: {str(exc).splitlines()[0][:120]}")
    return tools, skipped


def answer_from_calls(task: str, steps: Sequence[dict[str, Any]],
                      records: Sequence[ToolCallRecord]) -> list[dict[str, Any]]:
    """The KV answer from the agent's calls (see the module docstring).

    >>> steps = [{"step": "1 a", "tool": "f", "param": ""}, {"step": "2 b"},
    ...          {"step": "3 c", "tool": "f", "param": ""}]
    >>> calls = [ToolCallRecord(name="f", args={"x": 1}), ToolCallRecord(name="f", args={})]
    >>> answer_from_calls("tool_usage", steps, calls)
    [{'step': '1 a', 'tool': 'f', 'param': {'x': 1}}, {'step': '3 c', 'tool': 'f', 'param': {}}]
    >>> answer_from_calls("tool_selection", steps, calls[:1])
    [{'step': '1 a', 'tool': 'f'}, {'step': '3 c', 'tool': ''}]
    """
    marked = [s for s in steps if isinstance(s, dict) and "tool" in s]
    if task == "tool_selection":
        names = [r.name for r in records]
        return [{"step": s.get("step"), "tool": names[i] if i < len(names) else ""}
                for i, s in enumerate(marked)]
    used: set[int] = set()
    out = []
    for step in marked:
        tool = step.get("tool")
        k = next((i for i, r in enumerate(records) if i not in used and r.name == tool), None)
        if k is not None:
            used.add(k)
        out.append({"step": step.get("step"), "tool": tool,
                    "param": dict(records[k].args) if k is not None else {}})
    return out


def agent_io(split: Split) -> AgentIO:
    """How any agent over ``{"messages": [...]}`` plays the ``tools`` strategy on a
    ``tool_usage`` or ``tool_selection`` split outside a run: the example's toolset as tools
    (:func:`toolset`; an agent per example), the strategy's words, and the final messages read
    as :func:`answer_from_calls` (with ``raw_outputs`` and ``trace``; a session's trace also
    names the skeletons that could not become a tool, as the strategy's does)."""
    task, lang = _task_lang(split)
    if task == "raw":
        raise ValueError("ultratool raw is planned, created and used by its own workflow: "
                         "no single agent plays it")

    def messages(inputs: dict[str, Any]) -> list[BaseMessage]:
        return [HumanMessage(f"{GUIDANCE[task, lang]}\n\n{input_text(task, lang, inputs)}")]

    def outputs(inputs: dict[str, Any], final: Sequence[BaseMessage]) -> dict[str, Any]:
        return agent_outputs({"inputs": inputs}, list(final), _reader(task))

    def session(inputs: dict[str, Any]) -> FixedTools:
        tools, skipped = toolset(inputs)
        return FixedTools(tools, lambda final: with_skipped(outputs(inputs, final), skipped))

    return AgentIO(tools=lambda inputs: toolset(inputs)[0], messages=messages, outputs=outputs,
                   session=session)


def with_skipped(update: NodeUpdate, skipped: list[str]) -> NodeUpdate:
    """``update`` with a trace record naming the skeletons that could not become a tool."""
    if skipped:
        update["trace"] = [*update["trace"], {"kind": "skipped_tools", "tools": skipped}]
    return update


def _reader(task: str) -> Any:
    """The agent's calls as the KV answer of ``task`` (:func:`answer_from_calls`)."""

    def read(state: WorkflowState, records: list[ToolCallRecord],
             messages: list[BaseMessage]) -> NodeUpdate:
        # A faulted call never reached the service (--tool-faults): its answer is not given.
        answer = answer_from_calls(task, state["inputs"].get("input") or [],
                                   [r for r in records if not is_faulted(r.id)])
        return {"prediction": answer,
                "parse_error": None if records else "the agent called no tool"}

    return read


class UltraToolTools(Strategy):
    """Tool usage / tool selection as native tool calls, and the raw samples planned, created
    and used with tools (a user's agent may play it)."""

    benchmark = "ultratool"
    name = "tools"
    tasks: tuple[str, ...] | None = TASKS
    options = ToolCallOptions
    accepts_agent = True

    def __init__(self) -> None:
        self._data_dirs: dict[str, Path | None] = {}

    def agent_io(self, split: Split, data_dir: Path | None = None) -> AgentIO:
        task, lang = _task_lang(split)
        if task != "raw":
            return agent_io(split)
        return create_use.raw_io(lang, lambda inputs: example_toolset(
            inputs, data_dir, cast(PromptLang, lang)))

    def build(self, ctx: StrategyContext) -> CompiledStateGraph[Any, Any, Any, Any]:
        task, lang = _task_lang(ctx.split)
        options = self.read_options(ctx)
        model = agent_model(ctx.model, options)
        if options.mcp:
            return self._build_mcp(ctx, model, task, lang)
        if task == "raw":
            return self._build_raw(ctx, model, lang)

        io = agent_io(ctx.split)

        def messages_for(state: WorkflowState) -> list[BaseMessage]:
            return io.messages(state["inputs"])

        read = _reader(task)

        async def agent(state: WorkflowState, config: RunnableConfig) -> NodeUpdate:
            tools, skipped = toolset(state["inputs"])
            runnable: Runnable[Any, Any] = (ctx.agent(model, faulty_tools(tools))
                                            if ctx.agent is not None
                                            else react_agent(model, tools,
                                                             name="ultratool-tools-agent"))
            update = await agent_node(runnable, messages_for, read)(state, config)
            return with_skipped(update, skipped)

        graph = StateGraph(WorkflowState)
        graph.add_node("agent", agent)
        graph.add_edge(START, "agent")
        graph.add_edge("agent", END)
        return graph.compile(name=f"ultratool-{self.name}-{task}-{lang}")

    def _build_mcp(self, ctx: StrategyContext, model: BaseChatModel, task: str,
                   lang: str) -> CompiledStateGraph[Any, Any, Any, Any]:
        """Each example's agent on its session's tools over MCP (``-O mcp=true``): a user's
        agent on the tools listed first, the built-in agent on what is listed at each turn
        (raw: tools created on the server bound from the next turn, as in the process)."""
        if task == "raw":
            self._data_dirs[lang] = ctx.data_dir
            read_toolsets(ctx.data_dir, cast(PromptLang, lang))

        def make(box: McpToolbox) -> Runnable[Any, Any]:
            if ctx.agent is not None:
                return ctx.agent(model, faulty_tools(box.listed()))
            return react_agent(model, box.listed(), tools_for=lambda m: box.listed(),
                               lookup=box.tool, after_tools=box.refresh,
                               name=f"ultratool-{self.name}-agent")

        graph = StateGraph(WorkflowState)
        graph.add_node("agent", mcp_agent_node(ctx, self.agent_io(ctx.split, ctx.data_dir),
                                               make))
        graph.add_edge(START, "agent")
        graph.add_edge("agent", END)
        return graph.compile(name=f"ultratool-{self.name}-{task}-{lang}")

    def _build_raw(self, ctx: StrategyContext, model: BaseChatModel,
                   lang: str) -> CompiledStateGraph[Any, Any, Any, Any]:
        self._data_dirs[lang] = ctx.data_dir
        read_toolsets(ctx.data_dir, cast(PromptLang, lang))

        def toolset_of(inputs: dict[str, Any]) -> Any:
            return example_toolset(inputs, ctx.data_dir, cast(PromptLang, lang))

        graph = StateGraph(WorkflowState)
        graph.add_node("agent", create_use.agent_workflow_node(
            model, ctx.agent, toolset_of, lang, DEFAULT_MAX_TURNS))
        graph.add_edge(START, "agent")
        graph.add_edge("agent", END)
        return graph.compile(name=f"ultratool-{self.name}-raw-{lang}")

    def input_key(self, split: Split, inputs: dict[str, Any]) -> str:
        task, lang = _task_lang(split)
        if task == "raw":
            return create_use.input_text(lang, inputs)
        return input_text(task, lang, inputs)

    def gold_answers(self, split: Split, inputs: dict[str, Any],
                     reference_outputs: dict[str, Any]) -> list[GoldAnswer]:
        task, lang = _task_lang(split)
        if task == "raw":
            toolset = example_toolset(inputs, self._data_dirs.get(lang),
                                      cast(PromptLang, lang))
            plan = create_use.gold_tool_plan(inputs, reference_outputs, toolset)
            return [GoldAnswer("", plan.model_dump_json(), TOOL_PLAN)]
        calls = []
        for i, step in enumerate(reference_outputs.get("reference") or []):
            param = step.get("param") if task == "tool_usage" else {}
            calls.append(PlannedCall(id=str(i), name=str(step.get("tool") or ""),
                                     args=dict(param) if isinstance(param, dict) else {}))
        plan = ToolPlan(calls=calls, final="完成。" if split.subset == "zh" else "Done.")
        return [GoldAnswer("", plan.model_dump_json(), TOOL_PLAN)]
