"""The UltraTool construction workflows (paper §2.2-2.3), one model call per stage, every answer
checked before the next stage uses it.

*Expansion* of a seed query (§2.2, Figs. 16-17)::

    generalise   2 rewrites of the same kind, other details
    complicate   2 harder versions (extra actions or constraints)

*Annotation* of one query into a ``test.json`` line (§2.3, Figs. 18-23)::

    plan       query -> numbered tree plan, independent of any tool
    create     skeletons for the needs the initial toolset does not cover
    refine     the plan made atomic, (Kind: value) annotations, given the whole toolset
    annotate   "null" / tool-free / a call per step, <...> for earlier results
    check      the sample validates and every call runs on the simulated tools with every
               reference resolved (no model call; :func:`~tooleval_agents.ultratool.
               construction.sample_problems`)

A stage whose answer is unusable (no numbered plan, not JSON, a bad skeleton, an unknown tool...)
ends the run with ``failure = {status: "failed", stage, reason}``; an exception from the model
(after the model wrapper's retries) with ``status: "error"``. Nothing raises out of the graph
but interrupts. The tool merge across samples is in
:mod:`tooleval_agents.graphs.ultratool.build_run`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypedDict

from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from tooleval_agents.data.jsonio import parse_json
from tooleval_agents.evaluators.parsing import (
    ParseFailure,
    parse_list,
    parse_plan,
    without_reasoning,
)
from tooleval_agents.graphs.common import answer_text, build_messages, input_block, render_json
from tooleval_agents.graphs.ultratool.build_prompts import TOOL_FREE, BuildStage, PromptLang, render
from tooleval_agents.ultratool.calls import parse_call
from tooleval_agents.ultratool.construction import sample_problems
from tooleval_agents.ultratool.records import PARENT
from tooleval_agents.ultratool.records import TOOL_FREE as TOOL_FREE_LABELS
from tooleval_agents.ultratool.stubs import validate_skeleton

REWRITES = 2
"""Rewrites asked per expansion stage (the paper's prompts ask for 2)."""
_TOOL_FREE_WORDS = {t.casefold() for t in (*TOOL_FREE_LABELS, "no tool needed", "none", "无需工具")}


class StageFailure(Exception):
    """A stage's answer is unusable (recorded as ``failed``, never raised out of a graph)."""


class BuildState(TypedDict, total=False):
    """State of both workflows."""

    query: str
    """The query being expanded or annotated."""
    domain: str
    """Its domain label."""
    tools: list[dict[str, Any]]
    """Initial toolset (annotation: extended by ``create``)."""
    rewrites: dict[str, str]
    """Expansion: variant name -> rewritten query."""
    plan: list[str]
    """Plan steps, ``"1. text"`` / ``"1.1 text"``."""
    created: list[dict[str, Any]]
    """Skeletons the model created."""
    sample: dict[str, Any]
    """The finished ``test.json`` line."""
    failure: dict[str, Any] | None
    """``{status, stage, reason}`` when the run stopped early."""
    answers: dict[str, str]
    """Raw answer of each stage (kept for inspection)."""


def parse_object(text: str) -> dict[str, Any]:
    """A JSON object from a model answer (fences, reasoning and text around it ignored).

    >>> parse_object('Sure: ```json\\n{"a": 1}\\n```')
    {'a': 1}
    """
    # The first "{" to the last "}": a code fence or prose around them is left out with no
    # search for the fence itself (``\s*```$`` retried every blank of a long run).
    body = without_reasoning(text)
    start, end = body.find("{"), body.rfind("}")
    if start == -1 or end < start:
        raise StageFailure("no JSON object in the answer")
    try:
        value = parse_json(body[start:end + 1])
    except json.JSONDecodeError as exc:
        raise StageFailure(f"invalid JSON object ({exc.msg})") from None
    if not isinstance(value, dict):
        raise StageFailure("the answer is not a JSON object")
    return value


def _list(text: str) -> list[Any]:
    parsed = parse_list(text)
    if isinstance(parsed, ParseFailure):
        raise StageFailure(f"no JSON list in the answer ({parsed.message})")
    return parsed.value


def normalise_steps(lines: list[str]) -> list[str]:
    """Plan lines as ``test.json`` writes them (``1. text``, ``1.1 text``), numbering checked.

    Raises:
        StageFailure: no numbered step, a broken numbering, or an unnumbered line.
    """
    parsed = parse_plan("\n".join(line.strip() for line in lines if line.strip()))
    if isinstance(parsed, ParseFailure):
        raise StageFailure(parsed.message)
    if parsed.unnumbered_lines:
        raise StageFailure(f"{parsed.unnumbered_lines} plan line(s) without a step number")
    if parsed.numbering_problems:
        raise StageFailure("broken step numbering: " + "; ".join(parsed.numbering_problems[:3]))
    if len(parsed.steps) < 2:
        raise StageFailure("the plan has fewer than 2 steps")
    return [".".join(map(str, s.number)) + ("." if len(s.number) == 1 else "") + " " + s.text
            for s in parsed.steps]


def _ids(steps: list[str]) -> list[str]:
    return [s.split(" ", 1)[0].rstrip(".") for s in steps]


def _parents(steps: list[str]) -> set[int]:
    ids = _ids(steps)
    return {i for i, sid in enumerate(ids) if any(o.startswith(sid + ".") for o in ids[i + 1:])}


def read_created(text: str, available: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The new skeletons of a ``create`` answer (a tool named like an available one is left
    out: the available one serves)."""
    items = _list(text)
    names = {t["name"] for t in available}
    out: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        problems = validate_skeleton(item)
        if problems:
            raise StageFailure(f"created tool {i + 1}: {problems[0]}")
        if item["name"] not in names:
            names.add(item["name"])
            out.append({k: item[k] for k in ("name", "description", "arguments", "results")})
    return out


def read_annotation(text: str, steps: list[str], tools: list[dict[str, Any]],
                    lang: PromptLang) -> list[dict[str, str]]:
    """The ``{step, tool}`` plan of an ``annotate`` answer: every plan step, in plan order,
    matched by step number (the first answer item with the number), parents ``"null"``."""
    items = [i for i in _list(text) if isinstance(i, dict)]
    by_id: dict[str, Any] = {}
    for item in items:
        if isinstance(item.get("step"), str):
            by_id.setdefault(item["step"].strip().split(" ", 1)[0].rstrip("."), item.get("tool"))
    parents = _parents(steps)
    known = {t["name"]: t for t in tools}
    plan: list[dict[str, str]] = []
    for i, (step, sid) in enumerate(zip(steps, _ids(steps), strict=True)):
        if sid not in by_id:
            raise StageFailure(f"step {sid} has no tool annotation")
        tool = by_id[sid]
        word = str(tool).strip().casefold() if tool is not None else "null"
        if i in parents:
            if word not in ("null", *_TOOL_FREE_WORDS):
                raise StageFailure(f"step {sid} has sub-steps but calls {tool!r}")
            plan.append({"step": step, "tool": PARENT})
        elif word in _TOOL_FREE_WORDS or word == "null":
            plan.append({"step": step, "tool": TOOL_FREE[lang]})
        else:
            call = parse_call(str(tool))
            if call is None:
                raise StageFailure(f"step {sid}: not a call of the form name(arg=value): "
                                   f"{str(tool)[:80]!r}")
            if call.name not in known:
                raise StageFailure(f"step {sid} calls {call.name!r}, which is not in the toolset")
            plan.append({"step": step, "tool": str(tool).strip()})
    return plan


def _plan_text(steps: list[str]) -> str:
    return "\n".join(steps)


Node = Any
"""An async node function (LangGraph's node protocol names its parameter ``state``, which a
``Callable`` type cannot say)."""


class _Stages:
    """The stage nodes of one model and language."""

    def __init__(self, model: BaseChatModel, lang: PromptLang) -> None:
        self.model = model
        self.lang = lang

    async def ask(self, stage: BuildStage, state: BuildState, **context: str) -> str:
        prompt = render(stage, self.lang, input=input_block(state["query"]), **context)
        return answer_text(await self.model.ainvoke(build_messages(prompt)))

    def node(self, stage: BuildStage, read: Callable[[BuildState, str], dict[str, Any]],
             **context_of: Callable[[BuildState], str]) -> Node:
        """A node asking ``stage`` and reading the answer with ``read``; failures recorded."""
        async def run(state: BuildState) -> dict[str, Any]:
            try:
                answer = await self.ask(stage, state,
                                        **{k: f(state) for k, f in context_of.items()})
            except Exception as exc:  # the model wrapper has retried; a re-run retries again
                first = (str(exc).strip().splitlines() or [""])[0][:300]
                return {"failure": {"status": "error", "stage": stage,
                                    "reason": f"{type(exc).__name__}: {first}"}}
            answers = {**state.get("answers", {}), stage: answer}
            try:
                return {**read(state, answer), "answers": answers}
            except StageFailure as exc:
                return {"answers": answers,
                        "failure": {"status": "failed", "stage": stage, "reason": str(exc)}}
        return run


def _rewrites(kind: str) -> Callable[[BuildState, str], dict[str, Any]]:
    def read(state: BuildState, answer: str) -> dict[str, Any]:
        found = parse_object(answer).get("rewrites")
        if not isinstance(found, list) or not found:
            raise StageFailure('no "rewrites" list in the answer')
        texts = [t.strip() for t in found if isinstance(t, str) and t.strip()]
        if len(texts) != len(found):
            raise StageFailure("a rewrite is not a non-empty string")
        fresh = [t for t in dict.fromkeys(texts) if t != state["query"].strip()][:REWRITES]
        if not fresh:
            raise StageFailure("the rewrites repeat the query")
        named = {f"{kind}-{i + 1}": t for i, t in enumerate(fresh)}
        return {"rewrites": {**state.get("rewrites", {}), **named}}
    return read


def _route(next_node: str) -> Callable[[BuildState], str]:
    return lambda state: END if state.get("failure") else next_node


def expansion_graph(model: BaseChatModel,
                    lang: PromptLang) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Seed query -> ``rewrites`` (generalised-1/2, complicated-1/2)."""
    stages = _Stages(model, lang)
    graph = StateGraph(BuildState)
    graph.add_node("generalise", stages.node("generalise", _rewrites("generalised")))
    graph.add_node("complicate", stages.node("complicate", _rewrites("complicated")))
    graph.add_edge(START, "generalise")
    graph.add_conditional_edges("generalise", _route("complicate"), ["complicate", END])
    graph.add_edge("complicate", END)
    return graph.compile(name=f"ultratool-build-expand-{lang}")


def annotation_graph(model: BaseChatModel,
                     lang: PromptLang) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Query (+ initial ``tools``) -> ``sample``, a checked ``test.json`` line."""
    stages = _Stages(model, lang)

    def plan(state: BuildState, answer: str) -> dict[str, Any]:
        return {"plan": normalise_steps(answer.splitlines())}

    def create(state: BuildState, answer: str) -> dict[str, Any]:
        created = read_created(answer, state.get("tools", []))
        return {"created": created, "tools": [*state.get("tools", []), *created]}

    def refine(state: BuildState, answer: str) -> dict[str, Any]:
        items = _list(answer)
        lines = [i.get("step") if isinstance(i, dict) else i for i in items]
        if not all(isinstance(line, str) for line in lines):
            raise StageFailure('each refined step must be {"step": "..."}')
        return {"plan": normalise_steps([str(line) for line in lines])}

    def annotate(state: BuildState, answer: str) -> dict[str, Any]:
        steps = read_annotation(answer, state["plan"], state["tools"], lang)
        called = [parse_call(s["tool"]) for s in steps if s["tool"] != PARENT
                  and s["tool"] != TOOL_FREE[lang]]
        order = list(dict.fromkeys(c.name for c in called if c is not None))
        by_name = {t["name"]: t for t in state["tools"]}
        return {"sample": {"question": state["query"], "plan": steps,
                           "tools": [by_name[n] for n in order], "domain": state["domain"]}}

    async def check(state: BuildState) -> dict[str, Any]:
        problems = sample_problems(state["sample"])
        if not problems:
            return {}
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        return {"failure": {"status": "failed", "stage": "check", "reason": problems[0] + more}}

    def tools_json(state: BuildState) -> str:
        return render_json(state.get("tools", []))

    def plan_lines(state: BuildState) -> str:
        return _plan_text(state["plan"])

    graph = StateGraph(BuildState)
    graph.add_node("plan", stages.node("plan", plan))
    graph.add_node("create", stages.node("create", create, plan=plan_lines, tools=tools_json))
    graph.add_node("refine", stages.node("refine", refine, plan=plan_lines, tools=tools_json))
    graph.add_node("annotate", stages.node("annotate", annotate, plan=plan_lines,
                                           tools=tools_json))
    graph.add_node("check", check)
    graph.add_edge(START, "plan")
    for here, there in (("plan", "create"), ("create", "refine"), ("refine", "annotate"),
                        ("annotate", "check")):
        graph.add_conditional_edges(here, _route(there), [there, END])
    graph.add_edge("check", END)
    return graph.compile(name=f"ultratool-build-annotate-{lang}")


async def name_merged_tool(model: BaseChatModel, lang: PromptLang,
                           tools: list[dict[str, Any]]) -> tuple[str, str]:
    """The model's ``(name, description)`` for a group of similar tools.

    Raises:
        StageFailure: the answer is no JSON object with an identifier name and a description.
    """
    prompt = render("merge", lang, input=input_block(render_json(tools)))
    answer = answer_text(await model.ainvoke(build_messages(prompt)))
    obj = parse_object(answer)
    name, description = obj.get("name"), obj.get("description")
    if not isinstance(name, str) or not name.isidentifier():
        raise StageFailure(f"merged tool name {name!r} is not an identifier")
    if not isinstance(description, str) or not description.strip():
        raise StageFailure("the merged tool has no description")
    return name, description.strip()
