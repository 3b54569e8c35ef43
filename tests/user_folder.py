"""A folder laid out as a user's own project, where the documentation's blocks run: it holds
modules named as the repository's top-level folders are (``evaluators.py``, ``graphs/``,
``tests/``, ``benchmarks.py``, ``datasets/``), which a Python started in it imports before any
installed package of that name. None of them may be imported by tooleval-agents: each one,
when imported, writes its name to :data:`LOG`, and :func:`imported` reads it.

``datasets/`` is also the data folder the documentation's commands name (``--data-dir
datasets``): it holds the bundled samples, as in a clone, beside the user's own files.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOG = "imported-user-modules.log"

MARKER = '''from pathlib import Path as _Path

_folder = _Path(__file__).resolve().parent
while not (_folder / "evaluators.py").is_file():
    _folder = _folder.parent
with open(_folder / "{log}", "a", encoding="utf-8") as _log:
    _log.write(__name__ + "\\n")
'''
"""The top of each user module: its name appended to :data:`LOG` in the project folder."""

USER_MODULES = {
    "evaluators.py": "def exact(outputs: dict, reference_outputs: dict) -> bool:\n"
                     "    return outputs == reference_outputs\n",
    "graphs/__init__.py": "NODES = ('plan', 'act')\n",
    "tests/__init__.py": "",
    "tests/test_mine.py": "def test_mine() -> None:\n    assert True\n",
    "benchmarks.py": "SUITES = ['mine']\n",
    "datasets/__init__.py": "NAMES = ['questions']\n",
}


def user_folder(path: Path) -> Path:
    """Lay ``path`` out as a user's project (see the module doc); returns it."""
    for name, body in USER_MODULES.items():
        file = path / name
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(MARKER.format(log=LOG) + body, encoding="utf-8")
    (path / "datasets" / "questions.jsonl").write_text('{"q": "mine"}\n', encoding="utf-8")
    for source in ("appbench", "ultratool"):  # the samples, where the README's commands look
        (path / "datasets" / source).symlink_to(REPO / "datasets" / source)
    return path


def imported(path: Path) -> list[str]:
    """The user's modules something imported in ``path`` (none, unless a test imports one)."""
    log = path / LOG
    return log.read_text(encoding="utf-8").split() if log.is_file() else []
