"""How a run is named: experiment names, path-safe labels, readable run directory names (the
settings that change the results as ``key=value``), and the package versions a run records.
What a run *is* is its identity (:mod:`tooleval_agents.run.identity`), not its name."""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tooleval_agents.contracts import (
    Split,
)
from tooleval_agents.models.chat_models import ContentChatModel
from tooleval_agents.models.identity import model_name_of, provider_of
from tooleval_agents.models.specs import (
    ENDPOINT_ARGS,
)
from tooleval_agents.redaction import (
    TRANSPORT_ARGS,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

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


def answer_args(kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """The model (or judge) arguments that change its answers: without endpoints, transport
    and connection settings (a run's name and identity hold these).

    >>> answer_args({"temperature": 0.7, "base_url": "http://h/v1", "timeout": 5})
    {'temperature': 0.7}
    """
    apart = {*ENDPOINT_ARGS, *TRANSPORT_ARGS, *CONNECTION_ARGS}
    return {k: v for k, v in (kwargs or {}).items() if k not in apart}


def agent_short(label: str) -> str:
    """An agent's label (:func:`~tooleval_agents.agents.agent_label`) as a run's name says it:
    a file's stem and factory, a module's last part and factory, a script's factory.

    >>> agent_short("ag.py:build"), agent_short("langchain.agents:create_agent")
    ('ag.build', 'agents.create_agent')
    >>> agent_short("__main__:my_agent"), agent_short("tests.x:test_a.<locals>.factory")
    ('my_agent', 'x.factory')
    """
    where, colon, attr = label.rpartition(":")
    attr = attr.rsplit(".", 1)[-1]  # a nested factory by its own name
    if not colon:
        return label
    if where.endswith(".py"):
        where = where[:-3]
    module = where.rsplit(".", 1)[-1]
    return attr if module in ("__main__", "") else f"{module}.{attr}"


MAX_NAME_TAIL = 80
"""Characters of a run name's options part (a longer one is cut: the identity, not the name,
tells runs apart)."""


def _setting(value: Any) -> str:
    if isinstance(value, Mapping):
        return "+".join(f"{k}:{_setting(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return "+".join(_setting(v) for v in value)
    return format(value, "g") if isinstance(value, float) else str(value)


def readable_name(split: Split, strategy: str, model: str, *, agent: str | None = None,
                  settings: Mapping[str, Any] | None = None) -> str:
    """A run's directory name: ``<benchmark>-<task>-<subset>-<strategy>[+<agent>]-<model>``,
    then each setting that is set as ``key=value`` (strategy and scoring options, model and
    judge arguments, epochs, tool faults), readable and path-safe. Runs of one name but
    different identities get numbered siblings (:mod:`tooleval_agents.run.identity`).

    >>> readable_name(Split("appbench", "plan", "ss"), "few_shot", "reference",
    ...               settings={"k": 3, "scoring": None, "epochs": 2})
    'appbench-plan-ss-few_shot-reference-k=3-epochs=2'
    """
    head = experiment_name(split, strategy if agent is None
                           else f"{strategy}+{agent_short(agent)}", model)
    parts = [path_safe(f"{k}={_setting(v)}") for k, v in (settings or {}).items()
             if v not in (None, "", {}, [])]
    tail = "-".join(parts)
    if len(tail) > MAX_NAME_TAIL:
        tail = tail[:MAX_NAME_TAIL].rstrip("-_.")
    return f"{head}-{tail}" if tail else head


def package_versions() -> dict[str, str]:
    """Versions of the packages that decide a run's behaviour, and Python's."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0]}
    for name in _PACKAGES:
        with contextlib.suppress(PackageNotFoundError):
            out[name] = version(name)
    return out


