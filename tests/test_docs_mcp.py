"""``docs/mcp.md``'s shell commands run as written, as the README's do
(:mod:`test_readme_commands`): each ``bash`` block runs offline in a fresh clone with the
bundled samples, or the line before it says what it needs."""

from __future__ import annotations

from pathlib import Path

from test_readme_commands import MARK, NEEDS, REPO, Block, clone, run_blocks

PAGE = REPO / "docs" / "mcp.md"


def page_blocks() -> list[Block]:
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```bash":
            end = i + 1
            while not lines[end].startswith("```"):
                end += 1
            before = next((x for x in reversed(lines[:i]) if x.strip()), "")
            mark = MARK.search(before)
            found.append(Block(i + 1, "\n".join(lines[i + 1:end]),
                               mark.group(1) if mark else None))
            i = end
        i += 1
    return found


def test_every_block_runs_offline_or_says_what_it_needs(tmp_path: Path) -> None:
    found = page_blocks()
    assert [b.needs for b in found if b.needs not in (None, *NEEDS)] == []
    offline = [b for b in found if b.needs is None]
    assert len(offline) >= 3
    work, env = clone(tmp_path)
    run_blocks(offline, work, env)
    log = work / "runs" / "serve-appbench-plan-ss" / "mcp_calls.jsonl"
    assert '"tool": "Weather__getweather"' in log.read_text(encoding="utf-8")
