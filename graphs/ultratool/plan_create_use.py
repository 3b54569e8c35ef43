"""UltraTool end to end: plan, create the missing tools, use them (strategy ``plan_create_use``).

Benchmark ``ultratool``, task ``raw`` (``test.json``, inputs ``{question, domain}``, reference
``{plan, tools}``). The paper's workflow (§1: "user queries LLMs -> LLMs pose a solution plan ->
LLMs create/select tools to solve sub-task within the plan"), one model call per stage, each
stage prompted with the paper's instruction and one-shot demonstration of the matching dimension
(:mod:`tooleval_agents.graphs.ultratool.prompts`,
:func:`tooleval_agents.graphs.ultratool.protocol.prompt_header`)::

    plan      question -> numbered tree plan                      (planning)
    aware     which steps need a tool call                        (tool usage awareness)
    missing   which of those the toolset cannot serve             (tool creation awareness)
    create    a skeleton per such step                            (tool creation)
    select    a tool per tool step, from toolset + created tools  (tool selection)
    fill      the arguments of each call                          (tool usage)
    execute   the calls on simulated tools, <...> references resolved (no model call;
              :func:`tooleval_agents.ultratool.stubs.execute_plan`)

A stage with nothing to ask is skipped (no plan steps, no tool step, no missing tool).

**What the agent sees.** The question, and a toolset of 8 in which some needed tools are
missing (:func:`build_toolset`): the ``tool_selection`` set's toolset (the paper's T-bar: the
sample's tools plus look-alike interference tools) minus the tools the ``tool_creation_awareness``
set removed (T-hat; upstream's ``tool_creation.json`` choice when available, see
:mod:`tooleval_agents.ultratool.rebuild`) and minus any look-alike that is a near duplicate of a
removed tool (:data:`GUARD_SIMILARITY`), so that a renamed copy of a removed tool cannot make a
"must create" label wrong; the freed places are filled with T-hat's own (random, guarded)
fillers. On the real data every sample loses 1-n of its tools (1544 per language, as upstream's
``tool_creation.json``) and 861 (en) / 493 (zh) look-alikes are left out as near duplicates.
Both sets are line-aligned with ``test.json``; the toolset is looked up by the example's question
in ``ctx.data_dir`` (an explicit ``toolset`` list in the inputs wins).

**Prompts.** Every stage wraps the same text, the question (``Question: ...``, exactly the
``one_shot`` planning input), in ``<input>`` tags; the stage's own context (plan so far, toolset)
follows the block, rendered as in the one-shot prompts. The plan shown to ``aware`` gives every
step an empty ``tool`` field: a plan's text does not tell which steps are parents (upstream marks
63 childless steps as parents and puts 24 calls on steps with sub-steps, per language), so every
step is asked.

**Output.** ``prediction = {"plan": text, "calls": [{step, tool, param}], "created_tools":
[skeleton]}``; ``trace`` = one dict per executed call (:class:`~tooleval_agents.ultratool.stubs.
CallTrace`); ``scratch`` = the parsed answer of each stage (``answers``), the steps each stage
kept, the agent's toolset names and rejected skeletons; ``parse_error`` lists the stages whose
answer could not be read. Scored by :mod:`tooleval_agents.evaluators.ultratool.plan_create_use`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from pydantic import ValidationError

from tooleval_agents.contracts import GoldAnswer, Split, Strategy, StrategyContext
from tooleval_agents.data.datadir import resolve_data_dir
from tooleval_agents.evaluators.parsing import ParseFailure, clean_plan_text, parse_list, parse_plan
from tooleval_agents.graphs.common import (
    INPUT_CLOSE,
    INPUT_OPEN,
    NodeUpdate,
    build_messages,
    input_block,
    model_call_node,
    render_json,
)
from tooleval_agents.graphs.state import WorkflowState
from tooleval_agents.graphs.ultratool.prompts import LABELS, MARKERS, Field, PromptLang
from tooleval_agents.graphs.ultratool.protocol import prompt_header, render_input
from tooleval_agents.graphs.ultratool.toolsets import (
    GUARD_SIMILARITY,
    AgentToolset,
    _explicit_toolset,
    agent_toolsets,
    build_toolset,
    example_toolset,
    question_key,
)
from tooleval_agents.ultratool.calls import parse_call
from tooleval_agents.ultratool.loaders import load_example
from tooleval_agents.ultratool.records import (
    RawSample,
    ToolCall,
    ToolSkeleton,
    UltraToolTask,
    step_id,
)
from tooleval_agents.ultratool.stubs import PlanItem, execute_plan, validate_skeleton

Stage = Literal["plan", "aware", "missing", "create", "select", "fill"]
STAGES: tuple[Stage, ...] = ("plan", "aware", "missing", "create", "select", "fill")
STAGE_TASKS: dict[Stage, UltraToolTask] = {
    "plan": "planning",
    "aware": "tool_usage_awareness",
    "missing": "tool_creation_awareness",
    "create": "tool_creation",
    "select": "tool_selection",
    "fill": "tool_usage",
}
"""The UltraTool dimension whose instruction, demonstration and marker each stage uses."""


_REF = re.compile(r"<[^<>]+>")


# --- the agent's toolset -------------------------------------------------------------------------


# --- prompts -------------------------------------------------------------------------------------

def _split_lang(split: Split) -> PromptLang:
    if split.benchmark != "ultratool" or split.task != "raw":
        raise ValueError(f"plan_create_use runs on the ultratool raw split, not {split.key}")
    if split.subset not in LABELS:
        raise ValueError(f"ultratool split {split.key}: unknown language {split.subset!r}")
    return cast(PromptLang, split.subset)


def question_text(lang: PromptLang, question: str) -> str:
    """The text every stage wraps in ``<input>`` tags: ``Question: ...`` (the input key)."""
    return render_input("planning", lang, {"input": question})


def _outside(text: str) -> str:
    # Context after the <input> block must not open another one (the reference model reads
    # the last block): model-written plan text could contain the tags.
    return text.replace(INPUT_OPEN, "<input >").replace(INPUT_CLOSE, "</input >")


def stage_prompt(header: str, lang: PromptLang, question: str,
                 context: Sequence[tuple[Field, Any]] = ()) -> str:
    """A stage's prompt: its instruction and demonstration (``header``), the question inside
    ``<input>`` tags, then the stage's context (plan, toolset) labelled as in the demonstration.
    """
    labels = LABELS[lang]
    lines = [labels.begin, input_block(question_text(lang, question))]
    for field, value in context:
        label = getattr(labels, field)
        lines.append(_outside(label + ("" if label.endswith("：") else " ") + render_json(value)))
    lines.append(labels.output)
    return header + "\n\n" + "\n".join(lines)


# --- reading answers -----------------------------------------------------------------------------

def sid(step: Any) -> str:
    """Step id used to match answers to asked steps (``1.`` and ``1`` are the same step)."""
    return step_id(str(step)).rstrip(".") or str(step).strip()


def by_step(items: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """Answer items by step id; the first item of a step wins (the official matching rule)."""
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        if isinstance(item, dict) and "step" in item:
            out.setdefault(sid(item["step"]), item)
    return out


def flag(value: Any) -> bool:
    """An awareness label read leniently: ``"1"``, ``1`` and ``true`` are yes."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("1", "true", "yes")


