"""Keeping API keys out of everything a run writes: config, results, cache keys, error messages.

Two mechanisms, applied together by :func:`redact`:

* **by name**: a mapping value whose key looks like a credential (``api_key``,
  ``openai_api_key``, ``authorization``, ``x-api-key``, ``password``, ``*_token``...) is replaced
  by ``"<redacted>"``, whatever it holds;
* **by value**: the values of secrets we know -- every value passed to
  :func:`register_secret` (the runner registers the ``api_key`` a caller gives a model,
  :func:`model_params` the model's credential headers) and the values of environment variables
  with a credential-like name that look like keys (:func:`looks_like_key`) -- are replaced
  wherever they appear in a string, and well-known key shapes (``sk-...``, ``lsv2_...``,
  ``Bearer ...``) are masked in error texts. Text that is not key-like is never altered: an
  environment variable ``FOO_API_KEY=Seattle`` does not mask "Seattle" in model outputs (that
  would change what re-scoring sees).

Example::

    >>> register_secret("sk-test-SECRET123")
    >>> redact({"api_key": "x", "msg": "bad key sk-test-SECRET123"})
    {'api_key': '<redacted>', 'msg': 'bad key <redacted>'}
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from pydantic import SecretBytes, SecretStr
from pydantic_core import to_jsonable_python

REDACTED = "<redacted>"

_SECRET_NAME = re.compile(
    r"(api[_-]?key|apikey|secret|password|passwd|token|authorization|auth[_-]?header|"
    r"credential|private[_-]?key|access[_-]?key|session[_-]?key|subscription|cookie|"
    r"authenticat|(?:^|[_-])auth(?:$|[_-])|(?:^|[_-])key$)", re.I)
"""Names of fields, headers and environment variables that hold credentials (``api_key``,
``Ocp-Apim-Subscription-Key``, ``X-Auth``, ``Cookie``, any name ending in ``-key`` /
``_key``...)."""
_NOT_SECRET_NAME = re.compile(r"(tokens|token_count|tokenizer)", re.I)
"""Field names that match :data:`_SECRET_NAME` but count tokens rather than hold one."""
_KEY_SHAPES = re.compile(
    r"(?:\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{8,}|\blsv2_[A-Za-z0-9_]{8,}|\bAIza[0-9A-Za-z_\-]{20,}"
    r"|\bxai-[A-Za-z0-9]{16,}|\bgsk_[A-Za-z0-9]{16,}|(?<=Bearer )[A-Za-z0-9._\-]{8,})")
"""Shapes of common provider keys, masked in error messages even when not registered."""
_MIN_SECRET = 6
"""Shorter values are not replaced by value (too likely to hit ordinary text)."""
_MIN_KEY = 16
"""An environment value shorter than this is a key only if it has a known key shape."""
_WORDS = re.compile(r"[A-Za-z]+(?:[ ./_-][A-Za-z]+)*")
"""Purely alphabetic words (``Seattle``, ``my-default-region``, ``application/json``):
not a key."""
TRANSPORT_ARGS = frozenset({
    "callbacks", "callback_manager", "http_client", "http_async_client", "client",
    "async_client", "root_client", "root_async_client", "cache", "rate_limiter",
    "default_headers", "default_query", "headers", "extra_headers", "extra_query",
    "openai_proxy", "proxy", "proxies", "http_proxy", "https_proxy", "client_kwargs",
    "async_client_kwargs", "http_client_kwargs",
})
"""Constructor arguments of chat models that carry transport (headers, query parameters, HTTP
clients, proxies), which may hold credentials under any name: never written down."""
_HEADER_FIELDS = ("default_headers", "default_query", "headers", "extra_headers",
                  "extra_query")
"""Fields whose mappings hold header or query values (registered as secrets)."""
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")

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


def looks_like_key(value: str) -> bool:
    """Whether a value has the look of a key: a known key shape (``sk-...``, ``lsv2_...``), or
    at least :data:`_MIN_KEY` characters without spaces that are not plain words, a URL or a
    path.

    >>> looks_like_key("Seattle"), looks_like_key("sk-proj-abcdef123456")
    (False, True)
    >>> looks_like_key("3f9a0c7e1b2d4e6f8a9b0c1d"), looks_like_key("https://example.com/v1")
    (True, False)
    """
    text = value.strip()
    if any(m.span() == (0, len(text)) for m in _KEY_SHAPES.finditer(text)):
        return True
    if len(text) < _MIN_KEY or any(c.isspace() for c in text):
        return False
    if _URL.match(text) or text.startswith(("/", "~", "./")):
        return False
    return not _WORDS.fullmatch(text)


def known_secrets() -> list[str]:
    """Registered secrets, and the values of credential-named environment variables that look
    like keys (:func:`looks_like_key`), longest first (so a key containing another is replaced
    whole)."""
    env = [v.strip() for k, v in os.environ.items()
           if is_secret_name(k) and looks_like_key(v)]
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


def register_header_secrets(values: Mapping[Any, Any]) -> None:
    """Register the header (or query parameter) values of a model's transport that may be
    credentials: those under a credential-like name (``Ocp-Apim-Subscription-Key``,
    ``X-Auth``...) and any key-like value (:func:`looks_like_key`), whatever its name. Other
    values (``Content-Type: application/json``) are left alone: masking them would alter
    ordinary text in stored outputs."""
    for key, value in values.items():
        secret = isinstance(value, SecretStr | SecretBytes) or (
            isinstance(value, str) and (is_secret_name(str(key)) or looks_like_key(value)))
        if secret:
            register_secret(value)


def clean_url(url: str) -> str:
    """``url`` without credentials: user info and query string dropped (their secret-looking
    parts registered), e.g. ``https://u:pw@host/v1?api-key=x`` -> ``https://host/v1``."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # not a URL after all: mask what we can
        return redact_text(url)
    for secret in (parts.password, parts.username):
        if secret:
            register_secret(secret)
    register_header_secrets(dict(parse_qsl(parts.query)))
    netloc = host + (f":{port}" if port is not None else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _clean_urls(value: Any) -> Any:
    if isinstance(value, str) and _URL.match(value):
        return clean_url(value)
    if isinstance(value, dict):
        return {k: _clean_urls(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean_urls(v) for v in value]
    return value


def model_params(model: Any) -> dict[str, Any]:
    """The parameters of a LangChain chat model fit to write down: serialisable constructor
    arguments (model name, temperature, base URL...) without credentials, secret references,
    transport fields (:data:`TRANSPORT_ARGS`: headers, query parameters, HTTP clients, proxies) or
    callbacks; URLs lose their user info and query string.

    As a side effect the credentials found in the transport (header and query values, URL
    user info) are registered (:func:`register_header_secrets`), so they are masked wherever
    they appear later (errors, stored outputs)."""
    params = _public_params(model)
    for name in ("model_name", "model", "temperature"):
        if name not in params and isinstance(getattr(model, name, None), str | int | float):
            params[name] = getattr(model, name)
    for name in _HEADER_FIELDS:
        for source in (params.get(name), getattr(model, name, None)):
            if isinstance(source, Mapping):
                register_header_secrets(source)
    for name, value in params.items():  # proxies: register their user info, then drop them
        if name in TRANSPORT_ARGS and isinstance(value, str | dict | list):
            _clean_urls(value)
    clean = {k: v for k, v in params.items()
             if not _is_secret_ref(v) and not callable(v) and k not in TRANSPORT_ARGS}
    jsonable = _clean_urls(to_jsonable_python(clean, fallback=lambda o: type(o).__name__))
    result: dict[str, Any] = redact(jsonable)
    return result


_BASE_FIELDS = frozenset({"metadata", "tags", "custom_get_token_ids", "verbose",
                          "disable_streaming", "output_version", "profile"})
"""Fields every LangChain chat model has that say nothing about its answers."""


def _public_params(model: Any) -> dict[str, Any]:
    """A model's parameters from public data: its serialised constructor arguments
    (``langchain_core.load.dumpd``) when it is serialisable; an offline model's name and the
    digest of its answers (``answers_fingerprint``: its answer key can be large); else its
    fields that differ from their defaults."""
    try:
        if model.is_lc_serializable():
            from langchain_core.load import dumpd

            return dict(dumpd(model).get("kwargs") or {})
    except Exception:  # a model that cannot serialise itself: fall back below
        pass
    fingerprint = getattr(model, "answers_fingerprint", None)
    if callable(fingerprint):
        return {"model_name": getattr(model, "model_name", None), "answers": fingerprint()}
    try:
        fields = model.model_dump(exclude_defaults=True, exclude=set(TRANSPORT_ARGS))
    except Exception:
        return {}
    return {k: v for k, v in fields.items() if k not in _BASE_FIELDS}


def _is_secret_ref(value: Any) -> bool:
    """LangChain's serialised secret placeholder ``{"lc": 1, "type": "secret", ...}``."""
    return isinstance(value, dict) and value.get("type") == "secret" and "lc" in value
