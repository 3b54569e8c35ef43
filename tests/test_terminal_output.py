"""Issue 22, items 3 and 7: text from outside (paths, run names, provider error bodies, plugin
errors) is printed as written: never read as Rich markup, never passing control characters to
the terminal."""

from __future__ import annotations

import io
import json
import logging
import sys
import warnings
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
import typer
from fake_openai import FakeOpenAI, Fault, FaultShare
from rich.console import Console
from rich.table import Table
from run_dirs import make_run
from toy_benchmark import echo_answer, register_toy, write_toy
from typer.testing import CliRunner

from tooleval_agents import registry
from tooleval_agents.cli import app
from tooleval_agents.cli import base as cli_base
from tooleval_agents.terminal import printable, shown

PWNED = "\x1b]0;pwned\x07\x1b[2J"
"""The issue's error body: sets the terminal's title, then clears the screen."""
CONTROL = ["\x1b", "\x07", "\x00", "\x08", "\r", "\x7f", "\x9b", "\u202e"]


def _rendered(markup: str) -> str:
    out = io.StringIO()
    Console(file=out, force_terminal=False, width=300).print(markup, highlight=False)
    return out.getvalue().rstrip("\n")


def _assert_no_control(text: str) -> None:
    found = [c for c in CONTROL if c in text]
    assert not found, f"raw control characters {found!r} in {text!r}"


@pytest.mark.parametrize("text", ["runs/[/bold]x", "[red]x[/red]", "a\\[b]", "path\\",
                                  "C:\\dir\\\\", "[n/a, n/a]", "[/]", "plain"])
@pytest.mark.parametrize("template", ["{}", "[bold]{}[/]", "{} end", "[dim]- {}[/]"])
def test_shown_text_prints_as_written_in_any_place(text: str, template: str) -> None:
    plain = template.replace("[bold]", "").replace("[dim]", "").replace("[/]", "")
    assert _rendered(template.format(shown(text))) == plain.format(text)


def test_control_characters_are_written_as_escapes() -> None:
    assert printable(PWNED + " tail") == "\\x1b]0;pwned\\x07\\x1b[2J tail"
    assert printable("a\x9bb\u202ec\x7f") == "a\\x9bb\\u202ec\\x7f"
    assert printable("two\nlines\tand 中文") == "two\nlines\tand 中文"  # kept as they are
    assert _rendered(shown(PWNED)) == "\\x1b]0;pwned\\x07\\x1b[2J"


def test_a_table_cell_that_looks_like_a_tag_is_kept() -> None:
    table = Table()
    table.add_column(shown("run [/tmp/a/run]"))
    table.add_row(shown("[n/a, n/a]"))  # a CI of two n/a: read as a style tag, it vanished
    out = io.StringIO()
    Console(file=out, force_terminal=False, width=100).print(table)
    assert "run [/tmp/a/run]" in out.getvalue() and "[n/a, n/a]" in out.getvalue()


