"""``tooleval data info`` on the real data: the counts the foundation issue promises."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import appbench_file
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.data.fetch import load_manifest


def test_data_info_reports_every_split_and_the_catalog(shared_data: Path) -> None:
    result = CliRunner().invoke(app, ["data", "info", "--data-dir", str(shared_data), "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    rows = {r["dataset"]: r for r in info["splits"]}
    for lang in ("en", "zh"):
        for task in ("raw", "planning", "tool_creation", "tool_usage_awareness", "tool_usage"):
            assert (rows[f"ultratool-{task}-{lang}"]["records"],
                    rows[f"ultratool-{task}-{lang}"]["source"]) == (1000, "official")
        for task in ("tool_selection", "tool_creation_awareness"):
            assert (rows[f"ultratool-{task}-{lang}"]["records"],
                    rows[f"ultratool-{task}-{lang}"]["source"]) == (1000, "rebuilt")
    assert [rows[f"appbench-plan-{c}"]["records"] for c in ("ss", "sm", "ms", "mm")] == [
        200, 200, 201, 200]
    [catalog] = info["resources"]
    assert (catalog["apps"], catalog["apis"], catalog["source"]) == (
        15, 33, "built from SGD schemas")


def test_data_info_lists_missing_data_with_the_fetch_command(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["data", "info", "--data-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "missing" in result.output
    sources = "|".join(load_manifest().sources)  # every pinned source of the benchmarks
    assert set(sources.split("|")) == {"ultratool", "appbench", "sgd"}
    assert f"tooleval data fetch {sources} --data-dir {tmp_path}" in " ".join(
        result.output.split())


def test_data_info_shows_markup_like_errors_and_survives_a_bad_schema(
        tmp_path: Path, shared_data: Path) -> None:
    appbench_file(tmp_path, shared_data, "[/x] not a call")
    schema = tmp_path / "sgd" / "test" / "schema.json"
    schema.parent.mkdir(parents=True)
    schema.write_text('{"not": "a list"}', encoding="utf-8")
    result = CliRunner().invoke(app, ["data", "info", "--data-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    text = "".join(result.output.split())
    assert "notanAPIcallline:'[/x]notacall'" in text
    assert "expectedaJSONarrayofservices" in text
    result = CliRunner().invoke(app, ["data", "info", "--data-dir", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)["resources"]
    assert row["benchmark"] == "appbench" and row["source"] == "invalid"
    assert "expected a JSON array of services" in row["error"]
