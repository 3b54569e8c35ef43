"""The documentation site as built (``mkdocs build --strict``, once per test session) reads as
a page, not as its source:

* the Python API page shows no reST markup of the docstrings (Sphinx roles, ``Example::``):
  the roles are links where the site documents the name (docs/hooks/docstring_markup.py);
* the CLI reference's tables have headers, its command summaries are whole sentences, the
  pages its help texts name are links, and an option's name never breaks across lines
  (docs/hooks/cli_reference.py, docs/stylesheets/extra.css);
* a long command in a code block wraps instead of being clipped.

The site needs the ``docs`` extra: without it these tests skip and say so (CI installs it and
sets ``TOOLEVAL_REQUIRE_DOCS``, so there a skip is an error).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType

import pytest
from helpers import HANG_GUARD_S, REPO, needs_chromium, probe_page

DOCS = REPO / "docs"
ROLE_LEFT = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj):")


def needs_docs() -> None:
    """Skip where the docs extra is missing, with the reason (fail under TOOLEVAL_REQUIRE_DOCS)."""
    missing = [m for m in ("mkdocs", "material", "mkdocstrings_handlers.python")
               if importlib.util.find_spec(m.split(".")[0]) is None]
    if missing:
        message = (f"the docs extra is not installed ({', '.join(missing)}: "
                   'pip install -e ".[docs]")')
        if os.environ.get("TOOLEVAL_REQUIRE_DOCS", "") not in ("", "0"):
            pytest.fail(message + "; TOOLEVAL_REQUIRE_DOCS is set, so this is an error")
        pytest.skip(message)


def hook(name: str) -> ModuleType:
    """A module of docs/hooks/ (they are not a package)."""
    spec = importlib.util.spec_from_file_location(name, DOCS / "hooks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built as CI builds it (strict: a warning fails), from the repository."""
    needs_docs()
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(out)], cwd=REPO, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
                          capture_output=True, text=True, timeout=HANG_GUARD_S, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    return out


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.skip += tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self.skip -= tag in ("script", "style")

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(data)


def visible_text(page: str) -> str:
    """What a reader sees of a page's HTML (scripts and styles left out)."""
    parser = _Text()
    parser.feed(page)
    return "".join(parser.parts)


def article(site: Path, page: str) -> str:
    text = (site / page / "index.html").read_text(encoding="utf-8")
    return text[text.index("<article"):text.index("</article>")]


# --- the Python API page ---------------------------------------------------------------------

def test_the_api_page_shows_no_rest_markup_and_links_the_names_it_can(site: Path) -> None:
    page = article(site, "reference/api")
    text = visible_text(page)
    assert ROLE_LEFT.findall(text) == []
    assert re.findall(r"\w::(?=\s)", text) == []  # no "Example::" (nor any literal-block mark)
    assert "][" not in text  # no cross-reference left unresolved as Markdown
    # a role names a documented object: a link to it ("spec is a RunSpec")
    first = page[page.index('id="tooleval_agents.run_experiment"'):
                 page.index('id="tooleval_agents.arun_experiment"')]
    assert re.search(r'<a class="autorefs autorefs-internal"[^>]*href="#tooleval_agents\.RunSpec"'
                     r"[^>]*><code>RunSpec</code></a>", first), first[:3000]
    # "Example::" and its block: a titled code block
    assert re.search(r'<span class="filename">Example</span><pre>.*?run_experiment', first, re.S)
    # a name the site does not document stays a name in code, not a broken link
    assert ('<span title="tooleval_agents.models.retry.RetryPolicy"><code>RetryPolicy</code>'
            in page)


