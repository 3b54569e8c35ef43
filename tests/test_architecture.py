"""The layers run one way (read from the source with ``ast``, function-local imports included).

* The core (``tooleval_agents`` outside the benchmark subpackages and the workflows and metrics)
  imports neither ``tooleval_agents.graphs`` nor ``tooleval_agents.evaluators`` nor a benchmark
  subpackage.
* No module import cycle among the project's modules.
* Every module of the package is in a layer (:data:`LAYERS`: the top-level modules, such as
  the contracts and the registry, and the core's folders, data < models < results < mcp < run
  < cli): none imports a layer above it, not even for a type or inside a function.
* A project import inside a function only where it defers a heavy dependency: the benchmark
  declarations load their workflows and metrics (LangGraph, networkx, the prompts) when a
  split is run or scored, not when the CLI lists what exists. They are listed here, so a new
  one is a decision, not an accident.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

import networkx as nx
import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("tooleval_agents", "graphs", "evaluators")
"""The folders of the source (``graphs/`` and ``evaluators/`` install as
``tooleval_agents.graphs`` and ``tooleval_agents.evaluators``)."""
BENCHMARK_PACKAGES = ("tooleval_agents.ultratool", "tooleval_agents.appbench")
UPWARD = ("tooleval_agents.graphs", "tooleval_agents.evaluators", *BENCHMARK_PACKAGES)

DEFERRED = {
    # module: project modules it may import inside a function, each heavy (LangGraph,
    # LangChain, networkx, pandas/matplotlib, Typer) and needed only when a split is run,
    # scored or reported, or the command line starts.
    "tooleval_agents.ultratool.benchmark": {
        "tooleval_agents.graphs.ultratool.protocol",
        "tooleval_agents.graphs.ultratool.plan_create_use",
        "tooleval_agents.graphs.ultratool.tools",
        "tooleval_agents.evaluators.ultratool.kv", "tooleval_agents.evaluators.trajectory",
        "tooleval_agents.evaluators.parsing",
        "tooleval_agents.evaluators.ultratool.judge",
        "tooleval_agents.evaluators.ultratool.planning_structure",
        "tooleval_agents.evaluators.ultratool.plan_create_use",
        "tooleval_agents.ultratool.cli", "tooleval_agents.ultratool.report",
        "tooleval_agents.ultratool.build_cli",
        # the readers import the rebuilder (rapidfuzz): not for every command of the CLI
        "tooleval_agents.ultratool.loaders", "tooleval_agents.ultratool.rebuild",
        "tooleval_agents.ultratool.corruptions",
        # the viewer's verdict aligns steps with the scorer's own code
        "tooleval_agents.ultratool.explain",
    },
    "tooleval_agents.appbench.benchmark": {
        "tooleval_agents.graphs.appbench.planning", "tooleval_agents.graphs.appbench.tools",
        "tooleval_agents.evaluators.appbench.parse", "tooleval_agents.evaluators.appbench.scoring",
        "tooleval_agents.evaluators.appbench.execution", "tooleval_agents.evaluators.trajectory",
        "tooleval_agents.appbench.catalog", "tooleval_agents.appbench.stubs",
        "tooleval_agents.appbench.cli", "tooleval_agents.appbench.report",
        "tooleval_agents.appbench.depgraph", "tooleval_agents.appbench.build_cli",
        "tooleval_agents.appbench.export_cli",
        # the viewer's verdict pairs calls with the strict scorer's own code
        "tooleval_agents.appbench.explain",
    },
    # The construction commands load the workflow (LangGraph) and the provider models
    # (LangChain) only when they run.
    "tooleval_agents.appbench.build_cli": {"tooleval_agents.graphs.appbench.build",
                                           "tooleval_agents.models.specs",
                                           "tooleval_agents.appbench.build_models"},
    "tooleval_agents.appbench.export_cli": {"tooleval_agents.graphs.appbench.export"},
    "tooleval_agents.ultratool.cli": {"tooleval_agents.evaluators.ultratool.scoring",
                                      "tooleval_agents.evaluators.ultratool.judge",
                                      "tooleval_agents.models.specs",
                                      # the builders (rapidfuzz), for their commands only
                                      "tooleval_agents.ultratool.derive",
                                      "tooleval_agents.ultratool.rebuild",
                                      "tooleval_agents.ultratool.loaders"},
    "tooleval_agents.ultratool.build_cli": {"tooleval_agents.graphs.ultratool.build_run",
                                            "tooleval_agents.models.specs",
                                            "tooleval_agents.models.retry",
                                            "tooleval_agents.ultratool.construction"},
    "tooleval_agents.appbench.cli": {"tooleval_agents.evaluators.appbench.scoring"},
    # The judge (LangChain) only for the judged UltraTool tasks.
    "tooleval_agents.evaluators.ultratool.scoring": {"tooleval_agents.evaluators.ultratool.judge"},
    # evaluators_for loads the provider models (LangChain) only for a judge given by name.
    "tooleval_agents.evaluation": {"tooleval_agents.models.specs"},
    # The command line imports what a command runs when it runs (`tooleval --help` and a
    # rejected argument stay fast).
    "tooleval_agents.cli.run": {"tooleval_agents.run.runner", "tooleval_agents.run.setup",
                                "tooleval_agents.models.retry", "tooleval_agents.cli.run_many"},
    # A grid checks its model specs (LangChain) when it is planned, not when the CLI starts.
    "tooleval_agents.run.grid": {"tooleval_agents.models.specs"},
    # --batch with an offline model is refused before anything runs.
    "tooleval_agents.cli.cost_options": {"tooleval_agents.models.specs"},
    # `tooleval run` imports its own command module only; any other command line, all of them.
    "tooleval_agents.cli": {"tooleval_agents.cli.compare", "tooleval_agents.cli.data_fetch",
                            "tooleval_agents.cli.data_info", "tooleval_agents.cli.data_push",
                            "tooleval_agents.cli.listing", "tooleval_agents.cli.report",
                            "tooleval_agents.cli.run", "tooleval_agents.cli.score_run",
                            "tooleval_agents.cli.view", "tooleval_agents.cli.score_predictions",
                            "tooleval_agents.cli.upload", "tooleval_agents.cli.export_run",
                            "tooleval_agents.cli.serve"},
    "tooleval_agents.cli.upload": {"tooleval_agents.run.upload"},  # LangSmith's client
    "tooleval_agents.cli.compare": {"tooleval_agents.results.compare"},
    "tooleval_agents.cli.data_fetch": {"tooleval_agents.data.download"},  # the HTTP client
    "tooleval_agents.cli.report": {"tooleval_agents.results.reports"},
    "tooleval_agents.cli.view": {"tooleval_agents.viewer", "tooleval_agents.viewer.serve"},
    "tooleval_agents.cli.export_run": {"tooleval_agents.results.inspect_log"},
    # The public names whose modules load LangChain, LangSmith, pandas or matplotlib, on
    # first use (``import tooleval_agents`` stays light).
    "tooleval_agents": {"tooleval_agents.results.compare",
                        "tooleval_agents.models.reference_tools",
                        "tooleval_agents.models.chat_models", "tooleval_agents.run.runner",
                        "tooleval_agents.grids", "tooleval_agents.models.offline"},
    # LangChain, only to re-judge
    "tooleval_agents.results.rescore": {"tooleval_agents.models.specs"},
    # MCP (the optional mcp extra: the SDK, uvicorn, langchain-mcp-adapters): loaded when a
    # run serves its tools over MCP (-O mcp=true, --agent-cmd) or `tooleval serve` starts.
    "tooleval_agents.run.setup": {"tooleval_agents.mcp.external"},
    "tooleval_agents.run.served": {"tooleval_agents.mcp.server",
                                   # the model gateway: an agent command run with --model
                                   "tooleval_agents.gateway", "tooleval_agents.gateway.server"},
    "tooleval_agents.graphs.mcp_agent": {"tooleval_agents.mcp.client",
                                         "tooleval_agents.mcp.server"},
    "tooleval_agents.cli.serve": {"tooleval_agents.mcp.log", "tooleval_agents.mcp.server",
                                  "tooleval_agents.mcp.sessions",
                                  "tooleval_agents.data.langsmith_datasets",  # LangSmith
                                  # --model: the gateway and the model (LangChain)
                                  "tooleval_agents.gateway", "tooleval_agents.gateway.server",
                                  "tooleval_agents.models.offline",
                                  "tooleval_agents.models.retry",
                                  "tooleval_agents.models.specs",
                                  "tooleval_agents.models.accounting"},
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[0] != "tooleval_agents":  # graphs/, evaluators/: installed inside the package
        parts.insert(0, "tooleval_agents")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py")}


def resolve(name: str) -> str | None:
    """The project module an imported name lives in (``a.b.c`` -> ``a.b`` when ``c`` is a
    name inside module ``a.b``)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


