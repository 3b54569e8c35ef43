"""Re-score a finished run from its stored outputs with the current evaluators.

No agent model is called: every example's ``outputs`` (``examples.jsonl``) is scored again
against the reference outputs of the run's dataset split, and the corpus metrics are pooled
with the benchmark's ``Scorer.aggregate``. A judge model is called only when one is passed.

A run whose result lines were changed after they were written (:meth:`~tooleval_agents.
results.RunDir.edited`: a score set by hand, edited outputs or inputs) is refused
(:class:`EditedResultsError`, naming the lines): resuming it runs those examples again.

Where the result goes: ``summary.rescored.json`` beside the run's ``summary.json``. The
original summary is what the run measured when it finished and is never overwritten; the
re-scored one is a :class:`RescoredSummary` (a :class:`~tooleval_agents.results.rundir.RunSummary`
plus ``rescored_at``, the scoring options and judge used, how many example scores changed, the
original metrics and notes). Each call replaces the previous ``summary.rescored.json``;
:func:`read_rescored` ignores one written before the run was resumed or started over.
``examples.jsonl`` is left alone (append-only, the run's record); callers that need the new
per-example scores use :func:`rescore_results` (``tooleval compare/report --rescore`` do).

Example::

    summary = rescore_run("runs/appbench-plan-ss-hierarchical-gpt-4o",
                          scoring_options={"scoring": "paper"})
    summary.metrics["success"], summary.changed
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import Field

from tooleval_agents.contracts import (
    EMPTY_OUTPUTS,
    ExampleScore,
    Metrics,
    Scorer,
    ScoringContext,
    Split,
)
from tooleval_agents.data.datadir import resolve_data_dir, samples_dir
from tooleval_agents.data.jsonio import atomic_write_text, parse_json
from tooleval_agents.data.langsmith_datasets import to_examples
from tooleval_agents.errors import ToolevalError
from tooleval_agents.registry import build_scorer, get_benchmark, scoring_options_of
from tooleval_agents.results.epochs import epoch_id, split_epoch, with_epochs
from tooleval_agents.results.fault_metrics import with_fault_metrics
from tooleval_agents.results.records import ExampleResult, RunConfig, now
from tooleval_agents.results.rundir import (
    CONFIG,
    EXAMPLES,
    SUMMARY,
    RunDir,
    RunSummary,
    dataset_hash,
    edited_note,
)
from tooleval_agents.results.selection import select
from tooleval_agents.results.summary import summarize, summarize_dir

RESCORED_SUMMARY = "summary.rescored.json"


class EditedResultsError(ToolevalError, ValueError):
    """A run's result lines were changed after they were written (their seals do not match):
    re-scoring them would score what someone wrote, not what the model answered."""


class RescoredSummary(RunSummary):
    """``summary.rescored.json``: a run's summary recomputed from its stored outputs."""

    rescored_at: str = Field(default_factory=now)
    """When the re-scoring ran (UTC, ISO 8601)."""
    scoring_options: dict[str, Any] = Field(default_factory=dict)
    """The options the scorer got: the run's ``scoring_options`` with the overrides applied."""
    judge: str | None = None
    """The judge model that re-judged the outputs (None: no judge was called)."""
    changed: int = 0
    """Examples whose per-example score differs from the one stored in ``examples.jsonl``."""
    original_metrics: Metrics = Field(default_factory=dict)
    """The metrics of the run's own ``summary.json`` (empty when it has none)."""
    notes: list[str] = Field(default_factory=list)
    """What the numbers need to be read with (judge metrics dropped, scoring errors...)."""
    run_state: dict[str, Any] | None = None
    """The run as it was when re-scored (:func:`run_state`): a re-scored summary of an
    earlier state of the run (resumed, or started over with ``--fresh``) is stale."""


class StoredJudge:
    """Stands in for the judge when only stored judge scores are aggregated.

    A judged run's scorer pools the judge metrics only when it has a judge; aggregating
    stored scores needs none, so this placeholder is passed and refuses to be called.
    """

    def __getattr__(self, name: str) -> Any:
        # AttributeError keeps getattr(judge, x, default) / hasattr probes working.
        raise AttributeError(f"{name}: no judge model here, this scorer only aggregates stored "
                             "judge scores (pass judge=... to re-judge)")


def parse_options(items: Iterable[str]) -> dict[str, Any]:
    """``["scoring=paper", "k=3"]`` -> ``{"scoring": "paper", "k": 3}`` (JSON values, else
    strings).

    >>> parse_options(["scoring=paper", "limit=3", "flag=true"])
    {'scoring': 'paper', 'limit': 3, 'flag': True}
    """
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"option {item!r} is not KEY=VALUE")
        try:
            out[key.strip()] = parse_json(raw)
        except json.JSONDecodeError:
            out[key.strip()] = raw
    return out


