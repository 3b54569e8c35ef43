"""One vocabulary across commands: ``tooleval list``, ``--subset`` (with ``--lang`` and
``--category`` as its kinds), ``-O`` for options, runs roots expanded, hints for near misses,
and judged tasks refused before anything runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from helpers import cli
from typer.testing import CliRunner

from tooleval_agents.cli import app, wired_app

REPO = Path(__file__).resolve().parents[1]


def test_list_shows_benchmarks_tasks_strategies_and_metrics() -> None:
    rows = json.loads(cli("list", "strategies", "--json").stdout)  # type: ignore[attr-defined]
    few_shot = next(r for r in rows if r["strategy"] == "few_shot")
    assert few_shot["options"] == ("prompts ('ours' | 'official', default 'ours'), "
                                   "k (int, default 3), pool (str | None, default None)"
                                   ) and few_shot["offline_models"] is True
    tasks = json.loads(cli("list", "tasks", "--json").stdout)  # type: ignore[attr-defined]
    plan = next(r for r in tasks if r["benchmark"] == "appbench")
    assert plan["scoring_options"] == ("scoring ('strict' | 'paper', default 'strict'), "
                                       "graph (bool | None, default None)")
    assert {r["benchmark"] for r in json.loads(
        cli("list", "--json").stdout)} >= {"ultratool", "appbench"}  # type: ignore[attr-defined]
    metrics = json.loads(cli("list", "metrics", "--json").stdout)  # type: ignore[attr-defined]
    assert next(r for r in metrics if r["benchmark"] == "appbench")["headline_metrics"][0] == \
        "success"


def test_subset_and_hints(samples: Path, tmp_path: Path) -> None:
    ok = cli("run", "appbench", "--subset", "ss", "--model", "reference", "--limit", "1",
             "--data-dir", samples, "--out", tmp_path, "--no-cache", "--json")
    assert ok.exit_code == 0, ok.output  # type: ignore[attr-defined]
    hint = cli("run", "ultratool", "--task", "plan_create_use", "--lang", "en", "--model",
               "reference", "--data-dir", samples, "--out", tmp_path)
    assert "--task raw --strategy plan_create_use" in hint.output  # type: ignore[attr-defined]


def test_a_judged_task_without_judge_fails_before_anything_runs(samples: Path,
                                                                tmp_path: Path) -> None:
    result = cli("run", "ultratool", "--task", "all", "--lang", "en", "--model", "reference",
                 "--data-dir", samples, "--out", tmp_path)
    assert result.exit_code == 2  # type: ignore[attr-defined]  (a usage error)
    assert "tool_creation is scored by an LLM judge" in result.output  # type: ignore[attr-defined]
    assert not any(tmp_path.iterdir())  # no split ran


def test_compare_and_report_expand_a_runs_root_and_take_capital_o(samples: Path,
                                                                   tmp_path: Path) -> None:
    for model in ("reference", "noisy-reference:0.5"):
        assert cli("run", "appbench", "--subset", "ss", "--model", model, "--data-dir",
                   samples, "--out", tmp_path / "runs", "--no-cache"
                   ).exit_code == 0  # type: ignore[attr-defined]
    compared = cli("compare", tmp_path / "runs", "--rescore", "-O", "scoring=paper",
                   "--data-dir", samples, "--n-boot", "10", "--json")
    assert compared.exit_code == 0, compared.output  # type: ignore[attr-defined]
    assert len(json.loads(compared.stdout)["runs"]) == 2  # type: ignore[attr-defined]
    report = cli("report", tmp_path / "runs", "--out", tmp_path / "rep", "--n-boot", "10")
    assert report.exit_code == 0, report.output  # type: ignore[attr-defined]
    assert (tmp_path / "rep" / "report.md").is_file()


def test_score_run_reads_the_data_directory_the_run_used(samples: Path, tmp_path: Path) -> None:
    import shutil

    data = tmp_path / "my-data"
    shutil.copytree(samples / "appbench", data / "appbench")
    run = cli("run", "appbench", "--subset", "sm", "--model", "reference", "--data-dir",
              data, "--out", tmp_path / "runs", "--no-cache", "--json")
    assert run.exit_code == 0, run.output  # type: ignore[attr-defined]
    run_dir = json.loads(run.stdout)["run_dir"]  # type: ignore[attr-defined]
    again = cli("score", "--run", run_dir, "--json")  # no --data-dir
    assert again.exit_code == 0, again.output  # type: ignore[attr-defined]
    assert json.loads(again.stdout)["summary"]["metrics"]["success"] == 100.0  # type: ignore[attr-defined]


def cli_options() -> dict[str, list[tuple[str, Any]]]:
    """Every long flag of the CLI -> (command path, its click parameter) per command that has
    it (groups' own options included: ``score --run``)."""
    found: dict[str, list[tuple[str, Any]]] = {}

    def walk(command: Any, path: str) -> None:
        for param in command.params:
            if getattr(param, "param_type_name", "") != "option":
                continue
            for flag in [*param.opts, *param.secondary_opts]:
                if flag.startswith("--") and not flag.startswith("--no-") and flag != "--help":
                    found.setdefault(flag, []).append((path, param))
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}".strip())

    walk(typer.main.get_command(wired_app()), "")
    return found


