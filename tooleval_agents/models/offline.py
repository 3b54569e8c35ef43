"""The offline models of ``--model reference`` / ``noisy-reference[:RATE]``, built from the
public API for a split, to play any target outside ``tooleval run`` -- e.g. the agent of your
own ``langsmith.evaluate`` -- with no key and no network.

Example::

    model = reference_model("appbench", subset="ss")      # plays the gold tool calls
    agent = create_agent(model, agent_io_for("appbench", subset="ss").tools({}))
"""

from __future__ import annotations

import logging
from pathlib import Path

from langchain_core.language_models import BaseChatModel

from tooleval_agents.contracts import ReferenceAnswers
from tooleval_agents.data.datadir import data_dir_or_samples
from tooleval_agents.data.langsmith_datasets import to_examples
from tooleval_agents.models.reference import AnswerKey, parse_offline_spec
from tooleval_agents.models.specs import resolve_model
from tooleval_agents.registry import (
    Benchmark,
    agent_strategy,
    get_benchmark,
    get_strategy,
    resolve_split,
)

log = logging.getLogger(__name__)


def reference_model(benchmark: str | Benchmark, *, task: str | None = None,
                    subset: str | None = None, model: str = "reference",
                    strategy: str | None = None,
                    data_dir: Path | str | None = None) -> BaseChatModel:
    """The offline ``model`` (``"reference"``: the gold answers; ``"noisy-reference:RATE"``:
    with seeded corruptions) for one split, its answer key read from the split's data.

    It answers the prompts of ``strategy`` -- by default the one an agent plays when the split
    has one (:func:`~tooleval_agents.agent_io_for`: with tools bound it plays the example's
    gold tool calls, whatever prompt the agent writes), else the split's default -- so a
    target built on it scores 100 on the strict metrics (``reference``), proving the wiring.
    ``data_dir``: as :func:`~tooleval_agents.run_experiment` reads it (the bundled samples
    when no data was named or fetched).

    Raises:
        ValueError: ``model`` is not an offline model, or the strategy cannot be played by one.
    """
    if parse_offline_spec(model) is None:
        raise ValueError(f"reference_model plays the offline models: model={model!r} is "
                         "not 'reference' or 'noisy-reference[:RATE]' (pass any other chat "
                         "model as it is)")
    bench = get_benchmark(benchmark) if isinstance(benchmark, str) else benchmark
    split = resolve_split(bench, task, subset)
    name = strategy or (agent_strategy(bench.name, split) if bench.agent_io(split) is not None
                        else bench.default_strategy(split))
    played = get_strategy(bench.name, name)
    if not isinstance(played, ReferenceAnswers):
        raise ValueError(f"strategy {name!r} declares no gold answers: the offline models "
                         "cannot play it")
    data, note = data_dir_or_samples(bench, [split], data_dir)
    if note:
        log.warning("%s", note)
    key = AnswerKey.build((played.input_key(split, e.inputs or {}),
                           played.gold_answers(split, e.inputs or {}, e.outputs or {}))
                          for e in to_examples(split, data))
    return resolve_model(model, answer_key=key)
