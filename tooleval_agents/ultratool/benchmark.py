"""UltraTool declared as a :class:`~tooleval_agents.registry.Benchmark`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tooleval_agents.records import Lang
from tooleval_agents.registry import Benchmark, ExampleFields, Located, Split
from tooleval_agents.ultratool import loaders
from tooleval_agents.ultratool.records import TASKS, UltraToolTask, _Task

LANGS: tuple[Lang, ...] = ("en", "zh")


class UltraToolBenchmark(Benchmark):
    """Six dimensions x two languages; ``raw`` (``test.json``) is listed as a task too."""

    name = "ultratool"

    def splits(self) -> list[Split]:
        return [Split(self.name, t, lang) for t in (*TASKS, "raw") for lang in LANGS]

    def locate(self, split: Split, data_dir: Path) -> Located:
        lang: Lang = split.subset  # type: ignore[assignment]
        if split.task == "raw":
            path = loaders.raw_path(data_dir, lang)
        else:
            task: UltraToolTask = split.task  # type: ignore[assignment]
            path = loaders.task_path(data_dir, task, lang)
            if task in loaders.REBUILT_TASKS and not path.is_file():
                from tooleval_agents.ultratool.rebuild import rebuilt_path

                return Located(rebuilt_path(data_dir, task, lang), "rebuilt")
        if not path.is_file():
            from tooleval_agents.errors import DatasetMissingError

            raise DatasetMissingError("ultratool", path, Path(data_dir))
        return Located(path, loaders._source_of(data_dir))

    def load(self, split: Split, data_dir: Path) -> list[Any]:
        lang: Lang = split.subset  # type: ignore[assignment]
        if split.task == "raw":
            return loaders.load_raw(data_dir, lang)
        return loaders.load_task(data_dir, split.task, lang)  # type: ignore[call-overload]

    def to_example(self, split: Split, record: Any) -> ExampleFields:
        official = record.official()
        reference_keys = {"reference"} if isinstance(record, _Task) else {"plan", "tools"}
        meta = record.meta
        metadata = {
            "benchmark": self.name,
            "task": split.task,
            "language": split.subset,
            "index": meta.index if meta else None,
            "source": meta.source if meta else None,
        }
        if split.task == "raw":
            metadata["domain"] = official.get("domain")
        return ExampleFields(
            inputs={k: v for k, v in official.items() if k not in reference_keys},
            outputs={k: v for k, v in official.items() if k in reference_keys},
            metadata=metadata,
        )


BENCHMARK = UltraToolBenchmark()
