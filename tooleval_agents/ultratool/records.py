"""UltraTool data contracts: tool skeletons, plan steps, raw samples and one record per dimension.

Field names follow the official files exactly, so ``record.official()`` is the upstream JSON
object again (what prompts render and what a rebuilt test set writes).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from tooleval_agents.contracts import RecordMeta
from tooleval_agents.ultratool.calls import ToolCall, parse_call

Lang = Literal["en", "zh"]
"""UltraTool's languages."""

UltraToolTask = Literal[
    "planning",
    "tool_creation_awareness",
    "tool_creation",
    "tool_usage_awareness",
    "tool_selection",
    "tool_usage",
]
"""The six dimensions of UltraTool, in the paper's order."""
TASKS: tuple[UltraToolTask, ...] = (
    "planning",
    "tool_creation_awareness",
    "tool_creation",
    "tool_usage_awareness",
    "tool_selection",
    "tool_usage",
)

PARENT = "null"
TOOL_FREE = ("No tool required", "不需要工具")


def step_id(step: str) -> str:
    """The step number, i.e. the text before the first space (``"1.2 Query ..."`` -> ``"1.2"``).

    This is the key the official scorer matches predicted and gold steps on.
    """
    return step.strip().split(" ", 1)[0]


class _Official(BaseModel):
    """Base of records that mirror an upstream JSON object."""

    model_config = ConfigDict(extra="forbid")

    def official(self) -> dict[str, Any]:
        """The record as the upstream file holds it (keys absent upstream stay absent)."""
        return self.model_dump(mode="json", exclude_unset=True, exclude={"meta"}, by_alias=True)


class PropertySchema(BaseModel):
    """One argument or result of a tool skeleton (a JSON-schema property).

    Upstream also uses ``items``, ``enum``, ``format``, ``properties``... : kept as extra fields.
    """

    model_config = ConfigDict(extra="allow")

    type: str | list[str] | None = None
    """JSON-schema type: ``string``, ``integer``, ``number``, ``boolean``, ``array``..."""
    description: str | None = None
    """What the argument means."""


class ObjectSchema(BaseModel):
    """The ``arguments`` or ``results`` object of a skeleton."""

    model_config = ConfigDict(extra="allow")

    type: str = "object"
    """Always ``object`` upstream."""
    properties: dict[str, PropertySchema] = Field(default_factory=dict)
    """Argument (or result) name -> schema. Upstream has no ``required`` list for arguments."""


class ToolSkeleton(_Official):
    """A tool as UltraTool describes it: name, description, argument and result schemas."""

    model_config = ConfigDict(extra="allow")

    name: str
    """Tool name, e.g. ``file_write``."""
    description: str
    """What the tool does."""
    arguments: ObjectSchema
    """Argument schema."""
    results: ObjectSchema
    """Result schema."""

    def arg_names(self) -> set[str]:
        return set(self.arguments.properties)


StepKind = Literal["parent", "tool_free", "tool_call"]


class PlanStep(_Official):
    """A step of a raw sample's gold plan."""

    step: str
    """Step text starting with its hierarchical number, e.g. ``1.2 Query the exchange rate``."""
    tool: str
    """``"null"`` (parent step), ``"No tool required"``/``"不需要工具"`` or a call string."""
    call: ToolCall | None = Field(default=None, exclude=True)
    """The parsed call for ``tool_call`` steps (filled by the raw-sample loader)."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def kind(self) -> StepKind:
        """Parent, tool-free or tool-call step."""
        if self.tool == PARENT:
            return "parent"
        if self.tool in TOOL_FREE:
            return "tool_free"
        return "tool_call"

    @property
    def id(self) -> str:
        return step_id(self.step)

    def official(self) -> dict[str, Any]:
        return {"step": self.step, "tool": self.tool}


class RawSample(_Official):
    """A line of ``test.json``: question, gold plan with calls, the tools it uses, domain."""

    question: str
    """The user's request."""
    plan: list[PlanStep]
    """Gold tree plan."""
    tools: list[ToolSkeleton]
    """Skeletons of the tools the plan calls."""
    domain: str
    """Domain label, e.g. ``Document``."""
    meta: RecordMeta | None = Field(default=None, exclude=True)
    """Where the record was read from."""

    def model_post_init(self, _context: Any) -> None:
        by_name = {t.name: t for t in self.tools}
        for s in self.plan:
            if s.kind == "tool_call" and s.call is None:
                tool = by_name.get(s.tool.split("(", 1)[0].strip())
                s.call = parse_call(s.tool, tool.arg_names() if tool else None)

    def official(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "plan": [s.official() for s in self.plan],
            "tools": [t.official() for t in self.tools],
            "domain": self.domain,
        }


