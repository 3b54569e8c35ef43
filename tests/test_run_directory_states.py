"""A run directory that cannot be resumed safely is refused in one line, and a start that fails
leaves no half-made directory (issue 22, item 5).

Before: a directory with results but no ``config.json`` was run again from scratch (every
example twice in ``examples.jsonl``, every model call made again); a truncated ``config.json``
printed a pydantic dump; a run whose start failed (LangSmith out of reach, a bad option found
late) left a directory holding only its lock.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import HANG_GUARD_S

from tooleval_agents.errors import DataFormatError
from tooleval_agents.results.records import ExampleResult
from tooleval_agents.results.rundir import CONFIG, EXAMPLES, LOCK, RunDir
from tooleval_agents.run.runner import run_experiment

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "datasets"
RUN = ["run", "appbench", "--category", "ss", "--limit", "3", "--model", "reference",
       "--data-dir", str(SAMPLES), "--no-progress", "--no-cache", "--no-upload"]
NAME = "appbench-plan-ss-hierarchical-reference"
LANGSMITH_VARS = ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGSMITH_TRACING",
                  "LANGCHAIN_TRACING_V2")


def tooleval(*args: str | Path, env: dict[str, str] | None = None,
             ) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in LANGSMITH_VARS}
    return subprocess.run([sys.executable, "-m", "tooleval_agents.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=HANG_GUARD_S, cwd=REPO,
                          env={**environ, **(env or {})})


def assert_one_line(result: subprocess.CompletedProcess[str], code: int, *needles: str) -> str:
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert "validation error" not in result.stderr and "pydantic" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished three-example run, copied by each test that damages it."""
    out = tmp_path_factory.mktemp("finished")
    result = tooleval(*RUN, "--out", out)
    assert result.returncode == 0, result.stderr
    return out / NAME


def copy_run(run: Path, out: Path) -> Path:
    target = out / NAME
    target.mkdir(parents=True)
    for file in run.iterdir():
        if file.is_file():
            (target / file.name).write_bytes(file.read_bytes())
    return target


def test_results_without_a_config_are_refused_not_run_again(finished: Path,
                                                            tmp_path: Path) -> None:
    run = copy_run(finished, tmp_path)
    (run / CONFIG).unlink()
    before = (run / EXAMPLES).read_bytes()
    line = assert_one_line(tooleval(*RUN, "--out", tmp_path), 1,
                           str(run / EXAMPLES), CONFIG, "--fresh")
    assert "move the directory away" in line
    assert (run / EXAMPLES).read_bytes() == before  # nothing ran, nothing was appended
    assert not (run / CONFIG).exists()

    again = tooleval(*RUN, "--out", tmp_path, "--fresh")  # what the line says to do
    assert again.returncode == 0, again.stderr
    assert len((run / EXAMPLES).read_text().splitlines()) == 3
    assert RunDir(run).read_config().dataset.examples == 3


@pytest.mark.parametrize("damage", ["truncated", "not an object", "a field missing"])
def test_a_broken_config_is_one_line_naming_the_file(finished: Path, tmp_path: Path,
                                                     damage: str) -> None:
    run = copy_run(finished, tmp_path)
    text = (run / CONFIG).read_text()
    (run / CONFIG).write_text({"truncated": text[:100], "not an object": "[]",
                               "a field missing": text.replace('"benchmark"', '"bench"')}
                              [damage])
    before = (run / EXAMPLES).read_bytes()
    line = assert_one_line(tooleval(*RUN, "--out", tmp_path), 1,
                           f"{run / CONFIG}: not a valid config.json", "--fresh")
    assert "\n" not in line
    assert (run / EXAMPLES).read_bytes() == before
    if damage != "truncated":
        return
    # Every command that reads a run says the same, in one line.
    commands: list[list[str | Path]] = [
        ["compare", run, finished], ["view", run, "--out", tmp_path / "site"],
        ["report", run, "--out", tmp_path / "report"], ["score", "--run", run]]
    for command in commands:
        assert_one_line(tooleval(*command), 1, f"{CONFIG}: not a valid config.json")


