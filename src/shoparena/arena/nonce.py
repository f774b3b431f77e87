"""HMAC tool-call nonces (arena spec §4): mint on inference responses, verify on catalogue dispatches.

A nonce is ``base64url(payload) + "." + base64url(HMAC-SHA256(key, payload))`` where the payload is the
compact JSON object ``{"e": run, "c": call_id, "t": tool, "a": sha256(raw arguments), "x": expiry}`` in that
fixed key order. The proxy mints one per catalogue tool call it sees in a model response; an agent that
dispatches the call sends the nonce, the call id and the raw arguments back, byte for byte.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Callable
from enum import StrEnum
from typing import Any

from shoparena.arena.proxy_log import parse_response_tool_calls
from shoparena.records.tools import CATALOGUE_TOOLS

DEFAULT_TTL_S = 60.0
#: How long a claimed nonce is remembered (twice the TTL, as upstream).
DEFAULT_REPLAY_WINDOW_S = 120.0


class NonceStatus(StrEnum):
    """Verification outcome, logged as ``nonce_status``; only ``valid`` earns credit."""

    VALID = "valid"
    MISSING = "missing"
    MISMATCH = "mismatch"
    EXPIRED = "expired"
    REPLAYED = "replayed"
    MALFORMED = "malformed"


def _b64e(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _b64d(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def args_hash(raw: bytes | str) -> str:
    """Hex SHA-256 of the raw argument bytes."""
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw).hexdigest()


class NonceAuthority:
    """Mints and verifies nonces with one HMAC key; remembers claimed nonces to detect replays.

    Args:
        key: HMAC key bytes (keep it out of every sandbox).
        ttl_s: Lifetime of a nonce.
        replay_window_s: How long a claimed nonce stays remembered.
        clock: Time source in seconds (injectable for tests).
    """

    def __init__(
        self,
        key: bytes,
        *,
        ttl_s: float = DEFAULT_TTL_S,
        replay_window_s: float = DEFAULT_REPLAY_WINDOW_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not key:
            raise ValueError("NonceAuthority.key must be non-empty")
        self._key = key
        self.ttl_s = ttl_s
        self.replay_window_s = replay_window_s
        self._clock = clock
        self._claimed: dict[str, float] = {}
        self._lock = threading.Lock()

    def mint(self, run: str, call_id: str, tool: str, raw_arguments: bytes | str) -> str:
        """Sign one tool call for ``run``."""
        payload = {
            "e": run,
            "c": call_id,
            "t": tool,
            "a": args_hash(raw_arguments),
            "x": int(self._clock() + self.ttl_s),
        }
        body = json.dumps(payload, separators=(",", ":")).encode()
        signature = hmac.new(self._key, body, hashlib.sha256).digest()
        return f"{_b64e(body)}.{_b64e(signature)}"

    def enrich(self, run: str, response: dict[str, Any]) -> dict[str, Any]:
        """Add ``oro_metadata.tool_nonces`` and ``parsed_tool_calls`` to a response (in place; returned).

        Only catalogue tools get nonces; every parsed call is listed in ``parsed_tool_calls``.
        """
        calls = parse_response_tool_calls(response)
        nonces = {
            c.call_id: self.mint(run, c.call_id, c.name, c.arguments)
            for c in calls
            if c.name in CATALOGUE_TOOLS
        }
        meta = response.setdefault("oro_metadata", {})
        meta["tool_nonces"] = nonces
        meta["parsed_tool_calls"] = [
            {"id": c.call_id, "name": c.name, "arguments": c.arguments} for c in calls
        ]
        return response

    def verify(
        self, nonce: str | None, *, run: str, tool: str, body: bytes, call_id: str | None = None
    ) -> NonceStatus:
        """Check a dispatch and claim its nonce on success.

        Order: missing → malformed → signature/run/tool/call id/body hash (mismatch) → expiry → replay.
        """
        if not nonce:
            return NonceStatus.MISSING
        try:
            encoded_body, encoded_sig = nonce.split(".")
            payload_bytes = _b64d(encoded_body)
            signature = _b64d(encoded_sig)
            payload = json.loads(payload_bytes)
            if not isinstance(payload, dict):
                return NonceStatus.MALFORMED
            expiry = float(payload["x"])
        except (ValueError, KeyError, TypeError, binascii.Error):
            return NonceStatus.MALFORMED
        expected = hmac.new(self._key, payload_bytes, hashlib.sha256).digest()
        if not hmac.compare_digest(expected, signature):
            return NonceStatus.MISMATCH
        if payload.get("e") != run or payload.get("t") != tool or payload.get("a") != args_hash(body):
            return NonceStatus.MISMATCH
        if call_id is not None and payload.get("c") != call_id:
            return NonceStatus.MISMATCH
        now = self._clock()
        if now > expiry:
            return NonceStatus.EXPIRED
        with self._lock:
            for old, seen in list(self._claimed.items()):
                if now - seen > self.replay_window_s:
                    del self._claimed[old]
            key = f"{run}\x00{nonce}"
            if key in self._claimed:
                return NonceStatus.REPLAYED
            self._claimed[key] = now
        return NonceStatus.VALID
