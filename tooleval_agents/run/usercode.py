"""What a run can read of the code it measures: which files are the user's, a digest of the code
behind an object (an agent factory, a compiled graph, a strategy or benchmark plugin), the files
an agent command names (:func:`command_files`), and where in the user's code an exception was
raised.

The user's code is every module whose file lies outside the Python installation (the standard
library, site-packages) and outside this package: an ``--agent`` file, a script, the helper
modules they import, a plugin installed in editable mode. Its files are read and digested; the
rest is known by name (and the package versions ``config.json`` records).

:func:`code_identity` reads an object the way a person would check that it changed:

* a function: its defining module's file when that is the user's (and the function's name in
  it), and every user module that file reaches through its globals (``from helpers import
  prompt``), else its compiled code; the values its closure and defaults hold, read as below;
* a compiled LangGraph graph: each node's name and the functions it runs; the prompts
  (strings, messages), tools (name, description, arguments, function) and chat models
  (parameters) its functions hold;
* any other object: the file of its class, when that is the user's.

What cannot be read is left out and said to be: :attr:`CodeIdentity.readable` is false when no
function, tool or user file was found, so a change to it would not be noticed.

What is read is the code, never how it was named: a file is known by its path from the folder
that holds every file read, a user module in the code's digest by its file's content, so
``--agent ag.py:build`` (``ag.py`` loaded as a module of another name) and ``from ag import
build`` read the same.

Example::

    code_identity(build).files        # {"ag.py": "3f2a...", "helpers.py": "9c1d..."}
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import importlib.util
import inspect
import json
import os
import shlex
import site
import sys
import sysconfig
import traceback
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooleval_agents.data.inputs import file_digest
from tooleval_agents.redaction import model_params

OWN_PACKAGE = "tooleval_agents"
MAX_DEPTH = 12
"""How deep :func:`code_identity` follows values (closures, containers, graph nodes)."""
MAX_ITEMS = 256
"""Items read of one container."""
MAX_MODULES = 500
"""User modules read for one object (its files)."""


@functools.cache
def _library_roots() -> tuple[Path, ...]:
    paths = sysconfig.get_paths()
    roots = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    with contextlib.suppress(AttributeError):  # virtualenv's old site module lacks these
        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    return tuple(Path(r).resolve() for r in roots if r)


def is_user_file(file: str | Path | None) -> bool:
    """Whether ``file`` is a source file of the user's (outside the Python installation and
    its site-packages)."""
    if not file:
        return False
    path = Path(file)
    if path.suffix != ".py" or not path.is_file():
        return False
    resolved = path.resolve()
    return not any(resolved.is_relative_to(root) for root in _library_roots())


def _own(name: str) -> bool:
    return name == OWN_PACKAGE or name.startswith(OWN_PACKAGE + ".")


def is_user_module(module: types.ModuleType | None) -> bool:
    """Whether ``module`` is the user's code (not this package's, not a library's)."""
    return (module is not None and not _own(module.__name__)
            and is_user_file(getattr(module, "__file__", None)))


def _file_digest(file: str) -> str:
    return hashlib.sha256(Path(file).read_bytes()).hexdigest()[:16]


@functools.lru_cache(maxsize=MAX_MODULES)
def _imports_of(file: str, digest: str, package: str | None) -> tuple[str, ...]:
    """The modules a source file imports, absolute (``from .x import y``: ``pkg.x`` and
    ``pkg.x.y``, which may be a module); ``digest`` keys the cache on the file's content."""
    try:
        tree = ast.parse(Path(file).read_bytes(), filename=file)
    except (SyntaxError, ValueError, OSError):  # loaded, so readable; but never fail a run
        return ()
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            try:
                base = (importlib.util.resolve_name("." * node.level + (node.module or ""),
                                                    package) if node.level
                        else node.module or "")
            except (ImportError, ValueError):  # a relative import beyond its package
                continue
            names += [base, *(f"{base}.{alias.name}" for alias in node.names)]
    return tuple(dict.fromkeys(n for n in names if n))


