"""Griffe extension (mkdocs.yml, mkdocstrings' ``extensions``): our docstrings' reST markup as
Markdown on the Python API page.

The docstrings are written for ``help()``: Sphinx roles (``:class:`~tooleval_agents.RunSpec```,
``:func:`run_experiment```) and literal blocks (``Example::`` then an indented block).
mkdocstrings renders Markdown, where both would show raw. Before the page is rendered, each
docstring of the package is rewritten (the source files stay as they are):

* a role becomes a cross-reference to the object it names, resolved as Python would resolve
  the name where the docstring is (a name of the module or class, a dotted path): a link where
  the site documents that object, its name in code where it does not (an *optional* autorefs
  reference, so an undocumented name is no broken link); ``~`` shows the last part of the
  path, as in Sphinx, and ``:meth:`title <target>``` shows the title;
* a paragraph ending in ``::`` followed by an indented block becomes the paragraph (ending
  in ``:``) and a fenced code block (Python where the block parses as Python, else text); a
  paragraph that is only ``Example::`` becomes the block's title.

Both rewrites are total and linear in the docstring's length; a docstring with neither is left
untouched. ``tests/test_docs_site.py`` checks that the built API page shows no role and no
``Example::``.
"""

from __future__ import annotations

import ast
import html
import re
import textwrap
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|exc|obj|const):`([^`\n]+)`")
"""A Sphinx role of the Python domain, its content (``~path``, ``path`` or ``title <path>``)."""
TITLED = re.compile(r"^(.*?)\s*<([^<>]+)>$")
LITERAL = re.compile(r"^(?P<indent>[ \t]*)(?P<text>.*?)(?P<space>\s?)::[ \t]*$")
"""A line ending in ``::`` (reST: an indented literal block follows)."""
BARE = re.compile(r"^(?:examples?|for example|usage)$", re.I)
"""A paragraph that only announces its block: it becomes the block's title."""


def target(obj: griffe.Object | griffe.Alias, name: str) -> str | None:
    """The full path of ``name`` as seen from ``obj``'s docstring; None: not resolvable."""
    name = name.strip().lstrip(".").removesuffix("()")
    first, _, rest = name.partition(".")
    if not first.isidentifier():
        return None
    if first == obj.module.package.name:
        return name
    try:  # the object's own scope first, then the enclosing ones
        resolved = obj.resolve(first)
    except (griffe.NameResolutionError, griffe.AliasResolutionError):
        return None
    return f"{resolved}.{rest}" if rest else resolved


def role(obj: griffe.Object | griffe.Alias, content: str) -> str:
    """One role as HTML: an optional autorefs reference around the name in code."""
    titled = TITLED.match(content)
    if titled:
        shown, path = titled.group(1), titled.group(2)
    else:
        path = content.strip()
        shown = path.lstrip("~").rsplit(".", 1)[-1] if path.startswith("~") else path
    identifier = target(obj, path.lstrip("~"))
    code = f"<code>{html.escape(shown.strip())}</code>"
    if identifier is None:
        return code
    return f'<autoref identifier="{html.escape(identifier)}" optional>{code}</autoref>'


def roles(obj: griffe.Object | griffe.Alias, text: str) -> str:
    """The text with every role replaced (:func:`role`)."""
    return ROLE.sub(lambda m: role(obj, m.group(1)), text)


def _language(code: str) -> str:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return "text"
    return "python"


def _block_end(lines: list[str], start: int, indent: int) -> int:
    """The index after the literal block that starts at ``start`` (blank lines inside it,
    trailing ones left out): its lines are indented more than ``indent``."""
    end = last = start
    while end < len(lines):
        line = lines[end]
        if line.strip():
            if len(line) - len(line.lstrip()) <= indent:
                break
            last = end + 1
        end += 1
    return last


def literal_blocks(text: str) -> str:
    """The text with each reST literal block (``...::`` then an indented block) fenced."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        match = LITERAL.match(lines[i])
        start = i + 1
        while start < len(lines) and not lines[start].strip():
            start += 1
        indent = len(match.group("indent")) if match else 0
        end = _block_end(lines, start, indent) if match else start
        if match is None or end == start:
            out.append(lines[i])
            i += 1
            continue
        pad, said = match.group("indent"), match.group("text")
        code = textwrap.dedent("\n".join(lines[start:end]))
        fence = f"{pad}```{_language(code)}"
        if BARE.match(said.strip()):
            fence += f' title="{said.strip()}"'
        elif said.strip():  # reST: "text::" reads "text:", "text ::" reads "text"
            out += [pad + said + ("" if match.group("space") else ":"), ""]
        out += [fence, *(pad + line if line else line for line in code.split("\n")),
                pad + "```"]
        if end < len(lines) and lines[end].strip():
            out.append("")  # a paragraph after the block (reST wants a blank line; be kind)
        i = end
    return "\n".join(out)


def markdown(obj: griffe.Object | griffe.Alias, text: str) -> str:
    """A docstring's text as Markdown (:func:`roles`, :func:`literal_blocks`)."""
    if "::" not in text and ":`" not in text:
        return text
    return roles(obj, literal_blocks(text))


def _objects(obj: griffe.Object) -> list[griffe.Object]:
    found = [obj]
    for member in obj.members.values():
        if not member.is_alias:
            found += _objects(member)  # type: ignore[arg-type]
    return found


class DocstringMarkup(griffe.Extension):
    """Rewrites the docstrings of a loaded package (:func:`markdown`)."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        for obj in _objects(pkg):
            if obj.docstring is not None:
                obj.docstring.value = markdown(obj, obj.docstring.value)
