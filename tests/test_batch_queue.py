"""The parts of ``--batch`` below a run, each on its own: the settings, the queue that gathers
calls into batches and answers each caller from its batch (against an in-memory provider), the
OpenAI backend reading a finished batch's files, and the HTTP transport that hands LangChain's
chat requests to the queue. (tests/test_batch.py runs whole batched runs against a fake Batch
API server.)"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tooleval_agents.models.accounting import collect_stats
from tooleval_agents.models.batch.backends import OpenAIBatches, Outcome, Polled, Submitted
from tooleval_agents.models.batch.ledger import BatchLedger
from tooleval_agents.models.batch.openai_http import BatchTransport
from tooleval_agents.models.batch.queue import BatchQueue
from tooleval_agents.models.batch.settings import BatchRequestError, BatchSettings


class MemoryBatches:
    """A provider's batch interface in memory: each batch completes when first polled, its
    answer to a request echoing the request's ``n`` (or expiring it, for ``expire``)."""

    provider = "memory"
    endpoint = "/v1/chat/completions"

    def __init__(self, expire: frozenset[int] = frozenset()) -> None:
        self.files: dict[str, list[dict[str, Any]]] = {}
        self.batches: dict[str, str] = {}
        self.expire = expire

    async def upload(self, lines: list[dict[str, Any]]) -> str:
        file = f"file-{len(self.files)}"
        self.files[file] = lines
        return file

    async def create(self, file: str, metadata: dict[str, str]) -> Submitted:
        batch = f"batch-{len(self.batches)}"
        self.batches[batch] = file
        return Submitted(batch, "validating")

    async def find(self, file: str) -> Submitted | None:
        return next((Submitted(b, "completed") for b, f in self.batches.items() if f == file),
                    None)

    async def poll(self, batch: str) -> Polled:
        return Polled("completed", f"out-{batch}")

    async def results(self, polled: Polled, ids: list[str]) -> dict[str, Outcome]:
        batch = str(polled.output_file).removeprefix("out-")
        out = {}
        for line in self.files[self.batches[batch]]:
            n = line["body"]["n"]
            out[line["custom_id"]] = (
                Outcome(0, {"error": {"message": "window over"}}, "batch_expired")
                if n in self.expire else
                Outcome(200, {"n": n, "usage": {"prompt_tokens": 10 * n,
                                                "completion_tokens": n}}))
        return out

    def usage(self, body: dict[str, Any]) -> tuple[int, int, int]:
        return body["usage"]["prompt_tokens"], body["usage"]["completion_tokens"], 0


def open_queue(tmp_path: Path, backend: MemoryBatches, settings: BatchSettings) -> BatchQueue:
    queue = BatchQueue(settings)
    queue.backend = backend
    queue.open(BatchLedger(tmp_path), "run")
    return queue


def test_the_settings_refuse_what_cannot_batch() -> None:
    with pytest.raises(ValueError, match="size"):
        BatchSettings(size=0)
    with pytest.raises(ValueError, match="poll"):
        BatchSettings(poll=0)


def test_a_full_batch_leaves_at_once_the_rest_after_the_wait(tmp_path: Path) -> None:
    backend = MemoryBatches()
    queue = open_queue(tmp_path, backend, BatchSettings(size=2, wait=0.05, poll=0.01))

    async def go() -> list[Outcome]:
        try:
            return await asyncio.gather(*(queue.send({"n": n}) for n in (1, 2, 3)))
        finally:
            await queue.aclose()

    outcomes = asyncio.run(go())
    assert [o.body["n"] for o in outcomes] == [1, 2, 3]  # each caller its own answer
    assert [len(backend.files[f]) for f in backend.batches.values()] == [2, 1]
    assert queue.sent_batches == 2


def test_the_tokens_of_a_batched_answer_are_counted_as_batched(tmp_path: Path) -> None:
    queue = open_queue(tmp_path, MemoryBatches(), BatchSettings(size=1, poll=0.01))

    async def go() -> None:
        with collect_stats() as stats:
            await queue.send({"n": 4})
        await queue.aclose()
        assert (stats.batched_calls, stats.batched_input_tokens,
                stats.batched_output_tokens) == (1, 40, 4)

    asyncio.run(go())


