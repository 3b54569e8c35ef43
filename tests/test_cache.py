"""The SQLite response cache (tooleval_agents/models/cache.py)."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

from fake_openai import FakeOpenAI
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, Generation
from langchain_openai import ChatOpenAI

from tooleval_agents.graphs.state import usage_of
from tooleval_agents.models.accounting import collect_stats
from tooleval_agents.models.cache import (
    HIT_FLAG,
    SQLiteCache,
    default_cache_path,
    normalize_llm_string,
)
from tooleval_agents.models.chat_models import ScriptedChatModel
from tooleval_agents.models.retry import RetryingChatModel

SECRET = "sk-test-SECRET123"


def _gen(text: str) -> ChatGeneration:
    message = AIMessage(content=text, usage_metadata={"input_tokens": 10, "output_tokens": 3,
                                                      "total_tokens": 13})
    return ChatGeneration(message=message)


def test_lookup_update_clear_and_persistence(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    cache = SQLiteCache(path)
    assert cache.lookup("p", "llm") is None
    cache.update("p", "llm", [_gen("answer")])
    cache.update("q", "other", [Generation(text="plain")])
    hit = cache.lookup("p", "llm")
    assert isinstance(hit, list) and hit[0].text == "answer"
    assert cache.lookup("p", "another llm") is None  # the model is part of the key
    cache.close()
    again = SQLiteCache(path)  # survives a restart
    assert again.lookup("q", "other")[0].text == "plain"  # type: ignore[index]
    assert len(again) == 2
    again.clear(llm_string="llm")
    assert again.lookup("p", "llm") is None and len(again) == 1
    again.clear()
    assert len(again) == 0


def test_wal_and_default_location(tmp_path: Path) -> None:
    cache = SQLiteCache(tmp_path / "c.sqlite")
    mode = sqlite3.connect(tmp_path / "c.sqlite").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    cache.close()
    assert default_cache_path().name == "responses.sqlite"


def test_hits_are_marked_and_cost_nothing(tmp_path: Path) -> None:
    cache = SQLiteCache(tmp_path / "c.sqlite")
    model = ScriptedChatModel(rules=[(".", "hello")], cache=cache)
    first = model.invoke("hi")
    assert usage_of(first)["model_calls"] == 1 and usage_of(first)["input_tokens"] > 0
    with collect_stats() as stats:
        second = model.invoke("hi")
    assert model.calls == 1  # answered from the cache
    assert second.content == "hello"
    assert second.response_metadata[HIT_FLAG] is True
    # the answer's tokens are the ones recorded when it was made (they describe the answer)
    assert usage_of(second) == usage_of(first)
    assert stats.calls == 0  # no provider call was made (the wrapper counts the hit)


def test_concurrent_threads(tmp_path: Path) -> None:
    cache = SQLiteCache(tmp_path / "c.sqlite")
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for i in range(50):
                cache.update(f"p{worker}-{i}", "llm", [_gen(f"{worker}-{i}")])
                hit = cache.lookup(f"p{worker}-{i}", "llm")
                assert hit is not None and hit[0].text == f"{worker}-{i}"
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(cache) == 400


def test_async_methods_use_the_same_store(tmp_path: Path) -> None:
    cache = SQLiteCache(tmp_path / "c.sqlite")

    async def go() -> str:
        await cache.aupdate("p", "llm", [_gen("async")])
        hit = await cache.alookup("p", "llm")
        assert hit is not None
        return hit[0].text

    assert asyncio.run(go()) == "async"


def test_llm_string_keeps_no_secret_and_ignores_transport() -> None:
    a = ChatOpenAI(model="gpt-4o-mini", api_key=SECRET, temperature=0, timeout=3,
                   max_retries=0, default_headers={"Authorization": f"Bearer {SECRET}"},
                   base_url="http://127.0.0.1:9/v1")
    b = ChatOpenAI(model="gpt-4o-mini", api_key="sk-another-key-999", temperature=0, timeout=60,
                   max_retries=5, base_url="http://127.0.0.1:9/v1")
    raw = a._get_llm_string()
    assert SECRET in raw  # LangChain's own string carries the header...
    assert SECRET not in normalize_llm_string(raw)  # ...ours does not
    assert normalize_llm_string(raw) == normalize_llm_string(b._get_llm_string())
    c = ChatOpenAI(model="gpt-4o", api_key=SECRET, temperature=0)
    assert normalize_llm_string(c._get_llm_string()) != normalize_llm_string(raw)


def test_second_run_against_a_server_makes_no_request(tmp_path: Path) -> None:
    cache = SQLiteCache(tmp_path / "c.sqlite")
    with FakeOpenAI(default="pong", api_key=SECRET) as server:

        def model() -> RetryingChatModel:
            inner = ChatOpenAI(model="m", base_url=server.base_url, api_key=SECRET,
                               max_retries=0, temperature=0)
            return RetryingChatModel(inner=inner, cache=cache)

        async def go() -> list[str]:
            first = await model().ainvoke("ping")
            second = await model().ainvoke("ping")
            return [first.text, second.text]

        assert asyncio.run(go()) == ["pong", "pong"]
        assert len(server.log) == 1
    assert SECRET.encode() not in b"".join(p.read_bytes() for p in tmp_path.iterdir())
