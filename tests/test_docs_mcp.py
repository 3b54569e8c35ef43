"""``docs/mcp.md``'s shell commands run as written, as the README's do
(:mod:`test_readme_commands`): each ``bash`` block runs offline in a fresh clone with the
bundled samples, or the line before it says what it needs."""

from __future__ import annotations

from pathlib import Path

from test_readme_commands import NEEDS, REPO, blocks, clone, run_blocks

PAGE = REPO / "docs" / "mcp.md"


def test_every_block_runs_offline_or_says_what_it_needs(tmp_path: Path) -> None:
    found = blocks(PAGE)
    assert [b.needs for b in found if b.needs not in (None, *NEEDS)] == []
    offline = [b for b in found if b.needs is None]
    assert len(offline) >= 3
    work, env = clone(tmp_path)
    run_blocks(offline, work, env)
    log = work / "runs" / "serve-appbench-plan-ss" / "mcp_calls.jsonl"
    assert '"tool": "Weather__getweather"' in log.read_text(encoding="utf-8")
