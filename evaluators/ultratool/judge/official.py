"""UltraTool's official judge prompts, read from the user's fetched ``evaluation/config.py``.

``--prompts official`` (scoring option ``prompts=official`` of ``planning`` and
``tool_creation``) judges with the templates the authors' evaluation used: the plan and tool
templates per language (``language_to_plan_eval_prompt`` / ``language_to_tool_eval_prompt``,
keys ``en`` and ``ch``), filled with ``str.format(question=..., reference=..., answer=...)``
and answered as text in the JSON layout they ask for; our tolerant parser reads the answer (it
knows the official score keys). The templates are taken as literals
(:mod:`tooleval_agents.data.upstream`), never copied or run.

What the templates are filled with: the question, the gold plan and the plan cut to start at
``1. `` for planning; for tool creation the step's description and both tools as JSON. The
evaluation script that filled the tool template is not published at the pinned commit: those
three fields are ours (the notes record that upstream showed only the first word of an English
step; we show the whole description).
"""

from __future__ import annotations

import ast
from pathlib import Path

from tooleval_agents.data.upstream import (
    UpstreamError,
    assigned,
    literal,
    only,
    parse_source,
    per_version,
    upstream_file,
)
from tooleval_agents.evaluators.ultratool.judge.prompts import JudgePrompt, JudgeTask
from tooleval_agents.ultratool.records import Lang

SOURCE = "ultratool"
CONFIG = "evaluation/config.py"
TABLES: dict[JudgeTask, str] = {"planning": "language_to_plan_eval_prompt",
                                "tool_creation": "language_to_tool_eval_prompt"}
"""The config's language -> template dicts, per judged task."""
LANGS: dict[Lang, str] = {"en": "en", "zh": "ch"}


def official_judge_prompts(data_dir: Path) -> JudgePrompt:
    """The official judge templates as a prompt set (see the module docstring)."""
    templates = _templates(upstream_file(SOURCE, CONFIG, data_dir))

    def prompt(task: JudgeTask, lang: Lang, *, question: str, reference: str, answer: str,
               structured: bool = False) -> str:
        return templates[(task, lang)].format(question=question, reference=reference,
                                              answer=answer)

    return prompt


@per_version
def _templates(path: Path) -> dict[tuple[JudgeTask, Lang], str]:
    tree = parse_source(path)
    constants = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
                 and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
                 for t in n.targets if isinstance(t, ast.Name)}
    out: dict[tuple[JudgeTask, Lang], str] = {}
    for task, table in TABLES.items():
        value = only(assigned(tree, table), f"{path}: {table}")
        if not isinstance(value, ast.Dict):
            raise UpstreamError(f"{path}: {table} is not a dict")
        entries = {literal(k): v for k, v in zip(value.keys, value.values, strict=True)
                   if k is not None}
        for lang, key in LANGS.items():
            entry = entries.get(key)
            name = entry.id if isinstance(entry, ast.Name) else None
            if name is None or name not in constants:
                raise UpstreamError(f"{path}: {table}[{key!r}] is not a template constant")
            out[(task, lang)] = constants[name]
    return out


__all__ = ["official_judge_prompts"]