def _as_text(value: Any) -> str:
    # Non-string values become Python literal text, which the stubs coerce to the declared type.
    return value if isinstance(value, str) else repr(value)


def to_call(tool: str, param: Any) -> ToolCall | str:
    """A predicted ``{tool, param}`` as an executable call; a string the executor reports as
    malformed when ``param`` is neither an argument object nor ``name=value`` text.

    >>> to_call("rate", {"amount": 5, "rate": "<exchange rate>"}).references
    ['<exchange rate>']
    >>> to_call("rate", "amount=5").args
    {'amount': '5'}
    """
    if isinstance(param, dict):
        args = {str(k): _as_text(v) for k, v in param.items()}
        shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
        return ToolCall(name=tool, args=args, raw=f"{tool}({shown})",
                        references=_REF.findall(" ".join(args.values())))
    if param is None or param == "":
        return ToolCall(name=tool, args={}, raw=f"{tool}()")
    text = f"{tool}({param})"
    if isinstance(param, str):
        return parse_call(text) or text
    return text


def _plan_steps(answer: str) -> tuple[list[str], str | None]:
    """Step strings (number + text, as written) of a plan answer, or a parse error."""
    parsed = parse_plan(answer)
    if isinstance(parsed, ParseFailure):
        return [], f"{parsed.kind}: {parsed.message}"
    lines = parsed.text.splitlines()
    steps = []
    for s in parsed.steps:
        line = lines[s.line - 1]
        steps.append(line[line.find(s.label):].strip())
    return steps, None


