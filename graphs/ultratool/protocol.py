"""UltraTool's own protocol as a workflow: one prompt with a one-shot demonstration per task.

Strategy ``one_shot`` (benchmark ``ultratool``, all six tasks) follows the paper (Appendix
B.6): the task statement with its output format, the task's demonstration from
``example/<task>.json`` *in the sample's language*, then the example's input (question, plan and
toolset as the task has them). The graph is ``prompt -> model -> parse``:

* ``prompt`` renders the prompt (text in :mod:`tooleval_agents.graphs.ultratool.prompts`; with
  ``-O prompts=official`` the upstream one, :mod:`tooleval_agents.graphs.ultratool.official`) into
  ``scratch["prompt"]``;
* ``model`` asks the chat model once (one ``raw_outputs`` entry, usage);
* ``parse`` reads the answer with :mod:`tooleval_agents.evaluators.parsing`: for ``planning`` the
  prediction is the answer cut to start at ``1. `` (what the official judge sees); for the other
  tasks the parsed list of step dicts, or ``[]`` with ``parse_error`` set when no list can be read
  (the example then scores 0, it is never dropped).

Prompt layout (English; the Chinese one has the same parts)::

    <task statement and output format>

    <format reminder>

    Here is a worked example ...
    <example>
    Plan: [...]            <- inputs as one-line JSON, non-ASCII kept
    Toolset: [...]
    Output: [...]
    </example>

    Now it is your turn ...
    <input>
    Plan: [...]
    Toolset: [...]
    </input>
    Output:

Everything the answer depends on (question, plan *and* toolset) is inside ``<input>``, so two
examples with the same plan but different toolsets are told apart by the ``reference`` model.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal, cast

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from tooleval_agents.contracts import GoldAnswer, Options, Split, Strategy, StrategyContext
from tooleval_agents.data.datadir import resolve_data_dir
from tooleval_agents.data.inputs import note_file
from tooleval_agents.data.jsonio import load_json
from tooleval_agents.errors import DatasetMissingError
from tooleval_agents.evaluators.parsing import ParseFailure, clean_plan_text, parse_list, parse_plan
from tooleval_agents.graphs.common import (
    NodeUpdate,
    build_messages,
    example_block,
    input_block,
    model_call_node,
    render_json,
)
from tooleval_agents.graphs.state import WorkflowState
from tooleval_agents.graphs.ultratool.official import (
    DEMO_LANG,
    SAMPLING,
    OfficialTemplates,
    load_templates,
    official_prompt,
    sample_key,
    template_key,
    upstream_samples,
)
from tooleval_agents.graphs.ultratool.prompts import (
    FIELDS,
    INSTRUCTIONS,
    LABELS,
    MARKERS,
    Labels,
    PromptLang,
)
from tooleval_agents.registry import get_benchmark
from tooleval_agents.ultratool.loaders import example_path, load_example
from tooleval_agents.ultratool.records import TASKS, UltraToolTask


def task_and_lang(split: Split) -> tuple[UltraToolTask, PromptLang]:
    """The UltraTool task and prompt language of a split; ``ValueError`` for other splits."""
    if split.benchmark != "ultratool" or split.task not in TASKS:
        raise ValueError(f"the ultratool one-shot protocol has no prompt for split {split.key}")
    if split.subset not in LABELS:
        raise ValueError(f"ultratool split {split.key}: unknown language {split.subset!r}")
    return cast(UltraToolTask, split.task), cast(PromptLang, split.subset)


def _labelled(label: str, value: str) -> str:
    if "\n" in value:
        return f"{label}\n{value}"
    return label + ("" if label.endswith("：") else " ") + value


def _field_text(value: Any) -> str:
    # Most questions end with a stray newline upstream: trimmed, as it carries no meaning.
    return value.strip() if isinstance(value, str) else render_json(value)


def render_input(task: UltraToolTask, lang: PromptLang, inputs: dict[str, Any]) -> str:
    """An example's input as the prompt shows it: the task's fields, labelled, one per line."""
    labels = LABELS[lang]
    lines: list[str] = []
    for key, field in FIELDS[task]:
        if key not in inputs or inputs[key] is None:
            raise ValueError(f"ultratool {task} example inputs lack {key!r} "
                             f"(have {sorted(inputs)})")
        lines.append(_labelled(getattr(labels, field), _field_text(inputs[key])))
    return "\n".join(lines)


def gold_text(task: UltraToolTask, reference: Any) -> str:
    """The answer a perfect model writes: the plan text, or the reference list as JSON."""
    if task == "planning":
        if not isinstance(reference, str):
            raise ValueError(f"planning reference must be text, got {type(reference).__name__}")
        return reference
    return render_json(reference)


def prompt_header(task: UltraToolTask, lang: PromptLang, demo: dict[str, Any]) -> str:
    """The part of the prompt shared by every example: task statement and demonstration."""
    labels: Labels = LABELS[lang]
    shown = render_input(task, lang, demo) + "\n" + _labelled(
        labels.output, gold_text(task, demo["reference"]))
    return "\n\n".join([INSTRUCTIONS[task][lang], labels.strict,
                        labels.example_intro + "\n" + example_block(shown)])


def render_prompt(header: str, task: UltraToolTask, lang: PromptLang,
                  inputs: dict[str, Any]) -> str:
    """The full prompt for one example (its input last, inside ``<input>`` tags)."""
    labels = LABELS[lang]
    return (f"{header}\n\n{labels.begin}\n{input_block(render_input(task, lang, inputs))}\n"
            f"{labels.output}")


def parse_model_answer(task: UltraToolTask, text: str) -> NodeUpdate:
    """``prediction`` and ``parse_error`` from a model answer (see the module docstring)."""
    if task == "planning":
        plan = parse_plan(text)
        error = f"{plan.kind}: {plan.message}" if isinstance(plan, ParseFailure) else None
        return {"prediction": clean_plan_text(text), "parse_error": error}
    parsed = parse_list(text)
    if isinstance(parsed, ParseFailure):
        return {"prediction": [], "parse_error": f"{parsed.kind}: {parsed.message}"}
    return {"prediction": parsed.value, "parse_error": None}


class OneShotOptions(Options):
    """Options of ``one_shot``."""

    prompts: Literal["ours", "official"] = "ours"
    """The prompt set: ``ours`` (our wording, JSON inputs) or ``official`` (the upstream
    templates read from the fetched ``inference/utils.py``;
    :mod:`tooleval_agents.graphs.ultratool.official`)."""


@dataclass(frozen=True)
class _Official:
    """What an official-prompt workflow reads once: templates, demonstration, raw samples."""

    templates: OfficialTemplates
    demo: dict[str, Any]
    samples: dict[str, dict[str, Any]]

    def sample(self, inputs: dict[str, Any]) -> dict[str, Any]:
        # The upstream JSON of the sample (its key order); inputs from elsewhere as they are.
        return self.samples.get(sample_key(inputs), inputs)

    def prompt(self, task: UltraToolTask, inputs: dict[str, Any]) -> str:
        return official_prompt(self.templates, task, self.sample(inputs), self.demo)

    def user_part(self, inputs: dict[str, Any]) -> str:
        sample = self.sample(inputs)
        return self.templates.inputs[template_key(sample)].format_map(sample)


def _load_official(split: Split, task: UltraToolTask, lang: PromptLang,
                   data_dir: Path) -> _Official:
    demo = example_path(data_dir, task, DEMO_LANG)
    if not demo.is_file():
        raise DatasetMissingError("ultratool", demo, data_dir)
    load_example(data_dir, task, DEMO_LANG)  # a damaged demonstration: one line naming it
    located = get_benchmark(split.benchmark).locate(split, data_dir).path
    note_file(located, data_dir)  # the prompts show its samples as its JSON has them
    return _Official(templates=load_templates(data_dir, lang), demo=load_json(demo),
                     samples=upstream_samples(located))


class UltraToolOneShot(Strategy):
    """The paper's protocol: one prompt with a one-shot demonstration, in our words or in the
    official ones (``-O prompts=official``)."""

    benchmark = "ultratool"
    name = "one_shot"
    tasks: tuple[str, ...] | None = TASKS
    options = OneShotOptions

    def __init__(self) -> None:
        self._official: dict[str, _Official] = {}
        """Split key -> the official prompt set of the latest build with it (the reference
        model's answer key is stated after the build, from the same texts)."""

    def build(self, ctx: StrategyContext) -> CompiledStateGraph[Any, Any, Any, Any]:
        task, lang = task_and_lang(ctx.split)
        data_dir = resolve_data_dir(ctx.data_dir)
        if self.read_options(ctx).prompts == "official":
            official = _load_official(ctx.split, task, lang, data_dir)
            # Rebound, not mutated: the runner builds on its own copy of the strategy.
            self._official = {**self._official, ctx.split.key: official}
            render = partial(official.prompt, task)
        else:
            self._official = {k: v for k, v in self._official.items() if k != ctx.split.key}
            header = prompt_header(task, lang, load_example(data_dir, task, lang).official())
            render = partial(render_prompt, header, task, lang)

        def prompt(state: WorkflowState) -> NodeUpdate:
            return {"scratch": {"prompt": render(state["inputs"])}}

        def parse(state: WorkflowState) -> NodeUpdate:
            return parse_model_answer(task, state["raw_outputs"][-1])

        graph = StateGraph(WorkflowState)
        graph.add_node("prompt", prompt)
        graph.add_node("model", model_call_node(
            ctx.model, lambda state: build_messages(state["scratch"]["prompt"])))
        graph.add_node("parse", parse)
        graph.add_edge(START, "prompt")
        graph.add_edge("prompt", "model")
        graph.add_edge("model", "parse")
        graph.add_edge("parse", END)
        return graph.compile(name=f"ultratool-{self.name}-{task}-{lang}")

    def model_defaults(self, options: dict[str, Any]) -> dict[str, Any]:
        return dict(SAMPLING) if options.get("prompts") == "official" else {}

    def input_key(self, split: Split, inputs: dict[str, Any]) -> str:
        task, lang = task_and_lang(split)
        official = self._official.get(split.key)
        return official.user_part(inputs) if official else render_input(task, lang, inputs)

    def gold_answers(self, split: Split, inputs: dict[str, Any],
                     reference_outputs: dict[str, Any]) -> list[GoldAnswer]:
        task, lang = task_and_lang(split)
        # One prompt per example: the official one needs no marker (we may not add one).
        marker = "" if split.key in self._official else MARKERS[task][lang]
        return [GoldAnswer(marker=marker,
                           text=gold_text(task, reference_outputs["reference"]),
                           format="plan_text" if task == "planning" else "json_steps")]


__all__ = ["OneShotOptions", "UltraToolOneShot", "gold_text", "parse_model_answer",
           "prompt_header", "render_input", "render_prompt", "task_and_lang"]
