"""AppBench strategies as LangGraph workflows: ``hierarchical``, ``flat``, ``few_shot`` and
``execute_repair`` (benchmark ``appbench``, task ``plan``, every category).

Every strategy ends with the model's plan, one line per call (``App: [r1 = api(#k='v')]``,
prompts in :mod:`tooleval_agents.graphs.appbench.prompts`). The final answer is read with
:func:`tooleval_agents.evaluators.appbench.parse.parse_answer`; the state then holds

* ``prediction``: the answer's call lines in ``App: [...]`` form, one per line (the text the
  AppBench scorer reads); pieces that look like calls but do not parse are kept after them, so
  the scorer counts them; ``parse_error`` says when the answer holds no call at all;
* ``scratch["calls"]``: the parsed calls (dicts of :class:`~tooleval_agents.appbench.records.
  AppCall`), ``scratch["unparsed"]`` the pieces that did not parse.

Graphs::

    hierarchical:   select -> read_apps -> plan -> read_plan
    flat:           plan -> read_plan
    few_shot:       demos -> plan -> read_plan
    execute_repair: [select -> read_apps ->] plan -> read_plan -> execute
                    execute --(errors and round < max_rounds)--> repair -> read_plan -> execute
                    execute --(no errors, or max_rounds reached)--> END

``hierarchical``, ``flat`` and ``few_shot`` take ``-O prompts=official``: the upstream prompts
and chat layout instead of ours (:mod:`tooleval_agents.graphs.appbench.official`).

* ``hierarchical`` (the paper's main protocol): the model names the needed apps from one line per
  app (a JSON list, read tolerantly: known names anywhere in the answer, singular or any case);
  then plans with only those apps' APIs. An answer naming no known app falls back to all apps
  (``scratch["app_selection_fallback"]``), since a planning prompt without APIs cannot succeed.
* ``flat`` (paper §5.2): one planning prompt with all 15 apps.
* ``few_shot`` (paper Table 5; option ``k``, default 3): the flat prompt plus ``k`` solved
  samples in ``<example>`` blocks, chosen by the sample's *gold* app multiset, from the split
  (an oracle choice: the paper's training split was never published) or from ``-O pool=FILE``
  (:mod:`tooleval_agents.graphs.appbench.demos` gives the rule).
* ``execute_repair`` (ours; options ``max_rounds``, default 3, and ``base``, ``hierarchical``
  (default) or ``flat``): round 1 is the base strategy's plan; the plan runs on the AppBench stubs
  (:mod:`tooleval_agents.appbench.stubs`) *without the gold*, which return synthetic values and
  typed errors; when there are errors (or no parsable call), a repair prompt lists them and asks
  for the corrected full plan, until a round runs clean or ``max_rounds`` rounds have run. The
  trace holds every executed call of every round; ``scratch["rounds"]`` the per-round call count,
  errors and token usage (the difference of the summed usage across the round).
  Without the gold the stubs do not widen the catalog to the data's quirks: 36 gold MM plans
  (SGD train-split slots such as ``origin``, dependencies the gold leaves unresolved) fail there,
  so even a perfect first plan of those samples is sent to repair.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from langchain_core.messages import BaseMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from pydantic import Field as PydanticField

from tooleval_agents.appbench.catalog import load_catalog
from tooleval_agents.appbench.loaders import load_category
from tooleval_agents.appbench.records import AppBenchSample, AppCall, Catalog
from tooleval_agents.appbench.stubs import AppExecutor, ExecutionTrace
from tooleval_agents.contracts import GoldAnswer, Options, Split, Strategy, StrategyContext
from tooleval_agents.data.datadir import resolve_data_dir, source_of
from tooleval_agents.evaluators.appbench.parse import ParsedAnswer, gold_answer, parse_answer
from tooleval_agents.graphs.appbench.demos import (
    app_multiset,
    choose_demos,
    choose_pool_demos,
    load_pool,
)
from tooleval_agents.graphs.appbench.official import SAMPLING as OFFICIAL_SAMPLING
from tooleval_agents.graphs.appbench.official import (
    OfficialTexts,
    demo_answer,
    load_official,
    official_messages,
)
from tooleval_agents.graphs.appbench.prompts import (
    DEMO_TEMPLATE,
    DEMOS_INTRO,
    PLAN_MARKER,
    PLAN_RULES,
    PLAN_TEMPLATE,
    REPAIR_MARKER,
    REPAIR_TEMPLATE,
    SELECT_MARKER,
    SELECT_TEMPLATE,
    render_app_list,
    render_catalog,
)
from tooleval_agents.graphs.common import (
    NodeUpdate,
    build_messages,
    example_block,
    input_block,
    model_call_node,
)
from tooleval_agents.graphs.state import Usage, WorkflowState
from tooleval_agents.tool_faults import current_faults

_NO_USAGE: Usage = {"input_tokens": 0, "output_tokens": 0, "model_calls": 0}
_APP_TOKEN = re.compile(r"[A-Za-z]+")
_JSON_LIST = re.compile(r"\[[^\[\]]*\]", re.S)


# ---------------------------------------------------------------------------- inputs and gold


def instruction_of(inputs: dict[str, Any]) -> str:
    """The user instruction of an example's inputs (``{"input": ...}``), stripped."""
    text = inputs.get("input")
    if not isinstance(text, str):
        raise ValueError(f"appbench example inputs need an 'input' string, got {inputs!r:.200}")
    return text.strip()


