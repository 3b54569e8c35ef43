"""``tooleval score --run DIR``: re-score a finished run's stored outputs.

A callback of the ``score`` group (``invoke_without_command``), so ``tooleval score --run DIR``
re-scores a run while the group's subcommands (``tooleval score <benchmark> ...``) keep
working. Writes
``summary.rescored.json`` next to the run's ``summary.json`` (which is kept), see
:mod:`tooleval_agents.results.rescore`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from tooleval_agents.cli.base import (
    FLAG,
    DataDirOption,
    JsonOption,
    ScoringOption,
    console,
    err_console,
    fail,
    handle_errors,
    print_json,
    score_app,
)
from tooleval_agents.contracts import format_metric
from tooleval_agents.errors import ToolevalError
from tooleval_agents.registry import with_profile
from tooleval_agents.results.rescore import (
    RESCORED_SUMMARY,
    check_rescore_options,
    parse_options,
    rescore_run,
)
from tooleval_agents.terminal import shown


def subcommands() -> list[str]:
    """The names of the ``score`` group's registered subcommands (Typer derives a missing
    name from the function: ``score_mine`` -> ``score-mine``)."""
    names = []
    for info in score_app.registered_commands:
        name = info.name or (info.callback.__name__.replace("_", "-")
                             if info.callback is not None else None)
        if name:
            names.append(name)
    names += [g.name for g in score_app.registered_groups if g.name]
    return sorted(names)


@score_app.callback(invoke_without_command=True)
def score_run(
    ctx: typer.Context,
    run: Annotated[list[Path] | None, typer.Option(
        "--run", help="Re-score this finished run directory from its stored outputs, with the "
        "current evaluators and no agent model (repeatable). Writes summary.rescored.json.",
        show_default=False)] = None,
    option: Annotated[list[str] | None, typer.Option(
        "--option", "-O", help="With --run: scoring option KEY=VALUE overriding the run's "
        "(e.g. graph=true); repeatable.", show_default=False)] = None,
    scoring: ScoringOption = None,
    judge: Annotated[str | None, typer.Option(
        "--judge", help="With --run: judge model (provider:model) to re-judge judged tasks; "
        "without it judge metrics are not recomputed.", show_default=False)] = None,
    judge_arg: Annotated[list[str] | None, typer.Option(
        "--judge-arg", help="With --judge: init_chat_model argument KEY=VALUE (repeatable), e.g. "
        "--judge-arg base_url=http://127.0.0.1:8765/v1.", show_default=False)] = None,
    no_write: Annotated[bool, typer.Option(
        "--no-write", metavar=FLAG,
        help="With --run: print only, do not write summary.rescored.json.")]
        = False,
    data_dir: DataDirOption = None,
    json_out: JsonOption = False,
) -> None:
    """Re-score a run directory (``--run``) or run a subcommand."""
    if ctx.invoked_subcommand is not None:
        if run:
            raise fail("--run re-scores a run directory: it does not combine with "
                       f"'score {ctx.invoked_subcommand}'", code=2)
        return
    if not run:
        console.print(ctx.get_help())
        names = ", ".join(subcommands()) or "none registered"
        raise fail(f"give --run DIR, or a subcommand ({names})", code=2)

    out: list[dict[str, Any]] = []
    try:
        options = with_profile(parse_options(option or []), scoring)
        judge_kwargs = parse_options(judge_arg or [])
        if judge_kwargs and judge is None:
            raise ValueError("--judge-arg needs --judge")
        check_rescore_options(run, options)
        for path in run:
            summary = rescore_run(path, judge=judge, scoring_options=options,
                                  data_dir=data_dir, write=not no_write,
                                  judge_kwargs=judge_kwargs)
            out.append({"run": str(path),
                        "written": None if no_write else str(path / RESCORED_SUMMARY),
                        "summary": summary.model_dump(mode="json")})
    except (ToolevalError, OSError, KeyError, ValueError) as exc:
        raise handle_errors(exc) from exc
    if json_out:
        print_json(out if len(out) > 1 else out[0])
        return
    for item in out:
        s = item["summary"]
        table = Table(title=shown(f"{s['experiment']} (re-scored)"))
        for col, justify in (("metric", "left"), ("stored", "right"), ("re-scored", "right"),
                             ("change", "right")):
            table.add_column(col, justify=justify)  # type: ignore[arg-type]
        before: dict[str, float | None] = s["original_metrics"]
        n = s["counts"].get("scored")
        for name, value in s["metrics"].items():
            old = before.get(name)
            change = ("" if old is None or value is None or abs(value - old) < 1e-9
                      else f"{value - old:+.2f}")
            table.add_row(shown(name), "–" if name not in before else format_metric(old, n),
                          format_metric(value, n), change)
        console.print(table)
        counts = ", ".join(f"{k}={v}" for k, v in s["counts"].items())
        console.print(shown(f"{counts}; {s['changed']} example score(s) changed; options: "
                            f"{s['scoring_options'] or '{}'}"), highlight=False)
        for note in s["notes"]:
            err_console.print(f"[yellow]note:[/] {shown(note)}", highlight=False)
        if item["written"]:
            console.print(shown(f"wrote {item['written']}"), highlight=False)