def test_a_resumed_queue_reads_the_batch_it_sent_instead_of_sending_again(
        tmp_path: Path) -> None:
    backend = MemoryBatches()
    first = open_queue(tmp_path, backend, BatchSettings(size=2, poll=0.01))

    async def ask(queue: BatchQueue) -> list[Outcome]:
        try:
            return await asyncio.gather(queue.send({"n": 1}), queue.send({"n": 2}))
        finally:
            await queue.aclose()

    asyncio.run(ask(first))
    assert first.ledger is not None
    first.ledger.close()
    again = open_queue(tmp_path, backend, BatchSettings(size=2, poll=0.01))
    outcomes = asyncio.run(ask(again))
    assert [o.body["n"] for o in outcomes] == [1, 2]
    assert again.sent_batches == 0 and len(backend.batches) == 1  # no second submission


def test_a_request_its_batch_did_not_run_comes_back_with_its_kind(tmp_path: Path) -> None:
    queue = open_queue(tmp_path, MemoryBatches(expire=frozenset({2})),
                       BatchSettings(size=2, poll=0.01))

    async def go() -> list[Outcome]:
        try:
            return await asyncio.gather(queue.send({"n": 1}), queue.send({"n": 2}))
        finally:
            await queue.aclose()

    ok, expired = asyncio.run(go())
    assert ok.status == 200 and (expired.status, expired.kind) == (0, "batch_expired")


class FakeFiles:
    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts

    async def content(self, file: str) -> Any:
        return type("Content", (), {"text": self.texts[file]})()


class FakeClient:
    def __init__(self, texts: dict[str, str]) -> None:
        self.files = FakeFiles(texts)

    def with_options(self, **options: Any) -> FakeClient:
        return self


def test_the_openai_backend_reads_answers_errors_and_what_never_ran() -> None:
    answered = {"custom_id": "a", "response": {"status_code": 200,
                                               "body": {"usage": {"prompt_tokens": 7}}}}
    refused = {"custom_id": "b", "response": {"status_code": 400,
                                              "body": {"error": {"message": "bad"}}}}
    expired = {"custom_id": "c", "error": {"code": "batch_expired", "message": "late"}}
    texts = {"out": "\n".join(json.dumps(r) for r in (answered, refused)) + "\nnot json\n",
             "err": json.dumps(expired)}
    backend = OpenAIBatches(FakeClient(texts))
    got = asyncio.run(backend.results(Polled("expired", "out", "err"), ["a", "b", "c", "d"]))
    assert (got["a"].status, got["b"].status) == (200, 400)
    assert got["c"].kind == "batch_expired" and got["d"].kind == "batch_expired"
    assert backend.usage(got["a"].body) == (7, 0, 0)


class Answers(httpx.AsyncBaseTransport):
    """What the transport sends on when a request is not a chat completion."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.paths.append(request.url.path)
        return httpx.Response(200, json={"direct": True})


def test_the_transport_batches_chat_completions_only(tmp_path: Path) -> None:
    inner = Answers()
    queue = open_queue(tmp_path, MemoryBatches(expire=frozenset({9})),
                       BatchSettings(size=1, poll=0.01))

    async def go() -> None:
        async with httpx.AsyncClient(transport=BatchTransport(inner, queue, httpx),
                                     base_url="http://127.0.0.1:9") as client:
            chat = await client.post("/v1/chat/completions", json={"n": 3})
            assert chat.json()["n"] == 3
            assert (await client.get("/v1/models")).json() == {"direct": True}
            streamed = await client.post("/v1/chat/completions", json={"n": 1, "stream": True})
            assert streamed.json() == {"direct": True}
            with pytest.raises(BatchRequestError, match="batch_expired"):
                await client.post("/v1/chat/completions", json={"n": 9})
        await queue.aclose()

    asyncio.run(go())
    assert inner.paths == ["/v1/models", "/v1/chat/completions"]
