"""The agent sandbox (``tooleval run --agent-cmd ... --agent-sandbox``): each agent command
runs in a `bubblewrap <https://github.com/containers/bubblewrap>`_ (``bwrap``) view of the
machine, made per example, with no container engine and no privilege.

What a sealed agent sees (:func:`bwrap_argv`):

* **processes**: its own PID namespace (it is PID 2 or so; no other process, no sibling's
  environment in ``/proc``), ended as a whole when the agent's process ends, and killed with
  the harness (``--die-with-parent``);
* **files**: the system folders (:data:`SYSTEM_DIRS`), the working directory, the Python
  running the harness and what ``--agent-read`` names, all read-only; a private, empty
  ``HOME`` and ``/tmp``; its example's own folder (the request, the usage file). Never the
  data directory, the runs root, the caches, the bundled samples (:func:`hidden_paths`), nor
  the user's home;
* **network**: a network namespace of its own with only a loopback, where the run's MCP
  server's port answers through a relay (``launch.py relay``, inside, to a Unix socket of
  :class:`Gate`, outside). ``--agent-host HOST[:PORT]`` opens more: a loopback one
  (``127.0.0.1:8000``, a local model server) is relayed the same way; any other is reached
  through an HTTPS proxy (``HTTPS_PROXY``, ``CONNECT`` only) that allows those hosts alone.

:func:`check_sandbox` says in one line why a sandbox cannot be made here, and how to fix it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from tooleval_agents.data.datadir import ENV_VAR, bundled_samples, cache_dir
from tooleval_agents.errors import ToolevalError, UsageError

try:  # POSIX; elsewhere there is no sandbox
    import pwd
except ImportError:  # pragma: no cover
    pwd = None  # type: ignore[assignment]

BWRAP = "bwrap"
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
               "/nix", "/gnu")
"""Folders a sealed agent reads (read-only), where they exist: programs and their libraries,
the machine's configuration (certificates, time zones)."""
INSIDE = "/run/tooleval"
"""The sandbox's own folder: the relay and the gate's sockets (nothing of the harness)."""
LAUNCHER = Path(__file__).with_name("launch.py")
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
PROXY_PORT = 3128
"""Where a sealed agent's HTTPS proxy listens, inside (another port when that one is taken
by a relayed one)."""
PROXY_HEAD_MAX = 8192
PROXY_HEAD_S = 30.0
INSTALL_FIX = ("install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora: "
               "sudo dnf install bubblewrap)")
USERNS_FIX = ("allow unprivileged user namespaces (sudo sysctl -w "
              "kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 and later: sudo sysctl -w "
              "kernel.apparmor_restrict_unprivileged_userns=0; where user.max_user_namespaces "
              "is 0: sudo sysctl -w user.max_user_namespaces=15000)")


class SandboxUnavailable(UsageError):
    """``--agent-sandbox`` cannot seal an agent here (no ``bwrap``, no user namespaces, not
    Linux): the message says how to fix it."""


@dataclass(frozen=True)
class AgentSandbox:
    """How an agent command is sealed (``--agent-sandbox``; see the module docstring)."""

    hosts: tuple[str, ...] = ()
    """``HOST[:PORT]`` it may reach besides the run's MCP server (``--agent-host``; the port
    defaults to 443; a loopback host needs its port)."""
    read: tuple[Path, ...] = ()
    """Paths it may read besides the system folders and the working directory
    (``--agent-read``)."""
    hide: tuple[Path, ...] = ()
    """Paths it never sees, besides :func:`hidden_paths` (the run's data directory and its
    runs root: the run fills them in)."""

    def __post_init__(self) -> None:
        for host in self.hosts:
            parse_host(host)

    def record(self) -> dict[str, object]:
        """What the run records of it (``config.json`` ``agent_sandbox``, its identity)."""
        return {"sealed": True, "network": ["loopback", *sorted(set(self.hosts))]}


