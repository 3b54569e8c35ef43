"""The shared file helpers: atomic writes, file digests, JSON array files."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tooleval_agents.appbench.records import AppBenchSample
from tooleval_agents.data.jsonio import MAX_NESTING, atomic_write_text, read_array, sha256_file
from tooleval_agents.errors import DataFormatError


def test_atomic_write_text_and_sha256_file(tmp_path: Path) -> None:
    target = tmp_path / "new" / "dir" / "out.json"
    atomic_write_text(target, "ünïcode\n")
    atomic_write_text(target, "second ünïcode\n")
    assert target.read_bytes() == "second ünïcode\n".encode()
    assert [p.name for p in target.parent.iterdir()] == ["out.json"]  # no temporary left
    assert sha256_file(target) == hashlib.sha256("second ünïcode\n".encode()).hexdigest()


@pytest.mark.parametrize("depth", [250, 2_400, 24_000])
def test_a_data_file_nested_too_deep_is_one_error_on_every_python(tmp_path: Path,
                                                                  depth: int) -> None:
    """The same failure whatever the reader's own limit (about 1,000 levels on 3.11, 10,000 on
    3.13): a record deeper than MAX_NESTING, and a top-level value that is not an array."""
    for text in ("[" + '{"a":' * depth + "1" + "}" * depth + "]",
                 '{"a":' * depth + "1" + "}" * depth):
        path = tmp_path / "deep.json"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(DataFormatError, match=f"nested deeper than {MAX_NESTING} levels"):
            read_array(path, AppBenchSample)