@dataclass
class CodeIdentity:
    """What :func:`code_identity` read of an object."""

    files: dict[str, str] = field(default_factory=dict)
    """The user's files it came from: their path from the folder that holds them all
    (``ag.py``, ``lib/helpers.py``; :func:`file_labels`) -> sha256 (16 hex digits)."""
    code: str = ""
    """sha256 (16 hex digits) of everything else read (compiled code, prompts, tools, model
    parameters, the structure of a graph)."""
    readable: bool = False
    """Something that changes with the code was read (a user file, a function, a tool)."""

    def record(self) -> dict[str, Any]:
        """As a run's identity keeps it (``config.json``)."""
        return {"files": dict(sorted(self.files.items())), "code": self.code}


class _Reader:
    """One walk over an object (see the module docstring)."""

    def __init__(self) -> None:
        self.files: dict[Path, str] = {}
        """Each user file read (resolved) -> its digest."""
        self.parts: list[str] = []
        self.seen: set[int] = set()
        self.modules: set[str] = set()
        """Modules looked at (the user's among them read)."""
        self.readable = False

    def value(self, value: Any, depth: int = 0) -> None:
        if value is None or isinstance(value, bool | int | float | str | bytes):
            self.parts.append(repr(value))
            return
        if depth > MAX_DEPTH or id(value) in self.seen:
            return
        self.seen.add(id(value))
        for kind, read in _READERS:
            if _is(value, kind):
                read(self, value, depth + 1)
                return
        self._object(value, depth + 1)

    def _object(self, value: Any, depth: int) -> None:
        """A value of no known kind: its class's file (the user's), a graph's nodes, a
        runnable's functions and parts, or its type's name."""
        cls = type(value)
        self.parts.append(f"<{self.where(cls.__module__)}.{cls.__qualname__}>")
        self.module(sys.modules.get(cls.__module__))
        nodes = getattr(value, "nodes", None)
        if isinstance(nodes, Mapping) and callable(getattr(value, "get_graph", None)):
            for name in sorted(nodes, key=str):  # a compiled graph: its nodes, in name order
                self.parts.append(f"node {name}")
                self.value(getattr(nodes[name], "bound", None), depth)
        for attr in ("func", "afunc", "tools_by_name", "bound", "kwargs", "steps", "first",
                     "middle", "last", "tools", "system_prompt"):
            # public attributes of LangChain / LangGraph runnables (RunnableCallable,
            # ToolNode, RunnableBinding, RunnableSequence)
            with contextlib.suppress(Exception):
                if hasattr(cls, attr) or attr in vars(value):
                    self.value(getattr(value, attr), depth)

    def module(self, module: types.ModuleType | None) -> None:
        """A user module's file, and the user modules its globals and its imports reach (a
        constant imported from a helper, ``from prompts import PROMPT``, is read in its
        file)."""
        if module is None or module.__name__ in self.modules or len(self.modules) > MAX_MODULES:
            return
        self.modules.add(module.__name__)
        if not is_user_module(module):
            return
        file = str(module.__file__)
        digest = self.files[Path(file).resolve()] = _file_digest(file)
        self.readable = True
        for name in _imports_of(file, digest, module.__package__ or None):
            self.module(sys.modules.get(name))
        for item in list(vars(module).values()):
            if isinstance(item, types.ModuleType):
                self.module(item)
            elif isinstance(item, type | types.FunctionType):
                self.module(sys.modules.get(getattr(item, "__module__", "") or ""))

    def where(self, module_name: str) -> str:
        """A module as the code's digest names it: a user module by its file's content (the
        name it was loaded under depends on how it was named), any other by its name."""
        module = sys.modules.get(module_name)
        if module is not None and is_user_module(module):
            return "user:" + _file_digest(str(module.__file__))
        return module_name

    def function(self, fn: types.FunctionType, depth: int) -> None:
        self.readable = True
        module = sys.modules.get(fn.__module__ or "")
        if is_user_module(module):
            self.parts.append(f"def {fn.__qualname__}")  # which function of the file
            self.module(module)
        else:  # library code, or code without a file (a notebook cell, a REPL)
            self.parts.append(_code_digest(fn.__code__))
            if module is None or not getattr(module, "__file__", None):
                with contextlib.suppress(OSError, TypeError):
                    self.parts.append(inspect.getsource(fn))
        for cell in fn.__closure__ or ():
            with contextlib.suppress(ValueError):  # an empty cell
                self.value(cell.cell_contents, depth)
        self.value(fn.__defaults__, depth)
        self.value(fn.__kwdefaults__, depth)

    def tool(self, tool: Any, depth: int) -> None:
        self.readable = True
        self.parts.append(f"tool {tool.name}: {tool.description}")
        with contextlib.suppress(Exception):
            self.parts.append(json.dumps(tool.args, sort_keys=True, default=str))
        self.value(getattr(tool, "func", None), depth)
        self.value(getattr(tool, "coroutine", None), depth)

    def chat_model(self, model: Any, depth: int) -> None:
        cls = type(model)
        self.parts.append(f"model {self.where(cls.__module__)}.{cls.__qualname__}")
        with contextlib.suppress(Exception):
            self.parts.append(json.dumps(model_params(model), sort_keys=True, default=str))
        self.module(sys.modules.get(cls.__module__))

    def message(self, message: Any, depth: int) -> None:
        self.parts.append(f"{message.type}: {message.content!r}")

    def container(self, value: Any, depth: int) -> None:
        items: list[Any]
        if isinstance(value, Mapping):  # in key order: insertion order may vary by run
            items = [x for kv in sorted(value.items(), key=lambda kv: _order(kv[0]))
                     for x in kv]
        elif isinstance(value, set | frozenset):
            items = sorted(value, key=_order)
        else:
            items = list(value)
        for item in items[:MAX_ITEMS]:
            self.value(item, depth)

    def partial(self, value: functools.partial[Any], depth: int) -> None:
        self.value(value.func, depth)
        self.value(value.args, depth)
        self.value(value.keywords, depth)

    def method(self, value: types.MethodType, depth: int) -> None:
        self.value(value.__func__, depth)
        self.value(value.__self__, depth)

    def code_type(self, value: type, depth: int) -> None:
        self.parts.append(f"class {self.where(value.__module__)}.{value.__qualname__}")
        self.module(sys.modules.get(value.__module__))


