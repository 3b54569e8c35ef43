"""Time re-scoring the 12 published UltraTool prediction files: ours against the official scorer.

Usage: ``python benchmarks/rescore_ultratool.py [DATA_DIR] [--repeat N] [--python-levenshtein]``
(default ``../shared/data``, N = 5). Each figure is the best of N runs in CPU time
(``time.process_time``: the same as wall time on an idle machine, steadier on a shared one).

The 12 files are ``planning``, ``tool_usage_awareness`` and ``tool_usage`` for GPT-3.5 and
GPT-4 in both languages (the zh GPT-3.5 ``tool_creation`` file has no recorded judgments).

* **ours**: :func:`tooleval_agents.evaluators.ultratool.scoring.score_task` with the default robust
  parser and with ``parser="official"``; planning = the judge's replay
  (:func:`tooleval_agents.evaluators.ultratool.judge.ultratool_judge`) of the recorded judgments
  file (judge metrics and the structure metrics of the judged plans), and its judge metrics alone
  (what the official computes).
* **OFFICIAL**: the official scorer (JoeYing1019/UltraTool ``evaluation/utils.py``,
  ``planning.py``, commit 9f3793c) re-written step for step for timing: its ``read_data``, its
  text edits, its per-sample ``eval()`` of the cleaned answer and of each fallback variant, tried
  lazily in its order, its per-step matching loops, ``np.mean`` per step and the Levenshtein
  distance its ``textdistance`` call runs. With the versions its requirements.txt pins
  (textdistance 4.6.1, and jiwer 3.0.3, which requires rapidfuzz), textdistance hands the
  distance to rapidfuzz after its own Python dispatch; ``--python-levenshtein`` times
  textdistance's pure-Python fallback instead (an environment without rapidfuzz). Metric values
  are printed next to ours and must equal ``parser="official"``. ``eval()`` runs here only,
  on the published files, as the official approach being timed (without builtins).

Reading: the key-value rows are read once, outside the timings, with the official
``read_data`` (``json.loads`` per line), and both sides score them from memory ("scoring"); the
"with reading" figures add that same reading time to both sides. The planning timings include
reading on both sides (both take the judgments file path: the official averages 7 recorded
numbers per line, ours re-reads each judgment and computes the structure metrics too).
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import numpy as np
from rapidfuzz.distance import Levenshtein as RapidfuzzLevenshtein

from tooleval_agents.evaluators.parsing import official_text
from tooleval_agents.evaluators.ultratool.judge import ultratool_judge
from tooleval_agents.evaluators.ultratool.judge.judge import (
    aggregate_planning,
    planning_example_score,
)
from tooleval_agents.evaluators.ultratool.judge.replay import read_judgments
from tooleval_agents.evaluators.ultratool.scoring import score_task
from tooleval_agents.ultratool.records import Lang, UltraToolTask

LANGS: dict[Lang, str] = {"en": "English-dataset", "zh": "Chinese-dataset"}
MODELS = ("gpt-3.5", "gpt-4")
KV_TASKS: tuple[UltraToolTask, ...] = ("tool_usage_awareness", "tool_usage")
Family = Literal["aware", "param"]


# --- the official scorer, re-written for timing -----------------------------------------------

def read_data(path: Path) -> list[dict[str, Any]]:
    """The official reader: ``json.loads`` of every line."""
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh.readlines()]


_EVAL_GLOBALS: dict[str, Any] = {"__builtins__": {}}


def official_eval(text: str) -> Any:
    """The official scorer's ``eval()`` of a model answer: the only ``eval`` in this project,
    kept here to time the official approach on the published files. Builtins are withheld and
    text with a dunder is refused (no published answer has one), which changes no result."""
    if "__" in text:
        raise ValueError("refused: dunder in the answer")
    return eval(text, _EVAL_GLOBALS)


_SWAPS: tuple[tuple[str, str], ...] = (
    ("{'", '{"'), ("'}", '"}'), ("', '", '", "'), ("\", '", '\", "'), ("', \"", '", "'),
    ("': '", '": "'), ("': \"", '": "'), ('": \'', '": "'), ("': {", '": {'), ("['", "["),
    ("']", "]"), (", '", ', "'), ("'),", ')",'))
_AWARE_SWAPS = (*_SWAPS, ('""None""', '"None"'), ('"{step', '{"step'), ("')}", ')"}'))
_PARAM_SWAPS = (*_SWAPS, ("': ", '": '), ("', {", '", {'), ("')}", ')"}'), ('}}," {', "}}, {"),
                ('""None""', '"None"'))


def _replace_all(text: str, edits: tuple[tuple[str, str], ...]) -> str:
    for old, new in edits:
        text = text.replace(old, new)
    return text


def _cut_at(t: str, marker: str) -> str:
    at = t.rfind(marker)
    if at == -1 or "[" not in t:
        raise ValueError("no complete item")
    return t[:at + len(marker) - 1] + "]"


def _aware_variants(t: str) -> Iterator[Callable[[], str]]:
    """The texts the official awareness collector evaluates, in its order, built lazily."""
    yield lambda: t
    yield lambda: t[:-1] + "}" + t[-1]
    yield lambda: t[:-1] + '"}' + t[-1]
    yield lambda: _cut_at(t, "},")
    yield lambda: _replace_all(t, _AWARE_SWAPS)


def _param_variants(t: str) -> Iterator[Callable[[], str]]:
    """The texts the official tool-usage collector evaluates, in its order, built lazily."""
    one = lambda: t[:-1] + "}" + t[-1]  # noqa: E731
    minus = lambda: t[:-2] + t[-1]  # noqa: E731
    swapped = lambda: _replace_all(t, _PARAM_SWAPS)  # noqa: E731
    yield lambda: t
    yield one
    yield lambda: one()[:-1] + "}" + one()[-1]
    yield lambda: t.replace('"}, {"step', '"}}, {"step')
    yield lambda: t[:-1] + '"}' + t[-1]
    yield lambda: t[:-1] + "]}}" + t[-1]
    yield minus
    yield lambda: minus()[:-2] + minus()[-1]
    yield lambda: t.replace("}}}", "}}")
    yield lambda: _cut_at(t, "}},")
    yield swapped
    yield lambda: swapped().replace("}}}", "}}")
    yield lambda: swapped()[:-1] + "]}}" + swapped()[-1]


def official_parse(answer: Any, family: Family) -> tuple[bool, Any]:
    """``(parsed, value)`` as the official collectors get them: the first variant that
    ``eval()`` accepts; ``(False, [])`` (a bad-JSON answer) when none does."""
    if not isinstance(answer, str):
        return False, []
    t = official_text(answer, family)  # its edits and cut, ours being the same steps
    variants = _aware_variants(t) if family == "aware" else _param_variants(t)
    for make in variants:
        try:
            return True, official_eval(make())
        except Exception:
            continue
    return False, []


def official_awareness(rows: list[dict[str, Any]]) -> dict[str, float]:
    """``collect_pred_golden_for_aware`` + ``cal_acc_for_aware`` (x100, unrounded)."""
    preds = [official_parse(r["init output"], "aware")[1] for r in rows]
    goldens = [r["data"]["reference"] for r in rows]
    p_values, g_values = [], []
    for pred, golden in zip(preds, goldens, strict=True):
        p_value, g_value = [], []
        for g in golden:
            g_name = g["step"]
            g_value.append(int(g["tool"]))
            found = False
            if type(pred) is list:
                for p in pred:
                    try:
                        if p["step"].split(" ")[0] == g_name.split(" ")[0]:
                            p_value.append(int(p["tool"]))
                            found = True
                            break
                    except Exception:
                        pass
            if not found:
                p_value.append(0 if int(g["tool"]) == 1 else 1)
        p_values.append(p_value)
        g_values.append(g_value)
    list_accuracy = sum([p == g for p, g in zip(p_values, g_values, strict=True)]) / len(g_values)
    flat_p = [x for sub in p_values for x in sub]
    flat_g = [x for sub in g_values for x in sub]
    # sklearn's accuracy_score upstream: the same mean, after input checks not timed here.
    element_accuracy = float(np.mean(np.asarray(flat_p) == np.asarray(flat_g)))
    return {"tool_usage_awareness_global": 100 * list_accuracy,
            "tool_usage_awareness_local": 100 * element_accuracy}


class _ExternalLibrary:
    """textdistance's handle on an external implementation (rapidfuzz here)."""

    func: Callable[..., int] | None = None

    def check_conditions(self, obj: object, *sequences: str) -> bool:
        return len(sequences) == 2  # "external libs can compare only 2 strings"

    def get_function(self) -> Callable[..., int] | None:
        if self.func is None:
            self.func = RapidfuzzLevenshtein.distance
        return self.func

    def prepare(self, *sequences: str) -> tuple[str, ...]:
        return sequences


