"""Key/value caches kept between calls of the transformers engine: the shared prefix and each episode's turns.

An agent episode sends its whole conversation again at every turn, and every episode starts with the same
system turn and tool schemas. :class:`PrefixStore` keeps two kinds of entries, each a token list and the
key/value tensors of exactly those tokens (batch size 1, never modified once stored):

* the shared entry: the first prompt the engine saw, cut back to the part later prompts share with it
  (the system turn and tools), computed once per engine;
* one entry per episode (``GenerationJob.session``): the episode's last prompt plus the tokens generated
  for it, replaced after every turn and dropped when the episode ends (:meth:`PrefixStore.release`) or,
  past ``max_sessions``, least recently used first.

A new prompt reuses the longest prefix it shares with its episode's entry or the shared entry and computes
only the rest. The key/value states of a token depend only on the tokens before it, so a reused prefix gives
the same states a full prefill would (up to float rounding of a different operation order). A turn whose
prompt does not extend the episode's previous prompt token for token (a chat template that rewrites earlier
turns, a truncated history) is a *miss*: it is counted, and computed from the first token that differs.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

#: One layer's (keys, values), each ``[batch, heads, tokens, head_dim]``.
Layer = tuple[Any, Any]


@dataclass(slots=True, frozen=True)
class KVEntry:
    """Tokens and the key/value states computed for them (batch 1)."""

    tokens: tuple[int, ...]
    layers: tuple[Layer, ...]
    #: How many of ``tokens`` the episode's next prompt must repeat: the conversation so far, without the
    #: generation prompt that opened the reply (a template may render the finished turn differently, as
    #: Qwen3's does its empty think block). A later prompt that does not start with them is a miss.
    history_len: int

    def head(self, n: int) -> list[Layer]:
        """The states of the first ``n`` tokens (views, not copies)."""
        return [(k[:, :, :n], v[:, :, :n]) for k, v in self.layers]


@dataclass(slots=True, frozen=True)
class Match:
    """What a prompt can reuse: ``length`` tokens of ``entry`` (None: nothing), and whether it is a miss."""

    length: int
    entry: KVEntry | None
    miss: bool


def common_prefix(a: tuple[int, ...] | list[int], b: list[int], limit: int) -> int:
    """How many leading tokens ``a`` and ``b`` share, at most ``limit``."""
    n = 0
    limit = min(limit, len(a), len(b))
    while n < limit and a[n] == b[n]:
        n += 1
    return n


def cache_layers(cache: Any) -> list[Layer]:
    """The (keys, values) of every layer of a transformers ``DynamicCache`` (4.x and 5.x layouts)."""
    layers = getattr(cache, "layers", None)
    if layers is not None:
        return [(layer.keys, layer.values) for layer in layers]
    return list(zip(cache.key_cache, cache.value_cache, strict=True))


def dynamic_cache(layers: list[Layer] | None) -> Any:
    """A ``DynamicCache`` holding ``layers`` (empty for None or no tokens)."""
    from transformers import DynamicCache

    if not layers or layers[0][0].shape[-2] == 0:
        return DynamicCache()
    return DynamicCache(ddp_cache_data=[(k, v) for k, v in layers])


class PrefixStore:
    """The shared entry and the per-episode entries of one engine (see the module docstring).

    Args:
        min_prefix: Shortest shared prefix worth keeping, in tokens.
        max_sessions: Most episode entries kept (least recently used dropped first).
        enabled: False: nothing is reused (``--no-prefix-cache``), every prompt is computed whole.
    """

    def __init__(self, *, min_prefix: int = 32, max_sessions: int = 64, enabled: bool = True) -> None:
        if max_sessions < 1:
            raise ValueError(f"PrefixStore.max_sessions must be >= 1, got {max_sessions}")
        self.min_prefix, self.max_sessions, self.enabled = min_prefix, max_sessions, enabled
        self.shared: KVEntry | None = None
        self._sessions: OrderedDict[str, KVEntry] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._sessions)

    def match(self, prompt: list[int], session: str | None) -> Match:
        """What ``prompt`` reuses (every prompt keeps at least its last token to compute)."""
        if not self.enabled:
            return Match(0, None, False)
        limit = len(prompt) - 1
        with self._lock:
            own = self._sessions.get(session) if session is not None else None
            shared = self.shared
        best = Match(0, None, False)
        if own is not None:
            n = common_prefix(own.tokens, prompt, limit)
            miss = common_prefix(own.tokens, prompt, own.history_len) < own.history_len
            best = Match(n, own if n else None, miss)
        if shared is not None:
            n = common_prefix(shared.tokens, prompt, limit)
            if n >= self.min_prefix and n > best.length:
                best = Match(n, shared, best.miss)
        return best

    def offer_shared(self, prompt: list[int], layers: list[Layer], reused: Match) -> None:
        """After a prompt was computed: make it the shared entry when there is none (or it shared too little
        with the current one), or cut the shared entry back to the part this prompt shares with it."""
        if not self.enabled:
            return
        with self._lock:
            shared = self.shared
            if shared is None or (reused.entry is not shared and reused.length < self.min_prefix):
                if len(prompt) >= self.min_prefix:
                    self.shared = KVEntry(tuple(prompt), tuple(_clone(layers, len(prompt))), len(prompt))
                return
            n = common_prefix(shared.tokens, prompt, len(prompt))
            if self.min_prefix <= n < len(shared.tokens):
                self.shared = KVEntry(shared.tokens[:n], tuple(shared.head(n)), n)

    def remember(self, session: str, entry: KVEntry) -> None:
        """Store (or replace) an episode's entry."""
        if not self.enabled:
            return
        with self._lock:
            self._sessions[session] = entry
            self._sessions.move_to_end(session)
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)

    def release(self, session: str) -> None:
        """Drop an episode's entry (the episode ended)."""
        with self._lock:
            self._sessions.pop(session, None)


