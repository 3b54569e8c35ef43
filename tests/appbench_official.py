"""The official AppBench scorer, run as published, for parity tests.

The functions are read at test time from the user's fetched copy of the upstream repository
(``<data>/appbench/code/appbench/{utils,evaluation}.py``, the ``scorer`` group of
``tooleval data fetch appbench``): nothing of them is copied here. Only the functions the
official driver (``code/appbench/test.py``) uses to score are compiled -- ``discompose_app_api``
and ``extract_name_params`` of ``utils.py``, ``Evaluation.get_appbench_analysis`` and
``compute_f1_direct`` of ``evaluation.py`` -- so their imports (an OpenAI client, rouge, nltk)
are not needed. The official driver's steps: the model's text -> ``discompose_app_api`` ->
``{"decided_app", "decided_api"}`` -> ``get_appbench_analysis`` over the kept samples.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from appbench_answers import answer_sets
from helpers import REQUIRE_SHARED_DATA

from tooleval_agents.appbench.loaders import load_category
from tooleval_agents.evaluators.appbench.scoring import score_appbench

CODE = Path("appbench", "code", "appbench")
FETCH = "tooleval data fetch appbench --include 'code/appbench/*.py'"


def _functions(path: Path, names: set[str], cls: str | None = None) -> list[ast.stmt]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    if cls is None:
        return [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in names]
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    node.body = [n for n in node.body if isinstance(n, ast.FunctionDef) and n.name in names]
    node.bases, node.keywords, node.decorator_list = [], [], []
    return [node]


class PerSample(NamedTuple):
    """One answer's official numbers: the parts of the pooled F1s and ``complete_match``."""

    app_hits: int
    pred_apps: int
    gold_apps: int
    api_hits: int
    pred_apis: int
    gold_apis: int
    complete_match: int


class Official:
    """The official scoring functions of one fetched copy."""

    def __init__(self, data_dir: Path) -> None:
        code = data_dir / CODE
        body = [*_functions(code / "utils.py", {"discompose_app_api", "extract_name_params"}),
                *_functions(code / "evaluation.py",
                            {"compute_f1_direct", "get_appbench_analysis"}, "Evaluation")]
        module = ast.fix_missing_locations(ast.Module(body=body, type_ignores=[]))
        namespace: dict[str, Any] = {"re": re, "print": lambda *_, **__: None,
                                     "__name__": "appbench_official"}
        exec(compile(module, str(code), "exec"), namespace)  # the upstream scorer, as is
        self.discompose_app_api: Callable[[str], tuple[list[str], list[str]]] = \
            namespace["discompose_app_api"]
        self.extract_name_params: Callable[[str], dict[str, Any] | None] = \
            namespace["extract_name_params"]
        self._evaluation = namespace["Evaluation"]()
        self._test: dict[str, list[dict[str, Any]]] = {}
        self._data_dir = data_dir

    def records(self, category: str) -> list[dict[str, Any]]:
        """The raw test records of a category, as the official driver reads them."""
        if category not in self._test:
            path = self._data_dir / "appbench" / "data" / "test" / f"test_{category}.json"
            self._test[category] = json.loads(path.read_text(encoding="utf-8"))
        return self._test[category]

    def prediction(self, answer: str) -> dict[str, Any]:
        """What the official driver stores for a model's answer (``MetaAgent``)."""
        apps, apis = self.discompose_app_api(answer)
        return {"decided_app": apps, "decided_api": apis}

    def analysis(self, records: Sequence[dict[str, Any]],
                 answers: Sequence[str]) -> dict[str, float]:
        """``get_appbench_analysis`` of the answers (fractions 0-1, as it returns them)."""
        results = [{"input": r["input"], "output": r["output"], "prediction": self.prediction(a)}
                   for r, a in zip(records, answers, strict=True)]
        out: dict[str, float] = self._evaluation.get_appbench_analysis(results)
        return out

    def corpus(self, records: Sequence[dict[str, Any]],
               answers: Sequence[str]) -> dict[str, float] | None:
        """The official app F1, API F1 and success (``complete_match``) of a set of answers,
        0-100 under our names; ``None`` where the official script divides by zero (no app or
        no API predicted in the whole set)."""
        try:
            out = self.analysis(records, answers)
        except ZeroDivisionError:
            return None
        return {"app_f1": 100 * out["app_hit_f1"], "api_f1": 100 * out["api_hit_f1"],
                "success": 100 * out["complete_match"]}

    def per_sample(self, record: dict[str, Any], answer: str) -> PerSample:
        """The official numbers of one answer, read back from ``get_appbench_analysis`` of
        the answer beside a helper (SS sample 0 answered with its gold line: one app, one API,
        one hit each, a complete match), so that no denominator is 0 (the official script
        divides by zero when nothing was predicted): hits = F1 x (pred + gold) / 2."""
        helper = self.records("ss")[0]
        helper_answer = f"{helper['output']['used_app'][0]}: [{helper['output']['api_results'][0]}]"
        out = self.analysis([record, helper], [answer, helper_answer])
        apps, apis = self.discompose_app_api(answer)
        gold_apps, gold_apis = len(record["output"]["used_app"]), len(
            record["output"]["api_results"])

        def hits(f1: float, pred: int, gold: int) -> int:
            return round(f1 * (pred + 1 + gold + 1) / 2) - 1

        return PerSample(hits(out["app_hit_f1"], len(apps), gold_apps), len(apps), gold_apps,
                         hits(out["api_hit_f1"], len(apis), gold_apis), len(apis), gold_apis,
                         round(2 * out["complete_match"] - 1))