class TextdistanceLevenshtein:
    """What ``textdistance.levenshtein.normalized_distance`` (4.6.1) runs, call for call: its
    Python dispatch (``maximum``, ``_get_sequences``, ``quick_answer``, the external-library
    lookup under ``contextlib.suppress``), then rapidfuzz; with ``external=False`` its
    pure-Python ``_cycled`` loop (first row a numpy range, as with numpy installed).
    Timed against textdistance 4.6.1 itself on sample pairs, it costs the same or slightly less
    (about 2 us per call through rapidfuzz, 95-140 us on the pure-Python path)."""

    def __init__(self, external: bool = True) -> None:
        self.qval = 1
        self.external = external
        self.test_func = self._ident
        self.libs: dict[str, list[_ExternalLibrary]] = {"Levenshtein": [_ExternalLibrary()]}

    @staticmethod
    def _ident(*elements: object) -> bool:
        return len(set(elements)) == 1

    @staticmethod
    def maximum(*sequences: str) -> int:
        return max(map(len, sequences))

    def normalized_distance(self, *sequences: str) -> float:
        maximum = self.maximum(*sequences)
        if maximum == 0:
            return 0
        return self.distance(*sequences) / maximum

    def distance(self, *sequences: str) -> int:
        return self(*sequences)

    def _get_sequences(self, *sequences: str) -> list[str]:
        return list(sequences)  # qval=1: compare characters

    def __call__(self, s1: str, s2: str) -> int:
        s1, s2 = self._get_sequences(s1, s2)
        result = self.quick_answer(s1, s2)
        if result is not None:
            return result
        return self._cycled(s1, s2)

    def quick_answer(self, *sequences: str) -> int | None:
        if not sequences or len(sequences) == 1 or self._ident(*sequences):
            return 0
        if not all(sequences):
            return self.maximum(*sequences)
        return self.external_answer(*sequences)

    def external_answer(self, *sequences: str) -> int | None:
        if not getattr(self, "external", False):
            return None
        if getattr(self, "test_func", self._ident) is not self._ident:
            return None
        for lib in self.libs.get("Levenshtein", []):
            if not lib.check_conditions(self, *sequences):
                continue
            func = lib.get_function()
            if func is None:
                continue
            prepared = lib.prepare(*sequences)
            with contextlib.suppress(Exception):
                return func(*prepared)
        return None

    def _cycled(self, s1: str, s2: str) -> int:
        rows, cols = len(s1) + 1, len(s2) + 1
        cur: Any = np.arange(cols)
        for r in range(1, rows):
            prev, cur = cur, [r] + [0] * (cols - 1)
            for c in range(1, cols):
                deletion = prev[c] + 1
                insertion = cur[c - 1] + 1
                dist = self.test_func(s1[r - 1], s2[c - 1])
                edit = prev[c - 1] + (not dist)
                cur[c] = min(edit, deletion, insertion)
        return int(cur[-1])


