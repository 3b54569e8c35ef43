"""MkDocs hook: the CLI reference, generated from the Typer app at build time.

A line ``<!-- cli: tooleval data fetch -->`` in a page becomes that command's section: a
heading (anchor ``tooleval-data-fetch``), its help text, its usage line and a table of its
arguments and options, grouped by help panel, each as ``tooleval data fetch --help`` shows it.
A group's section also lists its subcommands, each with the first sentence of its help (whole:
never cut). A documentation page the help names (``docs/mcp.md``, ``running.md#exit-statuses``)
becomes a link to it. The tables sit in ``<div class="cli">``, and an option named in a text
in ``<span class="flag">``: docs/stylesheets/extra.css keeps a command's or an option's name on
one line. The text comes from the app itself, so it cannot drift from the
code; a marker naming no command fails the build. ``tests/test_docs_reference.py`` checks that
every command of the app has a marker on some page, ``tests/test_docs_site.py`` the built page.

Only public interfaces of Typer/Click are used (``commands``, ``params``, ``get_help_record``,
``get_usage``), so the hook works across the releases our range admits.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Collection, Iterator
from typing import Any

import typer

MARKER = re.compile(r"^<!-- cli: (tooleval(?: [a-z0-9_-]+)*) -->[ \t]*$", re.M)
ROOT = "tooleval"
PAGE_NAMED = re.compile(r"(?<![\w/.-])(?:docs/)?((?:[\w-]+/)*[\w-]+\.md)(#[\w-]+)?(?![\w/-])")
"""A documentation page named in a help text: ``docs/mcp.md``, ``running.md#exit-statuses``."""
SENTENCE_END = re.compile(r"[.!?](?=\s+[A-Z(`]|\s*$)")
FLAG = re.compile(r"(?<![\w/-])(--?[A-Za-z][\w-]*)")
"""An option named in a help text (``--tool-faults``, ``-O``): kept on one line."""


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


def first_sentence(text: str) -> str:
    """The first sentence of a help text, whole (a full stop inside brackets or code is not
    an end); the first paragraph when no sentence ends in it."""
    paragraph = " ".join(text.split("\n\n")[0].split())
    depth, code = 0, False
    for i, char in enumerate(paragraph):
        if char == "`":
            code = not code
        elif not code and char in "([{":
            depth += 1
        elif not code and char in ")]}":
            depth = max(0, depth - 1)
        elif not code and depth == 0 and SENTENCE_END.match(paragraph, i):
            return paragraph[:i + 1]
    return paragraph


def _outside_code(text: str, change: Callable[[str], str]) -> str:
    parts = text.split("`")
    for i in range(0, len(parts), 2):  # the even parts are outside code spans
        parts[i] = change(parts[i])
    return "`".join(parts)


def linked(text: str, page: str, pages: Collection[str]) -> str:
    """The text with each documentation page it names outside code (one of ``pages``, paths in
    docs/) as a Markdown link relative to ``page``; other ``.md`` names (``report.md``) stay
    text."""

    def one(match: re.Match[str]) -> str:
        target, anchor = match.group(1), match.group(2) or ""
        if target not in pages:
            return match.group(0)
        href = posixpath.relpath(target, posixpath.dirname(page) or ".")
        return f"[{match.group(0)}]({href}{anchor})"

    return _outside_code(text, lambda part: PAGE_NAMED.sub(one, part))


def flags(text: str) -> str:
    """The text with each option it names, outside code, in ``<span class="flag">`` (CSS: no
    line break inside, where a browser would break ``--tool-faults`` after its hyphen)."""
    return _outside_code(text, lambda part: FLAG.sub(r'<span class="flag">\1</span>', part))


def _table(head: tuple[str, str], rows: list[str]) -> list[str]:
    return ['<div class="cli" markdown>', "", f"| {head[0]} | {head[1]} |", "|---|---|", *rows,
            "", "</div>"]


def _params(command: Any, ctx: Any, link: Callable[[str], str] = str) -> list[str]:
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
        kind = "argument" if panel == "Arguments" else "option"
        lines += ["", f"**{panel}**", ""]
        lines += _table((kind, "description"),
                        [f"| `{_cell(names)}` | {link(_cell(text))} |" for names, text in rows])
    return lines


def section(path: str, command: Any, level: int = 3, page: str = "reference/cli.md",
            pages: Collection[str] = ()) -> str:
    """The Markdown section of one command, on ``page`` (the pages of the site: ``pages``)."""

    def link(text: str) -> str:
        return flags(linked(text, page, pages))

    ctx = typer.Context(command, info_name=path)
    usage = " ".join(command.get_usage(ctx).split())
    lines = [f"{'#' * level} {path} {{ #{anchor(path)} }}", "", link(_help(command)), "",
             "```text", usage.removeprefix("Usage: "), "```"]
    subcommands = getattr(command, "commands", None)
    if subcommands:
        rows = [f"| [`{path} {name}`](#{anchor(f'{path} {name}')}) | "
                f"{link(_cell(first_sentence(_help(sub))))} |"
                for name, sub in sorted(subcommands.items()) if not getattr(sub, "hidden", False)]
        lines += ["", *_table(("command", "what it does"), rows)]
    lines += _params(command, ctx, link)
    return "\n".join(lines) + "\n"


def expand(markdown: str, commands: dict[str, Any], page: str = "reference/cli.md",
           pages: Collection[str] = ()) -> str:
    """The page with each ``<!-- cli: ... -->`` marker replaced by that command's section;
    ``page`` is the page's path in docs/, ``pages`` those of the site (named pages are linked)."""

    def one(match: re.Match[str]) -> str:
        path = match.group(1)
        if path not in commands:
            raise ValueError(f"CLI reference: no command {path!r} (known: {sorted(commands)})")
        return section(path, commands[path], page=page, pages=pages)

    return MARKER.sub(one, markdown)


_COMMANDS: dict[str, Any] = {}


def on_page_markdown(markdown: str, page: Any, files: Any, **_: Any) -> str:
    """MkDocs event: expand the CLI markers of a page."""
    if not MARKER.search(markdown):
        return markdown
    if not _COMMANDS:
        _COMMANDS.update(walk(app_command()))
    pages = {f.src_uri for f in files.documentation_pages()}
    return expand(markdown, _COMMANDS, page.file.src_uri, pages)
