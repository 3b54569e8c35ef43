"""The tagged blocks of the construction prompts, and ``scripted``: an offline model that
answers them, so ``tooleval build appbench`` runs without a network (tests, dry runs).

The prompts themselves are in :mod:`tooleval_agents.graphs.appbench.build_prompts`; they wrap the
machine-read parts in these tags, which is all the scripted model relies on.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from langchain_core.messages import BaseMessage

from tooleval_agents.models.chat_models import ContentChatModel, Reply

PATH_ID = "path-id"
"""Tag of the path's id (its dialogue ids)."""
VALUES = "values"
"""Tag of the JSON object of literal argument values the instruction must keep."""
APPS = "apps"
"""Tag of the apps the path uses, comma-separated."""
CANDIDATE = "candidate"
"""Tag of the instruction under judgement (only in the judge's prompt)."""
INSTRUCTION = "instruction"
"""Tag the writer puts its instruction in."""

SCRIPTED = "scripted"
"""The ``--model`` name of :class:`ScriptedBuildModel`."""


def block(tag: str, text: str) -> str:
    """``<tag>text</tag>``."""
    return f"<{tag}>{text}</{tag}>"


def read_block(tag: str, text: str) -> str | None:
    """The content of the last ``<tag>...</tag>`` in ``text``, else ``None``.

    Blocks are found left to right without overlaps, each opening tag closed by the next
    closing one (as the pattern ``<tag>(.*?)</tag>`` finds them), in one pass: the pattern
    searched to the end of the text again from every opening tag that had no closing one.

    >>> read_block("b", "<b>one</b> <b><b>two</b> <b>open")
    '<b>two'
    """
    opening, closing = f"<{tag}>", f"</{tag}>"
    found = None
    at = text.find(opening)
    while at >= 0:
        end = text.find(closing, at + len(opening))
        if end < 0:
            break
        found = (at + len(opening), end)
        at = text.find(opening, end + len(closing))
    return text[found[0]:found[1]].strip() if found else None


class ScriptedBuildModel(ContentChatModel):
    """Writes an instruction that lists every literal value (and names the path, so each is
    unique), and judges by a rule: consistency 10 when the candidate holds every value, else
    3; fluency 5-9 from a hash of the path id; diversity 7. ``garble`` makes the judge's
    answers unreadable (to test that a malformed answer is recorded, not raised)."""

    model_name: str = SCRIPTED
    garble: bool = False
    """Answer the judge with text that holds no scores."""

    def answers_fingerprint(self) -> str:
        return f"scripted-build-1-garble={self.garble}"

    def reply(self, prompt: str, messages: Sequence[BaseMessage]) -> Reply:
        key = read_block(PATH_ID, prompt) or "?"
        try:
            values = json.loads(read_block(VALUES, prompt) or "{}")
        except ValueError:
            values = {}
        candidate = read_block(CANDIDATE, prompt)
        if candidate is None:
            apps = read_block(APPS, prompt) or "my apps"
            asks = "; ".join(f"{k.replace('_', ' ')} {v}" for k, v in values.items())
            return block(INSTRUCTION, f"Using {apps}, please help me with this request "
                                      f"({key}): {asks or 'nothing specific'}.")
        if self.garble:
            return "I would rather not give numbers."
        held = all(str(v).lower() in candidate.lower() for v in values.values())
        fluency = 5 + int(hashlib.sha256(key.encode()).hexdigest(), 16) % 5
        return json.dumps({"fluency": fluency, "diversity": 7,
                           "consistency": 10 if held else 3, "reason": "scripted rule"})
