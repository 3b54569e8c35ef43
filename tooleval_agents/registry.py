"""Benchmarks and strategies, declared in one place each and found by name here.

The CLI, the runner and the reports only talk to :class:`Benchmark`; they know no benchmark by
name. Built-in and third-party benchmarks register through the ``tooleval_agents.benchmarks``
entry-point group (an object or zero-argument factory returning a :class:`Benchmark`), or
programmatically with :func:`register`.

A benchmark lists its own strategies (:meth:`Benchmark.strategies`); a strategy for someone
else's benchmark registers through the ``tooleval_agents.strategies`` group (a
:class:`~tooleval_agents.contracts.Strategy`, or a zero-argument factory returning one or a
list) or :func:`register_strategy`.

The records a benchmark's hooks return to the core live here too, beside :class:`Benchmark`:
its pinned data sources (:class:`SourceManifest`, read by :mod:`tooleval_agents.data.fetch`)
and its report tables and figures (:class:`ReportTable`, :class:`ReportFigure`, written by
:mod:`tooleval_agents.results.reports`).
"""

from __future__ import annotations

import inspect
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from tooleval_agents.contracts import (
    AgentIO,
    ExampleFields,
    Located,
    Options,
    Scorer,
    ScoringContext,
    Split,
    Strategy,
    validate_options,
)
from tooleval_agents.errors import UnknownNameError, did_you_mean
from tooleval_agents.terminal import printable
from tooleval_agents.verdict import Verdict

if TYPE_CHECKING:  # annotations only: listing benchmarks loads no pandas
    import pandas as pd

ENTRY_POINT_GROUP = "tooleval_agents.benchmarks"
STRATEGY_GROUP = "tooleval_agents.strategies"


# ---------------------------------------------------------------------------------------------
# What the hooks return


class ManifestFile(BaseModel):
    """One pinned upstream file."""

    model_config = ConfigDict(frozen=True)

    path: str
    """Path inside the repository at the pinned commit, and under ``<data_dir>/<source>/``."""
    size: int
    """Size in bytes."""
    sha256: str
    """Lower-case hex sha256 of the file's bytes."""
    group: str
    """Group the file belongs to (``data``, ``predictions``); see ``SourceManifest.groups``."""
    note: str | None = None
    """Anything unusual about the file, e.g. that it is empty upstream too."""


class SourceManifest(BaseModel):
    """The pinned files of one upstream repository (:meth:`Benchmark.data_sources`)."""

    model_config = ConfigDict(frozen=True)

    repo: str
    """GitHub ``owner/name``."""
    commit: str
    """Full commit hash the files are pinned to."""
    licence: str
    """What the licence allows, in short; read it before redistributing anything."""
    groups: dict[str, str]
    """Group name -> what the group holds."""
    default_groups: list[str]
    """Groups fetched unless others are asked for."""
    unpinned: str | None = None
    """Upstream files deliberately left out, and why."""
    files: list[ManifestFile]
    """Every pinned file."""


@dataclass(frozen=True)
class ReportTable:
    """One table of a report (:meth:`Benchmark.report_tables`): ``frame`` goes to
    ``<name>.csv`` unrounded, ``display`` (default: ``frame``) to the Markdown."""

    name: str
    """The CSV's file name without ``.csv``."""
    title: str
    """Its heading in the Markdown."""
    frame: pd.DataFrame
    display: pd.DataFrame | None = None
    note: str = ""
    """Shown under the table (in italics)."""


@dataclass(frozen=True)
class ReportFigure:
    """One PNG of a report, written by a layout (:meth:`Benchmark.report_figures`)."""

    path: Path
    """Where the layout wrote it (in the report's folder)."""
    title: str
    """Its heading and alt text in the Markdown."""
    note: str = ""
    """Shown under the figure (in italics)."""


# ---------------------------------------------------------------------------------------------
# Benchmarks


