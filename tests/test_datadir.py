"""Where data is looked for (``--data-dir`` > ``$TOOLEVAL_DATA_DIR`` > per-user cache) and that a
missing dataset's error tells the user the exact command that gets it."""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from http_fixtures import StaticServer, serve_directory
from typer.testing import CliRunner

from tooleval_agents.appbench.loaders import load_category
from tooleval_agents.cli import app
from tooleval_agents.data.datadir import (
    ENV_VAR,
    bundled_samples,
    data_dir_or_samples,
    default_data_dir,
    find_samples,
    resolve_data_dir,
    samples_dir,
    source_of,
)
from tooleval_agents.errors import DatasetMissingError
from tooleval_agents.registry import benchmarks
from tooleval_agents.ultratool.loaders import load_example, load_raw, load_task

SS = "appbench/data/test/test_ss.json"


@pytest.fixture
def server(shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[StaticServer]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                 "all_proxy", "TOOLEVAL_FETCH_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with serve_directory(shared_data) as s:
        yield s


def test_resolution_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = Path(os.environ["XDG_CACHE_HOME"])  # set by conftest
    assert resolve_data_dir() == default_data_dir()
    assert default_data_dir().is_relative_to(cache)
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "env"))
    assert resolve_data_dir() == tmp_path / "env"
    assert resolve_data_dir(tmp_path / "flag") == tmp_path / "flag"
    assert resolve_data_dir(str(tmp_path / "flag")) == tmp_path / "flag"


def _fetch_ss(server: StaticServer, *extra: str) -> None:
    result = CliRunner().invoke(app, ["data", "fetch", "appbench", "--include", SS.split("/", 1)[1],
                                      "--base-url", server.url, "--no-progress", *extra])
    assert result.exit_code == 0, result.output


def test_fetch_writes_where_the_order_says(tmp_path: Path, server: StaticServer,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    flag, env = tmp_path / "flag", tmp_path / "env"
    monkeypatch.setenv(ENV_VAR, str(env))
    _fetch_ss(server, "--data-dir", str(flag))  # --data-dir beats the variable
    assert (flag / SS).is_file() and not (env / SS).exists()

    _fetch_ss(server)  # the variable beats the cache
    assert (env / SS).is_file() and not (default_data_dir() / SS).exists()

    monkeypatch.delenv(ENV_VAR)
    _fetch_ss(server)  # neither: the per-user cache (under the test's XDG_CACHE_HOME)
    assert (default_data_dir() / SS).is_file()
    assert default_data_dir().is_relative_to(Path(os.environ["XDG_CACHE_HOME"]))


LOADERS: dict[str, tuple[str, Callable[[Path], object]]] = {
    "appbench-ss": ("appbench", lambda d: load_category(d, "ss")),
    "ultratool-raw": ("ultratool", lambda d: load_raw(d, "en")),
    "ultratool-planning": ("ultratool", lambda d: load_task(d, "planning", "zh")),
    "ultratool-example": ("ultratool", lambda d: load_example(d, "tool_usage", "en")),
}


@pytest.mark.parametrize("case", list(LOADERS))
def test_missing_dataset_names_the_fetch_command(tmp_path: Path, case: str) -> None:
    source, load = LOADERS[case]
    with pytest.raises(DatasetMissingError) as err:
        load(tmp_path)
    assert f"tooleval data fetch {source} --data-dir {tmp_path}" in str(err.value)
    assert err.value.data_dir == tmp_path


def test_the_suggested_command_gets_the_data(tmp_path: Path, server: StaticServer) -> None:
    """Run the command from the error message verbatim (plus a loopback --base-url)."""
    with pytest.raises(DatasetMissingError) as err:
        load_category(tmp_path, "ss")
    line = next(s for s in str(err.value).splitlines() if "tooleval data fetch" in s)
    argv = shlex.split(line.split("tooleval", 1)[1])
    result = CliRunner().invoke(app, [*argv, "--base-url", server.url, "--no-progress"])
    assert result.exit_code == 0, result.output
    assert len(load_category(tmp_path, "ss")) == 200  # SOURCE.md


# --- bundled samples: each benchmark says where its own are -------------------------------------


def test_each_builtin_benchmark_finds_its_samples_in_the_checkout(samples: Path) -> None:
    found = bundled_samples()
    assert {name: where.resolve() for name, where in found.items()
            if name in ("ultratool", "appbench")} == {"ultratool": samples.resolve(),
                                                      "appbench": samples.resolve()}
    assert samples_dir("appbench").resolve() == samples_dir().resolve() == samples.resolve()
    assert source_of(samples) == "sample"


def test_find_samples_takes_the_first_folder_holding_the_source(tmp_path: Path) -> None:
    wheel, checkout = tmp_path / "pkg" / "samples", tmp_path / "datasets"
    (checkout / "toy").mkdir(parents=True)
    assert find_samples("toy", wheel, checkout) == checkout
    (wheel / "toy").mkdir(parents=True)
    assert find_samples("toy", wheel, checkout) == wheel
    assert find_samples("other", wheel, checkout) is None


def test_data_info_without_data_lists_each_benchmarks_own_samples(
        samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As an installed wheel lays them out: every benchmark's samples in its own folder."""
    found = benchmarks()
    folders = {}
    for name in ("ultratool", "appbench"):
        folders[name] = tmp_path / name / "samples"
        shutil.copytree(samples / name, folders[name] / name)
        monkeypatch.setattr(found[name], "samples_dir", lambda where=folders[name]: where)
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "nothing"))
    result = CliRunner().invoke(app, ["data", "info", "--json"])
    assert result.exit_code == 0, result.output
    rows = [r for r in json.loads(result.stdout)["splits"] if r["benchmark"] in folders]
    assert len(rows) == 2 * 7 + 4
    for r in rows:
        assert r["source"] == "sample" and r["records"] > 0, r
        assert Path(r["path"]).is_relative_to(folders[r["benchmark"]]), r


