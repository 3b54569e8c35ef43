"""Corpus sums: one aggregate for a run (floats) and for a bootstrap (arrays of resamples), the
summary computed from streamed results, and run files read one result at a time."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tooleval_agents.contracts import ExampleScore, Part, exact_sum
from tooleval_agents.errors import DataFormatError
from tooleval_agents.results.corpus import Columns, Corpus, as_corpus, counts_of
from tooleval_agents.results.intervals import bootstrap_intervals, vectorized_intervals
from tooleval_agents.results.records import ExampleResult
from tooleval_agents.results.rundir import EXAMPLES, RunDir
from tooleval_agents.results.summary import summarize


def random_scores(n: int, seed: int) -> list[ExampleScore]:
    """Scores with missing keys, n/a-prone parts (0 of 0) and scoring errors."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        s = ExampleScore()
        if rng.random() < 0.8:
            total = float(rng.randint(0, 3))
            s.parts["found"] = Part(hits=float(rng.randint(0, int(total))), total=total)
        if rng.random() < 0.9:
            s.scores["exact"] = rng.choice([0.0, 100.0])
        s.scores["quality"] = rng.random() * 10
        if rng.random() < 0.1:
            s.error = "judge failed"
            s.scores["quality"] = 0.0
        out.append(s)
    return out


def aggregate(scores: Any) -> dict[str, Any]:
    c = as_corpus(scores)
    return {"found": c.pooled("found"), "exact": c.mean("exact"), "errors": c.errors,
            "quality_judged": c.ratio(c.score("quality", ok_only=True), c.n - c.errors),
            "exact_if_found": c.na_where(c.hits("found") == 0, c.mean("exact"))}


def pooled(scores: Sequence[ExampleScore], key: str) -> float | None:
    """100 * sum(hits) / sum(total) over a list, by hand (n/a over a total of 0)."""
    parts = [s.parts[key] for s in scores if key in s.parts]
    total = math.fsum(p.total for p in parts)
    return 100.0 * math.fsum(p.hits for p in parts) / total if total else None


def mean_score(scores: Sequence[ExampleScore], key: str) -> float | None:
    """Mean over every example (missing: 0) by hand; n/a when no example has the score."""
    if not any(key in s.scores for s in scores):
        return None
    return math.fsum(s.scores.get(key, 0.0) for s in scores) / len(scores)


def by_hand(scores: Sequence[ExampleScore]) -> dict[str, Any]:
    """The same metrics computed from the list of scores."""
    ok = [s for s in scores if s.error is None]
    found = sum(s.parts["found"].hits for s in scores if "found" in s.parts)
    return {"found": pooled(scores, "found"), "exact": mean_score(scores, "exact"),
            "errors": float(len(scores) - len(ok)),
            "quality_judged": mean_score(ok, "quality"),
            "exact_if_found": None if not found else mean_score(scores, "exact")}


def plain_bootstrap(scores: Sequence[ExampleScore],
                    statistic: Callable[[list[ExampleScore]], dict[str, Any]], *,
                    n_boot: int = 200, seed: int = 0, level: float = 0.95
                    ) -> dict[str, list[float]]:
    """The percentile bootstrap as a plain loop: ``n_boot`` resamples of the examples with
    replacement (``random.Random(seed)``, one draw per position), the statistic of each, and
    per metric the ``level`` interval of its values (n/a ones left out; none when it is n/a on
    more than half the resamples)."""
    rng = random.Random(seed)
    values: dict[str, list[float]] = {}
    for _ in range(n_boot):
        resample = [scores[rng.randrange(len(scores))] for _ in scores]
        for name, value in statistic(resample).items():
            if value is not None:
                values.setdefault(name, []).append(float(value))
    tail = (1.0 - level) / 2.0
    return {name: [sorted(v)[int(tail * (len(v) - 1))],
                   sorted(v)[round((1.0 - tail) * (len(v) - 1))]]
            for name, v in values.items() if len(v) >= n_boot / 2}


def test_a_corpus_gives_exactly_the_numbers_of_the_list_functions() -> None:
    for seed in range(5):
        scores = random_scores(137, seed)
        assert aggregate(scores) == by_hand(scores)  # equal floats, not approximately
    nothing = [ExampleScore(parts={"found": Part(hits=0, total=0)})]
    assert aggregate(nothing)["found"] is None and aggregate(nothing)["exact_if_found"] is None
    assert aggregate([])["exact"] is None


def test_columns_grow_as_scores_arrive_and_keep_running_sums() -> None:
    scores = random_scores(50, 1)
    columns = Columns()
    for i, s in enumerate(scores, start=1):
        columns.add(s)
        assert aggregate(columns.corpus()) == by_hand(scores[:i])
    assert len(columns) == 50


