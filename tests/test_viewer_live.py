"""``tooleval view --serve`` while a run writes: the run's progress on the run list and its page
(examples done of those planned), and pages that reload themselves only when served and only
while a run is going."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import CHROMIUM, HANG_GUARD_S, needs_chromium, run

from tooleval_agents.results.dirlock import LOCK, hold_directory, holder
from tooleval_agents.viewer import build_site
from tooleval_agents.viewer.serve import LiveSite


def _puts(site: Path) -> dict[str, Any]:
    """The values ``data/runs.js`` hands the page (``TOOLEVAL.put(key, value);`` lines)."""
    out = {}
    for line in (site / "data" / "runs.js").read_text(encoding="utf-8").splitlines():
        key, _, value = line.removeprefix("TOOLEVAL.put(").removesuffix(");").partition(",")
        out[json.loads(key)] = json.loads(value)
    return out


@pytest.fixture
def going(samples: Path, tmp_path: Path) -> Iterator[Path]:
    """A run caught in the middle: 2 of its 6 examples written, no summary yet, its lock held
    by a live process (this one). :func:`_finish` ends it."""
    path = Path(run("appbench", samples, tmp_path / "runs", subset="ss",
                    model="reference").run_dir)
    lines = (path / "examples.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(lines) == 6
    (path / "examples.jsonl").rename(path / "examples.jsonl.later")
    (path / "examples.jsonl").write_text("".join(lines[:2]), encoding="utf-8")
    (path / "summary.json").rename(path / "summary.json.later")
    with hold_directory(path):
        yield path


def _finish(going: Path) -> None:
    """The run writes its last examples, then its summary (which describes all of them)."""
    (going / "examples.jsonl.later").replace(going / "examples.jsonl")
    (going / "summary.json.later").rename(going / "summary.json")


def test_a_run_in_progress_is_running_with_its_progress_and_a_stopped_one_says_so(
        going: Path, tmp_path: Path) -> None:
    assert holder(going) == os.getpid()
    (meta,) = _puts(build_site([going], tmp_path / "site").out)["runs"]
    assert (meta["state"], meta["examples"], meta["planned"]) == ("running", 2, 6)
    (going / LOCK).write_text("999999999\n", encoding="ascii")  # its holder was killed
    assert holder(going) is None
    puts = _puts(build_site([going], tmp_path / "site").out)
    assert puts["runs"][0]["state"] == "stopped"
    assert "live" not in puts  # a site written once never reloads itself


def test_a_stale_lock_whose_pid_was_reused_is_not_a_running_run(
        samples: Path, tmp_path: Path) -> None:
    # Issue 33: a .lock left by kill -9 whose PID is alive again (PID 1 in a container is
    # always alive) showed the run as running forever, and the served page reloaded endlessly.
    path = Path(run("appbench", samples, tmp_path / "runs", subset="ss",
                    model="reference").run_dir)
    (path / "summary.json").unlink()  # killed before its summary
    (path / LOCK).write_text("1\n", encoding="ascii")  # an alive PID that holds no lock
    assert holder(path) is None
    live = LiveSite([path], tmp_path / "site", port=0, every=60)
    try:
        assert _puts(live.out)["runs"][0]["state"] == "stopped"
        if CHROMIUM is not None:  # the page schedules no reload
            assert "data-reload-s" not in _dom(live.url, tmp_path / "chromium")
    finally:
        live.close()
    # `run` takes such a lock over, and resumes
    done = run("appbench", samples, tmp_path / "runs", subset="ss", model="reference")
    assert done.metrics["success"] == 100.0 and not (path / LOCK).exists()


def test_the_served_site_is_rewritten_as_the_run_writes_and_ends(going: Path,
                                                                 tmp_path: Path) -> None:
    live = LiveSite([going.parent], tmp_path / "site", port=0, every=2.5)
    try:
        with urllib.request.urlopen(live.url.replace("index.html", "data/runs.js")) as answer:
            served = answer.read().decode("utf-8")
        assert 'TOOLEVAL.put("live",{"every":2.5});' in served
        assert not live.poll()  # nothing changed
        lines = (going / "examples.jsonl").read_text(encoding="utf-8")
        (going / "examples.jsonl").write_text(lines + lines.splitlines(keepends=True)[0],
                                              encoding="utf-8")  # a retried attempt
        os.utime(going / "examples.jsonl", ns=(1, 1))
        assert live.poll()
        (going / LOCK).unlink()  # the run ended (a killed one's lock would be stale: the same)
        assert live.poll() and _puts(live.out)["runs"][0]["state"] == "stopped"
        _finish(going)
        assert live.poll() and _puts(live.out)["runs"][0]["state"] == "finished"
    finally:
        live.close()


def _dom(url: str, profile: Path) -> str:
    assert CHROMIUM is not None
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-extensions",
         "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
         "--virtual-time-budget=5000", "--dump-dom", url],
        capture_output=True, text=True, timeout=HANG_GUARD_S, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@needs_chromium
def test_served_pages_show_progress_and_reload_only_while_a_run_goes(going: Path,
                                                                      tmp_path: Path) -> None:
    # reloads every 60 s: longer than the 5 s of page time Chromium lets pass, so the DOM
    # dumped is the first render's
    live = LiveSite([going], tmp_path / "site", port=0, every=60)
    try:
        home = _dom(live.url, tmp_path / "chromium")
        assert 'data-reload-s="60"' in home
        assert '<td class="num nowrap progress running">running: 2 of 6</td>' in home
        assert "1 run(s) in progress (this page reloads every 60 s)" in home
        rid = _puts(live.out)["runs"][0]["id"]
        page = _dom(f"{live.url}#/run/{rid}", tmp_path / "chromium")
        assert '<p class="progress running" id="progress">running: 2 of 6</p>' in page
        assert 'data-reload-s="60"' in page
        example = _dom(f"{live.url}#/run/{rid}/ex/0", tmp_path / "chromium")
        assert "data-reload-s" not in example  # an example page is not pulled from under you
        static = _dom(build_site([going], tmp_path / "static").index.as_uri(),
                      tmp_path / "chromium")
        assert "running: 2 of 6" in static and "data-reload-s" not in static  # not served
        _finish(going)
        (going / LOCK).unlink()
        assert live.poll()
        done = _dom(live.url, tmp_path / "chromium")
        assert "data-reload-s" not in done and "progress" not in done
    finally:
        live.close()