def _clone(layers: list[Layer], n: int) -> list[Layer]:
    """Own copies of the first ``n`` tokens' states (so a large batched tensor is not kept alive)."""
    return [(k[:, :, :n].clone(), v[:, :, :n].clone()) for k, v in layers]


def row_entry(layers: list[Layer], row: int, start: int, tokens: list[int], history_len: int) -> KVEntry:
    """The entry of one batch row: ``len(tokens)`` positions from ``start`` (after its left padding)."""
    end = start + len(tokens)
    kept = tuple(
        (k[row : row + 1, :, start:end].clone(), v[row : row + 1, :, start:end].clone()) for k, v in layers
    )
    return KVEntry(tuple(tokens), kept, history_len)


def stack_rows(rows: list[list[Layer]], pad_value: float = 0.0) -> tuple[list[Layer], list[int]]:
    """Left-pad each row's states to the longest and stack them into one batch; returns the layers and each
    row's padding (the positions the attention mask must hide)."""
    import torch

    lengths = [row[0][0].shape[-2] for row in rows]
    width = max(lengths)
    pads = [width - n for n in lengths]
    stacked: list[Layer] = []
    for layer in range(len(rows[0])):
        keys, values = [], []
        for row, pad in zip(rows, pads, strict=True):
            k, v = row[layer]
            if pad:
                shape = (1, k.shape[1], pad, k.shape[3])
                k = torch.cat([k.new_full(shape, pad_value), k], dim=-2)
                v = torch.cat([v.new_full((1, v.shape[1], pad, v.shape[3]), pad_value), v], dim=-2)
            keys.append(k)
            values.append(v)
        stacked.append((torch.cat(keys, dim=0), torch.cat(values, dim=0)))
    return stacked, pads


__all__ = [
    "KVEntry",
    "Match",
    "PrefixStore",
    "cache_layers",
    "common_prefix",
    "dynamic_cache",
    "row_entry",
    "stack_rows",
]
