"""The package behind each ``provider:model`` spec, and what to install when it is missing.

LangChain's ``init_chat_model`` makes a provider's chat model from its integration package
(``anthropic:claude-...`` from ``langchain-anthropic``), which is installed apart; only
``langchain-openai`` comes with this project. A spec whose package is missing is refused before
anything runs, naming the package and the command that installs it (:func:`check_provider`):
a missing package is not a missing API key.

>>> missing_package("anthropic:claude-3-5-haiku-latest", "anthropic")
"model spec 'anthropic:claude-3-5-haiku-latest': the anthropic provider needs the \
langchain-anthropic package, which is not installed: pip install 'tooleval-agents[anthropic]' \
(or pip install langchain-anthropic)"
"""

from __future__ import annotations

import importlib.util

from tooleval_agents.contracts import OptionError

PROVIDER_MODULES: dict[str, str] = {
    "anthropic": "langchain_anthropic",
    "anthropic_bedrock": "langchain_aws", "bedrock": "langchain_aws",
    "bedrock_converse": "langchain_aws", "bedrock_mantle_anthropic": "langchain_aws",
    "bedrock_mantle_openai": "langchain_aws",
    "azure_ai": "langchain_azure_ai",
    "azure_openai": "langchain_openai", "openai": "langchain_openai",
    "langsmith": "langchain_openai",
    "baseten": "langchain_baseten",
    "cohere": "langchain_cohere",
    "deepseek": "langchain_deepseek",
    "fireworks": "langchain_fireworks",
    "google_anthropic_vertex": "langchain_google_vertexai",
    "google_genai": "langchain_google_genai",
    "google_vertexai": "langchain_google_vertexai",
    "groq": "langchain_groq",
    "huggingface": "langchain_huggingface",
    "ibm": "langchain_ibm",
    "litellm": "langchain_litellm",
    "meta": "langchain_meta",
    "mistralai": "langchain_mistralai",
    "nvidia": "langchain_nvidia_ai_endpoints",
    "ollama": "langchain_ollama",
    "openrouter": "langchain_openrouter",
    "perplexity": "langchain_perplexity",
    "together": "langchain_together",
    "upstage": "langchain_upstage",
    "xai": "langchain_xai",
}
"""Provider -> the module ``init_chat_model`` imports for it (its pip package: the module's
name with dashes), as LangChain 1.x names them."""
EXTRAS = {"anthropic": "anthropic", "google_genai": "google", "ollama": "ollama"}
"""Provider -> the extra of this project that installs its package (``providers``: all)."""
FALLBACKS = {"ollama": ("langchain_community",)}
"""Other modules ``init_chat_model`` makes a provider's model from when its own is missing."""


def spec_provider(spec: str) -> str | None:
    """The provider a ``provider:model`` spec names, when LangChain knows it.

    >>> spec_provider("anthropic:claude-3-5-haiku-latest"), spec_provider("reference")
    ('anthropic', None)
    """
    provider, colon, _ = spec.partition(":")
    return provider if colon and provider in PROVIDER_MODULES else None


def package_of(provider: str) -> str:
    """The pip package of a provider's integration (``langchain-google-genai``)."""
    return PROVIDER_MODULES[provider].replace("_", "-")


def installed(provider: str) -> bool:
    """Whether a module ``init_chat_model`` makes the provider's model from is installed."""
    return any(importlib.util.find_spec(module) is not None
               for module in (PROVIDER_MODULES[provider], *FALLBACKS.get(provider, ())))


def missing_package(spec: str, provider: str) -> str:
    """The one line that says what to install for ``spec``."""
    package = package_of(provider)
    extra = EXTRAS.get(provider)
    install = (f"pip install 'tooleval-agents[{extra}]' (or pip install {package})" if extra
               else f"pip install {package}")
    return (f"model spec {spec!r}: the {provider} provider needs the {package} package, "
            f"which is not installed: {install}")


def check_provider(spec: str) -> None:
    """Refuse a spec whose provider's package is not installed (an :class:`OptionError`:
    the command exits 2 before anything runs), naming the package and how to install it."""
    provider = spec_provider(spec)
    if provider is not None and not installed(provider):
        raise OptionError(missing_package(spec, provider))


__all__ = ["EXTRAS", "PROVIDER_MODULES", "check_provider", "installed", "missing_package",
           "package_of", "spec_provider"]
