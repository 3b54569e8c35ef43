"""UltraTool's own commands: ``tooleval data build ultratool`` rebuilds the two test sets
upstream never published and derives the four it did from any ``test.json``; ``tooleval score
ultratool`` re-scores answers produced anywhere; ``tooleval judge agreement`` correlates a live
judge with the recorded GPT-4 judgments.
Registered by :meth:`UltraToolBenchmark.add_commands`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from tooleval_agents.cli.base import (
    DataDirOption,
    JsonOption,
    MaxConcurrencyOption,
    NBootOption,
    ProgressOption,
    console,
    data_or_samples,
    err_console,
    fail,
    handle_errors,
    print_json,
)
from tooleval_agents.cli.prediction_files import (
    PREDICTIONS_HELP,
    FilesArgument,
    ScoredFile,
    prediction_files,
    score_files,
)
from tooleval_agents.contracts import format_metric
from tooleval_agents.data.datadir import resolve_data_dir
from tooleval_agents.errors import DatasetMissingError, ToolevalError
from tooleval_agents.registry import get_benchmark
from tooleval_agents.results.rescore import parse_options
from tooleval_agents.terminal import shown
from tooleval_agents.ultratool.paths import prediction_split, raw_path
from tooleval_agents.ultratool.records import Lang, UltraToolTask

if TYPE_CHECKING:  # annotations only: the metrics load when a command runs
    from tooleval_agents.evaluators.ultratool.scoring import TaskReport

LANGS: tuple[Lang, ...] = ("en", "zh")


def build(
    task: Annotated[str, typer.Option(
        "--task", help="A test set to make from a test.json-schema file: tool_selection or "
        "tool_creation_awareness (never published: rebuilt), planning, tool_usage_awareness, "
        "tool_usage or tool_creation (derived by the published rules), or all (then --out is "
        "a directory that gets <task>.json for each).", show_default=False)],
    lang: Annotated[str, typer.Option("--lang", help="en or zh.", show_default=False)],
    out: Annotated[Path, typer.Option("--out", help="File to write (JSON Lines, plus "
                                      "`<out>.meta.json`); a directory with --task all.",
                                      show_default=False)],
    seed: Annotated[int, typer.Option("--seed", help="Seed of the interference tools, the "
                                      "removals and the toolset order.")] = 0,
    data_dir: DataDirOption = None,
    raw: Annotated[Path | None, typer.Option(
        "--raw", help="Build from this test.json-schema file (e.g. the dev set, or one made "
        "by `tooleval build ultratool`) instead of the data dir's test.json.",
        show_default=False)] = None,
    tool_creation: Annotated[Path | None, typer.Option(
        "--tool-creation", help="Line-aligned tool_creation.json whose removed tools creation "
        "awareness reuses (default: the data dir's, when it fits; else seeded removal).",
        show_default=False)] = None,
    json_out: JsonOption = False,
) -> None:
    """Make UltraTool test sets from a test.json-schema file: rebuild the two missing upstream
    (toolsets of 8, seeded, reproducible) or derive the four published ones."""
    # Deferred: the builders (rapidfuzz) are for this command, not for every `tooleval` call.
    from tooleval_agents.ultratool.derive import DERIVED, write_derived
    from tooleval_agents.ultratool.rebuild import REBUILT, upstream_removal, write_rebuilt

    tasks: tuple[str, ...] = (*DERIVED, *REBUILT) if task == "all" else (task,)
    if task != "all" and task not in (*REBUILT, *DERIVED):
        raise fail(f"unknown task {task!r}: choose {', '.join((*DERIVED, *REBUILT))} or all", 2)
    if lang not in LANGS:
        raise fail(f"unknown language {lang!r}: choose en or zh", 2)
    rlang: Lang = lang
    written: dict[str, dict[str, Any]] = {}
    try:
        if raw is None:
            resolved = resolve_data_dir(data_dir)
            raw = raw_path(resolved, rlang)
            if not raw.is_file():
                raise DatasetMissingError("ultratool", raw, resolved)
            if tool_creation is None and "tool_creation_awareness" in tasks:
                tool_creation = upstream_removal(raw)
        for name in tasks:
            target = out / f"{name}.json" if task == "all" else out
            if name in DERIVED:
                # tool_creation's reduced toolset is seeded creation awareness's.
                written[str(target)] = write_derived(name, raw, rlang, target,
                                                     seed)
            else:
                written[str(target)] = write_rebuilt(name, raw, rlang, target, seed,  # type: ignore[arg-type]
                                                     removed=tool_creation)
    except (ToolevalError, OSError, ValueError) as exc:
        raise handle_errors(exc) from exc
    if json_out:
        print_json({"out": str(out), **next(iter(written.values()))} if task != "all"
                   else {"out": str(out), "files": written})
        return
    for path, meta in written.items():
        counts = ", ".join(f"{k}={v}" for k, v in meta["counts"].items())
        console.print(shown(f"wrote {path} ({counts}); provenance: {path}.meta.json"),
                      highlight=False)


def score(
    predictions: Annotated[list[Path] | None, typer.Option(
        "--predictions", help="The published format (JSON Lines of {data, \"init output\"}), "
        "JSON Lines of {index, output}, or a JSON array of output strings; aligned with the "
        "test set." + PREDICTIONS_HELP, show_default=False)] = None,
    more: FilesArgument = None,
    task: Annotated[UltraToolTask | None, typer.Option(
        "--task", help="The UltraTool dimension (default: each file's name, as published: "
        ".../tool_usage.json).", show_default=False)] = None,
    lang: Annotated[Lang | None, typer.Option(
        "--lang", help="en or zh (default: each file's folder, as published: "
        "English-dataset/..., Chinese-dataset/...).", show_default=False)] = None,
    judgments: Annotated[Path | None, typer.Option(
        "--judgments", help="planning / tool_creation: recorded judge outputs to replay "
        "(e.g. the published eval/planning_eval.json); one predictions file only.")] = None,
    parser: Annotated[Literal["robust", "official"], typer.Option(
        "--parser", help="robust (default): safe parsing with tokenizer-aware repairs; "
        "official: the paper's post-processing, defects included, to compare with its "
        "tables.")] = "robust",
    data_dir: DataDirOption = None,
    progress: ProgressOption = None,
    json_out: JsonOption = False,
) -> None:
    """Score UltraTool answers: awareness / selection accuracy (global, local), tool-usage
    Levenshtein, JSON-format rate, error kinds; planning and tool creation via the judge.
    Several files or a glob: one result per file, each file's task and language from its
    path unless --task / --lang say them for all."""
    from tooleval_agents.evaluators.ultratool.scoring import load_predictions, score_task

    paths, many = prediction_files(predictions, more)
    if many and judgments is not None:
        # Recorded judgments are of one file's plans: pairing them with another's is wrong.
        raise fail("--judgments replays one predictions file's judgments: score that file "
                   "on its own", code=2)
    from tooleval_agents.ultratool.loaders import load_task  # deferred: the rebuilder

    root = _score_data(paths, task, lang, data_dir)
    records: dict[tuple[str, str], list[Any]] = {}  # each test set read once for all files

    def run(path: Path, split: tuple[UltraToolTask, Lang]) -> TaskReport:
        the_task, the_lang = split
        if split not in records:
            # Each record's official dict, made once: the alignment check and the scorer
            # read it.
            records[split] = [r.official() for r in load_task(root, the_task, the_lang)]
        outputs = load_predictions(path, records[split])
        return score_task(the_task, records[split], outputs, lang=the_lang, parser=parser,
                          judgments=judgments)

    if many:
        def score_one(path: Path) -> ScoredFile:
            split = _split_of(path, task, lang)
            report = run(path, split)
            return ScoredFile(labels={"task": split[0], "lang": split[1]}, json=report.summary(),
                              metrics=dict(report.metrics), n=report.counts.samples,
                              notes=list(report.notes))

        score_files(paths, score_one, title="UltraTool", json_out=json_out, progress=progress)
        return
    try:
        split = _split_of(paths[0], task, lang)
    except ValueError as exc:
        raise fail(str(exc), code=2) from None
    try:
        report = run(paths[0], split)
    except (ToolevalError, OSError, ValueError) as exc:
        raise handle_errors(exc) from exc
    except NotImplementedError as exc:
        raise fail(str(exc)) from exc
    if json_out:
        print_json(report.summary())
        return
    _show_report(report, split)


def _score_data(paths: list[Path], task: UltraToolTask | None, lang: Lang | None,
                data_dir: Path | None) -> Path:
    """The data directory the score command reads for its files' splits: as ``tooleval run``
    reads it (the bundled samples when no data was named or fetched, said on stderr)."""
    splits = []
    for path in paths:
        try:
            splits.append(_split_of(path, task, lang))
        except ValueError:  # said when that file is scored
            continue
    bench = get_benchmark("ultratool")
    return data_or_samples(bench, [bench.split(*s) for s in dict.fromkeys(splits)], data_dir)


def _split_of(path: Path, task: UltraToolTask | None,
              lang: Lang | None) -> tuple[UltraToolTask, Lang]:
    """The task and language of a predictions file: the options', else its published path's."""
    named_task, named_lang = prediction_split(path)
    found_task, found_lang = task or named_task, lang or named_lang
    if found_task is None or found_lang is None:
        unknown = [o for o, v in (("--task", found_task), ("--lang", found_lang)) if v is None]
        raise ValueError(f"{path}: its path does not tell its "
                         f"{' or '.join(o[2:] for o in unknown)} (published files are "
                         f"<English|Chinese>-dataset/<model>/<task>.json): pass "
                         f"{' and '.join(unknown)}")
    return found_task, found_lang


def _show_report(report: TaskReport, split: tuple[str, str]) -> None:
    table = Table(title=shown(f"UltraTool {split[0]} ({split[1]})"))
    table.add_column("metric")
    table.add_column("value", justify="right")
    for name, value in report.metrics.items():
        table.add_row(shown(name), format_metric(value, report.counts.samples))
    console.print(table)
    counts = report.counts.model_dump()
    console.print(shown(f"parser: {report.parser}; " + ", ".join(
        f"{k}: {v}" for k, v in counts.items() if v not in ({}, 0))), highlight=False)
    for note in report.notes:
        console.print(f"[dim]{shown(note)}[/]")


def agreement(
    judge: Annotated[str, typer.Option("--judge", help="The judge to check (provider:model).",
                                       show_default=False)],
    lang: Annotated[str, typer.Option("--lang", help="en or zh.", show_default=False)],
    judgments: Annotated[Path | None, typer.Option(
        "--judgments", help="Recorded planning judgments (default: the published GPT-4 ones of "
        "the language: gpt-4/eval/planning_eval.json in its folder under predictions/ in "
        "the data directory).")] = None,
    judge_arg: Annotated[list[str] | None, typer.Option(
        "--judge-arg", help="init_chat_model argument KEY=VALUE for the judge (repeatable), "
        "e.g. --judge-arg base_url=http://127.0.0.1:8765/v1.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Plans to judge (the first N "
                                       "usable ones).")] = 50,
    prompts: Annotated[str | None, typer.Option(
        "--prompts", help="The live judge's prompts: ours (default), or official (the "
        "templates the recorded GPT-4 judgments were made with, from the fetched "
        "evaluation/config.py).", show_default=False)] = None,
    max_concurrency: MaxConcurrencyOption = 8,
    n_boot: NBootOption = 2000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the resampling.")] = 0,
    data_dir: DataDirOption = None,
    json_out: JsonOption = False,
) -> None:
    """Judge the plans of recorded judgments again with --judge and correlate the two judges
    per dimension: Pearson and Spearman with bootstrap 95% intervals, mean absolute difference
    (the paper's check of GPT-4 against people, §4.4)."""
    from tooleval_agents.evaluators.ultratool.judge import ultratool_judge  # deferred: LangChain
    from tooleval_agents.models.specs import judge_model  # deferred: LangChain

    if lang not in LANGS:
        raise fail(f"--lang must be en or zh, got {lang!r}", code=2)
    prompts = prompts or "ours"
    if prompts not in ("ours", "official"):
        raise fail(f"--prompts must be ours or official, got {prompts!r}", code=2)
    try:
        kwargs = parse_options(judge_arg or [])
        folder = {"en": "English-dataset", "zh": "Chinese-dataset"}[lang]
        root = resolve_data_dir(data_dir)
        path = judgments or (root / "ultratool" / "predictions" / folder / "gpt-4" / "eval"
                             / "planning_eval.json")
        if not Path(path).is_file():
            if judgments is not None:
                raise FileNotFoundError(f"--judgments: no such file {path}")
            raise DatasetMissingError("ultratool", Path(path), root)
        live = ultratool_judge("planning", lang=lang, model=judge_model(judge, kwargs),
                               judgments=Path(path), data_dir=root,
                               prompts="official" if prompts == "official" else "ours")
        with Progress(TextColumn("judging"), BarColumn(), MofNCompleteColumn(),
                      TimeRemainingColumn(), console=err_console,
                      disable=not err_console.is_terminal, transient=True) as bar:
            task = bar.add_task("judging", total=None)
            report = asyncio.run(live.agreement(
                limit=limit, concurrency=max_concurrency, n_boot=n_boot, seed=seed,
                on_judged=lambda done, total: bar.update(task, completed=done, total=total)))
    except (ToolevalError, OSError, KeyError, ValueError) as exc:
        raise handle_errors(exc) from exc
    if json_out:
        print_json(report.model_dump(mode="json"))
        return
    table = Table(title=shown(f"{judge} vs the recorded judgments: {report.judged} plans, "
                              f"{report.live_errors} without a usable live judgment"))
    for column in ("dimension", "n", "Pearson", "95% CI", "Spearman", "95% CI", "|diff|"):
        table.add_column(column, justify="left" if column == "dimension" else "right")

    def ci(value: list[float] | None) -> str:
        return shown(f"[{value[0]:.2f}, {value[1]:.2f}]") if value else "n/a"

    for key, c in report.dimensions.items():
        table.add_row(shown(key), str(c.n), format_metric(c.pearson), ci(c.pearson_ci),
                      format_metric(c.spearman), ci(c.spearman_ci),
                      format_metric(c.mean_abs_diff))
    console.print(table)
