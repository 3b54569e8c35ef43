"""Benchmark splits as LangSmith datasets: offline :class:`~langsmith.schemas.Example` objects and
an idempotent push.

Every example has a stable id, ``uuid5(NAMESPACE, "<benchmark>/<task>/<subset>/<index>")``, so
experiments on different machines join on the same ids, and pushing again only writes what
changed. A dataset is named after its split (``ultratool-tool_usage-en``, ``appbench-plan-ss``).

Example::

    from tooleval_agents.data.langsmith_datasets import push, to_examples
    from tooleval_agents.registry import get_benchmark

    split = get_benchmark("appbench").split("plan", "ss")
    examples = to_examples(split, data_dir)          # offline, e.g. for langsmith.evaluate
    [result] = push([split], data_dir)               # needs LANGSMITH_API_KEY
    print(result.created, result.updated, result.unchanged)
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from tooleval_agents.contracts import Source, Split
from tooleval_agents.data.jsonio import LazySequence
from tooleval_agents.errors import DataFormatError, DatasetMissingError, ToolevalError
from tooleval_agents.redaction import redact_text
from tooleval_agents.registry import get_benchmark

if TYPE_CHECKING:
    from langsmith import Client
    from langsmith.schemas import Example

NAMESPACE = uuid.UUID("fcaf03c8-7a14-4a46-9a43-31df433d9f4a")
"""Namespace of every id this project derives (never change it: ids would change)."""

API_KEY_VARS = ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY")
"""Where the SDK looks for the API key, in its order."""
ENDPOINT_VARS = ("LANGSMITH_ENDPOINT", "LANGCHAIN_ENDPOINT")

SERVER_METADATA_KEYS = frozenset({"dataset_split"})
"""Example metadata keys LangSmith adds itself (splits live in ``metadata.dataset_split``);
ignored when deciding whether an example changed."""

UPDATE_BATCH = 200
"""Examples per update request (the SDK batches creates by size, but not updates)."""

PUSHED_BY = "tooleval-agents"

class LangSmithNotConfiguredError(ToolevalError):
    """No LangSmith API key is configured; the message says which variables to set."""


class PushResult(BaseModel):
    """What happened to one split's dataset."""

    dataset: str
    """Dataset name (the split name, e.g. ``ultratool-tool_usage-en``)."""
    split: str
    """``benchmark/task/subset``."""
    examples: int = 0
    """Examples in the local split."""
    source: Source | None = None
    """Where the local records come from (official, rebuilt, sample)."""
    description: str | None = None
    """The dataset description pushed."""
    dataset_id: str | None = None
    """The LangSmith dataset id (``None`` in a dry run or when the split failed)."""
    url: str | None = None
    """Link to the dataset in the LangSmith app, when the SDK knows it."""
    dataset_created: bool = False
    """The dataset did not exist and was created."""
    dataset_updated: bool = False
    """The dataset's description or metadata were updated."""
    created: int | None = None
    """Examples created (``None`` in a dry run: not known without asking LangSmith)."""
    updated: int | None = None
    """Existing examples whose inputs, outputs or metadata changed."""
    unchanged: int | None = None
    """Existing examples left as they were."""
    extra: int | None = None
    """Remote examples that are not in the local split (kept unless ``prune``)."""
    deleted: int = 0
    """Remote examples deleted because of ``prune``."""
    dry_run: bool = False
    """Nothing was contacted."""
    error: str | None = None
    """Why the split could not be pushed (data missing or malformed); other splits go on."""


# ----------------------------------------------------------------------------- ids and examples

def example_id(split: Split, index: int) -> uuid.UUID:
    """The stable id of record ``index`` of ``split``."""
    return uuid.uuid5(NAMESPACE, f"{split.key}/{index}")


def dataset_id(split: Split) -> uuid.UUID:
    """A stable dataset id for offline examples (LangSmith assigns its own on creation)."""
    return uuid.uuid5(NAMESPACE, split.name)


