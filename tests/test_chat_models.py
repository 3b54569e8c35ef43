"""The offline scripted model: content-based answers, tool binding, usage, concurrency."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from tooleval_agents.models.chat_models import ScriptedChatModel, estimate_tokens


def test_answers_by_content_not_by_order() -> None:
    model = ScriptedChatModel(rules=[(r"apples", "red"), (r"sky", "blue")])
    assert model.invoke("the sky").content == "blue"
    assert model.invoke("apples").content == "red"
    assert model.invoke("the sky again").content == "blue"
    assert model.calls == 3


def test_callable_reply_and_missing_rule() -> None:
    model = ScriptedChatModel(rules=[(r"echo (\w+)", lambda p: p.split()[-1].upper())])
    assert model.invoke("echo hello").content == "HELLO"
    with pytest.raises(LookupError, match="no scripted reply"):
        model.invoke("something else")


def test_usage_metadata_is_estimated() -> None:
    msg = ScriptedChatModel(rules=[(".", "four")]).invoke("x" * 40)
    assert msg.usage_metadata is not None
    assert msg.usage_metadata["input_tokens"] == estimate_tokens("x" * 40) == 10
    assert msg.usage_metadata["output_tokens"] == 1


def test_structured_output_through_bound_tools() -> None:
    class Verdict(BaseModel):
        score: int
        reason: str

    model = ScriptedChatModel(rules=[(r"grade", {"score": 7, "reason": "fine"})])
    result = model.with_structured_output(Verdict).invoke("please grade this")
    assert result == Verdict(score=7, reason="fine")


def test_concurrent_answers_land_on_their_prompts() -> None:
    model = ScriptedChatModel(rules=[(rf"item {i}\b", f"answer {i}") for i in range(50)])

    async def run() -> list[str]:
        msgs = await asyncio.gather(*(model.ainvoke(f"item {i}") for i in range(50)))
        return [str(m.content) for m in msgs]

    assert asyncio.run(run()) == [f"answer {i}" for i in range(50)]
