"""Plan-graph metrics: node/edge F1, graph exact match, valid order, success by gold scale."""

from __future__ import annotations

from pathlib import Path

import pytest

from tooleval_agents.appbench.depgraph import scales
from tooleval_agents.appbench.lines import parse_call_line
from tooleval_agents.appbench.loaders import load_category
from tooleval_agents.appbench.records import AppCall
from tooleval_agents.contracts import ExampleScore
from tooleval_agents.evaluators.appbench.graph_metrics import (
    aggregate_graph,
    graph_scores,
    node_label,
)
from tooleval_agents.evaluators.appbench.parse import gold_answer, normalise_call, parse_answer
from tooleval_agents.evaluators.appbench.scoring import score_appbench


def _calls(*lines: str) -> list[AppCall]:
    return [normalise_call(parse_call_line(line)) for line in lines]


GOLD = _calls("Restaurants: [name, city = findrestaurants(#city='Paris')]",
              "Restaurants: [ok = reserverestaurant(#name=name, #time='19:00')]",
              "Weather: [temp = getweather(#city=city)]",
              "Hotels: [house = searchhouse(#where_to='Rome')]")


def test_labels_are_app_dot_api() -> None:
    assert [node_label(c) for c in GOLD] == ["restaurants.findrestaurants",
                                             "restaurants.reserverestaurant",
                                             "weather.getweather", "hotels.searchhouse"]
    assert node_label(parse_call_line("x = getweather(#city='Paris')")) == "?.getweather"


def test_identical_plan_scores_100() -> None:
    r = graph_scores(GOLD, GOLD)
    assert r.scores == {"node_f1": 100.0, "edge_f1": 100.0, "graph_em": 100.0,
                        "pred_topological": 100.0}
    # Gold: one component of 3 (find -> reserve, find -> weather) and one single call.
    assert (r.labels["parallel_scale"], r.labels["sequential_scale"]) == ("2", "2.0")


def test_reordering_independent_calls_keeps_the_graph() -> None:
    r = graph_scores([GOLD[3], GOLD[0], GOLD[1], GOLD[2]], GOLD)
    assert r.scores["graph_em"] == r.scores["edge_f1"] == r.scores["pred_topological"] == 100


def test_dependency_before_its_source_loses_the_edge_and_the_order() -> None:
    r = graph_scores([GOLD[1], GOLD[0], GOLD[2], GOLD[3]], GOLD)
    assert r.scores["node_f1"] == 100.0
    assert r.scores["edge_f1"] == pytest.approx(2 * 1 / (1 + 2) * 100)  # P = 1/1, R = 1/2
    assert r.scores["graph_em"] == 0 and r.scores["pred_topological"] == 0


def test_extra_and_missing_calls_move_node_precision_and_recall() -> None:
    extra = graph_scores([*GOLD, *_calls("Hotels: [b = bookhouse(#house=house)]")], GOLD)
    assert extra.parts["node_precision"].hits == 4 and extra.parts["node_precision"].total == 5
    assert extra.parts["edge_precision"].total == 3 and extra.parts["edge_recall"].total == 2
    assert extra.scores["graph_em"] == 0
    missing = graph_scores(GOLD[:2], GOLD)
    assert missing.parts["node_recall"].hits == 2 and missing.parts["node_recall"].total == 4
    assert graph_scores([], GOLD).scores["pred_topological"] == 0  # empty answers get no credit


def test_wrong_app_changes_the_labels() -> None:
    wrong = [GOLD[0].model_copy(update={"app": "hotels"}), *GOLD[1:]]
    r = graph_scores(wrong, GOLD)
    assert r.scores["node_f1"] == pytest.approx(75.0) and r.scores["graph_em"] == 0


def test_corpus_f1_is_pooled_and_edgeless_corpora_are_not_applicable() -> None:
    singles = [graph_scores(GOLD[3:], GOLD[3:]), graph_scores([], GOLD[3:])]
    agg = aggregate_graph(singles)
    assert agg["edge_f1"] is None  # no edges anywhere: nothing to count, neither 0 nor 100
    assert all("edge_f1" not in s.scores and "n/a" in s.comments["edge_f1"] for s in singles)
    assert agg["node_f1"] == pytest.approx(2 * 1 / (1 + 2) * 100)  # 1 hit, 1 pred, 2 gold
    assert agg["graph_em"] == 50.0
    assert aggregate_graph([]) == {"node_f1": None, "edge_f1": None, "graph_em": None,
                                   "pred_topological": None}
    assert isinstance(singles[0], ExampleScore)


def test_success_by_gold_scale_matches_the_gold_dags(shared_data: Path) -> None:
    samples = load_category(shared_data, "ms")
    outputs = [gold_answer(s) if i % 2 else "" for i, s in enumerate(samples)]
    report = score_appbench(samples, outputs)
    for cell in report.by_scale:
        members = [i for i, s in enumerate(samples)
                   if scales(s.calls) == (cell.parallel, cell.sequential)]
        assert cell.samples == len(members)
        assert cell.success == pytest.approx(100 * sum(i % 2 for i in members) / len(members))
    assert sum(c.samples for c in report.by_scale) == len(samples)


def test_gold_answers_reproduce_the_gold_graphs(shared_data: Path) -> None:
    for sample in load_category(shared_data, "mm"):
        pred = [normalise_call(c) for c in parse_answer(gold_answer(sample)).calls]
        r = graph_scores(pred, [normalise_call(c) for c in sample.calls])
        assert r.scores["graph_em"] == r.scores["node_f1"] == r.scores["edge_f1"] == 100
