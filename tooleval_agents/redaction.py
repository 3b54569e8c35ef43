"""Keeping API keys out of everything a run writes: config, results, cache keys, error messages.

Two mechanisms, applied together by :func:`redact`:

* **by name**: a mapping value whose key looks like a credential (``api_key``,
  ``openai_api_key``, ``authorization``, ``x-api-key``, ``password``, ``*_token``...) is replaced
  by ``"<redacted>"``, whatever it holds;
* **by value**: the values of secrets we know -- every environment variable whose name looks like
  a credential, and every value passed to :func:`register_secret` (the runner registers the
  ``api_key`` a caller gives a model) -- are replaced wherever they appear in a string, and
  well-known key shapes (``sk-...``, ``lsv2_...``, ``Bearer ...``) are masked in error texts.

Example::

    >>> register_secret("sk-test-SECRET123")
    >>> redact({"api_key": "x", "msg": "bad key sk-test-SECRET123"})
    {'api_key': '<redacted>', 'msg': 'bad key <redacted>'}
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable
from typing import Any

from pydantic import SecretBytes, SecretStr

REDACTED = "<redacted>"

_SECRET_NAME = re.compile(
    r"(api[_-]?key|apikey|secret|password|passwd|token|authorization|auth[_-]?header|"
    r"credential|private[_-]?key|access[_-]?key|session[_-]?key)", re.I)
"""Names of fields (and environment variables) that hold credentials."""
_NOT_SECRET_NAME = re.compile(r"(tokens|token_count|tokenizer)", re.I)
"""Field names that match :data:`_SECRET_NAME` but count tokens rather than hold one."""
_KEY_SHAPES = re.compile(
    r"(?:\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{8,}|\blsv2_[A-Za-z0-9_]{8,}|\bAIza[0-9A-Za-z_\-]{20,}"
    r"|\bxai-[A-Za-z0-9]{16,}|\bgsk_[A-Za-z0-9]{16,}|(?<=Bearer )[A-Za-z0-9._\-]{8,})")
"""Shapes of common provider keys, masked in error messages even when not registered."""
_MIN_SECRET = 6
"""Shorter values are not replaced by value (too likely to hit ordinary text)."""

_registered: set[str] = set()
_lock = threading.Lock()


def is_secret_name(name: str) -> bool:
    """Whether a field or variable name looks like it holds a credential."""
    return bool(_SECRET_NAME.search(name)) and not _NOT_SECRET_NAME.search(name)


def register_secret(value: object) -> None:
    """Remember a secret value so it is replaced wherever it appears later."""
    if isinstance(value, SecretStr | SecretBytes):
        value = value.get_secret_value()
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str) and len(value.strip()) >= _MIN_SECRET:
        with _lock:
            _registered.add(value.strip())


def register_secrets_in(mapping: dict[str, Any]) -> None:
    """Register every value of ``mapping`` (recursively) stored under a credential-like name."""
    for key, value in mapping.items():
        if isinstance(value, dict):
            register_secrets_in(value)
        elif is_secret_name(str(key)) or isinstance(value, SecretStr | SecretBytes):
            register_secret(value)


def known_secrets() -> list[str]:
    """Registered secrets and credential-like environment variables, longest first (so a key
    containing another is replaced whole)."""
    env = [v.strip() for k, v in os.environ.items()
           if is_secret_name(k) and len(v.strip()) >= _MIN_SECRET]
    with _lock:
        values = set(_registered) | set(env)
    return sorted(values, key=len, reverse=True)


def redact_text(text: str, *, shapes: bool = True, secrets: Iterable[str] | None = None) -> str:
    """``text`` with known secret values (and, with ``shapes``, key-shaped tokens) masked."""
    for secret in secrets if secrets is not None else known_secrets():
        if secret in text:
            text = text.replace(secret, REDACTED)
    if shapes:
        text = _KEY_SHAPES.sub(REDACTED, text)
    return text


def redact(value: Any, *, shapes: bool = True, names: bool = True,
           secrets: Iterable[str] | None = None) -> Any:
    """A copy of ``value`` (dicts, lists, strings...) without secrets: credential-named fields
    are replaced whole (unless ``names`` is false: data such as model outputs keeps its
    fields), known secret values are masked in every string (``secrets``: the values to
    mask, default :func:`known_secrets`)."""
    values = list(secrets) if secrets is not None else known_secrets()

    def walk(item: Any) -> Any:
        if isinstance(item, SecretStr | SecretBytes):
            return REDACTED
        if isinstance(item, str):
            return redact_text(item, shapes=shapes, secrets=values)
        if isinstance(item, dict):
            return {k: (REDACTED if names and is_secret_name(str(k)) and v not in (None, "", {})
                        else walk(v)) for k, v in item.items()}
        if isinstance(item, list | tuple):
            return [walk(v) for v in item]
        return item

    return walk(value)


def contains_secret(text: str) -> bool:
    """Whether ``text`` holds a known secret value (for assertions and self-checks)."""
    return any(s in text for s in known_secrets())


def model_params(model: Any) -> dict[str, Any]:
    """The parameters of a LangChain chat model fit to write down: serialisable constructor
    arguments (model name, temperature, base URL...) without credentials, secret references,
    HTTP clients or callbacks."""
    params: dict[str, Any] = {}
    try:
        if model.is_lc_serializable():
            from langchain_core.load import dumpd

            params = dict(dumpd(model).get("kwargs") or {})
    except Exception:  # a model that cannot serialise itself: fall back below
        params = {}
    if not params:
        try:
            params = dict(model._identifying_params)
        except Exception:
            params = {}
    for name in ("model_name", "model", "temperature"):
        if name not in params and isinstance(getattr(model, name, None), str | int | float):
            params[name] = getattr(model, name)
    clean = {k: v for k, v in params.items()
             if not _is_secret_ref(v) and not callable(v)
             and k not in ("callbacks", "callback_manager", "http_client", "http_async_client",
                           "client", "async_client", "root_client", "root_async_client",
                           "cache", "rate_limiter")}
    from pydantic_core import to_jsonable_python

    jsonable = to_jsonable_python(clean, fallback=lambda o: type(o).__name__)
    result: dict[str, Any] = redact(jsonable)
    return result


def _is_secret_ref(value: Any) -> bool:
    """LangChain's serialised secret placeholder ``{"lc": 1, "type": "secret", ...}``."""
    return isinstance(value, dict) and value.get("type") == "secret" and "lc" in value
