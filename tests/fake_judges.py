"""Judge models and verdicts for the judge tests: what a judge server answers (:data:`VERDICT`,
:func:`is_judge` tells its requests from the model's) and a chat model that judges by a marker in
the reviewed text (:class:`StepJudge`)."""

from __future__ import annotations

import json
from typing import Any

from fake_openai import ChatRequest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from tooleval_agents.evaluators.ultratool.judge.prompts import DIMENSIONS as JUDGE_DIMENSIONS
from tooleval_agents.evaluators.ultratool.judge.prompts import JudgeTask

DIMENSIONS = ("accuracy", "completeness", "executability", "syntactic_soundness",
              "structural_rationality", "efficiency", "overall")
"""The planning judge's dimensions, as the structured verdict names them."""
VERDICT = json.dumps({d: {"reason": "fine", "score": 8} for d in DIMENSIONS})
"""A structured planning verdict: 8 on every dimension."""


def is_judge(request: ChatRequest) -> bool:
    """Whether a request to the fake server is the judge's (it asks for structured output)."""
    return "response_format" in request.body or "tools" in request.body


class StepJudge(BaseChatModel):
    """Overall 9 for a reviewed text holding GOOD, 0 (rejected) for BROKEN, else 3; dims 5."""

    @property
    def _llm_type(self) -> str:
        return "step-judge"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        prompt = str(messages[-1].content)
        tail = prompt.rsplit("Plan to review", 1)[-1].rsplit("Created tool", 1)[-1]
        overall = 0 if "BROKEN" in tail else 9 if "GOOD" in tail else 3
        task: JudgeTask = "tool_creation" if "Created tool" in prompt else "planning"
        items = [{d.score_key("en"): 5} for d in JUDGE_DIMENSIONS[task]] + [{"Overall": overall}]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(json.dumps(items)))])
