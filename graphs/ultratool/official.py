"""UltraTool's official inference prompts, read from the user's fetched ``inference/utils.py``.

``-O prompts=official`` (or ``--prompts official``) on ``one_shot`` builds each prompt as the
upstream ``generate_prompt_<language>("few_shot_cot", task, sample, example)`` did: the task
statement (``USER_PROMPT``), the demonstration and the sample filled into the templates
(``EXAMPLE_DICT``/``PROMPT_DICT``) with ``str.format_map`` -- so lists and dicts appear as
Python ``str()`` renderings, as upstream showed them -- joined by the function's own
concatenation. The texts are taken from the file as literals (:mod:`tooleval_agents.data.upstream`);
the logic that picks a template is restated here.

Upstream's choices, reproduced on purpose:

* the demonstration is the *English* ``example/<task>.json`` for both languages (the inference
  script reads the English example folder for Chinese runs too);
* ``planning`` uses the plan template (its input labelled as a plan), because the function
  compares the task name with ``'plan'``, which no task is called;
* sampling: temperature 0 and top_p 1 (the script's defaults), unless ``--model-arg`` says
  otherwise.

Deliberate deviations: the prompt goes to a chat model as one user message (upstream wrapped it
in each open model's own chat markup, e.g. ``[INST] ... [/INST]``, and fed it as raw text); the
answer is read by our robust parser (``--scoring paper`` still scores as the official code).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooleval_agents.data.jsonio import iter_jsonl, parse_json
from tooleval_agents.data.upstream import (
    Name,
    UpstreamError,
    assigned,
    branch,
    concatenation,
    function,
    join,
    literal,
    only,
    parse_source,
    per_version,
    upstream_file,
)
from tooleval_agents.errors import DataFormatError
from tooleval_agents.graphs.ultratool.prompts import PromptLang
from tooleval_agents.ultratool.records import UltraToolTask

SOURCE = "ultratool"
UTILS = "inference/utils.py"
FUNCTIONS: dict[PromptLang, str] = {"en": "generate_prompt_english",
                                    "zh": "generate_prompt_chinese"}
DEMO_LANG: PromptLang = "en"
"""The language of the demonstration upstream showed for every language."""
INPUT_FIELDS = ("question", "input", "toolset")
"""The fields a sample's prompt shows."""
SAMPLING = {"temperature": 0.0, "top_p": 1.0}
"""The inference script's defaults."""


@dataclass(frozen=True)
class OfficialTemplates:
    """One language's templates as ``inference/utils.py`` holds them."""

    instructions: dict[str, str]
    """Task -> task statement (``USER_PROMPT``)."""
    inputs: dict[str, str]
    """Template key -> the sample's template (``PROMPT_DICT``)."""
    examples: dict[str, str]
    """Template key -> the demonstration's template (``EXAMPLE_DICT``)."""
    frame: tuple[str | Name, ...]
    """The few-shot prompt's concatenation (names ``user_prompt``, ``example``, ``user``)."""


def load_templates(data_dir: Path, lang: PromptLang) -> OfficialTemplates:
    """The official templates of ``lang`` from the fetched, sha-checked upstream file."""
    return _read(upstream_file(SOURCE, UTILS, data_dir), lang)


@per_version
def _read(path: Path, lang: PromptLang) -> OfficialTemplates:
    fn = function(parse_source(path), FUNCTIONS[lang])
    tables = {}
    for name in ("USER_PROMPT", "PROMPT_DICT", "EXAMPLE_DICT"):
        tables[name] = literal(only(assigned(fn, name), f"{path}: {FUNCTIONS[lang]}.{name}"))
    frame = only([v for stmt in branch(fn, "method", "few_shot_cot")
                  for v in assigned(stmt, "content")], f"{path}: the few-shot prompt")
    return OfficialTemplates(instructions=tables["USER_PROMPT"], inputs=tables["PROMPT_DICT"],
                             examples=tables["EXAMPLE_DICT"],
                             frame=tuple(concatenation(frame)))


@per_version
def upstream_samples(path: Path) -> dict[str, dict[str, Any]]:
    """The samples of a split file as its JSON has them (key order kept), by
    :func:`sample_key`. Our records normalise the order of a tool's keys; ``str()`` shows it."""
    found: dict[str, dict[str, Any]] = {}
    for number, text in iter_jsonl(path):
        try:
            sample = parse_json(text)
        except json.JSONDecodeError as exc:
            raise DataFormatError(path, f"not JSON: {exc.msg}", line=number) from exc
        if isinstance(sample, dict):
            found.setdefault(sample_key(sample), sample)
    return found


def sample_key(sample: dict[str, Any]) -> str:
    """What identifies a sample's input, whatever the order of its keys."""
    return json.dumps({k: sample.get(k) for k in INPUT_FIELDS if k in sample},
                      sort_keys=True, ensure_ascii=False)


def template_key(sample: dict[str, Any]) -> str:
    """The template upstream picks for a sample: by the fields it has (``planning`` falls to
    the plan template; see the module docstring)."""
    if sample.get("question", "") != "" and sample.get("toolset", "") != "":
        return "prompt_input_tool"
    if sample.get("toolset", "") != "":
        return "prompt_input"
    return "prompt_no_input"


def official_prompt(templates: OfficialTemplates, task: UltraToolTask, sample: dict[str, Any],
                    demo: dict[str, Any]) -> str:
    """The prompt of one sample, as upstream built it (``sample`` and ``demo`` as the upstream
    JSON has them: key order and value types matter, ``str()`` shows them)."""
    key = template_key(sample)
    try:
        return join(list(templates.frame), {
            "user_prompt": templates.instructions[task],
            "example": templates.examples[key].format_map(demo),
            "user": templates.inputs[key].format_map(sample)})
    except KeyError as exc:
        raise UpstreamError(f"the official {task} prompt needs {exc} (template {key!r})") from exc


__all__ = ["DEMO_LANG", "INPUT_FIELDS", "SAMPLING", "OfficialTemplates", "load_templates",
           "official_prompt", "sample_key", "template_key", "upstream_samples"]
