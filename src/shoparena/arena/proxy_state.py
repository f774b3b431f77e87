"""Proxy state shared by the app and the runner: per-problem identities, rate buckets, nonces, emitted calls.

The runner registers one :class:`ClientIdentity` per problem (its token, its trusted log); the proxy app looks
requests up by token, writes their summary entries, and remembers the catalogue calls each model reply
emitted so later dispatches can be proven (:meth:`ClientIdentity.claim`).
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shoparena.arena.config import ProxyConfig
from shoparena.arena.nonce import NonceAuthority
from shoparena.arena.proxy_log import ParsedToolCall, append_entry
from shoparena.arena.richness import normalise_arguments
from shoparena.records.proxy_log import ProofKind, ProxyLogEntry
from shoparena.records.tools import CATALOGUE_TOOLS


@dataclass(slots=True, frozen=True)
class EmittedCall:
    """A catalogue call the proxy saw in a model reply: id, tool name and normalised arguments."""

    call_id: str
    name: str
    arguments: tuple[tuple[str, str], ...]


@dataclass(slots=True)
class ClientIdentity:
    """Who a token belongs to: set by the runner before the problem starts, removed after it ends."""

    token: str
    run: str
    agent: str
    problem_id: str
    log_path: Path
    #: Set when the problem ends: calls still generating for it are abandoned.
    closed: threading.Event = field(default_factory=threading.Event)
    #: Cancel events of the problem's inference calls in flight.
    cancels: set[threading.Event] = field(default_factory=set)
    #: Requests being handled (the trusted log is complete once this is 0 after ``closed``).
    active: int = 0
    #: Catalogue calls the model emitted that no dispatch has claimed yet, oldest first.
    outstanding: list[EmittedCall] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def remember_emitted(self, calls: list[ParsedToolCall]) -> None:
        """Queue the catalogue calls of one model reply (arguments that are not a JSON object are skipped)."""
        fresh = []
        for call in calls:
            if call.name not in CATALOGUE_TOOLS:
                continue
            try:
                arguments = json.loads(call.arguments) if call.arguments.strip() else {}
            except ValueError:
                continue
            if isinstance(arguments, dict):
                fresh.append(EmittedCall(call.call_id, call.name, normalise_arguments(arguments)))
        with self.lock:
            self.outstanding.extend(fresh)

    def claim(
        self, tool: str, variants: list[dict[str, Any]], call_id: str | None, nonce_valid: bool
    ) -> ProofKind:
        """Prove one dispatch: a valid nonce, else the oldest unclaimed emitted call with equal arguments.

        ``variants`` are the dispatch's arguments as received and in any other decoding the catalogue
        accepts (ORO's miner '+'-encodes ``q`` before the query string encodes it again). Each emitted
        call is claimed at most once, so repeating or inventing calls never earns credit.
        """
        keys = {normalise_arguments(arguments) for arguments in variants}
        with self.lock:
            match = None
            if nonce_valid and call_id:
                match = next((c for c in self.outstanding if c.call_id == call_id), None)
            if match is None:
                match = next((c for c in self.outstanding if c.name == tool and c.arguments in keys), None)
            if match is not None:
                self.outstanding.remove(match)
        if nonce_valid:
            return ProofKind.NONCE_VALID
        return ProofKind.MATCHED_EMITTED if match is not None else ProofKind.UNMATCHED


class TokenBucket:
    """Classic token bucket; ``take()`` is False when the caller must be rejected with 429."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst, self._clock = rate, float(burst), clock
        self.tokens, self.stamp = float(burst), clock()

    def take(self) -> bool:
        now = self._clock()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


class ProxyState:
    """Mutable proxy state shared by the app and the runner: identities, buckets, nonces, log writes.

    Args:
        config: Proxy settings.
        hmac_key: Nonce key (random per proxy when None).
        unattributed_log: File receiving requests with no valid token (for audits); None drops them.
    """

    def __init__(
        self, config: ProxyConfig, *, hmac_key: bytes | None = None, unattributed_log: Path | None = None
    ) -> None:
        self.config = config
        self.nonces = NonceAuthority(hmac_key or secrets.token_bytes(32), ttl_s=config.nonce_ttl_s)
        self.unattributed_log = unattributed_log
        self._identities: dict[str, ClientIdentity] = {}
        self._buckets: dict[str, TokenBucket] = {}
        self._lock = threading.Lock()

    def register(self, run: str, agent: str, problem_id: str, log_path: Path) -> ClientIdentity:
        """Mint a token for one problem and start (truncate) its trusted log."""
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_path.write_bytes(b"")  # a resumed problem starts a fresh log
        ident = ClientIdentity(secrets.token_urlsafe(24), run, agent, problem_id, log_path)
        with self._lock:
            self._identities[ident.token] = ident
            self._buckets[ident.token] = TokenBucket(self.config.rate_per_s, self.config.burst)
        return ident

    def unregister(self, token: str) -> ClientIdentity | None:
        """Revoke a token (later calls with it get 401) and cancel the generations still running for it."""
        with self._lock:
            self._buckets.pop(token, None)
            ident = self._identities.pop(token, None)
        if ident is not None:
            ident.closed.set()
            for cancel in list(ident.cancels):
                cancel.set()
        return ident

    def wait_idle(self, ident: ClientIdentity, timeout_s: float = 10.0) -> bool:
        """Wait until no request of ``ident`` is being handled, so its trusted log is complete."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                if ident.active == 0:
                    return True
            time.sleep(0.02)
        return False

    def begin_request(self, ident: ClientIdentity) -> None:
        with self._lock:
            ident.active += 1

    def end_request(self, ident: ClientIdentity) -> None:
        with self._lock:
            ident.active -= 1

    def lookup(self, token: str | None) -> ClientIdentity | None:
        with self._lock:
            return self._identities.get(token) if token else None

    def allow(self, token: str) -> bool:
        with self._lock:
            bucket = self._buckets.get(token)
            return bucket.take() if bucket else False

    def write(self, ident: ClientIdentity | None, entry: ProxyLogEntry) -> None:
        """Append ``entry`` to the problem's trusted log (or the unattributed log; dropped without one)."""
        path = ident.log_path if ident else self.unattributed_log
        if path is None:
            return
        with self._lock:
            append_entry(path, entry)


__all__ = ["ClientIdentity", "EmittedCall", "ProxyState", "TokenBucket"]
