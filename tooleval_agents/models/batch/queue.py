"""Model calls gathered into provider batches, each caller answered from its batch.

:class:`BatchQueue` takes one request body at a time (:meth:`BatchQueue.send`, awaited by the
model call that made it) and sends them as batches of at most ``size`` requests: a batch
leaves when it is full, or ``wait`` seconds after its first request came (inspect_ai's rule).
It then polls the batch every ``poll`` seconds until it ends, reads its output and error
files, and answers each waiting call: the provider's response (a completion, or its HTTP
error, which the caller's client raises as usual), or :class:`BatchRequestError` for a request
the batch never ran (expired, cancelled, or a batch the provider refused as a whole).

Every step is recorded in the run's :class:`~tooleval_agents.models.batch.ledger.BatchLedger`
before it is trusted; a request the ledger already holds is answered from its batch instead
of being sent again (see there).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Any

from tooleval_agents.models.accounting import current_stats
from tooleval_agents.models.batch.backends import FINAL, BatchBackend, Outcome, Polled
from tooleval_agents.models.batch.ledger import BatchLedger, BatchRecord, body_digest
from tooleval_agents.models.batch.settings import BatchRequestError, BatchSettings

log = logging.getLogger(__name__)

POLL_FAILURES = 5
"""Status checks of a batch that may fail in a row before its callers hear of it."""


@dataclass
class _Waiting:
    custom_id: str
    digest: str
    body: dict[str, Any]
    answer: asyncio.Future[Outcome]


class BatchQueue:
    """One model's requests on their way into batches (see the module docstring)."""

    def __init__(self, settings: BatchSettings, *, label: str = "") -> None:
        self.settings = settings
        self.label = label
        """Recorded in each batch's metadata (the run's name)."""
        self.backend: BatchBackend | None = None
        self.ledger: BatchLedger | None = None
        self.sent_batches = 0
        """Batches this session submitted."""
        self._pending: list[_Waiting] = []
        self._timer: asyncio.TimerHandle | None = None
        self._polls: dict[str, asyncio.Task[dict[str, Outcome]]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()

    def open(self, ledger: BatchLedger, label: str) -> None:
        """Where batches are recorded, and the run's name they carry (before the first
        request; :attr:`backend` is where they go)."""
        self.ledger, self.label = ledger, label

    async def send(self, body: dict[str, Any]) -> Outcome:
        """The provider's answer to one request, through a batch."""
        if self.backend is None or self.ledger is None:
            raise RuntimeError("batch queue used before it was opened for a run")
        digest = body_digest(body)
        known = self.ledger.claim(digest, self.backend.provider)
        if known is not None:  # sent by an earlier session: read from its batch
            record, cid = known
            try:
                outcome = (await asyncio.shield(self._results(record)))[cid]
            except BaseException:  # polling failed: a retry of the call asks it again
                self.ledger.release(cid)
                raise
        else:
            loop = asyncio.get_running_loop()
            waiting = _Waiting(self.ledger.new_id(digest), digest, body, loop.create_future())
            self._pending.append(waiting)
            if len(self._pending) >= self.settings.size:
                self._flush()
            elif self._timer is None:
                self._timer = loop.call_later(self.settings.wait, self._flush)
            try:
                outcome = await waiting.answer
            except BaseException:
                self.ledger.release(waiting.custom_id)
                raise
        stats = current_stats()
        if stats is not None and outcome.status == 200:
            stats.batched(*self.backend.usage(outcome.body))
        return outcome

    def _flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        batch, self._pending = self._pending[:self.settings.size], \
            self._pending[self.settings.size:]
        if self._pending:  # more than a batch came at once: the rest waits its turn
            self._timer = asyncio.get_running_loop().call_later(self.settings.wait,
                                                                self._flush)
        if batch:
            self._spawn(self._submit(batch))

    def _spawn(self, work: Any) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _submit(self, batch: list[_Waiting]) -> None:
        assert self.backend is not None and self.ledger is not None
        try:
            file = await self.backend.upload([{"custom_id": w.custom_id, "body": w.body}
                                              for w in batch])
            self.ledger.prepared(file, self.backend.provider,
                                 {w.custom_id: w.digest for w in batch})
            made = await self.backend.create(file, {"tooleval_run": self.label[:500]})
            self.ledger.submitted(file, made.id)
            self.sent_batches += 1
            log.info("batch %s sent: %d requests", made.id, len(batch))
            results = await self._results(self.ledger.records[file])
        except BaseException as exc:  # upload or submission failed: each caller hears it
            for w in batch:
                if not w.answer.done():
                    w.answer.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            return
        for w in batch:
            if not w.answer.done():
                w.answer.set_result(results[w.custom_id])

    def _results(self, record: BatchRecord) -> asyncio.Task[dict[str, Outcome]]:
        """The results of a batch of the ledger, polled once for all who wait on it."""
        key = record.file
        if key not in self._polls:
            self._polls[key] = self._spawn(self._poll(record))
        return self._polls[key]

    async def _poll(self, record: BatchRecord) -> dict[str, Outcome]:
        assert self.backend is not None and self.ledger is not None
        if record.batch is None:  # prepared by a killed session: was it submitted?
            found = await self.backend.find(record.file)
            made = found or await self.backend.create(record.file,
                                                      {"tooleval_run": self.label[:500]})
            self.ledger.submitted(record.file, made.id)
            self.sent_batches += found is None
        assert record.batch is not None
        polled = await self._until_final(record)
        results = await self.backend.results(polled, list(record.requests))
        if record.status is None:
            self._ended(record, polled, results)
        return results

    async def _until_final(self, record: BatchRecord) -> Polled:
        assert self.backend is not None and record.batch is not None
        failures = 0
        while True:
            try:
                polled = await self.backend.poll(record.batch)
            except Exception as exc:  # a check that failed is tried again, a few times
                failures += 1
                if failures >= POLL_FAILURES:
                    self._polls.pop(record.file, None)
                    raise
                log.warning("batch %s: status check failed (%s); trying again",
                            record.batch, exc)
            else:
                failures = 0
                if polled.status in FINAL:
                    return polled
            await asyncio.sleep(self.settings.poll)

    def _ended(self, record: BatchRecord, polled: Polled, results: dict[str, Outcome]) -> None:
        assert self.ledger is not None and record.batch is not None
        failed = {cid: o.kind for cid, o in results.items() if o.kind is not None}
        self.ledger.ended(record.file, record.batch, polled.status, failed,
                          polled.output_file, polled.error_file)

    async def aclose(self) -> None:
        """Stop waiting (a run that ends or is interrupted): the batches sent stay in the
        ledger, and a resume reads them."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task


__all__ = ["BatchQueue", "BatchRequestError", "BatchSettings"]
