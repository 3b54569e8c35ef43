"""Load AppBench test files (JSON arrays) into validated samples."""

from __future__ import annotations

from pathlib import Path

from tooleval_agents.appbench.names import Category
from tooleval_agents.appbench.records import AppBenchSample
from tooleval_agents.contracts import RecordMeta, Source
from tooleval_agents.data.inputs import note_file
from tooleval_agents.data.jsonio import LazySequence, read_array
from tooleval_agents.errors import DatasetMissingError


def test_path(data_dir: Path, category: Category) -> Path:
    """``<data_dir>/appbench/data/test/test_<category>.json``."""
    return Path(data_dir) / "appbench" / "data" / "test" / f"test_{category}.json"


def read_file(path: Path, category: Category, source: Source = "official",
              ) -> LazySequence[AppBenchSample]:
    """Any file in the ``test_<category>.json`` format, each sample validated when first read
    (what a run uses: ``--limit 1`` validates one sample)."""
    def finish(sample: AppBenchSample, index: int) -> None:
        sample.meta = RecordMeta(benchmark="appbench", task=category, index=index,
                                 source=source, path=str(path))

    return read_array(Path(path), AppBenchSample, finish=finish)


def load_file(path: Path, category: Category, source: Source = "official") -> list[AppBenchSample]:
    """Load any file in the ``test_<category>.json`` format (every sample validated)."""
    return list(read_file(path, category, source))


def load_category(data_dir: Path, category: Category, source: Source = "official",
                  ) -> list[AppBenchSample]:
    """Load the test samples of a category (noted as an input of a run that reads them:
    few-shot demonstrations come from them)."""
    path = test_path(data_dir, category)
    if not path.is_file():
        raise DatasetMissingError("appbench", path, Path(data_dir))
    note_file(path, data_dir)
    return load_file(path, category, source)
