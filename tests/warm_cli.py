"""``tooleval`` started warm: a server that imports the heavy modules once and forks a child per
command, and a shim named ``tooleval`` that hands its command to it.

Starting ``tooleval`` costs seconds of CPU before our code does anything (LangChain, LangGraph,
LangSmith, pydantic, numpy, httpx; ``python -X importtime``). The documentation's pages run a
few dozen commands (tests/test_docs_blocks.py: about 50 offline); with one server per test
worker (:func:`serving`) that start-up is paid once per worker. The driver
(tests/docs_blocks.py ``--warm LOG``) can also start one for a page run by hand.

* The server (``python warm_cli.py serve SOCKET``, :func:`serve`) imports :func:`warm_modules`,
  then listens on a unix socket. Per request it forks a child that becomes the command
  (:func:`become`): the caller's argv, working folder, environment and standard streams (sent as
  file descriptors), signal dispositions as a fresh process has them, the ``tooleval`` console
  script's entry point run as ``.venv/bin/tooleval`` runs it. One fork per command: each
  command is its own process, its exit status (or the signal that ended it) what the server's
  ``waitpid`` reads, sent back to the shim.
* The shim (:data:`SHIM`, stdlib only, ``python -I -S``) sends its argv, folder, environment
  and descriptors; it forwards SIGINT/SIGTERM/SIGHUP/SIGQUIT to the child and exits as the
  child did. Without :data:`SOCKET` in its environment, or when the server cannot take the
  command, it ``execve``-s the real entry script: never worse than a cold start.
* What the warm modules read at import is the server's: the environment keys they read then
  are recorded (:class:`Reads`) and pinned with the interpreter's own (``PYTHON*``, locale,
  ``TZ``, thread-pool sizes); a command whose environment differs in a pinned key runs cold.
  Our own modules that read the terminal or the environment at import (``cli.base``'s rich
  consoles: width, colour, ``NO_COLOR``) are left out, with every module importing them.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import importlib
import importlib.metadata
import io
import json
import os
import selectors
import signal
import socket
import struct
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import Any, NoReturn

SOCKET = "TOOLEVAL_WARM_SOCKET"
"""The variable that points the shim at a server (dropped from the command's environment)."""
SCRIPTS = Path(sysconfig.get_path("scripts"))
"""The real virtualenv's ``bin/``: its ``tooleval`` is the real entry script."""
PACKAGE = Path(__file__).resolve().parents[1] / "tooleval_agents"
THIRD_PARTY = ("pydantic", "numpy", "httpx", "openai", "typer", "rich", "langsmith",
               "langchain_core.language_models", "langchain_core.messages",
               "langchain_core.tools", "langchain_core.tracers", "langchain_core.runnables",
               "langgraph.graph", "langchain_openai", "langsmith.evaluation")
"""Third-party modules the commands import (most inside functions: ``--help`` stays fast)."""
UNSAFE = ("tooleval_agents.cli.base", "matplotlib")
"""Modules that read the terminal or the home folder at import, so never warm: ``cli.base``'s
rich consoles (width, colour), matplotlib's configuration and cache folders (``HOME``,
``XDG_*``; each page has a home of its own)."""
PINNED_PREFIXES = ("PYTHON", "LC_", "LANG", "TZ", "OPENBLAS_", "OMP_", "MKL_")
"""Keys the interpreter or C libraries read at start-up (stdio encoding, hash seed, time zone,
numpy's thread pools), outside what :class:`Reads` sees."""
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
"""Signals the shim passes on to the command (Ctrl-C, a timeout's kill, a hang-up)."""
HEADER = struct.Struct("!I")

SHIM = '''#!{python} -IS
"""tooleval, started warm by the server at ${socket} (tests/warm_cli.py), else as installed."""
import json, os, signal, socket, struct, sys

REAL = {real!r}


def cold(env):
    os.execve(REAL, [REAL, *sys.argv[1:]], env)


def main():
    env = dict(os.environ)
    path = env.pop({socket!r}, None)
    if not path:
        cold(env)
    ignored = [int(s) for s in signal.valid_signals() if s not in (signal.SIGKILL,
               signal.SIGSTOP, signal.SIGPIPE, signal.SIGXFSZ)
               and signal.getsignal(s) is signal.SIG_IGN]
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
        request = json.dumps({{"argv": sys.argv, "cwd": os.getcwd(), "env": env,
                              "ignored": ignored}}).encode()
        socket.send_fds(sock, [struct.pack("!I", len(request))], [0, 1, 2])
        sock.sendall(request)
        reader = sock.makefile("rb")
        started = json.loads(reader.readline() or "{{}}")
    except (OSError, ValueError):
        cold(env)
    if "pid" not in started:
        cold(env)
    pid = started["pid"]

    def forward(signum, frame):
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    for s in {forwarded!r}:
        if s not in ignored:
            signal.signal(s, forward)
    ended = json.loads(reader.readline() or '{{"status": 70}}')
    status = ended["status"]
    if status < 0:  # ended by a signal: end the same way
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    os._exit(status)


main()
'''
"""The shim's text (``python``, ``real``, ``socket``, ``forwarded`` filled in by :func:`shim`)."""


def shim(real: Path = SCRIPTS / "tooleval") -> str:
    return SHIM.format(python=sys.executable, real=str(real), socket=SOCKET,
                       forwarded=tuple(int(s) for s in FORWARDED))


def warm_venv(venv: Path, real: Path | None = None) -> Path:
    """A virtualenv folder at ``venv`` that is the real one (``sys.prefix``, every entry a
    symlink) but for ``bin/tooleval``, the shim; returns ``venv``."""
    real = real or Path(sys.prefix)
    venv.mkdir()
    for entry in real.iterdir():
        if entry.name != "bin":
            (venv / entry.name).symlink_to(entry)
    (venv / "bin").mkdir()
    for entry in (real / "bin").iterdir():
        if entry.name != "tooleval":
            (venv / "bin" / entry.name).symlink_to(entry)
    tool = venv / "bin" / "tooleval"
    tool.write_text(shim(real / "bin" / "tooleval"), encoding="utf-8")
    tool.chmod(0o755)
    return venv


# --- what is imported warm ---------------------------------------------------------------------

def _module_name(file: Path) -> str:
    parts = file.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements run at import: ``body`` and what it nests (``if``, ``try``, ``with``),
    but for ``if TYPE_CHECKING:``."""
    for node in body:
        yield node
        if isinstance(node, ast.If):
            if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                yield from _statements(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            yield from _statements(node.body + node.orelse + node.finalbody)
            for handler in node.handlers:
                yield from _statements(handler.body)
        elif isinstance(node, ast.With):
            yield from _statements(node.body)


def _top_level_imports(file: Path, name: str) -> set[str]:
    """Modules a module imports when imported (its top-level statements, not its functions)."""
    found: set[str] = set()
    package = name if file.name == "__init__.py" else name.rpartition(".")[0]
    for node in _statements(ast.parse(file.read_text(encoding="utf-8")).body):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[:len(package.split(".")) - node.level + 1],
                                 *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    # Importing ``a.b.c`` imports ``a`` and ``a.b`` first.
    found |= {m.rsplit(".", n)[0] for m in found for n in range(1, m.count(".") + 1)}
    return {m for m in found if m.startswith(("tooleval_agents", *UNSAFE))}


def warm_modules() -> list[str]:
    """:data:`THIRD_PARTY`, then every module of ours that does not import an :data:`UNSAFE`
    one at import (directly or through others), nor the package's ``__main__`` modules."""
    graph: dict[str, set[str]] = {}
    for file in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" not in file.parts and file.name != "__main__.py":
            graph[_module_name(file)] = _top_level_imports(file, _module_name(file))
    unsafe = set(UNSAFE)
    grew = True
    while grew:  # a module is unsafe when it imports an unsafe one, or its package is unsafe
        more = {m for m, deps in graph.items() if m not in unsafe
                and (deps & unsafe or m.rpartition(".")[0] in unsafe)}
        grew = bool(more)
        unsafe |= more
    return [*THIRD_PARTY, *(m for m in graph if m not in unsafe)]


class Reads(MutableMapping[str, str]):
    """The environment, recording which keys are read (``*``: the whole of it)."""

    def __init__(self, environ: MutableMapping[str, str]) -> None:
        self.environ = environ
        self.read: set[str] = set()

    def __getitem__(self, key: str) -> str:
        self.read.add(os.fsdecode(key))
        return self.environ[key]

    def __setitem__(self, key: str, value: str) -> None:
        self.environ[key] = value

    def __delitem__(self, key: str) -> None:
        del self.environ[key]

    def __iter__(self) -> Iterator[str]:
        self.read.add("*")
        return iter(self.environ)

    def __len__(self) -> int:
        return len(self.environ)

    def __contains__(self, key: object) -> bool:
        self.read.add(os.fsdecode(key) if isinstance(key, str | bytes) else str(key))
        return key in self.environ

    def copy(self) -> dict[str, str]:
        self.read.add("*")
        return dict(self.environ)


def warm_up(modules: list[str]) -> set[str]:
    """Import ``modules``; the environment keys read meanwhile."""
    environ, reads = os.environ, Reads(os.environ)
    os.environ = reads  # type: ignore[assignment]  # noqa: B003  (this process, while importing)
    try:
        for name in modules:
            importlib.import_module(name)
    finally:
        os.environ = environ  # noqa: B003
    return reads.read


# --- the server --------------------------------------------------------------------------------

class Server:
    """The state of :func:`serve`: the listening socket and the running commands."""

    def __init__(self, path: str, pinned: dict[str, str | None]) -> None:
        self.path = path
        self.pinned = pinned
        """Environment keys read at start-up or import -> the server's value."""
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path + ".new")
        self.listener.listen(64)
        os.rename(path + ".new", path)  # ready once it exists under its name
        self.wake_r, self.wake_w = socket.socketpair()
        self.wake_w.setblocking(False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ)
        self.selector.register(self.wake_r, selectors.EVENT_READ)
        self.children: dict[int, socket.socket] = {}
        """Running command -> its shim's connection."""
        self.stopping = False

    def sockets(self) -> list[socket.socket]:
        return [self.listener, self.wake_r, self.wake_w, *self.children.values()]

    def reap(self) -> None:
        while self.children:
            with contextlib.suppress(ChildProcessError):
                pid, status = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    return
                conn = self.children.pop(pid, None)
                if conn is not None:
                    with contextlib.suppress(KeyError):  # unregistered when its shim ended
                        self.selector.unregister(conn)
                    with contextlib.suppress(OSError):
                        code = os.waitstatus_to_exitcode(status)
                        conn.sendall(json.dumps({"status": code}).encode() + b"\n")
                    conn.close()
                continue
            return

    def step(self) -> socket.socket | None:
        """One turn of the loop; in a forked child, its connection (the command to become)."""
        for key, _ in self.selector.select(timeout=1.0):
            if key.fileobj is self.listener:
                conn = self.listener.accept()[0]
                pid = os.fork()
                if pid == 0:
                    return conn
                self.children[pid] = conn
                self.selector.register(conn, selectors.EVENT_READ, pid)
            elif key.fileobj is self.wake_r:
                with contextlib.suppress(BlockingIOError):
                    self.wake_r.recv(4096)
            elif key.data in self.children and not _peek(key.fileobj):  # type: ignore[arg-type]
                # The shim is gone (killed): its command does not run on alone.
                self.selector.unregister(key.fileobj)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(key.data, signal.SIGTERM)
        self.reap()
        return None

    def stop(self) -> None:
        """End: no more commands; those still running are ended (10 s, then killed)."""
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        for pid in self.children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while self.children and time.monotonic() < deadline:
            self.reap()
            time.sleep(0.05)
        for pid in self.children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _peek(conn: socket.socket) -> bool:
    """Whether ``conn`` is still open at the other end."""
    with contextlib.suppress(OSError):
        return bool(conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT))
    return True


