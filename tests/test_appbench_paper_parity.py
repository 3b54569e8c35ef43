"""``--scoring paper`` counts what the official AppBench driver counts, answer by answer.

The official functions (``discompose_app_api``, ``extract_name_params``,
``get_appbench_analysis``) are run from the fetched upstream copy (``appbench_official.py``).
Those tests are marked ``parity``: they skip, naming the fetch command, where the copy lacks
the scorer, and fail where ``TOOLEVAL_REQUIRE_SHARED_DATA`` is set (CI). The whole answer
corpus (``appbench_answers.py``, 7209 answers: ``benchmarks/appbench_parity.py``'s comparison)
is compared answer by answer. The official numbers are also recorded in
``fixtures/appbench_official_parity.json`` (``benchmarks/appbench_parity.py --record``), which
the scorer is checked against everywhere, the official code present or not.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
from appbench_answers import answer_sets
from appbench_official import compare_category, digest, official_scorer, paper_numbers
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tooleval_agents.appbench.loaders import load_category
from tooleval_agents.appbench.names import CATEGORIES
from tooleval_agents.appbench.records import AppBenchSample
from tooleval_agents.cli import app
from tooleval_agents.evaluators.appbench.paper_read import extract_call, read_answer
from tooleval_agents.evaluators.appbench.parse import official_gold_answer
from tooleval_agents.evaluators.appbench.scoring import score_appbench

FIXTURES = Path(__file__).parent / "fixtures"
RECORDED = json.loads((FIXTURES / "appbench_official_parity.json").read_text(encoding="utf-8"))
RERECORD = ("the answer corpus changed (tests/appbench_answers.py or the corruptions): "
            "re-record the official numbers with `python benchmarks/appbench_parity.py "
            "DATA_DIR --record` (needs the official scorer)")
ISSUE_LINES = ["app1: [x='y']", "Trains: [total] = nothing", "Trains: [from='A', to='B']"]
"""Issue 21 item 6: lines the official driver counts as a predicted app and API though no
API name can be read from them."""


@cache
def _corpus(data: Path, category: str) -> tuple[list[AppBenchSample],
                                                list[tuple[str, list[str]]]]:
    samples = load_category(data, category)
    return samples, list(answer_sets(samples, seed=category))


def test_a_line_without_an_api_name_counts_as_a_predicted_app_and_api(
        shared_data: Path, tmp_path: Path) -> None:
    """SS sample 0, its gold line and one more line: the official app F1 66.67, API F1 66.67,
    complete match 0 (it was 100 / 100 / 100 here)."""
    samples = load_category(shared_data, "ss")
    gold = official_gold_answer(samples[0])
    for line in ISSUE_LINES:
        report = score_appbench(samples[:1], [f"{gold}\n{line}"], scoring="paper")
        m = report.metrics
        assert (round(m["app_f1"], 2), round(m["api_f1"], 2), m["success"]) == \
            (66.67, 66.67, 0.0), line
        assert report.counts["pred_calls"] == 2 and report.counts["unparsed_lines"] == 1
        assert report.examples[0].comments["success"] == \
            "apps differ from used_app; API names differ"
    # the command the issue ran: every SS answer its gold, sample 0 with the extra line
    answers = [official_gold_answer(s) for s in samples]
    answers[0] += f"\n{ISSUE_LINES[0]}"
    predictions = tmp_path / "ss.json"
    predictions.write_text(json.dumps(answers), encoding="utf-8")
    result = CliRunner().invoke(app, ["score", "appbench", "--category", "ss", "--predictions",
                                      str(predictions), "--scoring", "paper", "--data-dir",
                                      str(shared_data), "--json"])
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout)["metrics"]
    assert metrics["app_f1"] == metrics["api_f1"] == pytest.approx(100 * 400 / 401)
    assert metrics["success"] == 99.5


@pytest.mark.parity
def test_the_issue_cases_give_the_official_numbers(shared_data: Path) -> None:
    official = official_scorer(shared_data)
    samples, record = load_category(shared_data, "ss"), official.records("ss")[0]
    for line in ISSUE_LINES:
        answer = f"{official_gold_answer(samples[0])}\n{line}"
        want = official.corpus([record], [answer])
        assert want is not None
        assert (round(want["app_f1"], 2), round(want["api_f1"], 2), want["success"]) == \
            (66.67, 66.67, 0.0)
        got = score_appbench(samples[:1], [answer], scoring="paper").metrics
        assert {k: got[k] for k in want} == pytest.approx(want)


@pytest.mark.parametrize("category", CATEGORIES)
def test_paper_gives_the_recorded_official_numbers(shared_data: Path, category: str) -> None:
    """Every answer's hits, sizes and success, and each answer set's corpus figures, equal
    the official scorer's as recorded (no official code needed)."""
    samples, sets = _corpus(shared_data, category)
    recorded = RECORDED[category]
    assert {name for name, _ in sets} == set(recorded), RERECORD
    for name, answers in sets:
        want = recorded[name]
        assert digest(answers) == want["answers"], RERECORD
        report = score_appbench(samples, answers, scoring="paper")
        assert digest([list(p) for p in paper_numbers(report)]) == want["per_answer"], \
            f"{category} {name}: the paper profile differs from the official scorer"
        if want["official"] is not None:
            assert {k: report.metrics[k] for k in want["official"]} == \
                pytest.approx(want["official"], abs=1e-9), f"{category} {name}"


