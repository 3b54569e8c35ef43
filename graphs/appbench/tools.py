"""AppBench with native tool calling: strategies ``tools`` and ``tools_hierarchical``.

The agent gets the user's request and the APIs as tools
(:mod:`tooleval_agents.appbench.tools`), calls them -- several at once if it likes -- sees
their answers, and stops with a final answer. Its tool calls are turned back into AppBench call
lines (:func:`~tooleval_agents.appbench.tools.calls_from_trajectory`: an argument whose value
an earlier call returned under the same name is a dependency), so every AppBench metric
applies; executed success is the natural headline. The trace holds each call with the tool's
answer, and a summary of turns, calls and tool errors.

* ``tools``: all 33 API tools are bound from the start. A user's agent (``--agent``) can play
  this part: it is built once per split with ``factory(model, tools)``.
* ``tools_hierarchical``: the paper's app-then-API hierarchy as dynamic tool binding: the agent
  first has only the 15 ``open_<App>`` tools; opening an app binds that app's API tools for the
  following turns. Calling an API of an app that is not open is refused with a message saying
  which ``open_`` tool to call. Served over MCP (:class:`OpenApps`), the session lists the
  ``open_`` tools and the APIs of the apps opened so far.

Each strategy's :meth:`~Tools.agent_io` is what ``tooleval serve --strategy`` and
``--agent-cmd`` serve; with ``-O mcp=true`` the strategy's own agent takes its tools from that
session over MCP (:mod:`tooleval_agents.graphs.mcp_agent`).

Graph: ``agent -> END`` where ``agent`` runs the whole conversation
(:func:`tooleval_agents.graphs.tool_agent.agent_node`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from pydantic import Field as PydanticField

from tooleval_agents.agents import ToolCallRecord, final_answer, trajectory
from tooleval_agents.appbench.catalog import load_catalog
from tooleval_agents.appbench.depgraph import sources
from tooleval_agents.appbench.records import AppBenchSample, Catalog
from tooleval_agents.appbench.tools import (
    OPEN_PREFIX,
    api_tools,
    calls_from_trajectory,
    open_tool_name,
    open_tools,
    split_tool_name,
    tool_name,
)
from tooleval_agents.contracts import AgentIO, GoldAnswer, Split, StrategyContext, ToolSession
from tooleval_agents.graphs.appbench.planning import (
    AppBenchStrategy,
    instruction_of,
    reference_sample,
)
from tooleval_agents.graphs.appbench.prompts import TODAY
from tooleval_agents.graphs.common import NodeUpdate
from tooleval_agents.graphs.mcp_agent import mcp_agent_node, session_agent
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
from tooleval_agents.models.reference_tools import TOOL_PLAN, PlannedCall, Ref, ToolPlan
from tooleval_agents.tool_faults import is_faulted

if TYPE_CHECKING:
    from tooleval_agents.mcp.client import McpToolbox

TASK_TEMPLATE = """\
Carry out the request below by calling the app tools you have. Pass each argument as plain \
text (dates as yyyy-mm-dd, times as hh:mm, 24-hour; today is {today}). When a value comes \
from an earlier tool answer, pass it exactly as that tool returned it. Once every call the \
request needs has been made, answer with a one-line summary.

Request: {instruction}"""


def task_message(inputs: dict[str, Any]) -> list[BaseMessage]:
    """What the agent is sent: the request, with how to pass values (our words)."""
    return [HumanMessage(TASK_TEMPLATE.format(today=TODAY, instruction=instruction_of(inputs)))]


def read_trajectory(catalog: Catalog) -> Any:
    """The reader of an agent's conversation: prediction lines from its API calls."""

    def read(state: WorkflowState, records: list[ToolCallRecord],
             messages: list[BaseMessage]) -> NodeUpdate:
        # A faulted call never reached the service: it did nothing the answer can count.
        calls = calls_from_trajectory([r for r in records if not is_faulted(r.id)], catalog)
        # An agent whose calls were read but reached no API (an ``open_<App>`` with the
        # API's arguments, a tool that does not exist) answered in the task's format: its
        # plan is empty and scores 0, it is no format error. One that called nothing is.
        return {"prediction": "\n".join(c.raw for c in calls),
                "parse_error": None if records else "the agent called no tool",
                "scratch": {"final_answer": final_answer(messages)}}

    return read


def not_open(app: str, name: str) -> str:
    """Why a call of an API of an app that is not open is refused."""
    return f"the {app} app is not open: call {open_tool_name(app)} first, then {name}"


