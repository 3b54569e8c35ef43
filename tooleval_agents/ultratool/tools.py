"""UltraTool tool skeletons as LangChain tools (here, apart from :mod:`.skeletons`, so scoring
runs plans on the stubs without importing LangChain)."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import StructuredTool
from pydantic import ValidationError

from tooleval_agents.ultratool.records import ToolSkeleton
from tooleval_agents.ultratool.skeletons import (
    ToolCallError,
    args_model,
    problems_of,
    simulate_result,
)


def _validation_message(skeleton: ToolSkeleton) -> Any:
    def handle(error: Exception) -> str:
        if isinstance(error, ValidationError):
            problems = [p.message for p in problems_of(skeleton, error)]
            return f"Error: {ToolCallError(skeleton.name, problems)}"
        return f"Error: invalid call to {skeleton.name}: {error}"
    return handle


def skeleton_tool(skeleton: ToolSkeleton, *, seed: int | str = 0) -> StructuredTool:
    """A ``StructuredTool`` that checks arguments against the skeleton and returns simulated
    results. Invalid arguments do not raise: the tool answers ``"Error: invalid call to <tool>:
    unknown argument 'x' ..."`` (status ``error``) so an agent can repair its call.

    >>> t = ToolSkeleton.model_validate({"name": "add", "description": "Add numbers.",
    ...     "arguments": {"properties": {"a": {"type": "integer"}}}, "results": {"properties": {}}})
    >>> skeleton_tool(t).invoke({"a": "x"}).startswith("Error: invalid call to add")
    True
    """
    model = args_model(skeleton)
    aliases = {f: (info.alias or f) for f, info in model.model_fields.items()}

    def run(**kwargs: Any) -> dict[str, Any]:
        args = {aliases.get(k, k): v for k, v in kwargs.items() if v is not None}
        return simulate_result(skeleton, args, seed=seed)

    return StructuredTool.from_function(
        func=run, name=skeleton.name, description=skeleton.description, args_schema=model,
        handle_validation_error=_validation_message(skeleton))
