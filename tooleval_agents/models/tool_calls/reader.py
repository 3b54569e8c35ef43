"""A chat model that reads the tool calls another one writes as text.

:class:`TextToolCallReader` wraps a chat model (composition through the public
``BaseChatModel`` interface: the wrapped model is called with ``ainvoke``/``invoke``, so its
cache, retries and callbacks work as they do alone). An answer whose calls were written as
text -- fenced JSON, ``<tool_call>`` tags, Llama 3 or Mistral styles
(:mod:`~tooleval_agents.models.tool_calls.parse`) -- comes back with those calls as
``AIMessage.tool_calls`` and ``response_metadata["tool_calls_source"] == "text"``. Every agent
gets them that way: the built-in one, the hierarchical one, and a user's ``--agent`` (e.g.
``langchain.agents.create_agent``); the tools' answers go back to the model as the
conversation continues, as text
(:func:`~tooleval_agents.models.tool_calls.protocol.history_as_text`).

Modes (``-O tool_calls=...`` of the tool-calling strategies, :data:`ToolCallMode`):

* ``auto`` -- the tools are bound natively (the server sees them); an answer with structured
  calls is kept as it is, one without has its text read;
* ``text`` -- prompt mode: nothing tool-related goes through the API (no ``tools``,
  ``tool_choice`` or ``parallel_tool_calls``); the tools are described in the system message
  (:func:`~tooleval_agents.models.tool_calls.protocol.with_tool_prompt`) and the calls read from the
  text. ``tool_choice`` cannot be forced there and is dropped.

Which text is a call: an object with a tool name and an arguments key (``arguments``,
``parameters``, ``args``), whatever the name -- a call of a tool the agent does not have then
fails as a structured call of an unknown tool does (the agent answers with an error the model
can act on, and the trajectory records the wrong call); a bare ``{"name": ...}`` only when it
names a bound tool. Calls get the id the text gave them, else ``text_<n>_<i>`` (``n``: messages
sent so far), deterministic so a rerun's prompts, and the response cache, stay the same.

Example::

    reader = TextToolCallReader(inner=ChatOpenAI(base_url=..., model="qwen"), mode="auto")
    agent = create_agent(reader, tools)      # text calls arrive as tool calls
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from langchain_core.caches import BaseCache
from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManager,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict

from tooleval_agents.models.retry import bind_through
from tooleval_agents.models.tool_calls import SOURCE_KEY, ToolCallMode
from tooleval_agents.models.tool_calls.parse import parse_tool_calls
from tooleval_agents.models.tool_calls.protocol import history_as_text, with_tool_prompt

API_TOOL_ARGS = ("tools", "tool_choice", "parallel_tool_calls", "functions", "function_call")
"""Call arguments that are about API tool calling: none is sent in ``text`` mode."""


def tool_names(tools: Sequence[Any] | None) -> set[str]:
    """The names of tool definitions as providers take them (OpenAI's ``{"type": "function",
    "function": {"name": ...}}``, or a bare ``{"name": ...}``)."""
    names = set()
    for tool in tools or ():
        if isinstance(tool, dict):
            function = tool.get("function")
            name = (function if isinstance(function, dict) else tool).get("name")
            if isinstance(name, str):
                names.add(name)
    return names


def _child_config(run_manager: Any) -> RunnableConfig:
    """The wrapped model's call as a child of this reader's run (what a chain's ``get_child``
    does; a model's run manager has none): the same inheritable handlers, tags and metadata."""
    if run_manager is None:
        return {}
    manager = CallbackManager(handlers=[], parent_run_id=run_manager.run_id)
    manager.set_handlers(run_manager.inheritable_handlers)
    manager.add_tags(run_manager.inheritable_tags)
    manager.add_metadata(run_manager.inheritable_metadata)
    return {"callbacks": manager}


def read_text_calls(answer: AIMessage, names: set[str], position: int) -> AIMessage:
    """``answer`` with the calls written in its text as ``tool_calls`` (marked ``text``); an
    answer with structured calls, or without any written call, is returned as it is."""
    if answer.tool_calls:
        return answer
    calls = parse_tool_calls(answer.text, names)
    if not calls:
        return answer
    tool_calls = [{"name": c.name, "args": c.args, "id": c.id or f"text_{position}_{i}",
                   "type": "tool_call"} for i, c in enumerate(calls)]
    return answer.model_copy(update={
        "tool_calls": tool_calls,
        "response_metadata": {**answer.response_metadata, SOURCE_KEY: "text"}})


class TextToolCallReader(BaseChatModel):
    """``inner`` whose tool calls written as text come back as ``tool_calls`` (see the module
    docstring)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: BaseChatModel
    """The model under test (called through its public interface)."""
    mode: Literal["text", "auto"] = "auto"
    """``auto``: tools bound natively, text read when no structured call came; ``text``: the
    tools described in the prompt, calls read from the text."""
    cache: BaseCache | bool | None = False
    """Never cached here: ``inner`` caches what the server answered (this only reads it)."""

    @property
    def _llm_type(self) -> str:
        return "tooleval-tool-call-reader"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"inner": self.inner.get_name(), "tool_calls": self.mode}

    def _prepare(self, messages: list[BaseMessage], kwargs: dict[str, Any]
                 ) -> tuple[list[BaseMessage], dict[str, Any], set[str]]:
        """What is sent to ``inner`` (messages, call arguments) and the bound tools' names."""
        names = tool_names(kwargs.get("tools"))
        sent = history_as_text(messages)
        if self.mode == "text":
            tools = kwargs.get("tools") or []
            kwargs = {k: v for k, v in kwargs.items() if k not in API_TOOL_ARGS}
            if tools:
                sent = with_tool_prompt(sent, tools)
        return sent, kwargs, names

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        sent, call_kwargs, names = self._prepare(messages, kwargs)
        answer = self.inner.invoke(sent, _child_config(run_manager), stop=stop, **call_kwargs)
        return ChatResult(generations=[ChatGeneration(
            message=read_text_calls(answer, names, len(messages)))])

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                         run_manager: AsyncCallbackManagerForLLMRun | None = None,
                         **kwargs: Any) -> ChatResult:
        sent, call_kwargs, names = self._prepare(messages, kwargs)
        answer = await self.inner.ainvoke(sent, _child_config(run_manager), stop=stop,
                                          **call_kwargs)
        return ChatResult(generations=[ChatGeneration(
            message=read_text_calls(answer, names, len(messages)))])

    def bind_tools(self, tools: Sequence[dict[str, Any] | type | Callable[..., Any] | Any], *,
                   tool_choice: Any = None,
                   **kwargs: Any) -> Runnable[LanguageModelInput, AIMessage]:
        """``text``: the tools kept for the prompt (nothing for the API); ``auto``: the tools
        formatted and bound by ``inner``, the calls made through this reader."""
        if self.mode == "text":
            return self.bind(tools=[convert_to_openai_tool(t) for t in tools])
        return bind_through(self, self.inner, tools, tool_choice=tool_choice, **kwargs)


def read_tool_calls(model: BaseChatModel, mode: ToolCallMode) -> BaseChatModel:
    """``model`` as a tool-calling strategy uses it under ``-O tool_calls=mode``: itself for
    ``native``, else wrapped in a :class:`TextToolCallReader`."""
    return model if mode == "native" else TextToolCallReader(inner=model, mode=mode)


__all__ = ["API_TOOL_ARGS", "TextToolCallReader", "read_text_calls",
           "read_tool_calls", "tool_names"]
