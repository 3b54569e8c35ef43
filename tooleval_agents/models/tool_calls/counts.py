"""How a tool-calling example's calls came back, and what a run says when tool calling did not
happen.

Per example, the agent's trace record (``{"kind": "agent", ...}``, written by
:func:`tooleval_agents.agents.agent_record`) counts the calls that came back structured (the
API's ``tool_calls``), those read from text (``-O tool_calls=text|auto``), and the answers that
hold what looks like a call written as text that nobody read. The run keeps those counts on each
result line (:attr:`~tooleval_agents.results.records.ResultBase.tool_calls`) and sums them in its
summary
(``counts``); :func:`tool_call_notes` says what they mean.

A tool-calling run in which no call came back at all, while answers hold calls written as text,
measured the server's chat format rather than the model's tool use: it exits with status 3, as
a run that left examples unscored (:func:`tool_calls_unmeasured`). A run in which no call came
back and nothing looks like one is a (poor) measurement: it is said, and exits 0.

The same holds for answers that could not be read in the task's format at all (a stored
``parse_error``: no call line, no JSON list): the summary counts them (``format_errors``),
:func:`format_notes` says how many, and a run in which no answer could be read measured the
answer format, not the task: it exits with status 3 too (:func:`format_unmeasured`). In a
tool-calling run in which no call came back :func:`tool_call_notes` says it instead.

No LangChain here: the command line reads these.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

AGENT_RECORD = "agent"
"""``kind`` of the trace record summing up an agent's conversation."""
STRUCTURED, TEXT, UNREAD, NO_CALL = ("tool_calls_structured", "tool_calls_text",
                                     "unread_text_calls", "examples_without_tool_calls")
"""The run summary's ``counts`` keys (present in tool-calling runs only)."""
AGENT_USAGE = {True: "usage_reported", False: "usage_not_reported"}
"""The summary's counts of an agent command's run (``--agent-cmd``): its examples whose agent
reported its token usage, and those whose agent did not (their tokens and cost are unknown)."""
FOREIGN = "foreign_calls"
"""The summary's count of an agent command's run: requests its agents sent into another
example's session with their own example's key (refused; ``foreign_call`` in the call log)."""
READ_TEXT = "-O tool_calls=auto"
SERVER_FLAGS = ("llama.cpp's llama-server: --jinja; llama-cpp-python: --chat_format "
                "chatml-function-calling, which also needs tool_choice sent")


class ToolCallCounts(BaseModel):
    """How one example's tool calls came back."""

    structured: int = 0
    """Calls the API returned as ``tool_calls``."""
    text: int = 0
    """Calls read from the answers' text (``-O tool_calls=text|auto``)."""
    unread: int = 0
    """Answers without a call that hold what looks like one written as text (nobody read it:
    ``-O tool_calls=native``, or a call the reader could not parse)."""
    foreign: int = 0
    """Requests the example's agent sent into another example's session with its own key
    (``--agent-cmd``: refused, never scored)."""


def counts_of(outputs: Mapping[str, Any]) -> ToolCallCounts | None:
    """The counts of a workflow's outputs: its last agent record's (``None``: no agent ran)."""
    trace = outputs.get("trace")
    records = [r for r in trace if isinstance(r, dict) and r.get("kind") == AGENT_RECORD] \
        if isinstance(trace, list) else []
    if not records:
        return None
    last = records[-1]
    return ToolCallCounts(structured=int(last.get("structured_calls", 0) or 0),
                          text=int(last.get("text_calls", 0) or 0),
                          unread=int(last.get("unread_text_calls", 0) or 0),
                          foreign=int(last.get(FOREIGN, 0) or 0))


class CallTally:
    """Sums the counts of a run's results (those of tool-calling examples)."""

    def __init__(self) -> None:
        self.examples = 0
        self.totals = ToolCallCounts()
        self.without = 0

    def add(self, counts: ToolCallCounts | None) -> None:
        if counts is None:
            return
        self.examples += 1
        self.totals.structured += counts.structured
        self.totals.text += counts.text
        self.totals.unread += counts.unread
        self.totals.foreign += counts.foreign
        self.without += counts.structured + counts.text == 0

    def counts(self) -> dict[str, int]:
        """The summary's counts (none for a run without tool-calling examples)."""
        if not self.examples:
            return {}
        return {STRUCTURED: self.totals.structured, TEXT: self.totals.text,
                UNREAD: self.totals.unread, NO_CALL: self.without}


def tool_calls_unmeasured(counts: Mapping[str, Any]) -> bool:
    """Whether a run's tool calling could not be measured: no call came back, structured or
    read from text, while answers hold calls written as text (exit status 3)."""
    return STRUCTURED in counts and not counts[STRUCTURED] and not counts.get(TEXT) \
        and bool(counts.get(UNREAD))