def to_examples(split: Split, data_dir: Path) -> Sequence[Example]:
    """Every record of ``split`` as a LangSmith example with a stable id.

    Metadata holds benchmark, task, the subset (as ``language`` or ``category``), what the
    benchmark adds (:meth:`~tooleval_agents.registry.Benchmark.to_example`,
    :meth:`~tooleval_agents.registry.Benchmark.shared_metadata`), source and index. Records a
    benchmark reads lazily (:class:`~tooleval_agents.data.jsonio.LazySequence`) give examples made
    when read, each time, and not kept: a run of ``--limit 1`` validates and converts one
    record, and a pass over a large split holds one example at a time.

    Raises:
        DatasetMissingError, DataFormatError: the split's data is absent, empty or malformed
            (a malformed record of a lazy split: when its example is read).
    """
    from langsmith.schemas import Example

    bench = get_benchmark(split.benchmark)
    split = bench.split(split.task, split.subset)  # the declared one (with its subset kind)
    try:
        records = bench.load(split, data_dir)
    except DatasetMissingError:
        raise
    except FileNotFoundError as exc:  # a plugin's loader: the same error, with how to get it
        missing = Path(exc.filename) if exc.filename else bench.locate(split, data_dir).path
        raise DatasetMissingError(split.benchmark, missing, Path(data_dir)) from exc
    if not len(records):  # an empty split measures nothing: name the file, not a symptom
        raise DataFormatError(bench.locate(split, data_dir).path,
                              f"no records of {split.name}: the data file is empty")
    shared = bench.shared_metadata(split, data_dir, len(records))
    ds_id = dataset_id(split)

    def make(position: int, record: Any) -> Example:
        fields = bench.to_example(split, record)
        meta = getattr(record, "meta", None)
        index = meta.index if meta is not None else position
        metadata = dict(fields.metadata)
        metadata.setdefault("benchmark", split.benchmark)
        metadata.setdefault("task", split.task)
        metadata.setdefault(split.kind, split.subset)
        metadata["index"] = index
        if meta is not None:
            metadata.setdefault("source", meta.source)
        if shared is not None and 0 <= index < len(shared):
            for key, value in shared[index].items():
                if value is not None:
                    metadata.setdefault(key, value)
        return Example(
            id=example_id(split, index),
            dataset_id=ds_id,
            inputs=_jsonable(fields.inputs),
            outputs=_jsonable(fields.outputs),
            metadata=_jsonable(metadata),
        )

    if isinstance(records, LazySequence):
        # Their loaders number records by position, so ids are unique without a check. Made
        # at each read and not kept (nor is the record): a run's passes over 20,000 examples
        # hold one at a time (callers that read an example twice keep it themselves).
        return LazySequence(len(records), lambda i: make(i, records.make(i)), keep=False)
    out = [make(position, record) for position, record in enumerate(records)]
    ids = {e.id for e in out}
    if len(ids) != len(out):  # two records with one meta.index: ids would collide
        raise ToolevalError(f"{split.name}: record indices are not unique; cannot derive ids")
    return out


