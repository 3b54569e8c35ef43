"""Where benchmark data lives: ``--data-dir``, else ``TOOLEVAL_DATA_DIR``, else a per-user cache.

A data directory mirrors the upstream repositories, one folder per source::

    <data_dir>/ultratool/data/English-dataset/test.json      (JoeYing1019/UltraTool)
    <data_dir>/appbench/data/test/test_ss.json               (ruleGreen/AppBench)
    <data_dir>/sgd/test/schema.json                          (dstc8-schema-guided-dialogue)

``tooleval data fetch`` writes this layout (each benchmark says which sources it reads:
:meth:`~tooleval_agents.registry.Benchmark.data_sources`); a benchmark's bundled samples use it
too (:meth:`~tooleval_agents.registry.Benchmark.samples_dir`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from platformdirs import user_cache_path

from tooleval_agents.contracts import Source, Split
from tooleval_agents.registry import Benchmark, benchmarks, get_benchmark

ENV_VAR = "TOOLEVAL_DATA_DIR"


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


def _holds(bench: Benchmark, split: Split, data_dir: Path) -> bool:
    try:
        bench.locate(split, data_dir)
    except FileNotFoundError:  # DatasetMissingError, or a plugin's plain one
        return False
    return True


def data_dir_or_samples(bench: Benchmark, splits: Iterable[Split],
                        data_dir: Path | str | None = None) -> tuple[Path, str | None]:
    """The data directory for ``splits``, and a one-line note when it is not the one asked for.

    The embedded default: when no data directory was named (neither ``data_dir`` nor
    ``$TOOLEVAL_DATA_DIR``) and the default one lacks a split that the benchmark's bundled
    samples hold, every split reads the samples (one source for the whole command), and the
    note says so with the fetch command. A named directory is used as it is (a missing split
    is then the error that says how to get it).
    """
    resolved = resolve_data_dir(data_dir)
    if data_dir is not None or os.environ.get(ENV_VAR):
        return resolved, None
    wanted = list(splits)
    samples = bench.samples_dir()
    if samples is None or all(_holds(bench, s, resolved) for s in wanted) or not all(
            _holds(bench, s, samples) for s in wanted):
        return resolved, None
    return samples, (f"no {bench.name} data in {resolved}: using the bundled samples "
                     f"({samples}); the full data: tooleval data fetch {bench.name}")


def cache_dir() -> Path:
    """Writable per-user directory for derived files (rebuilt test sets, response caches)."""
    return user_cache_path("tooleval-agents")


def find_samples(source: str, *candidates: Path) -> Path | None:
    """The first of ``candidates`` holding a ``<source>/`` folder: where a benchmark's bundled
    samples are (e.g. its package's ``samples/`` in a wheel, else the ``datasets/`` folder of a
    source checkout); ``None`` when none does."""
    for candidate in candidates:
        if (candidate / source).is_dir():
            return candidate
    return None


def bundled_samples() -> dict[str, Path]:
    """Each registered benchmark that bundles samples -> the data directory holding them
    (:meth:`~tooleval_agents.registry.Benchmark.samples_dir`)."""
    found: dict[str, Path] = {}
    for name, bench in benchmarks().items():
        where = bench.samples_dir()
        if where is not None:
            found[name] = where
    return found


def samples_dir(benchmark: str | None = None) -> Path:
    """The data directory of ``benchmark``'s bundled samples; without a name, the first
    benchmark's that bundles any (a source checkout keeps every built-in benchmark's samples in
    one ``datasets/`` folder). ``FileNotFoundError`` when there are none."""
    if benchmark is None:
        found = list(bundled_samples().values())
    else:
        where = get_benchmark(benchmark).samples_dir()
        found = [where] if where is not None else []
    if not found:
        raise FileNotFoundError(f"no bundled samples found for {benchmark or 'any benchmark'}")
    return found[0]


def source_of(data_dir: Path) -> Source:
    """``"sample"`` when ``data_dir`` holds a benchmark's bundled samples
    (:meth:`~tooleval_agents.registry.Benchmark.samples_dir`), else ``"official"``: the source
    recorded for files read from it."""
    here = Path(data_dir).resolve()
    samples = any(here == where.resolve() for where in bundled_samples().values())
    return "sample" if samples else "official"