def _is(value: Any, kind: str) -> bool:
    """Whether ``value`` is of a kind :class:`_Reader` reads (LangChain's classes looked up
    only when LangChain is loaded: the CLI reads agents without it)."""
    if kind in _LANGCHAIN:
        module, name = _LANGCHAIN[kind]
        owner = sys.modules.get(module)
        cls = getattr(owner, name, None) if owner is not None else None
        return cls is not None and isinstance(value, cls)
    return isinstance(value, _PLAIN[kind])


_LANGCHAIN = {"tool": ("langchain_core.tools", "BaseTool"),
              "chat_model": ("langchain_core.language_models", "BaseChatModel"),
              "message": ("langchain_core.messages", "BaseMessage")}
_PLAIN: dict[str, Any] = {"function": types.FunctionType, "partial": functools.partial,
                          "method": types.MethodType, "module": types.ModuleType,
                          "type": type, "container": list | tuple | set | frozenset | Mapping}
_READERS: list[tuple[str, Callable[[_Reader, Any, int], None]]] = [
    ("function", _Reader.function), ("partial", _Reader.partial),
    ("method", _Reader.method), ("tool", _Reader.tool), ("chat_model", _Reader.chat_model),
    ("message", _Reader.message),
    ("module", lambda self, value, depth: self.module(value)),
    ("type", _Reader.code_type), ("container", _Reader.container),
]


def _order(value: Any) -> str:
    """A sort key the same in every process (a scalar's repr, else its type's name; never an
    object's repr, which may hold its address)."""
    if value is None or isinstance(value, bool | int | float | str | bytes):
        return repr(value)
    return f"~{type(value).__module__}.{type(value).__qualname__}"


