"""The Typer apps of the `tooleval` command and the options every command shares (outside the
`cli` package, so a benchmark's own command module can import it without wiring the CLI)."""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import os
import re
import signal
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Annotated, Any, get_args

import typer
from rich.console import Console

from tooleval_agents.contracts import Split
from tooleval_agents.data.datadir import data_dir_or_samples
from tooleval_agents.errors import ToolevalError, UsageError
from tooleval_agents.registry import Benchmark
from tooleval_agents.terminal import printable, shown

app = typer.Typer(
    name="tooleval",
    help="Evaluate LLM agents' tool planning, creation and use on the registered benchmarks "
    "(`tooleval list` lists them; `tooleval data info` shows their data).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # Markdown: docstring paragraphs are reflowed to the terminal instead of keeping the
    # source's line breaks.
    rich_markup_mode="markdown",
)
data_app = typer.Typer(help="Find, download, rebuild and publish benchmark data.",
                       no_args_is_help=True, rich_markup_mode="markdown")
app.add_typer(data_app, name="data")
score_app = typer.Typer(help="Re-score model outputs produced anywhere.", no_args_is_help=True,
                        rich_markup_mode="markdown")
app.add_typer(score_app, name="score")
build_app = typer.Typer(help="Rebuild test sets upstream never published (one subcommand per "
                        "benchmark that has such sets).", no_args_is_help=True,
                        rich_markup_mode="markdown")
data_app.add_typer(build_app, name="build")

judge_app = typer.Typer(help="Check an LLM judge (commands the benchmarks declare).",
                        no_args_is_help=True, rich_markup_mode="markdown")
app.add_typer(judge_app, name="judge")
construct_app = typer.Typer(help="Build new benchmark data with a chat model (one subcommand per "
                            "benchmark that has a construction pipeline).",
                            no_args_is_help=True, rich_markup_mode="markdown")
app.add_typer(construct_app, name="build")
export_app = typer.Typer(help="Write benchmark data or a finished run in other formats "
                         "(fine-tuning data, inspect_ai eval logs).",
                         no_args_is_help=True, rich_markup_mode="markdown")
app.add_typer(export_app, name="export")

GROUPS: dict[str, typer.Typer] = {"root": app, "data": data_app, "data build": build_app,
                                  "build": construct_app, "export": export_app,
                                  "score": score_app, "judge": judge_app}
"""The command groups a benchmark may add its own commands to
(:meth:`~tooleval_agents.registry.Benchmark.add_commands`), keyed by their command path."""

OFF_TERMINAL_WIDTH = 120
"""Columns of standard output when it is not a terminal and ``COLUMNS`` is not set: a pipe or
a file has no width, and rich's 80 would cut a results table's headers (``executed_…``)."""
console = Console(emoji=False)  # our text has no :emoji: codes; their table costs a load
# soft_wrap: error messages carry paths and commands to copy; never hard-wrap them.
err_console = Console(stderr=True, soft_wrap=True, emoji=False)

FLAG = ""
"""The metavar of a boolean flag: nothing (Typer would show ``<bool>``, as if the flag took a
value); a flag with a ``--no-`` form shows it beside."""

DataDirOption = Annotated[
    Path | None,
    typer.Option(
        "--data-dir", metavar="DIR",
        help="Benchmark data directory (else $TOOLEVAL_DATA_DIR, else the per-user cache).",
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", metavar=FLAG,
                                          help="Print machine-readable JSON.")]
ProgressOption = Annotated[bool | None, typer.Option(
    "--progress/--no-progress", metavar=FLAG,
    help="Progress bar on stderr (default: on a terminal).", show_default=False)]
CacheOption = Annotated[bool, typer.Option(
    "--cache/--no-cache", metavar=FLAG,
    help="Replay recorded model answers (temperature 0 or unset).")]
MaxConcurrencyOption = Annotated[int, typer.Option(
    "--max-concurrency", min=1, metavar="N", help="Model requests in flight at once (a model "
    "served on this machine usually answers one at a time: 1).")]
ScoringOption = Annotated[str | None, typer.Option(
    "--scoring", metavar="PROFILE", help="Scoring profile, for benchmarks that declare one "
    "(e.g. strict or paper): the same as -O scoring=PROFILE; a wrong value lists the choices.",
    show_default=False)]
NBootOption = Annotated[int, typer.Option(
    "--n-boot", min=0, metavar="N",
    help="Bootstrap resamples of the 95% intervals (0: no intervals).")]


def data_or_samples(bench: Benchmark, splits: Iterable[Split],
                    data_dir: Path | None = None) -> Path:
    """The data directory a command over ``splits`` reads: the one named, else the fetched
    data, else the benchmark's bundled samples, said in one line on stderr
    (:func:`~tooleval_agents.data.datadir.data_dir_or_samples`; every command that reads a
    split says it the same way)."""
    resolved, note = data_dir_or_samples(bench, splits, data_dir)
    if note:
        err_console.print(f"[yellow]note:[/] {shown(note)}", highlight=False)
    return resolved


def in_panel(option: Any, panel: str) -> Any:
    """The ``typer.Option`` of a shared option above, shown under ``panel`` in one command's
    ``--help`` (the others keep theirs), e.g.
    ``Annotated[Path | None, in_panel(DataDirOption, "Data")]``."""
    info = copy.copy(get_args(option)[1])
    info.rich_help_panel = panel
    return info


