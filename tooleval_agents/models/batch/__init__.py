"""Provider batch APIs for a run's model calls (``tooleval run --batch``): half the price, answers
within the provider's window (24 hours) instead of seconds.

* :mod:`.settings`: :class:`BatchSettings` (a size and a wait bound) and
  :class:`BatchRequestError`;
* :mod:`.queue`: calls gathered into batches, each caller answered from its batch;
* :mod:`.ledger`: the run directory's ``batches.jsonl``, so a resumed run polls the batches it
  sent instead of sending them again;
* :mod:`.backends`: OpenAI's Batch API (the ``openai`` SDK);
* :mod:`.openai_http`: OpenAI-compatible LangChain models batched at their HTTP requests.
"""

from tooleval_agents.models.batch.settings import BatchRequestError, BatchSettings

__all__ = ["BatchRequestError", "BatchSettings"]
