"""Shared fixtures. The real benchmark data is read from ../shared/data (never copied here)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("TOOLEVAL_SHARED_DATA", REPO.parent / "shared" / "data"))


# CI has the data and sets this, so a missing copy fails there instead of skipping silently.
REQUIRE_SHARED_DATA = os.environ.get("TOOLEVAL_REQUIRE_SHARED_DATA", "") not in ("", "0")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real UltraTool / AppBench / SGD data beside the checkout (``../shared/data``).

    A user's clone has no ``../shared``: the tests that need it skip there, with the reason.
    """
    if not all((SHARED_DATA / source).is_dir() for source in ("ultratool", "appbench", "sgd")):
        message = (f"real benchmark data not found at {SHARED_DATA} (set TOOLEVAL_SHARED_DATA "
                   "to a copy laid out like `tooleval data fetch` leaves it)")
        if REQUIRE_SHARED_DATA:
            pytest.fail(message + "; TOOLEVAL_REQUIRE_SHARED_DATA is set, so this is an error")
        pytest.skip(message)
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