def _const(value: Any) -> str:
    """A code constant as text, the same in every process (a frozenset's order follows the
    string hash seed; nested code by its digest)."""
    if isinstance(value, types.CodeType):
        return _code_digest(value)
    if isinstance(value, frozenset):
        return "frozenset(" + ",".join(sorted(map(_const, value))) + ")"
    if isinstance(value, tuple):
        return "(" + ",".join(map(_const, value)) + ")"
    return repr(value)


def _code_digest(code: types.CodeType) -> str:
    """A compiled function's digest: its bytecode, names and constants (nested code too)."""
    digest = hashlib.sha256(code.co_code)
    digest.update(repr(code.co_names).encode())
    for const in code.co_consts:
        digest.update(_const(const).encode("utf-8", "replace"))
    return digest.hexdigest()[:16]


def code_identity(obj: Any) -> CodeIdentity:
    """What can be read of ``obj``'s code (see the module docstring)."""
    reader = _Reader()
    reader.value(obj)
    text = "\n".join(reader.parts)
    labels = file_labels(reader.files)
    return CodeIdentity(files={labels[f]: d for f, d in reader.files.items()},
                        code=hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16],
                        readable=reader.readable)


def file_labels(files: Iterable[Path]) -> dict[Path, str]:
    """Each file by its path from the folder that holds them all (``/a/ag.py``,
    ``/a/lib/h.py`` -> ``ag.py``, ``lib/h.py``): the same wherever the folder is and however
    its modules were named.

    >>> sorted(file_labels([Path("/a/ag.py"), Path("/a/lib/h.py")]).values())
    ['ag.py', 'lib/h.py']
    """
    paths = list(files)
    if not paths:
        return {}
    root = Path(os.path.commonpath([str(p.parent) for p in paths]))
    return {p: p.relative_to(root).as_posix() for p in paths}


# ----------------------------------------------------------------------------- agent commands

LOCK_FILES = ("package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml",
              "bun.lock", "bun.lockb", "deno.lock", "uv.lock", "poetry.lock", "pdm.lock",
              "Pipfile.lock", "requirements.txt", "Cargo.lock", "go.sum", "Gemfile.lock")
"""Files that pin what a script's project installs (its dependencies' versions)."""
LOCK_LEVELS = 4
"""Folders looked in for lock files: a script's, then its parents', up to the first that holds
one (``dist/main.js`` beside the project's ``package-lock.json``)."""
WHOLE_FILE_BYTES = 64 << 20
"""Files up to this size are digested whole; a larger one (a model file passed as an argument)
by its size and its first and last MiB."""


def command_files(command: str, cwd: Path | None = None) -> dict[str, str]:
    """The files an agent command names, as a run's identity keeps them: path (from ``cwd``,
    where the command runs, else absolute) -> sha256 (16 hex digits).

    * each word of the command that is a file (``python agent.py``, ``node dist/main.js``,
      ``--config=agent.toml``; the string of ``sh -c '...'`` is read as a command too), and the
      module of ``python -m pkg.main`` when it is a file under ``cwd``;
    * the user modules a Python script imports, found beside it or under ``cwd`` (``from
      helpers import x``; ``python -m pkg.main`` importing ``pkg.tools``), and theirs;
    * the lock files of each script's folder, or of its nearest parent that has one
      (:data:`LOCK_FILES`: ``package-lock.json``, ``uv.lock``, ``requirements.txt``...).

    A program found on PATH (``python``, ``claude``) is known by its name: ``--agent-version``
    says its version.
    """
    base = Path.cwd() if cwd is None else Path(cwd)
    scripts = list(dict.fromkeys(_named_files(_words(command), base)))
    found = list(scripts)
    for script in scripts:
        if script.suffix == ".py":  # run as a file, its folder is where imports are found
            _python_imports(script, (script.parent, base), found)
    for script in scripts:
        found += [f for f in _lock_files(script.parent) if f not in found]
    return {_command_label(f, base): _large_digest(f) for f in found[:MAX_MODULES]}