@dataclass
class OpenApps(ToolSession):
    """``tools_hierarchical``'s session: the ``open_<App>`` tools, then the APIs of each app
    an ``open_`` call opened (catalog order, as the strategy binds them); an API of an app
    that is not open is refused with :func:`not_open`."""

    catalog: Catalog
    openers: list[BaseTool]
    by_app: dict[str, list[BaseTool]]
    read: Callable[[Sequence[BaseMessage]], dict[str, Any]]
    opened: set[str] = field(default_factory=set)
    dynamic = True

    def tools(self) -> list[BaseTool]:
        return [*self.openers, *(t for app in self.catalog.apps if app in self.opened
                                 for t in self.by_app.get(app, []))]

    def refusal(self, name: str) -> str | None:
        app, _ = split_tool_name(name)
        if app is None or app in self.opened or all(t.name != name
                                                    for t in self.by_app.get(app, [])):
            return None
        return not_open(app, name)

    def answered(self, name: str, error: bool) -> None:
        if name.startswith(OPEN_PREFIX) and not error:
            self.opened.add(name[len(OPEN_PREFIX):])

    def outputs(self, messages: Sequence[BaseMessage]) -> dict[str, Any]:
        return self.read(messages)


def _by_app(tools: Sequence[BaseTool]) -> dict[str, list[BaseTool]]:
    by_app: dict[str, list[BaseTool]] = {}
    for tool in tools:
        app, _ = split_tool_name(tool.name)
        if app is not None:
            by_app.setdefault(app, []).append(tool)
    return by_app


def hierarchical_io(catalog: Catalog) -> AgentIO:
    """How any agent plays ``tools_hierarchical``: an :class:`OpenApps` session per example,
    the request as :func:`task_message` words it, the calls read as :func:`agent_io` reads
    them."""
    openers, apis = open_tools(catalog), api_tools(catalog)
    by_app = _by_app(apis)
    read = read_trajectory(catalog)

    def outputs(inputs: dict[str, Any], messages: Sequence[BaseMessage]) -> dict[str, Any]:
        return agent_outputs({"inputs": inputs}, list(messages), read)

    return AgentIO(tools=lambda inputs: [*openers, *apis], messages=task_message,
                   outputs=outputs,
                   session=lambda inputs: OpenApps(catalog, openers, by_app,
                                                   lambda m: outputs(inputs, m)))


def agent_io(catalog: Catalog) -> AgentIO:
    """How any agent over ``{"messages": [...]}`` plays the ``tools`` strategy outside a run:
    every API as a tool, the request as :func:`task_message` words it, and the final
    messages read as :func:`read_trajectory` and
    :func:`~tooleval_agents.graphs.tool_agent.agent_node` read them (call lines, ``raw_outputs``,
    ``trace``)."""
    tools = api_tools(catalog)
    read = read_trajectory(catalog)
    return AgentIO(
        tools=lambda inputs: tools, messages=task_message,
        outputs=lambda inputs, messages: agent_outputs({"inputs": inputs}, list(messages),
                                                       read))


class ToolsOptions(ToolCallOptions):
    """Options of the tool-calling strategies."""

    max_turns: int = PydanticField(default=DEFAULT_MAX_TURNS, ge=1, le=100, strict=True)
    """Model answers per example at most (parallel calls share one answer)."""


def tool_plan(sample: AppBenchSample, *, hierarchical: bool) -> ToolPlan:
    """The gold plan as tool calls: literal arguments as given, each dependency a reference to
    the latest earlier call returning it (a dependency the gold leaves unresolved takes its
    ``used_api`` value when aligned); ``hierarchical``: each app opened before its first API."""
    calls = sample.calls
    source = sources(calls)
    used = sample.output.used_api
    planned: list[PlannedCall] = []
    opened: dict[str, str] = {}
    openers: list[PlannedCall] = []  # first: every app is opened in the first turn
    for i, call in enumerate(calls):
        app = call.app or "Unknown"
        after: list[str] = []
        if hierarchical:
            if app not in opened:
                opened[app] = f"open{len(opened)}"
                openers.append(PlannedCall(id=opened[app], name=open_tool_name(app)))
            after = [opened[app]]
        args: dict[str, Any] = dict(call.literal_args)
        refs: dict[str, Ref] = {}
        for key, name in call.dependent_args.items():
            if (i, key) in source:
                refs[key] = Ref(call=str(source[i, key]), key=name)
            else:
                aligned = len(used) == len(calls) and call.api in used[i]
                args[key] = used[i][call.api].get(key, f"<{name}>") if aligned else f"<{name}>"
        planned.append(PlannedCall(id=str(i), name=tool_name(app, call.api), args=args,
                                   refs=refs, after=after))
    return ToolPlan(calls=[*openers, *planned], final="All requested calls are done.")


