"""The ``reference`` and ``noisy-reference[:RATE]`` offline models.

``reference`` answers every prompt with the gold answer of the example the prompt is about. It
recognises the example from the prompt content: workflows wrap the example's input in
``<input>...</input>`` and each stage's prompt contains a marker phrase; the model looks up
``(hash of the last <input> block, first marker found in the prompt)`` in an answer key built
from the dataset. Nothing depends on call order, so answers are right under any concurrency.
A run with it proves the wiring: strict scores must be 100. With tools bound it is an agent:
it plays the example's gold tool plan turn by turn (:mod:`tooleval_agents.models.reference_tools`),
finding the example from the input text in *any* agent's messages, ``<input>`` tags or not.

``noisy-reference`` gives the same gold answer with seeded, realistic corruptions (see
:mod:`tooleval_agents.models.corruptions`), deterministic per example and stage.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from pydantic import ConfigDict, Field, PrivateAttr

from tooleval_agents.contracts import GoldAnswer
from tooleval_agents.models.accounting import current_stats
from tooleval_agents.models.chat_models import ContentChatModel, Reply, prompt_text
from tooleval_agents.models.corruptions import corrupt
from tooleval_agents.models.reference_tools import (
    TOOL_PLAN,
    ToolPlan,
    bound_tool_names,
    corrupt_plan,
    next_turn,
)

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
    texts: dict[str, str]
    """Digest -> the input text (to recognise an example in any agent's prompt)."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.ambiguous = set()
        self.texts = {}

    @classmethod
    def build(cls, items: Iterable[tuple[str, list[GoldAnswer]]]) -> AnswerKey:
        """From ``(input_key text, gold answers)`` pairs. When examples share an input but not
        the gold answer, no model can tell them apart: the input is marked ambiguous and the
        reference model refuses it (each such example is recorded as a model error, never
        answered with another example's gold)."""
        key = cls()
        for text, answers in items:
            key.add(text, answers)
        return key

    def add(self, text: str, answers: list[GoldAnswer]) -> None:
        """One example's ``(input_key text, gold answers)`` (see :meth:`build`)."""
        digest = input_digest(text)
        if digest in self and self[digest] != answers:
            self.ambiguous.add(digest)
        self[digest] = answers
        self.texts[digest] = text.strip()

    def update(self, *args: Any, **kwargs: Any) -> None:
        """``dict.update`` that also keeps the other key's ambiguous inputs (the runner fills
        the key its model already holds this way)."""
        super().update(*args, **kwargs)
        for other in args:
            self.ambiguous |= getattr(other, "ambiguous", set())
            self.texts.update(getattr(other, "texts", {}))

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

    def example(self, prompt: str, *, anywhere: bool = False) -> tuple[str, list[GoldAnswer]]:
        """The digest and gold answers of the example a prompt is about: the text of its last
        ``<input>`` block, else (``anywhere``: for an agent that writes its own prompts, or an
        official prompt set) the known input text that ends last in the prompt.
        ``LookupError`` explains why there is none."""
        block = last_input_block(prompt)
        if block is not None:
            digest = input_digest(block)
        elif not anywhere:
            raise LookupError("reference model: the prompt has no <input>...</input> block")
        else:
            # The example's own input comes last in every layout (demonstrations first):
            # the known input ending last wins, the longest one at a tie.
            found = [(prompt.rfind(t) + len(t), len(t), d) for d, t in self.texts.items()
                     if t and t in prompt]
            if not found:
                raise LookupError("reference model: the prompt holds no <input>...</input> "
                                  "block and no known example input")
            digest = max(found)[2]
            block = self.texts[digest]
        if digest in self.ambiguous:
            raise LookupError(f"reference model: several examples share the input "
                              f"{block[:80]!r} with different gold answers")
        answers = self.get(digest)
        if answers is None:
            raise LookupError(f"reference model: unknown example input {block[:80]!r}")
        return digest, answers

    def lookup(self, prompt: str) -> tuple[str, GoldAnswer]:
        """The example digest and the gold text answer for a prompt (the first of its
        answers whose stage marker the prompt contains); ``LookupError`` explains why there
        is none."""
        # Anywhere: an official prompt set wraps nothing in <input> tags.
        digest, answers = self.example(prompt, anywhere=True)
        for answer in answers:
            if answer.format != TOOL_PLAN and answer.marker in prompt:
                return digest, answer
        raise LookupError("reference model: no stage marker of this example in the prompt "
                          f"(markers: {[a.marker for a in answers if a.format != TOOL_PLAN]})")

    def tool_plan(self, prompt: str) -> tuple[str, ToolPlan]:
        """The example digest and its gold :class:`ToolPlan` (the first tool-plan answer whose
        marker the prompt contains; an empty marker matches any prompt)."""
        digest, answers = self.example(prompt, anywhere=True)
        for answer in answers:
            if answer.format == TOOL_PLAN and answer.marker in prompt:
                return digest, ToolPlan.model_validate_json(answer.text)
        raise LookupError("reference model: tools are bound, but the strategy states no tool "
                          "plan for this example")


class ReferenceChatModel(ContentChatModel):
    """Answers each prompt with the gold answer of its example (see module docstring)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    answer_key: AnswerKey = Field(default_factory=AnswerKey, repr=False)
    """Gold answers by example input digest (left out of the model's ``repr``, which LangChain
    writes into every call's run: a split's answer key is megabytes)."""
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

    def reply_with_tools(self, prompt: str, messages: Sequence[BaseMessage],
                         tools: list[dict[str, Any]]) -> Reply:
        """As an agent: the next turn of the example's gold tool plan. The example is found
        from the conversation's human and system messages only (tool results may quote other
        inputs)."""
        asked = prompt_text([m for m in messages if m.type in ("human", "system")])
        digest, plan = self.answer_key.tool_plan(asked)
        return next_turn(self.plan_for(digest, plan, tools), messages, bound_tool_names(tools))

    def plan_for(self, digest: str, plan: ToolPlan, tools: list[dict[str, Any]]) -> ToolPlan:
        """The plan this model follows (the gold one)."""
        return plan


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

    def _seed(self) -> str:
        # Another attempt of the example (--epochs) draws other corruptions, the same ones on
        # every rerun; the first attempt keeps the seed it always had.
        stats = current_stats()
        return f"{self.seed}" if stats is None or not stats.epoch else \
            f"{self.seed}/epoch{stats.epoch}"

    def reply(self, prompt: str, messages: Sequence[BaseMessage]) -> Reply:
        digest, answer = self.answer_key.lookup(prompt)
        return corrupt(answer.text, answer.format, rate=self.rate,
                       seed=f"{self._seed()}/{digest}/{answer.marker}")

    def plan_for(self, digest: str, plan: ToolPlan, tools: list[dict[str, Any]]) -> ToolPlan:
        """The gold plan with seeded corruptions (the same at every turn of the example)."""
        return corrupt_plan(plan, rate=self.rate, seed=f"{self._seed()}/{digest}/tools",
                            tool_names=bound_tool_names(tools))[0]


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