# --- the workflow --------------------------------------------------------------------------------

def _scratch(state: WorkflowState, **updates: Any) -> dict[str, Any]:
    # ``scratch`` has no reducer: every node returns the whole dict, updated.
    return {**(state.get("scratch") or {}), **updates}


def _answers(state: WorkflowState, stage: Stage, value: Any) -> dict[str, Any]:
    return {**state.get("scratch", {}).get("answers", {}), stage: value}


def _errors(state: WorkflowState, stage: Stage, error: str | None) -> dict[str, str]:
    errors = dict(state.get("scratch", {}).get("errors", {}))
    if error:
        errors[stage] = error
    return errors


def _read_list(state: WorkflowState, stage: Stage) -> tuple[list[Any], dict[str, Any]]:
    """The stage's parsed answer list and the scratch updates recording it."""
    parsed = parse_list(state["raw_outputs"][-1])
    items = [] if isinstance(parsed, ParseFailure) else parsed.value
    error = f"{parsed.kind}: {parsed.message}" if isinstance(parsed, ParseFailure) else None
    return items, {"answers": _answers(state, stage, items),
                   "errors": _errors(state, stage, error)}


def created_skeleton(tool: Any) -> tuple[ToolSkeleton | None, list[str]]:
    """A created tool as a skeleton, or why it is unusable (created tools are data only)."""
    problems = validate_skeleton(tool)
    if problems:
        return None, problems
    try:
        return ToolSkeleton.model_validate(tool), []
    except ValidationError as exc:
        return None, [f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                      for e in exc.errors(include_url=False)]