def test_an_empty_results_file_without_a_config_is_a_new_run(tmp_path: Path) -> None:
    run = tmp_path / NAME
    run.mkdir()
    (run / EXAMPLES).write_bytes(b"")
    (run / LOCK).write_text("12345\n")  # a lock left by an older version's failed start
    result = tooleval(*RUN, "--out", tmp_path)
    assert result.returncode == 0, result.stderr
    assert len((run / EXAMPLES).read_text().splitlines()) == 3


def test_a_start_without_a_langsmith_key_leaves_no_directory(tmp_path: Path) -> None:
    out = tmp_path / "new" / "runs"
    args = [a for a in RUN if a != "--no-upload"]
    assert_one_line(tooleval(*args, "--out", out, "--upload"), 1, "LANGSMITH_API_KEY")
    assert list(tmp_path.iterdir()) == []  # not the run, not runs/, not new/


def test_an_option_refused_late_leaves_no_directory(tmp_path: Path) -> None:
    args = [a for a in RUN if a != "--no-upload"]
    result = tooleval(*args, "--out", tmp_path / "runs", "--epochs", "2", "--upload",
                      env={"LANGSMITH_API_KEY": "lsv2_pt_notused000000000000000000000"})
    assert_one_line(result, 1, "--epochs above 1")
    assert list(tmp_path.iterdir()) == []


class _Unreachable:
    """A LangSmith client whose server cannot be reached."""

    def read_dataset(self, **_: Any) -> Any:
        raise ConnectionError("LangSmith at http://127.0.0.1:9 cannot be reached")

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"nothing else should be asked: {name}")


def test_langsmith_out_of_reach_keeps_the_run_local(finished: Path, tmp_path: Path) -> None:
    kwargs: dict[str, Any] = {
        "subset": "ss", "model": "reference", "data_dir": SAMPLES, "limit": 3,
        "progress": False, "cache": False, "upload": True, "client": _Unreachable()}
    summary = run_experiment("appbench", out=tmp_path / "runs", **kwargs)
    assert summary.counts["ok"] == 3
    config = RunDir(tmp_path / "runs" / summary.experiment).read_config()
    assert config.langsmith is not None and config.langsmith["uploaded"] is False

    run = copy_run(finished, tmp_path / "old")  # a resume keeps what was there
    before = (run / EXAMPLES).read_bytes()
    run_experiment("appbench", out=tmp_path / "old", **kwargs)
    assert (run / EXAMPLES).read_bytes() == before


def _chinese_results(path: Path, n: int = 3) -> RunDir:
    rd = RunDir(path)
    for i in range(n):
        rd.append(ExampleResult(example_id=f"e{i}", index=i, status="ok",
                                outputs={"prediction": f"调用工具 {i}：查询天气"}))
    return rd


def test_last_line_torn_inside_a_utf8_character_is_ignored(tmp_path: Path) -> None:
    rd = _chinese_results(tmp_path / "run")
    line = ExampleResult(example_id="e9", index=9, status="ok",
                         outputs={"prediction": "中文输出"}).model_dump_json().encode()
    cut = line.index("中".encode()) + 1  # inside the 3-byte character
    with (rd.path / EXAMPLES).open("ab") as fh:
        fh.write(line[:cut])
    results = rd.results()
    assert sorted(results) == ["e0", "e1", "e2"]
    assert results["e1"].outputs["prediction"] == "调用工具 1：查询天气"
    assert rd.repair_torn_tail() is True
    assert (rd.path / EXAMPLES).read_bytes().endswith(b"\n")
    assert rd.results() == results and rd.repair_torn_tail() is False


def test_bad_complete_lines_name_their_line(tmp_path: Path) -> None:
    rd = _chinese_results(tmp_path / "run")
    file = rd.path / EXAMPLES
    lines = file.read_bytes().split(b"\n")
    lines[1] = lines[1].replace("调".encode(), "调".encode()[:2])  # invalid UTF-8 on line 2
    file.write_bytes(b"\n".join(lines))
    with pytest.raises(DataFormatError, match=r"examples\.jsonl:2: not UTF-8"):
        rd.results()
    rd = _chinese_results(tmp_path / "run2")
    with (rd.path / EXAMPLES).open("ab") as fh:
        fh.write(b"{not json}\n")
    _chinese_results(tmp_path / "run2", n=1)  # a good line after the bad one
    with pytest.raises(DataFormatError, match=r"examples\.jsonl:4:"):
        rd.results()
