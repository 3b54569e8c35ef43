"""UltraTool end to end with native tool calling: strategy ``tools`` on task ``raw``.

The tool-calling counterpart of :mod:`tooleval_agents.graphs.ultratool.plan_create_use`. The agent
gets the question and
the same toolset (:func:`tooleval_agents.graphs.ultratool.plan_create_use.example_toolset`: some
tools the question needs
are missing) as LangChain tools, plus ``create_tool``. It plans, creates what is missing,
calls tools and answers with its plan:

* ``create_tool(name, description, arguments, results)`` checks the skeleton
  (:func:`tooleval_agents.graphs.ultratool.plan_create_use.created_skeleton`) and registers it as a
  data-only stub (a
  schema and simulated results, never code). The built-in agent gets the created tool bound
  from its next answer on (dynamic binding). A user's agent (``--agent``) is built with a fixed
  tool list, so it also gets ``use_created_tool(name, arguments)``, which calls a created tool.
* Every call is checked against its tool's schema; failures go back to the agent as error
  ``ToolMessage``\\ s.

Prediction (what :mod:`tooleval_agents.evaluators.ultratool.plan_create_use` scores, as for the text
workflow): ``{"plan": final answer, "calls": [{step, tool, param}], "created_tools": [skeleton]}``,
where the calls are the agent's calls other than ``create_tool``, in order (``use_created_tool``
read as a call of the tool it names), and ``step`` is ``call k``: a native call is not tied to
a plan step. ``trace`` holds one execution record per call, built from what the tool answered
during the run (valid when it did not answer with an error), then the agent's records. Native
calls pass values, not ``<...>`` references, so the reference metrics are n/a here; the
dependency between calls shows in the trajectory (an argument holding an earlier result).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, Field

from tooleval_agents.agents import ERROR_PREFIX, ToolCallRecord, final_answer, tool_error_text
from tooleval_agents.contracts import AgentIO, ToolSession
from tooleval_agents.graphs.common import NodeUpdate
from tooleval_agents.graphs.state import WorkflowState
from tooleval_agents.graphs.tool_agent import (
    DEFAULT_MAX_TURNS,
    agent_messages,
    agent_outputs,
    faulty_tools,
    react_agent,
    stopped_at,
)
from tooleval_agents.graphs.ultratool.plan_create_use import AgentToolset, created_skeleton
from tooleval_agents.models.reference_tools import PlannedCall, Ref, ToolPlan
from tooleval_agents.ultratool.records import RawSample, ToolCall, ToolSkeleton, step_id
from tooleval_agents.ultratool.stubs import CallTrace, execute_plan, plan_items
from tooleval_agents.ultratool.tools import skeleton_tool

CREATE_TOOL = "create_tool"
USE_CREATED_TOOL = "use_created_tool"
GUIDANCE = {
    "en": (
        "Solve the user's question below with your tools. Plan the solution as numbered steps "
        "(1., 1.1, 2., ...). Carry out every step that needs a tool by calling one, passing "
        "values from the question or from earlier tool answers. If none of your tools can do "
        "a step, make one with create_tool (name, description, and JSON schemas of its "
        "arguments and results), then call it. When done, answer with the plan only, one "
        "step per line."),
    "zh": (
        "请用你的工具解决下面的用户问题。先把解决方案规划为编号步骤（1.、1.1、2.……）。每个需要"
        "工具的步骤都调用一个工具来完成，参数取自问题或先前工具的返回。如果现有工具都无法完成某个"
        "步骤，先用 create_tool 创建一个（名称、描述、参数和返回值的 JSON schema），再调用它。"
        "完成后只回答计划，每行一个步骤。"),
}
QUESTION = {"en": "Question", "zh": "问题"}


def input_text(lang: str, inputs: Mapping[str, Any]) -> str:
    """The example as the agent reads it (after the guidance)."""
    return f"{QUESTION[lang]}: {str(inputs.get('question') or '').strip()}"


class _CreateArgs(BaseModel):
    name: str = Field(description="The new tool's name: letters, digits and underscores.")
    description: str = Field(description="What the tool does.")
    arguments: dict[str, Any] = Field(description=(
        'JSON schema of its arguments: {"type": "object", "properties": {...}, '
        '"required": [...]}'))
    results: dict[str, Any] = Field(description=(
        'JSON schema of what it returns: {"type": "object", "properties": {...}}'))


class _UseArgs(BaseModel):
    name: str = Field(description="The name of a tool you created with create_tool.")
    arguments: dict[str, Any] = Field(default_factory=dict,
                                      description="The arguments of the call.")


@dataclass
class Workshop:
    """One example's tools: the toolset, ``create_tool``, and the tools created so far."""

    toolset: Sequence[ToolSkeleton]
    created: dict[str, ToolSkeleton] = field(default_factory=dict)
    _tools: dict[str, BaseTool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._given = [skeleton_tool(t) for t in self.toolset]
        self._create = StructuredTool.from_function(
            func=self.create, name=CREATE_TOOL, args_schema=_CreateArgs,
            handle_tool_error=tool_error_text,
            description="Create a tool you need but do not have. It can be called once "
                        "created; its answers are simulated from its results schema.")
        self._use = StructuredTool.from_function(
            coroutine=self.use, name=USE_CREATED_TOOL, args_schema=_UseArgs,
            handle_tool_error=tool_error_text,
            description="Call a tool you created with create_tool.")

    def create(self, name: str, description: str, arguments: dict[str, Any],
               results: dict[str, Any]) -> str:
        skeleton, problems = created_skeleton({"name": name, "description": description,
                                               "arguments": arguments, "results": results})
        if skeleton is None:
            raise ToolException("the tool cannot be created: " + "; ".join(problems))
        if skeleton.name in self.created or any(t.name == skeleton.name for t in self.toolset):
            raise ToolException(f"a tool named {skeleton.name!r} exists already")
        self.created[skeleton.name] = skeleton
        self._tools[skeleton.name] = skeleton_tool(skeleton)
        return f"Created {skeleton.name}; it can be called now."

    async def use(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        tool = self._tools.get(name)
        if tool is None:
            raise ToolException(f"no created tool named {name!r} (created: "
                                f"{', '.join(self._tools) or 'none'})")
        answer = await tool.ainvoke({"type": "tool_call", "id": "use", "name": name,
                                     "args": dict(arguments or {})})
        if isinstance(answer, ToolMessage) and answer.status == "error":
            raise ToolException(str(answer.content).removeprefix(ERROR_PREFIX))
        return str(answer.content if isinstance(answer, ToolMessage) else answer)

    def bound(self, messages: Sequence[BaseMessage] = ()) -> list[BaseTool]:
        """The built-in agent's tools for its next answer: the created ones included."""
        return [*self._given, self._create, *self._tools.values()]

    def fixed(self) -> list[BaseTool]:
        """A user's agent's tools (a fixed list): created tools through ``use_created_tool``."""
        return [*self._given, self._create, self._use]


def _call_trace(k: int, record: ToolCallRecord, name: str,
                args: Mapping[str, Any]) -> dict[str, Any]:
    error = None
    if record.output is None:
        error = "the agent stopped before the call ran"
    elif record.error:
        error = record.output.removeprefix(ERROR_PREFIX)
    result = record.result() if error is None else None
    if error is None and result is None:
        error = f"the tool answered with no result object: {str(record.output)[:120]!r}"
    return CallTrace(step=f"call {k}", tool=name, args=dict(args), result=result,
                     error=error).model_dump(mode="json")


def prediction_of(records: Sequence[ToolCallRecord], messages: Sequence[BaseMessage],
                  workshop: Workshop) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The workflow prediction and the execution records of a finished agent run."""
    calls: list[dict[str, Any]] = []
    traces: list[dict[str, Any]] = []
    for record in records:
        if record.name == CREATE_TOOL:
            continue
        name, args = record.name, dict(record.args)
        if name == USE_CREATED_TOOL:
            inner = args.get("arguments")
            name, args = str(args.get("name") or ""), dict(inner) if isinstance(inner, dict) \
                else {}
        k = len(calls) + 1
        calls.append({"step": f"call {k}", "tool": name, "param": args})
        traces.append(_call_trace(k, record, name, args))
    plan = final_answer(list(messages))
    return ({"plan": plan, "calls": calls,
             "created_tools": [t.official() for t in workshop.created.values()]}, traces)


def request(lang: str, inputs: Mapping[str, Any]) -> list[BaseMessage]:
    """What the agent is sent: the guidance, then the question."""
    return [HumanMessage(f"{GUIDANCE[lang]}\n\n{input_text(lang, inputs)}")]


def workshop_outputs(workshop: Workshop, inputs: dict[str, Any],
                     messages: Sequence[BaseMessage]) -> NodeUpdate:
    """A finished agent's conversation as the workflow's outputs: its prediction
    (:func:`prediction_of`), then the trace -- one execution record per call, then the
    agent's records."""
    executed: list[dict[str, Any]] = []

    def read(state: WorkflowState, records: list[ToolCallRecord],
             final: list[BaseMessage]) -> NodeUpdate:
        prediction, traces = prediction_of(records, final, workshop)
        executed.extend(traces)
        return {"prediction": prediction,
                "parse_error": None if prediction["plan"].strip() else
                "the agent gave no final answer (its plan)"}

    update = agent_outputs({"inputs": inputs}, list(messages), read)
    update["trace"] = [*executed, *update["trace"]]
    return update


@dataclass
class WorkshopSession(ToolSession):
    """One example's :class:`Workshop` as a session: the toolset and ``create_tool``, then
    each tool created (listed from the call that made it on)."""

    workshop: Workshop
    inputs: dict[str, Any]
    dynamic = True

    def tools(self) -> list[BaseTool]:
        return self.workshop.bound()

    def outputs(self, messages: Sequence[BaseMessage]) -> dict[str, Any]:
        return workshop_outputs(self.workshop, self.inputs, messages)


def raw_io(lang: str, toolset_of: Callable[[dict[str, Any]], AgentToolset]) -> AgentIO:
    """How any agent plays plan -> create -> use on UltraTool ``raw`` (``tooleval serve``,
    ``--agent-cmd``, ``-O mcp=true``): a :class:`WorkshopSession` per example, the request
    as :data:`GUIDANCE` words it, the outputs as the strategy reads them."""

    def session(inputs: dict[str, Any]) -> WorkshopSession:
        return WorkshopSession(Workshop(toolset=toolset_of(inputs).tools), dict(inputs))

    return AgentIO(tools=lambda inputs: session(inputs).workshop.fixed(),
                   messages=lambda inputs: request(lang, inputs),
                   outputs=lambda inputs, messages: session(inputs).outputs(messages),
                   session=session)


def agent_workflow_node(model: Any, agent: Any, toolset_of: Any, lang: str,
                        max_turns: int) -> Any:
    """The workflow node: a fresh :class:`Workshop` and agent per example."""

    async def node(state: WorkflowState, config: RunnableConfig) -> NodeUpdate:
        toolset: AgentToolset = toolset_of(state["inputs"])
        workshop = Workshop(toolset=toolset.tools)
        runnable: Runnable[Any, Any] = (
            agent(model, faulty_tools(workshop.fixed())) if agent is not None else react_agent(
                model, workshop.bound(), tools_for=workshop.bound, max_turns=max_turns,
                name="ultratool-create-tools-agent"))
        messages, stopped = await agent_messages(
            runnable, request(lang, state["inputs"]), config, 4 * DEFAULT_MAX_TURNS + 10)
        return stopped_at(workshop_outputs(workshop, state["inputs"], messages),
                          stopped and 4 * DEFAULT_MAX_TURNS + 10)

    return node


def gold_tool_plan(inputs: Mapping[str, Any], reference_outputs: Mapping[str, Any],
                   toolset: AgentToolset) -> ToolPlan:
    """What a perfect agent does: create the gold tools missing from the toolset (first), then
    make the gold plan's calls in step order; an argument that is one whole ``<...>`` reference
    to an earlier call's result takes that result's value (:class:`Ref`), every other argument
    the value the gold plan's execution on the stubs gave it. The final answer is the plan."""
    sample = RawSample.model_validate({"question": inputs["question"],
                                       "domain": inputs.get("domain", ""),
                                       "plan": reference_outputs["plan"],
                                       "tools": reference_outputs["tools"]})
    items = plan_items(sample.plan)
    trace = execute_plan(items, sample.tools)
    own = {t.name: t for t in sample.tools}
    present = toolset.names
    calls: list[PlannedCall] = []
    created: dict[str, str] = {}
    for item in items:
        call = item[1]
        if isinstance(call, ToolCall) and call.name not in present and call.name in own \
                and call.name not in created:
            created[call.name] = f"create_{len(created)}"
            skeleton = own[call.name].official()
            calls.append(PlannedCall(id=created[call.name], name=CREATE_TOOL, args={
                k: skeleton.get(k) for k in ("name", "description", "arguments", "results")}))
    by_step: dict[str, str] = {}
    executed = iter(trace.calls)
    for k, (step, call) in enumerate(items):
        if call is None:
            continue
        done = next(executed)
        cid = str(k)
        name = call.name if isinstance(call, ToolCall) else done.tool
        given = dict(call.args) if isinstance(call, ToolCall) else {}
        refs: dict[str, Ref] = {}
        args: dict[str, Any] = {}
        resolved = {r.reference: r for r in done.resolved_references}
        for key, value in given.items():
            r = resolved.get(value.strip())
            source = by_step.get(r.step) if r is not None else None
            if source is not None and r is not None and r.output in _result_keys(trace, r.step):
                refs[key] = Ref(call=source, key=r.output)
            else:
                args[key] = done.args.get(key, value) if done.error is None else value
        made = name in created
        calls.append(PlannedCall(id=cid, name=name, args=args, refs=refs,
                                 after=[created[name]] if made else [],
                                 via=USE_CREATED_TOOL if made else None))
        by_step[step_id(step)] = cid
    return ToolPlan(calls=calls, final="\n".join(s.step for s in sample.plan))


def _result_keys(trace: Any, step: str) -> set[str]:
    return {k for c in trace.calls if c.step == step and c.result for k in c.result}


__all__ = ["CREATE_TOOL", "GUIDANCE", "USE_CREATED_TOOL", "Workshop", "WorkshopSession",
           "agent_workflow_node", "gold_tool_plan", "input_text", "prediction_of", "raw_io",
           "request", "workshop_outputs"]