def run_split(config: RunConfig) -> Split:
    """The dataset split a run is over."""
    return get_benchmark(config.benchmark).split(config.task, config.subset)


def scorer_for(config: RunConfig, *, judge: Any = None,
               scoring_options: Mapping[str, Any] | None = None,
               stored_judge: bool = False) -> Scorer:
    """The benchmark's scorer for a run: its ``scoring_options`` overridden by
    ``scoring_options``; ``judge`` when given, else (with ``stored_judge`` and a judged run)
    a :class:`StoredJudge` so stored judge scores are still pooled."""
    options: dict[str, Any] = {**config.scoring_options, **(scoring_options or {})}
    data_dir = Path(config.dataset.data_dir) if config.dataset.data_dir else None
    if judge is None and stored_judge and config.judge is not None:
        judge = StoredJudge()
    scorer = build_scorer(get_benchmark(config.benchmark), run_split(config), options,
                          ScoringContext(data_dir=data_dir, judge=judge))
    return with_fault_metrics(scorer) if config.tool_faults else scorer


def _data_dir(config: RunConfig, data_dir: Path | str | None) -> Path:
    if data_dir is None and config.dataset.source == "sample":
        return samples_dir(config.benchmark)
    if data_dir is None and config.dataset.data_dir and Path(config.dataset.data_dir).is_dir():
        return Path(config.dataset.data_dir)  # where the run read its examples
    return resolve_data_dir(data_dir)


def _judge_name(judge: Any) -> str | None:
    if judge is None:
        return None
    if isinstance(judge, str):
        return judge
    name = getattr(judge, "model_name", None) or getattr(judge, "model", None)
    return f"{type(judge).__name__}:{name}" if name else type(judge).__name__


def references(config: RunConfig, data_dir: Path | str | None = None
               ) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """``example id -> (inputs, reference outputs)`` of the run's examples (every epoch's
    attempt), read from the data directory (``data_dir``, else the bundled samples for a run
    over them, else ``$TOOLEVAL_DATA_DIR`` or the per-user cache).

    Raises:
        ValueError: the examples' hash differs from the run's ``dataset.hash`` (other data
            files, another split or limit): re-scoring would pair outputs with wrong answers.
    """
    return _run_examples(config, data_dir)[0]


def _run_examples(config: RunConfig, data_dir: Path | str | None
                  ) -> tuple[dict[str, tuple[dict[str, Any], dict[str, Any]]], set[str]]:
    """:func:`references`, and the ids of every attempt of every example of the split (a
    result outside the selection is left alone, one outside the split is an error)."""
    where = _data_dir(config, data_dir)
    every = to_examples(run_split(config), where)
    # Kept (the references returned hold them anyway): a lazy split makes each once here.
    examples = list(select(every, config.dataset.samples)[:config.dataset.examples])
    found = dataset_hash(examples)
    if found != config.dataset.hash:
        raise ValueError(f"the data in {where} is not the data the run used (dataset hash "
                         f"{found[:12]} != {config.dataset.hash[:12]}): pass the run's "
                         "--data-dir")
    known = {epoch_id(str(e.id), k) for e in every for k in range(config.epochs)}
    return ({str(e.id): (split_epoch(e.inputs)[0], dict(e.outputs or {}))
             for e in with_epochs(examples, config.epochs)}, known)


def stored_score(result: ExampleResult) -> ExampleScore | None:
    """The score dump of a result as an :class:`ExampleScore` (None when absent)."""
    return None if result.score is None else ExampleScore.model_validate(result.score)


