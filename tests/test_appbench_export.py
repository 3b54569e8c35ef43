"""``tooleval export appbench``: built samples as chat fine-tuning data."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tooleval_agents.appbench.loaders import load_file
from tooleval_agents.cli import app
from tooleval_agents.evaluators.appbench.parse import parse_answer
from tooleval_agents.graphs.appbench.prompts import PLAN_MARKER, SELECT_MARKER
from tooleval_agents.models.reference import last_input_block

FIXTURE = Path(__file__).parent / "fixtures" / "sgd"

def _built(tmp_path: Path, *extra: str) -> Path:
    out = tmp_path / "built.json"
    result = CliRunner().invoke(app, ["build", "appbench", "--sgd", str(FIXTURE), "--split",
                                      "train", "--out", str(out), "--no-progress", *extra])
    assert result.exit_code == 0, result.output
    return out

def _lines(path: Path) -> list[dict[str, list[dict[str, str]]]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

def test_hierarchical_and_flat_chat_records(tmp_path: Path) -> None:
    built = _built(tmp_path, "--model", "scripted")
    samples = load_file(built, "mm")
    hier, flat = tmp_path / "hier.jsonl", tmp_path / "flat.jsonl"
    result = CliRunner().invoke(app, ["export", "appbench", "--from", str(built), "--format",
                                      "chat", "--out", str(hier)])
    assert result.exit_code == 0, result.output
    records = _lines(hier)
    assert len(records) == 2 * len(samples)
    for sample, select, plan in zip(samples, records[::2], records[1::2], strict=True):
        assert [m["role"] for m in plan["messages"]] == ["user", "assistant"]
        assert SELECT_MARKER in select["messages"][0]["content"]
        assert json.loads(select["messages"][1]["content"]) == list(
            dict.fromkeys(sample.output.used_app))
        user, answer = (m["content"] for m in plan["messages"])
        assert PLAN_MARKER in user and last_input_block(user) == sample.input
        # Only the gold apps' APIs are shown, and the answer parses back to the gold lines.
        assert ("findtrains" in user) == ("Trains" in sample.output.used_app)
        assert [c.api for c in parse_answer(answer).calls] == [c.api for c in sample.calls]
        assert [c.literal_args for c in parse_answer(answer).calls] == [
            c.literal_args for c in sample.calls]
    result = CliRunner().invoke(app, ["export", "appbench", "--from", str(built), "--prompt",
                                      "flat", "--out", str(flat)])
    assert result.exit_code == 0, result.output
    flat_records = _lines(flat)
    assert len(flat_records) == len(samples)
    assert all("findtrains" in r["messages"][0]["content"] for r in flat_records)

def test_paths_only_file_is_refused(tmp_path: Path) -> None:
    built = _built(tmp_path, "--paths-only")
    result = CliRunner().invoke(app, ["export", "appbench", "--from", str(built), "--out",
                                      str(tmp_path / "x.jsonl")])
    assert result.exit_code == 1 and "no instruction" in result.output
    assert not (tmp_path / "x.jsonl").exists()