class Benchmark(ABC):
    """A benchmark: its splits, how to load them, and how a record becomes an example."""

    name: str
    """Registry name, e.g. ``ultratool``."""
    title: str = ""
    """Display name (default: :attr:`name`), e.g. ``UltraTool``."""

    @abstractmethod
    def splits(self) -> list[Split]:
        """Every split the benchmark defines (whether or not its data is present)."""

    @abstractmethod
    def locate(self, split: Split, data_dir: Path) -> Located:
        """The file a split is read from. May build and cache a derived file first (the
        UltraTool sets rebuilt from ``test.json``), so it can take a while and write to the
        per-user cache. Raises :class:`~tooleval_agents.errors.DatasetMissingError` with
        instructions when the data is absent."""

    @abstractmethod
    def load(self, split: Split, data_dir: Path) -> Sequence[BaseModel]:
        """Validated records of a split, each with ``meta`` set."""

    @abstractmethod
    def to_example(self, split: Split, record: Any) -> ExampleFields:
        """A record as example inputs, reference outputs and metadata."""

    @abstractmethod
    def scorer(self, split: Split, *, options: dict[str, Any] | None = None,
               context: ScoringContext | None = None) -> Scorer:
        """The evaluators of a split. ``options``: the user's scoring options, already
        validated against :meth:`scoring_options` (only the keys the user gave, e.g.
        ``{"scoring": "paper"}``); ``context``: what the run provides besides them (the data
        directory, the judge model). The core always builds scorers through
        :func:`build_scorer`; a benchmark that needs no context may leave the parameter out."""

    @abstractmethod
    def default_strategy(self, split: Split) -> str:
        """The strategy run when none is named (the paper's protocol)."""

    def strategies(self) -> list[Strategy]:
        """The benchmark's own strategies (built when first asked for: workflows import
        LangGraph, which a command that only lists data should not pay for)."""
        return []

    def scoring_options(self, split: Split) -> type[Options] | None:
        """The scorer's options for ``split`` (``-O KEY=VALUE`` of ``score``/``compare``/
        ``report``, ``--scoring``), validated before any work; ``None``: it takes none."""
        return None

    def max_tokens(self, split: Split) -> int | None:
        """Default cap on one answer's output tokens for a provider model (a user's
        ``max_tokens`` model argument wins). A bound well above the longest gold answer keeps a
        small local model that never stops from holding a slot until the timeout; ``None``:
        no cap."""
        return None

    def describe(self, split: Split) -> str:
        """What ``split`` asks of a model, in a few words (LangSmith dataset descriptions)."""
        return f"{split.task} ({split.subset})"

    def explain(self, split: Split, result: Any) -> Verdict | None:
        """Why ``result`` (a stored example line: outputs, reference outputs, scores, trace)
        passed or failed, with its calls set against the gold (the viewer's verdict line);
        ``None``: the core's :func:`~tooleval_agents.verdict.generic_verdict` answers."""
        return None

    def shared_metadata(self, split: Split, data_dir: Path,
                        count: int) -> list[dict[str, Any]] | None:
        """Metadata for each of the split's ``count`` examples that lives in another file of the
        benchmark (UltraTool: each sample's domain, from ``test.json``); ``None``: none."""
        return None

    def read_predictions(self, split: Split, path: Path,
                         count: int) -> list[dict[str, Any] | None] | None:
        """A file of answers produced anywhere as workflow outputs, one per example of
        ``split`` in order (``None`` in the list: no answer for that example), for ``tooleval
        score``. ``None``: the core reads it
        (:func:`tooleval_agents.data.answers.read_answers`: answer texts, or
        ``{"index", "output"}`` objects, as a JSON array or JSON Lines)."""
        return None

    # A run of a report is a RunData, which its records and corpus sums tie to results/, a
    # layer above this one: ``Any`` here, ``Sequence[RunData]`` in a benchmark's own hooks.
    def report_tables(self, runs: Sequence[Any]) -> list[ReportTable]:
        """The benchmark's own report tables over its runs, each a
        :class:`~tooleval_agents.results.compare.RunData` (its config, metrics and scores);
        the generic metric x run table always follows."""
        return []

    def report_figures(self, runs: Sequence[Any], out_dir: Path) -> list[ReportFigure]:
        """The benchmark's own figures over its runs (each a
        :class:`~tooleval_agents.results.compare.RunData`), PNGs written to ``out_dir``; the
        generic headline chart always follows."""
        return []

    def data_sources(self) -> Mapping[str, SourceManifest | Mapping[str, Any]]:
        """The upstream repositories ``tooleval data fetch`` downloads the benchmark's data
        from: source name -> its :class:`SourceManifest`
        (repository, pinned commit, licence, file groups, every file with its size and
        sha256), or the same as a dict (e.g. read from a JSON file). Default: none (data the
        user provides)."""
        return {}

    def samples_dir(self) -> Path | None:
        """A data directory (the layout ``tooleval data fetch`` writes) holding the benchmark's
        bundled sample data, recorded as source ``sample`` and listed by ``tooleval data info``
        when no data is present; ``None``: none bundled. A package shipping samples finds them
        with :func:`tooleval_agents.data.datadir.find_samples`."""
        return None

    def answer_formats(self) -> dict[str, tuple[tuple[str, ...], Any]]:
        """The benchmark's own answer formats for ``noisy-reference``: name -> (corruption
        kinds, ``apply(text, kind, rng)``)
        (:func:`tooleval_agents.models.corruptions.register_format`).
        """
        return {}

    def add_commands(self, groups: Mapping[str, Any]) -> None:
        """Add the benchmark's own CLI commands to the Typer apps in ``groups``, keyed by command
        path: ``root``, ``data``, ``data build`` (rebuild test sets upstream never published),
        ``build`` (construct new data with a model), ``export``, ``judge``, ``score``
        (``tooleval score <benchmark>``, else a generic one is given). Called once when the CLI
        starts; keep heavy imports inside the commands."""
        return None  # most benchmarks need no command of their own

    def agent_io(self, split: Split) -> AgentIO | None:
        """How an agent over ``{"messages": [...]}`` plays ``split`` outside a run (its tools,
        its messages, its final messages read as the scorer's outputs), for
        :func:`tooleval_agents.evaluators_for` in a user's ``langsmith.evaluate``; ``None``:
        the split is not solved by such an agent."""
        return None

    def resources(self, data_dir: Path) -> list[dict[str, Any]]:
        """Auxiliary data besides the splits (e.g. an API catalog), for ``tooleval data info``:
        dicts with at least ``name``, ``source`` and ``path``."""
        return []

    def split(self, task: str, subset: str) -> Split:
        """Look up a split by task and subset, with a clear error for unknown ones."""
        splits = self.splits()
        for s in splits:
            if (s.task, s.subset) == (task, subset):
                return s
        tasks = sorted({x.task for x in splits})
        subsets = sorted({x.subset for x in splits})
        raise KeyError(f"{self.name} has no split {task!r}/{subset!r}; tasks: {tasks}, "
                       f"subsets: {subsets}")