def rescore_results(
    run_dir: Path | str, *, judge: Any = None, scoring_options: Mapping[str, Any] | None = None,
    data_dir: Path | str | None = None, judge_kwargs: Mapping[str, Any] | None = None,
) -> tuple[RunConfig, dict[str, ExampleResult], Scorer, list[str]]:
    """The run's config (its ``scoring_options`` merged with ``scoring_options``: the options
    the scorer got, which labels and tables show), its latest results with fresh ``score``
    dumps, the scorer used and notes.

    ``infra_error`` examples keep no score (they stay excluded); ``ok`` examples are scored from
    their stored outputs; a ``model_error`` scores as an empty answer (:data:`EMPTY_OUTPUTS`),
    as the runner scored it.
    A scorer exception becomes that example's ``ExampleScore.error``, never a stopped run.

    Raises:
        FileNotFoundError: not a run directory. KeyError: unknown benchmark or split.
        ValueError: the data differs from the run's (see :func:`references`), or a result is
            not one of its examples.
        EditedResultsError: result lines were changed after they were written.
        DatasetMissingError: the split's data is absent.
    """
    from tooleval_agents.models.specs import judge_model

    rd = RunDir(run_dir)
    config = rd.read_config()
    if edited := rd.edited():  # their outputs may not be what the model answered
        raise EditedResultsError(
            f"{edited_note(rd.path / EXAMPLES, edited)}: not re-scored. Resume the run (the "
            "same `tooleval run` command) to run those examples again, or start it over "
            "with --fresh")
    if isinstance(judge, str):
        # As in a run: temperature 0 unless the caller says otherwise.
        judge = judge_model(judge, judge_kwargs)
    scorer = scorer_for(config, judge=judge, scoring_options=scoring_options)
    if scoring_options:
        config = config.model_copy(update={"scoring_options": {
            **config.scoring_options,
            **{k: v for k, v in scoring_options.items() if k != "judge"}}})
    notes: list[str] = []
    if config.judge is not None and judge is None:
        notes.append(f"the run was judged by {config.judge.get('spec', config.judge)}; "
                     "re-scored without a judge, so judge metrics are not recomputed")
    by_id, known = _run_examples(config, data_dir)
    stray = next((r for k, r in rd.results().items() if k not in known), None)
    if stray is not None:
        raise ValueError(f"{rd.path}: example {stray.example_id} (index {stray.index}) is not "
                         f"one of the run's examples")
    # The directory may hold examples outside the run's latest selection: not re-scored.
    results = {k: r for k, r in rd.results().items() if k in by_id}
    out: dict[str, ExampleResult] = {}
    errors = 0
    for example_id, result in sorted(results.items(), key=lambda kv: kv[1].index):
        if result.status == "infra_error":
            out[example_id] = result
            continue
        inputs, reference = by_id[example_id]
        answer = (dict(result.outputs or {}) if result.status == "ok"
                  else dict(EMPTY_OUTPUTS))
        try:
            score = scorer.score(inputs, answer, reference)
            if not isinstance(score, ExampleScore):
                score = ExampleScore.model_validate(score)
        except Exception as exc:  # one bad example is a recorded failure, not a crashed run
            errors += 1
            score = ExampleScore(error=f"scoring failed: {type(exc).__name__}: {exc}")
        out[example_id] = result.model_copy(update={"score": score.model_dump(mode="json")})
    if errors:
        notes.append(f"{errors} example(s) could not be scored (scoring error, counted 0 in "
                     "per-example means)")
    return config, out, scorer, notes


def build_summary(config: RunConfig, results: Mapping[str, ExampleResult], scorer: Scorer, *,
                  base: RunSummary | None = None) -> RunSummary:
    """A run summary from the results' stored score dumps (:func:`tooleval_agents.results.rundir.
    summarize`, the runner's own computation); ``base`` (the run's summary) keeps its wall
    time.

    Raises:
        ValueError: a non-infra example without a stored score.
    """
    wall = base.latency_s.get("wall") if base is not None else None
    return summarize(config.experiment, scorer.aggregate, list(results.values()),
                     examples=config.dataset.examples * config.epochs, wall_s=wall,
                     epochs=config.epochs, headline=scorer.headline,
                     model=config.model.get("spec"),
                      judge=(config.judge or {}).get("spec"),
                      not_computed=scorer.not_computed)


def current_summary(run_dir: Path | str | RunDir) -> RunSummary | None:
    """The summary of the results the run directory holds now: its ``summary.json`` when
    that still describes them (:meth:`~tooleval_agents.results.rundir.RunDir.
    summary_is_current`), else computed again from ``examples.jsonl`` with the run's stored
    scores (the runner's computation; nothing is written: a reader leaves the directory as it
    is), with a note that says so. ``None``: no summary and no result yet.

    Raises:
        NotARunError: no ``config.json``. DataFormatError: a damaged result line.
    """
    rd = run_dir if isinstance(run_dir, RunDir) else RunDir(run_dir)
    stored = rd.read_summary() if (rd.path / SUMMARY).is_file() else None
    if stored is not None and rd.summary_is_current(stored):
        return stored
    config = rd.read_config()
    if stored is None and not (rd.path / EXAMPLES).is_file():
        return None
    scorer = scorer_for(config, stored_judge=True)
    fresh = summarize_dir(rd, scorer.aggregate, experiment=config.experiment,
                          examples=config.dataset.examples * config.epochs,
                          epochs=config.epochs, headline=scorer.headline,
                          model=config.model.get("spec"),
                          judge=(config.judge or {}).get("spec"),
                          not_computed=scorer.not_computed)
    said = ("its summary.json describes an earlier state of the run" if stored is not None
            else "it has no summary.json yet")
    fresh.notes.insert(0, f"{rd.path}: {said} (the run stopped, or is running): figures "
                          "computed from the results it holds now")
    return fresh.model_copy(update={"run_dir": str(rd.path), "recomputed": True})


