"""``tooleval build ultratool``: build a new UltraTool ``test.json`` from seed queries with a chat
model (the paper's §2 pipeline, :mod:`tooleval_agents.graphs.ultratool.build`). Registered by
:meth:`UltraToolBenchmark.add_commands`."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from tooleval_agents.cli.base import (
    FLAG,
    CacheOption,
    JsonOption,
    MaxConcurrencyOption,
    ProgressOption,
    console,
    err_console,
    error_text,
    fail,
    handle_errors,
    print_json,
)
from tooleval_agents.errors import ToolevalError
from tooleval_agents.results.rescore import parse_options
from tooleval_agents.terminal import shown
from tooleval_agents.ultratool.records import Lang

if TYPE_CHECKING:
    from tooleval_agents.ultratool.construction import BuildSummary

LANGS: tuple[Lang, ...] = ("en", "zh")
MAX_TOKENS = 4096
"""Default answer cap (the longest stage writes a plan with a call per step)."""


def _model(spec: str, kwargs: dict[str, Any], cache: bool, max_attempts: int,
           timeout: float) -> Any:
    """The chat model the pipeline asks, wrapped as a run wraps it
    (:func:`~tooleval_agents.models.specs.pipeline_model`)."""
    from tooleval_agents.models.retry import RetryPolicy
    from tooleval_agents.models.specs import pipeline_model  # deferred: LangChain

    return pipeline_model(spec, kwargs, cache=cache, max_tokens=MAX_TOKENS,
                          policy=RetryPolicy(max_attempts=max_attempts, timeout=timeout))


def build(
    queries: Annotated[Path, typer.Option(
        "--queries", help="Seed queries: JSON Lines of {query, id?, domain?, tools?} (tools = "
        "skeletons the query is expected to need), or text with one query per line.",
        show_default=False)],
    lang: Annotated[str, typer.Option("--lang", help="en or zh (the prompts' language).",
                                      show_default=False)],
    model: Annotated[str, typer.Option("--model", help="The chat model (provider:model).",
                                       show_default=False)],
    out: Annotated[Path, typer.Option(
        "--out", help="The test.json to write (JSON Lines); its journal, "
        "<out>.journal.jsonl, makes a re-run resume.", show_default=False)],
    model_arg: Annotated[list[str] | None, typer.Option(
        "--model-arg", help="init_chat_model argument KEY=VALUE (repeatable), e.g. "
        "--model-arg temperature=0 --model-arg base_url=http://...")] = None,
    expand: Annotated[bool, typer.Option(
        "--expand/--no-expand", metavar=FLAG,
        help="Add 2 generalised and 2 complicated rewrites of each "
        "seed query (paper §2.2).")] = True,
    merge: Annotated[bool, typer.Option(
        "--merge/--no-merge", metavar=FLAG,
        help="Merge similar tools across samples (paper §2.3).")] = True,
    merge_similarity: Annotated[float, typer.Option(
        "--merge-similarity", min=0, max=100, help="Look-alike score (0-100, name and "
        "description) from which tools are merged.")] = 90.0,
    retry_failed: Annotated[bool, typer.Option(
        "--retry-failed", metavar=FLAG,
        help="Ask again about queries whose answers were unusable (else "
        "kept as failed; with the cache on, the same answers come back).")] = False,
    max_concurrency: MaxConcurrencyOption = 8,
    max_attempts: Annotated[int, typer.Option(
        "--max-attempts", min=1, help="Tries per model call on 429/5xx/timeouts/resets.")] = 6,
    timeout: Annotated[float, typer.Option(
        "--timeout", min=0.001, help="Seconds a model call may take.")] = 300.0,
    cache: CacheOption = True,
    progress: ProgressOption = None,
    json_out: JsonOption = False,
) -> None:
    """Build a new UltraTool test.json from seed queries with a chat model: rewrite the queries
    (generalise, complicate), plan each as a tree, create the missing tools, refine the plan,
    annotate tool calls with <...> references, check every call on the simulated tools, merge
    similar tools. `tooleval data build ultratool --task all --raw OUT` then makes the six test
    sets.

    Re-running the same command resumes from the journal: finished queries are skipped.
    Exit status: 0 when no query is left to retry (queries with unusable answers are reported
    as failed); 3 when the model could not be asked about some (run again to retry them)."""
    from tooleval_agents.graphs.ultratool.build_run import build_ultratool  # deferred: LangGraph
    from tooleval_agents.ultratool.construction import read_queries  # deferred: not for a run

    if lang not in LANGS:
        raise fail(f"unknown language {lang!r}: choose en or zh", 2)
    if not queries.is_file():
        raise fail(f"--queries {queries}: no such file", 2)
    the_lang: Lang = lang
    try:
        seeds = read_queries(queries)
        kwargs = parse_options(model_arg or [])
        chat = _model(model, kwargs, cache, max_attempts, timeout)
    except (ToolevalError, OSError) as exc:  # the data or the provider's client
        raise handle_errors(exc) from exc
    except ValueError as exc:  # a bad --model or --model-arg: a usage error
        raise fail(error_text(exc), 2) from None
    with _phase_bars(sys.stderr.isatty() if progress is None else progress) as on_progress:
        try:
            summary = asyncio.run(build_ultratool(
                seeds, chat, the_lang, out, expand=expand, merge=merge,
                merge_similarity=merge_similarity, concurrency=max_concurrency,
                retry_failed=retry_failed, progress=on_progress))
        except (ToolevalError, OSError) as exc:
            raise handle_errors(exc) from exc
    if json_out:
        print_json(summary.model_dump(mode="json"))
    else:
        _print(summary)
    if summary.errors:
        raise typer.Exit(3)


@contextlib.contextmanager
def _phase_bars(show: bool) -> Iterator[Callable[[str, int, int], None]]:
    """A progress callback ``(phase, done, total)`` drawing one bar per phase while open."""
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeRemainingColumn(), console=err_console, disable=not show,
                  transient=True) as bar:
        tasks: dict[str, Any] = {}

        def on_progress(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(phase, total=total)
            bar.update(tasks[phase], completed=done, total=total)

        yield on_progress


def _print(summary: BuildSummary) -> None:
    console.print(shown(
        f"wrote {summary.out}: {summary.built} samples built from {summary.queries} queries "
        f"({summary.seeds} seeds); {summary.failed} failed, {summary.errors} errors (to "
        f"retry), {summary.resumed} taken from the journal; {summary.merged_tools} tools "
        "merged"), highlight=False)
    if summary.failures_by_stage:
        console.print(shown("not built, by stage: " + ", ".join(
            f"{k}={v}" for k, v in sorted(summary.failures_by_stage.items()))), highlight=False)
    for failure in summary.failures:
        console.print(f"  [dim]{shown(failure.key)}[/] {failure.status} at {failure.stage}: "
                      f"{shown(failure.reason or '')}", highlight=False)
    for note in summary.merge_notes:
        console.print(f"  [dim]merge:[/] {shown(note)}", highlight=False)
    console.print(shown(f"journal: {summary.journal}; test sets: tooleval data build "
                        f"ultratool --task all --raw {summary.out} --lang ... --out DIR"),
                  highlight=False)