def serve(path: str) -> tuple[socket.socket, dict[str, str | None]] | None:
    """Warm up, then serve commands at ``path`` until SIGTERM or until the process that started
    the server ends. Returns in the server when done (None), and in each forked child with its
    connection and the pinned environment (the caller then runs :func:`become`)."""
    sys.path[0] = str(SCRIPTS)  # as the entry script has it: the user's folder is not on it
    read = warm_up(warm_modules())
    assert not set(UNSAFE) & set(sys.modules), "a warm module imported an unsafe one"
    assert threading.active_count() == 1, "a warm module started a thread: fork would lose it"
    keys = read | {k for k in os.environ if k.startswith(PINNED_PREFIXES)}
    if "*" in read:
        raise RuntimeError("a warm module read the whole environment at import")
    server = Server(path, {k: os.environ.get(k) for k in keys})
    # What is imported stays: a child's collections (at its exit too) would otherwise walk and
    # copy the whole warm heap (2 s of a `tooleval list`'s 2.5 s without this).
    gc.freeze()
    signal.set_wakeup_fd(server.wake_w.fileno())
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGTERM, lambda *_: setattr(server, "stopping", True))
    parent = os.getppid()
    while not server.stopping and os.getppid() == parent:
        conn = server.step()
        if conn is not None:
            for other in server.sockets():
                other.close()
            server.selector.close()
            signal.set_wakeup_fd(-1)
            return conn, server.pinned
    server.stop()
    return None


