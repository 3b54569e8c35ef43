"""Model specs: a LangChain chat model instance, an offline model name, or ``provider:model``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from tooleval_agents.contracts import OptionError
from tooleval_agents.errors import ToolevalError, did_you_mean
from tooleval_agents.models.cache import SQLiteCache
from tooleval_agents.models.openai_compat import SERVER_URLS, model_arguments, split_arguments
from tooleval_agents.models.providers import check_provider
from tooleval_agents.models.reference import (
    DEFAULT_NOISE_RATE,
    AnswerKey,
    NoisyReferenceChatModel,
    ReferenceChatModel,
    parse_offline_spec,
)
from tooleval_agents.models.retry import RetryingChatModel, RetryPolicy

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
    check_model_spec(spec)
    check_provider(spec)  # a missing package is said as such, not as a missing API key
    from langchain.chat_models import init_chat_model

    return init_chat_model(spec, **kwargs)


def check_model_spec(spec: str) -> None:
    """Refuse a model spec that names no provider (an :class:`OptionError`, so the command
    exits 2 before anything runs), suggesting the likely spelling."""
    if parse_offline_spec(spec) is not None or ":" in spec:
        return
    provider, slash, model = spec.partition("/")
    hint = (f" did you mean '{provider}:{model}'?" if slash and provider and model
            else did_you_mean(spec, ("reference", "noisy-reference")))
    raise OptionError(f"model spec {spec!r}: use 'provider:model' (e.g. openai:gpt-4o-mini),"
                      f" 'reference' or 'noisy-reference[:RATE]';{hint}".rstrip(";"))


JUDGE_MAX_TOKENS = 2048
"""Default cap on a judge's answer (a planning verdict with seven reasons is ~600 tokens): a
judge that never stops must not hold a one-request local server for its whole context."""
OUTPUT_CAPS = ("max_tokens", "max_completion_tokens", "max_output_tokens", "num_predict",
               "max_new_tokens")
"""Model arguments that already bound an answer's length (any one disables the default cap)."""
ENDPOINT_ARGS = ("base_url", "api_base", "openai_api_base", "azure_endpoint", "endpoint",
                 "api_version", "default_headers", "api_key", "openai_api_key", "organization",
                 "openai_organization")
"""Model arguments that say where (and as whom) a provider is reached: a judge of the same
provider without its own takes them from the model, and they are not part of a run's
identity (a server restarted on another port resumes the same run)."""


def provider_model(spec: str, kwargs: dict[str, Any], *,
                   max_tokens: int | None = None) -> BaseChatModel:
    """``init_chat_model`` with the client's own retries off when the model has them (the
    run's :class:`~tooleval_agents.models.retry.RetryPolicy` is the only one), and ``max_tokens`` as
    a default cap when the model has that field and the user set no cap of their own.

    The compatibility layer of :mod:`tooleval_agents.models.openai_compat` is added to a
    ``ChatOpenAI``-like model sent to a ``base_url`` (``null_content`` and ``tool_choice``
    are read there).

    Raises:
        ValueError: a bad ``null_content``.
        OptionError: the provider's package is not installed (naming it).
        ToolevalError: the provider's client refused to start (no API key, a bad argument).
    """
    kwargs, ours = split_arguments(kwargs)
    try:
        model = resolve_model(spec, **kwargs)
        fields = type(model).model_fields
        extra: dict[str, Any] = model_arguments(fields, kwargs, ours)
        kwargs = {k: v for k, v in kwargs.items() if k not in extra}
        if "max_retries" in fields and "max_retries" not in kwargs:
            extra["max_retries"] = 0
        if (max_tokens is not None and "max_tokens" in fields
                and not any(k in kwargs for k in OUTPUT_CAPS)):
            extra["max_tokens"] = max_tokens
        cap = next((kwargs[k] for k in ("max_tokens", "max_completion_tokens") if k in kwargs),
                   extra.get("max_tokens"))
        if cap is not None and "extra_body" in fields and any(k in kwargs for k in SERVER_URLS):
            # langchain-openai sends the cap as max_completion_tokens, which OpenAI-compatible
            # servers such as llama-cpp-python's ignore: a rambling model then held the server
            # for minutes. Such a server also gets the older max_tokens.
            body = dict(extra.get("extra_body") or kwargs.get("extra_body") or {})
            body.setdefault("max_tokens", cap)
            extra["extra_body"] = body
            kwargs = {k: v for k, v in kwargs.items() if k != "extra_body"}
        return resolve_model(spec, **extra, **kwargs) if extra else model
    except (ValueError, ToolevalError):
        raise
    except Exception as exc:  # e.g. openai.OpenAIError "Missing credentials"
        first = (str(exc).strip().splitlines() or [""])[0]
        raise ToolevalError(
            f"cannot create model {spec!r}: {type(exc).__name__}: {first} (set the provider's "
            "API key in the environment, e.g. OPENAI_API_KEY, or fix --model-arg)") from exc


def cache_applies(model: BaseChatModel) -> bool:
    """Whether answers of ``model`` are cached by default: its temperature is 0 or unset (a
    sampled answer replayed would hide the spread a re-run should show)."""
    value = getattr(model, "temperature", None)
    return not isinstance(value, int | float) or value == 0


def pipeline_model(spec: str, kwargs: dict[str, Any], *, cache: bool | Path = True,
                   policy: RetryPolicy | None = None,
                   max_tokens: int | None = None) -> RetryingChatModel:
    """A provider model wrapped as a run wraps it, for commands that ask a model outside a run
    (building data): the retry ``policy`` and, when :func:`cache_applies`, the response cache
    (``cache``: the default file, another path, or ``False``).

    Raises:
        ValueError: an offline model (it answers from gold answers, not prompts).
        ToolevalError: as :func:`provider_model`.
    """
    if is_offline(spec):
        raise ValueError(f"--model {spec!r} answers from a dataset's gold answers and cannot "
                         "build new data: use a provider model (provider:model)")
    inner = provider_model(spec, kwargs, max_tokens=max_tokens)
    store: SQLiteCache | None = None
    if cache is not False and cache_applies(inner):
        store = SQLiteCache() if cache is True else SQLiteCache(cache)
    return RetryingChatModel(inner=inner, policy=policy or RetryPolicy(), response_cache=store)


def judge_model(spec: ModelSpec, kwargs: Mapping[str, Any] | None = None) -> BaseChatModel:
    """A judge from its spec: temperature 0 unless ``kwargs`` say otherwise, answers capped at
    :data:`JUDGE_MAX_TOKENS` unless they set a cap (an instance is used as it is)."""
    if isinstance(spec, BaseChatModel):
        return spec
    return provider_model(spec, {"temperature": 0, **(kwargs or {})},
                          max_tokens=JUDGE_MAX_TOKENS)