@functools.cache  # parsed once for every test
def imports(module: str) -> tuple[tuple[str, bool], ...]:
    """``(imported project module, inside a function?)`` for every import of ``module``."""
    return tuple(_imports(module))


def _imports(module: str) -> Iterator[tuple[str, bool]]:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    local: set[int] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            local.update(id(n) for n in ast.walk(fn) if isinstance(n, ast.Import | ast.ImportFrom))
    TYPING_ONLY[module] = {id(n) for block in ast.walk(tree) if _is_type_checking(block)
                           for n in ast.walk(block) if isinstance(n, ast.Import | ast.ImportFrom)}
    is_package = MODULES[module].name == "__init__.py"
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = module.split(".")[: len(module.split(".")) - node.level + is_package]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            # ``from pkg import module`` imports the module; ``from module import name``
            # imports the module the name is in.
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                     for a in node.names]
        for name in names:
            target = resolve(name) if name.split(".")[0] in PACKAGES else None
            if target and target != module:
                if id(node) in TYPING_ONLY[module]:
                    TYPING_EDGES.add((module, target))
                yield target, id(node) in local


TYPING_ONLY: dict[str, set[int]] = {}
TYPING_EDGES: set[tuple[str, str]] = set()
"""Imports under ``if TYPE_CHECKING:`` (annotations only: they never run, so they make no
cycle; they still count for the layers)."""


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def is_core(module: str) -> bool:
    return module.startswith("tooleval_agents") and not module.startswith(UPWARD)


