"""Tool calls a model writes as text, read as the calls they are; and counting, per example and
per run, how the calls came back.

* :mod:`~tooleval_agents.models.tool_calls.parse` -- the parser (no LangChain: total, linear time);
* :mod:`~tooleval_agents.models.tool_calls.reader` -- :class:`TextToolCallReader`, a chat model
  wrapping another that turns calls written in its answers into ``AIMessage.tool_calls``
  (``-O tool_calls=text|auto`` of the tool-calling strategies);
* :mod:`~tooleval_agents.models.tool_calls.protocol` -- the text protocol: the tools described in
  the prompt, and a conversation's text calls and tool answers written back as text;
* :mod:`~tooleval_agents.models.tool_calls.counts` -- how many calls came back structured and as
  text, and what a run says when tool calling did not happen.

Nothing heavy is imported here (the command line reads the counts without LangChain).
"""

from __future__ import annotations

from typing import Literal

ToolCallMode = Literal["native", "text", "auto"]
"""How a tool-calling strategy reads the model's calls: ``native`` -- only the structured
``tool_calls`` of the API; ``text`` -- the tools are described in the prompt and the calls read
from the answer's text (prompt mode); ``auto`` -- the tools are bound natively, and an answer
without structured calls has its text read."""
SOURCE_KEY = "tool_calls_source"
"""``AIMessage.response_metadata`` key the reader sets: ``"structured"`` or ``"text"`` (an
answer without it made structured calls, if any)."""

__all__ = ["SOURCE_KEY", "ToolCallMode"]
