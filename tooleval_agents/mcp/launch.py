"""What runs between the harness and an agent command: a small process of the standard
library alone, started as ``python -I -S launch.py MODE ... -- ARGV`` (no site, no project
import: it starts in a few milliseconds, and inside the sandbox it needs nothing but the
interpreter).

``reap`` (an unsealed agent, Linux): the process that runs the agent, as a *child subreaper*
(``prctl(PR_SET_CHILD_SUBREAPER)``, set on this process alone, never on the harness): every
process the agent starts, one that left its process group (``setsid``) or whose parent ended
included, stays below it. When the agent ends, all of them are killed and reaped before it
exits with the agent's status. ``SIGTERM`` (the harness's timeout) ends them gently
(``SIGTERM``, then ``SIGKILL`` after a grace); ``SIGUSR1`` (the harness stops) ends them at once.
Its parent-death signal is ``SIGUSR1``, so a harness killed with ``kill -9`` takes its agents
with it.

Each mode imports what it needs as it starts (the reaper starts every unsealed agent, so its
start-up time is every example's).

``relay`` (a sealed agent, inside ``bwrap``'s network namespace, where the loopback is the
sandbox's own): listens on ``127.0.0.1:PORT`` for each ``PORT=SOCKET`` given and relays every
connection to that Unix socket (the harness's side of it; :class:`~tooleval_agents.mcp.
sandbox.Gate`), then runs the agent and exits with its status. The sandbox's PID namespace
ends every process left when it exits.
"""

from __future__ import annotations

import os
import signal
import sys
import time

TYPE_CHECKING = False  # not typing's: importing it would cost every agent's start
if TYPE_CHECKING:
    import socket

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
POLL_S = 0.01


class _End(Exception):
    """A signal asked the reaper to end the agent (without a grace: :attr:`_Signals.now`)."""


class _Signals:
    """What the reaper's signals asked. Only the first, while it waits for the agent, raises
    :class:`_End`; later ones (the harness's own death signal, a second SIGTERM) are noted,
    never raised: one raised in the wind-down ended the reaper and left the agent's children
    to init."""

    def __init__(self) -> None:
        self.waiting = True
        self.now = False

    def __call__(self, signum: int, frame: object) -> None:
        self.now = self.now or signum != signal.SIGTERM
        if self.waiting:
            self.waiting = False
            raise _End("end")


def _prctl(option: int, value: int) -> bool:
    import ctypes  # here: the relay never needs it

    libc = ctypes.CDLL(None, use_errno=True)
    return bool(libc.prctl(option, value, 0, 0, 0) == 0)


def _children(pid: int) -> list[int] | None:
    """The children of ``pid`` (each of its threads'), ``None`` where ``/proc`` does not list
    them (a kernel without ``CONFIG_PROC_CHILDREN``)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:  # it ended
        return []
    found = []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as file:
                found += [int(c) for c in file.read().split()]
        except FileNotFoundError:
            if not os.path.exists(f"/proc/{pid}/task/{task}"):
                continue  # the thread ended
            return None
        except OSError:
            continue
    return found


def descendants(root: int) -> list[int]:
    """Every process below ``root`` that has not ended (zombies, which only wait to be
    reaped, are left out): walked down ``/proc``'s children lists, else from every
    process's parent."""
    found, todo = [], [root]
    while todo:
        below = _children(todo.pop())
        if below is None:
            return _descendants_by_parent(root)
        for pid in below:
            if not _zombie(pid):
                found.append(pid)
            todo.append(pid)
    return found


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            return file.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):  # it ended
        return True


def _descendants_by_parent(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    zombies = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as file:
                fields = file.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):  # it ended while read
            continue
        children.setdefault(int(fields[1]), []).append(int(name))
        if fields[0] == b"Z":
            zombies.add(int(name))
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        if pid not in zombies:
            found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:  # it ended meanwhile
            continue


def _reap(agent: int, status: list[int]) -> None:
    """Collect every ended child (the agent's status into ``status``) without waiting."""
    while True:
        try:
            pid, code = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid == agent:
            status.append(code)


