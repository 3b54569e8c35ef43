"""The example page leads with why: a verdict line and the predicted calls set against the
gold, argument by argument (``tooleval_agents.verdict``, AppBench's ``explain`` hook), checked
on real runs of the offline noisy models in headless Chromium: for an unparsed answer, a wrong
value, a missing call and an agent's failed tool call, the verdict and the first marked
difference sit in the first screen (900 px)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import urllib.request
import webbrowser
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from helpers import CHROMIUM, HANG_GUARD_S, needs_chromium, probe_page, run
from typer.testing import CliRunner

from tooleval_agents.appbench.explain import explain as appbench
from tooleval_agents.cli import app
from tooleval_agents.ultratool.explain import explain as ultratool
from tooleval_agents.verdict import align_calls, first_difference, generic_verdict
from tooleval_agents.viewer import build_site
from tooleval_agents.viewer.serve import LiveSite

# Probe: once the page has rendered, the positions of the verdict and of the first marked
# difference are written into the DOM, where --dump-dom shows them.
VERDICT_PROBE = """
const top = (q) => { const e = document.querySelector(q);
                     return e ? Math.round(e.getBoundingClientRect().top) : -1; };
done({verdict: top(".verdict"), mark: top("td.mark.wrong, td.mark.missing, td.mark.extra"),
      text: (document.querySelector(".verdict") || {}).textContent || "",
      code: [...document.querySelectorAll(".verdict code")].map((e) => e.textContent),
      marks: [...document.querySelectorAll("td.mark")].map((e) => e.textContent)});