@pytest.mark.parity
@pytest.mark.parametrize("category", CATEGORIES)
def test_paper_equals_the_official_scorer_answer_by_answer(
        shared_data: Path, category: str, record_property: Callable[[str, object], None]) -> None:
    """``benchmarks/appbench_parity.py``'s comparison, whole: every answer set of the category,
    each answer's numbers and each set's corpus figures."""
    official = official_scorer(shared_data)
    compared = compare_category(official, shared_data, category)
    assert {c.name for c in compared} == set(RECORDED[category]), RERECORD
    for c in compared:
        assert not c.differ, f"{category} {c.name}: {len(c.differ)} differ, first {c.differ[0]}"
        assert not c.corpus_differs, (category, c.name, c.ours, c.corpus)
        # the recorded numbers are the official ones
        assert digest([list(w) for w in c.official]) == RECORDED[category][c.name]["per_answer"]
        assert c.corpus == RECORDED[category][c.name]["official"]
    record_property("answers_compared", sum(len(c.answers) for c in compared))


@pytest.mark.parity
def test_real_model_answers_score_as_the_official_scorer_scores_them(
        shared_data: Path) -> None:
    """The answers real models wrote (``fixtures/real_model``), each against the first 25
    samples of every category."""
    official = official_scorer(shared_data)
    texts = [a["text"] for a in json.loads((FIXTURES / "real_model" / "appbench_answers.json")
                                           .read_text(encoding="utf-8"))["answers"]]
    assert len(texts) >= 5
    for category in CATEGORIES:
        samples, records = load_category(shared_data, category)[:25], \
            official.records(category)[:25]
        for text in texts:
            got = paper_numbers(score_appbench(samples, [text] * len(samples), scoring="paper"))
            assert got == [official.per_sample(r, text) for r in records], text


_PIECES = st.sampled_from(["Hotels", ": [", ":", "[", "]", "(", ")", "#k=", "'", '"', ", ",
                           " = ", "=", "searchhouse", "x", "\n", " ", "\t", "\r", "\\",
                           "Book_X", "_", "#", "- **", "app1", "\u00e9", "\u0663", "\u00a0"])


@pytest.mark.parity
@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(), st.lists(_PIECES, max_size=40).map("".join)))
def test_the_reader_equals_the_official_functions(shared_data: Path, text: str) -> None:
    official = official_scorer(shared_data)
    apps, apis = read_answer(text)
    assert (apps, apis) == tuple(official.discompose_app_api(text))
    for api in [text, *apis]:
        call, want = extract_call(api), official.extract_name_params(api)
        assert (None if call is None else (call.name, call.args)) == \
            (None if want is None else (want["function_name"], want["input_parameters"]))
