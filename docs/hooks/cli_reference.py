"""MkDocs hook: the CLI reference, generated from the Typer app at build time.

A line ``<!-- cli: tooleval data fetch -->`` in a page becomes that command's section: a
heading (anchor ``tooleval-data-fetch``), its help text, its usage line and a table of its
arguments and options, grouped by help panel, each as ``tooleval data fetch --help`` shows it.
A group's section also lists its subcommands. The text comes from the app itself, so it cannot
drift from the code; a marker naming no command fails the build. ``tests/test_docs_reference.py``
checks that every command of the app has a marker on some page.

Only public interfaces of Typer/Click are used (``commands``, ``params``, ``get_help_record``,
``get_usage``), so the hook works across the releases our range admits.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import typer

MARKER = re.compile(r"^<!-- cli: (tooleval(?: [a-z0-9_-]+)*) -->[ \t]*$", re.M)
ROOT = "tooleval"


def app_command() -> Any:
    """The Click command of the wired ``tooleval`` app (every benchmark's commands included)."""
    from tooleval_agents.cli import wired_app

    return typer.main.get_command(wired_app())


def walk(command: Any, path: tuple[str, ...] = (ROOT,)) -> Iterator[tuple[str, Any]]:
    """Every command path of the app (groups included) with its command, hidden ones left out."""
    yield " ".join(path), command
    for name in sorted(getattr(command, "commands", {}) or {}):
        sub = command.commands[name]
        if not getattr(sub, "hidden", False):
            yield from walk(sub, (*path, name))


def anchor(path: str) -> str:
    """The heading id of a command's section: ``tooleval data fetch`` -> ``tooleval-data-fetch``."""
    return path.replace(" ", "-").replace("_", "-")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _help(command: Any) -> str:
    text = (command.help or "").split("\f")[0].strip()
    return text.replace("\b\n", "")


def _params(command: Any, ctx: Any) -> list[str]:
    panels: dict[str, list[tuple[str, str]]] = {}
    for param in command.params:
        if getattr(param, "hidden", False):
            continue
        record = param.get_help_record(ctx)
        if record is None:  # an argument: Click gives none, Typer its metavar and help
            record = (param.human_readable_name.upper(), "")
        names, text = record
        default = "Arguments" if param.param_type_name == "argument" else "Options"
        panel = getattr(param, "rich_help_panel", None) or default
        panels.setdefault(panel, []).append((names, text))
    lines: list[str] = []
    for panel, rows in panels.items():
        lines += ["", f"**{panel}**", "", "| | |", "|---|---|"]
        lines += [f"| `{_cell(names)}` | {_cell(text)} |" for names, text in rows]
    return lines


def section(path: str, command: Any, level: int = 3) -> str:
    """The Markdown section of one command."""
    ctx = typer.Context(command, info_name=path)
    usage = " ".join(command.get_usage(ctx).split())
    lines = [f"{'#' * level} {path} {{ #{anchor(path)} }}", "", _help(command), "",
             "```text", usage.removeprefix("Usage: "), "```"]
    subcommands = getattr(command, "commands", None)
    if subcommands:
        lines += ["", "| command | |", "|---|---|"]
        for name in sorted(subcommands):
            sub = subcommands[name]
            if getattr(sub, "hidden", False):
                continue
            short = sub.get_short_help_str(limit=200)
            lines.append(f"| [`{path} {name}`](#{anchor(f'{path} {name}')}) | {_cell(short)} |")
    lines += _params(command, ctx)
    return "\n".join(lines) + "\n"


def expand(markdown: str, commands: dict[str, Any]) -> str:
    """The page with each ``<!-- cli: ... -->`` marker replaced by that command's section."""

    def one(match: re.Match[str]) -> str:
        path = match.group(1)
        if path not in commands:
            raise ValueError(f"CLI reference: no command {path!r} (known: {sorted(commands)})")
        return section(path, commands[path])

    return MARKER.sub(one, markdown)


_COMMANDS: dict[str, Any] = {}


def on_page_markdown(markdown: str, **_: Any) -> str:
    """MkDocs event: expand the CLI markers of a page."""
    if not MARKER.search(markdown):
        return markdown
    if not _COMMANDS:
        _COMMANDS.update(walk(app_command()))
    return expand(markdown, _COMMANDS)