_JSON_UNSAFE = re.compile("[\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""What ``json.dumps(ensure_ascii=False)`` leaves raw but a terminal acts on (it escapes C0)."""


def print_json(obj: Any) -> None:
    """JSON on stdout, UTF-8, not escaped (Chinese stays readable) but for control characters
    (``\\u001b``, ``\\u009b``...), which only strings can hold: the same JSON value."""
    text = json.dumps(obj, ensure_ascii=False, indent=2, default=str)
    sys.stdout.write(_JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n")


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print an error for a person and return the exit to raise. ``message`` is plain text
    (brackets in it are shown, not read as markup; control characters are escaped)."""
    err_console.print(f"[bold red]error:[/] {shown(message)}", markup=True, highlight=False)
    return typer.Exit(code)


def error_text(exc: BaseException) -> str:
    """An exception's message for a person (a ``KeyError``'s without the quotes its ``str``
    adds)."""
    return str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)


DEBUG = {"on": False}
"""``tooleval --debug``: let unexpected errors show their traceback."""


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("tooleval-agents")
        except PackageNotFoundError:  # run from a source tree without installing
            number = "unknown (not installed)"
        console.print(f"tooleval-agents {shown(number)}", highlight=False)
        raise typer.Exit()


@app.callback()
def _options(
    debug: Annotated[bool, typer.Option(
        "--debug", metavar=FLAG,
        help="Show the traceback of an unexpected error (else one line).")] = False,
    version_: Annotated[bool, typer.Option(
        "--version", metavar=FLAG, callback=_version, is_eager=True,
        help="Print the version and exit.")] = False,
) -> None:
    """Evaluate LLM agents' tool planning, creation and use on the registered benchmarks
    (`tooleval list` shows them)."""
    DEBUG["on"] = debug
    if not debug:
        # The command line is its own host program: LangSmith's retry warnings (several lines
        # per failed request) would bury the one line each error gets here.
        logging.getLogger("langsmith").setLevel(logging.ERROR)
        # The MCP SDK's server logs a warning for each call of a tool it did not list and a
        # traceback when a client closes its event stream: the call log and the run's
        # results say what happened.
        logging.getLogger("mcp").setLevel(logging.CRITICAL)
    root = logging.getLogger()
    if not root.handlers:  # the host program has not configured logging: ours, as below
        root.addHandler(_PrintableStderr(logging.WARNING))


class _PrintableStderr(logging.Handler):
    """What Python prints for a log record when nothing is configured (its message, on the
    stderr of the moment), with control characters escaped: records carry provider and
    server error text (:func:`~tooleval_agents.terminal.printable`)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(printable(self.format(record)) + "\n")
        except Exception:  # as logging's own handlers: a failed write is reported, not raised
            self.handleError(record)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread of the command line (:func:`run_cli`): a command
    winds down as on Ctrl-C (a run ends its agents and releases its lock), then exits 143."""


def run_cli(command: typer.Typer) -> None:
    """Run the command line: an unexpected error is one line (exit 1) unless ``--debug``; an
    interrupt says what is kept (exit 130; SIGTERM: 143)."""
    with _off_terminal_width(), _sigterm_as_interrupt() as received:
        try:
            _run_guarded(command)
        except SystemExit as exc:
            # Typer ends a command that let an interrupt through with 130, silently.
            if received and exc.code == 130:
                err_console.print("[yellow]stopped (SIGTERM).[/]", highlight=False)
                raise SystemExit(143) from None
            raise


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[list[int]]:
    """SIGTERM raises :class:`Terminated` while the command runs (the list yielded records
    it). The command line owns its process, so it may set a handler (a library never does);
    the previous one comes back."""
    received: list[int] = []

    def terminated(signum: int, frame: object) -> None:
        received.append(signum)
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, terminated)
    except ValueError:  # not the main thread (the command run in-process by a host program)
        yield received
        return
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def _off_terminal_width() -> Iterator[None]:
    """Standard output :data:`OFF_TERMINAL_WIDTH` columns wide while a command runs, off a
    terminal and without ``COLUMNS``; then rich's own choice again (a command run in-process,
    as the tests do, leaves nothing behind)."""
    if console.is_terminal or "COLUMNS" in os.environ:
        yield
        return
    console.width = OFF_TERMINAL_WIDTH
    try:
        yield
    finally:
        console.width = None  # type: ignore[assignment]  # the constructor's default: measure


def _run_guarded(command: typer.Typer) -> None:
    try:
        command()
    except KeyboardInterrupt as exc:
        how, code = ("stopped (SIGTERM).", 143) if isinstance(exc, Terminated) else (
            "interrupted.", 130)
        err_console.print(f"[yellow]{how}[/] Finished work is saved; run the same command "
                          "again to resume.", highlight=False)
        raise SystemExit(code) from None
    except Exception as exc:
        if DEBUG["on"]:
            raise
        first = (error_text(exc).strip().splitlines() or [""])[0][:500]
        err_console.print(f"[bold red]error:[/] {shown(f'{type(exc).__name__}: {first}')} "
                          "(tooleval --debug ... shows the traceback)", highlight=False)
        raise SystemExit(1) from None


def handle_errors(exc: ToolevalError | OSError | KeyError | ValueError) -> typer.Exit:
    """Print ``exc`` as an error and return the exit to raise: 2 for a usage error
    (:class:`~tooleval_agents.errors.UsageError`: a bad option, name or path; nothing ran),
    else 1."""
    return fail(error_text(exc), 2 if isinstance(exc, UsageError) else 1)
