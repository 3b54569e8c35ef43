"""AppBench ``paper`` profile against the official scorer, answer by answer.

Usage: ``python benchmarks/appbench_parity.py [DATA_DIR] [--record]`` (default
``../shared/data``). Needs the official scorer in the data directory
(``tooleval data fetch appbench --include 'code/appbench/*.py'``).

For every answer of the corpus (``tests/appbench_answers.py``: the gold, wrong values,
``noisy-reference`` corruptions and the gold rewritten in the shapes real models wrote; the 4
categories, 7209 answers) it compares the official numbers of the answer (the hits and sizes
behind app and API F1, and ``complete_match``; ``tests/appbench_official.py`` runs the
official functions) with ours (``score_example(..., scoring="paper")``), and each answer
set's corpus app F1, API F1 and success with ``get_appbench_analysis`` of the set. Prints how
many answers and sets differ, and the first differences. The suite runs the same comparison
(``appbench_official.compare_category``) in full: ``tests/test_appbench_paper_parity.py``.

``--record`` writes ``tests/fixtures/appbench_official_parity.json``: per category and answer
set, a digest of the answers, the official corpus figures and a digest of the official
per-answer numbers, which ``tests/test_appbench_paper_parity.py`` checks ours against where
the official code is absent (CI).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from appbench_official import Official, compare_category, digest

from tooleval_agents.appbench.names import CATEGORIES

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / \
    "appbench_official_parity.json"


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    data = Path(args[0]) if args else Path(__file__).resolve().parents[2] / "shared" / "data"
    official = Official(data)
    record: dict[str, Any] = {}
    answers_n = differ = sets_differ = 0
    shown = 0
    for category in CATEGORIES:
        for c in compare_category(official, data, category):
            answers_n += len(c.answers)
            differ += len(c.differ)
            sets_differ += c.corpus_differs
            for i, ours, want in c.differ[:max(0, 5 - shown)]:
                print(f"{category} {c.name} #{i}: ours {ours}, official {want}\n"
                      f"  {c.answers[i]!r}")
                shown += 1
            record.setdefault(category, {})[c.name] = {
                "answers": digest(c.answers), "official": c.corpus,
                "per_answer": digest([list(w) for w in c.official])}
    print(f"{answers_n} answers compared, {differ} differ; {sets_differ} of "
          f"{sum(len(v) for v in record.values())} answer sets differ in corpus app F1, "
          "API F1 or success")
    if "--record" in sys.argv:
        FIXTURE.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n",
                           encoding="utf-8")
        print(f"recorded {FIXTURE}")


if __name__ == "__main__":
    main()
