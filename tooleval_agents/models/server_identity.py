"""What a model's server says about itself, so that a changed server never replays cached
answers silently.

A model served on an OpenAI-compatible endpoint of one's own (llama.cpp's ``llama-server``,
llama-cpp-python, vLLM...) is named by its ``base_url`` and model name only: restart the server
with another model file, chat template or build, and nothing the client sends changes -- the
response cache would replay the old server's answers. So, once per run, for a model with an
explicit endpoint (``base_url``), the runner asks the server (:func:`probe_server`, a short
timeout, nothing fails when an endpoint is missing):

* ``GET <base_url>/models`` -- the model's entry (its stable fields: ``id``, ``owned_by``,
  ``root``, ``parent``, ``max_model_len``, and llama.cpp's ``meta``: parameters, size, vocab);
* ``GET <root>/props`` -- llama.cpp's model path and alias, chat template (by digest) and its
  capabilities, build, modalities, and default sampling (what a request without a temperature
  gets).

The answer's digest is part of the response cache key (a changed server misses the cache) and
the run's ``config.json`` (a run directory is not resumed on another server). The cache also
remembers the last identity seen per endpoint and model (:meth:`SQLiteCache.server_seen`), so a
run can say "the server changed since its answers were cached: not replaying them".

Not used: fields that change on every request or restart (``created``, permission ids, slots,
context size),
and answers' ``system_fingerprint`` -- it needs a completion to read, and hosted providers
change it with their backend configuration (llama.cpp's equals its build, read from /props).
Servers that report nothing of their model file or template (llama-cpp-python reports only the
model's id) are said to be so when cached answers were replayed: use ``--no-cache`` after
changing such a server.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

import httpx
from pydantic import BaseModel, Field, SecretStr

from tooleval_agents.redaction import clean_url

log = logging.getLogger(__name__)

PROBE_TIMEOUT = 2.0
"""Seconds each probe request may take."""
MODEL_FIELDS = ("id", "owned_by", "root", "parent", "max_model_len", "meta")
PROPS_FIELDS = ("model_path", "model_alias", "chat_template_caps", "build_info", "modalities")
SAMPLING_FIELDS = ("temperature", "top_k", "top_p", "min_p", "typical_p", "repeat_penalty",
                   "presence_penalty", "frequency_penalty")
"""llama.cpp's default sampling (``default_generation_settings``): what a request that sets
no temperature is answered with."""
_ENDPOINT_ATTRS = ("openai_api_base", "base_url", "api_base")
_KEY_ATTRS = ("openai_api_key", "api_key")
_DESCRIBED = {"model_path": "model file", "model_alias": "model alias",
              "chat_template_sha256": "chat template", "chat_template_caps": "chat template",
              "build_info": "build", "modalities": "modalities",
              "sampling": "default sampling"}


class ServerIdentity(BaseModel):
    """What a server reported about itself and the model (no secret: URLs and names only)."""

    endpoint: str
    """The ``base_url`` probed (without user info or query string)."""
    model_name: str
    """The model name the run asks for."""
    model: dict[str, Any] = Field(default_factory=dict)
    """The model's entry of ``GET /models`` (stable fields only)."""
    props: dict[str, Any] = Field(default_factory=dict)
    """llama.cpp's ``GET /props`` fields (the chat template as ``chat_template_sha256``)."""

    @property
    def digest(self) -> str:
        """16 hex digits naming everything reported (the cache key's part)."""
        text = json.dumps([self.model, self.props], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    @property
    def informative(self) -> bool:
        """Whether the server reported more than the model name asked for."""
        return bool(self.props) or bool(set(self.model) - {"id", "owned_by"}) or \
            self.model.get("id", self.model_name) != self.model_name

    @property
    def key(self) -> str:
        """The endpoint and model this identity is of (the cache's ``servers`` key)."""
        return hashlib.sha256(f"{self.endpoint}\x00{self.model_name}".encode()).hexdigest()

    def record(self) -> dict[str, Any]:
        """As ``config.json`` keeps it (``model.server``)."""
        return {"endpoint": self.endpoint, "digest": self.digest, "model": self.model,
                "props": self.props}

    def changes(self, before: dict[str, Any]) -> list[str]:
        """What differs from an earlier :meth:`record` (e.g. ``["chat template", "build"]``)."""
        old_props, old_model = before.get("props") or {}, before.get("model") or {}
        found = [_DESCRIBED.get(k, k) for k in sorted(set(old_props) | set(self.props))
                 if old_props.get(k) != self.props.get(k)]
        if old_model != self.model:
            found.append("model entry of /models")
        return list(dict.fromkeys(found))


def endpoint_of(model: Any) -> str | None:
    """A chat model's explicit endpoint (``base_url``), if it has one."""
    for attr in _ENDPOINT_ATTRS:
        value = getattr(model, attr, None)
        if isinstance(value, str) and value.startswith(("http://", "https://")):
            return value.rstrip("/")
    return None


def _key_of(model: Any) -> str | None:
    for attr in _KEY_ATTRS:
        value = getattr(model, attr, None)
        if isinstance(value, SecretStr):
            return value.get_secret_value() or None
        if isinstance(value, str) and value:
            return value
    return None


def _get(client: httpx.Client, url: str) -> dict[str, Any] | None:
    try:
        response = client.get(url)
        value = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError) as exc:
        log.debug("server probe %s: %s", url, type(exc).__name__)
        return None
    return value if isinstance(value, dict) else None