def official_usage(rows: list[dict[str, Any]],
                   levenshtein: TextdistanceLevenshtein) -> dict[str, float]:
    """``collect_pred_golden_for_param`` + ``cal_param_res`` (x100, unrounded)."""
    preds = [official_parse(r["init output"], "param")[1] for r in rows]
    goldens = [r["data"]["reference"] for r in rows]
    res_list: list[list[Any]] = []
    for pred, golden in zip(preds, goldens, strict=True):
        if isinstance(pred, list) and len(pred) > 0 and isinstance(pred[0], list):
            pred = pred[0]
        tmp_res: list[Any] = []
        for g in golden:
            g_name, g_params = g["step"], g["param"]
            flag_step = False
            for p in pred:
                if p == Ellipsis or type(p) is not dict or len(p) == 0 \
                        or "step" not in p.keys() or "param" not in p.keys():  # noqa: SIM118
                    continue
                p_name = p["step"]
                if type(p_name) is str and p_name.split(" ")[0] == g_name.split(" ")[0]:
                    flag_step = True
                    p_params = p["param"]
                    tmp_score = []
                    for g_key, g_value in g_params.items():
                        flag_key = False
                        if not isinstance(p_params, dict):
                            continue
                        for p_key, p_value in p_params.items():
                            if isinstance(p_key, str) and "\\_" in p_key:
                                p_key = p_key.replace("\\_", "_")
                            if isinstance(p_value, str) and "\\_" in p_value:
                                p_value = p_value.replace("\\_", "_")
                            if p_key == g_key:
                                flag_key = True
                                if len(g_value) == 0:
                                    score = 1.0 if len(p_value) == 0 else 0.0
                                else:
                                    score = 1 - levenshtein.normalized_distance(
                                        str(g_value), str(p_value))
                                tmp_score.append(float(score))
                                break
                        if not flag_key:
                            tmp_score.append(0.0)
                    tmp_res.append(np.mean(tmp_score) if tmp_score else 0.0)
                    break
            if not flag_step:
                tmp_res.append(0.0)
        res_list.append(tmp_res or [0.0])
    _ = [np.mean(sub) for sub in res_list]  # computed (and unused) upstream
    flat = [x for sub in res_list for x in sub]
    return {"tool_usage": 100 * float(np.mean(flat))}