def run_state(run_dir: Path | str) -> dict[str, Any]:
    """What changes when a run is resumed or started over: its config's ``created_at``, its
    summary's ``finished_at`` and the size of ``examples.jsonl``."""
    rd = RunDir(run_dir)
    summary = rd.path / SUMMARY
    examples = rd.path / EXAMPLES
    return {"created_at": rd.read_config().created_at,
            "summary_finished_at": rd.read_summary().finished_at if summary.is_file() else None,
            "examples_bytes": examples.stat().st_size if examples.is_file() else 0}


def read_rescored(run_dir: Path | str) -> RescoredSummary | None:
    """The run's ``summary.rescored.json``; None when there is none or it is stale: it
    re-scored an earlier state of the run (the run was resumed or started over since; for a
    file without ``run_state``: it is older than the run's config.json, examples.jsonl or
    summary.json)."""
    path = Path(run_dir)
    file = path / RESCORED_SUMMARY
    if not file.is_file():
        return None
    rescored = RescoredSummary.model_validate_json(file.read_text(encoding="utf-8"))
    if rescored.run_state is not None:
        return rescored if rescored.run_state == run_state(path) else None
    written = file.stat().st_mtime_ns
    newer = [name for name in (CONFIG, EXAMPLES, SUMMARY)
             if (path / name).is_file() and (path / name).stat().st_mtime_ns > written]
    return None if newer else rescored


def check_rescore_options(run_dirs: Iterable[Path | str],
                          scoring_options: Mapping[str, Any] | None) -> None:
    """Check ``scoring_options`` against the scoring options of every run's benchmark and
    split before any is re-scored: a bad one raises
    :class:`~tooleval_agents.contracts.OptionError` and nothing is written."""
    if not scoring_options:
        return
    for path in run_dirs:
        config = RunDir(path).read_config()
        scoring_options_of(get_benchmark(config.benchmark), run_split(config),
                           {**config.scoring_options, **scoring_options})


def rescore_run(run_dir: Path | str, *, judge: Any = None,
                scoring_options: Mapping[str, Any] | None = None,
                data_dir: Path | str | None = None, write: bool = True,
                judge_kwargs: Mapping[str, Any] | None = None) -> RescoredSummary:
    """Re-score a finished run's stored outputs and (``write``) save ``summary.rescored.json``.

    Args:
        run_dir: the run's results directory.
        judge: a chat model (or ``provider:model`` spec) to re-judge judged tasks; without it
            judge metrics are not recomputed (said in ``notes``).
        judge_kwargs: ``init_chat_model`` arguments of a judge spec (``base_url``...).
        scoring_options: overrides of the run's ``scoring_options``, e.g.
            ``{"scoring": "paper"}``.
        data_dir: where the run's dataset is (default: see :func:`references`).
        write: save ``summary.rescored.json`` (the original ``summary.json`` is kept).

    Returns:
        The re-scored summary; ``counts["infra_errors"]`` examples are excluded from the
        metrics, ``changed`` counts examples whose score differs from the stored one.

    Example::

        rescore_run("runs/x", scoring_options={"scoring": "paper"}).metrics["app_f1"]
    """
    rd = RunDir(run_dir)
    config, rescored, scorer, notes = rescore_results(
        rd.path, judge=judge, scoring_options=scoring_options, data_dir=data_dir,
        judge_kwargs=judge_kwargs)
    old = rd.results()
    base = rd.read_summary() if (rd.path / "summary.json").is_file() else None
    summary = build_summary(config, rescored, scorer, base=base)
    changed = sum(1 for k, r in rescored.items()
                  if r.status != "infra_error" and old[k].score != r.score)
    result = RescoredSummary(
        **summary.model_dump(exclude={"finished_at", "notes"}),
        scoring_options=dict(config.scoring_options),  # merged by rescore_results
        judge=_judge_name(judge),
        changed=changed,
        original_metrics=dict(base.metrics) if base is not None else {},
        notes=[*notes, *summary.notes],
        run_state=run_state(rd.path),
    )
    if write:
        atomic_write_text(rd.path / RESCORED_SUMMARY, result.model_dump_json(indent=2))
    return result