def _jsonable(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` as JSON would bring it back (tuples become lists...): what LangSmith stores,
    so local and remote examples compare equal."""
    result: dict[str, Any] = json.loads(json.dumps(value, ensure_ascii=False, default=str))
    return result


def describe(split: Split, count: int, source: str | None) -> str:
    """The dataset description shown in LangSmith."""
    bench = get_benchmark(split.benchmark)
    return (f"{bench.title or bench.name} {bench.describe(split)}. {count} examples from "
            f"{source or 'unknown'} data. Example ids are uuid5 of '{split.key}/<index>'; "
            f"pushed by {PUSHED_BY}.")


def dataset_metadata(split: Split, count: int, source: str | None) -> dict[str, Any]:
    """The dataset metadata set on push."""
    return {"benchmark": split.benchmark, "task": split.task, "subset": split.subset,
            "source": source, "examples": count, "pushed_by": PUSHED_BY}


def _source(examples: Sequence[Example]) -> Source | None:
    sources = {(e.metadata or {}).get("source") for e in examples}
    return sources.pop() if len(sources) == 1 else None


# ----------------------------------------------------------------------------- client

def api_key_configured() -> bool:
    """Whether an API key is set in the environment (the key itself is never read out)."""
    return any((os.environ.get(v) or "").strip() for v in API_KEY_VARS)


def make_client(endpoint: str | None = None) -> Client:
    """A LangSmith client from the environment, for dataset work (no tracing thread).

    Raises:
        LangSmithNotConfiguredError: no API key in the environment.
    """
    if not api_key_configured():
        raise LangSmithNotConfiguredError(
            "no LangSmith API key configured: set LANGSMITH_API_KEY (and LANGSMITH_ENDPOINT for "
            "a self-hosted or regional LangSmith, e.g. https://eu.api.smith.langchain.com), "
            "or use --dry-run to see what would be pushed.")
    from langsmith import Client

    # No background tracing thread: pushes trace nothing, and the thread can delay exit.
    return Client(api_url=endpoint or None, auto_batch_tracing=False)


def redact(message: str) -> str:
    """An SDK error message fit to print: the configured key (if it appears) and the SDK's
    partly masked ``API Key: lsv2_****ab`` line are removed."""
    lines = [line for line in message.splitlines() if not line.strip().startswith("API Key:")]
    return redact_text("\n".join(lines))


# ----------------------------------------------------------------------------- push

def _same(local: Example, remote: Example) -> bool:
    remote_meta = {k: v for k, v in (remote.metadata or {}).items()
                   if k not in SERVER_METADATA_KEYS}
    return ((remote.inputs or {}) == local.inputs and (remote.outputs or {}) == local.outputs
            and remote_meta == local.metadata)


def _ensure_dataset(client: Client, split: Split, description: str,
                    metadata: dict[str, Any], result: PushResult) -> Any:
    from langsmith.utils import LangSmithNotFoundError

    try:
        ds = client.read_dataset(dataset_name=split.name)
    except LangSmithNotFoundError:
        ds = client.create_dataset(split.name, description=description, metadata=metadata)
        result.dataset_created = True
        return ds
    current = dict(ds.metadata or {})
    if ds.description != description or any(current.get(k) != v for k, v in metadata.items()):
        # The SDK has no update_dataset: PATCH /datasets/{id} (DatasetUpdate) directly.
        client.request_with_retries(
            "PATCH", f"/datasets/{ds.id}",
            json={"description": description, "metadata": {**current, **metadata}})
        result.dataset_updated = True
    return ds


def _push_split(client: Client, split: Split, examples: list[Example], *,
                prune: bool) -> PushResult:
    from langsmith.schemas import ExampleCreate, ExampleUpdate

    source = _source(examples)
    result = PushResult(dataset=split.name, split=split.key, examples=len(examples),
                        source=source, description=describe(split, len(examples), source))
    ds = _ensure_dataset(client, split, result.description or "",
                         dataset_metadata(split, len(examples), source), result)
    result.dataset_id = str(ds.id)
    result.url = getattr(ds, "url", None)
    remote = ({} if result.dataset_created
              else {e.id: e for e in client.list_examples(dataset_id=ds.id)})
    to_create = [e for e in examples if e.id not in remote]
    to_update = [e for e in examples if e.id in remote and not _same(e, remote[e.id])]
    local_ids = {e.id for e in examples}
    extra = [i for i in remote if i not in local_ids]
    if to_create:
        client.create_examples(dataset_id=ds.id, examples=[
            ExampleCreate(id=e.id, inputs=e.inputs, reference_outputs=e.outputs,
                          metadata=e.metadata) for e in to_create])
    for start in range(0, len(to_update), UPDATE_BATCH):
        batch = to_update[start:start + UPDATE_BATCH]
        client.update_examples(dataset_id=ds.id, updates=[
            ExampleUpdate(id=e.id, inputs=e.inputs, outputs=e.outputs, metadata=e.metadata)
            for e in batch])
    if prune and extra:
        client.delete_examples(extra)
        result.deleted = len(extra)
    result.created = len(to_create)
    result.updated = len(to_update)
    result.unchanged = len(examples) - len(to_create) - len(to_update)
    result.extra = len(extra) - result.deleted
    return result


def _load(split: Split, data_dir: Path) -> tuple[list[Example] | None, str | None]:
    """Examples of a split, or why they could not be built: one broken split (or benchmark
    plugin) is reported and does not stop the others."""
    try:
        return list(to_examples(split, data_dir)), None  # every record read here
    except (ToolevalError, OSError) as exc:
        return None, str(exc)
    except Exception as exc:  # a bug in a loader: report it with its type, go on
        return None, f"{type(exc).__name__}: {exc}"


def preview(splits: Iterable[Split], data_dir: Path, *,
            on_result: Callable[[PushResult], None] | None = None) -> list[PushResult]:
    """What :func:`push` would send, without contacting anything (``--dry-run``)."""
    results = []
    for split in splits:
        examples, error = _load(split, Path(data_dir))
        count = len(examples or [])
        source = _source(examples) if examples else None
        result = PushResult(dataset=split.name, split=split.key, dry_run=True, error=error,
                            examples=count, source=source,
                            description=None if error else describe(split, count, source))
        results.append(result)
        if on_result:
            on_result(result)
    return results


def push(splits: Iterable[Split], data_dir: Path, *, client: Client | None = None,
         endpoint: str | None = None, prune: bool = False,
         on_result: Callable[[PushResult], None] | None = None) -> list[PushResult]:
    """Create or update one LangSmith dataset per split; idempotent.

    Missing examples are created and changed ones updated (inputs, outputs and metadata are
    compared); identical ones cause no write. Remote examples absent locally are kept unless
    ``prune``. A split whose data is missing or malformed is reported in
    :attr:`PushResult.error` and the others go on; LangSmith errors (auth, network) propagate.

    Args:
        client: a LangSmith client; default :func:`make_client` (environment, ``endpoint``).
        on_result: called after each split (progress).

    Raises:
        LangSmithNotConfiguredError: no client given and no API key configured.
    """
    client = client or make_client(endpoint)
    results = []
    for split in splits:
        examples, error = _load(split, Path(data_dir))
        if examples is None:
            result = PushResult(dataset=split.name, split=split.key, error=error)
        else:
            result = _push_split(client, split, examples, prune=prune)
        results.append(result)
        if on_result:
            on_result(result)
    return results