def test_run_without_fetched_data_uses_the_samples_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, samples: Path) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # nothing fetched
    bench = benchmarks()["appbench"]
    splits = [bench.split("plan", "ss"), bench.split("plan", "mm")]
    where, note = data_dir_or_samples(bench, splits)
    assert where.resolve() == samples.resolve()
    assert note is not None and "bundled samples" in note and \
        "tooleval data fetch appbench" in note
    result = CliRunner().invoke(app, ["run", "appbench", "--category", "ss", "--model",
                                      "reference", "--limit", "1", "--out",
                                      str(tmp_path / "runs"), "--no-cache"])
    assert result.exit_code == 0, result.output
    assert "using the bundled samples" in result.output
    config = json.loads(next((tmp_path / "runs").glob("*/config.json")).read_text())
    assert config["dataset"]["source"] == "sample"


@pytest.fixture
def nothing_fetched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No data directory named and none fetched: the commands fall back to the samples."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


NOTE = "using the bundled samples"


def test_score_and_data_push_use_the_samples_as_run_does(nothing_fetched: Path,
                                                          samples: Path) -> None:
    gold = json.loads((samples / SS).read_text(encoding="utf-8"))
    answers = nothing_fetched / "answers.json"
    answers.write_text(json.dumps([""] * len(gold)), encoding="utf-8")
    scored = CliRunner().invoke(app, ["score", "appbench", "--category", "ss", "--predictions",
                                      str(answers), "--json"])
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.stdout)["counts"]["samples"] == len(gold)
    assert [line for line in scored.stderr.splitlines() if NOTE in line] == [
        f"note: no appbench data in {default_data_dir()}: using the bundled samples "
        f"({samples}); the full data: tooleval data fetch appbench"]
    usage = nothing_fetched / "tool_selection.json"
    usage.write_text(json.dumps([""] * 6), encoding="utf-8")
    ultra = CliRunner().invoke(app, ["score", "ultratool", "--task", "tool_selection",
                                     "--lang", "en", "--predictions", str(usage), "--json"])
    assert ultra.exit_code == 0, ultra.output
    assert json.loads(ultra.stdout)["counts"]["samples"] == 6 and NOTE in ultra.stderr
    pushed = CliRunner().invoke(app, ["data", "push", "appbench", "--subset", "ss",
                                      "--dry-run", "--json"])
    assert pushed.exit_code == 0, pushed.output
    report = json.loads(pushed.stdout)
    assert report["data_dir"] == str(samples) and NOTE in pushed.stderr
    assert [(r["dataset"], r["examples"], r["source"]) for r in report["results"]] == [
        ("appbench-plan-ss", len(gold), "sample")]


def test_python_runs_use_the_samples_and_log_it(nothing_fetched: Path,
                                                caplog: pytest.LogCaptureFixture) -> None:
    from tooleval_agents import examples_for, run_experiment

    with caplog.at_level("WARNING"):
        summary = run_experiment("appbench", subset="ss", model="reference", limit=1,
                                 out=nothing_fetched / "runs", cache=False, progress=False)
        examples = examples_for("appbench", subset="sm")
    assert summary.metrics["success"] == 100.0
    config = json.loads((Path(summary.run_dir or "") / "config.json").read_text())
    assert config["dataset"]["source"] == "sample"
    assert [e.metadata["source"] for e in examples] == ["sample"] * len(examples)
    assert len(examples) == 5
    assert sum(NOTE in r.getMessage() for r in caplog.records) == 2


def test_a_named_data_directory_is_never_replaced_by_the_samples(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bench = benchmarks()["appbench"]
    split = [bench.split("plan", "ss")]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert data_dir_or_samples(bench, split, tmp_path / "mine") == (tmp_path / "mine", None)
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "env"))
    assert data_dir_or_samples(bench, split) == (tmp_path / "env", None)
    monkeypatch.delenv(ENV_VAR)
    result = CliRunner().invoke(app, ["run", "appbench", "--category", "ss", "--model",
                                      "reference", "--data-dir", str(tmp_path / "mine"),
                                      "--out", str(tmp_path / "runs")])
    assert result.exit_code == 1 and "tooleval data fetch appbench" in result.output


def test_source_of(tmp_path: Path) -> None:
    assert source_of(samples_dir()) == "sample"
    assert source_of(tmp_path) == "official"
