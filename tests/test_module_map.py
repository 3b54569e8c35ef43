"""Every module of the project is named by a test module, so its tests are found by searching
for its name: a test imports from it (``from tooleval_agents.run.naming import ...``), writes its
dotted name, or runs it (``python -m tooleval_agents``). A test that reaches a module only
through another module's re-export does not count."""

from __future__ import annotations

import ast
from itertools import pairwise
from pathlib import Path

from helpers import REPO, TESTS

SOURCES = {"tooleval_agents": "tooleval_agents", "graphs": "tooleval_agents.graphs",
           "evaluators": "tooleval_agents.evaluators"}
"""Source folder -> the package it installs as (``graphs/`` is ``tooleval_agents.graphs``)."""


def modules() -> dict[str, Path]:
    """Every source module by its dotted name (a package by its ``__init__``)."""
    out = {}
    for folder, package in SOURCES.items():
        root = REPO / folder
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if folder == "tooleval_agents" and parts[0] in ("graphs", "evaluators"):
                continue  # the installed view of the folders above (symlinks)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join((package, *parts))] = path
    return out


def named_in_tests() -> set[str]:
    """The modules the tests import from, import, name in a string or run with ``-m``."""
    names: set[str] = set()
    for path in TESTS.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                names.update(word.strip("`'\"():,") for word in node.value.split())
            elif isinstance(node, ast.List):  # [sys.executable, "-m", "tooleval_agents"]
                items = [e.value for e in node.elts if isinstance(e, ast.Constant)]
                names.update(f"{b}.__main__" for a, b in pairwise(items)
                             if a == "-m" and isinstance(b, str))
    return names


def test_every_module_is_named_by_a_test() -> None:
    named = named_in_tests()
    unnamed = sorted(m for m in modules() if m not in named)
    assert unnamed == [], ("no test names these modules: import what a test checks from the "
                           "module that defines it, or add a test: " + ", ".join(unnamed))


def test_the_map_sees_the_installed_names() -> None:
    found = modules()
    assert "tooleval_agents.graphs.ultratool.official" in found
    assert "tooleval_agents.evaluators.base" in found
    assert "tooleval_agents.__main__" in found and "tooleval_agents.run.loop" in found
    assert not any(".graphs.graphs" in m or m.startswith("graphs") for m in found)