def tool_call_notes(counts: Mapping[str, Any]) -> list[str]:
    """What a person must know about a run's tool calls, with the likely fix (empty when the
    calls came back structured and no answer holds an unread text call)."""
    if STRUCTURED not in counts:
        return []
    structured, text, unread = (int(counts.get(k, 0)) for k in (STRUCTURED, TEXT, UNREAD))
    scored = int(counts.get(NO_CALL, 0))  # every tool-calling example, when none made a call
    if tool_calls_unmeasured(counts):
        return [f"no tool call came back in {scored} example(s), but {unread} answer(s) hold "
                "tool calls written as text that were not read: the scores measure the "
                "server's chat format, not the model's tool use. Read them with "
                f"{READ_TEXT} (or -O tool_calls=text; a call that is not valid JSON stays "
                f"unread), or make the server return structured calls ({SERVER_FLAGS})."]
    if structured + text == 0 and AGENT_USAGE[True] in counts:  # an agent command's run
        return [f"the agent command made no tool call in {scored} example(s): check that it "
                "connects to its session ($TOOLEVAL_MCP_URL, with $TOOLEVAL_MCP_TOKEN) and "
                "calls the tools it lists (docs/mcp.md)."]
    if structured + text == 0:
        return [f"no tool call came back in {scored} example(s), and no answer holds one "
                "written as text: check that the server gives the model the tools "
                f"({SERVER_FLAGS}), or describe them in the prompt with -O tool_calls=text."]
    notes = []
    if structured == 0:
        notes.append(f"no structured tool call came back: all {text} call(s) were read from "
                     f"the answers' text (for structured calls: {SERVER_FLAGS}).")
    if unread:
        notes.append(f"{unread} answer(s) hold tool calls written as text that were not read: "
                     f"{READ_TEXT} reads them (those that are valid JSON).")
    return notes


def foreign_notes(counts: Mapping[str, Any]) -> list[str]:
    """What a person must know when an agent reached for another example's session."""
    foreign = int(counts.get(FOREIGN, 0))
    if not foreign:
        return []
    return [f"{foreign} request(s) went into another example's session with an agent's own "
            "key: refused and scored nowhere (foreign_call in mcp_calls.jsonl), but an agent "
            "looked beyond its own example -- check what it reads (docs/mcp.md)."]


FORMAT_ERRORS = "format_errors"
"""The run summary's ``counts`` key: finished answers that could not be read in the task's
format (:attr:`~tooleval_agents.results.records.ExampleResult.format_error`)."""


def _no_call_came_back(counts: Mapping[str, Any]) -> bool:
    return STRUCTURED in counts and not counts[STRUCTURED] and not counts.get(TEXT)


def format_unmeasured(counts: Mapping[str, Any]) -> bool:
    """Whether no scored example's answer could be read in the task's format (exit status 3);
    a tool-calling run in which no call came back is :func:`tool_call_notes`' to judge."""
    scored = int(counts.get("scored", 0))
    return bool(scored) and int(counts.get(FORMAT_ERRORS, 0)) == scored \
        and not _no_call_came_back(counts)


def format_notes(counts: Mapping[str, Any], first: str | None = None) -> list[str]:
    """What a person must know about answers that could not be read (``first``: one of their
    parse errors, quoted), with the likely fix when none could."""
    errors, scored = int(counts.get(FORMAT_ERRORS, 0)), int(counts.get("scored", 0))
    if not errors or not scored or _no_call_came_back(counts):
        return []
    example = f'; the first: "{first[:120]}"' if first else ""
    if format_unmeasured(counts):
        return [f"no answer could be read in the task's format ({errors} of {scored} format "
                f"errors{example}): the scores measure the answer format, not the task. "
                "Compare a raw answer with the format the prompt asks for (tooleval view "
                "shows both), then make the model follow it: its chat template (llama.cpp: "
                "--jinja), a model that follows instructions, or another --strategy."]
    return [f"{errors} of {scored} answers ({errors / scored:.0%}) could not be read in the "
            f"task's format (format_errors{example}): scored as they are, mostly 0."]


__all__ = ["AGENT_RECORD", "AGENT_USAGE", "FOREIGN", "FORMAT_ERRORS", "NO_CALL", "STRUCTURED",
           "TEXT", "UNREAD", "CallTally", "ToolCallCounts", "counts_of", "foreign_notes",
           "format_notes", "format_unmeasured", "tool_call_notes", "tool_calls_unmeasured"]
