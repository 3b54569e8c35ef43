"""The pictures of the viewer in the docs (``docs/images/viewer-*.png``), from a real offline run.

Regenerate them from the repository's folder (Chromium installed; about half a minute)::

    .venv/bin/python docs/hooks/viewer_screenshots.py

It runs the main job of Getting started (AppBench's four categories of the bundled samples, the
hierarchical strategy, ``noisy-reference:0.3``) in a temporary folder, writes its site with
``tooleval view``, and photographs two pages in headless Chromium: the run list
(``viewer-runs.png``) and the page of the first example that misses a call
(``viewer-example.png``: its verdict and its calls set against the gold). Each is cut to what
the docs show and reduced to 64 colours (Pillow, which matplotlib brings), so it stays small.
Not a MkDocs hook: nothing runs it when the site is built.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image

REPO = Path(__file__).resolve().parents[2]
IMAGES = REPO / "docs" / "images"
MAIN_JOB = ["run", "appbench", "--category", "all", "--strategy", "hierarchical", "--model",
            "noisy-reference:0.3", "--data-dir", str(REPO / "datasets"), "--no-progress"]


def chromium() -> str:
    found = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                  if shutil.which(n)), None)
    if found is None:
        sys.exit("no Chromium here (apt-get install chromium)")
    return found


def shoot(url: str, png: Path, size: tuple[int, int], profile: Path) -> None:
    """``url`` photographed in a window of ``size`` (width, height) px, in 64 colours. The docs'
    column is about 700 px wide: the wider the picture, the smaller its text there."""
    subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update",
                    "--hide-scrollbars", f"--user-data-dir={profile}",
                    "--virtual-time-budget=5000", f"--window-size={size[0]},{size[1]}",
                    f"--screenshot={png}", url], check=True, capture_output=True, timeout=300)
    with Image.open(png) as shot:
        small = shot.convert("RGB").quantize(colors=64)
    small.save(png, optimize=True)


def first_missing_call(site: Path) -> tuple[str, str]:
    """The run id and key of the first example whose verdict is a missing call."""
    for index in sorted((site / "data").glob("*/index.js")):
        text = index.read_text(encoding="utf-8")
        rows = json.loads(text[text.index(",") + 1:text.rindex(")")])
        for row in rows:
            if row["reason"] == "missing call":
                return index.parent.name, row["key"]
    raise SystemExit("no example misses a call: the main job changed; pick another page")


def main() -> None:
    tooleval = str(Path(sys.executable).with_name("tooleval"))
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        subprocess.run([tooleval, *MAIN_JOB], cwd=work, check=True, capture_output=True)
        subprocess.run([tooleval, "view", "runs/"], cwd=work, check=True, capture_output=True)
        site = work / "runs" / "site"
        rid, key = first_missing_call(site)
        shoot(site.joinpath("index.html").as_uri(), IMAGES / "viewer-runs.png", (1200, 400),
              work / "profile")
        shoot(f"{site.joinpath('index.html').as_uri()}#/run/{rid}/ex/{key}",
              IMAGES / "viewer-example.png", (900, 470), work / "profile")
    for png in sorted(IMAGES.glob("viewer-*.png")):
        print(f"{png.relative_to(REPO)}: {png.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
