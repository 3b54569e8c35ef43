"""Helpers shared by the test modules (a test module never imports another test module).

* where things are: :data:`REPO`, :data:`SAMPLES`, :data:`SHARED_DATA` and whether CI requires
  the real data (:data:`REQUIRE_SHARED_DATA`);
* :func:`run` (an offline run: no upload, no cache, no progress bar) and :func:`cli` (the
  ``tooleval`` command through Typer's runner);
* secrets: :data:`SECRET` and :func:`assert_no_secret`;
* a controllable clock for asyncio timeouts and sleeps: :class:`ClockLoop` and
  :func:`run_on_clock`; :func:`wait_until` an event (:func:`wait_for_examples`: a run's
  examples), and :data:`HANG_GUARD_S`, the one bound on such waits (a guard against a hung
  suite, never a speed bound);
* :func:`default_sigint`, for a child that a test stops with SIGINT (Ctrl-C);
* :func:`made_once`: a folder made once per test session, shared by the pytest-xdist workers
  (in :func:`session_folder`);
* Chromium for the viewer's and the documentation site's rendering tests (:data:`CHROMIUM`,
  :data:`needs_chromium`, :func:`probe_page`);
* the agent sandbox: :func:`needs_bwrap` (CI requires it: :data:`REQUIRE_BWRAP`), and
  :func:`running`, the processes a command line marks;
* small AppBench records (:func:`weather`, :func:`appbench_file`) and a fake server's answers
  to AppBench prompts (:func:`appbench_responder`).

The fakes live beside it: :mod:`fake_openai` and :mod:`fake_langsmith` (servers),
:mod:`toy_benchmark` (a tiny registered benchmark), :mod:`run_dirs` (finished run directories
made without a run), :mod:`fake_judges` (judge models and verdicts).
"""

from __future__ import annotations

import asyncio
import fcntl
import html
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from typer.testing import CliRunner, Result

from tooleval_agents.appbench.records import AppBenchOutput, AppBenchSample
from tooleval_agents.cli import app
from tooleval_agents.data.langsmith_datasets import to_examples
from tooleval_agents.mcp.sandbox import SandboxUnavailable, check_sandbox
from tooleval_agents.models.reference import AnswerKey
from tooleval_agents.registry import get_benchmark, get_strategy
from tooleval_agents.results.rundir import EXAMPLES
from tooleval_agents.run.runner import run_experiment

T = TypeVar("T")

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
SAMPLES = REPO / "datasets"
"""The hand-written samples."""
SHARED_DATA = Path(os.environ.get("TOOLEVAL_SHARED_DATA", REPO.parent / "shared" / "data"))
"""The real UltraTool / AppBench / SGD data beside the checkout (never copied here)."""
REQUIRE_SHARED_DATA = os.environ.get("TOOLEVAL_REQUIRE_SHARED_DATA", "") not in ("", "0")
"""CI has the data and sets this, so a missing copy (or official scorer) fails there instead
of skipping."""
REQUIRE_INSPECT = os.environ.get("TOOLEVAL_REQUIRE_INSPECT", "") not in ("", "0")
"""CI installs the inspect extra and sets this: a missing inspect_ai fails there, not skips."""


def needs_inspect() -> None:
    """Skip the test where inspect_ai (the ``inspect`` extra) is not installed, with the reason;
    fail instead under ``TOOLEVAL_REQUIRE_INSPECT``."""
    if importlib.util.find_spec("inspect_ai") is None:
        message = 'inspect_ai is not installed (pip install -e ".[inspect]")'
        if REQUIRE_INSPECT:
            pytest.fail(message + "; TOOLEVAL_REQUIRE_INSPECT is set, so this is an error")
        pytest.skip(message)
HANG_GUARD_S = 600.0
"""How long a test waits for an event that comes at once unless the code under test is
broken: a guard against hanging the suite, never a speed bound."""
LISTING = Path(__file__).resolve().parent / "listing_agent.py"
LISTS_TOOLS = f"{sys.executable} {LISTING}"
"""An agent command that lists its session's tools and answers ``done``
(``listing_agent.py``): the start of a test agent whose point is elsewhere (one that never
reached its tools is ``agent_no_tools``). Sealed, give it ``--agent-read`` :data:`LISTING`."""