def test_the_core_imports_no_workflow_metric_or_benchmark() -> None:
    upward = sorted(f"{m} -> {t}" for m in MODULES if is_core(m)
                    for t, _ in imports(m) if t.startswith(UPWARD))
    assert upward == []


def packages_run(module: str, target: str) -> Iterator[str]:
    """The packages whose ``__init__`` importing ``target`` runs first, ``module``'s own
    ancestors excepted (they are being imported already)."""
    parts = target.split(".")
    for i in range(1, len(parts)):
        package = ".".join(parts[:i])
        if package in MODULES and not (module + ".").startswith(package + "."):
            yield package


def test_no_module_import_cycle() -> None:
    graph = nx.DiGraph([(m, t) for m in MODULES for t, _ in imports(m)
                        if (m, t) not in TYPING_EDGES])
    graph.add_edges_from((m, p) for m in MODULES for t, local in imports(m)
                         if not local and (m, t) not in TYPING_EDGES
                         for p in packages_run(m, t))
    assert sorted(sorted(c) for c in nx.simple_cycles(graph)) == []


LAYERS: tuple[tuple[str, ...], ...] = (
    # nothing of the project: errors, outside text printed safely, secrets masked, a verdict's
    # record, the seeded tool faults
    ("errors", "terminal", "redaction", "verdict", "tool_faults"),
    ("contracts",),  # what every layer shares
    ("registry",),  # benchmarks and strategies by name, and the records their hooks return
    ("data",),
    # the model under test; your own agent (its calls read as tool calls written as text,
    # and the offline models play one); a tool call answered as the agent sees it
    ("models", "agents", "tool_execution"),
    ("results", "evaluation"),  # what a run leaves; evaluators for your own evaluate
    # what a run serves an outside agent: its tools (MCP) and its model (the gateway)
    ("mcp", "gateway"),
    ("run",),
    ("grids", "viewer"),  # run_grid; the viewer of run directories
    ("cli",),
    ("tooleval_agents", "__main__"),  # the public surface; ``python -m tooleval_agents``
    # above the core: the workflows, the metrics and the benchmarks' declarations
    ("graphs", "evaluators", "ultratool", "appbench"),
)
"""Every module of the package is in one of these layers, lowest first: a unit (a top-level
module, or a folder with all it holds) imports only its own layer and those below it -- not
even for a type annotation or inside a function. A new module or folder gets its layer here."""


