"""``tooleval data info``: what data is available, where from, and how many records."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rich.table import Table

from tooleval_agents.cli.base import DataDirOption, JsonOption, console, data_app, print_json
from tooleval_agents.contracts import Located
from tooleval_agents.data.datadir import bundled_samples, cache_dir, resolve_data_dir
from tooleval_agents.data.fetch import load_manifest, source_manifest
from tooleval_agents.data.jsonio import atomic_write_text, sha256_file
from tooleval_agents.errors import DataFormatError, DatasetMissingError, ToolevalError
from tooleval_agents.registry import Benchmark, benchmarks
from tooleval_agents.terminal import shown

COUNTS = "record-counts.json"
"""Per-user cache of split sizes, keyed by file and its size and mtime: `data info` counts a
file once, not on every call."""


def _counts_file() -> Path:
    return cache_dir() / COUNTS


def _read_counts() -> dict[str, int]:
    try:
        found = json.loads(_counts_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _trusted(bench: Benchmark, located: Located, data_dir: Path) -> bool:
    """Whether a split's file is known valid without validating it: rebuilt by us from
    validated records, or an upstream file with its pinned sha256 (the test suite validates
    the pinned files)."""
    if located.source == "rebuilt":
        return True
    for source in bench.data_sources():
        for pinned in source_manifest(source).files:
            if Path(data_dir) / source / pinned.path == located.path:
                return bool(located.path.stat().st_size == pinned.size
                            and sha256_file(located.path) == pinned.sha256)
    return False


def inventory(data_dir: Path, of: Iterable[Benchmark] | None = None) -> list[dict[str, Any]]:
    """One row per split of every registered benchmark (or those in ``of``) found under
    ``data_dir``. A split's
    record count comes from the per-user cache while its file is unchanged (same path, size
    and mtime); else it is counted (every record validated unless the file is known valid,
    see :func:`_trusted`) and cached."""
    rows: list[dict[str, Any]] = []
    counts = _read_counts()
    fresh = dict(counts)
    for bench in benchmarks().values() if of is None else of:
        for split in bench.splits():
            row: dict[str, Any] = {"benchmark": bench.name, "task": split.task,
                                   "subset": split.subset, "dataset": split.name}
            try:
                located = bench.locate(split, data_dir)
                stat = located.path.stat()
                key = (f"{split.key}|{located.path.resolve()}|{stat.st_size}|"
                       f"{stat.st_mtime_ns}")
                if key not in counts:
                    records = bench.load(split, data_dir)
                    if not _trusted(bench, located, data_dir):
                        for _ in records:  # validated as read: a bad record raises here
                            pass
                    fresh[key] = len(records)
            except DatasetMissingError as exc:
                row.update(records=0, source="missing", path=str(exc.expected), error=None)
            except FileNotFoundError as exc:  # a plugin's locate names a file not fetched
                row.update(records=0, source="missing", path=str(exc.filename), error=None)
            except DataFormatError as exc:
                row.update(records=None, source="invalid", path=str(exc.path), error=str(exc))
            else:
                row.update(records=fresh[key], source=located.source,
                           path=str(located.path), error=None)
            rows.append(row)
    if fresh != counts:
        with contextlib.suppress(OSError):  # a read-only cache only costs speed
            _counts_file().parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(_counts_file(), json.dumps(fresh, indent=0))
    return rows


def resource_rows(data_dir: Path, of: Iterable[Benchmark] | None = None) -> list[dict[str, Any]]:
    """Every benchmark's (or those in ``of``) auxiliary data (:meth:`Benchmark.resources`); a
    benchmark whose resources cannot be read (e.g. a malformed SGD schema) gives one row with
    ``error`` set."""
    rows: list[dict[str, Any]] = []
    for bench in benchmarks().values() if of is None else of:
        try:
            found = bench.resources(data_dir)
        except ToolevalError as exc:
            rows.append({"benchmark": bench.name, "name": "resources", "source": "invalid",
                         "path": str(getattr(exc, "path", data_dir)), "error": str(exc)})
            continue
        rows += [{"benchmark": bench.name, **r} for r in found]
    return rows


def _sample_rows(data_dir: Path) -> tuple[Path, list[dict[str, Any]], list[dict[str, Any]]]:
    """The shown folder, split rows and resource rows of the bundled samples: each benchmark's
    read from its own samples folder (:meth:`Benchmark.samples_dir`; one ``datasets/`` in a
    source checkout, one per benchmark package in a wheel), those that bundle none from
    ``data_dir`` (missing there)."""
    found = bundled_samples()
    if not found:
        return data_dir, inventory(data_dir), resource_rows(data_dir)
    folders = {str(where.resolve()) for where in found.values()}
    shown_dir = Path(os.path.commonpath(folders)) if len(folders) > 1 else next(
        iter(found.values()))
    rows: list[dict[str, Any]] = []
    resources: list[dict[str, Any]] = []
    for name, bench in benchmarks().items():
        where = found.get(name, data_dir if len(folders) > 1 else shown_dir)
        rows += inventory(where, [bench])
        resources += resource_rows(where, [bench])
    return shown_dir, rows, resources


@data_app.command("info")
def info(data_dir: DataDirOption = None, json_out: JsonOption = False) -> None:
    """List every split: benchmark, task, language/category, records, source, path.

    Without --data-dir or TOOLEVAL_DATA_DIR and with nothing downloaded yet, the bundled
    samples are listed.
    """
    resolved = resolve_data_dir(data_dir)
    rows = inventory(resolved)
    if data_dir is None and all(r["source"] == "missing" for r in rows):
        resolved, rows, resources = _sample_rows(resolved)
    else:
        resources = resource_rows(resolved)
    if json_out:
        print_json({"data_dir": str(resolved), "splits": rows, "resources": resources})
        return
    table = Table(title=shown(f"tooleval data in {resolved}"))
    for col in ("benchmark", "task", "subset", "records", "source", "path"):
        table.add_column(col, justify="right" if col == "records" else "left",
                         overflow="fold")
    for r in rows:
        style = {"missing": "dim", "invalid": "red"}.get(r["source"])
        table.add_row(*(shown(r[k]) for k in ("benchmark", "task", "subset", "records",
                                              "source", "path")), style=style)
    console.print(table)
    for res in resources:
        if res.get("error"):
            console.print(f"[red]{shown(res['benchmark'])} {shown(res['name'])}: "
                          f"{shown(res['error'])}[/]", highlight=False, soft_wrap=True)
            continue
        details = ", ".join(f"{k} {v}" for k, v in res.items()
                            if k not in ("benchmark", "name", "source", "path"))
        console.print(shown(f"{res['benchmark']} {res['name']}: {details} ({res['source']}: "
                            f"{res['path']})"), highlight=False)
    for r in rows:
        if r["error"]:
            console.print(f"[red]{shown(r['error'])}[/]", highlight=False, soft_wrap=True)
    if any(r["source"] == "missing" for r in rows):
        sources = shown("|".join(load_manifest().sources))
        console.print(f"Missing data: [bold]tooleval data fetch {sources}"
                      f" --data-dir {shown(resolved)}[/]")
