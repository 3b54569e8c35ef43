"""Finished run directories made without a run: every example answered by a function, scored
through the registry with the benchmark's own scorer and written with :class:`RunDir`. The
comparison, report and re-scoring tests depend only on the run-directory contract this way, not
on the runner.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Container
from pathlib import Path
from typing import Any

from tooleval_agents.appbench.records import AppBenchOutput, AppBenchSample
from tooleval_agents.data.langsmith_datasets import to_examples
from tooleval_agents.evaluators.appbench.parse import gold_answer
from tooleval_agents.models.corruptions import corrupt
from tooleval_agents.registry import get_benchmark
from tooleval_agents.results.records import DatasetRef, ExampleResult, RunConfig, Usage
from tooleval_agents.results.rundir import RunDir, RunSummary, dataset_hash

Answer = Callable[[Any, int], str | None]


def appbench_gold(example: Any, index: int) -> str:
    sample = AppBenchSample(input=example.inputs["input"],
                            output=AppBenchOutput.model_validate(example.outputs))
    return gold_answer(sample)


def appbench_noisy(rate: float) -> Answer:
    def answer(example: Any, index: int) -> str:
        return corrupt(appbench_gold(example, index), "call_lines", rate=rate, seed=index)
    return answer


def empty(example: Any, index: int) -> str:
    return ""


def kv_gold(example: Any, index: int) -> str:
    return json.dumps(example.outputs["reference"], ensure_ascii=False)


def make_run(root: Path, name: str, *, benchmark: str = "appbench", task: str = "plan",
             subset: str = "ss", data_dir: Path, answer: Answer = appbench_gold,
             strategy: str = "hierarchical", model: str = "reference",
             scoring_options: dict[str, Any] | None = None, source: str = "sample",
             infra: Container[int] = (), only: Container[int] | None = None,
             tokens: tuple[int, int, int] = (100, 20, 2),
             judge: dict[str, Any] | None = None,
             extra_score: Callable[[int], Any] | None = None) -> Path:
    """A finished run directory: every example answered by ``answer``, scored with the
    benchmark's scorer; indices in ``infra`` are infra errors (no score); ``only`` keeps a
    subset of the examples. The summary holds ``scorer.aggregate`` of the stored scores."""
    split = get_benchmark(benchmark).split(task, subset)
    options = scoring_options or {}
    scorer = get_benchmark(benchmark).scorer(split, options=options)
    examples = to_examples(split, data_dir)
    rd = RunDir(root / name)
    rd.write_config(RunConfig(
        experiment=f"{split.name}-{strategy}-{model}", benchmark=benchmark, task=task,
        subset=subset, strategy=strategy, model={"spec": model, "params": {}}, judge=judge,
        scoring_options=options,
        dataset=DatasetRef(name=split.name, examples=len(examples),
                           hash=dataset_hash(examples), source=source)))
    scores = []
    for i, ex in enumerate(examples):
        if only is not None and i not in only:
            continue
        inp, out, calls = tokens
        usage = Usage(input_tokens=inp, output_tokens=out, model_calls=calls)
        if i in infra:
            rd.append(ExampleResult(example_id=str(ex.id), index=i, status="infra_error",
                                    error="429", error_kind="rate_limit"))
            continue
        text = answer(ex, i)
        outputs = {"output": text, "prediction": text, "raw_outputs": [text]}
        score = scorer.score(dict(ex.inputs), outputs, dict(ex.outputs))
        if extra_score is not None:  # e.g. recorded judge scores next to the offline ones
            extra = extra_score(i)
            score = score.model_copy(update={"scores": {**score.scores, **extra.scores},
                                             "parts": {**score.parts, **extra.parts}})
        scores.append(score)
        rd.append(ExampleResult(example_id=str(ex.id), index=i, status="ok", outputs=outputs,
                                score=score.model_dump(mode="json"), usage=usage,
                                latency_s=0.5))
    rd.write_summary(RunSummary(
        experiment=f"{split.name}-{strategy}-{model}",
        metrics=dict(scorer.aggregate(scores)),
        counts={"examples": len(examples), "scored": len(scores), "retried": 0}))
    return rd.path
