"""The ``reference`` and ``noisy-reference[:RATE]`` offline models.

``reference`` answers every prompt with the gold answer of the example the prompt is about. It
recognises the example from the prompt content: workflows wrap the example's input in
``<input>...</input>`` and each stage's prompt contains a marker phrase; the model looks up
``(hash of the last <input> block, first marker found in the prompt)`` in an answer key built
from the dataset. Nothing depends on call order, so answers are right under any concurrency.
A run with it proves the wiring: strict scores must be 100.

``noisy-reference`` gives the same gold answer with seeded, realistic corruptions (see
:mod:`tooleval_agents.corruptions`), deterministic per example and stage.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from pydantic import ConfigDict, Field, PrivateAttr

from tooleval_agents.chat_models import ContentChatModel, Reply
from tooleval_agents.contracts import GoldAnswer
from tooleval_agents.corruptions import corrupt

_INPUT_BLOCK = re.compile(r"<input>\n?(.*?)\n?</input>", re.S)

DEFAULT_NOISE_RATE = 0.3
"""Corruption rate of ``noisy-reference`` when the spec gives none."""
OFFLINE_FORMS = "'reference', 'noisy-reference' or 'noisy-reference:RATE' (RATE in 0..1, e.g. 0.3)"


def input_digest(text: str) -> str:
    """Key of an ``<input>`` block's text (whitespace at the ends ignored)."""
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()


def last_input_block(prompt: str) -> str | None:
    """The text of the last ``<input>...</input>`` block of a prompt (demonstrations come
    first, the example's own input last)."""
    blocks = _INPUT_BLOCK.findall(prompt)
    return blocks[-1] if blocks else None


class AnswerKey(dict[str, list[GoldAnswer]]):
    """``input digest -> gold answers`` for every example of a run."""

    ambiguous: set[str]
    """Digests of inputs shared by examples with different gold answers (AppBench has a few:
    the leaked generation prompt appears as the input of several samples)."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.ambiguous = set()

    @classmethod
    def build(cls, items: Iterable[tuple[str, list[GoldAnswer]]]) -> AnswerKey:
        """From ``(input_key text, gold answers)`` pairs. When examples share an input but not
        the gold answer, no model can tell them apart: the input is marked ambiguous and the
        reference model refuses it (each such example is recorded as a model error, never
        answered with another example's gold)."""
        key = cls()
        for text, answers in items:
            digest = input_digest(text)
            if digest in key and key[digest] != answers:
                key.ambiguous.add(digest)
            key[digest] = answers
        return key

    def update(self, *args: Any, **kwargs: Any) -> None:
        """``dict.update`` that also keeps the other key's ambiguous inputs (the runner fills
        the key its model already holds this way)."""
        super().update(*args, **kwargs)
        for other in args:
            self.ambiguous |= getattr(other, "ambiguous", set())

    def fingerprint(self) -> str:
        """Digest of the whole key (gold answers and ambiguous inputs): part of the response
        cache key, so changed gold data never replays stale answers."""
        h = hashlib.sha256()
        for digest in sorted(self):
            h.update(digest.encode())
            for a in self[digest]:
                h.update(f"\x00{a.marker}\x00{a.format}\x00{a.text}".encode())
        for digest in sorted(self.ambiguous):
            h.update(b"\x01" + digest.encode())
        return h.hexdigest()

    def lookup(self, prompt: str) -> tuple[str, GoldAnswer]:
        """The example digest and the gold answer for a prompt; ``LookupError`` explains why
        there is none."""
        block = last_input_block(prompt)
        if block is None:
            raise LookupError("reference model: the prompt has no <input>...</input> block")
        digest = input_digest(block)
        if digest in self.ambiguous:
            raise LookupError(f"reference model: several examples share the input "
                              f"{block[:80]!r} with different gold answers")
        answers = self.get(digest)
        if answers is None:
            raise LookupError(f"reference model: unknown example input {block[:80]!r}")
        for answer in answers:
            if answer.marker in prompt:
                return digest, answer
        raise LookupError("reference model: no stage marker of this example in the prompt "
                          f"(markers: {[a.marker for a in answers]})")


class ReferenceChatModel(ContentChatModel):
    """Answers each prompt with the gold answer of its example (see module docstring)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    answer_key: AnswerKey = Field(default_factory=AnswerKey)
    """Gold answers by example input digest."""
    _fingerprint: tuple[tuple[int, int], str] | None = PrivateAttr(default=None)
    model_name: str = "reference"

    def answers_fingerprint(self) -> str:
        # Memoised per key size: the runner fills the key after building the model.
        size = (len(self.answer_key), len(self.answer_key.ambiguous))
        if self._fingerprint is None or self._fingerprint[0] != size:
            self._fingerprint = (size, self.answer_key.fingerprint())
        return self._fingerprint[1]

    def reply(self, prompt: str, messages: Sequence[BaseMessage]) -> Reply:
        return self.answer_key.lookup(prompt)[1].text


class NoisyReferenceChatModel(ReferenceChatModel):
    """The gold answer with seeded corruptions at ``rate`` (0..1), deterministic per example
    and stage."""

    rate: float = Field(default=DEFAULT_NOISE_RATE, ge=0.0, le=1.0)
    """Probability that an answer is corrupted."""
    seed: int = 0
    """Seed of the corruption draws."""
    model_name: str = "noisy-reference"

    def answers_fingerprint(self) -> str:
        return f"{super().answers_fingerprint()}/rate={self.rate}/seed={self.seed}"

    def reply(self, prompt: str, messages: Sequence[BaseMessage]) -> Reply:
        digest, answer = self.answer_key.lookup(prompt)
        return corrupt(answer.text, answer.format, rate=self.rate,
                       seed=f"{self.seed}/{digest}/{answer.marker}")


def parse_offline_spec(spec: str) -> tuple[str, float | None] | None:
    """``"reference"`` -> ``("reference", None)``; ``"noisy-reference:0.3"`` ->
    ``("noisy-reference", 0.3)`` (``"noisy-reference"``: :data:`DEFAULT_NOISE_RATE`); anything
    not named ``reference``/``noisy-reference`` -> ``None`` (a provider model).

    Raises:
        ValueError: a malformed offline spec (``noisy-reference:``, ``noisy-reference:0,3``,
            ``reference:0.3``, a rate outside 0..1), naming the accepted forms.
    """
    if spec == "reference":
        return "reference", None
    name, colon, rate_text = spec.partition(":")
    if name not in ("reference", "noisy-reference"):
        return None
    if name == "noisy-reference" and not colon:
        return "noisy-reference", DEFAULT_NOISE_RATE
    if name == "noisy-reference" and re.fullmatch(r"[0-9]*\.?[0-9]+", rate_text):
        rate = float(rate_text)
        if 0.0 <= rate <= 1.0:
            return "noisy-reference", rate
        raise ValueError(f"noisy-reference rate must be within 0..1, got {rate}; use "
                         f"{OFFLINE_FORMS}")
    raise ValueError(f"bad offline model {spec!r}: use {OFFLINE_FORMS}")
