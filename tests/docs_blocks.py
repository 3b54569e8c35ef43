"""The code blocks of the README and of the documentation pages, and a driver that runs them.

Every fenced block of ``README.md`` and ``docs/**/*.md`` is one of:

* ``bash`` (``sh``, ``shell``): commands, run with ``bash -euo pipefail``;
* ``console``: a shell session: each ``$ `` line (with its ``\\`` continuations) is a command,
  and the lines after it are output it promises: each must appear, in this order, in what the
  command prints (stdout and stderr together; ``...`` in a line
  matches anything, a line that is only ``...`` is skipped; blanks around a line are not
  compared, as a centred title moves with the terminal's width);
* ``python``: run in one namespace per page, in order;
* ``pycon``: ``>>>`` examples run as doctests in that namespace (``...`` elides output);
* ``text``, ``json``, ``toml``: shown, never run (illustrations and file contents).

A code block that needs more than a fresh clone says so on the line before its fence
(``<!-- needs: KEY -->``, KEY in :data:`NEEDS`). The driver (``python tests/docs_blocks.py
PAGE [--needs KEY]``, run in the folder the page's blocks are to run in) runs the blocks of one
page that need nothing (or those that need KEY) in page order and exits non-zero naming the
first that failed (``--warm LOG``: its ``tooleval`` commands start warm, :mod:`warm_cli`,
the server's log in LOG). ``local-model`` blocks: the line that starts ``llama_cpp.server`` is left
out, and the server is started as the tests start it (:func:`local_model.serve`, with the
line's alias, chat format and context size, on a free port), its port put in the block.
"""

from __future__ import annotations

import contextlib
import doctest
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NEEDS = {
    "setup": "the set-up command itself (CI runs it on a fresh machine)",
    "key": "a provider or LangSmith key",
    "network": "downloads from the internet",
    "local-model": "a model server on this machine (see docs/models.md)",
    "build": "a from-source build of llama.cpp (minutes)",
    "your-files": "files of your own (your answers, your queries, your agent)",
    "fetched-data": "data fetched by 'tooleval data fetch' (run here against the shared data)",
    "agent-programs": "Claude Code, Codex and the openai-agents extra installed (CI has them)",
    "sandbox": "bubblewrap and user namespaces: the agent sandbox (Linux; see docs/security.md)",
}
CODE = {"bash": "bash", "sh": "bash", "shell": "bash", "console": "console",
        "python": "python", "pycon": "pycon"}
SHOWN = {"text", "json", "toml"}
MARK = re.compile(r"<!-- needs: ([a-z-]+) -->\s*$")
FENCE = re.compile(r"^(`{3,})\s*([A-Za-z0-9_-]*)")
SERVER = re.compile(r"-m llama_cpp\.server\b")


@dataclass(frozen=True)
class Block:
    """One fenced block of a page."""

    page: str
    """The page, relative to the repository (``README.md``, ``docs/models.md``)."""
    line: int
    """The line of its opening fence."""
    lang: str
    code: str
    needs: str | None
    """What it needs beyond a fresh clone (a key of :data:`NEEDS`); None: runs offline."""

    @property
    def kind(self) -> str | None:
        """``bash``, ``console``, ``python``, ``pycon``; None for a block that is only shown."""
        return CODE.get(self.lang)

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    """The README and every documentation page."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    name = page.relative_to(REPO).as_posix()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if fence:
            end = i + 1
            while end < len(lines) and not lines[end].startswith(fence.group(1)):
                end += 1
            before = next((x for x in reversed(lines[:i]) if x.strip()), "")
            mark = MARK.search(before)
            found.append(Block(name, i + 1, fence.group(2), "\n".join(lines[i + 1:end]),
                               mark.group(1) if mark else None))
            i = end
        i += 1
    return found


def section_blocks(page: Path, title: str, lang: str) -> list[str]:
    """The code of the blocks of one language in a page's section (``## title`` up to the next
    ``## ``), in order."""
    text = page.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n") + 1
    end = text.find("\n## ", start + 1)
    first = text[:start].count("\n") + 1
    last = text[:end].count("\n") + 1 if end != -1 else 10**9
    return [b.code for b in blocks(page) if first <= b.line <= last and b.lang == lang]


# --- console sessions ------------------------------------------------------------------------

def session(code: str) -> list[tuple[str, list[str]]]:
    """A console block's commands, each with the output lines it promises."""
    steps: list[tuple[str, list[str]]] = []
    lines = code.splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            raise ValueError(f"console block: output before a command: {lines[i]!r}")
        command = [lines[i][2:]]
        while command[-1].endswith("\\") and i + 1 < len(lines):
            i += 1
            command.append(lines[i])
        i += 1
        output = []
        while i < len(lines) and not lines[i].startswith("$ "):
            output.append(lines[i])
            i += 1
        steps.append(("\n".join(command), output))
    return steps


def _pattern(line: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in line.strip().split("...")) + r"\Z")


