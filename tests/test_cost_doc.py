"""docs/cost.md's shell commands: each ``bash`` block runs offline as written (in a fresh clone,
as the README's do) or says what it needs on the line before it."""

from __future__ import annotations

from pathlib import Path

from test_readme_commands import MARK, NEEDS, Block, clone, run_blocks

DOC = Path(__file__).resolve().parents[1] / "docs" / "cost.md"


def doc_blocks() -> list[Block]:
    lines = DOC.read_text(encoding="utf-8").splitlines()
    found = []
    for at, line in enumerate(lines):
        if line.strip() == "```bash":
            end = next(i for i in range(at + 1, len(lines)) if lines[i].startswith("```"))
            before = next((x for x in reversed(lines[:at]) if x.strip()), "")
            mark = MARK.search(before)
            found.append(Block(at + 1, "\n".join(lines[at + 1:end]),
                               mark.group(1) if mark else None))
    return found


def test_every_block_runs_offline_or_says_what_it_needs(tmp_path: Path) -> None:
    found = doc_blocks()
    assert all(b.needs is None or b.needs in NEEDS for b in found), found
    offline = [b for b in found if b.needs is None]
    assert offline  # the --max-runs sweep runs on the bundled samples
    work, env = clone(tmp_path)
    run_blocks(offline, work, env)
    assert len(list((work / "runs").iterdir())) == 4