_REGISTRY: dict[str, Benchmark] = {}
_LOADED = False
_LOADING = False


def register(benchmark: Benchmark) -> Benchmark:
    """Add a benchmark to the registry (replacing one of the same name).

    Raises:
        TypeError: ``benchmark`` is not a :class:`Benchmark` (a path or a name, say).
    """
    if not isinstance(benchmark, Benchmark):
        raise TypeError(f"a benchmark to register must be a Benchmark, not "
                        f"{type(benchmark).__name__} ({printable(str(benchmark))[:80]})")
    _REGISTRY[benchmark.name] = benchmark
    return benchmark


def _load_entry_points() -> None:
    """Register every entry point once. A plugin that fails to load (or gives no
    :class:`Benchmark`) is skipped with a warning naming it, so the other benchmarks, built-ins
    included, still work."""
    global _LOADED, _LOADING
    if _LOADED or _LOADING:  # _LOADING: a plugin module that calls benchmarks() on import
        return
    _LOADING = True
    try:
        _load_each()
    finally:
        _LOADING = False
    _LOADED = True  # only once every entry point was tried


def _plugins(group: str, kind: type[Any]) -> list[Any]:
    """The objects of an entry-point group: each entry point is an object of ``kind``, a list
    of them, or a zero-argument factory returning either. A broken one is skipped with a
    warning naming it, so the others (built-ins included) still work."""
    noun = kind.__name__.lower()
    found: list[Any] = []
    for ep in entry_points(group=group):
        try:
            obj = ep.load()
            made = obj() if callable(obj) and not isinstance(obj, kind) else obj
        except Exception as exc:  # a third-party plugin may raise anything
            warnings.warn(printable(f"{noun} entry point {ep.name!r} ({ep.value}) failed to "
                                    f"load: {type(exc).__name__}: {exc}"),
                          RuntimeWarning, stacklevel=3)
            continue
        for item in made if isinstance(made, list | tuple) else [made]:
            if isinstance(item, kind):
                found.append(item)
            else:
                warnings.warn(printable(f"{noun} entry point {ep.name!r} ({ep.value}) gave "
                                        f"{type(item).__name__}, not a {kind.__name__}; "
                                        "skipped"), RuntimeWarning, stacklevel=3)
    return found


def _load_each() -> None:
    for bench in _plugins(ENTRY_POINT_GROUP, Benchmark):
        if bench.name not in _REGISTRY:
            register(bench)


def benchmarks() -> dict[str, Benchmark]:
    """All registered benchmarks by name."""
    _load_entry_points()
    return dict(_REGISTRY)


