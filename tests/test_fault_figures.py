"""Issue 33, case 6: the tool-fault figures of ``docs/tool-faults.md`` on the bundled samples
are what the script it names (``benchmarks/fault_rates.py``) prints, and they agree with the
runs' traces (it said "5 of the 45 calls" where the traces held 6 ``tool_fault`` records)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from fault_rates import measure  # noqa: E402 (a benchmark script, found via sys.path)


def test_the_docs_fault_figures_are_the_scripts(samples: Path, tmp_path: Path) -> None:
    lines = measure(samples, tmp_path, [0.1, 0.3], seed=0, seeds=50, limit=None)
    everything = next(line for line in lines if line.startswith("| all 22 |"))
    cells = [c.strip() for c in everything.strip("|").split("|")]
    # all 22: examples, calls/example, success at 0, then per rate: measured (predicted),
    # faulted calls, faulted_examples
    assert cells[7:9] == ["72.7 (48.7)", "6 of 45"]
    sweep = next(line for line in lines if line.startswith("rate 0.3: seeds 0 to 49"))
    assert "fault 29.0% of the 45 calls" in sweep
    assert "its runs recorded 6 faults in 45 calls" in sweep
    page = (REPO / "docs" / "tool-faults.md").read_text(encoding="utf-8")
    said = re.search(r"seed 0 faults (\d+) of the (\d+)\s+calls at rate 0\.3.*?success there "
                     r"is ([\d.]+)% against a\s+prediction of ([\d.]+)%\. Across seeds 0 to 49, "
                     r"the same calls fail ([\d.]+)%", page, re.S)
    assert said is not None and "benchmarks/fault_rates.py" in page
    assert said.groups() == ("6", "45", "72.7", "48.7", "29.0")