class InputStep(_Official):
    """A plan step as shown to the model; ``tool``/``param`` are empty where it must answer."""

    model_config = ConfigDict(extra="forbid")

    step: str
    """Step text with its number."""
    tool: str | None = None
    """Empty string where the model must fill in; a tool name in ``tool_usage`` inputs."""
    param: str | None = None
    """Empty string where the model must fill arguments (``tool_usage`` only)."""


class StepLabel(_Official):
    """A gold ``{step, tool}`` item: ``"0"``/``"1"`` for awareness, a tool name for selection."""

    step: str
    """Step text with its number."""
    tool: str
    """The label."""


class CreatedTool(_Official):
    """A gold ``tool_creation`` item: the step and the skeleton to create for it."""

    step: str
    """Step text with its number."""
    tool: ToolSkeleton
    """The skeleton the model should create."""


class ToolUsageStep(_Official):
    """A gold ``tool_usage`` item."""

    step: str
    """Step text with its number."""
    tool: str
    """Tool name."""
    param: dict[str, str]
    """Argument name -> gold value (all strings upstream; 21 are empty)."""


class _Task(_Official):
    meta: RecordMeta | None = Field(default=None, exclude=True)
    """Where the record was read from (language, index, official / rebuilt / sample)."""


class PlanningRecord(_Task):
    """``test_set/planning.json``: question in, reference plan text."""

    input: str
    """The user's request."""
    reference: str
    """Gold plan, one numbered step per line."""


class AwarenessRecord(_Task):
    """``tool_usage_awareness`` (no toolset) and ``tool_creation_awareness`` (toolset of 8)."""

    input: list[InputStep]
    """The plan; steps to label carry ``tool: ""``."""
    toolset: list[ToolSkeleton] | None = None
    """Available tools (creation awareness only)."""
    reference: list[StepLabel]
    """Gold label per asked step: ``"1"`` = needs a tool / must create one."""


class ToolSelectionRecord(_Task):
    """``tool_selection``: pick a tool from a toolset of 8 for each asked step."""

    input: list[InputStep]
    """The plan; steps to answer carry ``tool: ""``."""
    toolset: list[ToolSkeleton]
    """Available tools (the sample's own plus look-alike interference tools)."""
    reference: list[StepLabel]
    """Gold tool name per asked step."""


class ToolCreationRecord(_Task):
    """``tool_creation``: create a skeleton for steps whose tool is missing from the toolset."""

    input: list[InputStep]
    """The plan; steps to answer carry ``tool: ""``."""
    toolset: list[ToolSkeleton]
    """Available tools (unrelated ones)."""
    reference: list[CreatedTool]
    """Gold skeleton per asked step."""


class ToolUsageRecord(_Task):
    """``tool_usage``: fill the arguments of each tool-call step."""

    question: str
    """The user's request."""
    input: list[InputStep]
    """The plan; tool-call steps carry the tool name and ``param: ""``."""
    toolset: list[ToolSkeleton]
    """Skeletons of the tools called."""
    reference: list[ToolUsageStep]
    """Gold arguments per tool-call step."""


TaskRecord = (
    PlanningRecord | AwarenessRecord | ToolSelectionRecord | ToolCreationRecord | ToolUsageRecord
)

RECORD_TYPES: dict[UltraToolTask, type[_Task]] = {
    "planning": PlanningRecord,
    "tool_creation_awareness": AwarenessRecord,
    "tool_creation": ToolCreationRecord,
    "tool_usage_awareness": AwarenessRecord,
    "tool_selection": ToolSelectionRecord,
    "tool_usage": ToolUsageRecord,
}