def missing_output(expected: list[str], actual: str) -> str | None:
    """The first promised line not found (in order) in ``actual``; None when all are."""
    got = [line.strip() for line in actual.splitlines()]
    at = 0
    for line in expected:
        if not line.strip() or line.strip() == "...":
            continue
        pattern = _pattern(line)
        while at < len(got) and not pattern.match(got[at]):
            at += 1
        if at == len(got):
            return line
        at += 1
    return None


# --- running a page ----------------------------------------------------------------------------

class BlockFailed(Exception):
    pass


def _shell(code: str, block: Block, *, session: bool = False) -> str:
    """Run ``code`` with bash; its output (stdout and stderr together). A session's command is
    one line a reader types, so ``-e`` does not apply there (``cmd || echo ...`` shows a status)."""
    flags = ["-o", "pipefail"] if session else ["-euo", "pipefail"]
    done = subprocess.run(["bash", *flags, "-c", code], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=900)
    if done.returncode != 0:
        raise BlockFailed(f"{block.where}: exited {done.returncode}:\n{code}\n--- output ---\n"
                          f"{done.stdout[-3000:]}")
    return done.stdout


def run_console(block: Block, code: str) -> None:
    for command, expected in session(code):
        output = _shell(command, block, session=True)
        lost = missing_output(expected, output)
        if lost is not None:
            raise BlockFailed(f"{block.where}: `{command}` did not print the line\n  {lost}\n"
                              f"--- it printed ---\n{output[-4000:]}")


def run_python(block: Block, namespace: dict[str, object]) -> None:
    code = compile(block.code, f"{block.page}:{block.line}", "exec")
    exec(code, namespace)


def run_pycon(block: Block, namespace: dict[str, object]) -> None:
    test = doctest.DocTestParser().get_doctest(block.code, namespace, block.where, block.page,
                                               block.line)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    runner.run(test, out=report.append, clear_globs=False)
    if runner.failures:
        raise BlockFailed("".join(report))


class Servers:
    """The local model servers of a page's ``local-model`` blocks, one per docs port."""

    def __init__(self, stack: contextlib.ExitStack) -> None:
        self.stack = stack
        self.urls: dict[str, str] = {}

    def start(self, line: str) -> None:
        args = shlex.split(line.replace("\\\n", " "))
        opts = dict(zip(args, [*args[1:], ""], strict=True))
        port = opts["--port"]
        if port not in self.urls:
            self.urls[port] = self._serve(opts.get("--model_alias", "smollm2"),
                                          opts.get("--chat_format"),
                                          int(opts.get("--n_ctx", "16384")))

    def _serve(self, alias: str, chat_format: str | None, n_ctx: int) -> str:
        from local_model import serve

        return self.stack.enter_context(serve(alias=alias, chat_format=chat_format,
                                              n_ctx=n_ctx))

    def rewrite(self, code: str) -> str:
        """The block without its server start, pointed at the servers started here."""
        kept: list[str] = []
        lines = code.split("\n")
        i = 0
        while i < len(lines):
            if SERVER.search(lines[i]):
                command = [lines[i]]
                while command[-1].rstrip().endswith("\\"):
                    i += 1
                    command.append(lines[i])
                self.start("\n".join(command).rstrip().rstrip("&"))
            else:
                kept.append(lines[i])
            i += 1
        text = "\n".join(kept)
        for port in re.findall(r"127\.0\.0\.1:(\d+)", text):
            if port not in self.urls:
                self.urls[port] = self._serve("smollm2", None, 16384)
        return re.sub(r"http://127\.0\.0\.1:(\d+)/v1", lambda m: self.urls[m.group(1)], text)


def run_page(page: Path, needs: str | None) -> None:
    namespace: dict[str, object] = {"__name__": "__main__"}
    with contextlib.ExitStack() as stack:
        servers = Servers(stack)
        for block in blocks(page):
            if block.kind is None or block.needs != needs:
                continue
            code = servers.rewrite(block.code) if needs == "local-model" else block.code
            if block.kind == "bash":
                _shell(code, block)
            elif block.kind == "console":
                run_console(block, code)
            elif block.kind == "python":
                run_python(block, namespace)
            else:
                run_pycon(block, namespace)


def main(argv: list[str]) -> int:
    page = Path(argv[0])
    needs = argv[argv.index("--needs") + 1] if "--needs" in argv else None
    warm_log = argv[argv.index("--warm") + 1] if "--warm" in argv else None
    sys.path[0] = os.getcwd()  # blocks import from the page's folder, as `python` run there does
    sys.path.append(str(Path(__file__).parent))  # local_model, warm_cli
    try:
        with contextlib.ExitStack() as stack:
            if warm_log:  # the page's `tooleval` commands start warm (tests/warm_cli.py)
                from warm_cli import serving

                os.environ.update(stack.enter_context(serving(Path(warm_log))))
            run_page(page, needs)
    except BlockFailed as failed:
        print(failed, file=sys.stderr)
        return 1
    return 0  # a Python block that raises ends the driver with its traceback (exit 1)


def iter_code_blocks() -> Iterator[Block]:
    for page in pages():
        yield from (b for b in blocks(page) if b.kind is not None)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