def test_compare_two_runs_of_one_name_in_different_roots(
        tmp_path: Path, samples: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Same experiment name, so the labels are "name [path]": the path was read as a closing
    # tag (MarkupError). The roots' names are markup too.
    monkeypatch.setenv("COLUMNS", "400")  # whole labels on one line of the table
    first = make_run(tmp_path / "[bold]a", "run", data_dir=samples)
    second = make_run(tmp_path / "[/]b", "run", data_dir=samples)
    args = ["compare", str(first), str(second), "--n-boot", "20"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    labels = [r["label"] for r in json.loads(CliRunner().invoke(app, [*args, "--json"]).stdout)
              ["runs"]]
    assert labels[0] != labels[1] and labels[0].endswith(f"[{first}]")
    for path in (first, second):  # listed under the tables, markup shown as written
        assert str(path) in result.output


@pytest.mark.parametrize("status", [401, 500])
def test_a_provider_error_body_reaches_the_terminal_escaped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, status: int) -> None:
    register_toy(monkeypatch)
    data = write_toy(tmp_path / "data", n=2)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    faults = [FaultShare(1.0, Fault(status, message=PWNED))]
    with FakeOpenAI(rules=[(r"item \d+", echo_answer)], faults=faults) as server:
        result = CliRunner().invoke(app, [
            "run", "toy", "--lang", "en", "--model", "openai:fake-model", "--model-arg",
            f"base_url={server.base_url}", "--max-attempts", "1", "--max-concurrency", "1",
            "--out", str(tmp_path / "runs"), "--data-dir", str(data)])
    assert result.exit_code != 0
    _assert_no_control(result.output)
    assert "\\x1b]0;pwned\\x07\\x1b[2J" in result.output  # shown, as an escape


def test_the_one_line_error_printers_escape_outside_text(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["tooleval"])
    broken = typer.Typer()

    @broken.command()
    def explode() -> None:
        raise RuntimeError(f"provider said {PWNED}[/bold] and more")

    with pytest.raises(SystemExit) as code:
        cli_base.run_cli(broken)
    assert code.value.code == 1
    err = capsys.readouterr().err
    _assert_no_control(err)
    assert "RuntimeError: provider said \\x1b]0;pwned\\x07\\x1b[2J[/bold] and more" in \
        " ".join(err.split())
    with pytest.raises(typer.Exit):
        raise cli_base.fail(f"bad model {PWNED}")
    err = capsys.readouterr().err
    _assert_no_control(err)
    assert "error: bad model \\x1b]0;pwned" in err


def test_an_unknown_name_from_the_command_line_is_escaped() -> None:
    result = CliRunner().invoke(app, ["data", "push", f"x{PWNED}[/bold]y"])
    assert result.exit_code == 1
    _assert_no_control(result.output)
    assert "x\\x1b]0;pwned\\x07\\x1b[2J[/bold]y" in " ".join(result.output.split())


def test_json_output_escapes_what_a_terminal_acts_on(capsys: pytest.CaptureFixture[str]) -> None:
    value = {"error": PWNED + "\x9b2J\u202e中文", "ok": True}
    cli_base.print_json(value)
    out = capsys.readouterr().out
    _assert_no_control(out)
    assert "中文" in out and json.loads(out) == value


def test_a_broken_plugin_warning_is_escaped(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    module = tmp_path / "evil_plugin_for_tooleval_tests.py"
    module.write_text(f"raise RuntimeError({PWNED!r})\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    group = registry.ENTRY_POINT_GROUP
    eps = [EntryPoint("evil", "evil_plugin_for_tooleval_tests:BENCH", group)]
    monkeypatch.setattr(registry, "entry_points", lambda group: eps)
    monkeypatch.setattr(registry, "_REGISTRY", {})
    monkeypatch.setattr(registry, "_LOADED", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry.benchmarks()
    (warning,) = [w for w in caught if "'evil'" in str(w.message)]
    _assert_no_control(str(warning.message))
    assert "RuntimeError: \\x1b]0;pwned" in str(warning.message)


def test_data_info_with_a_markup_data_dir(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    data = tmp_path / "[red]data[/red]"
    data.mkdir(parents=True)
    result = CliRunner().invoke(app, ["data", "info", "--data-dir", str(data)])
    assert result.exit_code == 0, result.output
    assert f"tooleval data in {data}" in result.output
    assert f"--data-dir {data}" in " ".join(result.output.split())


def test_log_lines_are_escaped_when_the_command_line_hosts_them(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [])  # as in `tooleval`: no logging configured
    assert CliRunner().invoke(app, ["list"]).exit_code == 0
    logging.getLogger("tooleval_agents.test").warning("server said %s", PWNED)
    err = capsys.readouterr().err
    _assert_no_control(err)
    assert "server said \\x1b]0;pwned\\x07\\x1b[2J" in err


def test_fail_prints_brackets_literally() -> None:
    result = CliRunner().invoke(app, ["data", "push", "x[/bold]y[dim]"])
    assert result.exit_code == 1
    assert "unknown benchmark 'x[/bold]y[dim]'" in " ".join(result.output.split())