def paper_numbers(report: Any) -> list[PerSample]:
    """The same numbers of each example of a ``score_appbench(..., scoring="paper")`` report:
    the parts behind app and API F1, and success."""
    out = []
    for e in report.examples:
        p = e.parts
        out.append(PerSample(int(p["app_precision"].hits), int(p["app_precision"].total),
                             int(p["app_recall"].total), int(p["api_precision"].hits),
                             int(p["api_precision"].total), int(p["api_recall"].total),
                             int(e.scores["success"] == 100.0)))
    return out


def digest(value: Any) -> str:
    """sha256 of a JSON value (answers, per-answer numbers) for the recorded fixture."""
    return hashlib.sha256(json.dumps(value, ensure_ascii=False).encode("utf-8")).hexdigest()


@cache
def _load(data_dir: Path) -> Official:
    return Official(data_dir)


def official_scorer(shared_data: Path) -> Official:
    """The official functions of the fetched copy under ``shared_data``. Where they are absent
    the test skips with the command that fetches them -- or fails, where
    ``TOOLEVAL_REQUIRE_SHARED_DATA`` is set (CI: the shared copy holds them)."""
    if not all((shared_data / CODE / name).is_file() for name in ("utils.py", "evaluation.py")):
        message = (f"the official AppBench scorer is not in {shared_data / CODE} (get it with "
                   f"`{FETCH}`)")
        if REQUIRE_SHARED_DATA:
            pytest.fail(message + "; TOOLEVAL_REQUIRE_SHARED_DATA is set, so this is an error")
        pytest.skip(message)
    return _load(shared_data)


class Comparison(NamedTuple):
    """One answer set's comparison with the official scorer."""

    name: str
    """The answer set (``appbench_answers.answer_sets``)."""
    answers: list[str]
    differ: list[tuple[int, PerSample, PerSample]]
    """``(index, ours, official)`` of each answer whose numbers differ."""
    official: list[PerSample]
    """The official numbers of each answer."""
    corpus: dict[str, float] | None
    """The official corpus app F1, API F1 and success (``None``: it divides by zero)."""
    ours: dict[str, float | None]
    """Ours, under the same names."""

    @property
    def corpus_differs(self) -> bool:
        return self.corpus is not None and any(
            abs((self.ours[k] or 0.0) - v) > 1e-9 for k, v in self.corpus.items())


def compare_category(official: Official, data_dir: Path, category: str) -> list[Comparison]:
    """Every answer set of a category (the gold, wrong values, ``noisy-reference``
    corruptions, the shapes real models wrote) scored by ``--scoring paper`` and by the
    official functions, answer by answer and as a corpus."""
    samples, raw = load_category(data_dir, category), official.records(category)
    out = []
    for name, answers in answer_sets(samples, seed=category):
        report = score_appbench(samples, answers, scoring="paper")
        ours = paper_numbers(report)
        want = [official.per_sample(r, a) for r, a in zip(raw, answers, strict=True)]
        out.append(Comparison(
            name=name, answers=answers, official=want,
            differ=[(i, g, w) for i, (g, w) in enumerate(zip(ours, want, strict=True))
                    if g != w],
            corpus=official.corpus(raw, answers),
            ours={k: report.metrics[k] for k in ("app_f1", "api_f1", "success")}))
    return out

