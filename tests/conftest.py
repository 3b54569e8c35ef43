"""Shared fixtures. The real benchmark data is read from ../shared/data (never copied here)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("TOOLEVAL_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real UltraTool / AppBench / SGD data beside the checkout (``../shared/data``)."""
    if not (SHARED_DATA / "ultratool").is_dir():
        pytest.fail(f"real benchmark data not found at {SHARED_DATA}; set TOOLEVAL_SHARED_DATA")
    return SHARED_DATA


@pytest.fixture(scope="session")
def samples() -> Path:
    """The hand-written samples in ``datasets/``."""
    return REPO / "datasets"


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory,
                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep per-user cache writes (rebuilt sets, downloads) out of the real home directory."""
    cache = tmp_path_factory.getbasetemp() / "user-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.delenv("TOOLEVAL_DATA_DIR", raising=False)
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    monkeypatch.delenv("LANGCHAIN_API_KEY", raising=False)