PLANNING_KEYS: dict[Lang, tuple[str, ...]] = {
    "en": ("Accuracy Score", "Completeness Score", "Executability Score",
           "Syntactic Soundness Score", "Structural Rationality Score", "Efficiency Score",
           "Overall Score"),
    "zh": ("准确性分数", "完整性分数", "可执行性分数", "语法健全性分数", "结构合理性分数",
           "高效性分数", "总分"),
}


def official_planning(path: Path, lang: Lang) -> dict[str, float]:
    """``planning.py``: read the judgments, average each of the 7 recorded scores (x10; the
    official prints them /10)."""
    rows = read_data(path)
    lists: list[list[Any]] = [[] for _ in PLANNING_KEYS[lang]]
    for row in rows:
        judged = row["eval"]
        for i, key in enumerate(PLANNING_KEYS[lang]):
            lists[i].append(judged[i][key])
    means = [round(float(np.mean(values)) / 10, 4) for values in lists]
    return {"planning": float(np.mean(lists[-1])) * 10, "planning_overall_rounded": means[-1]}


def ours_planning_judge_only(path: Path) -> dict[str, float | None]:
    """Our replay without the structure metrics (what the official computes): every recorded
    judgment re-read and checked, then the means."""
    entries = read_judgments(path, "planning")
    return aggregate_planning([planning_example_score(e.judgment) for e in entries])


# --- timing -----------------------------------------------------------------------------------

def _best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Best CPU time of ``repeat`` runs (process time: the machine may be shared)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        result = fn()
        best = min(best, time.process_time() - start)
    return best, result


def _fmt(metrics: dict[str, float], names: tuple[str, ...]) -> str:
    return " / ".join(f"{metrics[n]:.2f}" for n in names if n in metrics)


def _ratio(official: float, ours: float) -> str:
    return f"{official / ours:.1f}x" if ours else "-"


def _print_totals(ours: dict[str, float], theirs: dict[str, float],
                  read: dict[str, float]) -> None:
    print("\nplanning columns: ours = replay_planning (judge metrics + structure metrics), "
          "then judge metrics only; both sides read the file")
    kv_ours = ours["aware"] + ours["usage"]
    kv_theirs = theirs["aware"] + theirs["usage"]
    kv_read = read["aware"] + read["usage"]
    for kind, label in (("aware", "4 awareness files"), ("usage", "4 tool-usage files")):
        print(f"{label:20} scoring only: ours {ours[kind]:.2f} s (robust), "
              f"{ours[kind + '_official']:.2f} s (official parser); OFFICIAL "
              f"{theirs[kind]:.2f} s -> {_ratio(theirs[kind], ours[kind])} "
              f"({_ratio(theirs[kind], ours[kind + '_official'])} official parser); with "
              f"reading ({read[kind]:.2f} s) on both sides "
              f"{_ratio(theirs[kind] + read[kind], ours[kind] + read[kind])}")
    print(f"{'8 key-value files':20} scoring only: ours {kv_ours:.2f} s, OFFICIAL "
          f"{kv_theirs:.2f} s -> {_ratio(kv_theirs, kv_ours)}; with reading on both sides "
          f"{_ratio(kv_theirs + kv_read, kv_ours + kv_read)}")
    print(f"{'4 planning files':20} reading included: ours {ours['planning']:.2f} s "
          f"({ours['planning_judge']:.2f} s judge metrics only), OFFICIAL "
          f"{theirs['planning']:.2f} s -> {_ratio(theirs['planning'], ours['planning'])} "
          f"({_ratio(theirs['planning'], ours['planning_judge'])})")
    all_theirs = kv_theirs + kv_read + theirs["planning"]
    for name, plan in (("with structure metrics", ours["planning"]),
                       ("judge metrics only", ours["planning_judge"])):
        all_ours = kv_ours + kv_read + plan
        print(f"{'all 12 files':20} reading included, planning {name}: ours {all_ours:.2f} s, "
              f"OFFICIAL {all_theirs:.2f} s -> {_ratio(all_theirs, all_ours)}")


