"""The exit statuses the table of docs/running.md promises, one test per row: 0 done, 1 an
error, 2 a bad argument (one line, a "did you mean" where a close name exists, nothing
written), 3 examples left unscored."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest
from fake_openai import MALFORMED, FakeOpenAI
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.contracts import OptionError
from tooleval_agents.errors import did_you_mean
from tooleval_agents.models.providers import EXTRAS, FALLBACKS, PROVIDER_MODULES
from tooleval_agents.run.runner import run_experiment

RUN = ["run", "appbench", "--category", "ss"]
REF = [*RUN, "--model", "reference"]


def _invoke(args: list[str], samples: Path, out: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, [*args, "--data-dir", str(samples), "--out", str(out)])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One finished reference run of the bundled samples (for score/compare/report)."""
    out = tmp_path_factory.mktemp("runs")
    samples = Path(__file__).resolve().parents[1] / "datasets"
    code, output = _invoke(REF, samples, out)
    assert code == 0, output
    (run,) = out.iterdir()
    return run


def test_did_you_mean_suggests_only_a_close_name() -> None:
    assert did_you_mean("hierarchcal", ["flat", "hierarchical"]) == " did you mean 'hierarchical'?"
    assert did_you_mean("k", ["prompts"]) == ""


def test_exit_0_when_every_example_was_scored(samples: Path, tmp_path: Path) -> None:
    code, output = _invoke(REF, samples, tmp_path / "out")
    assert code == 0, output
    assert len(list((tmp_path / "out").iterdir())) == 1


# (arguments, words the line holds, the suggestion or None)
RUN_MISTAKES = [
    ([*RUN, "--strategy", "hierarchcal", "--model", "reference"], "unknown strategy",
     "hierarchical"),
    ([*RUN, "--model", "refernce"], "model spec 'refernce'", "reference"),
    ([*RUN, "--model", "gpt-4o-mini"], "use 'provider:model'", None),
    ([*RUN, "--model", "openai/gpt-4o-mini"], "use 'provider:model'", "openai:gpt-4o-mini"),
    ([*REF, "-O", "unknown=1"], "has no option 'unknown'", None),
    ([*RUN, "--strategy", "hierarchical", "--model", "reference", "-O", "k=3"],
     "has no option 'k'", None),
    ([*REF, "-O", "promts=official"], "has no option 'promts'", "prompts"),
    ([*REF, "-O", "foo"], "expected KEY=VALUE", None),
    ([*REF, "--samples", "99"], "has no example 99", None),
    ([*REF, "--scoring", "strictt"], "option 'scoring'", "strict"),
    (["run", "appbnch", "--category", "ss", "--model", "reference"], "unknown benchmark",
     "appbench"),
    (["run", "appbench", "--category", "sz", "--model", "reference"],
     "unknown --category 'sz'", None),
    ([*REF, "--task", "plann"], "has no task 'plann'", "plan"),
    (["run", "ultratool", "--task", "tool_creation", "--lang", "eng", "--model", "reference"],
     "unknown --lang 'eng'", "en"),
]


@pytest.mark.parametrize(("args", "words", "suggestion"), RUN_MISTAKES,
                         ids=[" ".join(a[1:]) for a, _, _ in RUN_MISTAKES])
