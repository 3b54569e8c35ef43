"""Print AppBench's Table-2 statistics computed from the test files, beside the paper's values.

Usage: ``python benchmarks/appbench_stats.py [DATA_DIR]`` (default ``../shared/data``).
Definitions: :func:`tooleval_agents.appbench.depgraph.category_stats`. Cells marked ``*``
differ from the paper after rounding to its precision (see tests/test_depgraph.py for why).
"""

from __future__ import annotations

import sys
from pathlib import Path

from tooleval_agents.appbench.depgraph import category_stats
from tooleval_agents.appbench.loaders import load_category
from tooleval_agents.appbench.names import CATEGORIES

# Paper Table 2 (SS, SM, MS, MM), in its row order.
PAPER: dict[str, tuple[str, tuple[float, ...]]] = {
    "samples": ("# Samples", (200, 200, 200, 200)),
    "apps": ("# Apps", (9, 11, 10, 11)),
    "apis": ("# APIs", (11, 22, 12, 23)),
    "avg_apps": ("Avg. Apps", (1.0, 1.0, 2.7, 2.2)),
    "avg_apis": ("Avg. APIs", (1.0, 2.2, 2.7, 3.3)),
    "avg_arguments": ("Avg. arguments", (4.0, 4.5, 3.8, 4.4)),
    "max_seq": ("Max. Seq.", (1, 4, 4, 8)),
    "max_para": ("Max. Para.", (1, 1, 4, 3)),
    "avg_seq": ("Avg. Seq.", (1.0, 2.2, 1.2, 1.9)),
    "avg_para": ("Avg. Para.", (1.0, 1.0, 2.2, 1.8)),
}
EXTRA = {"mean_sample_seq": "mean per-sample Seq.", "unresolved": "unresolved deps"}


def _cell(got: float, paper: float | None) -> str:
    if paper is None:
        return f"{got:g}" if isinstance(got, int) else f"{got:.3f}"
    if isinstance(paper, int):
        return f"{got}" + ("" if got == paper else "*") + f" ({paper})"
    return f"{got:.3f}" + ("" if abs(got - paper) <= 0.05 + 1e-9 else "*") + f" ({paper})"


def main() -> None:
    data_dir = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parents[2] / "shared" /
                    "data")
    stats = {c: category_stats([s.calls for s in load_category(data_dir, c)]) for c in CATEGORIES}
    print(f"{'statistic':<22}" + "".join(f"{c.upper():>16}" for c in CATEGORIES))
    print(f"{'':<22}" + "".join(f"{'ours (paper)':>16}" for _ in CATEGORIES))
    for field, (label, paper) in PAPER.items():
        row = [_cell(getattr(stats[c], field), p) for c, p in zip(CATEGORIES, paper, strict=True)]
        print(f"{label:<22}" + "".join(f"{x:>16}" for x in row))
    for field, label in EXTRA.items():
        print(f"{label:<22}" + "".join(f"{_cell(getattr(stats[c], field), None):>16}"
                                       for c in CATEGORIES))


if __name__ == "__main__":
    main()
