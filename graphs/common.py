"""Small helpers every workflow shares: prompt rendering, messages and the model-call node.

Prompt conventions (the ``reference`` model depends on them, see
:mod:`tooleval_agents.models.reference`):

* the example's own input goes inside ``<input>\\n...\\n</input>`` (:func:`input_block`), and it
  is the *last* such block of the prompt;
* demonstrations go inside ``<example>...</example>`` (:func:`example_block`) and never contain
  ``<input>`` tags, so a demonstration can never be mistaken for the example being asked.

>>> input_block("Question: hi")
'<input>\\nQuestion: hi\\n</input>'
>>> render_json([{"step": "1.1 查询", "tool": ""}])
'[{"step": "1.1 查询", "tool": ""}]'
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig

from tooleval_agents.graphs.state import WorkflowState, usage_of

INPUT_OPEN, INPUT_CLOSE = "<input>", "</input>"
EXAMPLE_OPEN, EXAMPLE_CLOSE = "<example>", "</example>"

NodeUpdate = dict[str, Any]
"""A partial state update returned by a node."""


def render_json(value: Any) -> str:
    """Data shown to a model: one-line JSON with non-ASCII text kept readable.

    One line, like the paper's Python ``str()`` rendering, but valid JSON (double quotes,
    ``true``/``null``), which invites JSON answers rather than Python literals.
    """
    return json.dumps(value, ensure_ascii=False)


def _check_free_of_tags(text: str, what: str) -> None:
    for tag in (INPUT_OPEN, INPUT_CLOSE):
        if tag in text:
            raise ValueError(f"{what} contains {tag!r}; the reference model would misread it")


def input_block(text: str) -> str:
    """The example's own input wrapped in ``<input>`` tags (one per prompt, last)."""
    _check_free_of_tags(text, "an example input")
    return f"{INPUT_OPEN}\n{text}\n{INPUT_CLOSE}"


def example_block(text: str) -> str:
    """A demonstration wrapped in ``<example>`` tags; ``ValueError`` if it holds ``<input>``."""
    _check_free_of_tags(text, "a demonstration")
    return f"{EXAMPLE_OPEN}\n{text}\n{EXAMPLE_CLOSE}"


def build_messages(user: str, system: str | None = None) -> list[BaseMessage]:
    """Chat messages of a single-turn prompt: an optional system message, then the user's."""
    messages: list[BaseMessage] = [SystemMessage(system)] if system else []
    messages.append(HumanMessage(user))
    return messages


def answer_text(message: AIMessage) -> str:
    """The text of a model answer (content blocks joined; reasoning blocks left out)."""
    return message.text


MessagesOf = Callable[[WorkflowState], Sequence[BaseMessage]]


class ModelCallNode(Runnable[WorkflowState, NodeUpdate]):
    """The runnable :func:`model_call_node` returns (see there).

    A plain runnable rather than a ``RunnableLambda``: LangGraph already runs each node as a
    traced step in the node's own context, so a lambda would only add a second, nested run
    of the same name and one more task per call (measurable when a run is CPU-bound). The
    model call gets the node's config, so its run is the child of the node's run.
    """

    def __init__(self, model: BaseChatModel, messages_of: MessagesOf, name: str) -> None:
        self.model = model
        self.messages_of = messages_of
        self.name = name

    @staticmethod
    def _update(message: BaseMessage) -> NodeUpdate:
        if not isinstance(message, AIMessage):
            raise TypeError(f"chat model returned {type(message).__name__}, not AIMessage")
        return {"raw_outputs": [answer_text(message)], "usage": usage_of(message)}

    def invoke(self, input: WorkflowState, config: RunnableConfig | None = None,
               **kwargs: Any) -> NodeUpdate:
        return self._update(self.model.invoke(list(self.messages_of(input)), config))

    async def ainvoke(self, input: WorkflowState, config: RunnableConfig | None = None,
                      **kwargs: Any) -> NodeUpdate:
        return self._update(await self.model.ainvoke(list(self.messages_of(input)), config))


def model_call_node(model: BaseChatModel, messages_of: MessagesOf, *,
                    name: str = "model") -> ModelCallNode:
    """A graph node that asks ``model`` once with ``messages_of(state)``.

    The update appends the answer text to ``raw_outputs`` and adds the call's usage. Under
    ``ainvoke`` the model is called asynchronously, under ``invoke`` synchronously (LangGraph
    refuses a sync run of an async-only node). Provider exceptions propagate: the runner
    retries them and records infrastructure errors.
    """
    return ModelCallNode(model, messages_of, name)