@dataclass
class _Graph:
    """Node functions of one compiled workflow (one language, one toolset table)."""

    lang: PromptLang
    headers: dict[Stage, str]
    toolsets: Mapping[str, AgentToolset]
    where: str
    """The data directory, for error messages."""

    def toolset(self, inputs: Mapping[str, Any]) -> AgentToolset:
        explicit = _explicit_toolset(inputs)
        if explicit is not None:
            return explicit
        found = self.toolsets.get(question_key(inputs["question"]))
        if found is None:
            raise LookupError(f"plan_create_use: the question {inputs['question'][:80]!r} is not "
                              f"in {self.where} ({self.lang}); pass inputs['toolset'] or the "
                              "data directory the example comes from")
        return found

    def prompt(self, state: WorkflowState, stage: Stage,
               context: Sequence[tuple[Field, Any]] = ()) -> str:
        return stage_prompt(self.headers[stage], self.lang, state["inputs"]["question"], context)

    # Nodes, in workflow order: each reads the last answer and prepares the next prompt.

    def start(self, state: WorkflowState) -> NodeUpdate:
        toolset = self.toolset(state["inputs"])
        return {"scratch": {"toolset": [t.name for t in toolset.tools],
                            "answers": {}, "errors": {},
                            "prompt": self.prompt(state, "plan")}}

    def read_plan(self, state: WorkflowState) -> NodeUpdate:
        answer = state["raw_outputs"][-1]
        steps, error = _plan_steps(answer)
        plan = [{"step": s, "tool": ""} for s in steps]
        return {"scratch": _scratch(
            state, steps=steps, plan_text=clean_plan_text(answer),
            answers=_answers(state, "plan", steps), errors=_errors(state, "plan", error),
            prompt=self.prompt(state, "aware", [("plan", plan)]))}

    def read_aware(self, state: WorkflowState) -> NodeUpdate:
        items, update = _read_list(state, "aware")
        labels = by_step(items)
        # A step id written twice gets one answer (the first item of an id wins), so only its
        # first step can hold a call.
        steps: list[str] = state["scratch"]["steps"]
        first = {sid(s): i for i, s in reversed(list(enumerate(steps)))}
        tool_steps = [s for i, s in enumerate(steps) if first[sid(s)] == i
                      and flag(labels.get(sid(s), {}).get("tool"))]
        marked = set(tool_steps)
        plan = [{"step": s, "tool": ""} if s in marked else {"step": s} for s in steps]
        toolset = [t.official() for t in self.toolset(state["inputs"]).tools]
        return {"scratch": _scratch(state, **update, tool_steps=tool_steps, prompt=self.prompt(
            state, "missing", [("plan", plan), ("toolset", toolset)]))}

    def read_missing(self, state: WorkflowState) -> NodeUpdate:
        items, update = _read_list(state, "missing")
        labels = by_step(items)
        missing = [s for s in state["scratch"]["tool_steps"]
                   if flag(labels.get(sid(s), {}).get("tool"))]
        marked = set(missing)
        plan = [{"step": s, "tool": ""} if s in marked else {"step": s}
                for s in state["scratch"]["steps"]]
        toolset = [t.official() for t in self.toolset(state["inputs"]).tools]
        return {"scratch": _scratch(state, **update, missing_steps=missing, prompt=self.prompt(
            state, "create", [("plan", plan), ("toolset", toolset)]))}

    def read_create(self, state: WorkflowState) -> NodeUpdate:
        items, update = _read_list(state, "create")
        answered = by_step(items)
        known = {t.name for t in self.toolset(state["inputs"]).tools}
        created: dict[str, dict[str, Any]] = {}
        rejected: list[dict[str, Any]] = []
        for step in state["scratch"]["missing_steps"]:
            item = answered.get(sid(step))
            if item is None:
                rejected.append({"step": step, "problems": ["no tool created for this step"]})
                continue
            skeleton, problems = created_skeleton(item.get("tool"))
            if skeleton is None:
                rejected.append({"step": step, "problems": problems})
            elif skeleton.name in known:
                rejected.append({"step": step, "problems": [
                    f"{skeleton.name!r} is already in the toolset (the existing tool is used)"]})
            else:
                created.setdefault(skeleton.name, skeleton.official())
        return {"scratch": _scratch(state, **update, created_tools=list(created.values()),
                                    rejected_tools=rejected)}

    def ask_select(self, state: WorkflowState) -> NodeUpdate:
        steps, marked = state["scratch"]["steps"], set(state["scratch"]["tool_steps"])
        plan = [{"step": s, "tool": ""} if s in marked else {"step": s} for s in steps]
        return {"scratch": _scratch(state, prompt=self.prompt(
            state, "select", [("plan", plan), ("toolset", self.tools(state))]))}

    def tools(self, state: WorkflowState) -> list[dict[str, Any]]:
        """The agent's toolset plus the tools it created (dicts, in that order)."""
        own = [t.official() for t in self.toolset(state["inputs"]).tools]
        return own + list(state["scratch"].get("created_tools", []))

    def read_select(self, state: WorkflowState) -> NodeUpdate:
        items, update = _read_list(state, "select")
        answered = by_step(items)
        selected: dict[str, str] = {}
        for step in state["scratch"]["tool_steps"]:
            name = answered.get(sid(step), {}).get("tool")
            selected[step] = name.strip() if isinstance(name, str) else ""
        plan = [{"step": s, "tool": selected[s], "param": ""} if s in selected else {"step": s}
                for s in state["scratch"]["steps"]]
        tools = {t["name"]: t for t in self.tools(state)}
        shown = [tools[n] for n in dict.fromkeys(selected.values()) if n in tools]
        return {"scratch": _scratch(state, **update, selected=selected, prompt=self.prompt(
            state, "fill", [("plan", plan), ("toolset", shown)]))}

    def read_fill(self, state: WorkflowState) -> NodeUpdate:
        items, update = _read_list(state, "fill")
        answered = by_step(items)
        calls: list[dict[str, Any]] = []
        unanswered: list[str] = []
        for step, chosen in state["scratch"]["selected"].items():
            item = answered.get(sid(step))
            if item is None:
                unanswered.append(step)
                continue
            tool = item.get("tool")
            name = tool.strip() if isinstance(tool, str) and tool.strip() else chosen
            param = item.get("param")
            if isinstance(param, dict):
                param = {str(k): _as_text(v) for k, v in param.items()}
            calls.append({"step": step, "tool": name, "param": param})
        return {"scratch": _scratch(state, **update, calls=calls, steps_without_call=unanswered)}

    def execute(self, state: WorkflowState) -> NodeUpdate:
        scratch = state["scratch"]
        calls = {sid(c["step"]): c for c in scratch.get("calls", [])}
        items: list[PlanItem] = []
        for step in scratch.get("steps", []):
            call = calls.pop(sid(step), None)  # only the first step of an id holds its call
            items.append((step, None if call is None else to_call(call["tool"], call["param"])))
        tools = [ToolSkeleton.model_validate(t) for t in self.tools(state)]
        trace = execute_plan(items, tools)
        errors = scratch.get("errors", {})
        return {
            "prediction": {"plan": scratch.get("plan_text", ""),
                           "calls": list(scratch.get("calls", [])),
                           "created_tools": list(scratch.get("created_tools", []))},
            "parse_error": "; ".join(f"{k}: {v}" for k, v in errors.items()) or None,
            "trace": [c.model_dump(mode="json") for c in trace.calls],
        }