def parse_host(text: str) -> tuple[str, int]:
    """``HOST[:PORT]`` as ``(host, port)``; 443 when no port is given (a loopback host needs
    one).

    >>> parse_host("api.openai.com"), parse_host("localhost:8000")
    (('api.openai.com', 443), ('localhost', 8000))
    """
    host, sep, port = text.strip().rpartition(":")
    if not sep or "]" in port:
        host, port = text.strip(), ""
    host = host.strip("[]")
    if not host or any(c.isspace() or c in "/@?#" for c in host) or (
            port and not (port.isdigit() and 0 < int(port) < 65536)):
        raise UsageError(f"--agent-host {text!r}: give HOST or HOST:PORT (e.g. "
                         "api.openai.com, or 127.0.0.1:8000 for a server on this machine)")
    if host in LOOPBACK_NAMES and not (port and int(port) >= 1024):
        raise UsageError(f"--agent-host {text!r}: a host on this machine needs its port, "
                         "1024 or above (the sandbox listens on it unprivileged), e.g. "
                         "127.0.0.1:8000")
    return host, int(port) if port else 443


# ----------------------------------------------------------------------------- can it run here


@functools.cache
def _probe(bwrap: str) -> str | None:
    """Why ``bwrap`` cannot make a sandbox here (``None``: it can)."""
    try:
        done = subprocess.run(
            [bwrap, "--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "--ro-bind",
             "/", "/", "--proc", "/proc", "--dev", "/dev", "true"],
            capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{bwrap} could not be run ({exc})"
    if done.returncode == 0:
        return None
    said = " ".join(done.stderr.split())[:300] or f"exit status {done.returncode}"
    return f"{bwrap} could not make a sandbox: {said}"


def check_sandbox(path: str | None = None) -> str:
    """The ``bwrap`` that seals agents here (found on ``path``, default ``PATH``).

    Raises:
        SandboxUnavailable: not Linux, no ``bwrap``, or it cannot make a sandbox (user
            namespaces disabled): the message says how to fix it, or to run without it.
    """
    unsealed = "or run without --agent-sandbox (the run is then marked unsealed)"
    if not sys.platform.startswith("linux"):
        raise SandboxUnavailable(f"--agent-sandbox needs Linux (bubblewrap): {unsealed}")
    bwrap = shutil.which(BWRAP, path=path)
    if bwrap is None:
        raise SandboxUnavailable(f"--agent-sandbox needs bubblewrap, and no bwrap is on the "
                                 f"PATH: {INSTALL_FIX}, {unsealed}")
    why = _probe(bwrap)
    if why is not None:
        namespaces = any(w in why.lower() for w in ("namespace", "permission", "operation not "
                                                    "permitted", "uid map", "setting up"))
        fix = USERNS_FIX if namespaces else "see bwrap's message"
        raise SandboxUnavailable(f"--agent-sandbox: {why}. Fix: {fix}; {unsealed}")
    return bwrap


# ----------------------------------------------------------------------------- what it sees


def hidden_paths(data_dir: Path | None = None, out: Path | None = None) -> list[Path]:
    """What a sealed agent never sees: the run's data directory and runs root, the data
    directory of ``TOOLEVAL_DATA_DIR``, the per-user cache (the default data directory, the
    response cache), ``XDG_CACHE_HOME`` and the benchmarks' bundled samples (gold answers)."""
    found = [data_dir, out, cache_dir(), os.environ.get(ENV_VAR) or None,
             os.environ.get("XDG_CACHE_HOME") or None, *bundled_samples().values()]
    return _unique(Path(p).expanduser().resolve() for p in found if p is not None)


def homes() -> list[Path]:
    """The user's home (``HOME``, and the password database's when it differs)."""
    found: list[str | None] = [os.environ.get("HOME")]
    if pwd is not None:
        with contextlib.suppress(KeyError):
            found.append(pwd.getpwuid(os.getuid()).pw_dir)
    return _unique(Path(h).resolve() for h in found if h and h != "/")


def check_workdir(cwd: Path, sandbox: AgentSandbox) -> None:
    """A sealed agent sees its working directory: not one that holds the home, and paths it
    reads hold none either.

    Raises:
        UsageError: ``cwd`` or an ``--agent-read`` path holds the user's home.
    """
    for home in homes():
        if _within(home, cwd.resolve()):
            raise UsageError(f"--agent-sandbox shows the agent its working directory "
                             f"(read-only), and {cwd} holds your home ({home}): run from the "
                             "agent's project folder")
        for path in sandbox.read:
            if _within(home, Path(path).expanduser().resolve()):
                raise UsageError(f"--agent-read {path} holds your home ({home}), which the "
                                 "sandbox keeps from the agent: name the folders it needs")


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _unique(paths: Iterable[Path]) -> list[Path]:
    return list(dict.fromkeys(paths))


@dataclass(frozen=True)
class View:
    """One sealed agent's view (:func:`bwrap_argv`)."""

    cwd: Path
    shared: tuple[Path, ...]
    """Folders it may write (its example's own), at their own paths."""
    gate: Path
    """The folder of the gate's Unix sockets (outside)."""
    routes: tuple[int, ...]
    """Loopback ports relayed, each to ``<gate>/<port>.sock``."""
    sandbox: AgentSandbox
    hidden: tuple[Path, ...] = field(default_factory=tuple)


def bwrap_argv(bwrap: str, view: View, command: str) -> list[str]:
    """The ``bwrap`` command line that runs ``command`` (with ``/bin/sh -c``) sealed."""
    args = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    shown: list[Path] = []
    for name in SYSTEM_DIRS:
        path = Path(name)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), name]
        elif path.is_dir():
            args += ["--ro-bind", name, name]
            shown.append(path.resolve())
    for home in homes():
        args += ["--tmpfs", str(home)]  # a private, empty home
    extra = [view.cwd, Path(sys.prefix), Path(sys.base_prefix), *view.sandbox.read]
    for path in _unique(Path(p).expanduser().resolve() for p in extra):
        if path.exists() and not any(_within(path, s) for s in shown):
            args += ["--ro-bind", str(path), str(path)]
            shown.append(path)
    for path in view.hidden:  # over whatever showed them
        if path.exists() and any(_within(path, s) for s in shown):
            args += ["--tmpfs" if path.is_dir() else "--ro-bind", *(
                [str(path)] if path.is_dir() else ["/dev/null", str(path)])]
    for path in view.shared:
        args += ["--bind", str(path), str(path)]
    args += ["--dir", INSIDE, "--ro-bind", str(LAUNCHER), f"{INSIDE}/launch.py",
             "--ro-bind", str(view.gate), f"{INSIDE}/gate", "--remount-ro", "/",
             "--chdir", str(view.cwd), "--",
             sys.executable, "-I", "-S", f"{INSIDE}/launch.py", "relay",
             *(f"{port}={INSIDE}/gate/{port}.sock" for port in view.routes),
             "--", "/bin/sh", "-c", command]
    return args


