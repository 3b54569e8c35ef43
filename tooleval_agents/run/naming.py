"""How a run is named and identified: experiment names, path-safe labels, the identity suffix of
options that change the results, and the package versions a run records."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tooleval_agents.contracts import (
    Split,
)
from tooleval_agents.models.chat_models import ContentChatModel
from tooleval_agents.models.identity import model_name_of, provider_of
from tooleval_agents.models.redaction import (
    TRANSPORT_ARGS,
    redact,
)
from tooleval_agents.models.specs import (
    ENDPOINT_ARGS,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

from tooleval_agents.run.experiment import _jsonable

_PACKAGES = ("tooleval-agents", "langchain-core", "langchain", "langgraph", "langsmith",
             "langchain-openai", "openai", "pydantic")


def model_label(model: str | BaseChatModel) -> str:
    """What a model is called in experiment names: the spec, or ``<provider>:<model name>``
    (:func:`~tooleval_agents.models.identity.provider_of`), as a spec would name it."""
    if isinstance(model, str):
        return model
    name = model_name_of(model)
    if isinstance(model, ContentChatModel):
        return model.model_name
    kind = provider_of(model)
    return f"{kind}:{name}" if name else kind


def path_safe(text: str) -> str:
    """``text`` usable as one path component (``openai:gpt-4o`` -> ``openai_gpt-4o``)."""
    cleaned = re.sub(r"[^A-Za-z0-9._=+-]+", "_", text).strip("._")
    return cleaned or "model"


def experiment_name(split: Split, strategy: str, model: str) -> str:
    """``<benchmark>-<task>-<subset>-<strategy>-<model>``, safe as a directory name."""
    return f"{split.name}-{path_safe(strategy)}-{path_safe(model)}"


CONNECTION_ARGS = frozenset({"timeout", "request_timeout", "max_retries", "streaming"})
"""Model arguments about the connection, not the answers (left out of a run's identity, with
the endpoint and transport ones)."""


def identity_suffix(**parts: Any) -> str:
    """``-<8 hex>`` naming what else changes a run's results (strategy and scoring options,
    model and judge arguments but their endpoints, transport and connection settings;
    secrets masked first), ``""`` when none is set: runs that differ only there get their own
    directories, default runs keep a plain name.

    >>> identity_suffix(strategy_options={}, model_kwargs=None)
    ''
    >>> identity_suffix(strategy_options={"k": 3}) != identity_suffix(strategy_options={"k": 5})
    True
    """
    apart = {*ENDPOINT_ARGS, *TRANSPORT_ARGS, *CONNECTION_ARGS}
    given = {k: {a: x for a, x in v.items() if a not in apart}
             if k.endswith("kwargs") and isinstance(v, Mapping) else v for k, v in parts.items()}
    given = {k: v for k, v in given.items() if v}
    if not given:
        return ""
    text = json.dumps(redact(_jsonable(given)), sort_keys=True, default=str)
    return "-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def package_versions() -> dict[str, str]:
    """Versions of the packages that decide a run's behaviour, and Python's."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0]}
    for name in _PACKAGES:
        with contextlib.suppress(PackageNotFoundError):
            out[name] = version(name)
    return out