def wait_until(ready: Callable[[], bool], what: str,
               proc: subprocess.Popen[Any] | None = None) -> None:
    """Poll ``ready`` until it holds; fails after :data:`HANG_GUARD_S` (a hang guard), or at
    once, with its stderr, if ``proc`` (the process that should bring it about) has ended."""
    deadline = time.monotonic() + HANG_GUARD_S
    while not ready():
        if proc is not None and proc.poll() is not None:
            err = proc.stderr.read() if proc.stderr else ""
            raise AssertionError(f"the process ended (exit {proc.returncode}) before {what}: "
                                 f"{err!s:.3000}")
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {HANG_GUARD_S:g} s for {what}")
        time.sleep(0.02)


def wait_for_examples(root: Path, n: int, proc: subprocess.Popen[Any],
                      pattern: str = "*") -> Path:
    """The run directory under ``root`` (the first matching ``pattern``), once its examples
    file has ``n`` lines, written by ``proc`` (see :func:`wait_until`)."""
    def written() -> Path | None:
        file = next(root.glob(f"{pattern}/{EXAMPLES}"), None)
        return file.parent if file and len(file.read_bytes().splitlines()) >= n else None

    wait_until(lambda: written() is not None, f"{n} examples written under {root}", proc)
    found = written()
    assert found is not None
    return found


def default_sigint() -> None:
    """``preexec_fn`` for a child a test stops with SIGINT: a shell's background job (CI, a
    ``nohup``) starts with SIGINT ignored and its children inherit that, so give the child the
    default handling a terminal's Ctrl-C meets."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def session_folder(factory: pytest.TempPathFactory) -> Path:
    """The test session's temporary folder, the same for every pytest-xdist worker (each
    worker's own is inside it)."""
    root = factory.getbasetemp()
    return root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root


def made_once(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """A folder ``make`` fills once per test session, shared by every pytest-xdist worker (the
    first to ask makes it under a file lock, the others wait and reuse it): for what costs
    seconds to make and is only read afterwards (copy it to change it). A ``make`` that fails
    leaves nothing behind, so the next asker tries again and fails with its own error."""
    root = session_folder(factory)
    target, done = root / f"once-{name}", root / f"once-{name}.done"
    with open(root / f"once-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir()
            try:
                make(target)
            except BaseException:
                shutil.rmtree(target, ignore_errors=True)
                raise
            done.touch()
    return target


# ----------------------------------------------------------------------------- runs and the CLI

def run(benchmark: str, data_dir: Path, out: Path, **kwargs: Any) -> Any:
    """``run_experiment`` offline: no upload, no response cache, no progress bar (``kwargs``
    may set any of them)."""
    options: dict[str, Any] = {"upload": False, "cache": False, "progress": False, **kwargs}
    return run_experiment(benchmark, data_dir=data_dir, out=out, **options)


def cli(*args: Any) -> Result:
    """``tooleval ARGS`` in this process (arguments turned into strings)."""
    return CliRunner().invoke(app, [str(a) for a in args])


# ----------------------------------------------------------------------------- secrets

SECRET = "sk-test-SECRET123"
"""A fake API key: if it shows up in any file a run writes, it leaked."""


def files_under(*roots: Path) -> Iterator[Path]:
    """Every file under ``roots`` (a root may be a file)."""
    for root in roots:
        if root.is_file():
            yield root
        elif root.is_dir():
            yield from (p for p in root.rglob("*") if p.is_file())


def assert_no_secret(*roots: Path, secret: str = SECRET) -> None:
    """No file under ``roots`` contains ``secret`` (as bytes, whatever the encoding)."""
    leaked = [p for p in files_under(*roots) if secret.encode() in p.read_bytes()]
    assert leaked == []


# ----------------------------------------------------------------------------- a controllable clock

class ClockLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock the test moves: real time plus what :meth:`advance` added.

    Everything timed by the loop -- ``asyncio.timeout``, ``asyncio.sleep``, httpx's (anyio's)
    timeouts -- fires when the clock passes it. A test sets such timeouts far beyond any real
    delay (a loaded machine cannot reach them) and moves the clock past them once the event it
    waits for has happened (a request stalled, a task started).
    """

    def __init__(self) -> None:
        super().__init__()
        self._offset = 0.0

    def time(self) -> float:
        return super().time() + self._offset

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward (the timers now due fire on the next turn)."""
        self._offset += seconds


def run_on_clock(main: Callable[[ClockLoop], Coroutine[Any, Any, T]]) -> T:
    """``main(loop)`` run to completion on a fresh :class:`ClockLoop`."""
    with asyncio.Runner(loop_factory=ClockLoop) as runner:
        loop = runner.get_loop()
        assert isinstance(loop, ClockLoop)
        return runner.run(main(loop))


# ----------------------------------------------------------------------------- Chromium

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("TOOLEVAL_REQUIRE_CHROMIUM"),
    reason="no Chromium here (apt-get install chromium); the viewer's rendering is not tested")
