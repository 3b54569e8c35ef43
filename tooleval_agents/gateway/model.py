"""The model the gateway serves: the run's chat model (wrapped as the run wraps it: retry
policy, rate limit, response cache, accounting and transcript), asked what an agent's request
asks, in the example's accounting.

A request's tools are bound as the model binds tools (``bind_tools``: the provider's own tool
format), its tool choice and stop sequences applied; its sampling and length settings are not
(the run's ``--model-arg`` decide them, so agents are compared on one model with one set of
settings), and are recorded with the call. The answer is the model's whole answer (a stream
is sent once it is known: the retry policy and the cache work on whole answers).
"""

from __future__ import annotations

import contextlib
import uuid
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langsmith import tracing_context
from langsmith.utils import tracing_is_enabled

from tooleval_agents.gateway.wire import GatewayError, ModelRequest
from tooleval_agents.models.accounting import CallStats, use_stats
from tooleval_agents.models.failures import classify

STATUS_OF_KIND = {"rate_limit": ("rate_limit", 429), "timeout": ("timeout", 504),
                  "context_overflow": ("invalid_request", 400),
                  "not_found": ("server_error", 502), "auth": ("server_error", 502)}
"""How a failure of the run's model (after its retries) is answered: the agent's own request
was fine, so a refused key or an unknown model upstream is the gateway's 502; a prompt that
does not fit is the agent's 400 (agents shorten and ask again)."""


class ServedModel:
    """The run's model, asked an agent's requests (see the module docstring)."""

    def __init__(self, model: BaseChatModel, name: str) -> None:
        self.model = model
        self.name = name
        """The name the model is served under (``/v1/models``; what ``TOOLEVAL_MODEL``
        says to send)."""

    def bound(self, request: ModelRequest) -> Runnable[Any, Any]:
        """The model bound to the request's tools and tool choice (bound for each request:
        binding 33 tools costs a tenth of a millisecond, less than a key to keep it under)."""
        if not request.tools:
            return self.model
        try:
            return self.model.bind_tools(request.tools, tool_choice=request.tool_choice)
        except (ValueError, TypeError, KeyError) as exc:  # a schema the provider's binder refuses
            raise GatewayError("invalid_request", f"tools: the model cannot be bound to them: "
                               f"{exc}"[:500], param="tools") from None

    async def answer(self, request: ModelRequest, stats: CallStats | None) -> AIMessage:
        """The model's answer to ``request``, accounted in ``stats`` (the example's), the
        request's wire details recorded with the call in its transcript.

        Raises:
            GatewayError: the model failed (after its retries), said as the agent's provider
                would say it.
        """
        bound = self.bound(request)
        run_id = uuid.uuid4()
        config: RunnableConfig = {"run_id": run_id, "callbacks": []}
        try:
            with use_stats(stats), _untraced():
                message = await bound.ainvoke(request.messages, config,
                                              **({"stop": request.stop} if request.stop else {}))
        except GatewayError:
            raise
        except Exception as exc:
            raise failure(exc) from exc
        finally:
            if stats is not None:
                stats.update_call(str(run_id), {"request": request.record()})
        if not isinstance(message, AIMessage):
            raise GatewayError("server_error", f"the model answered a {type(message).__name__}, "
                               "not a message", status=502)
        return message


def failure(exc: Exception) -> GatewayError:
    """A failure of the run's model as the gateway answers it."""
    kind = classify(exc)
    said = f"the run's model failed: {type(exc).__name__}: {exc}"[:1000]
    if kind is None and isinstance(exc, LookupError):  # an offline model: no example here
        return GatewayError("invalid_request", said)
    if kind is None:  # the model's own failure
        return GatewayError("server_error", said)
    gateway_kind, status = STATUS_OF_KIND.get(kind, ("server_error", 502))
    return GatewayError(gateway_kind, said, status=status)  # type: ignore[arg-type]


def _untraced() -> contextlib.AbstractContextManager[Any]:
    """No LangSmith trace of a call answered for an outside agent (it has no run to be part
    of; the example's transcript holds it)."""
    return tracing_context(enabled=False) if tracing_is_enabled() else contextlib.nullcontext()


__all__ = ["ServedModel", "failure"]
