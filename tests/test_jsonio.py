"""The shared file helpers: atomic writes and file digests."""

from __future__ import annotations

import hashlib
from pathlib import Path

from tooleval_agents.data.jsonio import atomic_write_text, sha256_file


def test_atomic_write_text_and_sha256_file(tmp_path: Path) -> None:
    target = tmp_path / "new" / "dir" / "out.json"
    atomic_write_text(target, "ünïcode\n")
    atomic_write_text(target, "second ünïcode\n")
    assert target.read_bytes() == "second ünïcode\n".encode()
    assert [p.name for p in target.parent.iterdir()] == ["out.json"]  # no temporary left
    assert sha256_file(target) == hashlib.sha256("second ünïcode\n".encode()).hexdigest()