def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    head, fds, _, _ = socket.recv_fds(conn, HEADER.size, 3)
    while len(head) < HEADER.size:
        head += conn.recv(HEADER.size - len(head))
    (size,) = HEADER.unpack(head)
    body = b""
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise EOFError("the shim closed its request")
        body += chunk
    return json.loads(body), fds


def _signals(ignored: set[int]) -> None:
    """Each signal's disposition as a fresh Python started by the shim's parent has it."""
    for s in signal.valid_signals():
        if s in (signal.SIGKILL, signal.SIGSTOP):
            continue
        handler: Any = signal.SIG_DFL
        if s in ignored or s in (signal.SIGPIPE, signal.SIGXFSZ):
            handler = signal.SIG_IGN
        elif s == signal.SIGINT:
            handler = signal.default_int_handler
        with contextlib.suppress(OSError, ValueError):
            signal.signal(s, handler)


def _stdio() -> None:
    """New ``sys.stdin``/``stdout``/``stderr`` on descriptors 0-2, made as the interpreter makes
    them at start-up (the server's were made for its own: /dev/null is seekable, a pipe is not;
    a terminal's stdout is line-buffered)."""
    for name, fd, write in (("stdin", 0, False), ("stdout", 1, True), ("stderr", 2, True)):
        old = getattr(sys, name)
        buffered = not old.write_through  # -u, PYTHONUNBUFFERED (pinned: the server's)
        buffer = open(fd, "wb" if write else "rb", buffering=-1 if buffered or not write else 0,  # noqa: SIM115
                      closefd=False)
        raw = getattr(buffer, "raw", buffer)
        with contextlib.suppress(AttributeError):
            raw.name = f"<{name}>"  # type: ignore[misc]  # as the interpreter names it
        stream = io.TextIOWrapper(buffer, encoding=old.encoding, errors=old.errors, newline="\n",
                                  line_buffering=buffered and (os.isatty(fd) or fd == 2),
                                  write_through=not buffered)
        stream.mode = "w" if write else "r"  # type: ignore[misc]
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def become(conn: socket.socket, pinned: Mapping[str, str | None]) -> NoReturn:
    """Run the command a shim sent on ``conn``, in this (forked) process; exit as it does."""
    try:
        request, fds = _receive(conn)
        env: dict[str, str] = request["env"]
        keys = {*pinned, *(k for k in env if k.startswith(PINNED_PREFIXES))}
        differ = sorted(k for k in keys if env.get(k) != pinned.get(k))
        if differ or len(fds) != 3:
            print(f"cold {differ} {request['cwd']} {request['argv'][1:]}", file=sys.stderr,
                  flush=True)
            conn.sendall(json.dumps({"cold": differ}).encode() + b"\n")
            os._exit(0)
        # The server's log (standard error is the command's from here).
        print(f"warm {os.getpid()} {request['cwd']} {request['argv'][1:]}", file=sys.stderr,
              flush=True)
        for fd, target in zip(fds, (0, 1, 2), strict=True):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(env)
        sys.argv = list(request["argv"])
        _signals(set(request["ignored"]))
        _stdio()
        (entry,) = importlib.metadata.entry_points(group="console_scripts", name="tooleval")
        conn.sendall(json.dumps({"pid": os.getpid()}).encode() + b"\n")
        conn.close()
        main = entry.load()
    except BaseException as error:  # never back into the server's loop
        with contextlib.suppress(OSError):
            os.write(2, f"warm tooleval: {error!r}\n".encode())
        os._exit(70)
    sys.exit(main())


# --- the driver's side -------------------------------------------------------------------------

@contextlib.contextmanager
def serving(log: Path, env: Mapping[str, str] | None = None,
            timeout: float = 300.0) -> Iterator[dict[str, str]]:
    """A server for the commands run meanwhile, started in ``env`` (default: this process's),
    what it ran (``warm PID ARGS``, ``cold KEYS ARGS``) logged in ``log``; yields the variables
    that point shims at it."""
    folder = Path(tempfile.mkdtemp(prefix="warm-cli-"))  # short: a socket path is <108 bytes
    path = folder / "s"
    with log.open("ab") as out:
        proc = subprocess.Popen([sys.executable, __file__, "serve", str(path)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=out, env=env)
    try:
        deadline = time.monotonic() + timeout
        while not path.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the warm tooleval server did not start (see {log})")
            time.sleep(0.02)
        yield {SOCKET: str(path)}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        with contextlib.suppress(OSError):
            path.unlink()
        with contextlib.suppress(OSError):
            folder.rmdir()


if __name__ == "__main__" and sys.argv[1:2] == ["serve"]:
    forked = serve(sys.argv[2])
    if forked is not None:
        become(*forked)
