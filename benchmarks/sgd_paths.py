"""How many published AppBench samples the SGD path extraction reproduces, per category.

Usage: ``python benchmarks/sgd_paths.py [DATA_DIR] [-v]`` (default ``../shared/data``; reads
``DATA_DIR/sgd/test/dialogues_*.json`` and ``DATA_DIR/appbench/data/test``). A sample counts as
*there* when each of its calls is a service call of those dialogues; *matched* when the
extracted path of its dialogues gives its ``api_results`` exactly. ``-v`` lists every miss.
Pinned by ``tests/test_sgd_paths.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tooleval_agents.appbench.loaders import load_category
from tooleval_agents.appbench.names import CATEGORIES
from tooleval_agents.appbench.sgd_match import DialogueIndex, match_category
from tooleval_agents.appbench.sgd_paths import dialogue_files, read_dialogues


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "-v"]
    verbose = "-v" in sys.argv[1:]
    data_dir = Path(args[0]) if args else Path(__file__).parents[2] / "shared" / "data"
    files = dialogue_files(data_dir / "sgd", "test")
    index = DialogueIndex(d for f in files for d in read_dialogues(f))
    print(f"dialogue files: {', '.join(f.name for f in files)}")
    print(f"{'category':<9}{'samples':>8}{'there':>7}{'matched':>9}{'share':>8}  misses")
    for category in CATEGORIES:
        result = match_category(load_category(data_dir, category), index)
        misses = ", ".join(f"{k}: {v}" for k, v in sorted(result.misses.items())) or "-"
        print(f"{category.upper():<9}{result.samples:>8}{result.there:>7}{result.matched:>9}"
              f"{result.share:>8.1%}  {misses}")
        if verbose:
            for r in result.results:
                if r.kind not in (None, "not there"):
                    print(f"    #{r.index} {'+'.join(r.dialogues)} {r.kind}: {r.detail}")


if __name__ == "__main__":
    main()
