"""Offline chat models: a scripted model for tests and demos, and the base that answers by
looking at the prompt's content (never at call order, so answers are right under concurrency).
With tools described in the prompt instead of bound
(:mod:`tooleval_agents.models.tool_calls.protocol`,
``-O tool_calls=text``) they answer with their calls written as text.

Token usage is estimated (4 characters per token, at least 1) so runs with offline models still
report realistic per-example costs; real providers report their own usage.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, PrivateAttr

from tooleval_agents.models.tool_calls.protocol import (
    history_from_text,
    render_calls,
    tools_in_prompt,
)

Reply = str | dict[str, Any] | AIMessage
"""A scripted answer: text, the arguments of a tool call (when tools are bound), or a message."""


def estimate_tokens(text: str) -> int:
    """A deterministic token estimate (about 4 characters per token)."""
    return max(1, (len(text) + 3) // 4)


def prompt_text(messages: Sequence[BaseMessage]) -> str:
    """All message contents joined, the text an offline model matches against."""
    return "\n".join(m.text if hasattr(m, "text") else str(m.content) for m in messages)


class ContentChatModel(BaseChatModel):
    """Base of offline models: subclasses implement :meth:`reply` from the prompt text.

    Supports ``bind_tools`` (a dict reply becomes a call of the first bound tool, which is what
    ``with_structured_output`` needs) and reports estimated ``usage_metadata``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model_name: str = "offline"
    """Name reported in run metadata."""
    _calls: int = PrivateAttr(default=0)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return f"tooleval-{self.model_name}"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        # LangChain's response cache keys on these: they must change whenever the answers
        # would, or a cached run would replay another model's (or another dataset's) answers.
        return {"model_name": self.model_name, "answers": self.answers_fingerprint()}

    def answers_fingerprint(self) -> str:
        """A digest of everything that decides this model's answers."""
        raise NotImplementedError

    @property
    def calls(self) -> int:
        """How many times the model has been asked (thread-safe counter)."""
        return self._calls

    def reply(self, prompt: str, messages: Sequence[BaseMessage]) -> Reply:
        raise NotImplementedError

    def reply_with_tools(self, prompt: str, messages: Sequence[BaseMessage],
                         tools: list[dict[str, Any]]) -> Reply:
        """The answer when tools are bound (OpenAI tool format); default :meth:`reply` (a
        dict reply then calls the first tool)."""
        return self.reply(prompt, messages)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with self._lock:
            self._calls += 1
        prompt = prompt_text(messages)
        tools = kwargs.get("tools")
        # Prompt mode (-O tool_calls=text): the tools described in the system message, the
        # calls and their answers written as text; played as the same agent, answered in text.
        in_prompt = None if tools else tools_in_prompt(messages)
        if in_prompt:
            messages = history_from_text(messages)
        bound = tools or in_prompt
        answer = (self.reply_with_tools(prompt_text(messages), messages, bound) if bound
                  else self.reply(prompt, messages))
        message = self._to_message(answer, bound)
        if in_prompt and message.tool_calls:
            message = AIMessage(content=render_calls(message))
        content = message.text if isinstance(message.content, str) else json.dumps(
            message.content)
        if message.tool_calls:
            content += json.dumps([c["args"] for c in message.tool_calls], ensure_ascii=False)
        # Tool definitions are part of what a provider reads (and bills) on every call.
        read = prompt + (json.dumps(tools, ensure_ascii=False) if tools else "")
        message.usage_metadata = {
            "input_tokens": estimate_tokens(read),
            "output_tokens": estimate_tokens(content),
            "total_tokens": estimate_tokens(read) + estimate_tokens(content),
        }
        message.response_metadata = {"model_name": self.model_name}
        return ChatResult(generations=[ChatGeneration(message=message)])

    @staticmethod
    def _to_message(answer: Reply, tools: list[dict[str, Any]] | None) -> AIMessage:
        if isinstance(answer, AIMessage):
            return answer.model_copy()
        if isinstance(answer, dict):
            if not tools:
                return AIMessage(content=json.dumps(answer, ensure_ascii=False))
            name = tools[0]["function"]["name"]
            return AIMessage(content="", tool_calls=[
                {"name": name, "args": answer, "id": f"call_{uuid.uuid4().hex[:12]}",
                 "type": "tool_call"}])
        return AIMessage(content=answer)

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | Any],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        formatted = [convert_to_openai_tool(t) for t in tools]
        return self.bind(tools=formatted, tool_choice=tool_choice, **kwargs)


class ScriptedChatModel(ContentChatModel):
    """Answers with the reply of the first rule whose regular expression matches the prompt.

    Example::

        model = ScriptedChatModel(rules=[(r"capital of France", "Paris")], default="?")
        model.invoke("What is the capital of France?").content  # "Paris"

    A rule's reply may be a callable of the prompt text (for answers built from the input).
    Without a matching rule and without ``default``, the model raises ``LookupError``, which
    a run records as a model error.
    """

    rules: list[tuple[str, Any]]
    """(regex, reply) pairs tried in order with ``re.search`` (DOTALL); a reply is a
    :data:`Reply` or a callable of the prompt text returning one (typed ``Any``: pydantic
    would try to coerce a callable into a message)."""
    default: Reply | None = None
    """Reply when no rule matches."""
    model_name: str = "scripted"

    def answers_fingerprint(self) -> str:
        def describe(reply: Any) -> str:
            if callable(reply):
                return f"{getattr(reply, '__module__', '')}.{getattr(reply, '__qualname__', '')}"
            return repr(reply)

        text = repr([(p, describe(r)) for p, r in self.rules]) + describe(self.default)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def reply(self, prompt: str, messages: Sequence[BaseMessage]) -> Reply:
        for pattern, answer in self.rules:
            if re.search(pattern, prompt, re.S):
                return answer(prompt) if callable(answer) else answer
        if self.default is None:
            raise LookupError(f"no scripted reply matches the prompt: {prompt[:200]!r}")
        return self.default