"""


def probe(site: Path, route: str, script: str, *, wait_ms: int = 3000) -> Any:
    """Run ``script`` (which calls ``done(value)``) in the site's page at ``route`` once it
    has rendered (after ``wait_ms`` of virtual time); ``value`` as JSON."""
    return probe_page(site / "index.html", route, script, wait_ms=wait_ms)


def test_calls_are_aligned_by_name_and_each_argument_is_marked() -> None:
    rows = align_calls([("findevents", {"city": "LA", "extra_arg": "1"}), ("tip", {})],
                       [("findevents", {"city": "Los Angeles", "date": "2019-03-01"}),
                        ("getweather", {"city": "Los Angeles"})])
    assert [r["mark"] for r in rows] == ["wrong", "missing", "extra"]
    assert [(a["name"], a["mark"]) for a in rows[0]["args"]] == [
        ("city", "wrong"), ("date", "missing"), ("extra_arg", "extra")]
    assert first_difference(rows) == "wrong value city='LA' vs 'Los Angeles' in `findevents`"
    assert first_difference(rows[1:]) == "missing call `getweather`"
    assert first_difference(rows[2:]) == "extra call `tip`"
    assert first_difference([]) is None


def _result(**kw: Any) -> SimpleNamespace:
    base: dict[str, Any] = {"status": "ok", "error_kind": None, "error": None,
                            "outputs": {}, "score": {"scores": {"a": 1.0, "b": 0.5}}}
    return SimpleNamespace(**{**base, **kw})


def test_the_generic_verdict_reads_status_format_tool_errors_then_scores() -> None:
    v = generic_verdict(_result(status="infra_error", error_kind="timeout", error="slow"))
    assert not v.passed and v.reason == "infra error (timeout): slow"
    v = generic_verdict(_result(outputs={"parse_error": "no call line in the answer"}))
    assert v.reason == "format error: no call line in the answer"
    assert generic_verdict(_result()).reason == "b = 0.5 (of 1)"
    trace = [{"kind": "tool_call", "name": "f", "error": True, "output": "Error: bad"}]
    assert generic_verdict(_result(outputs={"trace": trace})).reason == \
        "tool error in `f`: Error: bad"
    assert generic_verdict(_result(score={"scores": {"a": 100.0}})).passed


@pytest.fixture(scope="module")
def site(samples: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    run("appbench", samples, runs, subset="ss", model="noisy-reference:1.0")
    run("appbench", samples, runs, subset="mm", strategy="tools", model="noisy-reference:0.6")
    out = tmp_path_factory.mktemp("site")
    build_site([runs], out)
    return out


def _first(site: Path, rid: str, reason: str) -> tuple[str, str]:
    text = (site / "data" / rid / "index.js").read_text(encoding="utf-8")
    rows = json.loads(text[text.index(",") + 1:text.rindex(")")])
    return rid, next(r["key"] for r in rows if r["reason"] == reason)


@needs_chromium
@pytest.mark.parametrize(("rid", "reason", "says"), [
    ("appbench-plan-ss-hierarchical-noisy-reference_1.0", "format error",
     "format error: no call line in the answer"),
    ("appbench-plan-ss-hierarchical-noisy-reference_1.0", "wrong value", "wrong value "),
    ("appbench-plan-ss-hierarchical-noisy-reference_1.0", "missing call", "missing call "),
    ("appbench-plan-mm-tools-noisy-reference_0.6", "tool error", "tool error in "),
])
def test_the_verdict_and_the_first_difference_are_in_the_first_screen(
        site: Path, rid: str, reason: str, says: str) -> None:
    rid, key = _first(site, rid, reason)
    route = f"#/run/{rid}/ex/{key}"
    got = probe(site, route, VERDICT_PROBE)
    assert got["text"].startswith("FAILED — ") and says in got["text"]
    if reason in ("missing call", "tool error"):  # the name in code, its backticks gone
        assert got["code"] and got["code"][0] and f"{says}{got['code'][0]}" in got["text"]
        assert "`" not in got["text"].split(":")[0], got["text"]
    assert 0 <= got["verdict"] < 900 and 0 <= got["mark"] < 900, got
    # readable without colour: each marked difference says what it is in text
    assert any(m.startswith(("✗", "−", "+")) for m in got["marks"])
    shots = os.environ.get("TOOLEVAL_VIEWER_SHOTS")
    if shots:  # screenshots for a person to look at (not part of the check)
        Path(shots).mkdir(parents=True, exist_ok=True)
        png = Path(shots) / f"{reason.replace(' ', '-')}.png"
        subprocess.run([CHROMIUM or "chromium", "--headless", "--no-sandbox", "--disable-gpu",
                        f"--user-data-dir={site / '.chromium'}", "--virtual-time-budget=5000",
                        "--window-size=1280,900", f"--screenshot={png}",
                        (site / "index.html").as_uri() + route],
                       capture_output=True, timeout=HANG_GUARD_S, check=False)
        assert png.is_file()


FACET_PROBE = """
const reasons = [...document.querySelectorAll("#reasons a.reason")].map((a) => a.textContent);
document.querySelector('#reasons a[data-reason="wrong value"]').click();
await new Promise((r) => setTimeout(r, 1000));
const filtered = [...document.querySelectorAll("#examples tbody tr")].map((t) => t.dataset.index);
window.dispatchEvent(new KeyboardEvent("keydown", {key: "j"}));
await new Promise((r) => setTimeout(r, 1000));
const opened = location.hash;
window.dispatchEvent(new KeyboardEvent("keydown", {key: "j"}));
await new Promise((r) => setTimeout(r, 1000));
done({reasons, filtered, opened, after: location.hash,
      verdict: (document.querySelector(".verdict") || {}).textContent || ""});
"""


@needs_chromium
def test_the_run_page_counts_reasons_filters_by_one_and_j_walks_the_filtered_rows(
        site: Path) -> None:
    rid = "appbench-plan-ss-hierarchical-noisy-reference_1.0"
    got = probe(site, f"#/run/{rid}", FACET_PROBE)
    counts = dict(re.fullmatch(r"(.+) \((\d+)\)", r).groups() for r in got["reasons"])  # type: ignore[union-attr]
    assert counts["wrong value"] == "1" and counts["format error"] == "1"
    assert sum(int(n) for n in counts.values()) == 6
    assert len(got["filtered"]) == 1
    assert got["opened"].startswith(f"#/run/{rid}/ex/{got['filtered'][0]}?reason=wrong")
    assert got["after"] == got["opened"]  # the only wrong-value example: no next one
    assert "wrong value" in got["verdict"]


@needs_chromium
def test_search_finds_an_example_by_its_reason_text(site: Path) -> None:
    rid = "appbench-plan-ss-hierarchical-noisy-reference_1.0"
    got = probe(site, f"#/run/{rid}?q=no%20call%20line", """
        done([...document.querySelectorAll("#examples tbody tr")].map((t) => t.dataset.index));
    """)
    assert len(got) == 1


INLINE_PROBE = """
const out = document.createElement("div");
out.append(...inline(
  "missing call `<img src=x onerror=\\"document.title='hit'\\">` and `a` or `b"));