def resolve_split(bench: Benchmark, task: str | None, subset: str | None) -> Split:
    """The split named by ``task``/``subset``; either may be left out when the benchmark has
    only one choice."""
    splits = bench.splits()
    if task is None:
        tasks = sorted({s.task for s in splits})
        if len(tasks) != 1:
            raise ValueError(f"{bench.name} has several tasks: choose one of {tasks}")
        task = tasks[0]
    if subset is None:
        subsets = sorted({s.subset for s in splits if s.task == task})
        if len(subsets) != 1:
            raise ValueError(f"{bench.name} task {task!r} has several subsets: choose one of "
                             f"{subsets}")
        subset = subsets[0]
    return bench.split(task, subset)


def resolve_options(prompts: str | None, *,
                    strategy: tuple[str, type[BaseModel] | None, Mapping[str, Any] | None],
                    scoring: tuple[str, type[BaseModel] | None, Mapping[str, Any] | None],
                    ) -> tuple[dict[str, Any], dict[str, Any]]:
    """A run's strategy and scoring options, validated
    (:func:`~tooleval_agents.contracts.validate_options`), with ``prompts=<prompts>``
    (``--prompts``) added to each whose options declare ``prompts``. Each side is ``(what,
    options model, given)``, e.g. ``("strategy few_shot", ...)``.

    Raises:
        ValueError: a bad option, a prompt set neither side declares, or one given twice.
    """
    out = []
    for what, model, given in (strategy, scoring):
        options = dict(given or {})
        if prompts is not None and model is not None and "prompts" in model.model_fields:
            if "prompts" in options and options["prompts"] != prompts:
                raise ValueError(f"prompt set given twice: --prompts {prompts} and "
                                 f"prompts={options['prompts']}")
            options["prompts"] = prompts
        out.append(validate_options(what, model, options))
    if prompts is not None and all("prompts" not in o for o in out):
        raise ValueError(f"--prompts {prompts}: {strategy[0]} offers no prompt sets, nor does "
                         f"the {scoring[0]}")
    return out[0], out[1]


def with_profile(options: dict[str, Any], scoring: str | None) -> dict[str, Any]:
    """Scoring options with the profile ``scoring`` (``--scoring PROFILE``) as
    ``scoring=PROFILE``: one option, two spellings; both given and different is a bad argument.

    >>> with_profile({"graph": True}, "paper")
    {'graph': True, 'scoring': 'paper'}
    """
    if scoring is None:
        return options
    if options.get("scoring", scoring) != scoring:
        raise ValueError(f"--scoring {scoring} and -O scoring={options['scoring']} disagree")
    return {**options, "scoring": scoring}


def scoring_options_of(bench: Benchmark, split: Split,
                       options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The scoring options a user gave for ``split``, validated against
    :meth:`Benchmark.scoring_options` (only the given keys; a bad one raises
    :class:`~tooleval_agents.contracts.OptionError`)."""
    return validate_options(f"{bench.name} {split.task} scoring", bench.scoring_options(split),
                            options)


def build_scorer(bench: Benchmark, split: Split, options: Mapping[str, Any] | None = None,
                 context: ScoringContext | None = None) -> Scorer:
    """``bench``'s scorer for ``split``: the one place scoring options are validated
    (against :meth:`Benchmark.scoring_options`; a bad one raises
    :class:`~tooleval_agents.contracts.OptionError`), the run's ``context`` passed apart.

    >>> from tooleval_agents import get_benchmark
    >>> bench = get_benchmark("appbench")
    >>> try:
    ...     build_scorer(bench, bench.split("plan", "ss"), {"scoring": "exact"})
    ... except ValueError as exc:
    ...     print(exc)
    appbench plan scoring option 'scoring': Input should be 'strict' or 'paper' (got 'exact')
    """
    checked = scoring_options_of(bench, split, options)
    if "context" in inspect.signature(bench.scorer).parameters:
        return bench.scorer(split, options=checked, context=context or ScoringContext())
    return bench.scorer(split, options=checked)


def get_benchmark(name: str) -> Benchmark:
    """A registered benchmark; ``KeyError`` lists the known names."""
    found = benchmarks()
    if name not in found:
        raise UnknownNameError(f"unknown benchmark {name!r}; known: {sorted(found)};"
                               f"{did_you_mean(name, found)}".rstrip(";"))
    return found[name]


# ---------------------------------------------------------------------------------------------
# Strategies

_STRATEGIES: dict[tuple[str, str], Strategy] = {}
"""Registered with :func:`register_strategy` (they win over declared and plugin ones)."""
_DECLARED: dict[int, tuple[Benchmark, list[Strategy]]] = {}
"""Each benchmark object's own strategies, built once (keyed by identity: a benchmark
re-registered under the same name declares its own)."""
_PLUGINS: list[Strategy] | None = None


def register_strategy(strategy: Strategy) -> Strategy:
    """Register (or replace) a strategy under ``(benchmark, name)``."""
    _STRATEGIES[(strategy.benchmark, strategy.name)] = strategy
    return strategy


def _plugin_strategies() -> list[Strategy]:
    """The ``tooleval_agents.strategies`` entry points, loaded once."""
    global _PLUGINS
    if _PLUGINS is None:
        _PLUGINS = _plugins(STRATEGY_GROUP, Strategy)
    return _PLUGINS


def _declared(bench: Benchmark) -> list[Strategy]:
    entry = _DECLARED.get(id(bench))
    if entry is None or entry[0] is not bench:
        entry = _DECLARED[id(bench)] = (bench, list(bench.strategies()))
    return entry[1]


def strategies(benchmark: str | None = None) -> dict[tuple[str, str], Strategy]:
    """Known strategies by ``(benchmark, name)``, optionally of one benchmark: the
    benchmarks' own, then entry-point plugins, then programmatic registrations (a later
    source wins a name)."""
    found: dict[tuple[str, str], Strategy] = {}
    for name, bench in benchmarks().items():
        if benchmark in (None, name):
            found.update({(s.benchmark, s.name): s for s in _declared(bench)})
    found.update({(s.benchmark, s.name): s for s in _plugin_strategies()})
    found.update(_STRATEGIES)
    return {k: v for k, v in found.items() if benchmark in (None, k[0])}


def get_strategy(benchmark: str, name: str) -> Strategy:
    """A known strategy; ``KeyError`` names the benchmark's strategies."""
    found = strategies(benchmark)
    if (benchmark, name) not in found:
        known = sorted(n for _, n in found)
        raise UnknownNameError(f"unknown strategy {name!r} for {benchmark}; known: {known};"
                               f"{did_you_mean(name, known)}".rstrip(";"))
    return found[(benchmark, name)]


