"""Model specs: a LangChain chat model instance, an offline model name, or ``provider:model``."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel

from tooleval_agents.reference_models import (
    DEFAULT_NOISE_RATE,
    AnswerKey,
    NoisyReferenceChatModel,
    ReferenceChatModel,
    parse_offline_spec,
)

ModelSpec = BaseChatModel | str
"""A chat model instance, ``"reference"``, ``"noisy-reference[:RATE]"``, or a
``"provider:model"`` string for :func:`langchain.chat_models.init_chat_model`."""


def is_offline(spec: ModelSpec) -> bool:
    """Whether the spec names a built-in offline model (needs an answer key)."""
    return isinstance(spec, str) and parse_offline_spec(spec) is not None


def resolve_model(spec: ModelSpec, *, answer_key: AnswerKey | None = None,
                  **kwargs: Any) -> BaseChatModel:
    """Turn a spec into a chat model.

    Extra keyword arguments (``base_url``, ``temperature``, ``max_retries``...) pass through to
    ``init_chat_model``. The offline models need the run's ``answer_key``.

    Example::

        resolve_model("openai:gpt-4o-mini", temperature=0)
        resolve_model("noisy-reference:0.3", answer_key=key)
    """
    if isinstance(spec, BaseChatModel):
        return spec
    offline = parse_offline_spec(spec)
    if offline is not None:
        if answer_key is None:
            raise ValueError(f"model {spec!r} answers from the dataset's gold answers: "
                             "pass answer_key (the runner builds it from the strategy)")
        name, rate = offline
        if name == "reference":
            return ReferenceChatModel(answer_key=answer_key)
        return NoisyReferenceChatModel(
            answer_key=answer_key, model_name=spec,
            rate=DEFAULT_NOISE_RATE if rate is None else rate)
    if ":" not in spec:
        raise ValueError(f"model spec {spec!r}: use 'provider:model' (e.g. openai:gpt-4o-mini),"
                         " 'reference' or 'noisy-reference[:RATE]'")
    from langchain.chat_models import init_chat_model

    return init_chat_model(spec, **kwargs)
