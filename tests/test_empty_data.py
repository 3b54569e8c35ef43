"""An empty (or wrongly shaped) data file is named in one line (issue 22, item 8).

Before: an empty UltraTool data file made ``tooleval score ... --predictions`` blame the
predictions (``index must be an integer in 0..-1``), a run said ``has no examples`` without
naming a file, ``data build`` wrote an empty test set, an empty few-shot pool gave no
demonstrations, and a damaged official demonstration turned every example into a model error
(exit 0). Every reader of a data file now refuses an empty file, an empty list or another
top-level type with one line naming the file.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import HANG_GUARD_S

from tooleval_agents import Benchmark, ExampleFields, Located, Scorer, Split
from tooleval_agents.appbench.sgd_paths import read_dialogues
from tooleval_agents.data.langsmith_datasets import to_examples
from tooleval_agents.errors import DataFormatError

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "datasets"
USAGE = Path("ultratool/data/English-dataset/test_set/tool_usage.json")
SS = Path("appbench/data/test/test_ss.json")


def tooleval(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tooleval_agents.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=HANG_GUARD_S, cwd=REPO)


def assert_one_line(result: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A copy of the bundled samples to damage."""
    shutil.copytree(SAMPLES / "ultratool", tmp_path / "data" / "ultratool")
    shutil.copytree(SAMPLES / "appbench", tmp_path / "data" / "appbench")
    return tmp_path / "data"


def test_an_empty_data_file_is_named_not_the_predictions(data: Path, tmp_path: Path) -> None:
    (data / USAGE).write_bytes(b"")
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(json.dumps({"index": 0, "output": "x"}) + "\n")
    line = assert_one_line(
        tooleval("score", "ultratool", "--task", "tool_usage", "--lang", "en",
                 "--predictions", predictions, "--data-dir", data),
        f"{data / USAGE}: no records: the file is empty")
    assert "index" not in line and str(predictions) not in line


@pytest.mark.parametrize(("content", "says"), [
    ("", "no records: the file is empty"), ("[]", "no records: the array is empty"),
    ("  \n", "no records: the file is empty"), ("{}", "expected a JSON array, got dict"),
    ("null", "expected a JSON array, got NoneType"),
])
def test_an_empty_or_misshapen_appbench_file_is_named(data: Path, tmp_path: Path,
                                                      content: str, says: str) -> None:
    (data / SS).write_text(content)
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(["x"]))
    assert_one_line(tooleval("score", "appbench", "--category", "ss", "--predictions", answers,
                             "--data-dir", data), f"{data / SS}: {says}")
    assert_one_line(tooleval("run", "appbench", "--category", "ss", "--model", "reference",
                             "--data-dir", data, "--out", tmp_path / "runs", "--no-progress"),
                    f"{data / SS}: {says}")
    assert not (tmp_path / "runs").exists()  # nothing half-made either


@pytest.mark.parametrize("content", ["", "\n\n", "[]", "null"])
def test_an_empty_or_misshapen_ultratool_file_is_named(data: Path, tmp_path: Path,
                                                       content: str) -> None:
    (data / USAGE).write_text(content)
    assert_one_line(tooleval("run", "ultratool", "--task", "tool_usage", "--lang", "en",
                             "--model", "reference", "--data-dir", data, "--out",
                             tmp_path / "runs", "--no-progress"), str(data / USAGE))


def test_an_empty_raw_file_builds_nothing(data: Path, tmp_path: Path) -> None:
    raw = data / "ultratool/data/English-dataset/test.json"
    raw.write_bytes(b"")
    out = tmp_path / "built.json"
    for task in ("tool_selection", "planning"):  # a rebuilt and a derived set
        assert_one_line(tooleval("data", "build", "ultratool", "--task", task, "--lang", "en",
                                 "--data-dir", data, "--out", out),
                        f"{raw}: no records: the file is empty")
        assert not out.exists()


@pytest.mark.parametrize("content", ["", "[]"])
def test_an_empty_few_shot_pool_is_named(tmp_path: Path, content: str) -> None:
    pool = tmp_path / "pool.json"
    pool.write_text(content)
    assert_one_line(tooleval("run", "appbench", "--category", "ss", "--strategy", "few_shot",
                             "-O", f"pool={pool}", "--model", "reference", "--limit", "1",
                             "--data-dir", SAMPLES, "--out", tmp_path / "runs",
                             "--no-progress"), f"{pool}: no records")


def test_an_empty_sgd_dialogue_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "dialogues_001.json"
    path.write_text("[]")
    with pytest.raises(DataFormatError, match=r"dialogues_001\.json: no dialogues"):
        read_dialogues(path)


@pytest.mark.parametrize("content", ["", "[]", "{}"])
def test_a_damaged_official_demonstration_is_named(shared_data: Path, tmp_path: Path,
                                                   content: str) -> None:
    data = tmp_path / "data"
    (data / "ultratool" / "data").mkdir(parents=True)
    for part in ("inference", "evaluation"):
        (data / "ultratool" / part).symlink_to(shared_data / "ultratool" / part)
    shutil.copytree(shared_data / "ultratool/data/English-dataset",
                    data / "ultratool/data/English-dataset")
    demo = data / "ultratool/data/English-dataset/example/tool_usage.json"
    demo.write_text(content)
    assert_one_line(tooleval("run", "ultratool", "--task", "tool_usage", "--lang", "en",
                             "--prompts", "official", "--model", "reference", "--limit", "1",
                             "--data-dir", data, "--out", tmp_path / "runs", "--no-progress"),
                    str(demo))
    assert not (tmp_path / "runs").exists()


class _Empty(Benchmark):
    """A plugin benchmark whose loader returns nothing."""

    name = "empty"

    def splits(self) -> list[Split]:
        return [Split("empty", "qa", "en", "language")]

    def locate(self, split: Split, data_dir: Path) -> Located:
        return Located(Path(data_dir) / "empty" / "en.jsonl", "official")

    def load(self, split: Split, data_dir: Path) -> list[Any]:
        return []

    def to_example(self, split: Split, record: Any) -> ExampleFields:
        raise AssertionError("no record to convert")

    def scorer(self, split: Split, *, options: dict[str, Any] | None = None) -> Scorer:
        raise AssertionError("nothing to score")

    def default_strategy(self, split: Split) -> str:
        return "none"


def test_a_plugin_split_without_records_names_its_file(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    from tooleval_agents import registry

    monkeypatch.setitem(registry._REGISTRY, "empty", _Empty())
    with pytest.raises(DataFormatError) as caught:
        to_examples(Split("empty", "qa", "en"), tmp_path)
    assert str(caught.value) == (f"{tmp_path / 'empty' / 'en.jsonl'}: no records of "
                                 "empty-qa-en: the data file is empty")
