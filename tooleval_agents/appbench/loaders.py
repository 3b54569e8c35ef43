"""Load AppBench test files (JSON arrays) into validated samples."""

from __future__ import annotations

from pathlib import Path

from tooleval_agents.appbench.names import Category
from tooleval_agents.appbench.records import AppBenchSample
from tooleval_agents.contracts import RecordMeta, Source
from tooleval_agents.errors import DatasetMissingError
from tooleval_agents.jsonio import load_json, validate_items


def test_path(data_dir: Path, category: Category) -> Path:
    """``<data_dir>/appbench/data/test/test_<category>.json``."""
    return Path(data_dir) / "appbench" / "data" / "test" / f"test_{category}.json"


def load_file(path: Path, category: Category, source: Source = "official") -> list[AppBenchSample]:
    """Load any file in the ``test_<category>.json`` format."""
    samples = validate_items(Path(path), load_json(Path(path)), AppBenchSample)
    for i, s in enumerate(samples):
        s.meta = RecordMeta(benchmark="appbench", task=category, index=i, source=source,
                            path=str(path))
    return samples


def load_category(data_dir: Path, category: Category, source: Source = "official",
                  ) -> list[AppBenchSample]:
    """Load the test samples of a category."""
    path = test_path(data_dir, category)
    if not path.is_file():
        raise DatasetMissingError("appbench", path, Path(data_dir))
    return load_file(path, category, source)
