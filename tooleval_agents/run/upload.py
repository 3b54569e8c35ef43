"""Finished local runs sent to LangSmith later (``tooleval upload``).

A run kept local -- no key, ``--no-upload``, or LangSmith unreachable while it ran -- becomes
the same experiment a live upload makes: the split's dataset (pushed if absent, and checked
against the run's examples), an experiment linked to it with the run's metadata, one run per
stored result (inputs, outputs, the reference example, its time and error) and the result's
scores as feedback. Every id is derived from the experiment and the example (``uuid5``), so an
upload sent twice -- or cut off and sent again, or after a resume added examples -- sends only
what LangSmith does not hold yet. The experiment is recorded in ``config.json`` as a live run
records it.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooleval_agents.data.langsmith_datasets import to_examples
from tooleval_agents.errors import ToolevalError, UsageError
from tooleval_agents.registry import get_benchmark
from tooleval_agents.results.records import ExampleResult, RunConfig
from tooleval_agents.results.rescore import current_summary
from tooleval_agents.results.rundir import RunDir, RunSummary
from tooleval_agents.run.experiment import result_feedback
from tooleval_agents.run.langsmith_io import (
    answer_error,
    experiment_description,
    experiment_metadata,
    experiment_session,
    outage,
    remote_examples,
    upload_client,
)

if TYPE_CHECKING:
    from langsmith import Client

log = logging.getLogger(__name__)
NAMESPACE = uuid.UUID("6f1d2c3e-7a54-4c1b-9a0e-2b8f5d9e4a10")
"""Of the ids an upload derives (runs, feedback): the same run uploaded again gets the same."""


@dataclass(frozen=True)
class Upload:
    """What an upload of one run sent (or, with ``dry_run``, would send)."""

    run: Path
    experiment: str
    """The LangSmith experiment's name (with ``dry_run``: the run's)."""
    results: int
    """Stored results of the run."""
    sent: int
    """Results sent now."""
    already: int
    """Results LangSmith held already."""
    url: str | None = None


def _results(run_dir: RunDir, config: RunConfig) -> list[ExampleResult]:
    if config.epochs > 1:
        raise UsageError(f"{run_dir.path}: a run of --epochs {config.epochs} cannot be uploaded "
                         "yet (LangSmith experiments hold one attempt per example)")
    live = config.langsmith or {}
    if live.get("session_id") and live.get("uploaded") is not False and \
            live.get("uploaded_by") != "tooleval upload":
        raise UsageError(f"{run_dir.path} was uploaded while it ran (experiment "
                         f"{live.get('session_name')}): resume it with a key set to add to it")
    trusted, left_out = run_dir.trusted()  # a changed line is no example of the run
    if left_out:
        log.warning("%s", left_out)
    return sorted(trusted.values(), key=lambda r: r.index)


def _stored(client: Client, run_id: uuid.UUID) -> bool:
    from langsmith.utils import LangSmithNotFoundError

    try:
        client.read_run(run_id)
    except LangSmithNotFoundError:
        return False
    return True


def _send(client: Client, project: str, run_id: uuid.UUID, result: ExampleResult,
          inputs: dict[str, Any]) -> None:
    end = datetime.fromisoformat(result.finished_at)
    client.create_run(
        name="tooleval", inputs=inputs, run_type="chain", project_name=project, id=run_id,
        outputs=result.outputs, reference_example_id=result.example_id,
        start_time=end - timedelta(seconds=result.latency_s), end_time=end,
        error=result.error if result.status != "ok" else None)
    for item in result_feedback(result):
        client.create_feedback(run_id, item["key"], score=item.get("score"),
                               value=item.get("value"), comment=item.get("comment"),
                               feedback_id=uuid.uuid5(NAMESPACE, f"{run_id}/{item['key']}"))


def upload_run(path: Path, *, client: Client | None = None, dry_run: bool = False) -> Upload:
    """Send the finished run in ``path`` to LangSmith (see the module docstring); with
    ``dry_run``, only say how many results it holds, contacting nothing."""
    run_dir = RunDir(path)
    config = run_dir.read_config()
    results = _results(run_dir, config)
    if dry_run or not results:
        return Upload(path, config.experiment, len(results), 0, 0)
    bench = get_benchmark(config.benchmark)
    split = bench.split(config.task, config.subset)
    if not config.dataset.data_dir:
        raise ToolevalError(f"{path}: config.json does not say which data the run read")
    data = Path(config.dataset.data_dir)
    by_id = {str(e.id): e for e in to_examples(split, data)}
    missing = [r.example_id for r in results if r.example_id not in by_id]
    if missing:
        raise ToolevalError(f"{path}: {len(missing)} result(s) name examples the data in {data} "
                            "does not hold; upload with the data the run used")
    client = client or upload_client(
        otherwise=" (`tooleval upload --dry-run` says what would be sent without one)")
    summary = current_summary(run_dir)  # of the results it holds, as sent
    try:
        session, sent, already = _experiment(client, config, split, data, results, by_id,
                                             summary)
    except ToolevalError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        # Not JSON, JSON of another shape (pydantic's many lines), a refused request: one line
        # naming LangSmith, whatever the SDK raised.
        raise answer_error(exc, client) from exc
    except Exception as exc:  # the SDK's own errors (LangSmithError...)
        if outage(exc) is None:
            raise
        raise answer_error(exc, client) from exc
    run_dir.write_config(config.model_copy(update={"langsmith": {
        "session_id": str(session.id), "session_name": session.name,
        "dataset_id": str(session.reference_dataset_id), "url": session.url,
        "uploaded_by": "tooleval upload"}}))
    return Upload(path, str(session.name), len(results), sent, already, session.url)


def _experiment(client: Client, config: RunConfig, split: Any, data: Path,
                results: Sequence[ExampleResult], by_id: dict[str, Any],
                summary: RunSummary | None) -> tuple[Any, int, int]:
    """The LangSmith side of :func:`upload_run`: the dataset, the experiment, each result not
    sent yet, the run's figures; the experiment session and the results sent now and
    before."""
    examples: Sequence[Any] = [by_id[r.example_id] for r in results]
    remote = remote_examples(client, split, data, examples)
    metadata = experiment_metadata(config, split.kind)
    session = experiment_session(client, config.experiment, remote[0].dataset_id, metadata,
                                 config.langsmith, experiment_description(config))
    sent = already = 0
    for result in results:
        run_id = uuid.uuid5(NAMESPACE, f"{session.id}/{result.example_id}/{result.epoch}")
        if _stored(client, run_id):
            already += 1
            continue
        _send(client, str(session.name), run_id, result, by_id[result.example_id].inputs or {})
        sent += 1
    client.flush()
    client.update_project(session.id, end_time=datetime.now(UTC), metadata={
        **metadata, **({"metrics": summary.metrics, "counts": summary.counts} if summary
                       else {})})
    return session, sent, already
