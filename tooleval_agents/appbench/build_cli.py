"""AppBench's construction command, ``tooleval build appbench``: new samples from SGD dialogues
(:mod:`tooleval_agents.graphs.appbench.build`). Registered by
:meth:`AppBenchBenchmark.add_commands`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from tooleval_agents.appbench.names import CATEGORIES, Category
from tooleval_agents.cli.base import (
    FLAG,
    CacheOption,
    JsonOption,
    MaxConcurrencyOption,
    ProgressOption,
    console,
    fail,
    handle_errors,
    print_json,
)
from tooleval_agents.cli.run import parse_pairs
from tooleval_agents.errors import ToolevalError
from tooleval_agents.terminal import shown

if TYPE_CHECKING:  # annotations only: LangChain loads when the command runs
    from langchain_core.language_models import BaseChatModel

    from tooleval_agents.graphs.appbench.build import BuildSummary


def chat_model(spec: str, kwargs: dict[str, object], *, cache: bool) -> BaseChatModel:
    """``scripted`` (offline) or a provider model at temperature 0 unless told otherwise,
    wrapped as a run wraps it (:func:`~tooleval_agents.models.specs.pipeline_model`)."""
    from tooleval_agents.appbench.build_models import SCRIPTED, ScriptedBuildModel
    from tooleval_agents.models.specs import pipeline_model  # deferred: LangChain

    if spec == SCRIPTED:
        return ScriptedBuildModel()

    return pipeline_model(spec, {"temperature": 0, **kwargs}, cache=cache)


def build_appbench(
    sgd: Annotated[Path, typer.Option(
        "--sgd", help="SGD directory holding <split>/dialogues_*.json (`tooleval data fetch "
        "sgd --include 'train/dialogues_*'` puts them in the data directory's sgd/).",
        show_default=False)],
    out: Annotated[Path, typer.Option(
        "--out", help="Output file: a JSON array in the official test-file format (each "
        "sample also has 'build': provenance and judge scores). Progress is kept beside it "
        "in OUT.build.jsonl; run the same command again to resume.", show_default=False)],
    split: Annotated[Literal["train", "dev", "test"], typer.Option(
        "--split", help="SGD split.")] = "train",
    model: Annotated[str | None, typer.Option(
        "--model", help="Writer model: provider:model, or 'scripted' (offline).",
        show_default=False)] = None,
    judge: Annotated[str | None, typer.Option(
        "--judge", help="Quality judge (default: the --model).", show_default=False)] = None,
    model_arg: Annotated[list[str] | None, typer.Option(
        "--model-arg", help="init_chat_model argument KEY=VALUE for both models "
        "(repeatable).")] = None,
    category: Annotated[list[str] | None, typer.Option(
        "--category", help="Keep paths of these categories: ss, sm, ms, mm (repeatable; "
        "default all).",
        show_default=False)] = None,
    threshold: Annotated[float, typer.Option(
        "--threshold", min=1.0, max=10.0,
        help="Keep an instruction whose mean judge score (fluency, diversity, consistency; "
        "1-10) is at least this.")] = 6.0,
    paths_only: Annotated[bool, typer.Option(
        "--paths-only", metavar=FLAG,
        help="Stop after path extraction: every path, empty 'input', no "
        "model.")] = False,
    compose_ms: Annotated[int, typer.Option(
        "--compose-ms", min=0, help="Also join single-call dialogues of different apps into "
        "up to N MS paths, as the official MS set did.")] = 0,
    limit: Annotated[int | None, typer.Option(
        "--limit", min=1, help="At most N paths.", show_default=False)] = None,
    max_concurrency: MaxConcurrencyOption = 8,
    cache: CacheOption = True,
    progress: ProgressOption = None,
    json_out: JsonOption = False,
) -> None:
    """Build AppBench samples from SGD dialogues: extract each dialogue's planning path,
    have --model write one instruction per path, keep those the judge scores at least
    --threshold. An --out name with {category} writes one file per category: with
    DIR/appbench/data/test/test_{category}.json, `tooleval run appbench --data-dir DIR` and
    `tooleval score appbench --data-dir DIR` read the built sets. Exit 1 when paths failed
    with a provider error (run again to retry them), 130 when interrupted (run again to
    resume)."""
    from tooleval_agents.graphs.appbench.build import BuildSettings, run_build

    chosen = _checked(sgd, model, paths_only, category)
    try:
        kwargs = parse_pairs(model_arg, "--model-arg")
        writer = judge_model = None
        if not paths_only and model is not None:
            writer = chat_model(model, kwargs, cache=cache)
            judge_model = (writer if judge in (None, model)
                           else chat_model(judge, kwargs, cache=cache))
        settings = BuildSettings(
            sgd_dir=sgd, split=split, out=out, threshold=threshold, paths_only=paths_only,
            categories=chosen,
            compose_ms=compose_ms, limit=limit, max_concurrency=max_concurrency)
        summary = run_build(settings, writer, judge_model,
                            progress=sys.stderr.isatty() if progress is None else progress)
    except (ToolevalError, OSError, ValueError) as exc:
        raise handle_errors(exc) from exc
    if json_out:
        print_json(summary.model_dump())
    else:
        _print_summary(summary, paths_only)
    if summary.statuses.get("errors"):
        raise fail(f"{summary.statuses['errors']} paths failed with a provider error: run the "
                   "same command again to retry them")


def _checked(sgd: Path, model: str | None, paths_only: bool,
             category: list[str] | None) -> tuple[Category, ...]:
    """The categories to keep; a bad argument exits 2 before anything runs, as every
    command."""
    if not sgd.is_dir():
        raise fail(f"--sgd {sgd}: not a directory", 2)
    if model is None and not paths_only:
        raise fail("--model is required (or --paths-only)", 2)
    wrong = sorted(set(category or ()) - set(CATEGORIES))
    if wrong:
        raise fail(f"--category {wrong[0]}: use one of {', '.join(CATEGORIES)}", 2)
    return tuple(c for c in CATEGORIES if c in category) if category else CATEGORIES


def _print_summary(summary: BuildSummary, paths_only: bool) -> None:
    skipped = ", ".join(f"{k}: {v}" for k, v in sorted(summary.skipped.items())) or "none"
    console.print(shown(f"{summary.paths} paths ({_counts(summary.by_category)}); dialogues "
                        f"without a path: {skipped}"))
    if not paths_only:
        console.print(shown(f"judged: {_counts(summary.statuses)} ({summary.reused} from an "
                            "earlier run)"))
    console.print(shown(f"wrote {summary.written} samples to {summary.out}"))


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(counts.items())) or "none"