def _route(condition: Callable[[dict[str, Any]], bool], then: str,
           otherwise: str) -> Callable[[WorkflowState], str]:
    return lambda state: then if condition(state["scratch"]) else otherwise


class PlanCreateUse(Strategy):
    """Plan, create missing tools, select and fill calls, execute (see the module doc)."""

    benchmark = "ultratool"
    name = "plan_create_use"
    tasks: tuple[str, ...] | None = ("raw",)

    def __init__(self, data_dir: Path | None = None) -> None:
        self.data_dir = data_dir
        """Where :meth:`gold_answers` looks toolsets up when no workflow was built yet (else
        the data directory of the latest :meth:`build`, else the default data directory)."""
        self._built: dict[PromptLang, Path] = {}

    def build(self, ctx: StrategyContext) -> CompiledStateGraph[Any, Any, Any, Any]:
        lang = _split_lang(ctx.split)
        data_dir = resolve_data_dir(ctx.data_dir)
        self._built[lang] = data_dir
        headers = {stage: prompt_header(task, lang, load_example(data_dir, task, lang).official())
                   for stage, task in STAGE_TASKS.items()}
        g = _Graph(lang=lang, headers=headers, toolsets=agent_toolsets(data_dir, lang),
                   where=str(data_dir))
        graph = StateGraph(WorkflowState)

        def prompt_of(state: WorkflowState) -> Any:
            return build_messages(state["scratch"]["prompt"])

        for node, fn in (("start", g.start), ("read_plan", g.read_plan),
                         ("read_aware", g.read_aware), ("read_missing", g.read_missing),
                         ("read_create", g.read_create), ("ask_select", g.ask_select),
                         ("read_select", g.read_select), ("read_fill", g.read_fill),
                         ("execute", g.execute)):
            graph.add_node(node, fn)
        for stage in STAGES:
            graph.add_node(stage, model_call_node(ctx.model, prompt_of, name=stage))
        graph.add_edge(START, "start")
        graph.add_edge("start", "plan")
        graph.add_edge("plan", "read_plan")
        graph.add_conditional_edges("read_plan", _route(lambda s: bool(s["steps"]), "aware",
                                                        "execute"), ["aware", "execute"])
        graph.add_edge("aware", "read_aware")
        graph.add_conditional_edges("read_aware", _route(lambda s: bool(s["tool_steps"]),
                                                         "missing", "execute"),
                                    ["missing", "execute"])
        graph.add_edge("missing", "read_missing")
        graph.add_conditional_edges("read_missing", _route(lambda s: bool(s["missing_steps"]),
                                                           "create", "ask_select"),
                                    ["create", "ask_select"])
        graph.add_edge("create", "read_create")
        graph.add_edge("read_create", "ask_select")
        graph.add_edge("ask_select", "select")
        graph.add_edge("select", "read_select")
        graph.add_edge("read_select", "fill")
        graph.add_edge("fill", "read_fill")
        graph.add_edge("read_fill", "execute")
        graph.add_edge("execute", END)
        return graph.compile(name=f"ultratool-{self.name}-{lang}")

    def input_key(self, split: Split, inputs: dict[str, Any]) -> str:
        return question_text(_split_lang(split), inputs["question"])

    def toolset(self, split: Split, inputs: Mapping[str, Any]) -> AgentToolset:
        """The example's toolset: ``inputs["toolset"]``, else looked up by question in the
        data directory (see :attr:`data_dir`)."""
        lang = _split_lang(split)
        return example_toolset(inputs, self.data_dir or self._built.get(lang), lang)

    def gold_answers(self, split: Split, inputs: dict[str, Any],
                     reference_outputs: dict[str, Any]) -> list[GoldAnswer]:
        return gold_stage_answers(_split_lang(split), inputs, reference_outputs,
                                  self.toolset(split, inputs))