def main() -> None:
    argv = sys.argv[1:]
    repeat = int(argv[argv.index("--repeat") + 1]) if "--repeat" in argv else 5
    if "--repeat" in argv:
        del argv[argv.index("--repeat"):argv.index("--repeat") + 2]
    python_lev = "--python-levenshtein" in argv
    args = [a for a in argv if not a.startswith("--")]
    data = Path(args[0]) if args else Path(__file__).resolve().parents[2] / "shared" / "data"
    levenshtein = TextdistanceLevenshtein(external=not python_lev)
    lev_repeat = 1 if python_lev else repeat
    ours = dict.fromkeys(("aware", "usage", "aware_official", "usage_official", "planning",
                          "planning_judge"), 0.0)
    theirs = dict.fromkeys(("aware", "usage", "planning"), 0.0)
    read = dict.fromkeys(("aware", "usage"), 0.0)
    print(f"OFFICIAL = the official scorer re-written for timing, its Levenshtein through "
          f"{'textdistance pure Python' if python_lev else 'textdistance -> rapidfuzz'}; "
          f"CPU seconds, best of {repeat}")
    print(f"\n{'file':38} {'ours':>6} {'ours':>8} {'OFFICIAL':>8} {'ratio':>6} {'read':>6} "
          f"{'ratio':>7}  metrics: ours official | OFFICIAL")
    print(f"{'':38} {'robust':>6} {'official':>8} {'':>8} {'':>6} {'':>6} {'w/ read':>7}")
    for lang, lang_dir in LANGS.items():
        for model in MODELS:
            folder = data / "ultratool" / "predictions" / lang_dir / model
            for task in KV_TASKS:
                kind = "aware" if task == "tool_usage_awareness" else "usage"
                path = folder / f"{task}.json"
                t_read, rows = _best(lambda: read_data(path), repeat)  # noqa: B023
                records = [r["data"] for r in rows]
                outputs = [r["init output"] for r in rows]
                robust, _ = _best(lambda: score_task(task, records, outputs),  # noqa: B023
                                  repeat)
                parser, report = _best(lambda: score_task(
                    task, records, outputs, parser="official"), repeat)  # noqa: B023
                if kind == "usage":
                    base, metrics = _best(
                        lambda: official_usage(rows, levenshtein), lev_repeat)  # noqa: B023
                else:
                    base, metrics = _best(lambda: official_awareness(rows), repeat)  # noqa: B023
                ours[kind] += robust
                ours[f"{kind}_official"] += parser
                theirs[kind] += base
                read[kind] += t_read
                name = f"{lang}/{model}/{task}"
                print(f"{name:38} {robust:6.3f} {parser:8.3f} {base:8.3f} "
                      f"{_ratio(base, robust):>6} {t_read:6.3f} "
                      f"{_ratio(base + t_read, robust + t_read):>7}  "
                      f"{_fmt(report.metrics, tuple(metrics))} | {_fmt(metrics, tuple(metrics))}")
            path = folder / "eval" / "planning_eval.json"
            recorded = ultratool_judge("planning", judgments=path)
            full, replay = _best(recorded.replay, repeat)
            judge, _ = _best(lambda: ours_planning_judge_only(path), repeat)  # noqa: B023
            base, metrics = _best(lambda: official_planning(path, lang), repeat)  # noqa: B023
            ours["planning"] += full
            ours["planning_judge"] += judge
            theirs["planning"] += base
            name = f"{lang}/{model}/planning (judgments)"
            print(f"{name:38} {full:6.3f} {judge:8.3f} {base:8.3f} "
                  f"{'':>6} {'incl.':>6} {_ratio(base, full):>7}  "
                  f"{replay.metrics['planning']:.2f} | {metrics['planning']:.2f}")
    _print_totals(ours, theirs, read)


if __name__ == "__main__":
    main()
