"""Limits the code keeps (the project's working rules), read from the source with ``ast``.

* No module over :data:`MAX_MODULE_LINES` lines and no function over :data:`MAX_FUNCTION_LINES`
  (its ``def`` to its last line, docstring included), outside the allow-lists below, each entry
  with its reason: a new exception is a decision, not an accident.
* No project module loaded by a string (``importlib.import_module("tooleval_agents.graphs...")``,
  ``__import__``): the architecture test reads imports, and a string hides one from it.
* No private attribute of another library's object: an ``obj._name`` read or written where
  ``_name`` is defined nowhere in the project (our own private names, and the hooks LangChain
  asks a subclass to define, such as ``_generate``, are defined here and pass).
* A third-party import inside a function only for a module listed in :data:`DEFERRED_THIRD_PARTY`
  (heavy or optional: it is loaded when the command that needs it runs, not at start-up).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("tooleval_agents", "graphs", "evaluators")
SOURCES = sorted(p for pkg in (*PACKAGES, "benchmarks", "datasets")
                 for p in (REPO / pkg).rglob("*.py"))

MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80

LONG_MODULES: dict[str, str] = {
    # path relative to the repository: why it is longer
}
LONG_FUNCTIONS: dict[str, str] = {
    # "path:function": why it is longer
}

DEFERRED_THIRD_PARTY = {
    # The agent launcher (tooleval_agents/mcp/launch.py) starts every agent: each of its modes
    # imports what it alone needs (the reaper's prctl, the sandbox relay's sockets and threads).
    "ctypes", "socket", "threading",
    # LangChain and LangSmith: loaded by the command or strategy that needs a model or the
    # LangSmith client, so `tooleval --help`, `tooleval list` and a rejected argument stay fast.
    "langchain", "langchain_core", "langsmith", "openai",
    # pandas: only the results table of a run directory (`RunDirectory.to_pandas`).
    "pandas",
    # numpy (~0.1 s to import): only when a corpus is pooled as a matrix or resampled, so
    # `import tooleval_agents` and `tooleval --help` do not pay for it.
    "numpy",
    # rich's live progress display: only while a long job runs.
    "rich",
    # networkx (0.1 s): only for a plan whose calls compete for a partner or repeat an API
    # (tooleval_agents.evaluators.appbench.strict, tooleval_agents.appbench.depgraph), not for every
    # run.
    "networkx",
    # importlib.metadata: the installed version, read when a run records it.
    "importlib",
    # inspect_ai: an optional extra, only for `tooleval export run --format inspect`.
    "inspect_ai",
}
SCRIPTS = frozenset(p.stem for p in (REPO / "benchmarks").glob("*.py"))
"""The benchmark scripts import each other by name (they run from that folder)."""


def rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


@functools.cache
def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def functions(path: Path) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree(path))
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def length(node: ast.AST) -> int:
    return int(node.end_lineno or node.lineno) - node.lineno + 1  # type: ignore[attr-defined]


def test_no_module_is_longer_than_the_limit() -> None:
    long = {rel(p): n for p in SOURCES
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert sorted(set(long) - set(LONG_MODULES)) == [], long
    # An allow-listed module that shrank below the limit leaves the list.
    assert sorted(set(LONG_MODULES) - set(long)) == []


def test_no_function_is_longer_than_the_limit() -> None:
    long = {f"{rel(p)}:{f.name}": length(f) for p in SOURCES for f in functions(p)
            if length(f) > MAX_FUNCTION_LINES}
    assert sorted(set(long) - set(LONG_FUNCTIONS)) == [], long
    assert sorted(set(LONG_FUNCTIONS) - set(long)) == []


def _string_loads(path: Path) -> list[str]:
    found = []
    for node in ast.walk(tree(path)):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in ("import_module", "__import__"):
            continue
        arg = node.args[0]
        literal = arg.value if isinstance(arg, ast.Constant) else None
        named = literal if isinstance(literal, str) else (
            arg.id if isinstance(arg, ast.Name) else None)
        # A constant naming a project module, or a module-level constant holding one.
        if isinstance(named, str) and (named.split(".")[0] in PACKAGES
                                        or _constant_of(path, named).split(".")[0] in PACKAGES):
            found.append(f"{rel(path)}:{node.lineno}")
    return found


def _constant_of(path: Path, name: str) -> str:
    for node in tree(path).body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets) \
                    and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                return node.value.value
    return ""


def test_no_project_module_is_loaded_by_a_string() -> None:
    assert [hit for p in SOURCES for hit in _string_loads(p)] == []


@functools.cache
def project_names() -> frozenset[str]:
    """Every name the project defines: functions, classes, assigned names and attributes."""
    names: set[str] = set()
    for path in SOURCES:
        for node in ast.walk(tree(path)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.alias):
                names.add(node.asname or node.name.split(".")[0])
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
    return frozenset(names)


NAMEDTUPLE_API = frozenset({"_fields", "_asdict", "_replace", "_make", "_field_defaults"})
"""Public despite the underscore (it keeps them apart from field names)."""


def test_no_private_attribute_of_another_library() -> None:
    ours = project_names() | NAMEDTUPLE_API
    foreign = sorted(
        f"{rel(p)}:{node.lineno} .{node.attr}" for p in SOURCES for node in ast.walk(tree(p))
        if isinstance(node, ast.Attribute) and node.attr.startswith("_")
        and not node.attr.startswith("__") and node.attr not in ours)
    assert foreign == []


def test_private_langchain_names_are_not_imported() -> None:
    found = sorted(
        f"{rel(p)}:{node.lineno}" for p in SOURCES for node in ast.walk(tree(p))
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in
        ("langchain", "langchain_core", "langchain_openai", "langgraph", "langsmith")
        and (any(part.startswith("_") for part in (node.module or "").split("."))
             or any(a.name.startswith("_") for a in node.names)))
    assert found == []


def _local_imports(path: Path) -> set[str]:
    """``path: module`` for every import of a module outside the project inside a function."""
    found: set[str] = set()
    for fn in functions(path):
        for node in ast.walk(fn):
            if isinstance(node, ast.Import):
                tops = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                tops = [(node.module or "").split(".")[0]]
            else:
                continue
            found.update(f"{rel(path)}: {t}" for t in tops if t not in PACKAGES)
    return found


def test_imports_inside_functions_defer_only_listed_modules() -> None:
    local = {hit for p in SOURCES for hit in _local_imports(p)}
    assert sorted(h for h in local
                  if h.split(": ")[1] not in DEFERRED_THIRD_PARTY | SCRIPTS) == []