def gold_stage_answers(lang: PromptLang, inputs: Mapping[str, Any],
                       reference_outputs: Mapping[str, Any],
                       toolset: AgentToolset) -> list[GoldAnswer]:
    """What a perfect agent answers at each stage, from the raw sample's gold plan and tools."""
    sample = RawSample.model_validate({"question": inputs["question"],
                                       "domain": inputs.get("domain", ""),
                                       "plan": reference_outputs["plan"],
                                       "tools": reference_outputs["tools"]})
    skeletons = {t["name"]: t for t in reference_outputs["tools"]}
    present = toolset.names
    calls = [(s.step, s.call or ToolCall(name=s.tool.strip(), args={}, raw=s.tool))
             for s in sample.plan if s.kind == "tool_call"]
    answers: dict[Stage, Any] = {
        "aware": [{"step": s.step, "tool": "1" if s.kind == "tool_call" else "0"}
                  for s in sample.plan],
        "missing": [{"step": step, "tool": "0" if c.name in present else "1"}
                    for step, c in calls],
        "create": [{"step": step, "tool": skeletons[c.name]} for step, c in calls
                   if c.name not in present],
        "select": [{"step": step, "tool": c.name} for step, c in calls],
        "fill": [{"step": step, "tool": c.name, "param": dict(c.args)} for step, c in calls],
    }
    plan_text = "\n".join(s.step for s in sample.plan)
    return [GoldAnswer(marker=MARKERS["planning"][lang], text=plan_text, format="plan_text"),
            *(GoldAnswer(marker=MARKERS[STAGE_TASKS[stage]][lang], text=render_json(value),
                         format="json_steps") for stage, value in answers.items())]


__all__ = ["GUARD_SIMILARITY", "STAGES", "STAGE_TASKS", "AgentToolset", "PlanCreateUse",
           "agent_toolsets", "build_toolset", "by_step", "created_skeleton", "example_toolset",
           "flag", "gold_stage_answers", "question_key", "question_text", "sid", "stage_prompt",
           "to_call"]
