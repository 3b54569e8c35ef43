"""Does the viewer's verdict agree with the score? Every split of both benchmarks is run with an
offline model (default ``noisy-reference:0.3``) and each example's verdict (what ``tooleval
view`` shows, :func:`tooleval_agents.viewer.verdicts.run_verdicts`) is set against its headline
metric (the split's first: AppBench ``success``, UltraTool ``tool_usage``...): passed exactly
when that metric is at 100.

Counted per split, over the scored examples (infrastructure errors have no score):

* ``contradictions``: the verdict says PASSED where the headline metric is below 100, or
  FAILED where it is at 100;
* ``full_marks_blamed``: a FAILED verdict that blames a step (``at step 1.3``) the scorer gave
  full marks (its per-step comment reads ``1.3=100``);
* ``passes_but_differs``: PASSED verdicts that still name a difference from the gold (``passes
  tool_usage ...; differs: ...``), shown for reading, not a fault.

A split the offline model cannot be scored on (UltraTool ``tool_creation`` needs an LLM judge)
is listed as skipped, with why. Exit status 1 when any contradiction is found.

    .venv/bin/python benchmarks/verdict_agreement.py [--data-dir /work/shared/data]
        [--model noisy-reference:0.3] [--limit N] [--only ultratool/tool_usage/en] [--json]

``--data-dir`` defaults to ``$TOOLEVAL_SHARED_DATA``; ``--limit N`` runs the first N examples
of each split (a share of the data); the runs go to a temporary folder unless ``--out`` names
one (run again with the same ``--out``, the runs resume and nothing is run twice).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tooleval_agents import get_benchmark
from tooleval_agents.contracts import Split
from tooleval_agents.run.runner import run_experiment
from tooleval_agents.viewer.verdicts import run_verdicts

BENCHMARKS = ("appbench", "ultratool")
_STEP = re.compile(r"\bat step (\S+?)[;,)]?(?:\s|$)")


@dataclass
class SplitCount:
    """The agreement figures of one split."""

    split: str
    headline: str = ""
    scored: int = 0
    passed: int = 0
    contradictions: int = 0
    full_marks_blamed: int = 0
    passes_but_differs: int = 0
    skipped: str | None = None
    examples: list[str] = field(default_factory=list)
    """The first few contradicting examples: index, headline value, verdict."""


def _headline(split: Split, scoring_options: dict[str, Any]) -> str:
    bench = get_benchmark(split.benchmark)
    return bench.scorer(split, options=scoring_options).headline[0]


def _full_marks_step(reason: str, comment: str) -> bool:
    """Whether a failed verdict's reason names a step the scorer's per-step comment gives 100."""
    found = _STEP.search(reason)
    return found is not None and re.search(
        rf"(?:^|[ :,]){re.escape(found.group(1))}=100\b", comment) is not None


def count_run(path: Path, name: str) -> SplitCount:
    """The figures of one finished run directory."""
    config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    bench = get_benchmark(config["benchmark"])
    metric = _headline(bench.split(config["task"], config["subset"]),
                       config.get("scoring_options") or {})
    out = SplitCount(split=name, headline=metric)
    for result, verdict in run_verdicts(path):
        scores = (result.score or {}).get("scores") or {}
        if result.status == "infra_error" or metric not in scores:
            continue
        out.scored += 1
        at_top = scores[metric] >= 100.0
        out.passed += at_top
        comment = str(((result.score or {}).get("comments") or {}).get(metric) or "")
        if verdict.passed != at_top:
            out.contradictions += 1
            if len(out.examples) < 5:
                out.examples.append(f"{result.index}: {metric}={scores[metric]:g}, "
                                    f"{'PASSED' if verdict.passed else 'FAILED'} "
                                    f"{verdict.reason[:150]}")
        elif not verdict.passed and _full_marks_step(verdict.reason, comment):
            out.full_marks_blamed += 1
        out.passes_but_differs += verdict.passed and "differs:" in verdict.reason
    return out


def splits(only: Sequence[str] = ()) -> list[Split]:
    """Every split of both benchmarks (``only``: those whose ``benchmark/task/subset`` name
    starts with one of these)."""
    found = [s for b in BENCHMARKS for s in get_benchmark(b).splits()]
    return [s for s in found
            if not only or any(f"{s.benchmark}/{s.task}/{s.subset}".startswith(o) for o in only)]


def measure(data_dir: Path, out: Path, *, model: str = "noisy-reference:0.3",
            limit: int | None = None, only: Sequence[str] = ()) -> list[SplitCount]:
    """Run every split (resuming what ``out`` holds) and count its verdicts."""
    counts = []
    for split in splits(only):
        name = f"{split.benchmark}/{split.task}/{split.subset}"
        try:
            summary = run_experiment(split.benchmark, task=split.task, subset=split.subset,
                                     model=model, data_dir=data_dir, out=out, limit=limit,
                                     upload=False, cache=False, progress=False)
        except Exception as exc:  # a split this model cannot be scored on: said, not hidden
            counts.append(SplitCount(split=name, skipped=str(exc).splitlines()[0][:160]))
            continue
        assert summary.run_dir is not None
        counts.append(count_run(Path(summary.run_dir), name))
    return counts


def table(counts: Sequence[SplitCount]) -> str:
    """The figures as a plain text table, with a total line."""
    head = ("split", "headline", "scored", "pass", "contradict", "full-marks blamed",
            "passes, differs")
    rows = [head]
    for c in counts:
        if c.skipped is not None:
            rows.append((c.split, "skipped", c.skipped, "", "", "", ""))
            continue
        rows.append((c.split, c.headline, str(c.scored), str(c.passed), str(c.contradictions),
                     str(c.full_marks_blamed), str(c.passes_but_differs)))
    done = [c for c in counts if c.skipped is None]
    rows.append(("total", "", str(sum(c.scored for c in done)), str(sum(c.passed for c in done)),
                 str(sum(c.contradictions for c in done)),
                 str(sum(c.full_marks_blamed for c in done)),
                 str(sum(c.passes_but_differs for c in done))))
    widths = [max(len(r[i]) for r in rows if r[1] != "skipped" or i < 2) for i in range(7)]
    lines = []
    for r in rows:
        if r[1] == "skipped":
            lines.append(f"{r[0]:<{widths[0]}}  skipped: {r[2]}")
        else:
            lines.append("  ".join(v.ljust(w) if i < 2 else v.rjust(w)
                                   for i, (v, w) in enumerate(zip(r, widths, strict=True))))
    for c in done:
        lines += [f"  {c.split} {e}" for e in c.examples]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path,
                        default=Path(os.environ.get("TOOLEVAL_SHARED_DATA", "../shared/data")))
    parser.add_argument("--model", default="noisy-reference:0.3")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--only", action="append", default=[],
                        help="benchmark/task/subset prefix (repeatable)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="verdicts-") as tmp:
        counts = measure(args.data_dir, args.out or Path(tmp), model=args.model,
                         limit=args.limit, only=args.only)
    print(json.dumps([asdict(c) for c in counts]) if args.json else table(counts))
    return 1 if any(c.contradictions for c in counts) else 0


if __name__ == "__main__":
    sys.exit(main())