def agent_strategies(benchmark: str, split: Split) -> list[str]:
    """The strategies of ``benchmark`` that run a user's agent on ``split``'s task."""
    return [name for (_, name), s in strategies(benchmark).items()
            if s.accepts_agent and (s.tasks is None or split.task in s.tasks)]


def agent_strategy(benchmark: str, split: Split) -> str:
    """The strategy a user's agent plays when none is named: the benchmark's first one that
    accepts an agent for the split's task."""
    found = agent_strategies(benchmark, split)
    if not found:
        raise ValueError(f"no {benchmark} strategy for task {split.task!r} runs a user's "
                         "agent (--agent)")
    return found[0]


def served_agent_io(bench: Benchmark, split: Split, strategy: str | None = None,
                    ) -> tuple[str, Callable[[Path | None], AgentIO]]:
    """What an outside agent plays on ``split`` (``tooleval serve``, ``--agent-cmd``): the name
    of the strategy whose agent part it is, and its :class:`~tooleval_agents.contracts.AgentIO`
    for a data directory. ``strategy`` named: that strategy's
    (:meth:`~tooleval_agents.contracts.Strategy.agent_io`); else the benchmark's own
    (:meth:`Benchmark.agent_io`, named after the strategy a user's agent plays, or ``agent``),
    else the first strategy's that has one.

    Raises:
        ValueError: nothing serves the split (or the named strategy has no agent part).
    """
    known = strategies(bench.name)
    if strategy is not None:
        named = get_strategy(bench.name, strategy)
        if named.agent_io(split) is None:
            raise ValueError(f"strategy {strategy!r} has no agent part another agent could "
                             f"play on {split.name}; strategies that have: "
                             f"{', '.join(_serving(bench, split)) or 'none'}")
        return strategy, lambda data_dir: _io(named.agent_io(split, data_dir))
    own = bench.agent_io(split)
    if own is not None:
        name = next((n for n in agent_strategies(bench.name, split)), "agent")
        return name, lambda data_dir: own
    serving = _serving(bench, split)
    if not serving:
        raise ValueError(f"{split.name} has no tools an agent could be served: neither "
                         f"{bench.name} (Benchmark.agent_io) nor any of its strategies "
                         "(Strategy.agent_io) declares them")
    first = known[(bench.name, serving[0])]
    return serving[0], lambda data_dir: _io(first.agent_io(split, data_dir))


def _serving(bench: Benchmark, split: Split) -> list[str]:
    return [name for (_, name), s in strategies(bench.name).items()
            if (s.tasks is None or split.task in s.tasks) and s.agent_io(split) is not None]


def _io(io: AgentIO | None) -> AgentIO:
    if io is None:  # agent_io answered for the split before; a data directory changed that
        raise ValueError("the strategy's agent part is not available for this data")
    return io
