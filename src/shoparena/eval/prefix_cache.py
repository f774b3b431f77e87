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
    """The (keys, values) of every layer of a transformers cache (5.x ``layers``, 4.x key/value lists)."""
    layers = getattr(cache, "layers", None)
    if layers is not None:
        return [(layer.keys, layer.values) for layer in layers]
    return list(zip(cache.key_cache, cache.value_cache, strict=True))


class KVBuffers:
    """Preallocated key/value buffers of one batch, one ``[rows, heads, capacity, head_dim]`` pair per layer.

    transformers' ``DynamicCache`` appends a decoded token with ``torch.cat``, copying every layer's whole
    cache at every step: for SmolLM2-135M (30 layers, 3 key/value heads of 64 floats: 46 KB a token) and 4
    rows of ~1,000 tokens that is ~180 MB copied per decoded token, a fifth to a third of the step. Here
    each layer's states live in one buffer allocated for the whole batch (prompt width plus the tokens to
    decode), written in place; a layer that outgrows it doubles (one copy), so any length works. Buffers
    are allocated on the first write, when the model's head count, head size, dtype and device are known;
    only each row's left padding (``pads``: positions the mask hides, but whose values still enter the
    attention product with weight 0, so they must be finite) is zeroed, the rest is written before it is read.
    """

    def __init__(self, rows: int, capacity: int, pads: list[int] | None = None) -> None:
        if rows < 1 or capacity < 1:
            raise ValueError(f"KVBuffers needs rows >= 1 and capacity >= 1, got {rows} and {capacity}")
        self.rows, self.capacity = rows, capacity
        self.pads = list(pads) if pads is not None else [0] * rows
        if len(self.pads) != rows:
            raise ValueError(f"KVBuffers got {len(self.pads)} pads for {rows} rows")
        self.keys: list[Any] = []
        self.values: list[Any] = []

    def ensure(self, layer: int, like: Any, needed: int) -> None:
        """Allocate ``layer``'s buffers shaped after ``like`` (one row's states), or double them until
        ``needed`` positions fit."""
        import torch

        while len(self.keys) <= layer:
            self.keys.append(None)
            self.values.append(None)
        if self.keys[layer] is None:
            shape = (self.rows, like.shape[1], max(self.capacity, needed), like.shape[3])
            for buffers in (self.keys, self.values):
                buffers[layer] = torch.empty(shape, dtype=like.dtype, device=like.device)
                for row, pad in enumerate(self.pads):
                    buffers[layer][row, :, :pad] = 0
            return
        size = self.keys[layer].shape[-2]
        if needed <= size:
            return
        while size < needed:
            size *= 2
        for buffers in (self.keys, self.values):
            old = buffers[layer]
            grown = old.new_empty((*old.shape[:2], size, old.shape[3]))
            grown[:, :, : old.shape[-2]] = old
            buffers[layer] = grown


def _slot_layer_class() -> type:
    """:class:`SlotLayer`'s class, built on first use (transformers is imported only by hf: policies)."""
    global _SLOT_LAYER
    if _SLOT_LAYER is None:
        from transformers.cache_utils import DynamicLayer

        class SlotLayer(DynamicLayer):  # type: ignore[misc, valid-type]
            """One layer of a cache kept in :class:`KVBuffers`: rows ``rows`` from position ``start``,
            ``length`` tokens so far. ``update`` writes the new states in place and returns views."""

            def __init__(self, buffers: KVBuffers, layer: int, rows: slice, start: int) -> None:
                super().__init__()
                self.buffers, self.layer, self.rows, self.start, self.length = buffers, layer, rows, start, 0

            def lazy_initialization(self, key_states: Any, value_states: Any) -> None:
                self.device, self.is_initialized = key_states.device, True

            def update(self, key_states: Any, value_states: Any, *_: Any, **__: Any) -> tuple[Any, Any]:
                if not self.is_initialized:
                    self.lazy_initialization(key_states, value_states)
                begin = self.start + self.length
                end = begin + key_states.shape[-2]
                self.buffers.ensure(self.layer, key_states, end)
                keys, values = self.buffers.keys[self.layer], self.buffers.values[self.layer]
                keys[self.rows, :, begin:end] = key_states
                values[self.rows, :, begin:end] = value_states
                self.length = end - self.start
                self.keys = keys[self.rows, :, self.start : end]
                self.values = values[self.rows, :, self.start : end]
                return self.keys, self.values

        _SLOT_LAYER = SlotLayer
    return _SLOT_LAYER


_SLOT_LAYER: type | None = None


def slot_cache(
    buffers: KVBuffers,
    layers: int,
    rows: slice,
    start: int = 0,
    *,
    prefix: list[Layer] | None = None,
    filled: int = 0,
) -> Any:
    """A transformers cache whose ``layers`` layers write into ``buffers``, rows ``rows`` from position
    ``start``: holding ``prefix``'s states (copied in) when given, or the ``filled`` positions the buffers
    already hold (the rows' prompts, each prefilled into its own window)."""
    from transformers import DynamicCache

    slot = _slot_layer_class()
    cache = DynamicCache()
    cache.layers = [slot(buffers, i, rows, start) for i in range(layers)]
    if filled:
        if len(buffers.keys) < layers or any(k is None for k in buffers.keys):
            raise ValueError("slot_cache(filled=...) needs buffers that every layer has written")
        for layer in cache.layers:
            end = start + filled
            layer.length, layer.is_initialized, layer.device = filled, True, buffers.keys[layer.layer].device
            layer.keys = buffers.keys[layer.layer][rows, :, start:end]
            layer.values = buffers.values[layer.layer][rows, :, start:end]
    elif prefix and prefix[0][0].shape[-2]:
        for layer, (keys, values) in zip(cache.layers, prefix, strict=True):
            layer.update(keys, values)
    return cache


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


def row_entry(layers: list[Layer], row: int, slots: Any, tokens: list[int], history_len: int) -> KVEntry:
    """The entry of one batch row (own copies): ``tokens``' states, at the positions ``slots`` (an int: from
    there on, after the row's left padding; or a 1-D index tensor, in order, one position per token)."""
    if isinstance(slots, int):
        end = slots + len(tokens)
        kept = tuple((k[row : row + 1, :, slots:end].clone(), v[row : row + 1, :, slots:end].clone())
                     for k, v in layers)
        return KVEntry(tuple(tokens), kept, history_len)
    if len(slots) != len(tokens):
        raise ValueError(f"row_entry got {len(slots)} positions for {len(tokens)} tokens")
    first = int(slots[0]) if len(slots) else 0
    if not len(slots) or int(slots[-1]) - first + 1 == len(tokens):  # no holes: a plain slice
        return row_entry(layers, row, first, tokens, history_len)
    kept = tuple((k[row : row + 1].index_select(-2, slots), v[row : row + 1].index_select(-2, slots))
                 for k, v in layers)
    return KVEntry(tuple(tokens), kept, history_len)


__all__ = [
    "KVBuffers",
    "KVEntry",
    "Match",
    "PrefixStore",
    "cache_layers",
    "common_prefix",
    "row_entry",
    "slot_cache",
]
