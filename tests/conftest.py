"""Shared fixtures, and the summary of the tests behind the headline claims.

The real benchmark data is read from ../shared/data (never copied here). The tests marked
``parity`` (the official scorer's numbers) and ``real_model`` (a real model's answers) are
summed up at the end of the run -- how many ran, and their figures: answers compared, ``ok``
examples per case -- and, where CI requires them (``TOOLEVAL_REQUIRE_SHARED_DATA``,
``TOOLEVAL_REQUIRE_REAL_MODEL``), a skipped one fails the run.
"""

from __future__ import annotations

import compileall
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

# pytest-xdist's workers start with COLUMNS=80 and LINES=24 in their environment, where a plain
# run has neither: the CLI's consoles, made at import, would keep 80 columns whatever width a
# test then sets. Dropped before anything imports them.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _name in ("COLUMNS", "LINES"):
        os.environ.pop(_name, None)

import pytest
from helpers import REPO, REQUIRE_SHARED_DATA, SAMPLES, SHARED_DATA, session_folder
from local_model import REQUIRE as REQUIRE_REAL_MODEL
from local_model import TOOL_FORMAT
from local_model import missing as missing_model
from local_model import serve as serve_model

REQUIRED = {"parity": ("TOOLEVAL_REQUIRE_SHARED_DATA", REQUIRE_SHARED_DATA,
                       "parity with the official AppBench scorer"),
            "real_model": ("TOOLEVAL_REQUIRE_REAL_MODEL", REQUIRE_REAL_MODEL,
                           "a real model (SmolLM2-135M on 127.0.0.1)")}
"""Marker -> (the variable that requires its tests, whether it is set, what they show)."""
_MARKED: dict[str, str] = {}
"""Node id -> its marker among :data:`REQUIRED`."""
_OUTCOMES: dict[str, tuple[str, list[tuple[str, object]]]] = {}
"""Node id -> (outcome, recorded properties) of each marked test that ran."""


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real UltraTool / AppBench / SGD data beside the checkout (``../shared/data``).

    A user's clone has no ``../shared``: the tests that need it skip there, with the reason.
    """
    if not all((SHARED_DATA / source).is_dir() for source in ("ultratool", "appbench", "sgd")):
        message = (f"real benchmark data not found at {SHARED_DATA} (set TOOLEVAL_SHARED_DATA "
                   "to a copy laid out like `tooleval data fetch` leaves it)")
        if REQUIRE_SHARED_DATA:
            pytest.fail(message + "; TOOLEVAL_REQUIRE_SHARED_DATA is set, so this is an error")
        pytest.skip(message)
    return SHARED_DATA


@pytest.fixture(scope="session")
def samples() -> Path:
    """The hand-written samples in ``datasets/``."""
    return SAMPLES


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory,
                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep per-user cache writes (rebuilt sets, downloads) out of the real home directory."""
    cache = tmp_path_factory.getbasetemp() / "user-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.delenv("TOOLEVAL_DATA_DIR", raising=False)
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    monkeypatch.delenv("LANGCHAIN_API_KEY", raising=False)


# ----------------------------------------------------------------------------- the headline tests

@pytest.fixture(scope="module")
def tool_server() -> Iterator[str]:
    """SmolLM2 served with its tool-calling chat format, once per module of real-model tests
    that ask for it (its URL)."""
    if missing_model() is not None:
        raise AssertionError(f"TOOLEVAL_REQUIRE_REAL_MODEL is set but {missing_model()}")
    with serve_model(chat_format=TOOL_FORMAT) as url:
        yield url


@pytest.fixture(autouse=True)
def _one_real_model_at_a_time(request: pytest.FixtureRequest,
                              tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The real-model tests take turns across the pytest-xdist workers: each asks a
    llama.cpp server whose threads spin on both cores, and two at once slow each other several
    times over. (A pytest-xdist group would keep them on one worker, but ``--dist loadgroup``
    groups nothing on pytest 9.2: it renames the node ids through an attribute pytest no
    longer reads.)"""
    if request.node.get_closest_marker("real_model") is None or \
            not os.environ.get("PYTEST_XDIST_WORKER"):
        yield
        return
    with open(session_folder(tmp_path_factory) / "real-model.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        yield


def pytest_configure(config: pytest.Config) -> None:
    # Where PYTHONDONTWRITEBYTECODE is set (CI's machines set it), Python writes no bytecode,
    # and each of the suite's hundreds of processes that import the package (the CLI, agents,
    # servers) compiled its modules from source again: 0.3 s of a 2.3 s `tooleval run`.
    # Written once here, by the controller, they are read as a user's checkout reads them.
    if os.environ.get("PYTHONDONTWRITEBYTECODE") and not hasattr(config, "workerinput"):
        compileall.compile_dir(str(REPO / "tooleval_agents"), quiet=1)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # Read off the report, not the collected items: under pytest-xdist the controller, which
    # prints the summary, collects none (the workers do and send their reports).
    marker = next((m for m in REQUIRED if m in report.keywords), None)
    if marker is None:
        return
    _MARKED[report.nodeid] = marker
    outcome = "failed" if report.failed else "skipped" if report.skipped else "passed"
    if report.when == "call" or outcome != "passed":
        previous = _OUTCOMES.get(report.nodeid, ("passed", []))[0]
        if previous == "passed" or outcome == "failed":  # a teardown error fails it too
            _OUTCOMES[report.nodeid] = (outcome, list(report.user_properties))


def _counts(marker: str) -> dict[str, int]:
    counts = {"passed": 0, "skipped": 0, "failed": 0}
    for nodeid, (outcome, _) in _OUTCOMES.items():
        if _MARKED[nodeid] == marker:
            counts[outcome] += 1
    return counts


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    for marker, (_, required, _) in REQUIRED.items():
        if required and _counts(marker)["skipped"] and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for marker, (variable, required, what) in REQUIRED.items():
        if not any(m == marker for m in _MARKED.values()):
            continue  # none selected
        counts = _counts(marker)
        figures = [(nodeid, dict(props)) for nodeid, (outcome, props) in _OUTCOMES.items()
                   if _MARKED[nodeid] == marker]
        line = (f"{what}: {counts['passed']} passed, {counts['skipped']} skipped, "
                f"{counts['failed']} failed ({marker} tests)")
        compared = sum(int(str(p.get("answers_compared", 0))) for _, p in figures)
        if compared:
            line += f"; {compared} answers compared with the official scorer, answer by answer"
        terminalreporter.write_sep("-", f"{marker} summary")
        terminalreporter.write_line(line)
        for nodeid, props in figures:
            if "ok" in props:
                terminalreporter.write_line(
                    f"  {props.get('case', nodeid)}: ok {props['ok']}/{props.get('n')}, "
                    f"{props.get('model_calls')} model calls, {props.get('input_tokens')} "
                    f"input tokens" + (f", judge verdicts {props['verdicts']}"
                                       if "verdicts" in props else ""))
        if required and counts["skipped"]:
            terminalreporter.write_line(
                f"{counts['skipped']} {marker} test(s) skipped though {variable} is set: the "
                "run fails", red=True)