"""The viewer's rendering tests: skipped without Chromium, unless CI requires it."""


def probe_page(page: Path, route: str, script: str, *, wait_ms: int = 3000,
               window: str = "1280,900") -> Any:
    """Run ``script`` (which calls ``done(value)``) in ``page`` (an HTML file) at ``route`` in
    headless Chromium, ``wait_ms`` of virtual time after the page loaded, in a window of
    ``window`` pixels; ``value`` as JSON. The page is copied beside itself with the script
    added (so its relative links still lead to its files); the page itself is left alone."""
    if CHROMIUM is None:
        raise AssertionError("TOOLEVAL_REQUIRE_CHROMIUM is set but no Chromium is installed")
    wrapped = ("<script>function done(v) { const out = document.createElement('pre'); "
               "out.id = 'probe'; out.textContent = JSON.stringify(v); "
               "document.body.appendChild(out); }\n"
               f"setTimeout(async () => {{ {script} }}, {wait_ms});</script>")
    probe = page.with_name(f"probe-{os.getpid()}-{time.monotonic_ns()}.html")
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", wrapped + "</body>"),
                     encoding="utf-8")
    try:
        done = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update",
             f"--user-data-dir={probe.parent / f'.chromium-{os.getpid()}'}",
             f"--virtual-time-budget={wait_ms + 20000}", f"--window-size={window}",
             "--dump-dom", probe.as_uri() + route],
            capture_output=True, text=True, timeout=HANG_GUARD_S, check=False)
    finally:
        probe.unlink()
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.S)
    assert found, done.stdout[-2000:]
    return json.loads(html.unescape(found.group(1)))


# ----------------------------------------------------------------------------- the agent sandbox

REQUIRE_BWRAP = os.environ.get("TOOLEVAL_REQUIRE_BWRAP", "") not in ("", "0")
"""CI installs bubblewrap and sets this: a machine where no agent sandbox can be made fails
the sandbox's tests there, not skips them."""


def needs_bwrap() -> None:
    """Skip the test where ``--agent-sandbox`` cannot seal an agent (no ``bwrap``, user
    namespaces disabled, not Linux), with the reason; fail instead under
    ``TOOLEVAL_REQUIRE_BWRAP``."""
    try:
        check_sandbox()
    except SandboxUnavailable as exc:
        if REQUIRE_BWRAP:
            pytest.fail(f"{exc}; TOOLEVAL_REQUIRE_BWRAP is set, so this is an error")
        pytest.skip(str(exc))


def running(marker: str) -> list[int]:
    """The live processes whose command line holds ``marker`` (what ``ps -ef | grep`` shows,
    zombies left out)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8",
                                                                                 "replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):  # it ended while read
            continue
        if marker in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


# ----------------------------------------------------------------------------- AppBench records

WEATHER_LINE = "temperature = getweather(#city='Paris')"
WEATHER = {"used_app": ["Weather"], "used_api": [{"getweather": {"city": "Paris"}}],
           "result_arguments": [["temperature"]], "api_results": [WEATHER_LINE],
           "middle_arguments": ["temperature"], "user_aware_arguments": {"city": "Paris"}}
"""A one-call AppBench gold output."""
WEATHER_GOLD = f"Weather: [{WEATHER_LINE}]"
"""Its gold answer as a model writes it."""


def weather() -> AppBenchSample:
    """A one-call AppBench sample (:data:`WEATHER`)."""
    return AppBenchSample(input="Weather in Paris?", output=AppBenchOutput(**WEATHER))


def appbench_file(tmp_path: Path, shared_data: Path, line: str | None = None) -> Path:
    """The first three SS samples, the second one's first gold line replaced by ``line``."""
    src = shared_data / "appbench" / "data" / "test" / "test_ss.json"
    items = json.loads(src.read_text(encoding="utf-8"))[:3]
    if line is not None:
        items[1]["output"]["api_results"][0] = line
    path = tmp_path / "appbench" / "data" / "test" / "test_ss.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


def appbench_responder(samples: Path) -> Callable[[Any], str]:
    """A fake server's answers to AppBench SS prompts (a :mod:`fake_openai` responder): the
    gold answer, as the reference model gives it."""
    split = get_benchmark("appbench").split("plan", "ss")
    strategy = get_strategy("appbench", "hierarchical")
    examples = to_examples(split, samples)
    key = AnswerKey.build((strategy.input_key(split, e.inputs or {}),
                           strategy.gold_answers(split, e.inputs or {}, e.outputs or {}))
                          for e in examples)
    return lambda request: key.lookup(request.prompt)[1].text