def _words(command: str, depth: int = 0) -> list[str]:
    """The words of a shell command, a word that is itself a command (``sh -c '...'``) read
    too; ``--flag=value`` gives its value as a word."""
    try:
        words = shlex.split(command)
    except ValueError:  # unbalanced quotes: the shell will say so; read what is there
        words = command.split()
    out: list[str] = []
    for word in words:
        out.append(word)
        if "=" in word:
            out.append(word.split("=", 1)[1])
        if depth < 2 and any(c.isspace() for c in word):
            out += _words(word, depth + 1)
    return out


def _named_files(words: list[str], base: Path) -> Iterator[Path]:
    for i, word in enumerate(words):
        if word == "-m" and i + 1 < len(words):  # python -m pkg.main
            module = base / words[i + 1].replace(".", "/")
            candidates = [module.with_suffix(".py"), module / "__main__.py"]
        else:
            candidates = [Path(word) if Path(word).is_absolute() else base / word]
        for path in candidates:
            if _is_file(path):
                yield Path(os.path.abspath(path))


def _is_file(path: Path) -> bool:
    try:
        return len(str(path)) < 4096 and path.is_file()
    except OSError:  # a word no file can be named by (too long, not a path)
        return False


def _python_imports(script: Path, roots: tuple[Path, ...], found: list[Path]) -> None:
    """Add the modules ``script`` imports that are files under ``roots`` (and theirs)."""
    for name in _imports_of(str(script), _large_digest(script), None):
        for root in roots:
            stem = root / name.replace(".", "/")
            for path in (stem.with_suffix(".py"), stem / "__init__.py"):
                path = Path(os.path.abspath(path))
                if len(found) < MAX_MODULES and _is_file(path) and path not in found:
                    found.append(path)
                    _python_imports(path, roots, found)


def _lock_files(folder: Path) -> list[Path]:
    for where in [folder, *folder.parents][:LOCK_LEVELS]:
        locks = [where / name for name in LOCK_FILES if _is_file(where / name)]
        if locks:
            return locks
    return []


def _command_label(path: Path, base: Path) -> str:
    try:
        return path.relative_to(Path(os.path.abspath(base))).as_posix()
    except ValueError:
        return path.as_posix()


def _large_digest(path: Path) -> str:
    """A file's sha256 (16 hex digits), a file over :data:`WHOLE_FILE_BYTES` by its size and
    its first and last MiB."""
    size = path.stat().st_size
    if size <= WHOLE_FILE_BYTES:
        return file_digest(path)[:16]
    digest = hashlib.sha256(str(size).encode())
    with open(path, "rb") as fh:
        digest.update(fh.read(1 << 20))
        fh.seek(size - (1 << 20))
        digest.update(fh.read(1 << 20))
    return digest.hexdigest()[:16]


def user_frame(exc: BaseException) -> str | None:
    """Where ``exc`` was raised, as ``file.py:LINE in FUNCTION``: the last frame of its
    traceback in the user's code, else the last frame outside the Python installation, else
    the last frame; ``None`` without a traceback."""
    frames = list(_frames(exc))
    if not frames:
        return None
    chosen = (next((f for f in reversed(frames) if is_user_file(f.filename)
                    and OWN_PACKAGE not in Path(f.filename).parts), None)
              or next((f for f in reversed(frames) if not any(
                  Path(f.filename).resolve().is_relative_to(r) for r in _library_roots())),
                  None)
              or frames[-1])
    return f"{Path(chosen.filename).name}:{chosen.lineno} in {chosen.name}"


def _frames(exc: BaseException) -> list[traceback.FrameSummary]:
    return list(traceback.extract_tb(exc.__traceback__)) if exc.__traceback__ else []


__all__ = ["LOCK_FILES", "CodeIdentity", "code_identity", "command_files", "file_labels",
           "is_user_file", "is_user_module", "user_frame"]