def end_tree(agent: int, status: list[int]) -> None:
    """Kill every process below this one until none is left, reaping them. None is left once
    two walks a poll apart find none: a child whose parent is ending is being handed to this
    subreaper, and one walk may list it under neither."""
    empty = 0
    for _ in range(10_000):  # bounded: each round kills what it found
        left = descendants(os.getpid())
        _reap(agent, status)
        empty = 0 if left else empty + 1
        if empty == 2:
            return
        _signal_all(left, signal.SIGKILL)
        time.sleep(POLL_S)


def _exec(argv: list[str]) -> None:
    """Become ``argv`` (in a child just forked); exit 127 where it cannot run."""
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        sys.stderr.write(f"{argv[0]}: {exc}\n")
    sys.exit(127)


def _exit_as(status: int | None) -> None:
    """Exit as the agent did (killed by a signal: by the same one)."""
    if status is None:
        sys.exit(1)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        os.kill(os.getpid(), sig)
        sys.exit(128 + sig)
    sys.exit(os.waitstatus_to_exitcode(status))


def reap(parent: int, grace: float, argv: list[str]) -> None:
    """Run ``argv`` as this subreaper's child; end everything below when it ends (see the
    module docstring)."""

    ending = _Signals()
    signal.signal(signal.SIGTERM, ending)
    signal.signal(signal.SIGUSR1, ending)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGUSR1)
    if os.getppid() != parent:  # the harness ended before the signal was set
        sys.exit(1)
    agent = os.fork()
    if agent == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGUSR1, signal.SIG_DFL)
        _exec(argv)
    status: list[int] = []
    try:
        while not status:
            pid, code = os.waitpid(-1, 0)  # orphans of the agent are reaped here too
            if pid == agent:
                status.append(code)
        ending.waiting = False  # inside the try: a signal just before this is still caught
    except _End:
        _wind_down(agent, status, 0.0 if ending.now else grace, ending)
    end_tree(agent, status)
    _exit_as(status[0] if status else None)


def _wind_down(agent: int, status: list[int], grace: float, signals: _Signals) -> None:
    """``SIGTERM`` to everything below, and up to ``grace`` seconds for the agent to end
    (``SIGUSR1`` meanwhile cuts it short)."""
    deadline = time.monotonic() + grace
    if grace > 0:
        _signal_all(descendants(os.getpid()), signal.SIGTERM)
    while not status and time.monotonic() < deadline and not signals.now:
        _reap(agent, status)
        time.sleep(POLL_S)


# ----------------------------------------------------------------------------- the relay


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(1 << 16):
            sink.sendall(chunk)
    except OSError:
        pass
    for sock, how in ((sink, 1), (source, 0)):  # SHUT_WR, SHUT_RD
        try:
            sock.shutdown(how)
        except OSError:  # the other end is gone
            continue


def _relay_one(client: socket.socket, path: str) -> None:
    import socket
    import threading

    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _serve(listener: socket.socket, path: str) -> None:
    import threading

    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=_relay_one, args=(client, path), daemon=True).start()


def relay(routes: list[tuple[int, str]], argv: list[str]) -> None:
    """Relay ``127.0.0.1:PORT`` to each route's Unix socket while ``argv`` runs."""
    import socket
    import threading

    listeners = []
    for port, _ in routes:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(128)
        listeners.append(sock)  # not inherited: Python's sockets are close-on-exec
    agent = os.fork()
    if agent == 0:
        _exec(argv)
    for sock, (_, path) in zip(listeners, routes, strict=True):
        threading.Thread(target=_serve, args=(sock, path), daemon=True).start()
    _, status = os.waitpid(agent, 0)
    _exit_as(status)


def main(args: list[str]) -> None:
    """``reap PARENT GRACE -- ARGV`` or ``relay PORT=SOCKET... -- ARGV``."""
    split = args.index("--")
    mode, options, argv = args[0], args[1:split], args[split + 1:]
    if mode == "reap":
        reap(int(options[0]), float(options[1]), argv)
    elif mode == "relay":
        relay([(int(port), path) for port, path in (o.split("=", 1) for o in options)], argv)
    else:
        sys.exit(f"launch.py: unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