def _model_entry(listing: dict[str, Any] | None, name: str) -> dict[str, Any]:
    entries = [e for e in (listing or {}).get("data") or [] if isinstance(e, dict)]
    chosen = next((e for e in entries if e.get("id") == name), None)
    if chosen is None and len(entries) == 1:  # one model served, whatever it is called
        chosen = entries[0]
    return {k: chosen[k] for k in MODEL_FIELDS if chosen is not None and k in chosen}


def _props(props: dict[str, Any] | None) -> dict[str, Any]:
    out = {k: props[k] for k in PROPS_FIELDS if props and props.get(k) not in (None, "")}
    template = (props or {}).get("chat_template")
    if isinstance(template, str) and template:
        out["chat_template_sha256"] = hashlib.sha256(template.encode("utf-8")).hexdigest()
    settings = (props or {}).get("default_generation_settings")
    if isinstance(settings, dict):  # the sampling a request that sets none gets
        nested = settings.get("params")  # older builds keep the settings at the top level
        params: dict[str, Any] = nested if isinstance(nested, dict) else settings
        sampling = {k: params[k] for k in SAMPLING_FIELDS if k in params}
        if sampling:
            out["sampling"] = sampling
    return out


def probe_server(model: Any, *, timeout: float = PROBE_TIMEOUT) -> ServerIdentity | None:
    """What the server of a chat model with an explicit endpoint reports (see the module
    docstring); ``None`` for a model without one. Never raises: a failed request leaves its
    part empty."""
    endpoint = endpoint_of(model)
    if endpoint is None:
        return None
    name = str(getattr(model, "model_name", None) or getattr(model, "model", None) or "")
    key = _key_of(model)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    root = endpoint[:-3] if endpoint.endswith("/v1") else endpoint
    with httpx.Client(timeout=timeout, headers=headers, follow_redirects=False) as client:
        listing = _get(client, f"{endpoint}/models")
        props = _get(client, f"{root}/props")
    return ServerIdentity(endpoint=clean_url(endpoint), model_name=name,
                          model=_model_entry(listing, name), props=_props(props))


def server_notes(server: ServerIdentity | None, cache: Any) -> list[str]:
    """What to say before the run's answers are trusted: the server changed since the cache
    last saw it (its answers are not replayed: the cache key holds the identity). Records
    the identity in the cache (when it can remember servers)."""
    seen = getattr(cache, "server_seen", None)
    if server is None or not server.informative or not callable(seen):
        return []
    previous = seen(server.key, json.dumps(server.record(), sort_keys=True))
    if previous is None:
        return []
    try:
        before = json.loads(previous)
    except ValueError:
        before = {}
    what = ", ".join(server.changes(before if isinstance(before, dict) else {})) or "identity"
    return [f"the server at {server.endpoint} changed since its answers were cached ({what}): "
            "not replaying them; the model is asked again."]


def replay_note(endpoint: str | None, server: ServerIdentity | None,
                cache_hits: float) -> list[str]:
    """What to say when answers of a server that reports no chat template or build were
    replayed from the cache (a changed server would not have been noticed)."""
    if endpoint is None or not cache_hits or (server is not None and server.props):
        return []
    return [f"{int(cache_hits)} answer(s) were replayed from the response cache, and the server "
            f"at {clean_url(endpoint)} reports no chat template or build (no /props; llama.cpp's "
            "llama-server does), so a changed server would not be noticed: after changing its "
            "model, chat format or build, run with --no-cache."]


def server_changed(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether two ``config.json`` model records name different servers (both must have been
    identified: a server that could not be asked is not a changed one)."""
    before, after = old.get("server"), new.get("server")
    return bool(before and after and before.get("digest") != after.get("digest"))


__all__ = ["PROBE_TIMEOUT", "ServerIdentity", "endpoint_of", "probe_server", "replay_note",
           "server_changed", "server_notes"]