DEFAULTS_THAT_DIFFER = {
    "--out": "what a command writes: a runs root, a site or report folder, one file",
    "--limit": "judge agreement judges 50 plans unless told (each costs a judge call)",
    "--format": "the form of what a command writes: compare's tables, export's records",
    "--port": "view's site keeps one address to bookmark; serve's MCP servers take any free "
              "port (the URL is printed), so several serve side by side",
}
"""Shared flags whose default is allowed to differ between commands, and why."""


def test_a_flag_means_one_thing_with_one_default_everywhere() -> None:
    options = cli_options()
    shorts: dict[str, set[str]] = {}
    for flag, uses in options.items():
        for _, param in uses:
            for short in (o for o in param.opts if not o.startswith("--")):
                shorts.setdefault(short, set()).add(flag)
    assert {s: f for s, f in shorts.items() if len(f) > 1} == {}
    differing = {}
    for flag, uses in options.items():
        defaults = {repr(param.default) for _, param in uses}
        if len(defaults) > 1 and flag not in DEFAULTS_THAT_DIFFER:
            differing[flag] = {path: param.default for path, param in uses}
    assert differing == {}
    assert "-o" not in shorts  # one spelling: -O


def test_scoring_is_one_flag_wherever_runs_are_scored() -> None:
    options = cli_options()
    scoring = {path for path, _ in options["--scoring"]}
    assert {"run", "score", "compare", "report"} <= scoring
    assert {path for path, _ in options["--option"]} >= {"run", "score", "compare", "report"}


def test_the_docs_list_every_flag_that_several_commands_share() -> None:
    page = Path(__file__).resolve().parents[1] / "docs" / "running.md"
    text = page.read_text(encoding="utf-8")
    start = text.index("## Options across commands")
    end = text.find("\n## ", start + 1)
    table = text[start:end if end != -1 else None]
    shared = sorted(flag for flag, uses in cli_options().items() if len(uses) >= 3)
    assert [f for f in shared if f"`{f}" not in table] == []


@pytest.mark.parametrize("module", sorted(
    p.relative_to(REPO / "tooleval_agents").as_posix()
    for p in [REPO / "tooleval_agents" / "cli" / "base.py",
              *(REPO / "tooleval_agents" / "cli").glob("*.py")]))
def test_generic_cli_modules_name_no_benchmark(module: str) -> None:
    text = (REPO / "tooleval_agents" / module).read_text(encoding="utf-8").lower()
    assert "ultratool" not in text and "appbench" not in text


def test_score_without_run_lists_the_registered_subcommands(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.models import CommandInfo

    from tooleval_agents.cli.base import score_app

    def newbench() -> None:
        """A benchmark registered by a plugin."""

    monkeypatch.setattr(score_app, "registered_commands",
                        [*score_app.registered_commands, CommandInfo(callback=newbench)])
    result = CliRunner().invoke(app, ["score", "--json"])  # options, but no --run
    assert result.exit_code == 2
    (error,) = [line for line in result.output.splitlines() if "give --run DIR" in line]
    assert "newbench" in error and "appbench" in error  # every registered subcommand


def cli_commands() -> list[tuple[str, ...]]:
    """The command path of every command and group of the CLI (the root's is empty)."""
    found: list[tuple[str, ...]] = []

    def walk(command: Any, path: tuple[str, ...]) -> None:
        found.append(path)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*path, name))

    walk(typer.main.get_command(wired_app()), ())
    return found


TYPERS_OWN = {"--help", "--install-completion", "--show-completion"}
"""Options Typer adds itself (their rendering is Typer's)."""


def test_run_help_is_grouped_into_panels() -> None:
    run = typer.main.get_command(wired_app()).commands["run"]  # type: ignore[attr-defined]
    options = [p for p in run.params if p.param_type_name == "option"]
    loose = [p.opts[0] for p in options if not getattr(p, "rich_help_panel", None)]
    assert loose == [], "options of `tooleval run` outside a help panel (rich_help_panel=)"
    assert len({p.rich_help_panel for p in options}) >= 4


def test_no_flag_is_shown_as_taking_a_value() -> None:
    # A boolean flag's metavar is empty: Typer would show `--fresh <bool>`; a flag with a
    # --no- form shows it beside (`--cache  --no-cache`).
    shown_as_value = sorted({f"{path or '(root)'} {flag}"
                             for flag, uses in cli_options().items() if flag not in TYPERS_OWN
                             for path, param in uses
                             if getattr(param, "is_flag", False) and param.metavar != ""})
    assert shown_as_value == []


@pytest.mark.parametrize("columns", [80, 100])
def test_help_is_never_cut_off(columns: int) -> None:
    # `run` and `compare` at the common terminal widths, every command at 100: rich cuts a
    # word longer than its column with an ellipsis (`noisy-reference[…`).
    paths = cli_commands() if columns >= 100 else [("run",), ("compare",)]
    cut = {}
    for path in paths:
        result = CliRunner().invoke(app, [*path, "--help"],
                                    env={"COLUMNS": str(columns), "TERMINAL_WIDTH": str(columns)})
        assert result.exit_code == 0, (path, result.output)
        assert max(map(len, result.output.splitlines())) <= columns  # the width was used
        lines = [line.strip(" │") for line in result.output.splitlines() if "…" in line]
        if lines:
            cut[" ".join(path)] = lines
    assert cut == {}
    flags = [line for line in CliRunner().invoke(
        app, ["run", "--help"], env={"COLUMNS": str(columns)}).output.splitlines()
        if "<bool>" in line and "--help" not in line]
    assert flags == []
