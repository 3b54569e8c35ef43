"""AppBench samples as fine-tuning conversations (``tooleval export appbench``): the project's
own prompts (:mod:`tooleval_agents.graphs.appbench.prompts`, as the ``hierarchical`` and ``flat``
strategies send them) as the user turn, the gold answer as the assistant turn."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Literal

from tooleval_agents.appbench.catalog import load_catalog
from tooleval_agents.appbench.records import AppBenchSample
from tooleval_agents.errors import ToolevalError
from tooleval_agents.evaluators.appbench.parse import gold_answer
from tooleval_agents.graphs.appbench.planning import (
    CatalogText,
    gold_app_list,
    ordered_apps,
    plan_prompt,
    select_prompt,
)

Prompt = Literal["hierarchical", "flat"]


def _chat(user: str, assistant: str) -> dict[str, Any]:
    """One conversation in the OpenAI / Hugging Face chat format."""
    return {"messages": [{"role": "user", "content": user},
                         {"role": "assistant", "content": assistant}]}


def chat_records(samples: Sequence[AppBenchSample], prompt: Prompt = "hierarchical", *,
                 selection: bool = True) -> Iterator[dict[str, Any]]:
    """Per sample: with ``hierarchical``, the app-selection step (when ``selection``) and the
    planning step with the gold apps' APIs; with ``flat``, the planning step with all apps.

    Raises:
        ToolevalError: a sample has no instruction (a ``--paths-only`` build).
    """
    text = CatalogText(load_catalog())
    for i, sample in enumerate(samples):
        instruction = sample.input.strip()
        if not instruction:
            raise ToolevalError(f"sample {i} has no instruction (built with --paths-only?): "
                                "nothing to fine-tune on")
        if prompt == "flat":
            yield _chat(plan_prompt(text, instruction), gold_answer(sample))
            continue
        if selection:
            yield _chat(select_prompt(text, instruction), gold_app_list(sample))
        yield _chat(plan_prompt(text, instruction, ordered_apps(sample.calls)),
                    gold_answer(sample))
