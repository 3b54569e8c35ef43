"""Each session's own key: a credential that opens one example's session and no other.

A server holds one secret (random, or ``tooleval serve --secret``) and never hands it out. The
key of the session with id ``SID`` is ``SID.MAC``: ``MAC`` the first 32 characters of the
URL-safe base64 (no padding) of HMAC-SHA256(secret, ``"tooleval-mcp-session:" + SID``), 192
bits no one can compute without the secret. The key names its session, so a request can be
judged with no table of keys:

* the key's MAC does not match its id (or there is no key): not this server's key -- 401;
* it matches, and its id is the session of the URL: served;
* it matches another session's id: a **foreign** call -- another example's agent (or a client
  holding another example's key) reaching for this one; refused (401) and logged.

The same secret gives the same keys, so ``tooleval serve --secret S`` can be driven from a
script that derives them (:func:`derive`), and a restarted server takes the keys it handed out.

>>> keys = SessionKeys("s3cret")
>>> key = keys.key("4")
>>> key.split(".")[0], keys.owner(key), keys.owner("4.not-it"), keys.owner(key + "x")
('4', '4', None, None)
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

MAC_CHARS = 32
"""Characters of a key's MAC (192 bits)."""
_CONTEXT = b"tooleval-mcp-session:"


def derive(secret: str, session_id: str) -> str:
    """The key of session ``session_id`` under ``secret`` (see the module docstring)."""
    digest = hmac.new(secret.encode("utf-8"), _CONTEXT + session_id.encode("utf-8"),
                      hashlib.sha256).digest()
    return f"{session_id}.{base64.urlsafe_b64encode(digest).decode('ascii')[:MAC_CHARS]}"


class SessionKeys:
    """The keys of one server's sessions, from its secret (random unless given)."""

    def __init__(self, secret: str | None = None) -> None:
        self.secret = secret or secrets.token_urlsafe(32)

    def key(self, session_id: str) -> str:
        """The key that opens session ``session_id`` (and no other)."""
        return derive(self.secret, session_id)

    def owner(self, presented: str) -> str | None:
        """The session a presented key opens (``None``: not a key of this server). Constant
        time in the MAC (``hmac.compare_digest``)."""
        session_id, dot, _ = presented.rpartition(".")
        if not dot or not session_id or len(presented) > 200:
            return None
        if hmac.compare_digest(derive(self.secret, session_id).encode("utf-8"),
                               presented.encode("utf-8")):
            return session_id
        return None


__all__ = ["MAC_CHARS", "SessionKeys", "derive"]
