"""The LangSmith side of a run: a client that never phones home (offline) or uploads, the split's
remote dataset and the experiment's session."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from tooleval_agents.contracts import (
    Split,
)
from tooleval_agents.data.langsmith_datasets import (
    LangSmithNotConfiguredError,
    api_key_configured,
    push,
)
from tooleval_agents.errors import ToolevalError
from tooleval_agents.results.records import RunConfig
from tooleval_agents.terminal import printable

if TYPE_CHECKING:
    from langsmith import Client
    from langsmith.schemas import Example, TracerSession

log = logging.getLogger(__name__)


def offline_client() -> Client:
    from langsmith import Client

    # Built not to phone home (notes: the default client POSTs traces and can hang at exit).
    return Client(api_key="offline", info={}, tracing_sampling_rate=0.0,
                  auto_batch_tracing=False)


def upload_client(*, otherwise: str = ", or run with --no-upload") -> Client:
    """A client that uploads; without an API key, an error saying how to set one, then
    ``otherwise`` (what else the command offers)."""
    from langsmith import Client

    if not api_key_configured():
        raise LangSmithNotConfiguredError(
            "upload needs a LangSmith API key: set LANGSMITH_API_KEY (and LANGSMITH_ENDPOINT "
            f"for a self-hosted or regional LangSmith){otherwise}")
    return Client()


def answer_error(exc: BaseException, client: Client) -> ToolevalError:
    """LangSmith's failure (:func:`outage`), or an answer that is not its API (not JSON, or
    JSON of another shape), as one line naming LangSmith and where it was asked."""
    where = getattr(client, "api_url", None) or "LangSmith"
    down = None if isinstance(exc, (json.JSONDecodeError, ValidationError)) else outage(exc)
    if down is not None:
        return ToolevalError(f"LangSmith at {where} could not be reached or refused the "
                             f"request: {down}")
    first = (str(exc).strip().splitlines() or [""])[0]
    return ToolevalError(printable(
        f"LangSmith at {where} answered with something that is not LangSmith's API "
        f"({type(exc).__name__}: {first[:160]}): check LANGSMITH_ENDPOINT"))


def outage(exc: BaseException) -> str | None:
    """One line saying why LangSmith could not be reached or refused the key, or None when
    `exc` is not an outage (a differing dataset, a bug): an outage keeps the run local."""
    from langsmith.utils import (
        LangSmithAPIError,
        LangSmithAuthError,
        LangSmithConnectionError,
        LangSmithRateLimitError,
    )
    # The SDK wraps its HTTP errors (refused, timeout, 5xx after retries, 401/403) in these.
    kinds = (LangSmithConnectionError, LangSmithAuthError, LangSmithRateLimitError,
             LangSmithAPIError, OSError, TimeoutError)
    if not isinstance(exc, kinds):
        return None
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return printable(f"{type(exc).__name__}: {first}")[:200]


def remote_examples(client: Client, split: Split, data_dir: Path,
                     examples: Sequence[Example]) -> list[Example]:
    """The split's dataset in LangSmith (pushed if absent); it must hold the run's examples
    unchanged, else the experiment would compare against other references."""
    from langsmith.utils import LangSmithNotFoundError

    try:
        dataset = client.read_dataset(dataset_name=split.name)
    except LangSmithNotFoundError:
        [pushed] = push([split], data_dir, client=client)
        if pushed.error:
            raise ToolevalError(f"could not push dataset {split.name}: {pushed.error}") from None
        dataset = client.read_dataset(dataset_name=split.name)
    remote = {str(e.id): e for e in client.list_examples(dataset_id=dataset.id)}
    missing = [e for e in examples if str(e.id) not in remote]
    changed = [e for e in examples if str(e.id) in remote and
               ((remote[str(e.id)].inputs or {}) != e.inputs
                or (remote[str(e.id)].outputs or {}) != (e.outputs or {}))]
    if missing or changed:
        raise ToolevalError(
            f"LangSmith dataset {split.name!r} does not match the local data ({len(missing)} "
            f"examples missing, {len(changed)} changed): update it with `tooleval data push "
            f"{split.benchmark}` (same --data-dir) or run with --no-upload")
    return [remote[str(e.id)] for e in examples]


def experiment_metadata(config: RunConfig, kind: str) -> dict[str, Any]:
    """What a run's LangSmith experiment says about it (live and later uploads alike);
    ``kind``: its split's kind of subset (``language``, ``category``)."""
    return {"benchmark": config.benchmark, "task": config.task, "subset": config.subset,
            kind: config.subset, "strategy": config.strategy, "model": config.model["spec"],
            "judge": config.judge["spec"] if config.judge else None,
            "scoring": (config.scoring_options or {}).get("scoring"),
            "dataset_hash": config.dataset.hash, "tooleval_experiment": config.experiment}


def experiment_description(config: RunConfig) -> str:
    """The experiment's one-line description in LangSmith."""
    return (f"{config.benchmark} {config.task} ({config.subset}), strategy {config.strategy}, "
            f"model {config.model['spec']}; run by tooleval-agents")


def experiment_session(client: Client, name: str, dataset_id: Any, metadata: dict[str, Any],
             previous: dict[str, Any] | None, description: str) -> TracerSession:
    """The run's experiment: the one recorded in config.json when resuming, else a new one
    named after the run (with a suffix if LangSmith already has that name)."""
    from langsmith.utils import LangSmithConflictError, LangSmithNotFoundError

    if previous and previous.get("session_id"):
        try:
            return client.read_project(project_id=str(previous["session_id"]))
        except LangSmithNotFoundError:
            log.warning("experiment %s is gone from LangSmith; creating a new one",
                        printable(previous.get("session_id")))
    for candidate in (name, f"{name}-{uuid.uuid4().hex[:6]}", f"{name}-{uuid.uuid4().hex[:6]}"):
        try:
            return client.create_project(candidate, reference_dataset_id=dataset_id,
                                         metadata=metadata, description=description)
        except LangSmithConflictError:
            continue
    raise ToolevalError(f"could not create a LangSmith experiment named {name!r}")


