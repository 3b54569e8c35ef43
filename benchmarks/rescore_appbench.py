"""Time AppBench ``paper`` scoring: ours against the official scorer, per example.

Usage: ``python benchmarks/rescore_appbench.py [DATA_DIR] [--repeat N]`` (default
``../shared/data``, N = 5). Each figure is the best of N runs in CPU time (``time.process_time``);
the runs of a row take turns (round 1 of every column, then round 2, ...), so a burst of load
on a shared machine hits every column alike.

AppBench publishes no model outputs, so the answers are the gold plans in the official pairing
(:func:`~tooleval_agents.evaluators.appbench.parse.official_gold_answer`, the rendering behind the
paper's gold figures) and the same with every quoted value upper-cased and the last line dropped
(wrong values, missing calls: the slower, failing paths). 801 test samples x 2 answer sets.

* **ours paper**: :func:`tooleval_agents.evaluators.appbench.scoring.score_appbench` with
  ``scoring="paper"`` (what ``--scoring paper`` computes). Ours reads each sample's gold once per
  gold content and keeps it (:func:`tooleval_agents.evaluators.appbench.paper.paper_gold`), so after
  the first round this is the steady state of scoring answers to samples already read (several
  answer files, re-scoring a run, a bootstrap); **cold**: the same on fresh copies of the samples
  with that cache emptied (made outside the timing), i.e. each gold read included, as a one-shot
  ``tooleval score`` process pays it. **ours paper+graph**: the same with ``graph=True``, what every
  paper run computed before the paper-only path (robust parse and graph metrics too); **ours
  strict**: the default profile.
* **OFFICIAL**: the official scorer itself (``discompose_app_api`` on each answer, then
  ``get_appbench_analysis``, run from the fetched upstream copy by
  ``tests/appbench_official.py``; ``tooleval data fetch appbench --include
  'code/appbench/*.py'``), on the raw JSON records; it reads every gold line on every run.
  Its app/API F1 and success must equal ours (printed side by side). Without the fetched
  scorer the column is left out.

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
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from appbench_official import CODE, Official

from tooleval_agents.appbench.loaders import load_category
from tooleval_agents.appbench.names import CATEGORIES
from tooleval_agents.appbench.records import AppBenchSample
from tooleval_agents.evaluators.appbench.paper import clear_gold_cache
from tooleval_agents.evaluators.appbench.parse import official_gold_answer
from tooleval_agents.evaluators.appbench.scoring import score_appbench

# --- the official scorer, as published -------------------------------------------------------

def official_scores(official: Official | None, samples: list[dict[str, Any]],
                    answers: list[str]) -> dict[str, float] | None:
    """The official driver's reading and ``get_appbench_analysis`` of the answers (app F1,
    API F1, success, x100); ``None`` without the official code or where it divides by 0."""
    return None if official is None else official.corpus(samples, answers)


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
    official = Official(data) if (data / CODE / "evaluation.py").is_file() else None
    if official is None:
        print(f"(no official scorer in {data / CODE}: the OFFICIAL column is left out)")
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
                **({"official": (lambda: raw, lambda r: official_scores(  # noqa: B023
                    official, r, answers))}  # noqa: B023
                   if official is not None else {}),
            }, repeat)
            for key, (seconds, _) in row.items():
                totals[key] += seconds
            n += len(samples)
            ours = row["paper"][1].metrics
            theirs = row["official"][1] if "official" in row else None
            assert row["cold"][1].metrics == ours
            print(f"{category + '/' + kind:14} {len(samples):4} "
                  + " ".join(f"{1000 * row[k][0] / len(samples):7.3f}"
                             for k in ("paper", "cold", "paper_graph", "strict"))
                  + (f" {1000 * row['official'][0] / len(samples):8.3f}  " if theirs is not None
                     else f" {'-':>8}  ")
                  + " / ".join(f"{ours[k] or 0.0:.2f}" for k in ("app_f1", "api_f1", "success"))
                  + " | " + (" / ".join(f"{theirs[k]:.2f}" for k in ("app_f1", "api_f1",
                                                                      "success"))
                             if theirs is not None else "-"))
    per = {k: 1000 * v / n for k, v in totals.items()}
    print(f"\nall {n} examples, ms per example: ours paper {per['paper']:.3f} (cold "
          f"{per['cold']:.3f}), ours paper+graph (before) {per['paper_graph']:.3f}, ours strict "
          f"{per['strict']:.3f}"
          + (f", OFFICIAL {per['official']:.3f} -> ours paper "
             f"{per['official'] / per['paper']:.2f}x the official speed (cold "
             f"{per['official'] / per['cold']:.2f}x)" if official is not None else ""))
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
