"""The fast ``paper`` path gives exactly the numbers of a straightforward computation.

The reference below is the ``paper`` profile written the plain way, from the definitions alone
and none of the scorer's own functions: the official driver's reading as regular expressions,
``Counter`` multisets, one validated :class:`ArgOutcome` per judged argument, the Table-4
flags and time/space shares, F1 as ``200 * hits / (predicted + gold)``, the corpus pooled
and averaged with ``math.fsum`` over the score records, success per scale grouped by hand, the
gold's scales from the networkx DAG. Every report field of :func:`score_appbench` must equal
it, bit for bit, on the real test sets of all four categories under several kinds of answers.
(``test_appbench_paper_parity.py`` checks both against the official functions themselves.)
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from pathlib import Path

import pytest
from appbench_answers import styled
from hypothesis import given, settings
from hypothesis import strategies as st

from tooleval_agents.appbench.depgraph import scales
from tooleval_agents.appbench.loaders import load_category
from tooleval_agents.appbench.names import CATEGORIES
from tooleval_agents.appbench.records import AppBenchOutput, AppBenchSample
from tooleval_agents.contracts import ExampleScore, Part
from tooleval_agents.evaluators.appbench.errors import ArgOutcome, ArgStatus
from tooleval_agents.evaluators.appbench.paper import (
    PRED_CORRECTIONS,
    clear_gold_cache,
    paper_gold,
    plan_scales,
)
from tooleval_agents.evaluators.appbench.paper_read import extract_call, read_answer
from tooleval_agents.evaluators.appbench.parse import gold_answer, official_gold_answer
from tooleval_agents.evaluators.appbench.scoring import (
    AppBenchReport,
    ScaleCell,
    score_appbench,
    score_example,
)

# --- the reference: the official driver and scorer, the plain way ----------------------------

_REF_LINE = re.compile(r"(?P<app>\w+):\s*\[(?P<inner>.*)\]")
_REF_CALL = re.compile(r"\w+\s*=\s*(?P<api>\w+)\((?P<args>[^)]*)\)")


def _ref_read(text: object) -> tuple[list[str], list[str]]:
    """Predicted apps and API strings: a ``Word: [...]`` line, else a line with ``:``, ``[``
    and ``]``; brackets removed."""
    if not isinstance(text, str):
        return [], []
    apps, apis = [], []
    for line in text.split("\n"):
        m = _REF_LINE.match(line)
        if m:
            app, api = m["app"], m["inner"]
        elif ":" in line and "[" in line and "]" in line:
            app, _, api = line.partition(":")
        else:
            continue
        if app.strip():
            apps.append(app.strip())
        apis.append(re.sub(r"[\[\]]", "", api.strip()).strip())
    return apps, apis


def _ref_call(text: str) -> tuple[str, dict[str, str]] | None:
    m = _REF_CALL.search(text)
    if m is None:
        return None
    name = m["api"].lower()
    name = name.split("_")[1] if "_" in name else name
    args: dict[str, str] = {}
    last = None
    for piece in m["args"].split(", "):
        parts = piece.split("=")
        if len(parts) == 2:
            last = parts[0].strip().lower()
            last = last if last.startswith("#") else "#" + last
            args[last] = parts[1].strip()
        elif len(parts) == 1 and last is not None:
            args[last] = ""
    return name, args


def _same(a: str, b: str) -> bool:
    a, b = a.lower().strip("'"), b.lower().strip("'")
    return a == b or a in b or b in a


def _ref_judge(sample: AppBenchSample, pred_args: dict[str, dict[str, str]],
               gold: list[tuple[str, dict[str, str]]]) -> tuple[list[ArgOutcome], bool]:
    """The judged arguments and whether every gold API (its last line) matched in full."""
    gold_by_api = {name: (i, args) for i, (name, args) in enumerate(gold)}
    aware = {"#" + k: v for k, v in sample.output.user_aware_arguments.items()}
    outcomes, past, complete = [], [], 0
    for api, (index, gold_args) in gold_by_api.items():
        if api not in pred_args:
            continue
        matched = 0
        for key, gold_value in gold_args.items():
            predicted = pred_args[api].get(key)
            status: ArgStatus = "key_error"
            if predicted is not None:
                p = predicted.lower()
                p = "'" + PRED_CORRECTIONS[p.strip("'")] + "'" if p.strip("'") in \
                    PRED_CORRECTIONS else p
                earlier = next((v for k, v in past if k == key), None)
                if _same(gold_value, p) or (key in aware and _same(aware[key], p)):
                    past.append((key, p))
                    status = "ok"
                else:
                    status = "ok" if earlier is not None and _same(earlier, p) else \
                        "value_error"
            matched += status == "ok"
            outcomes.append(ArgOutcome(
                call=index, api=api, key=key.lstrip("#"), status=status,
                kind="dependent" if "'" not in gold_value else "independent",
                gold=gold_value.strip("'\""), predicted=predicted))
        complete += matched == len(gold_args)
    return outcomes, complete == len(gold_by_api)


_REF_TIME_WORDS = {"date", "time", "year", "day"}
_REF_SPACE_WORDS = {"location", "city", "address", "from", "to", "where", "origin",
                    "destination", "airport", "station", "area", "venue"}
_REF_TIME_VALUE = re.compile(r"\s*(\d{4}-\d{1,2}-\d{1,2}|\d{1,2}:\d{2}(\s*[ap]\.?m\.?)?)\s*",
                             re.I)


def _ref_f1(hits: float, n_pred: float, n_gold: float) -> float:
    return 200.0 * hits / (n_pred + n_gold) if n_pred + n_gold else 0.0


def _ref_errors(outcomes: list[ArgOutcome]) -> tuple[dict[str, float], dict[str, Part]]:
    """Table 4 for one sample: a 0/100 flag per error and argument kind; of its value errors,
    how many are time-related (a key word or a date/clock literal) and space-related (a key
    word); of its judged arguments, how many are dependencies."""
    flags = {f"{status}_{kind}": 100.0 * any(o.status == status and o.kind == kind
                                             for o in outcomes)
             for status in ("key_error", "value_error")
             for kind in ("independent", "dependent")}
    wrong = [o for o in outcomes if o.status == "value_error"]
    time = [o for o in wrong if _REF_TIME_WORDS & set(o.key.lower().split("_"))
            or _REF_TIME_VALUE.fullmatch(o.gold)]
    space = [o for o in wrong if _REF_SPACE_WORDS & set(o.key.lower().split("_"))]
    return flags, {
        "value_error_time_share": Part(hits=len(time), total=len(wrong)),
        "value_error_space_share": Part(hits=len(space), total=len(wrong)),
        "dependent_args": Part(hits=sum(o.kind == "dependent" for o in outcomes),
                               total=len(outcomes))}


def _ref_corpus(examples: list[ExampleScore]) -> dict[str, float | None]:
    """The corpus metrics: F1s pooled over the examples' parts, success and the exact matches
    and Table-4 flags averaged over every example (the dependent flags n/a without a judged
    dependency), the time/space shares pooled; n/a where nothing is counted. The graph
    metrics belong to ``strict`` (no example has their parts here): n/a."""
    def parts(name: str, field: str) -> float:
        return math.fsum(getattr(e.parts[name], field) for e in examples if name in e.parts)

    def ratio(num: float, den: float) -> float | None:
        return num / den if den else None

    def mean(key: str) -> float | None:
        if not any(key in e.scores for e in examples):
            return None
        return ratio(math.fsum(e.scores.get(key, 0.0) for e in examples), len(examples))

    out: dict[str, float | None] = {
        f"{kind}_f1": ratio(200.0 * parts(f"{kind}_precision", "hits"),
                            parts(f"{kind}_precision", "total")
                            + parts(f"{kind}_recall", "total")) for kind in ("app", "api")}
    out.update({key: mean(key) for key in ("success", "app_em", "api_em")})
    dependent = parts("dependent_args", "hits")
    for key in ("key_error_independent", "key_error_dependent", "value_error_independent",
                "value_error_dependent"):
        out[key] = None if key.endswith("_dependent") and not dependent else mean(key)
    for key in ("value_error_time_share", "value_error_space_share"):
        out[key] = ratio(100.0 * parts(key, "hits"), parts(key, "total"))
    out.update(node_f1=None, edge_f1=None, graph_em=None, pred_topological=None)
    return out


def _ref_by_scale(examples: list[ExampleScore]) -> list[ScaleCell]:
    """Success per gold (parallel, sequential) scale, the cells in order."""
    cells: dict[tuple[int, float], list[float]] = {}
    for e in examples:
        if "parallel_scale" in e.labels:
            key = (int(e.labels["parallel_scale"]), float(e.labels["sequential_scale"]))
            cells.setdefault(key, []).append(e.scores.get("success", 0.0))
    return [ScaleCell(parallel=p, sequential=q, samples=len(v),
                      success=math.fsum(v) / len(v)) for (p, q), v in sorted(cells.items())]


def _ref_example(sample: AppBenchSample, output: object) -> ExampleScore:
    apps, apis = _ref_read(output)
    names = [c[0] if (c := _ref_call(a)) else "" for a in apis]
    pred_args = {c[0]: c[1] for a in apis if (c := _ref_call(a.replace("\\", "")))}
    gold = [_ref_call(line) for line in sample.output.api_results]
    assert all(g is not None for g in gold)
    gold_calls = [g for g in gold if g is not None]
    used_app = list(sample.output.used_app)
    gold_names = [g[0] for g in gold_calls]
    lower = [a.lower() for a in apps]
    app_hit = 1.0 if set(lower) & {a.lower() for a in used_app} else 0.0
    api_hit = 1.0 if set(names) & set(gold_names) else 0.0
    app_em = bool(apps) and Counter(lower) == Counter(a.lower() for a in used_app)
    api_em = bool(names) and Counter(names) == Counter(gold_names)
    outcomes, args_ok = _ref_judge(sample, pred_args, gold_calls)
    why = [msg for ok, msg in ((app_em, "apps differ from used_app"),
                               (api_em, "API names differ"),
                               (args_ok, "an argument is missing or wrong")) if not ok]
    flags, error_parts = _ref_errors(outcomes)
    parallel, sequential = scales(sample.calls)
    return ExampleScore(
        scores={"success": 100.0 * (app_em and api_em and args_ok),
                "app_f1": _ref_f1(app_hit, len(apps), len(used_app)),
                "api_f1": _ref_f1(api_hit, len(apis), len(gold)),
                "app_em": 100.0 * app_em, "api_em": 100.0 * api_em, **flags},
        parts={"app_precision": Part(hits=app_hit, total=len(apps)),
               "app_recall": Part(hits=app_hit, total=len(used_app)),
               "api_precision": Part(hits=api_hit, total=len(apis)),
               "api_recall": Part(hits=api_hit, total=len(gold)), **error_parts},
        comments={"success": "; ".join(why) or "all apps, APIs and arguments match"},
        labels={"parallel_scale": str(parallel), "sequential_scale": str(sequential),
                "scoring": "paper", "pred_calls": str(len(apis)),
                "unparsed": str(names.count("")), "gold_calls": str(len(sample.calls))},
        error=None, evidence={})


def _ref_report(samples: list[AppBenchSample], outputs: list[str | None], *,
                drop_errors: bool = False) -> AppBenchReport:
    kept = [(s, o) for s, o in zip(samples, outputs, strict=True)
            if not (o is None and drop_errors)]
    examples = [_ref_example(s, o or "") for s, o in kept]

    def parts(name: str, field: str) -> float:
        return math.fsum(getattr(e.parts[name], field) for e in examples if name in e.parts)

    counts = {"samples": len(samples), "scored": len(examples),
              "dropped": len(samples) - len(kept),
              "empty_answers": sum(not isinstance(o, str) or not o.strip() for _, o in kept),
              "unparsed_lines": sum(int(e.labels["unparsed"]) for e in examples),
              "pred_calls": sum(int(e.labels["pred_calls"]) for e in examples),
              "gold_calls": sum(int(e.labels["gold_calls"]) for e in examples),
              "value_error_args": int(parts("value_error_time_share", "total")),
              "value_error_time_args": int(parts("value_error_time_share", "hits")),
              "value_error_space_args": int(parts("value_error_space_share", "hits"))}
    return AppBenchReport(category=samples[0].meta.task if samples[0].meta else None,
                          scoring="paper", metrics=_ref_corpus(examples), counts=counts,
                          by_scale=_ref_by_scale(examples), examples=examples)


# --- answers ------------------------------------------------------------------------------------

def _wrong(sample: AppBenchSample) -> str:
    lines = official_gold_answer(sample).split("\n")
    return re.sub(r"'([^']*)'", lambda m: f"'{m.group(1).upper()}X'", "\n".join(lines[:-1]))


def _perturbed(rng: random.Random, sample: AppBenchSample, pool: list[str]) -> str:
    """The official gold with lines dropped, repeated, shuffled, swapped for another sample's,
    bulleted, upper-cased, with keys renamed, quotes lost, aliases, prose..."""
    out = []
    for line in official_gold_answer(sample).split("\n"):
        r = rng.random()
        if r < 0.1:
            continue
        edits = [lambda x: x.replace("'", "", 2), lambda x: x.upper(),
                 lambda x: re.sub(r"#(\w+)=", lambda m: f"#{m.group(1)[::-1]}=", x, count=1),
                 lambda x: "- **" + x.replace(":", "**:", 1), lambda x: x.replace(" = ", " ", 1),
                 lambda x: rng.choice(pool), lambda x: x.replace("'", "'nyc", 1),
                 lambda x: re.sub(r"=(\w+)\)", "='x')", x), lambda x: x.replace(", #", ",#")]
        if r < 0.8:
            line = edits[int(r * 10) - 1](line)
        out.append(line)
        if rng.random() < 0.1:
            out.append(line)
        if rng.random() < 0.05:
            out.append("Note: [1]\nsome prose: here")
    if rng.random() < 0.2:
        rng.shuffle(out)
    return "\n".join(out)


@pytest.fixture(scope="module")
def data(shared_data: Path) -> dict[str, list[AppBenchSample]]:
    return {c: load_category(shared_data, c) for c in CATEGORIES}


@pytest.mark.parametrize("category", CATEGORIES)
def test_paper_scoring_equals_the_straightforward_computation(
        data: dict[str, list[AppBenchSample]], category: str) -> None:
    samples = data[category]
    rng = random.Random(category)
    pool = [line for s in samples for line in official_gold_answer(s).split("\n")]
    with_gaps: list[str | None] = [_perturbed(rng, s, pool) for s in samples]
    for i in range(0, len(samples), 7):
        with_gaps[i] = None
    for i in range(3, len(samples), 11):
        with_gaps[i] = ""
    perturbed: list[list[str | None]] = [[_perturbed(rng, s, pool) for s in samples]
                                         for _ in range(2)]
    answer_sets: list[list[str | None]] = [
        [official_gold_answer(s) for s in samples], [gold_answer(s) for s in samples],
        [_wrong(s) for s in samples], *perturbed, with_gaps,
        [styled(rng, s, pool) for s in samples]]
    for answers in answer_sets:
        for drop_errors in (False, True):
            want = _ref_report(samples, answers, drop_errors=drop_errors)
            clear_gold_cache()  # the first scoring reads the gold, the second reuses it
            for _ in range(2):
                got = score_appbench(samples, answers, scoring="paper", drop_errors=drop_errors)
                # model_dump (values, types, key order) and the records' states
                assert got.model_dump() == want.model_dump()
                assert list(got.metrics) == list(want.metrics)
                assert [list(e.scores) for e in got.examples] == \
                    [list(e.scores) for e in want.examples]
                assert [e.__getstate__() for e in got.examples] == \
                    [e.__getstate__() for e in want.examples]
                assert [p.__getstate__() for e in got.examples for p in e.parts.values()] == \
                    [p.__getstate__() for e in want.examples for p in e.parts.values()]
            # one example at a time (the runner's path) gives the same records
            assert [score_example(s, a or "", scoring="paper") for s, a in
                    zip(samples, answers, strict=True) if a is not None or not drop_errors
                    ] == got.examples


def test_corpus_sums_equal_the_records_sums(data: dict[str, list[AppBenchSample]]) -> None:
    """The corpus sums added up in the scoring pass give the metrics the score records give
    (every column, n/a included)."""
    for category in ("ss", "mm"):
        samples = data[category]
        rng = random.Random(3)
        pool = [line for s in samples for line in official_gold_answer(s).split("\n")]
        report = score_appbench(samples, [_perturbed(rng, s, pool) for s in samples],
                                scoring="paper")
        assert report.metrics == _ref_corpus(report.examples), category


def test_the_answer_reader_agrees_with_the_plain_patterns() -> None:
    """``str`` searches and backtracking-free patterns in place of the plain ones: the same
    apps, API strings, names and arguments."""
    rng = random.Random(14)
    pieces = ["Hotels", ": [", ":", "[", "]", "(", ")", "#k=", "'", '"', ", ", " = ", "=",
              "searchhouse", "x", "\n", " ", "\t", "\r", "\u00a0", "\u2028", "\x1c", "Book_X",
              "_", "#", ",", "==", "((", "\\", "a_b_c", "- **", "\u0663", "\u00e9"]
    for _ in range(20000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 25)))
        assert read_answer(text) == _ref_read(text), text
        for api in [text, *read_answer(text)[1]]:
            assert extract_call(api) == _ref_call(api), api


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_the_answer_reader_agrees_on_arbitrary_text(text: str) -> None:
    assert read_answer(text) == _ref_read(text)
    assert extract_call(text) == _ref_call(text)


def test_gold_scales_equal_the_dependency_dag(data: dict[str, list[AppBenchSample]]) -> None:
    for samples in data.values():
        for sample in samples:
            gold = paper_gold(sample)
            assert (gold.parallel, gold.sequential) == scales(sample.calls)
    assert plan_scales([]) == (0, 0.0)


_NAMES = st.sampled_from(["a", "b", "name", "city", "True", "none", "x_1"])
_VALUES = st.one_of(_NAMES, st.sampled_from(["'Paris'", "'a, b'", "'x=y'", "'it''s'", "''",
                                             "'a, #b=c'", "\"q\"", "'(1)'", "2", "'NYC'"]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.lists(_NAMES, min_size=1, max_size=3), st.lists(
    st.tuples(_NAMES, _VALUES), max_size=4)), min_size=1, max_size=5))
def test_gold_scales_equal_the_dependency_dag_on_odd_lines(
        plan: list[tuple[list[str], list[tuple[str, str]]]]) -> None:
    """Lines outside the canonical shape (a quoted ``,`` or ``=``, repeated keys, unquoted
    booleans) are read by the official-line parser: the scales still equal the DAG's. (Every
    gold line returns something: the official reading finds no API in a line that does not,
    and such a gold cannot be scored -- see the test below.)"""
    lines = [(f"{', '.join(returns)} = " if returns else "")
             + f"f{i}(" + ", ".join(f"#{k}={v}" for k, v in args) + ")"
             for i, (returns, args) in enumerate(plan)]
    sample = AppBenchSample(input="q", output=AppBenchOutput(
        used_app=["Weather"] * len(lines), used_api=[{}] * len(lines),
        result_arguments=[[]] * len(lines), api_results=lines, middle_arguments=[],
        user_aware_arguments={}))
    gold = paper_gold(sample)
    assert (gold.parallel, gold.sequential) == scales(sample.calls)


def test_a_changed_gold_is_read_again_and_a_broken_one_fails(
        data: dict[str, list[AppBenchSample]]) -> None:
    sample = data["sm"][9].model_copy(deep=True)
    answer = official_gold_answer(sample)
    assert score_example(sample, answer, scoring="paper").scores["success"] == 100.0
    sample.output.user_aware_arguments.clear()  # the gold is kept per content, not per object
    sample.output.api_results[0] = re.sub(r"='[^']*'", "='zzz'", sample.output.api_results[0],
                                          count=1)
    assert score_example(sample, answer, scoring="paper") == _ref_example(sample, answer)
    assert score_example(sample, answer, scoring="paper").scores["success"] == 0.0

    for line in ("not a call", "findtrains(#to='A')"):  # no call the official reading finds
        bad = AppBenchSample.model_construct(input="q", output=AppBenchOutput.model_construct(
            **{**sample.output.model_dump(), "api_results": [line]}))
        error = score_example(bad, answer, scoring="paper").error
        assert error is not None and "has no `name = api(...)` call" in error
    broken = AppBenchSample.model_construct(input="q", output=AppBenchOutput.model_construct(
        **{**sample.output.model_dump(), "api_results": ["not a call"]}))
    r = score_example(broken, answer, scoring="paper")
    assert r.error is not None and "could not score: ValueError" in r.error
    assert "node_recall" not in r.parts and r.parts["api_recall"].total == 1
    # in a corpus: the failure keeps its denominators, the others are scored as usual
    good = data["sm"][:3]
    report = score_appbench([*good, broken], [*(official_gold_answer(s) for s in good), answer],
                            scoring="paper")
    assert report.examples[3].error == r.error
    want = [_ref_example(s, official_gold_answer(s)) for s in good] + [r]
    assert report.metrics == _ref_corpus(want) and report.examples == want
    assert report.by_scale == _ref_by_scale(want)
