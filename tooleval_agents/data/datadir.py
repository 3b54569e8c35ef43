"""Where benchmark data lives: ``--data-dir``, else ``TOOLEVAL_DATA_DIR``, else a per-user cache.

A data directory mirrors the upstream repositories, one folder per source::

    <data_dir>/ultratool/data/English-dataset/test.json      (JoeYing1019/UltraTool)
    <data_dir>/appbench/data/test/test_ss.json               (ruleGreen/AppBench)
    <data_dir>/sgd/test/schema.json                          (dstc8-schema-guided-dialogue)

``tooleval data fetch`` writes this layout; ``datasets/`` (bundled samples) uses it too.
"""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_cache_path

from tooleval_agents.contracts import Source

ENV_VAR = "TOOLEVAL_DATA_DIR"
SOURCES = ("ultratool", "appbench", "sgd")


def default_data_dir() -> Path:
    """The per-user cache directory used when neither ``--data-dir`` nor the variable is set."""
    return user_cache_path("tooleval-agents") / "data"


def resolve_data_dir(data_dir: Path | str | None = None) -> Path:
    """``data_dir`` if given, else ``$TOOLEVAL_DATA_DIR``, else :func:`default_data_dir`."""
    if data_dir is not None:
        return Path(data_dir).expanduser()
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    return default_data_dir()


def cache_dir() -> Path:
    """Writable per-user directory for derived files (rebuilt test sets, response caches)."""
    return user_cache_path("tooleval-agents")


def samples_dir() -> Path:
    """The hand-written sample data: ``datasets/`` of a source checkout, or the copy a wheel
    installs as ``tooleval_agents/samples``."""
    here = Path(__file__).resolve().parents[1]  # the tooleval_agents package
    for candidate in (here / "samples", here.parent / "datasets"):
        if (candidate / "ultratool").is_dir() or (candidate / "appbench").is_dir():
            return candidate
    raise FileNotFoundError(
        "bundled samples not found: expected tooleval_agents/samples (wheel) or datasets/ "
        "(source checkout)"
    )


def source_of(data_dir: Path) -> Source:
    """``"sample"`` when ``data_dir`` is the bundled samples (:func:`samples_dir`), else
    ``"official"``: the source recorded for files read from it."""
    try:
        return "sample" if Path(data_dir).resolve() == samples_dir().resolve() else "official"
    except FileNotFoundError:
        return "official"