def reference_sample(reference_outputs: dict[str, Any], text: str = "") -> AppBenchSample:
    """A sample from an example's reference outputs (the gold ``output`` object)."""
    return AppBenchSample.model_validate({"input": text, "output": reference_outputs})


def ordered_apps(calls: Sequence[AppCall]) -> list[str]:
    """The apps of a plan, each once, in order of first use."""
    return list(dict.fromkeys(c.app for c in calls if c.app))


def gold_app_list(sample: AppBenchSample) -> str:
    """The app-selection answer of a perfect model: a JSON list, apps in order of first use."""
    return json.dumps(ordered_apps(sample.calls))


# ---------------------------------------------------------------------------- reading answers


def _app_lookup(catalog: Catalog) -> dict[str, str]:
    names: dict[str, str] = {}
    for app in catalog.apps:
        low = app.lower()
        names[low] = app
        names[low.removesuffix("s")] = app  # "Restaurant", "Hotel", "Rent"...
    return names


def parse_app_list(text: str, catalog: Catalog) -> tuple[list[str], list[str]]:
    """``(apps, unknown names)`` of an app-selection answer, apps in the order named, each once.

    A JSON list of strings is read as such; otherwise every word is matched against the app
    names (case and a plural ``s`` ignored), so ``[Hotels, Weather]``, one name per line or
    prose all work.

    >>> from tooleval_agents.appbench.catalog import load_catalog
    >>> parse_app_list('["Hotels", "weather", "Spa"]', load_catalog())
    (['Hotels', 'Weather'], ['Spa'])
    >>> parse_app_list("You need the Restaurant app and Rents.", load_catalog())[0]
    ['Restaurants', 'Rents']
    """
    lookup = _app_lookup(catalog)
    names: list[str] | None = None
    for m in _JSON_LIST.finditer(text):
        try:
            value = json.loads(m.group(0))
        except ValueError:
            continue
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            names = value
            break
    apps: list[str] = []
    unknown: list[str] = []
    if names is not None:
        for name in names:
            app = lookup.get(name.strip().lower())
            if app is None:
                unknown.append(name)
            elif app not in apps:
                apps.append(app)
        return apps, unknown
    for word in _APP_TOKEN.findall(text):
        app = lookup.get(word.lower())
        if app is not None and app not in apps:
            apps.append(app)
    return apps, unknown


def prediction_text(parsed: ParsedAnswer) -> str:
    """The scored answer: the call lines in ``App: [...]`` form (as written), then the pieces
    that look like calls but do not parse."""
    return "\n".join([c.raw for c in parsed.calls] + parsed.unparsed)


def read_plan(text: str) -> NodeUpdate:
    """``prediction``, ``parse_error`` and the parsed calls (``scratch`` keys ``calls``,
    ``unparsed``) of a planning answer."""
    parsed = parse_answer(text)
    error = None if parsed.calls else (
        "no call line in the answer" + (f" ({len(parsed.unparsed)} unparsable)"
                                        if parsed.unparsed else ""))
    return {
        "prediction": prediction_text(parsed),
        "parse_error": error,
        "calls": [c.model_dump(mode="json") for c in parsed.calls],
        "unparsed": list(parsed.unparsed),
    }


