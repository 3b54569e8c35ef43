"""``tooleval view``: complete example records (inputs, gold, every model call's messages in the
run's prompt store) and the static site, rendered by a real headless Chromium where one is
installed (``.ci/run`` installs it; elsewhere those tests skip and say why)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from helpers import CHROMIUM, HANG_GUARD_S, needs_chromium, probe_page, run
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.results.rundir import RunDir
from tooleval_agents.results.transcripts import PROMPTS, PromptStore
from tooleval_agents.viewer import CHUNK, build_site


def render(page: Path, route: str = "") -> str:
    """The DOM of ``page`` (a file) after its scripts ran, from headless Chromium."""
    if CHROMIUM is None:
        raise AssertionError("TOOLEVAL_REQUIRE_CHROMIUM is set but no Chromium is installed")
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-extensions",
         # no background connections: this machine's closed network refuses them
         "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync",
         f"--user-data-dir={page.parent / '.chromium'}", "--virtual-time-budget=10000",
         "--dump-dom", page.as_uri() + route],
        capture_output=True, text=True, timeout=HANG_GUARD_S, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def runs(samples: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    for model in ("reference", "noisy-reference:0.6"):
        run("appbench", samples, out, subset="mm", strategy="execute_repair",
            model=model)
    run("appbench", samples, out, subset="ss", strategy="tools", model="reference")
    run("ultratool", samples, out, task="tool_usage", subset="en", model="reference")
    return out


def test_each_line_keeps_inputs_gold_and_every_model_call(runs: Path) -> None:
    run_dir = runs / "appbench-plan-mm-execute_repair-noisy-reference_0.6"
    results = RunDir(run_dir).results()
    prompts = PromptStore(run_dir).read()
    for r in results.values():
        assert r.inputs and r.reference_outputs and r.data_digest
        assert len(r.model_calls) == r.usage.model_calls >= 2  # select apps, then plan
        for call in r.model_calls:
            assert all(m in prompts for m in call.messages) and call.output is not None
    # The shared prompt text is stored once, not once per example.
    lines = (run_dir / PROMPTS).read_text().splitlines()
    assert len(lines) == len({json.loads(x)["id"] for x in lines})
    tools_run = next(iter(RunDir(runs / "appbench-plan-ss-tools-reference").results().values()))
    first = tools_run.model_calls[0]
    assert first.tools is not None and len(PromptStore(runs / "appbench-plan-ss-tools-reference")
                                           .read()[first.tools]) == 33  # the 33 API tools


def test_site_files_hold_every_example_and_no_value_can_close_a_script(runs: Path,
                                                                         tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "mine.txt").write_text("kept")
    result = CliRunner().invoke(app, ["view", str(runs), "--out", str(tmp_path / "site"),
                                      "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    assert info["runs"] == 4 and (tmp_path / "site" / "mine.txt").read_text() == "kept"
    index = (tmp_path / "site/data/appbench-plan-mm-execute_repair-reference/index.js").read_text()
    assert index.startswith("TOOLEVAL.put(")
    rows = json.loads(index[index.index(",") + 1:index.rindex(")")])
    assert sorted(r["index"] for r in rows) == list(range(len(rows)))
    assert all(r["chunk"] == r["index"] // CHUNK for r in rows)
    for js in (tmp_path / "site" / "data").rglob("*.js"):
        assert "</script" not in js.read_text().lower()
    missing = CliRunner().invoke(app, ["view", str(tmp_path / "nothing"), "--out",
                                       str(tmp_path / "x")])
    assert missing.exit_code == 2 and "not a run directory" in missing.output


@needs_chromium
def test_the_site_renders_runs_examples_and_one_example_in_chromium(runs: Path,
                                                                    tmp_path: Path) -> None:
    site = build_site([runs], tmp_path / "site")
    home = render(site.index)
    assert len(re.findall(r'<tr data-run="', home)) == 4
    assert "<td>execute_repair</td><td>noisy-reference:0.6</td>" in home
    # an UltraTool row leaves AppBench's headline columns empty, and the reverse
    ultra = re.search(r'<tr data-run="ultratool[^"]*">(.*?)</tr>', home, re.S)
    assert ultra and ultra.group(1).count('<td class="other"></td>') >= 2
    assert "<th>epochs</th>" not in home  # every run has one epoch: not an option that differs
    assert '<div class="ci">' in home  # intervals beside the headline metrics
    rid = "appbench-plan-mm-execute_repair-noisy-reference_0.6"
    listing = render(site.index, f"#/run/{rid}")
    results = RunDir(runs / rid).results()
    shown = sorted(int(i) for i in re.findall(r'<tr data-index="(\d+)"', listing))
    assert shown == sorted(r.index for r in results.values())  # every example id
    failed = sorted(r.index for r in results.values() if (r.score or {}).get(
        "scores", {}).get("success") == 0.0)
    assert failed, "the noisy run must have failures to filter"
    filtered = render(site.index, f"#/run/{rid}?metric=success&max=0")
    assert sorted(int(i) for i in re.findall(r'<tr data-index="(\d+)"', filtered)) == failed

    example = results[next(k for k, r in results.items() if r.index == failed[0])]
    page = render(site.index, f"#/run/{rid}/ex/{failed[0]}?with="
                              "appbench-plan-mm-execute_repair-reference")
    body = page[page.index('<main id="app">'):]
    assert body.count('<div class="column">') == 2  # side by side with the reference run
    prompt = PromptStore(runs / rid).read()[example.model_calls[0].messages[0]]["content"]
    for text in (prompt[:60], str(example.model_calls[-1].output["content"])[:60],
                 '"used_app": ['):  # the gold answer
        assert _escaped(text) in body
    for section in ("<h3>scores</h3>", "<summary>trace</summary>", "<summary>gold answer</summary>",
                    "<summary>raw outputs</summary>", "model call 1",
                    "<summary>scoring saw: execution</summary>", "cost $0.00000"):
        assert section in body
    assert (example.score or {})["comments"]["success"] in body.replace("&gt;", ">")


RUNS_PROBE = """
const table = document.querySelector("#runs");
const heads = [...table.querySelectorAll("th")];
done({heads: heads.map((h) => h.textContent),
      links: [...table.querySelectorAll("tbody tr td:first-child a")].map((a) => a.textContent),
      started: [...table.querySelectorAll("tbody td.started")].map((t) => t.textContent),
      right: Math.max(...heads.map((h) => h.getBoundingClientRect().right)),
      width: document.documentElement.clientWidth});
