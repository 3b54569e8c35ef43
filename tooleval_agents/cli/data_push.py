"""``tooleval data push``: publish benchmark splits as LangSmith datasets (idempotent)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from tooleval_agents.cli.base import (
    FLAG,
    DataDirOption,
    JsonOption,
    console,
    data_app,
    data_or_samples,
    err_console,
    fail,
    print_json,
)
from tooleval_agents.contracts import Split
from tooleval_agents.data.langsmith_datasets import (
    LangSmithNotConfiguredError,
    PushResult,
    preview,
    push,
    redact,
)
from tooleval_agents.registry import benchmarks, get_benchmark
from tooleval_agents.terminal import shown


def select_splits(benchmark: str, task: str | None, subset: str | None) -> list[Split]:
    """The splits named on the command line; ``ValueError`` says what exists."""
    known = benchmarks()
    if benchmark != "all" and benchmark not in known:
        raise ValueError(f"unknown benchmark {benchmark!r}; choose one of "
                         f"{', '.join([*sorted(known), 'all'])}")
    candidates = [s for name, b in sorted(known.items()) if benchmark in ("all", name)
                  for s in b.splits()]
    chosen = [s for s in candidates
              if (task is None or s.task == task) and (subset is None or s.subset == subset)]
    if not chosen:
        tasks = sorted({s.task for s in candidates})
        subsets = sorted({s.subset for s in candidates})
        asked = " ".join(f"--{k} {v}" for k, v in (("task", task), ("subset", subset)) if v)
        raise ValueError(f"no {benchmark} split matches {asked}; "
                         f"tasks: {', '.join(tasks)}; subsets: {', '.join(subsets)}")
    return chosen


def _line(r: PushResult) -> str:
    if r.error:
        return f"[red]✗ {shown(r.dataset)}[/]: {shown(r.error)}"
    head = shown(f"{r.dataset}: {r.examples} examples ({r.source or 'mixed'})")
    if r.dry_run:
        return f"• {head} would be pushed"
    notes = [n for n, on in (("dataset created", r.dataset_created),
                             ("dataset description/metadata updated", r.dataset_updated)) if on]
    if r.extra:
        notes.append(f"{r.extra} remote examples not in the split kept (--prune deletes them)")
    if r.deleted:
        notes.append(f"{r.deleted} remote examples deleted")
    tail = f" [dim]({'; '.join(notes)})[/]" if notes else ""
    return (f"[green]✓[/] {head}: created {r.created}, updated {r.updated}, "
            f"unchanged {r.unchanged}{tail}")


def _totals(results: list[PushResult]) -> dict[str, Any]:
    ok = [r for r in results if not r.error]
    totals: dict[str, Any] = {"datasets": len(ok), "failed": len(results) - len(ok),
                              "examples": sum(r.examples for r in ok)}
    for key in ("created", "updated", "unchanged"):  # unknown (None) in a dry run
        counts = [getattr(r, key) for r in ok]
        totals[key] = None if None in counts else sum(counts)
    return totals


def _sources(splits: list[Split], data_dir: Path | None) -> dict[Path, list[Split]]:
    """The splits by the data directory each is read from: ``data_dir``, else the fetched
    data, else each benchmark's bundled samples (said on stderr, as ``tooleval run`` says
    it)."""
    groups: dict[Path, list[Split]] = {}
    for name in dict.fromkeys(s.benchmark for s in splits):
        chosen = [s for s in splits if s.benchmark == name]
        where = data_or_samples(get_benchmark(name), chosen, data_dir)
        groups.setdefault(where, []).extend(chosen)
    return groups


def _push(splits: list[Split], where: Path, *, dry_run: bool, endpoint: str | None,
          prune: bool, on_result: Callable[[PushResult], None]) -> list[PushResult]:
    """Push (or preview) ``splits`` read from ``where``; a LangSmith failure is one line."""
    try:
        if dry_run:
            return preview(splits, where, on_result=on_result)
        return push(splits, where, endpoint=endpoint, prune=prune, on_result=on_result)
    except LangSmithNotConfiguredError as exc:
        raise fail(str(exc)) from None
    except Exception as exc:
        from langsmith.utils import LangSmithError

        if isinstance(exc, LangSmithError):
            raise fail(f"LangSmith push failed: {redact(str(exc))}") from None
        raise


@data_app.command("push")
def push_command(
    benchmark: Annotated[str, typer.Argument(
        help="A registered benchmark, or all.", show_default=True)] = "all",
    task: Annotated[str | None, typer.Option(
        "--task", help="Only this task of the benchmark.")] = None,
    subset: Annotated[str | None, typer.Option(
        "--subset", "--lang", "--category",
        help="Only this subset (a language or a category) of the benchmark.",
    )] = None,
    data_dir: DataDirOption = None,
    endpoint: Annotated[str | None, typer.Option(
        "--endpoint", help="LangSmith API URL (else $LANGSMITH_ENDPOINT, else LangSmith cloud).",
        show_default=False)] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", metavar=FLAG,
        help="Show what would be pushed; contact nothing, need no API key.")] = False,
    prune: Annotated[bool, typer.Option(
        "--prune", metavar=FLAG,
        help="Delete remote examples that are not in the local split.")] = False,
    json_out: JsonOption = False,
) -> None:
    """Create or update one LangSmith dataset per split (named `<benchmark>-<task>-<subset>`).

    Example ids are stable (uuid5 of benchmark/task/subset/index): pushing again only writes
    examples that are new or changed. Needs LANGSMITH_API_KEY (and LANGSMITH_ENDPOINT or
    --endpoint for a self-hosted or regional LangSmith).
    """
    try:
        splits = select_splits(benchmark, task, subset)
    except ValueError as exc:
        raise fail(str(exc)) from None
    groups = _sources(splits, data_dir)
    out = err_console if json_out else console

    def progress(result: PushResult) -> None:
        out.print(_line(result), highlight=False)

    results: list[PushResult] = []
    for where, chosen in groups.items():
        if not json_out:
            verb = "Would push" if dry_run else "Pushing"
            out.print(shown(f"{verb} {len(chosen)} dataset(s) from {where}"), highlight=False)
        results += _push(chosen, where, dry_run=dry_run, endpoint=endpoint, prune=prune,
                         on_result=progress)
    totals = _totals(results)
    if json_out:
        dirs = sorted({str(where) for where in groups})
        print_json({"data_dir": dirs[0] if len(dirs) == 1 else dirs, "dry_run": dry_run,
                    "totals": totals,
                    "results": [r.model_dump(mode="json") for r in results]})
    elif dry_run:
        out.print(f"{totals['datasets']} dataset(s), {totals['examples']} examples would be "
                  "pushed (nothing was contacted).", highlight=False)
    else:
        out.print(f"Done: {totals['datasets']} dataset(s), created {totals['created']}, "
                  f"updated {totals['updated']}, unchanged {totals['unchanged']}.",
                  highlight=False)
    if totals["failed"]:
        raise typer.Exit(1)
