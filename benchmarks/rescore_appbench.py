"""Time AppBench ``paper`` scoring: ours against the official scorer, per example.

Usage: ``python benchmarks/rescore_appbench.py [DATA_DIR] [--repeat N]`` (default
``../shared/data``, N = 5). Each figure is the best of N runs in CPU time (``time.process_time``);
the runs of a row take turns (round 1 of every column, then round 2, ...), so a burst of load
on a shared machine hits every column alike.

AppBench publishes no model outputs, so the answers are the gold plans in the official pairing
(:func:`~evaluators.appbench_parse.official_gold_answer`, the rendering behind the paper's gold
figures) and the same with every quoted value upper-cased and the last line dropped (wrong
values, missing calls: the slower, failing paths). 801 test samples x 2 answer sets.

* **ours paper**: :func:`evaluators.appbench_scoring.score_appbench` with ``scoring="paper"``
  (what ``--scoring paper`` computes). Ours reads each sample's gold once per gold content and
  keeps it (:func:`evaluators.appbench_paper.paper_gold`), so after the first round this is the
  steady state of scoring answers to samples already read (several answer files, re-scoring a
  run, a bootstrap); **cold**: the same on fresh copies of the samples with that cache emptied
  (made outside the timing), i.e. each gold read included, as a one-shot ``tooleval score``
  process pays it. **ours paper+graph**: the same with ``graph=True``, what every paper run
  computed before the paper-only path (robust parse and graph metrics too); **ours strict**: the
  default profile.
* **OFFICIAL**: the official ``evaluation.py`` scorer re-written for timing from the behaviour
  :mod:`evaluators.appbench_paper` documents (plain dicts and regular expressions, no
  validation): per line ``App: [...]``, the API name between ``=`` and ``(``, cut after its first
  ``_``, arguments split on ``", "`` and ``=``, hits capped at one per sample, success by
  multisets and per-API argument checks with the alias map. It reads every gold line on every
  run, as the official script does. Its app/API F1 and success must equal ours (printed side
  by side).

Whole process: ``tooleval score appbench --scoring paper`` on a predictions file per category
(interpreter start, imports, loading and validating the samples included), wall time.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evaluators.appbench_paper import ALIASES, clear_gold_cache
from evaluators.appbench_parse import official_gold_answer
from evaluators.appbench_scoring import score_appbench
from tooleval_agents.appbench.loaders import load_category
from tooleval_agents.appbench.names import CATEGORIES
from tooleval_agents.appbench.records import AppBenchSample

# --- the official scorer, re-written for timing -----------------------------------------------

_LINE = re.compile(r"^\s*(?P<app>[^:]*):\s*\[(?P<body>.*\(.*)\]")
_API = re.compile(r"^(?P<ret>.*?)=\s*(?P<api>[^(=]*)\(")


def _call(body: str) -> tuple[str, dict[str, str]]:
    m = _API.match(body)
    api = m.group("api").strip().lower() if m else ""
    api = api.split("_", 1)[1] if "_" in api else api
    start, end = body.find("("), body.rfind(")")
    args: dict[str, str] = {}
    if start >= 0:
        for piece in (body[start + 1:end] if end > start else body[start + 1:]).split(", "):
            parts = piece.split("=")
            if len(parts) >= 2:
                args[parts[0].strip().lower()] = parts[1].strip()
    return api, args


def _norm(value: str) -> str:
    value = value.lower().strip().strip("'\"").strip()
    return ALIASES.get(value, value)


def official_scores(samples: list[dict[str, Any]], answers: list[str]) -> dict[str, float]:
    """App/API F1 (hits capped at one per sample, pooled) and success, x100."""
    app_hits = api_hits = n_pred = n_gold_app = n_gold_api = successes = 0
    for sample, answer in zip(samples, answers, strict=True):
        out = sample["output"]
        pred = []
        for line in answer.split("\n"):
            m = _LINE.match(line)
            if m:
                pred.append((m.group("app").strip(), *_call(m.group("body"))))
        gold = [_call(line) for line in out["api_results"]]
        pred_apps, pred_apis = [p[0] for p in pred], [p[1] for p in pred]
        gold_apis = [g[0] for g in gold]
        app_hits += any(a in out["used_app"] for a in pred_apps)
        api_hits += any(a in gold_apis for a in pred_apis)
        n_pred += len(pred)
        n_gold_app += len(out["used_app"])
        n_gold_api += len(gold)
        pred_by_api = {p[1]: p[2] for p in pred}
        aware = {k.lower(): v for k, v in out["user_aware_arguments"].items()}
        ok = Counter(pred_apps) == Counter(out["used_app"]) and \
            Counter(pred_apis) == Counter(gold_apis)
        for api, gold_args in {g[0]: g[1] for g in gold}.items():
            if not ok:
                break
            if api not in pred_by_api:
                ok = False
                break
            for key, value in gold_args.items():
                p = pred_by_api[api].get(key)
                if p is None:
                    ok = False
                    break
                pv, gv, ua = _norm(p), _norm(value), aware.get(key.lstrip("#"))
                if not (pv == gv or pv in gv or gv in pv or (ua is not None and pv == _norm(ua))):
                    ok = False
                    break
        successes += ok

    def f1(hits: int, n_p: int, n_g: int) -> float:
        p, r = (hits / n_p if n_p else 0.0), (hits / n_g if n_g else 0.0)
        return 200 * p * r / (p + r) if p + r else 0.0

    return {"app_f1": f1(app_hits, n_pred, n_gold_app), "api_f1": f1(api_hits, n_pred, n_gold_api),
            "success": 100 * successes / len(samples)}


# --- timing -----------------------------------------------------------------------------------

def _wrong(sample: AppBenchSample) -> str:
    lines = official_gold_answer(sample).split("\n")
    return re.sub(r"'([^']*)'", lambda m: f"'{m.group(1).upper()}X'", "\n".join(lines[:-1]))


def _rounds(runs: dict[str, tuple[Callable[[], Any], Callable[[Any], Any]]],
            repeat: int) -> dict[str, tuple[float, Any]]:
    """Best CPU time and last result of each ``(setup, run)``: ``run(setup())``, only ``run``
    timed; the runs take turns, ``repeat`` rounds."""
    best: dict[str, tuple[float, Any]] = {k: (float("inf"), None) for k in runs}
    for _ in range(repeat):
        for key, (setup, run) in runs.items():
            arg = setup()
            start = time.process_time()
            result = run(arg)
            seconds = time.process_time() - start
            best[key] = (min(best[key][0], seconds), result)
    return best


COLUMNS = ("paper", "cold", "paper_graph", "strict", "official")


def main() -> None:
    argv = sys.argv[1:]
    repeat = int(argv[argv.index("--repeat") + 1]) if "--repeat" in argv else 5
    args = [a for i, a in enumerate(argv) if not a.startswith("--")
            and (i == 0 or argv[i - 1] != "--repeat")]
    data = Path(args[0]) if args else Path(__file__).resolve().parents[2] / "shared" / "data"
    totals = dict.fromkeys(COLUMNS, 0.0)
    n = 0
    out_dir = Path(tempfile.mkdtemp())
    print(f"CPU ms per example, best of {repeat}; metrics app F1 / API F1 / success: ours | "
          "OFFICIAL")
    print(f"{'answers':14} {'n':>4} {'paper':>7} {'cold':>7} {'+graph':>7} {'strict':>7} "
          f"{'OFFICIAL':>8}")
    for category in CATEGORIES:
        samples = load_category(data, category)
        raw = [s.model_dump(mode="json") for s in samples]

        def fresh(raw: list[dict[str, Any]] = raw) -> list[AppBenchSample]:
            clear_gold_cache()
            return [AppBenchSample.model_validate(r) for r in raw]

        for kind, answers in (("gold", [official_gold_answer(s) for s in samples]),
                              ("wrong", [_wrong(s) for s in samples])):
            (out_dir / f"{category}-{kind}.json").write_text(json.dumps(answers))
            row = _rounds({
                "paper": (lambda: samples, lambda s: score_appbench(  # noqa: B023
                    s, answers, scoring="paper")),  # noqa: B023
                "cold": (fresh, lambda s: score_appbench(
                    s, answers, scoring="paper")),  # noqa: B023
                "paper_graph": (lambda: samples, lambda s: score_appbench(  # noqa: B023
                    s, answers, scoring="paper", graph=True)),  # noqa: B023
                "strict": (lambda: samples, lambda s: score_appbench(s, answers)),  # noqa: B023
                "official": (lambda: raw, lambda r: official_scores(r, answers)),  # noqa: B023
            }, repeat)
            for key, (seconds, _) in row.items():
                totals[key] += seconds
            n += len(samples)
            ours, theirs = row["paper"][1].metrics, row["official"][1]
            assert row["cold"][1].metrics == ours
            print(f"{category + '/' + kind:14} {len(samples):4} "
                  + " ".join(f"{1000 * row[k][0] / len(samples):7.3f}"
                             for k in ("paper", "cold", "paper_graph", "strict"))
                  + f" {1000 * row['official'][0] / len(samples):8.3f}  "
                  + " / ".join(f"{ours[k]:.2f}" for k in ("app_f1", "api_f1", "success"))
                  + " | " + " / ".join(f"{theirs[k]:.2f}" for k in ("app_f1", "api_f1",
                                                                     "success")))
    per = {k: 1000 * v / n for k, v in totals.items()}
    print(f"\nall {n} examples, ms per example: ours paper {per['paper']:.3f} (cold "
          f"{per['cold']:.3f}), ours paper+graph (before) {per['paper_graph']:.3f}, ours strict "
          f"{per['strict']:.3f}, OFFICIAL {per['official']:.3f} -> ours paper "
          f"{per['official'] / per['paper']:.2f}x the official speed (cold "
          f"{per['official'] / per['cold']:.2f}x)")
    walls = []
    for category in CATEGORIES:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "tooleval_agents.cli", "score", "appbench",
                        "--category", category, "--predictions",
                        str(out_dir / f"{category}-gold.json"), "--scoring", "paper",
                        "--data-dir", str(data), "--json"], check=True, capture_output=True)
        walls.append(time.perf_counter() - start)
    print("whole process, `tooleval score appbench --scoring paper` (wall s): "
          + ", ".join(f"{c} {w:.2f}" for c, w in zip(CATEGORIES, walls, strict=True)))


if __name__ == "__main__":
    main()
