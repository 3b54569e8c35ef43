"""Official texts read from the user's fetched copy of an upstream repository, never run.

Benchmarks publish their prompts inside their code. The ``official`` prompt sets read them at
run time from the files ``tooleval data fetch`` downloaded (checked against the pinned sha256,
so a prompt set always means the same text), and take only *literals* out of Python source with
:mod:`ast`: string constants, dict/list literals (:func:`ast.literal_eval`), and ``+`` chains of
constants and names. Nothing upstream is imported or executed, and no upstream text is copied
into this project.

Example::

    >>> tree = parse_source(Path("inference/utils.py"))  # doctest: +SKIP
    >>> fn = function(tree, "generate_prompt_english")  # doctest: +SKIP
    >>> literal(assigned(fn, "USER_PROMPT")[0])["planning"][:20]  # doctest: +SKIP
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

from tooleval_agents.data.fetch import source_manifest
from tooleval_agents.data.inputs import note_input, noted_cache
from tooleval_agents.data.jsonio import sha256_file
from tooleval_agents.errors import ToolevalError

T = TypeVar("T")
R = TypeVar("R")


class UpstreamError(ToolevalError):
    """An upstream file is missing, differs from the pinned one, or lacks what we read."""


def per_version(read: Callable[..., R]) -> Callable[..., R]:
    """``read(path, *args)`` memoised per file version (path and modification time): upstream
    texts are read once per run, and again only when the file changed; the files its first
    call read are noted again on each call (:func:`~tooleval_agents.data.inputs.noted_cache`)."""
    @noted_cache
    def versioned(path: Path, mtime_ns: int, *args: Any) -> R:
        return read(path, *args)

    @wraps(read)
    def call(path: Path, *args: Any) -> R:
        return versioned(path, path.stat().st_mtime_ns, *args)

    return call


def upstream_file(source: str, path: str, data_dir: Path) -> Path:
    """``<data_dir>/<source>/<path>``, checked against the manifest's sha256, and noted as an
    input of the run that reads it (:mod:`tooleval_agents.data.inputs`).

    Raises:
        UpstreamError: the file is absent (with the fetch command that gets it) or differs
            from the pinned upstream file.
    """
    entry = source_manifest(source)
    pinned = {f.path: f for f in entry.files}
    if path not in pinned:
        raise UpstreamError(f"{source}: {path} is not a pinned upstream file")
    local = data_dir / source / path
    if not local.is_file():
        include = "" if pinned[path].group in entry.default_groups else \
            f" --include '{path.rsplit('/', 1)[0]}/*'"
        raise UpstreamError(f"{local} not found: the official prompts are read from the "
                            f"upstream files; get them with: tooleval data fetch {source}"
                            f"{include} --data-dir {data_dir}")
    if _sha256(local) != pinned[path].sha256:
        raise UpstreamError(f"{local} differs from the pinned upstream file ({entry.repo}@"
                            f"{entry.commit[:7]}); check it with: tooleval data verify {source} "
                            f"--data-dir {data_dir}")
    note_input(f"{source}/{path}", pinned[path].sha256[:16])
    return local


_sha256 = per_version(sha256_file)


def read_text(source: str, path: str, data_dir: Path) -> str:
    """A pinned upstream text file (a prompt template), as upstream's ``open().read()``
    returns it (UTF-8, newlines as in the file)."""
    return upstream_file(source, path, data_dir).read_text(encoding="utf-8")


def parse_source(path: Path) -> ast.Module:
    """The syntax tree of a Python file (parsed, not run)."""
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as exc:
        raise UpstreamError(f"{path}:{exc.lineno}: not readable as Python: {exc.msg}") from exc


def function(tree: ast.AST, name: str, *, within: str | None = None) -> ast.FunctionDef:
    """The function (or method of class ``within``) called ``name``."""
    scope: ast.AST = tree
    if within is not None:
        scope = only([n for n in ast.walk(tree)
                       if isinstance(n, ast.ClassDef) and n.name == within], f"class {within}")
    found = [n for n in ast.walk(scope) if isinstance(n, ast.FunctionDef) and n.name == name]
    return only(found, f"function {name}")


def assigned(scope: ast.AST, target: str) -> list[ast.expr]:
    """The values assigned to ``target`` (a name, or ``self.attr``) anywhere in ``scope``, in
    source order (branches included)."""
    values: list[ast.expr] = []
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign) and any(_spelled(t) == target for t in node.targets):
            values.append(node.value)
    return sorted(values, key=lambda v: (v.lineno, v.col_offset))


def branch(scope: ast.AST, variable: str, value: str) -> list[ast.stmt]:
    """The body of the ``if``/``elif`` that tests ``variable == value``."""
    for node in ast.walk(scope):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) \
                and _spelled(node.test.left) == variable and len(node.test.comparators) == 1 \
                and isinstance(node.test.ops[0], ast.Eq) \
                and _constant(node.test.comparators[0]) == value:
            return node.body
    raise UpstreamError(f"no branch `if {variable} == {value!r}` found")


def literal(node: ast.expr) -> Any:
    """The value of a literal expression (strings, numbers, dicts, lists...)."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError) as exc:
        raise UpstreamError(f"line {getattr(node, 'lineno', '?')}: not a literal "
                            f"({type(node).__name__})") from exc


@dataclass(frozen=True)
class Name:
    """A variable in a concatenation (:func:`concatenation`)."""

    name: str


def concatenation(node: ast.expr) -> list[str | Name]:
    """A ``+`` chain of string constants and variable names, flattened left to right."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return concatenation(node.left) + concatenation(node.right)
    if isinstance(node, ast.Name):
        return [Name(node.id)]
    text = _constant(node)
    if isinstance(text, str):
        return [text]
    raise UpstreamError(f"line {getattr(node, 'lineno', '?')}: not a concatenation of strings "
                        f"and names ({type(node).__name__})")


def join(parts: list[str | Name], values: dict[str, str]) -> str:
    """A :func:`concatenation` with its names replaced by ``values``."""
    missing = sorted({p.name for p in parts if isinstance(p, Name)} - set(values))
    if missing:
        raise UpstreamError(f"the upstream concatenation uses {missing}, which we do not fill")
    return "".join(values[p.name] if isinstance(p, Name) else p for p in parts)


def _constant(node: ast.expr) -> Any:
    return node.value if isinstance(node, ast.Constant) else None


def _spelled(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None


def only(found: list[T], what: str) -> T:
    """The one item of ``found`` (a definition or an assignment upstream makes once)."""
    if len(found) != 1:
        raise UpstreamError(f"{what}: expected one upstream, found {len(found)}")
    return found[0]


__all__ = ["Name", "UpstreamError", "assigned", "branch", "concatenation", "function", "join",
           "literal", "only", "parse_source", "per_version", "read_text", "upstream_file"]
