"""The project uses LangChain, LangGraph and LangSmith through their public interfaces only
(issue 23, item 5): a private name of theirs may change in any release, and our dependency
ranges admit every release up to the next major version.

Read from the source with ``ast`` (``tooleval_agents``, ``graphs/``, ``evaluators/`` and
``benchmarks``). A library's private names are the ``_``-prefixed, non-dunder attributes of the
classes and modules the project imports from ``langchain*``, ``langgraph`` and ``langsmith``
(read with ``dir`` on the installed versions). Forbidden:

* reading or calling such a name on any object but ``self``/``cls`` (``model._llm_type``,
  ``inner._agenerate(...)``, ``getattr(client, "_session")``), or on ``self`` when the project
  does not define it (an inherited private);
* defining such a name in a project class, unless it is one of :data:`HOOKS`, the methods
  LangChain documents for a custom chat model to implement;
* importing a private module or name of these libraries.

:data:`ALLOWED` would list a justified exception (one adapter module, with the reason); it is
empty: nothing needs one.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCANNED = ("tooleval_agents", "graphs", "evaluators", "benchmarks")
LIBRARIES = ("langchain", "langgraph", "langsmith")
"""Top-level package prefixes (``langchain`` covers ``langchain_core``, ``langchain_openai``...)."""

HOOKS = frozenset({
    "_llm_type",  # BaseChatModel: abstract, the model type
    "_generate",  # BaseChatModel: abstract, one call
    "_agenerate",  # BaseChatModel: its async form
    "_stream",  # BaseChatModel: streaming, optional
    "_astream",
    "_identifying_params",  # BaseLanguageModel: the parameters that identify the model
    "_get_ls_params",  # BaseChatModel: "Subclasses should override" (LangSmith metadata)
})
"""Subclass hooks LangChain documents for a custom chat model: a project class may define
them (and call them on ``self`` or ``super()``), never read them on another object."""

ALLOWED: dict[tuple[str, str], str] = {}
"""``(module, private name) -> reason``: justified exceptions (none)."""


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def is_library(module: str) -> bool:
    return module.partition(".")[0].startswith(LIBRARIES)


def project_files() -> Iterator[Path]:
    for folder in SCANNED:
        yield from sorted((REPO / folder).rglob("*.py"))


def library_private_names(trees: Iterable[ast.Module]) -> frozenset[str]:
    """Private attribute names of everything the project imports from the libraries."""
    names: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and is_library(node.module):
                module = importlib.import_module(node.module)
                names.update(n for n in dir(module) if is_private(n))
                for alias in node.names:
                    obj = getattr(module, alias.name, None)
                    if obj is not None:
                        names.update(n for n in dir(obj) if is_private(n))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if is_library(alias.name):
                        module = importlib.import_module(alias.name)
                        names.update(n for n in dir(module) if is_private(n))
    return frozenset(names)


def defined_names(trees: Iterable[ast.Module]) -> frozenset[str]:
    """Private names the project defines: functions, class members, ``self.x = ...``."""
    names: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
    return frozenset(n for n in names if is_private(n))


def _base_name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def library_subclasses(trees: Iterable[ast.Module]) -> frozenset[str]:
    """Names of the project classes derived from a library class (directly or through
    another project class)."""
    imported: set[str] = set()
    bases: dict[str, set[str]] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and is_library(node.module):
                imported.update(alias.asname or alias.name for alias in node.names)
            elif isinstance(node, ast.ClassDef):
                bases.setdefault(node.name, set()).update(_base_name(b) for b in node.bases)
    derived: set[str] = set()
    while True:
        more = {name for name, of in bases.items()
                if name not in derived and of & (imported | derived)}
        if not more:
            return frozenset(derived)
        derived |= more


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def _is_super(node: ast.expr) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "super")


def violations(tree: ast.Module, where: str, private: frozenset[str],
               ours: frozenset[str], subclasses: frozenset[str]) -> list[str]:
    """What ``tree`` does with the libraries' private names (see the module doc)."""
    found: list[str] = []

    def flag(node: ast.AST, what: str, name: str) -> None:
        if (where.split(":")[0], name) not in ALLOWED:
            found.append(f"{where}:{getattr(node, 'lineno', '?')}: {what}")

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and is_library(node.module):
            if any(is_private(part) for part in node.module.split(".")):
                flag(node, f"imports private module {node.module}", node.module)
            for alias in node.names:
                if is_private(alias.name):
                    flag(node, f"imports private {node.module}.{alias.name}", alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if is_library(alias.name) and any(is_private(p) for p in alias.name.split(".")):
                    flag(node, f"imports private module {alias.name}", alias.name)
        elif isinstance(node, ast.ClassDef) and node.name in subclasses:
            for item in node.body:
                targets = ([item.name] if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                           else [t.id for t in getattr(item, "targets", [getattr(item, "target",
                                                                                 None)])
                                 if isinstance(t, ast.Name)])
                for name in targets:
                    if name in private and name not in HOOKS:
                        flag(item, f"{node.name} overrides the library's private {name} "
                             "(not a documented hook)", name)
        elif isinstance(node, ast.Attribute) and is_private(node.attr) and node.attr in private:
            if _is_self(node.value) or _is_super(node.value):
                if node.attr not in ours and node.attr not in HOOKS:
                    flag(node, f"uses the inherited private {node.attr}", node.attr)
                elif node.attr in ours and node.attr not in HOOKS:
                    pass  # an override of a non-hook: flagged at its definition
            else:
                flag(node, f"reads the private {node.attr} of another object", node.attr)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str) and is_private(node.args[1].value)
              and node.args[1].value in private):
            flag(node, f"{node.func.id}(..., {node.args[1].value!r})", node.args[1].value)
    return found