# ----------------------------------------------------------------------------- the way out


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(1 << 16):
            writer.write(chunk)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (OSError, RuntimeError):
        pass


async def _join(a: tuple[asyncio.StreamReader, asyncio.StreamWriter],
                b: tuple[asyncio.StreamReader, asyncio.StreamWriter]) -> None:
    try:
        await asyncio.gather(_pipe(a[0], b[1]), _pipe(b[0], a[1]))
    finally:
        for writer in (a[1], b[1]):
            writer.close()


_Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, "tuple[str, int] | None"],
                    Awaitable[None]]


class Gate:
    """The harness's side of one sealed agent's network: a Unix socket per relayed loopback
    port (``<folder>/<port>.sock`` -> ``127.0.0.1:<port>`` here), and ``<folder>/<proxy>.sock``,
    an HTTPS proxy to the allowed hosts alone (anything else: 403). Open while the agent runs
    (``async with``)."""

    def __init__(self, folder: Path, forwards: dict[int, tuple[str, int]],
                 allowed: set[tuple[str, int]], proxy_port: int | None) -> None:
        self.folder, self.forwards, self.allowed = folder, forwards, allowed
        self.proxy_port = proxy_port
        self.refused: list[str] = []
        """``host:port`` the agent asked the proxy for and was refused."""
        self._servers: list[asyncio.AbstractServer] = []
        self._tasks: set[asyncio.Task[object]] = set()

    async def __aenter__(self) -> Gate:
        for port, target in self.forwards.items():
            self._servers.append(await asyncio.start_unix_server(
                functools.partial(self._handle, self._forward, target),
                str(self.folder / f"{port}.sock")))
        if self.proxy_port is not None:
            self._servers.append(await asyncio.start_unix_server(
                functools.partial(self._handle, self._proxy, None),
                str(self.folder / f"{self.proxy_port}.sock")))
        return self

    async def __aexit__(self, *exc: object) -> None:
        for server in self._servers:
            server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=5)

    async def _handle(self, serve: _Handler, target: tuple[str, int] | None,
                      reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One connection, tracked so that closing the gate ends it."""
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            await serve(reader, writer, target)
        finally:
            if task is not None:
                self._tasks.discard(task)

    async def _forward(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                       target: tuple[str, int] | None) -> None:
        assert target is not None
        try:
            upstream = await asyncio.open_connection(*target)
        except OSError:
            writer.close()
            return
        await _join((reader, writer), upstream)

    async def _proxy(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                     _: tuple[str, int] | None) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), PROXY_HEAD_S)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, OSError):
            writer.close()
            return
        target = _connect_target(head[:PROXY_HEAD_MAX])
        if target is None or target not in self.allowed:
            self.refused.append(f"{target[0]}:{target[1]}" if target else "not CONNECT")
            writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
                         b"Connection: close\r\n\r\nthe agent sandbox allows only the hosts of "
                         b"--agent-host (HTTPS, CONNECT)\n")
            with contextlib.suppress(OSError):
                await writer.drain()
            writer.close()
            return
        try:
            upstream = await asyncio.open_connection(*target)
        except OSError:
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n")
            writer.close()
            return
        writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        await _join((reader, writer), upstream)


def _connect_target(head: bytes) -> tuple[str, int] | None:
    """The ``host, port`` of a ``CONNECT host:port HTTP/1.1`` request head (``None``: not
    one)."""
    first = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
    if len(first) != 3 or first[0].upper() != "CONNECT":
        return None
    try:
        host, port = parse_host(first[1])
    except UsageError:
        return None
    return host.lower(), port


@dataclass(frozen=True)
class Seal:
    """What seals one agent process: the sandbox, the loopback URLs it must reach (its MCP
    session), the folders it writes (its example's own) and what it never sees."""

    sandbox: AgentSandbox
    bwrap: str
    urls: tuple[str, ...] = ()
    shared: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()

    @contextlib.asynccontextmanager
    async def opened(self, command: str, env: dict[str, str]
                     ) -> AsyncIterator[tuple[list[str], dict[str, str]]]:
        """The ``bwrap`` command line and environment of ``command``, with its gate open."""
        forwards = {port: ("127.0.0.1", port) for port in map(_loopback_port, self.urls)}
        remote: set[tuple[str, int]] = set()
        for host, port in map(parse_host, self.sandbox.hosts):
            if host in LOOPBACK_NAMES:
                forwards[port] = ("127.0.0.1" if host == "localhost" else host, port)
            else:
                remote.add((host.lower(), port))
        proxy = next(p for p in range(PROXY_PORT, PROXY_PORT + 100) if p not in forwards) \
            if remote else None
        env = {k: v for k, v in env.items() if k not in _PROXY_VARS | {"XDG_RUNTIME_DIR"}}
        env["TMPDIR"] = "/tmp"
        if proxy is not None:
            url = f"http://127.0.0.1:{proxy}"
            env.update({name: url for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY",
                                               "http_proxy", "ALL_PROXY", "all_proxy")})
            env["NO_PROXY"] = env["no_proxy"] = "localhost,127.0.0.1,::1"
        with tempfile.TemporaryDirectory(prefix="tooleval-gate-") as folder:
            view = View(Path.cwd(), self.shared, Path(folder),
                        tuple(forwards) + ((proxy,) if proxy is not None else ()),
                        self.sandbox, self.hidden)
            async with Gate(Path(folder), forwards, remote, proxy):
                yield bwrap_argv(self.bwrap, view, command), env


_PROXY_VARS = {"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY",
               "all_proxy", "NO_PROXY", "no_proxy"}


def _loopback_port(url: str) -> int:
    parts = urlsplit(url)
    if parts.hostname not in LOOPBACK_NAMES or parts.port is None:
        raise ToolevalError(f"the agent sandbox relays the loopback only: {url} is not on "
                            "127.0.0.1")
    return parts.port


__all__ = [
    "AgentSandbox",
    "Gate",
    "SandboxUnavailable",
    "Seal",
    "View",
    "bwrap_argv",
    "check_sandbox",
    "check_workdir",
    "hidden_paths",
    "homes",
    "parse_host",
]
