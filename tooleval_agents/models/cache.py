"""A persistent response cache for chat models: a LangChain ``BaseCache`` on SQLite.

The key is the ``(prompt, llm_string)`` its caller passes -- the retrying wrapper of a run
(:class:`~tooleval_agents.models.retry.RetryingChatModel`: the messages, and the model's class and
public parameters with the call's, see :mod:`tooleval_agents.models.identity`), or LangChain
itself for a model given ``cache=`` -- hashed with SHA-256. Before hashing, the ``llm_string``
loses what does not change an answer but may hold a secret or vary between runs (API keys, auth
headers, timeouts, retry counts); only hashes are stored, so no key can end up in the file. The
answers are stored as JSON (LangChain's message dicts), never pickled.

A hit is marked ``response_metadata["tooleval_cache_hit"] = True`` and keeps the token usage
recorded when the answer was made: tokens belong to the answer, so an example's tokens are the
same on a cold and a warm cache, while the example's :class:`~tooleval_agents.models.retry.
CallStats` counts the hit as a replay that cost nothing. Each entry stores that usage
explicitly (``usage``, ``null`` when the provider reported none); an entry written before it
did, whose answer holds no usage either, is marked
``response_metadata["tooleval_usage_unknown"]``: its tokens are counted as unknown, never as 0.

Safe across threads (connections behind locks) and processes (WAL journal, busy timeout).
The async methods do not hop to a thread per call (under load each hop cost the call tens of
milliseconds waiting for the GIL): ``alookup`` reads on the caller's thread, through its own
connection (in WAL mode a read never waits for a writer); ``aupdate`` queues the entry for a
writer thread, which writes whatever is queued in one transaction. Queued entries are answered
by lookups at once and written by :meth:`SQLiteCache.flush`, :meth:`~SQLiteCache.close`, when
the cache is garbage-collected, and at exit.

Example::

    cache = SQLiteCache(cache_dir() / "responses.sqlite")
    model = ChatOpenAI(model="gpt-4o-mini", temperature=0, cache=cache)
"""

from __future__ import annotations

import collections
import contextlib
import functools
import hashlib
import json
import logging
import queue
import sqlite3
import threading
import time
import weakref
from pathlib import Path
from typing import Any

from langchain_core.caches import RETURN_VAL_TYPE, BaseCache
from langchain_core.messages import message_to_dict, messages_from_dict
from langchain_core.outputs import ChatGeneration, Generation

from tooleval_agents.data.datadir import cache_dir
from tooleval_agents.models.accounting import HIT_FLAG, USAGE_UNKNOWN, current_stats
from tooleval_agents.redaction import is_secret_name, redact_text
from tooleval_agents.terminal import printable

log = logging.getLogger(__name__)