def _parsed() -> dict[str, ast.Module]:
    return {str(p.relative_to(REPO)): ast.parse(p.read_text(encoding="utf-8"), str(p))
            for p in project_files()}


def test_no_private_langchain_langgraph_langsmith_names() -> None:
    trees = _parsed()
    private = library_private_names(trees.values())
    ours = defined_names(trees.values())
    subclasses = library_subclasses(trees.values())
    assert "_agenerate" in private and "_get_llm_string" in private  # the libraries were read
    assert "RetryingChatModel" in subclasses and "SQLiteCache" in subclasses
    found = [v for where, tree in trees.items()
             for v in violations(tree, where, private, ours, subclasses)]
    assert found == [], "private names of LangChain/LangGraph/LangSmith:\n" + "\n".join(found)


BAD = '''
from langchain_core.language_models import BaseChatModel
from langsmith.evaluation._arunner import _aevaluate
from langsmith.run_helpers import _get_parent_run

class Wrapper(BaseChatModel):
    def _get_invocation_params(self, stop=None, **kwargs):
        return {}

    @property
    def _llm_type(self):
        return self.inner._llm_type

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        key = self._get_llm_string(stop=stop)
        return self.inner._generate(messages, stop=stop, run_manager=run_manager)

def label(model):
    return getattr(model, "_llm_type")

Wrapper._agenerate.__signature__ = None
'''

GOOD = '''
from langchain_core.language_models import BaseChatModel

class Model(BaseChatModel):
    @property
    def _llm_type(self):
        return "mine"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        return super()._generate(messages, stop, run_manager, **kwargs)

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
        return await self.inner.agenerate([messages], stop=stop, callbacks=[])
'''


@pytest.mark.parametrize(("source", "expected"), [
    (BAD, {"imports private module langsmith.evaluation._arunner",
           "imports private langsmith.evaluation._arunner._aevaluate",
           "imports private langsmith.run_helpers._get_parent_run",
           "Wrapper overrides the library's private _get_invocation_params (not a documented "
           "hook)",
           "reads the private _llm_type of another object",
           "uses the inherited private _get_llm_string",
           "reads the private _generate of another object",
           "getattr(..., '_llm_type')",
           "reads the private _agenerate of another object"}),
    (GOOD, set()),
])
def test_the_check_finds_what_it_forbids(source: str, expected: set[str]) -> None:
    tree = ast.parse(source)
    private = library_private_names([tree, ast.parse(
        "from langsmith.run_helpers import tracing_context\n"
        "from langchain_core.language_models import BaseChatModel\n")])
    ours = defined_names([tree])
    found = {v.split(": ", 1)[1]
             for v in violations(tree, "snippet.py", private, ours, library_subclasses([tree]))}
    assert found == expected