def unit_of(module: str) -> str:
    """The top-level module or folder of the package ``module`` is (``tooleval_agents``: the
    package's own ``__init__``, its public surface)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def layer_of(module: str) -> int | None:
    unit = unit_of(module)
    return next((i for i, units in enumerate(LAYERS) if unit in units), None)


def test_every_module_has_a_layer() -> None:
    assert sorted({unit_of(m) for m in MODULES if layer_of(m) is None}) == []


def test_no_import_goes_up_a_layer_type_only_and_function_level_included() -> None:
    upward = sorted(f"{m} -> {t}" for m in MODULES if (low := layer_of(m)) is not None
                    for t, _ in imports(m) if (high := layer_of(t)) is not None and high > low)
    assert upward == []


def test_the_core_folders_are_layers_in_their_documented_order() -> None:
    # docs/architecture.md: data < models < results < mcp < run < cli
    folders = ("data", "models", "results", "mcp", "run", "cli")
    assert [layer_of(f"tooleval_agents.{f}") for f in folders] == sorted(
        layer_of(f"tooleval_agents.{f}") for f in folders)
    assert len({layer_of(f"tooleval_agents.{f}") for f in folders}) == len(folders)


def test_the_gateway_does_not_import_the_mcp_server() -> None:
    # Layer-mates, one way: the agent command (mcp.external) uses the gateway, never the
    # reverse, so the gateway serves without the MCP SDK's server loaded.
    back = sorted(f"{m} -> {t}" for m in MODULES if unit_of(m) == "gateway"
                  for t, _ in imports(m) if unit_of(t) == "mcp")
    assert back == []


def test_project_imports_inside_functions_only_defer_heavy_modules() -> None:
    found = {(m, t) for m in MODULES for t, local in imports(m) if local}
    allowed = {(m, t) for m, targets in DEFERRED.items() for t in targets}
    assert sorted(found - allowed) == []


@pytest.mark.parametrize("name", ["tooleval_agents", "tooleval_agents.cli"])
def test_importing_the_core_loads_no_workflow_or_metric(name: str) -> None:
    import subprocess
    import sys

    code = (f"import sys, {name}; print(sorted(m for m in sys.modules "
            "if m.split('.')[:2] in (['tooleval_agents', 'graphs'], "
            "['tooleval_agents', 'evaluators'])))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=REPO).stdout.strip()
    assert out == "[]"


CLI_USERS = sorted(m for m in MODULES if not m.startswith("tooleval_agents.cli")
                   and not m.endswith("__main__")  # runs the command when imported
                   and any(t.startswith("tooleval_agents.cli") for t, _ in imports(m)))


@pytest.mark.parametrize("name", CLI_USERS)
def test_a_module_that_uses_the_cli_imports_first_without_a_cycle(name: str) -> None:
    # The benchmarks' commands are registered on the app through the registry, which the
    # static cycle check above cannot see: importing a benchmark's command module first must
    # not reach back into it half-initialised.
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True,
                          text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr.strip().splitlines()[-1]


CONTRACTS = "tooleval_agents.contracts"
FACADE = "tooleval_agents"
"""The package's public surface (docs/architecture.md): the one module that re-exports
contract types, for users; the project's own modules import them from :data:`CONTRACTS`."""


def _contract_names(module: str) -> tuple[set[str], set[str]]:
    """The names ``module`` imports from :data:`CONTRACTS`, and those it re-exports (listed in
    ``__all__`` or imported ``as`` themselves)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    public: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            public = set(ast.literal_eval(node.value))
    imported, exported = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == CONTRACTS:
            for alias in node.names:
                name = alias.asname or alias.name
                imported.add(name)
                if name in public or alias.asname == alias.name:
                    exported.add(name)
    return imported, exported


def test_contract_types_are_imported_from_the_contracts_module_only() -> None:
    reexported = sorted(f"{m}: {n}" for m in MODULES if m != FACADE
                        for n in _contract_names(m)[1])
    assert reexported == []
    # No module reaches a contract type through another module either (tests included).
    carriers = {m: _contract_names(m)[0] for m in MODULES if m != FACADE}
    users = [*MODULES.values(), *(REPO / "tests").rglob("*.py"),
             *(REPO / "benchmarks").glob("*.py")]
    detours = sorted(f"{path.relative_to(REPO)}: {node.module}.{alias.name}" for path in users
                     for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                     if isinstance(node, ast.ImportFrom) and node.module in carriers
                     for alias in node.names if alias.name in carriers[node.module])
    assert detours == []


JUDGE = "tooleval_agents.evaluators.ultratool.judge"


def test_the_ultratool_judge_is_reached_through_its_one_entry() -> None:
    # Live judging, replay and agreement are modes of ``ultratool_judge``: the judge's modules
    # are its parts, imported by no module outside the judge package.
    inside = sorted(f"{m} -> {t}" for m in MODULES if not m.startswith(JUDGE)
                    for t, _ in imports(m) if t.startswith(JUDGE + "."))
    assert inside == []
    assert any(t == JUDGE for t, _ in imports("tooleval_agents.ultratool.benchmark"))
