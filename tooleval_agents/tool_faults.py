"""Seeded tool faults (``--tool-faults rate=0.2,kinds=error+timeout,seed=0``): the spec, the
decision, what the agent sees, the trace records and the metrics made from them.

A fault is decided by a hash of ``(seed, example, call position, attempt)``, never a global
random generator, so a rerun or a resume meets the same faults. The *position* of a call is
the order in which its example first made that exact call (tool name and arguments); a repeat
of the same call is its next *attempt*. A transient kind (timeout, rate limit) is drawn again
at each attempt, so a retry may succeed; a persistent one (error, malformed, empty) is drawn
once per position and fails every attempt.

The runner opens one :class:`FaultSession` per example (a context variable, so every tool
executor of the example's workflow finds it with :func:`current_faults`); executors call
:meth:`FaultSession.draw` before running a call. This module knows no benchmark.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

FaultKind = Literal["error", "timeout", "rate_limit", "malformed", "empty"]
KINDS: tuple[FaultKind, ...] = ("error", "timeout", "rate_limit", "malformed", "empty")
TRANSIENT: frozenset[str] = frozenset({"timeout", "rate_limit"})
"""Kinds a retried identical call may escape (drawn again per attempt); the others persist."""
TIMEOUT_S = 30.0
"""The simulated delay after which a timeout is reported (nothing sleeps)."""

MESSAGES: dict[str, str] = {
    "error": "500 Internal Server Error: the service failed to process the request",
    "timeout": f"request timed out after {TIMEOUT_S:.0f} s (no response from the service)",
    "rate_limit": "429 Too Many Requests: rate limit exceeded; retry after 2 s",
}
"""Provider-style texts of the faults the agent sees as a tool error."""


@dataclass(frozen=True)
class ToolFaults:
    """What ``--tool-faults`` asked for (:func:`parse_tool_faults`)."""

    rate: float = 0.0
    """Probability that a call (position, attempt) fails."""
    kinds: tuple[FaultKind, ...] = KINDS
    """The kinds drawn from, each equally likely."""
    seed: int = 0
    """The seed of every decision."""

    @property
    def active(self) -> bool:
        """Whether any call can fail (``rate=0`` changes nothing, not even the run's name)."""
        return self.rate > 0

    def record(self) -> dict[str, Any]:
        """The settings as ``config.json`` and the run's identity hold them."""
        return {"rate": self.rate, "kinds": list(self.kinds), "seed": self.seed}

    def label(self) -> str:
        """The spelling :func:`parse_tool_faults` reads back."""
        return f"rate={self.rate:g},kinds={'+'.join(self.kinds)},seed={self.seed}"


def parse_tool_faults(text: str | ToolFaults | None) -> ToolFaults | None:
    """``rate=R,kinds=K1+K2,seed=S`` (every part optional) as :class:`ToolFaults`; a
    ``ValueError`` saying what is wrong otherwise.

    >>> parse_tool_faults("rate=0.2,kinds=timeout+error,seed=3")
    ToolFaults(rate=0.2, kinds=('timeout', 'error'), seed=3)
    """
    if text is None or isinstance(text, ToolFaults):
        return text
    values: dict[str, str] = {}
    for item in (p.strip() for p in text.split(",") if p.strip()):
        key, eq, value = item.partition("=")
        if not eq or key.strip() not in ("rate", "kinds", "seed"):
            raise ValueError(f"--tool-faults: {item!r} is not rate=R, kinds=K1+K2 or seed=S")
        if key.strip() in values:  # which one was meant? not the last one, silently
            raise ValueError(f"--tool-faults: {key.strip()} is given twice in {text!r}; give "
                             "it once (a sweep repeats the whole flag: --tool-faults rate=0.1 "
                             "--tool-faults rate=0.2)")
        values[key.strip()] = value.strip()
    try:
        rate = float(values.get("rate", "0"))
        seed = int(values.get("seed", "0"))
    except ValueError as exc:
        raise ValueError(f"--tool-faults: rate must be a number, seed an integer ({exc})") \
            from None
    if not 0 <= rate <= 1:
        raise ValueError(f"--tool-faults: rate must be between 0 and 1, got {rate:g}")
    kinds = tuple(k.strip() for k in values.get("kinds", "+".join(KINDS)).split("+"))
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        raise ValueError(f"--tool-faults: unknown kind(s) {', '.join(unknown) or '(none)'}; "
                         f"known: {'+'.join(KINDS)}")
    return ToolFaults(rate=rate, kinds=tuple(dict.fromkeys(kinds)),  # type: ignore[arg-type]
                      seed=seed)


def _draw(*parts: object) -> float:
    """A uniform number in [0, 1) from the parts (the same everywhere, every time)."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2.0 ** 64


@dataclass(frozen=True)
class Fault:
    """One injected fault."""

    kind: FaultKind
    position: int
    attempt: int
    tool: str

    @property
    def transient(self) -> bool:
        return self.kind in TRANSIENT

    @property
    def message(self) -> str:
        """What the tool answered, for the kinds answered as an error."""
        return MESSAGES.get(self.kind, f"the tool answered with a {self.kind} payload")

    def payload(self, answer: str) -> str:
        """What a malformed or empty answer looks like: the JSON cut in half, or nothing."""
        return answer[:max(1, len(answer) // 2)] if self.kind == "malformed" else ""

    def record(self) -> dict[str, Any]:
        """The trace record (kind ``tool_fault``)."""
        return {"kind": "tool_fault", "fault": self.kind, "tool": self.tool,
                "position": self.position, "attempt": self.attempt,
                "transient": self.transient,
                **({"simulated_delay_s": TIMEOUT_S} if self.kind == "timeout" else {})}


@dataclass
class FaultSession:
    """The faults of one example: its calls by position and attempt, and what was injected."""

    spec: ToolFaults
    example: str
    """The example's key (a digest of its inputs, with the epoch)."""
    positions: dict[str, int] = field(default_factory=dict)
    attempts: dict[int, int] = field(default_factory=dict)
    faults: list[Fault] = field(default_factory=list)
    calls: int = 0
    """Calls drawn for (every executed call of the example)."""
    faulted_ids: set[str] = field(default_factory=set)
    """Ids of the calls (tool_call ids) that were faulted."""
    after_persistent: int = 0
    """Calls made after the example's first persistent fault."""
    answered: set[int] = field(default_factory=set)
    """Positions whose call got through at least once (an attempt without a fault)."""
    wasted: int = 0
    """Calls that did not contribute: faulted ones, and repeats of a call already answered."""

    def draw(self, tool: str, args: Mapping[str, Any] | None = None,
             call_id: str | None = None) -> Fault | None:
        """Whether this call fails, and how; counted either way."""
        key = json.dumps([tool, dict(args or {})], sort_keys=True, default=str)
        position = self.positions.setdefault(key, len(self.positions))
        attempt = self.attempts.get(position, 0)
        self.attempts[position] = attempt + 1
        if any(not f.transient for f in self.faults):
            self.after_persistent += 1
        self.calls += 1
        s = self.spec
        kind = s.kinds[int(_draw(s.seed, self.example, position, "kind") * len(s.kinds))]
        at = attempt if kind in TRANSIENT else 0
        # A repeat of an answered call brings nothing new: the stubs answer it the same way.
        self.wasted += position in self.answered
        if _draw(s.seed, self.example, position, at) >= s.rate:
            self.answered.add(position)
            return None
        self.wasted += position not in self.answered
        fault = Fault(kind=kind, position=position, attempt=attempt, tool=tool)
        self.faults.append(fault)
        if call_id:
            self.faulted_ids.add(call_id)
        return fault

    def retries(self) -> int:
        """Attempts made at a position after its first fault."""
        first: dict[int, int] = {}
        for f in self.faults:
            first.setdefault(f.position, f.attempt)
        return sum(self.attempts[p] - 1 - a for p, a in first.items())

    def records(self) -> list[dict[str, Any]]:
        """The trace records: one per fault, then a summary (kind ``tool_faults``) whose
        ``positions`` say, per faulted call, how often the agent made it and whether one
        attempt went through (what the viewer's verdict reads)."""
        positions = {str(f.position): {"attempts": self.attempts[f.position],
                                       "answered": f.position in self.answered}
                     for f in self.faults}
        return [*(f.record() for f in self.faults),
                {"kind": "tool_faults", "calls": self.calls, "faults": len(self.faults),
                 "retries": self.retries(), "calls_after_persistent": self.after_persistent,
                 "wasted": self.wasted,
                 "persistent": any(not f.transient for f in self.faults),
                 "positions": positions}]


_current: ContextVar[FaultSession | None] = ContextVar("tooleval_tool_faults", default=None)


def current_faults() -> FaultSession | None:
    """The running example's faults (``None``: no faults in this run)."""
    return _current.get()


def is_faulted(call_id: str | None) -> bool:
    """Whether the running example's call ``call_id`` was faulted (it never ran)."""
    session = _current.get()
    return session is not None and call_id is not None and call_id in session.faulted_ids


def example_key(inputs: Mapping[str, Any], epoch: int | None) -> str:
    """An example's identity for the draws: its inputs' digest and its epoch."""
    text = json.dumps(dict(inputs), sort_keys=True, default=str)
    return f"{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}:{epoch or 0}"


@contextlib.contextmanager
def fault_session(spec: ToolFaults | None, inputs: Mapping[str, Any],
                  epoch: int | None) -> Iterator[FaultSession | None]:
    """The example's :class:`FaultSession` as :func:`current_faults` while it runs."""
    session = FaultSession(spec, example_key(inputs, epoch)) \
        if spec is not None and spec.active else None
    token = _current.set(session)
    try:
        yield session
    finally:
        _current.reset(token)