CACHE_FILE = "responses.sqlite"
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
);
CREATE TABLE IF NOT EXISTS servers (
    key TEXT PRIMARY KEY,   -- sha256(endpoint + model name)
    identity TEXT NOT NULL, -- what the server last reported (server_identity.ServerIdentity)
    seen REAL NOT NULL      -- unix time
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
            usage = getattr(gen.message, "usage_metadata", None)
            items.append({"kind": "chat", "message": message_to_dict(gen.message),
                          "info": gen.generation_info,
                          "usage": dict(usage) if usage else None})
        else:
            items.append({"kind": "text", "text": gen.text, "info": gen.generation_info})
    return json.dumps(items, ensure_ascii=False, default=str)


def _load(value: str) -> list[Generation]:
    out: list[Generation] = []
    for item in json.loads(value):
        if item.get("kind") == "chat":
            message = messages_from_dict([item["message"]])[0]
            flags: dict[str, Any] = {HIT_FLAG: True}
            if "usage" not in item and not getattr(message, "usage_metadata", None):
                flags[USAGE_UNKNOWN] = True  # an older entry: its tokens are not known
            message.response_metadata = {**message.response_metadata, **flags}
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
        """Guards the writing connection (sync updates, clear, the writer thread)."""
        self._conn = self._connect()
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(_SCHEMA)
        self._read_lock = threading.Lock()
        self._reader = self._connect()
        self._writer = _Writer(self._conn, self._lock)
        self._finalizer: weakref.finalize[Any, Any] | None = None

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30.0, check_same_thread=False,
                               isolation_level=None)

    @staticmethod
    def key(prompt: str, llm_string: str) -> tuple[str, str]:
        """``(entry key, model key)`` of a prompt and llm_string; a repeated attempt of an
        example (``--epochs``) is its own entry, so it samples again instead of replaying."""
        llm = _model_key(llm_string)
        stats = current_stats()
        epoch = f"\x00epoch={stats.epoch}" if stats is not None and stats.epoch else ""
        return _digest(llm + "\x00" + prompt + epoch), llm

    def lookup(self, prompt: str, llm_string: str) -> list[Generation] | None:
        key, _ = self.key(prompt, llm_string)
        value = self._writer.pending.get(key)
        if value is None:
            with self._read_lock:
                row = self._reader.execute("SELECT value FROM responses WHERE key = ?",
                                           (key,)).fetchone()
            if row is None:
                return None
            value = row[0]
        try:
            generations = _load(value)
        except (ValueError, KeyError, TypeError):  # an entry from another version: a miss
            return None
        return generations  # counted where it is used (CallStats.replayed)

    def update(self, prompt: str, llm_string: str, return_val: RETURN_VAL_TYPE) -> None:
        key, llm = self.key(prompt, llm_string)
        value = _dump(return_val)
        with self._lock:
            _write(self._conn, [(key, llm, value)])

    async def alookup(self, prompt: str, llm_string: str) -> list[Generation] | None:
        return self.lookup(prompt, llm_string)

    async def aupdate(self, prompt: str, llm_string: str, return_val: RETURN_VAL_TYPE) -> None:
        key, llm = self.key(prompt, llm_string)
        if self._finalizer is None:
            # Writes what is queued when the cache is dropped, and at exit.
            self._finalizer = weakref.finalize(self, self._writer.stop)
        self._writer.put((key, llm, _dump(return_val)))

    def flush(self) -> None:
        """Wait until every entry queued by ``aupdate`` is written."""
        self._writer.flush()

    def clear(self, **kwargs: Any) -> None:
        """Remove every entry (``llm_string=...``: only that model's)."""
        self.flush()
        llm_string = kwargs.get("llm_string")
        with self._lock:
            if llm_string is None:
                self._conn.execute("DELETE FROM responses")
            else:
                self._conn.execute("DELETE FROM responses WHERE llm = ?",
                                   (_model_key(llm_string),))

    def server_seen(self, key: str, identity: str) -> str | None:
        """Record what a model's server reports about itself (``key``: its endpoint and model);
        the identity recorded before, when it differs (the server changed since the answers
        cached for it), else ``None``."""
        with self._lock:
            row = self._conn.execute("SELECT identity FROM servers WHERE key = ?",
                                     (key,)).fetchone()
            self._conn.execute("INSERT OR REPLACE INTO servers (key, identity, seen) "
                               "VALUES (?, ?, ?)", (key, identity, time.time()))
        return row[0] if row is not None and row[0] != identity else None

    def __len__(self) -> int:
        self.flush()
        with self._read_lock:
            return int(self._reader.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        self._writer.stop()
        with self._lock:
            self._conn.close()
        with self._read_lock:
            self._reader.close()


@functools.lru_cache(maxsize=256)
def _model_key(llm_string: str) -> str:
    """sha256 of the normalised ``llm_string`` (a model makes the same one on every call)."""
    return _digest(normalize_llm_string(llm_string))


_Entry = tuple[str, str, str]
"""(entry key, model key, value) of a queued write."""


def _write(conn: sqlite3.Connection, entries: list[_Entry]) -> None:
    now = time.time()
    with conn:  # one transaction: committed at the end, rolled back on an error
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT OR REPLACE INTO responses (key, llm, value, created) VALUES (?, ?, ?, ?)",
            [(key, llm, value, now) for key, llm, value in entries])


class _Writer:
    """The thread behind ``aupdate``: writes whatever was queued since it last woke, in one
    transaction. It is woken only when idle (a wake-up is a GIL hand-over the caller pays for)
    and holds no reference to the cache, so the cache can be garbage-collected."""

    def __init__(self, conn: sqlite3.Connection, lock: threading.Lock) -> None:
        self.conn = conn
        self.lock = lock
        self.pending: dict[str, str] = {}
        """Entry key -> value queued and not yet written (lookups answer from it)."""
        self._entries: collections.deque[_Entry] = collections.deque()
        self._wake: queue.SimpleQueue[threading.Event | bool | None] = queue.SimpleQueue()
        """``True``: entries queued; an event: set it once they are written; ``None``: stop."""
        self._woken = False
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()

    def put(self, entry: _Entry) -> None:
        self.pending[entry[0]] = entry[2]
        self._entries.append(entry)
        if self._thread is None:
            with self._start_lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, daemon=True,
                                                    name="tooleval-cache-writer")
                    self._thread.start()
        if not self._woken:
            self._woken = True
            self._wake.put(True)

    def flush(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            done = threading.Event()
            self._wake.put(done)
            done.wait()

    def stop(self) -> None:
        """Write what is queued and end the thread."""
        thread = self._thread
        if thread is not None and thread.is_alive():
            self._wake.put(None)
            thread.join()

    def _run(self) -> None:
        while True:
            signal = self._wake.get()
            self._woken = False  # before draining: an entry queued after this wakes us again
            rows: list[_Entry] = []
            with contextlib.suppress(IndexError):
                while True:
                    rows.append(self._entries.popleft())
            if rows:
                try:
                    with self.lock:
                        _write(self.conn, rows)
                except sqlite3.Error as exc:  # a lost entry is only a later cache miss
                    log.warning("response cache: %d entries not written: %s", len(rows),
                                printable(exc))
                for key, _, value in rows:
                    if self.pending.get(key) is value:
                        del self.pending[key]
            if signal is None:
                return
            if isinstance(signal, threading.Event):
                signal.set()


__all__ = ["CACHE_FILE", "HIT_FLAG", "USAGE_UNKNOWN", "SQLiteCache", "default_cache_path",
           "normalize_llm_string"]