def test_exit_2_for_a_bad_run_argument_before_anything_is_written(
        args: list[str], words: str, suggestion: str | None, samples: Path,
        tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    code, output = _invoke(args, samples, out)
    assert code == 2, output
    line = " ".join(output.split())  # the console wraps long lines
    assert line.startswith("error: ") and words in line
    assert "Traceback" not in output
    if suggestion is not None:
        assert line.endswith(f"did you mean {suggestion!r}?"), line
    else:
        assert "did you mean" not in line
    assert list(out.iterdir()) == []


@pytest.mark.parametrize(("args", "words", "suggestion"), [
    (["compare", "-m", "sucess", "{run}"], "unknown metric(s) ['sucess']", "success"),
    (["compare", "{run}", "{missing}"], "is not a run directory", None),
    (["score", "--run", "{missing}"], "is not a run directory", None),
    (["report", "{missing}", "--out", "{out}"], "is not a run directory", None),
    (["report", "{run}", "--out", "{out}", "-m", "sucess"], "unknown metric", "success"),
    (["view", "{missing}", "--out", "{out}"], "no such path", None),
    (["data", "verify", "appbnch"], "unknown data source", None),
])
def test_exit_2_for_a_bad_argument_of_the_other_commands(
        args: list[str], words: str, suggestion: str | None, run_dir: Path,
        tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    given = [a.format(run=run_dir, missing=tmp_path / "no-such-run", out=out) for a in args]
    before = sorted(p.name for p in run_dir.iterdir())
    result = CliRunner().invoke(app, given)
    assert result.exit_code == 2, result.output
    line = " ".join(result.output.split())
    assert line.startswith("error: ") and words in line
    if suggestion is not None:
        assert line.endswith(f"did you mean {suggestion!r}?"), line
    assert list(out.iterdir()) == []
    assert sorted(p.name for p in run_dir.iterdir()) == before


def test_exit_1_when_the_data_is_missing(tmp_path: Path) -> None:
    code, output = _invoke(REF, tmp_path / "empty", tmp_path / "out")
    assert code == 1, output
    assert "appbench data not found" in output and "tooleval data fetch" in output


def test_exit_3_when_every_example_was_an_infra_error(samples: Path, tmp_path: Path) -> None:
    key = "sk-test-exit-codes"
    with FakeOpenAI(lambda req: MALFORMED, api_key=key) as server:
        code, output = _invoke(
            [*RUN, "--model", "openai:fake-model", "--samples", "0-1", "--no-cache",
             "--max-attempts", "1", "--json", "--model-arg", f"base_url={server.base_url}",
             "--model-arg", f"api_key={key}"], samples, tmp_path / "out")
    assert code == 3, output
    row = json.loads(output[output.index("{"):output.rindex("}") + 1])
    assert row["counts"]["infra_errors"] == 2 and row["counts"]["ok"] == 0


@pytest.mark.parametrize("provider", ["anthropic", "google_genai", "ollama", "xai"])
def test_exit_2_naming_the_package_of_a_provider_that_is_not_installed(
        provider: str, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # as in a clone without the package (only langchain-openai comes with the project)
    for module in (PROVIDER_MODULES[provider], *FALLBACKS.get(provider, ())):
        monkeypatch.setitem(sys.modules, module, None)  # what find_spec and import then see
    spec = f"{provider}:some-model"
    out = tmp_path / "out"
    out.mkdir()
    code, output = _invoke([*RUN, "--model", spec], samples, out)
    assert code == 2, output
    line = " ".join(output.split())
    package = PROVIDER_MODULES[provider].replace("_", "-")
    extra = {"anthropic": "anthropic", "google_genai": "google", "ollama": "ollama"}.get(provider)
    install = (f"pip install 'tooleval-agents[{extra}]' (or pip install {package})" if extra
               else f"pip install {package}")
    assert line == (f"error: model spec {spec!r}: the {provider} provider needs the {package} "
                    f"package, which is not installed: {install}")
    assert "API key" not in output and list(out.iterdir()) == []
    # a judge the same; and from Python, the same line (a usage error, before any call)
    judged = _invoke(["run", "ultratool", "--task", "tool_creation", "--lang", "en", "--model",
                      "reference", "--judge", spec], samples, out)
    assert judged[0] == 2 and package in judged[1]
    with pytest.raises(OptionError, match=f"needs the {package} package"):
        run_experiment("appbench", subset="ss", model=spec, data_dir=samples, out=out,
                       progress=False, cache=False)


def test_each_providers_extra_installs_its_package() -> None:
    extras = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(
        encoding="utf-8"))["project"]["optional-dependencies"]
    for provider, extra in EXTRAS.items():
        package = PROVIDER_MODULES[provider].replace("_", "-")
        assert [r for r in extras[extra] if r.startswith(package + ">=")], (extra, package)
    assert extras["providers"] == [f"tooleval-agents[{','.join(EXTRAS.values())}]"]