def test_sums_are_exact_so_no_order_or_python_moves_a_figure() -> None:
    # Ten scores of 0.1: adding left to right (Python 3.11's sum()) gives 0.9999999999999999,
    # 3.12's compensated sum() 1.0; an exact sum gives 1.0 on every Python and in any order.
    tenths = [ExampleScore(scores={"q": 0.1}, parts={"p": Part(hits=0.1, total=1.0)})] * 10
    assert mean_score(tenths, "q") == 0.1 and pooled(tenths, "p") == 10.0
    for keep in (True, False):
        c = Columns(tenths, values=keep).corpus()
        assert c.score("q") == 1.0 and c.mean("q") == 0.1 and c.pooled("p") == 10.0
    scores = random_scores(500, 7)
    forward = aggregate(scores)
    for order in (scores[::-1], random.Random(0).sample(scores, len(scores))):
        assert aggregate(order) == forward == by_hand(order)
        assert aggregate(Columns(order, values=False).corpus()) == forward


@pytest.mark.parametrize(("values", "expected"), [
    ([1e16, 1.0, -1e16, 1.0], 2.0), ([math.inf, 1.0], math.inf), ([1e308, 1e308], math.inf),
    ([math.inf, 1.0, -math.inf], math.nan), ([math.nan, 1.0], math.nan)])
def test_sums_cancel_exactly_and_inf_or_nan_are_what_addition_gives(
        values: list[float], expected: float) -> None:
    scores = [ExampleScore(scores={"q": v}) for v in values]
    sums = [exact_sum(values)] + [Columns(scores, values=keep).corpus().score("q")
                                  for keep in (True, False)]
    assert all(s == expected or (math.isnan(s) and math.isnan(expected)) for s in sums), sums


def test_resampled_sums_are_the_aggregates_of_the_resamples() -> None:
    scores = random_scores(40, 2)
    rng = np.random.default_rng(0)
    draws = rng.integers(0, 40, size=(25, 40))
    resampled = aggregate(Columns(scores).resampled(counts_of(draws, 40)))
    for b, row in enumerate(draws):
        expected = by_hand([scores[i] for i in row])
        for name, value in expected.items():
            got = resampled[name][b]
            assert (np.isnan(got) if value is None else got == pytest.approx(value, abs=1e-9))


def test_vectorized_intervals_equal_the_per_resample_bootstrap() -> None:
    scores = random_scores(300, 3)
    slow = plain_bootstrap(scores, by_hand)
    fast = vectorized_intervals(Columns(scores), aggregate, list(by_hand(scores)))
    # The per-resample path of the module gives the same intervals.
    assert bootstrap_intervals([[s] for s in scores],
                               lambda sample: by_hand([s for g in sample for s in g])) == slow
    assert fast.keys() == slow.keys() and len(fast) >= 4
    for name in slow:
        assert fast[name] == pytest.approx(slow[name], abs=1e-9)


def _result(i: int, score: ExampleScore | None, status: str = "ok",
            example_id: str | None = None) -> ExampleResult:
    return ExampleResult(example_id=example_id or f"e{i}", index=i, status=status,  # type: ignore[arg-type]
                         outputs={}, score=None if score is None else score.model_dump(),
                         latency_s=0.1 * i)


def test_the_streamed_summary_equals_the_metrics_and_bootstrap_of_the_scores() -> None:
    scores = random_scores(120, 4)
    results = [_result(i, s) for i, s in enumerate(scores)]
    results.append(_result(120, None, status="infra_error"))
    streamed = summarize("x", aggregate, iter(results), examples=125, headline=("exact",))
    assert streamed.metrics == {k: None if v is None else float(v)
                                for k, v in by_hand(scores).items()}
    assert streamed.counts["not_run"] == 4 and streamed.counts["infra_errors"] == 1
    assert streamed.counts["scored"] == 120
    slow = plain_bootstrap(scores, by_hand)
    assert streamed.ci.keys() == slow.keys() and len(slow) >= 4
    for name in slow:
        assert streamed.ci[name] == pytest.approx(slow[name], abs=1e-9)


def test_run_files_are_read_one_result_at_a_time_latest_line_winning(tmp_path: Path) -> None:
    rd = RunDir(tmp_path)
    first = _result(0, ExampleScore(scores={"exact": 0.0}), status="infra_error")
    for r in (first, _result(1, ExampleScore()), _result(0, ExampleScore(scores={"exact": 100.0}))):
        rd.append(r)
    with (tmp_path / EXAMPLES).open("a") as fh:
        fh.write('{"example_id":"e2","index":2,"sta')  # torn by a crash
    assert list(rd.latest()) == ["e0", "e1"]
    assert [r.status for r in rd.iter_results()] == ["ok", "ok"]
    assert [r.example_id for r in rd.iter_results(["e1", "missing", "e0"])] == ["e1", "e0"]
    assert list(rd.iter_results()) == list(rd.results().values())
    with (tmp_path / EXAMPLES).open("a") as fh:
        fh.write("\n" + json.dumps({"example_id": "e3", "index": "not a number"}) + "\n")
    with pytest.raises(DataFormatError, match=r"examples.jsonl:5:"):
        list(rd.iter_results())


def test_a_corpus_is_one_already() -> None:
    c = Columns(random_scores(3, 0)).corpus()
    assert isinstance(c, Corpus) and as_corpus(c) is c