done({html: out.innerHTML, images: out.querySelectorAll("img").length,
      code: [...out.querySelectorAll("code")].map((e) => e.textContent), title: document.title});
"""


@needs_chromium
def test_names_in_a_verdict_are_code_made_as_text_never_as_html(site: Path) -> None:
    got = probe(site, "", INLINE_PROBE, wait_ms=500)
    assert got["images"] == 0 and got["title"] == "tooleval view"
    assert got["code"] == ["<img src=x onerror=\"document.title='hit'\">", "a"]
    assert got["html"].endswith("</code> or `b")  # a backtick without its pair stays as it is
    assert got["html"].startswith("missing call <code>&lt;img")


GOLD = {"used_app": ["Events", "Events"],
        "used_api": [{"findevents": {"city": "Los Angeles"}},
                     {"buyeventtickets": {"event_name": "Jazz", "city": "Los Angeles"}}],
        "api_results": ["event_name, city = findevents(#city='Los Angeles')",
                        "buyeventtickets(#city=city, #event_name='Jazz')"],
        "result_arguments": [["event_name", "city"], []], "middle_arguments": ["event_name"],
        "user_aware_arguments": {"city": "Los Angeles", "event_name": "Jazz"}}


def test_appbench_explains_call_lines_against_the_gold_as_the_scorer_pairs_them() -> None:
    answer = ("Events: [event_name, city = findevents(#city='LA')]\n"
              "Events: [buyeventtickets(#event_name='Jazz', #city=city)]")
    v = appbench(_result(outputs={"prediction": answer}, reference_outputs=GOLD,
                         score={"scores": {"success": 0.0}}))
    assert not v.passed and v.reason == "wrong value city='LA' vs 'Los Angeles' in `findevents`"
    # a dependency is judged by the returned argument it names (and the call returning it)
    assert [(a["name"], a["pred"], a["mark"]) for a in v.rows[1]["args"]] == [
        ("event_name", "'Jazz'", "ok"), ("city", "← city", "ok")]
    v = appbench(_result(outputs={"prediction": "Music: [findevents(#city='Los Angeles')]"},
                         reference_outputs=GOLD, score={"scores": {"success": 0.0}}))
    assert v.reason == "wrong app `Music` for `Events` in `findevents`"


def test_appbench_reads_the_gold_lines_the_scorer_scores_not_the_resolved_values() -> None:
    # The gold's resolved values (used_api) may disagree with its call lines (api_results),
    # which the scorer reads: AppBench MM example 4 holds 17:00 in one and 17:30 in the other.
    gold = {**GOLD, "used_api": [{"findevents": {"city": "Los Angeles (resolved)"}},
                                 {"buyeventtickets": {"event_name": "Jazz", "city": "x"}}]}
    answer = ("Events: [event_name, city = findevents(#city='Los Angeles')]\n"
              "Events: [buyeventtickets(#event_name='Jazz', #city=city)]")
    v = appbench(_result(outputs={"prediction": answer}, reference_outputs=gold,
                         score={"scores": {"success": 100.0}}))
    assert v.passed and v.reason == "passed: every call and value as in the gold"
    assert {r["mark"] for r in v.rows} == {"ok"}


def test_a_passing_appbench_answer_that_still_differs_says_both() -> None:
    answer = ("Events: [event_name, city = findevents(#city='Los Angeles', #date='x')]\n"
              "Events: [buyeventtickets(#event_name='Jazz', #city=city)]")
    v = appbench(_result(outputs={"prediction": answer}, reference_outputs=GOLD,
                         score={"scores": {"success": 100.0}}))
    assert v.passed and v.reason == \
        "passes success; differs: extra argument `date` in `findevents`"


USAGE_GOLD = [{"step": "1.2 log in", "tool": "account_login",
               "param": {"account_id": "123456", "password": "pwd123"}},
              {"step": "2.2 log in", "tool": "account_login",
               "param": {"account_id": "654321", "password": "pwd321"}},
              {"step": "3.1 track", "tool": "vehicle_tracker", "param": {"n": "5"}}]


def test_ultratool_aligns_steps_as_the_scorer_does_and_never_contradicts_it() -> None:
    # Issue 33, examples 114 and 259 of UltraTool tool_usage en: a repeated step 1.3 and another
    # tool's name at step 3.1 cost no point of tool_usage; aligned by name they read FAILED.
    pred = [USAGE_GOLD[0], {**USAGE_GOLD[0], "step": "1.3 again"}, USAGE_GOLD[1],
            {**USAGE_GOLD[2], "tool": "tracker"}]
    v = ultratool(_result(outputs={"prediction": pred}, reference_outputs={"reference": USAGE_GOLD},
                          score={"scores": {"tool_usage": 100.0}}))
    assert v.passed
    assert v.reason == ("passes tool_usage (arguments per gold step); differs: tool `tracker` "
                        "for `vehicle_tracker` at step 3.1; extra call at step 1.3")
    assert [(r["step"], r["mark"]) for r in v.rows] == [
        ("1.2", "ok"), ("2.2", "ok"), ("3.1", "ok"), ("1.3", "extra")]
    # the first gold step that lost points, by step: not the 1.3 duplicate's arguments
    pred = [USAGE_GOLD[0], {**USAGE_GOLD[1], "step": "1.3 x"},
            {**USAGE_GOLD[1], "param": {"account_id": "654320"}}]
    v = ultratool(_result(outputs={"prediction": pred}, reference_outputs={"reference": USAGE_GOLD},
                          score={"scores": {"tool_usage": 40.0}}))
    assert not v.passed
    assert v.reason == ("wrong value account_id='654320' vs '654321' in `account_login` "
                        "at step 2.2")
    assert [(r["step"], r["mark"]) for r in v.rows] == [
        ("1.2", "ok"), ("2.2", "wrong"), ("3.1", "missing"), ("1.3", "extra")]


def test_ultratool_explains_tool_usage_steps_and_leaves_other_tasks_generic() -> None:
    gold = {"reference": [{"step": "1", "tool": "flight_search", "param": {"city": "Oslo"}},
                          {"step": "2", "tool": "flight_reserve", "param": {"n": "1"}}]}
    pred = [{"step": "1", "tool": "flight_search", "param": {"city": "Oslo"}}]
    v = ultratool(_result(outputs={"prediction": pred}, reference_outputs=gold,
                          score={"scores": {"tool_usage": 50.0}}))
    assert not v.passed and v.reason == "missing call `flight_reserve` at step 2"
    assert [r["mark"] for r in v.rows] == ["ok", "missing"]
    v = ultratool(_result(outputs={"prediction": gold["reference"]}, reference_outputs=gold,
                          score={"scores": {"tool_usage": 100.0}}))
    assert v.passed
    assert ultratool(_result(reference_outputs={"reference": "1. plan"},
                             score={"scores": {"a": 0.0}})) is None


def test_the_generic_verdict_is_judged_on_the_headline_metric() -> None:
    # UltraTool planning at ROUGE-L 100 read FAILED for "plan_step_count_diff = 0 (of 100)"
    scores = {"plan_rouge_l": 100.0, "plan_step_count_diff": 0.0, "plan_numbering_valid": 0.0}
    v = generic_verdict(_result(score={"scores": scores}), ("plan_rouge_l",))
    assert v.passed and v.reason == "passes plan_rouge_l"
    scores = {"executable": 100.0, "valid_calls": 100.0, "tool_set_f1": 50.0}
    v = generic_verdict(_result(score={"scores": scores}),
                        ("executable", "valid_calls", "tool_set_f1"))
    assert v.passed and v.reason == "passes executable; differs: tool_set_f1 = 50 (of 100)"
    v = generic_verdict(_result(score={"scores": {**scores, "executable": 0.0}}),
                        ("executable",))
    assert not v.passed and v.reason == "executable = 0 (of 100)"


def _faulted(kind: str, *, transient: bool, attempts: int, answered: bool,
             success: float = 0.0) -> Any:
    trace = [{"kind": "tool_call", "name": "Weather__getweather", "error": kind in (
                 "error", "timeout", "rate_limit"), "output": "Error: x"},
             *({"kind": "tool_fault", "fault": kind, "tool": "Weather__getweather",
                "position": 0, "attempt": a, "transient": transient}
               for a in range(attempts if not answered else attempts - 1)),
             {"kind": "tool_faults", "calls": attempts, "faults": attempts - answered,
              "retries": attempts - 1, "positions": {"0": {"attempts": attempts,
                                                           "answered": answered}}}]
    return _result(outputs={"prediction": "", "trace": trace}, reference_outputs=GOLD,
                   score={"scores": {"success": success}})


@pytest.mark.parametrize("kind", ["error", "timeout", "rate_limit", "malformed", "empty"])
def test_a_call_that_met_an_injected_fault_says_so_for_every_kind(kind: str) -> None:
    transient = kind in ("timeout", "rate_limit")
    v = appbench(_faulted(kind, transient=transient, attempts=1, answered=False))
    assert not v.passed
    assert v.reason == (f"injected `{kind}` fault in `getweather`; the agent did not retry "
                        "(missing call `findevents`)")
    v = appbench(_faulted(kind, transient=transient, attempts=3, answered=False))
    assert v.reason.startswith(f"injected `{kind}` fault in `getweather`; the agent retried "
                               "it 2 time(s), and every attempt failed")
    v = generic_verdict(_faulted(kind, transient=transient, attempts=1, answered=False),
                        ("success",))
    assert v.reason == f"injected `{kind}` fault in `getweather`; the agent did not retry" \
        .replace("`getweather`", "`Weather__getweather`")


def test_a_fault_the_agent_got_past_is_said_beside_the_verdict() -> None:
    answer = "\n".join(f"Events: [{line}]" for line in GOLD["api_results"])  # type: ignore[union-attr]
    result = _faulted("timeout", transient=True, attempts=2, answered=True, success=100.0)
    result.outputs["prediction"] = answer
    v = appbench(result)
    assert v.passed and v.reason == ("passed: every call and value as in the gold; injected "
                                     "`timeout` fault in `getweather`; a later attempt went "
                                     "through")


@needs_chromium
def test_the_index_shows_the_options_that_differ_as_columns(site: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for name, epochs in (("a", 1), ("b", 3)):  # one run as if made with --epochs 3
        src = next(p for p in (site.parent).glob("runs*/appbench-plan-ss-*"))
        shutil.copytree(src, runs / name)
        config = json.loads((runs / name / "config.json").read_text(encoding="utf-8"))
        config["epochs"] = epochs
        (runs / name / "config.json").write_text(json.dumps(config), encoding="utf-8")
    out = tmp_path / "site"
    build_site([runs], out)
    got = probe(out, "", """done({heads: [...document.querySelectorAll("#runs th")].map(
        (t) => t.textContent), cells: [...document.querySelectorAll("#runs td.option")].map(
        (t) => t.textContent)});""", wait_ms=1000)
    assert "epochs" in got["heads"] and "samples" not in got["heads"]
    assert sorted(got["cells"]) == ["1", "3"]


def test_view_reads_runs_by_default_opens_a_browser_and_says_when_there_are_none(
        site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", opened.append)
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(app, ["view"])
    assert done.exit_code == 1 and "no runs/ folder here" in done.output
    assert "Traceback" not in done.output
    src = next(site.parent.glob("runs*/appbench-plan-ss-*"))
    shutil.copytree(src, tmp_path / "runs" / src.name)
    done = CliRunner().invoke(app, ["view", "--open", "--out", "s"])
    assert done.exit_code == 0, done.output
    assert "wrote 1 run(s)" in done.output
    assert opened == [(tmp_path / "s" / "index.html").as_uri()]


def test_serve_answers_on_localhost_and_rewrites_the_site_when_a_run_changes(
        site: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    sources = sorted(site.parent.glob("runs*/appbench-plan-*"))
    shutil.copytree(sources[0], runs / "first")
    live = LiveSite([runs], tmp_path / "site", port=0)
    try:
        assert live.url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(live.url, timeout=HANG_GUARD_S) as page:
            assert b"tooleval view" in page.read()
        assert not live.poll()  # nothing changed
        shutil.copytree(sources[1], runs / "second")  # a run appears while serving
        assert live.poll() and live.site.runs == 2
        base = live.url.rsplit("/", 1)[0]
        with urllib.request.urlopen(base + "/data/runs.js", timeout=HANG_GUARD_S) as data:
            assert data.read().count(b'"experiment"') == 2
        with (runs / "first" / "examples.jsonl").open("a", encoding="utf-8") as f:
            f.write("")  # touched: the mtime changes
        os.utime(runs / "first" / "examples.jsonl", ns=(1, 1))
        assert live.poll()
    finally:
        live.close()
