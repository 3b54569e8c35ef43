"""A persistent response cache for chat models: a LangChain ``BaseCache`` on SQLite.

The key is what LangChain passes -- the serialised prompt and the model's ``llm_string`` (its
serialised constructor arguments plus call parameters such as bound tools) -- hashed with
SHA-256. Before hashing, the ``llm_string`` loses what does not change an answer but may hold a
secret or vary between runs (API keys, auth headers, timeouts, retry counts); only hashes are
stored, so no key can end up in the file. The answers are stored as JSON (LangChain's message
dicts), never pickled.

A hit is marked ``response_metadata["tooleval_cache_hit"] = True`` (LangChain also sets
``usage_metadata["total_cost"] = 0``), so :func:`graphs.state.usage_of` counts no tokens and no
model call for it, and it is counted in the example's :class:`~tooleval_agents.retry.CallStats`.

Safe across threads (one connection behind a lock) and processes (WAL journal, busy timeout).
The async methods are the base class defaults (the sync ones in an executor).

Example::

    cache = SQLiteCache(cache_dir() / "responses.sqlite")
    model = ChatOpenAI(model="gpt-4o-mini", temperature=0, cache=cache)
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from langchain_core.caches import RETURN_VAL_TYPE, BaseCache
from langchain_core.messages import message_to_dict, messages_from_dict
from langchain_core.outputs import ChatGeneration, Generation

from tooleval_agents.datadir import cache_dir
from tooleval_agents.redaction import is_secret_name, redact_text
from tooleval_agents.retry import current_stats

CACHE_FILE = "responses.sqlite"
HIT_FLAG = "tooleval_cache_hit"
"""``response_metadata`` flag set on answers served from the cache."""

TRANSPORT_FIELDS = frozenset({
    "max_retries", "request_timeout", "timeout", "default_headers", "default_query",
    "http_client", "http_async_client", "client", "async_client", "rate_limiter", "cache",
    "callbacks", "verbose", "streaming", "stream_usage", "openai_proxy",
})
"""Constructor arguments that never change an answer: left out of the key."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,   -- sha256(model key + prompt)
    llm TEXT NOT NULL,      -- sha256(model key): clear one model's answers
    value TEXT NOT NULL,    -- JSON list of generations
    created REAL NOT NULL   -- unix time
)
"""


def default_cache_path() -> Path:
    """The per-user cache file, ``<cache_dir>/responses.sqlite``."""
    return cache_dir() / CACHE_FILE


def normalize_llm_string(llm_string: str) -> str:
    """``llm_string`` without credentials and transport settings.

    A serialisable model's string is ``<constructor JSON>---<call parameters>``; its
    ``kwargs`` lose :data:`TRANSPORT_FIELDS` and credential-named fields. Known secret values
    are masked anywhere else.
    """
    head, sep, tail = llm_string.partition("---")
    if sep and head.startswith("{"):
        try:
            spec = json.loads(head)
        except ValueError:
            spec = None
        if isinstance(spec, dict) and isinstance(spec.get("kwargs"), dict):
            spec["kwargs"] = {k: v for k, v in spec["kwargs"].items()
                              if k not in TRANSPORT_FIELDS and not is_secret_name(k)}
            head = json.dumps(spec, sort_keys=True, ensure_ascii=False)
    return redact_text(head + sep + tail, shapes=False)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _dump(generations: RETURN_VAL_TYPE) -> str:
    items: list[dict[str, Any]] = []
    for gen in generations:
        if isinstance(gen, ChatGeneration):
            items.append({"kind": "chat", "message": message_to_dict(gen.message),
                          "info": gen.generation_info})
        else:
            items.append({"kind": "text", "text": gen.text, "info": gen.generation_info})
    return json.dumps(items, ensure_ascii=False, default=str)


def _load(value: str) -> list[Generation]:
    out: list[Generation] = []
    for item in json.loads(value):
        if item.get("kind") == "chat":
            message = messages_from_dict([item["message"]])[0]
            message.response_metadata = {**message.response_metadata, HIT_FLAG: True}
            out.append(ChatGeneration(message=message, generation_info=item.get("info")))
        else:
            out.append(Generation(text=item.get("text", ""),
                                  generation_info={**(item.get("info") or {}), HIT_FLAG: True}))
    return out


class SQLiteCache(BaseCache):
    """Chat-model answers by ``(prompt, llm_string)`` in one SQLite file (see module doc)."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False,
                                     isolation_level=None)
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(_SCHEMA)

    @staticmethod
    def key(prompt: str, llm_string: str) -> tuple[str, str]:
        """``(entry key, model key)`` of a prompt and llm_string."""
        llm = _digest(normalize_llm_string(llm_string))
        return _digest(llm + "\x00" + prompt), llm

    def lookup(self, prompt: str, llm_string: str) -> list[Generation] | None:
        key, _ = self.key(prompt, llm_string)
        with self._lock:
            row = self._conn.execute("SELECT value FROM responses WHERE key = ?",
                                     (key,)).fetchone()
        if row is None:
            return None
        try:
            generations = _load(row[0])
        except (ValueError, KeyError, TypeError):  # an entry from another version: a miss
            return None
        stats = current_stats()
        if stats is not None:
            stats.hit()
        return generations

    def update(self, prompt: str, llm_string: str, return_val: RETURN_VAL_TYPE) -> None:
        key, llm = self.key(prompt, llm_string)
        value = _dump(return_val)
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses (key, llm, value, created) VALUES (?, ?, ?, ?)",
                (key, llm, value, time.time()))

    def clear(self, **kwargs: Any) -> None:
        """Remove every entry (``llm_string=...``: only that model's)."""
        llm_string = kwargs.get("llm_string")
        with self._lock:
            if llm_string is None:
                self._conn.execute("DELETE FROM responses")
            else:
                self._conn.execute("DELETE FROM responses WHERE llm = ?",
                                   (_digest(normalize_llm_string(llm_string)),))

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()


__all__ = ["CACHE_FILE", "HIT_FLAG", "SQLiteCache", "default_cache_path",
           "normalize_llm_string"]