"""


@needs_chromium
def test_the_run_list_names_each_run_and_fits_a_1400_px_window(runs: Path, tmp_path: Path) -> None:
    site = build_site([runs], tmp_path / "site")
    got = probe_page(site.index, "", RUNS_PROBE, window="1400,900", wait_ms=1000)
    # each run by its folder's name (what `tooleval run` printed), its start a column of its own
    assert sorted(got["links"]) == sorted(p.name for p in runs.iterdir() if p.is_dir())
    assert got["heads"][:2] == ["run", "started"]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d\d\d:\d\d", s) for s in got["started"])
    assert got["heads"][-1] == "cost $" and got["right"] <= got["width"], got  # nothing cut


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@needs_chromium
def test_each_attempt_of_an_epochs_run_has_its_own_page(samples: Path, tmp_path: Path) -> None:
    summary = run("appbench", samples, tmp_path / "runs", subset="ss",
                  model="noisy-reference:0.5", epochs=2)
    site = build_site([tmp_path / "runs"], tmp_path / "site")
    rid = Path(summary.run_dir).name.replace("=", "_")  # the site's id: path-safe as a link
    listing = render(site.index, f"#/run/{rid}")
    keys = re.findall(r'<tr data-index="([\d@]+)"', listing)
    assert sorted(keys) == sorted([str(i) for i in range(6)] + [f"{i}@1" for i in range(6)])
    page = render(site.index, f"#/run/{rid}/ex/2@1")
    second = next(r for r in summary.results() if r.index == 2 and r.epoch == 1)
    assert "example 2@1" in page
    assert _escaped(str(second.model_calls[-1].output["content"])[:50]) in page
