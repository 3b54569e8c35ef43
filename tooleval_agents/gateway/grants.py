"""Who may ask the gateway: a :class:`Grant` per example -- its own URL (``/g/<id>/v1``) and its
own key, minted when the example starts and ended with it. A request is answered only on the
URL of the grant its key was minted for: that example's accounting and transcript get the call.
Another example's key, no key, or a key of an ended example is refused and counted."""

from __future__ import annotations

import hmac
import secrets
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tooleval_agents.gateway.wire import GatewayError
from tooleval_agents.models.accounting import CallStats
from tooleval_agents.redaction import register_secret

KEY_PREFIX = "sk-tooleval-"
"""Keys look like keys (an SDK or a log scrubber that checks the shape treats them as one)."""


@dataclass
class Grant:
    """One example's access to the gateway, and what it did with it."""

    id: str
    """Part of its URL (``/g/<id>/v1``)."""
    key: str
    """Its credential (``Authorization: Bearer <key>`` or ``x-api-key: <key>``)."""
    label: str
    """The example it serves (its key in the run, or its index for ``tooleval serve``)."""
    stats: CallStats | None
    """The example's accounting: its model calls, tokens and transcript go here."""
    requests: Counter[str] = field(default_factory=Counter)
    """Requests answered, by wire format (and ``models``)."""
    errors: Counter[str] = field(default_factory=Counter)
    """Requests refused, by ``<status> <kind>``."""
    open: bool = True
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def answered(self, what: str) -> None:
        with self._lock:
            self.requests[what] += 1

    def refused(self, error: GatewayError) -> None:
        with self._lock:
            self.errors[f"{error.status} {error.kind}"] += 1

    def record(self) -> dict[str, Any]:
        """The example's trace record of its model calls through the gateway."""
        with self._lock:
            return {"kind": "model_gateway", "requests": dict(self.requests),
                    "errors": dict(self.errors)}

    @property
    def used(self) -> bool:
        """Whether any request of the example reached the gateway (answered or not)."""
        with self._lock:
            return bool(self.requests) or bool(self.errors)


class Grants:
    """The gateway's grants (thread-safe: the run mints them, the server's thread reads)."""

    def __init__(self) -> None:
        self._live: dict[str, Grant] = {}
        self._ended: set[str] = set()
        self._lock = threading.Lock()
        self.unattributed: Counter[str] = Counter()
        """Requests that named no live grant, by ``<status> <kind>``."""

    def mint(self, label: str, stats: CallStats | None) -> Grant:
        grant = Grant(id=secrets.token_hex(8), key=KEY_PREFIX + secrets.token_urlsafe(24),
                      label=label, stats=stats)
        register_secret(grant.key)  # masked wherever a run writes it
        with self._lock:
            self._live[grant.id] = grant
        return grant

    def end(self, grant: Grant) -> None:
        """The example is over: later requests for it are refused (404)."""
        with self._lock:
            grant.open = False
            self._live.pop(grant.id, None)
            self._ended.add(grant.id)

    def check(self, grant_id: str, key: str | None) -> Grant:
        """The grant a request is for, when its key is that grant's.

        Raises:
            GatewayError: no such grant (404; an ended one says so), or not its key (401,
                counted on the grant).
        """
        with self._lock:
            grant = self._live.get(grant_id)
            ended = grant is None and grant_id in self._ended
        if grant is None:
            raise GatewayError("not_found", f"the example of this URL has ended ({grant_id})"
                               if ended else "no model endpoint here: the gateway serves "
                               "each example at its own /g/<id>/v1")
        if key is None or not hmac.compare_digest(key.encode("utf-8"),
                                                  grant.key.encode("utf-8")):
            error = GatewayError("authentication", "this URL's example takes its own key "
                                 "(Authorization: Bearer <key> or x-api-key: <key>): "
                                 + ("none was sent" if key is None else "another was sent"))
            grant.refused(error)
            raise error
        return grant

    def unknown(self, error: GatewayError) -> None:
        """Count a request that reached no grant."""
        with self._lock:
            self.unattributed[f"{error.status} {error.kind}"] += 1


__all__ = ["KEY_PREFIX", "Grant", "Grants"]
