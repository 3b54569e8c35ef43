"""``tooleval export appbench``: AppBench samples (official or built) as fine-tuning data
(:mod:`tooleval_agents.graphs.appbench.export`). Registered by
:meth:`AppBenchBenchmark.add_commands`.

Each benchmark adds its own ``export`` subcommand: what a prompt and an answer are is the
benchmark's business, so the core ``export`` group stays a plain container."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import typer

from tooleval_agents.appbench.loaders import load_file
from tooleval_agents.cli.base import FLAG, console, fail, handle_errors
from tooleval_agents.errors import ToolevalError
from tooleval_agents.terminal import shown


def export_appbench(
    source: Annotated[Path, typer.Option(
        "--from", help="Samples in the official test-file format: a file built by `tooleval "
        "build appbench`, or an official test_<category>.json.", show_default=False)],
    out: Annotated[Path, typer.Option("--out", help="Output JSON Lines file.",
                                      show_default=False)],
    format_: Annotated[Literal["chat"], typer.Option(
        "--format", help="chat: one {\"messages\": [user, assistant]} object per line "
        "(OpenAI fine-tuning and Hugging Face chat datasets).")] = "chat",
    prompt: Annotated[Literal["hierarchical", "flat"], typer.Option(
        "--prompt", help="hierarchical: the app-selection and the planning prompt (the "
        "latter with the gold apps' APIs) as two conversations; flat: the planning prompt "
        "with all apps.")] = "hierarchical",
    selection: Annotated[bool, typer.Option(
        "--selection/--no-selection", metavar=FLAG, help="hierarchical: include the app-selection "
        "conversation.")] = True,
) -> None:
    """Write AppBench samples as fine-tuning conversations: our prompt as the user turn, the
    gold call lines as the assistant's answer."""
    from tooleval_agents.graphs.appbench.export import chat_records

    if not source.is_file():
        raise fail(f"--from {source}: no such file", 2)
    try:
        samples = load_file(source, "mm")
        records = list(chat_records(samples, prompt, selection=selection))
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".tmp")
        with tmp.open("w", encoding="utf-8") as f:
            for record in records:
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
        tmp.replace(out)
    except (ToolevalError, OSError, ValueError) as exc:
        raise handle_errors(exc) from exc
    console.print(shown(f"wrote {len(records)} {format_} conversations from {len(samples)} "
                        f"samples to {out}"))