class Tools(AppBenchStrategy):
    """A tool-calling agent with every API as a tool (a user's agent may play it)."""

    name = "tools"
    options = ToolsOptions
    accepts_agent = True
    hierarchical = False

    def tools(self, catalog: Catalog) -> list[BaseTool]:
        """The tools the agent is given."""
        return api_tools(catalog)

    def agent(self, ctx: StrategyContext, catalog: Catalog) -> Runnable[Any, Any]:
        tools = self.tools(catalog)
        options = self.read_options(ctx)
        model = agent_model(ctx.model, options)
        if ctx.agent is not None:
            return _checked(ctx.agent(model, faulty_tools(tools)))
        return react_agent(model, tools, max_turns=options.max_turns,
                           name=f"appbench-{self.name}-agent")

    def mcp_agent(self, ctx: StrategyContext) -> Callable[[McpToolbox], Runnable[Any, Any]]:
        """The agent of each example's tools over MCP (``-O mcp=true``): a user's, built on
        the tools the session lists; the built-in one, built once (every example has the same
        tools), on the session open where it runs."""
        options = self.read_options(ctx)
        model = agent_model(ctx.model, options)
        if ctx.agent is not None:
            factory = ctx.agent
            return lambda box: _checked(factory(model, faulty_tools(box.listed())))
        agent = session_agent(model, max_turns=options.max_turns,
                              name=f"appbench-{self.name}-agent")
        return lambda box: agent

    def agent_io(self, split: Split, data_dir: Path | None = None) -> AgentIO:
        if split.benchmark != "appbench":
            raise ValueError(f"strategy appbench/{self.name} cannot run split {split.key}")
        return agent_io(load_catalog())

    def build(self, ctx: StrategyContext) -> CompiledStateGraph[Any, Any, Any, Any]:
        catalog = self._check(ctx).catalog
        graph = StateGraph(WorkflowState)
        if self.read_options(ctx).mcp:
            io = self.agent_io(ctx.split, ctx.data_dir)
            graph.add_node("agent", mcp_agent_node(ctx, io, self.mcp_agent(ctx)))
        else:
            graph.add_node("agent", agent_node(self.agent(ctx, catalog),
                                               lambda s: task_message(s["inputs"]),
                                               read_trajectory(catalog)))
        graph.add_edge(START, "agent")
        graph.add_edge("agent", END)
        return graph.compile(name=f"appbench-{self.name}-{ctx.split.subset}")

    def gold_answers(self, split: Split, inputs: dict[str, Any],
                     reference_outputs: dict[str, Any]) -> list[GoldAnswer]:
        sample = reference_sample(reference_outputs, instruction_of(inputs))
        plan = tool_plan(sample, hierarchical=self.hierarchical)
        return [GoldAnswer("", plan.model_dump_json(), TOOL_PLAN)]


def opened_apps(messages: Sequence[BaseMessage]) -> set[str]:
    """Apps opened by a successful ``open_<App>`` call so far."""
    return {r.name[len(OPEN_PREFIX):] for r in trajectory(messages)
            if r.name.startswith(OPEN_PREFIX) and r.output is not None and not r.error}


class ToolsHierarchical(Tools):
    """Open apps first, then use the opened apps' APIs (dynamic tool binding)."""

    name = "tools_hierarchical"
    accepts_agent = False  # the dynamic binding is the strategy's own agent
    hierarchical = True

    def tools(self, catalog: Catalog) -> list[BaseTool]:
        return [*open_tools(catalog), *api_tools(catalog)]

    def agent(self, ctx: StrategyContext, catalog: Catalog) -> Runnable[Any, Any]:
        every = self.tools(catalog)
        openers = [t for t in every if t.name.startswith(OPEN_PREFIX)]
        by_app = _by_app(every)

        def tools_for(messages: Sequence[BaseMessage]) -> list[BaseTool]:
            opened = opened_apps(messages)
            return [*openers, *(t for app in catalog.apps if app in opened
                                for t in by_app.get(app, []))]

        def refuse(name: str, messages: Sequence[BaseMessage]) -> str | None:
            app, _ = split_tool_name(name)
            if app is None or app in opened_apps(messages):
                return None
            return not_open(app, name)

        options = self.read_options(ctx)
        return react_agent(agent_model(ctx.model, options), every, tools_for=tools_for,
                           refuse=refuse, max_turns=options.max_turns,
                           name=f"appbench-{self.name}-agent")


    def agent_io(self, split: Split, data_dir: Path | None = None) -> AgentIO:
        if split.benchmark != "appbench":
            raise ValueError(f"strategy appbench/{self.name} cannot run split {split.key}")
        return hierarchical_io(load_catalog())


def _checked(agent: Any) -> Runnable[Any, Any]:
    if not isinstance(agent, Runnable):
        raise TypeError(f"the agent factory returned {type(agent).__name__}, not a Runnable "
                        "over {'messages': [...]}")
    return agent


STRATEGIES: tuple[Tools, ...] = (Tools(), ToolsHierarchical())
"""AppBench's tool-calling strategies (listed by its benchmark declaration)."""
