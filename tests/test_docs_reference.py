"""The reference pages cover the whole public surface, and the README's links lead somewhere.

* Every command of the ``tooleval`` app (groups and benchmark commands included) has a
  ``<!-- cli: ... -->`` marker on a documentation page, which the build hook
  (``docs/hooks/cli_reference.py``) expands from the app itself; a marker naming no command
  fails the build.
* Every name of ``tooleval_agents.__all__`` has a ``::: tooleval_agents.NAME`` directive
  (mkdocstrings renders it from the docstrings), and no directive names something else.
* Every relative link of the README names an existing page and, with ``#anchor``, one of its
  headings (the site's own links are checked by ``mkdocs build --strict``).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

import tooleval_agents

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"


def hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cli_reference",
                                                  DOCS / "hooks" / "cli_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pages_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(DOCS.rglob("*.md")))


def test_every_command_has_a_reference_section() -> None:
    cli = hook()
    commands = dict(cli.walk(cli.app_command()))
    assert {"tooleval run", "tooleval data fetch", "tooleval score appbench",
            "tooleval judge agreement"} <= set(commands)  # benchmark commands are in the app
    marked = cli.MARKER.findall(pages_text())
    assert sorted(set(commands) - set(marked)) == []
    assert sorted(set(marked) - set(commands)) == []


def test_a_section_shows_the_command_as_its_help_does() -> None:
    cli = hook()
    commands = dict(cli.walk(cli.app_command()))
    text = cli.expand("<!-- cli: tooleval data fetch -->\n", commands)
    assert text.startswith("### tooleval data fetch { #tooleval-data-fetch }")
    assert "tooleval data fetch [OPTIONS]" in text and "| `--data-dir" in text
    group = cli.expand("<!-- cli: tooleval data -->", commands)
    assert "[`tooleval data fetch`](#tooleval-data-fetch)" in group
    with pytest.raises(ValueError, match="no command 'tooleval fly'"):
        cli.expand("<!-- cli: tooleval fly -->", commands)


def test_every_public_name_has_a_reference_entry() -> None:
    text = (DOCS / "reference" / "api.md").read_text(encoding="utf-8")
    documented = re.findall(r"^::: tooleval_agents\.(\S+)\s*$", text, re.M)
    assert len(documented) == len(set(documented))
    assert sorted(set(tooleval_agents.__all__) - set(documented)) == []
    assert sorted(set(documented) - set(tooleval_agents.__all__)) == []
    assert not re.findall(r"^::: (?!tooleval_agents\.)", pages_text(), re.M)


def slug(heading: str) -> str:
    """The anchor MkDocs' toc extension gives a heading (``{ #id }`` when the heading sets it)."""
    explicit = re.search(r"\{ *#([\w-]+) *\}", heading)
    if explicit:
        return explicit.group(1)
    text = re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def test_readme_links_lead_to_pages_and_headings() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(((?!https?:)[^)#\s]+)(?:#([\w-]+))?\)", readme)
    assert len(links) >= 15
    broken = []
    for target, anchor in links:
        page = REPO / target
        if not page.exists():
            broken.append(target)
        elif anchor:
            headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.M)
            if anchor not in {slug(h) for h in headings}:
                broken.append(f"{target}#{anchor}")
    assert broken == []
