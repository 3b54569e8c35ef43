"""Where UltraTool's files are in a data directory (it mirrors the upstream repository)."""

from __future__ import annotations

from pathlib import Path

from tooleval_agents.ultratool.records import Lang, UltraToolTask

LANG_DIRS: dict[Lang, str] = {"en": "English-dataset", "zh": "Chinese-dataset"}


def lang_dir(data_dir: Path, lang: Lang) -> Path:
    """``<data_dir>/ultratool/data/<English|Chinese>-dataset``."""
    return Path(data_dir) / "ultratool" / "data" / LANG_DIRS[lang]


def raw_path(data_dir: Path, lang: Lang) -> Path:
    return lang_dir(data_dir, lang) / "test.json"


def task_path(data_dir: Path, task: UltraToolTask, lang: Lang) -> Path:
    """The official test-set file of a task (may not exist for the two rebuilt tasks)."""
    return lang_dir(data_dir, lang) / "test_set" / f"{task}.json"


def example_path(data_dir: Path, task: UltraToolTask, lang: Lang) -> Path:
    """The one-shot demonstration of a task."""
    return lang_dir(data_dir, lang) / "example" / f"{task}.json"