# ---------------------------------------------------------------------------- prompts


class CatalogText:
    """The catalog rendered for prompts, each app subset rendered once (renders are cached:
    a run asks for the same few subsets hundreds of times)."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.app_list = render_app_list(catalog)
        """One line per app (the app-selection list)."""
        self._apis: dict[tuple[str, ...] | None, str] = {}

    def apis(self, apps: Sequence[str] | None = None) -> str:
        """The APIs of the given apps (all when ``None``), in catalog order."""
        key = None if apps is None else tuple(sorted(set(apps)))
        if key not in self._apis:
            self._apis[key] = render_catalog(self.catalog, key)
        return self._apis[key]


def select_prompt(text: CatalogText, instruction: str) -> str:
    """Hierarchical stage 1: pick the apps."""
    return SELECT_TEMPLATE.format(apps=text.app_list, input_block=input_block(instruction),
                                  marker=SELECT_MARKER)


def plan_prompt(text: CatalogText, instruction: str, apps: Sequence[str] | None = None,
                demos: Sequence[str] = ()) -> str:
    """The planning prompt with the given apps' APIs (all when ``None``) and demonstrations
    (already rendered text, each put in an ``<example>`` block)."""
    demo_text = DEMOS_INTRO.format(blocks="\n".join(example_block(d) for d in demos)) \
        if demos else ""
    return PLAN_TEMPLATE.format(catalog=text.apis(apps), rules=PLAN_RULES, demos=demo_text,
                                input_block=input_block(instruction), marker=PLAN_MARKER)


def _defused(text: str) -> str:
    # A model's own text goes back into a prompt: it must not open an <input> block.
    return text.replace("<input>", "<input_>").replace("</input>", "</input_>")


def repair_prompt(text: CatalogText, instruction: str, apps: Sequence[str] | None, plan: str,
                  errors: Sequence[str]) -> str:
    """The repair prompt: the previous plan and its execution errors, before the request."""
    return REPAIR_TEMPLATE.format(
        catalog=text.apis(apps), rules=PLAN_RULES,
        plan=_defused(plan) if plan.strip() else "(no call line could be read)",
        errors="\n".join(f"- {_defused(e)}" for e in errors),
        input_block=input_block(instruction), marker=REPAIR_MARKER)


def render_demo(sample: AppBenchSample) -> str:
    """A solved sample as a demonstration: the request and its gold call lines."""
    return DEMO_TEMPLATE.format(instruction=sample.input.strip(), calls=gold_answer(sample))


# ---------------------------------------------------------------------------- few-shot pool


# ---------------------------------------------------------------------------- shared nodes


def _scratch(state: WorkflowState, **updates: Any) -> dict[str, Any]:
    # ``scratch`` has no reducer: every node returns the whole dict, updated.
    return {**(state.get("scratch") or {}), **updates}


def _read_plan_node(state: WorkflowState) -> NodeUpdate:
    plan = read_plan(state["raw_outputs"][-1])
    calls, unparsed = plan.pop("calls"), plan.pop("unparsed")
    return {**plan, "trace": [], "scratch": _scratch(state, calls=calls, unparsed=unparsed)}


class PromptOptions(Options):
    """Options of the strategies the paper defines (``hierarchical``, ``flat``)."""

    prompts: Literal["ours", "official"] = "ours"
    """The prompt set: ``ours`` (our wording, :mod:`tooleval_agents.graphs.appbench.prompts`) or
    ``official`` (the upstream templates read from the fetched code;
    :mod:`tooleval_agents.graphs.appbench.official`)."""


class FewShotOptions(PromptOptions):
    """Options of ``few_shot``."""

    k: int = PydanticField(default=3, ge=0, strict=True)
    """Demonstrations shown before the instruction."""
    pool: str | None = None
    """A file built by ``tooleval build appbench`` (a train split) to draw demonstrations from,
    as the paper did; default: the split itself (an oracle choice, see the module docstring)."""


class ExecuteRepairOptions(Options):
    """Options of ``execute_repair``."""

    max_rounds: int = PydanticField(default=3, ge=1, strict=True)
    """Plans written at most (the first included)."""
    base: Literal["hierarchical", "flat"] = "hierarchical"
    """How the first plan is written."""


class AppBenchStrategy(Strategy):
    """Shared parts: the instruction is the ``<input>``; gold answers come from the output."""

    benchmark = "appbench"
    tasks: tuple[str, ...] | None = ("plan",)

    def __init__(self) -> None:
        self._official: dict[str, OfficialTexts] = {}
        """Split key -> the official texts of the latest build with ``prompts=official`` (the
        reference model's stage markers are taken from them)."""

    def input_key(self, split: Split, inputs: dict[str, Any]) -> str:
        return instruction_of(inputs)

    def gold_answers(self, split: Split, inputs: dict[str, Any],
                     reference_outputs: dict[str, Any]) -> list[GoldAnswer]:
        sample = reference_sample(reference_outputs, instruction_of(inputs))
        return [GoldAnswer(self._markers(split)[1], gold_answer(sample), "call_lines")]

    def model_defaults(self, options: dict[str, Any]) -> dict[str, Any]:
        return dict(OFFICIAL_SAMPLING) if options.get("prompts") == "official" else {}

    def _official_texts(self, ctx: StrategyContext) -> OfficialTexts | None:
        """The official texts when the run asks for them (remembered for the markers)."""
        # Rebound, not mutated: the runner builds on its own copy of the strategy.
        others = {k: v for k, v in self._official.items() if k != ctx.split.key}
        if getattr(self.read_options(ctx), "prompts", "ours") != "official":
            self._official = others
            return None
        texts = load_official(resolve_data_dir(ctx.data_dir))
        self._official = {**others, ctx.split.key: texts}
        return texts

    def _plan_then_end(self, graph: StateGraph[Any], ctx: StrategyContext,
                       messages: Callable[[WorkflowState], Any], *, after: str,
                       ) -> CompiledStateGraph[Any, Any, Any, Any]:
        """``after -> plan -> read_plan -> END`` added to ``graph``, compiled."""
        graph.add_node("plan", model_call_node(ctx.model, messages, name="plan"))
        graph.add_node("read_plan", _read_plan_node)
        graph.add_edge(after, "plan")
        graph.add_edge("plan", "read_plan")
        graph.add_edge("read_plan", END)
        return graph.compile(name=f"appbench-{self.name}-{ctx.split.subset}")

    def _markers(self, split: Split) -> tuple[str, str]:
        """Phrases only the selection and only the planning prompt contain."""
        texts = self._official.get(split.key)
        if texts is None:
            return SELECT_MARKER, PLAN_MARKER
        return texts.app_desc, texts.plan_template.split("{", 1)[0].strip()[:80]

    def _check(self, ctx: StrategyContext) -> CatalogText:
        if ctx.split.benchmark != "appbench":
            raise ValueError(f"strategy appbench/{self.name} cannot run split {ctx.split.key}")
        return CatalogText(load_catalog())

    @staticmethod
    def _add_selection(graph: StateGraph[Any], ctx: StrategyContext, text: CatalogText,
                       official: OfficialTexts | None = None) -> None:
        """Nodes ``select`` (model) and ``read_apps``: hierarchical stage 1."""

        def read_apps(state: WorkflowState) -> NodeUpdate:
            apps, unknown = parse_app_list(state["raw_outputs"][-1], text.catalog)
            fallback = not apps
            return {"scratch": _scratch(state, selected_apps=apps or list(text.catalog.apps),
                                        unknown_apps=unknown, app_selection_fallback=fallback)}

        def messages(state: WorkflowState) -> list[BaseMessage]:
            if official is not None:
                return official_messages(official.select_system, state["inputs"]["input"])
            return build_messages(select_prompt(text, instruction_of(state["inputs"])))

        graph.add_node("select", model_call_node(ctx.model, messages, name="select"))
        graph.add_node("read_apps", read_apps)
        graph.add_edge("select", "read_apps")


class Hierarchical(AppBenchStrategy):
    """Select apps, then plan with only those apps' APIs (the paper's main protocol)."""

    name = "hierarchical"
    options = PromptOptions

    def build(self, ctx: StrategyContext) -> CompiledStateGraph[Any, Any, Any, Any]:
        text = self._check(ctx)
        official = self._official_texts(ctx)
        graph = StateGraph(WorkflowState)
        self._add_selection(graph, ctx, text, official)

        def messages(state: WorkflowState) -> list[BaseMessage]:
            apps = state["scratch"]["selected_apps"]
            if official is not None:
                return official_messages(official.plan_system(apps), state["inputs"]["input"])
            return build_messages(plan_prompt(text, instruction_of(state["inputs"]), apps))

        graph.add_edge(START, "select")
        return self._plan_then_end(graph, ctx, messages, after="read_apps")

    def gold_answers(self, split: Split, inputs: dict[str, Any],
                     reference_outputs: dict[str, Any]) -> list[GoldAnswer]:
        sample = reference_sample(reference_outputs, instruction_of(inputs))
        return [GoldAnswer(self._markers(split)[0], gold_app_list(sample), "app_list"),
                *super().gold_answers(split, inputs, reference_outputs)]


class Flat(AppBenchStrategy):
    """One planning prompt with all 15 apps (paper §5.2)."""

    name = "flat"
    options = PromptOptions

    def build(self, ctx: StrategyContext) -> CompiledStateGraph[Any, Any, Any, Any]:
        text = self._check(ctx)
        official = self._official_texts(ctx)

        def messages(state: WorkflowState) -> list[BaseMessage]:
            if official is not None:
                return official_messages(official.plan_system(), state["inputs"]["input"])
            return build_messages(plan_prompt(text, instruction_of(state["inputs"])))

        return self._plan_then_end(StateGraph(WorkflowState), ctx, messages, after=START)


class FewShot(AppBenchStrategy):
    """The flat prompt with ``k`` demonstrations using the same apps (paper Table 5)."""

    name = "few_shot"
    options = FewShotOptions

    def build(self, ctx: StrategyContext) -> CompiledStateGraph[Any, Any, Any, Any]:
        text = self._check(ctx)
        options = self.read_options(ctx)
        k = options.k
        data_dir = resolve_data_dir(ctx.data_dir)
        split: list[AppBenchSample] = load_category(
            data_dir, ctx.split.subset, source_of(data_dir))  # type: ignore[arg-type]
        pool = split if options.pool is None else load_pool(Path(options.pool))

        def demos(state: WorkflowState) -> NodeUpdate:
            instruction = instruction_of(state["inputs"])
            chosen, source = (choose_demos(split, instruction, k) if options.pool is None
                              else choose_pool_demos(pool, split, instruction, k))
            return {"scratch": _scratch(state, demos=chosen, demo_source=source)}

        official = self._official_texts(ctx)

        def messages(state: WorkflowState) -> Any:
            if official is not None:
                demos = [(pool[i].input, demo_answer(pool[i].output.used_app,
                                                     pool[i].output.api_results))
                         for i in state["scratch"]["demos"]]
                return official_messages(official.plan_system(), state["inputs"]["input"],
                                         demos)
            shown = [render_demo(pool[i]) for i in state["scratch"]["demos"]]
            return build_messages(plan_prompt(text, instruction_of(state["inputs"]),
                                              demos=shown))

        graph = StateGraph(WorkflowState)
        graph.add_node("demos", demos)
        graph.add_edge(START, "demos")
        return self._plan_then_end(graph, ctx, messages, after="demos")


def _minus(a: Usage, b: Usage) -> Usage:
    return {"input_tokens": a["input_tokens"] - b["input_tokens"],
            "output_tokens": a["output_tokens"] - b["output_tokens"],
            "model_calls": a["model_calls"] - b["model_calls"]}


def plan_problems(calls: Sequence[AppCall], unparsed: Sequence[str],
                  trace: ExecutionTrace) -> list[str]:
    """The errors a repair prompt lists: unreadable pieces, an empty plan, failed calls."""
    problems = [f"this piece could not be read as a call line: {piece}" for piece in unparsed]
    if not calls:
        problems.append("the answer holds no call line of the form "
                        "App: [returned = api(#argument='value')] (App: the app's name)")
    for done in trace.calls:
        for error in done.errors:
            problems.append(f"call {done.index + 1} ({calls[done.index].raw}): "
                            f"{error.kind}: {error.message}")
    return problems


class ExecuteRepair(AppBenchStrategy):
    """Plan, run the plan on the stubs (no gold), show the errors, revise; up to
    ``max_rounds`` rounds (see the module docstring)."""

    name = "execute_repair"
    options = ExecuteRepairOptions

    def build(self, ctx: StrategyContext) -> CompiledStateGraph[Any, Any, Any, Any]:
        text = self._check(ctx)
        options = self.read_options(ctx)
        max_rounds, base = options.max_rounds, options.base
        # The workflow must not see the gold: the stubs answer with synthetic values.
        executor = AppExecutor(text.catalog)
        lookup = _app_lookup(text.catalog)

        def shown_apps(state: WorkflowState) -> list[str] | None:
            scratch = state.get("scratch") or {}
            if base == "flat":
                return None
            named = [lookup[c["app"].lower()] for c in scratch.get("calls", [])
                     if c["app"] and c["app"].lower() in lookup]
            return list(dict.fromkeys([*scratch["selected_apps"], *named]))

        def plan_messages(state: WorkflowState) -> Any:
            return build_messages(plan_prompt(text, instruction_of(state["inputs"]),
                                              shown_apps(state)))

        def repair_messages(state: WorkflowState) -> Any:
            scratch = state["scratch"]
            return build_messages(repair_prompt(
                text, instruction_of(state["inputs"]), shown_apps(state),
                state.get("prediction") or "", scratch["rounds"][-1]["problems"]))

        def execute(state: WorkflowState) -> NodeUpdate:
            scratch = state.get("scratch") or {}
            calls = [AppCall.model_validate(c) for c in scratch.get("calls", [])]
            trace = executor.execute(calls, current_faults())
            number = len(scratch.get("rounds", [])) + 1
            problems = plan_problems(calls, scratch.get("unparsed", []), trace)
            total = state.get("usage") or _NO_USAGE
            mark = scratch.get("usage_mark") or _NO_USAGE
            record = {"round": number, "calls": len(calls), "errors": len(trace.errors),
                      "problems": problems, "usage": _minus(total, mark)}
            return {
                "trace": [{"round": number, **c.model_dump(mode="json")} for c in trace.calls],
                "scratch": _scratch(state, rounds=[*scratch.get("rounds", []), record],
                                    usage_mark=dict(total)),
            }

        def next_step(state: WorkflowState) -> str:
            rounds = state["scratch"]["rounds"]
            return "repair" if rounds[-1]["problems"] and len(rounds) < max_rounds else END

        graph = StateGraph(WorkflowState)
        if base == "hierarchical":
            self._add_selection(graph, ctx, text)
            graph.add_edge(START, "select")
            graph.add_edge("read_apps", "plan")
        else:
            graph.add_edge(START, "plan")
        graph.add_node("plan", model_call_node(ctx.model, plan_messages, name="plan"))
        graph.add_node("repair", model_call_node(ctx.model, repair_messages, name="repair"))
        graph.add_node("read_plan", _read_plan_node)
        graph.add_node("execute", execute)
        graph.add_edge("plan", "read_plan")
        graph.add_edge("repair", "read_plan")
        graph.add_edge("read_plan", "execute")
        graph.add_conditional_edges("execute", next_step, ["repair", END])
        return graph.compile(name=f"appbench-{self.name}-{base}-{ctx.split.subset}")

    def gold_answers(self, split: Split, inputs: dict[str, Any],
                     reference_outputs: dict[str, Any]) -> list[GoldAnswer]:
        # Options are not known here: the app-selection answer is listed for either base.
        sample = reference_sample(reference_outputs, instruction_of(inputs))
        lines = gold_answer(sample)
        return [GoldAnswer(SELECT_MARKER, gold_app_list(sample), "app_list"),
                GoldAnswer(PLAN_MARKER, lines, "call_lines"),
                GoldAnswer(REPAIR_MARKER, lines, "call_lines")]


STRATEGIES: tuple[AppBenchStrategy, ...] = (Hierarchical(), Flat(), FewShot(), ExecuteRepair())
"""AppBench's text-prompting strategies (listed by its benchmark declaration)."""


__all__ = [
    "AppBenchStrategy",
    "CatalogText",
    "ExecuteRepair",
    "FewShot",
    "Flat",
    "Hierarchical",
    "app_multiset",
    "choose_demos",
    "gold_app_list",
    "instruction_of",
    "ordered_apps",
    "parse_app_list",
    "plan_problems",
    "plan_prompt",
    "prediction_text",
    "read_plan",
    "reference_sample",
    "render_demo",
    "repair_prompt",
    "select_prompt",
]