def test_roles_resolve_where_the_docstring_is_and_literal_blocks_become_fences() -> None:
    needs_docs()
    import griffe  # the docs extra's (mkdocstrings' Python handler reads the code with it)

    markup = hook("docstring_markup")
    with griffe.temporary_visited_package("pkg", {
        "__init__.py": "from pkg.mod import Thing, make\n",
        "mod.py": ('class Thing:\n    """A :class:`Thing` of :attr:`size` (:func:`~pkg.mod.make`,'
                   ' :meth:`grow it <Thing.grow>`, :class:`Elsewhere`)."""\n'
                   "    size: int = 1\n    def grow(self): ...\n"
                   "def make(): ...\n"),
    }) as pkg:
        thing = pkg["mod.Thing"]
        text = markup.markdown(thing, thing.docstring.value)
    ref = '<autoref identifier="{}" optional><code>{}</code></autoref>'
    assert text == (f"A {ref.format('pkg.mod.Thing', 'Thing')} of "
                    f"{ref.format('pkg.mod.Thing.size', 'size')} "
                    f"({ref.format('pkg.mod.make', 'make')}, "
                    f"{ref.format('pkg.mod.Thing.grow', 'grow it')}, <code>Elsewhere</code>).")
    doc = ("Runs it.\n\nExample::\n\n    run(1)\n\n    run(2)\nAfter.\n\n"
           "Regenerate it with::\n\n    python x.py --all\n")
    assert markup.literal_blocks(doc) == (
        'Runs it.\n\n```python title="Example"\nrun(1)\n\nrun(2)\n```\n\nAfter.\n\n'
        "Regenerate it with:\n\n```text\npython x.py --all\n```\n")
    assert markup.literal_blocks("Ends here::\nnot indented") == "Ends here::\nnot indented"


# --- the CLI reference -----------------------------------------------------------------------

def _tables(page: str) -> list[str]:
    return re.findall(r"<table>.*?</table>", page, re.S)


def test_the_cli_tables_have_headers_and_whole_summaries(site: Path) -> None:
    page = article(site, "reference/cli")
    tables = _tables(page)
    assert len(tables) > 40
    for table in tables:
        heads = [visible_text(h).strip() for h in re.findall(r"<th>.*?</th>", table, re.S)]
        assert heads and all(heads), f"a table with an empty header: {heads}"
    cli = hook("cli_reference")
    commands = dict(cli.walk(cli.app_command()))
    summaries = {}
    for table in tables:
        for row in re.findall(r"<tr>(.*?)</tr>", table, re.S):
            cells = [" ".join(visible_text(c).split())
                     for c in re.findall(r"<td>(.*?)</td>", row, re.S)]
            if cells and cells[0] in commands and cells[0] != "tooleval":
                summaries[cells[0]] = cells[1]
    assert set(summaries) == set(commands) - {"tooleval"}
    for path, said in summaries.items():
        assert not said.endswith(("...", "…")), f"{path}: a summary cut short: {said!r}"
        assert said.endswith("."), f"{path}: {said!r}"
    assert summaries["tooleval list"].endswith("or the headline metrics of each task.")


def test_the_pages_the_cli_help_names_are_links(site: Path) -> None:
    page = article(site, "reference/cli")
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    named = [m for m in re.finditer(r"(?:docs/)?((?:[\w-]+/)*[\w-]+\.md)(#[\w-]+)?",
                                    visible_text(page)) if m.group(1) in pages]
    assert {"docs/mcp.md", "running.md#exit-statuses"} <= {m.group(0) for m in named}
    links = re.findall(r'<a href="([^"]+)">((?:docs/)?[\w/-]+\.md(?:#[\w-]+)?)</a>', page)
    assert sorted(text for _, text in links) == sorted(m.group(0) for m in named)
    for href, _ in links:  # each leads to a page of the site (and its heading)
        target, _, anchor = href.partition("#")
        built = (site / "reference" / "cli" / target / "index.html").resolve()
        assert built.is_file(), href
        assert not anchor or f'id="{anchor}"' in built.read_text(encoding="utf-8"), href


NAMES_PROBE = """
const names = [...document.querySelectorAll("article table td:first-child code, article .flag")];
done({count: names.length,
      broken: names.filter((e) => e.getClientRects().length > 1).map((e) => e.textContent)});
"""


@needs_chromium
@pytest.mark.parametrize("width", [1400, 700])
def test_an_option_name_never_breaks_across_lines(site: Path, width: int) -> None:
    got = probe_page(site / "reference" / "cli" / "index.html", "", NAMES_PROBE,
                     window=f"{width},900", wait_ms=500)
    assert got["count"] > 150 and got["broken"] == []


CODE_PROBE = """
done([...document.querySelectorAll("article div.highlight")].map((d) => {
  const code = d.querySelector("pre > code");
  return {lang: d.className, text: code.textContent.slice(0, 60),
          clipped: code.scrollWidth > code.clientWidth + 1};
}));
"""


@needs_chromium
def test_a_long_command_wraps_instead_of_being_clipped(site: Path) -> None:
    blocks = probe_page(site / "getting-started" / "index.html", "", CODE_PROBE,
                        window="1400,900", wait_ms=500)
    commands = [b for b in blocks if "language-bash" in b["lang"]]
    assert commands and [b["text"] for b in commands if b["clipped"]] == []
