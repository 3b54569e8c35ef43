"""Where UltraTool's files are in a data directory (it mirrors the upstream repository)."""

from __future__ import annotations

from pathlib import Path

from tooleval_agents.ultratool.records import TASKS, Lang, UltraToolTask

LANG_DIRS: dict[Lang, str] = {"en": "English-dataset", "zh": "Chinese-dataset"}
_LANG_NAMES: dict[str, Lang] = {**{d: lang for lang, d in LANG_DIRS.items()}, "en": "en",
                                "zh": "zh"}


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


def prediction_split(path: Path) -> tuple[UltraToolTask | None, Lang | None]:
    """The task and language a predictions file's path names, as upstream publishes them
    (``predictions/<English|Chinese>-dataset/<model>/<task>.json``; a folder named ``en`` or
    ``zh`` names the language too); ``None`` for what the path does not name.

    >>> prediction_split(Path("predictions/Chinese-dataset/gpt-4/tool_usage.json"))
    ('tool_usage', 'zh')
    >>> prediction_split(Path("runs/answers.jsonl"))
    (None, None)
    """
    task = next((t for t in TASKS if t == path.stem), None)
    lang = next((_LANG_NAMES[part] for part in reversed(path.parent.parts)
                 if part in _LANG_NAMES), None)
    return task, lang
