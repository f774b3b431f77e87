"""Batched in-process generation: concurrent chat requests share one ``model.generate`` call.

On a CPU, one decoding step of a small model costs about the same for 1 sequence as for 8 (the weights are
read once per step either way), so the only way concurrent episodes get faster is to decode them together.
:class:`BatchedGenerator` owns the model on one worker thread; callers submit a rendered prompt and block on
a future. The worker takes whatever requests are waiting (up to ``max_batch``, after a short gathering wait),
groups those with the same decoding settings, left-pads them and generates them as one batch. This is
static batching: a batch ends when its last row stops, so rows of very different lengths waste some steps.

On a CPU the prompt, not the reply, is the cost: the native prompt of a shopping episode is ~830 tokens
(system turn plus tool schemas) and its prefill takes ~10 s for SmolLM2-135M on one busy core, against
~0.03 s per decoded token; batching cannot shrink prefill, which is compute-bound. So the generator keeps
key/value caches between calls (:mod:`shoparena.eval.prefix_cache`): the shared system turn and tools,
computed once, and each episode's previous turn (its prompt and reply), so a turn computes only the
tokens its prompt adds. A batch keeps its key/value states in one preallocated buffer per layer
(:class:`~shoparena.eval.prefix_cache.KVBuffers`), written in place: each row is prefilled on its own
into its window (no row pays for another's padding), then the rows are decoded together by a small
explicit loop (greedy, or temperature with top-p) with per-row positions and a padding mask.

With the prompt computed once, decoding is most of what is left, and on a CPU a decoding step costs
about as much for a few tokens as for one (the weights are read once per step). So greedy rows guess
their next tokens from their own text (prompt lookup, :func:`draft_tokens`: an agent's reply repeats
tool-call syntax, ids and names from its context) and each step checks the guesses: those the model would
have picked itself are kept with the token it picks after them, the wrong guesses' slots are masked out.
The tokens are the ones one-token-a-step decoding picks, up to float rounding of a different operation
order (as with the cache itself).

Threads: a decoded token is thousands of small ops; with torch's default of one OpenMP thread per core,
each op ends at a barrier that waits for the other thread, and on a shared machine that thread is often
descheduled. On the 2-core project machine at load average ~10 the tiny model's episodes ran 10-23x slower
with 2 intra-op threads than with 1 (docs/fidelity.md), so on a busy host pass ``threads=1``
(``EvalConfig.threads``, ``--threads``); the backend restores the previous count on close.

:class:`BatchedTransformersBackend` is a :class:`~shoparena.llm.types.ChatBackend` over it, and
:mod:`shoparena.eval.server` serves the same backend over an OpenAI-compatible HTTP API.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shoparena.eval.prefix_cache import (
    KVBuffers,
    PrefixStore,
    cache_layers,
    common_prefix,
    row_entry,
    slot_cache,
)
from shoparena.llm.transformers_backend import parse_generated_text
from shoparena.llm.types import BackendError, ChatRequest, ChatResponse, Usage

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class GenerationJob:
    """One prompt waiting for generation."""

    prompt_ids: list[int]
    max_new_tokens: int
    temperature: float = 0.0
    top_p: float = 1.0
    stop: tuple[str, ...] = ()
    #: The episode this prompt belongs to: its cache is kept for the next turn (None: nothing kept).
    session: str | None = None
    #: Leading prompt tokens that are the conversation (the rest is the generation prompt); None: all.
    history_len: int | None = None
    future: Future[tuple[list[int], str]] = field(default_factory=Future)
    #: Set by the worker before the future resolves: prompt tokens computed (not reused), and whether the
    #: prompt failed to extend its episode's previous prompt.
    prefilled: int | None = None
    miss: bool = False

    @property
    def group(self) -> tuple[Any, ...]:
        """Jobs with equal keys can share a generate() call."""
        sampled = self.temperature > 0
        return (sampled, self.temperature if sampled else 0.0, self.top_p if sampled else 1.0)


@dataclass(slots=True)
class BatchStats:
    """Counters of the worker (read by benchmarks and the server's /stats)."""

    batches: int = 0
    sequences: int = 0
    generated_tokens: int = 0
    prompt_tokens: int = 0
    prefilled_tokens: int = 0
    prefix_hits: int = 0
    prefix_misses: int = 0
    #: Tokens guessed by greedy rows' lookahead, and how many of them the model confirmed.
    drafted_tokens: int = 0
    accepted_tokens: int = 0
    max_batch_seen: int = 0
    busy_s: float = 0.0


class QueuedGenerator:
    """Generates submitted prompts in batches on one worker thread (subclasses implement ``_generate``).

    The worker takes whatever requests are waiting (up to ``max_batch``, after ``gather_s``), groups those
    with the same decoding settings and hands each group to ``_generate``; a failed batch fails only its
    own requests. Requests announced with :meth:`arriving` (a chat backend rendering a prompt) hold the
    batch open up to ``arrival_s``: a batch admits nobody once it runs, so waiting a few tens of ms for
    prompts being rendered beats leaving them to the next batch.
    """

    def __init__(self, *, max_batch: int, gather_s: float, name: str, arrival_s: float = 2.0) -> None:
        if max_batch < 1:
            raise ValueError(f"{type(self).__name__}.max_batch must be >= 1, got {max_batch}")
        self.max_batch, self.gather_s, self.arrival_s = max_batch, gather_s, arrival_s
        self._arriving = 0
        self._arriving_lock = threading.Lock()
        self.stats = BatchStats()
        self._queue: queue.Queue[GenerationJob | None] = queue.Queue()
        self._pending: list[GenerationJob] = []
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._closed = False

    def submit(self, job: GenerationJob) -> Future[tuple[list[int], str]]:
        """Queue a job; its future resolves to ``(new token ids, decoded text)``."""
        if self._closed:
            raise BackendError(f"{type(self).__name__} is closed")
        self._queue.put(job)
        return job.future

    @contextmanager
    def arriving(self) -> Iterator[None]:
        """Announce a request that will be submitted soon (while its prompt is being rendered)."""
        with self._arriving_lock:
            self._arriving += 1
        try:
            yield
        finally:
            with self._arriving_lock:
                self._arriving -= 1

    def close(self) -> None:
        """Stop the worker after the jobs already queued."""
        if not self._closed:
            self._closed = True
            self._queue.put(None)
            self._thread.join(timeout=30)

    tokenizer: Any

    def _generate(self, batch: list[GenerationJob]) -> list[tuple[list[int], str]]:
        raise NotImplementedError

    def _stopped(self, tokens: list[int], job: GenerationJob) -> bool:
        """Whether the tail of a row's new tokens contains one of the job's stop strings."""
        if not job.stop:
            return False
        window = 4 * max(len(s) for s in job.stop) + 4
        tail = self.tokenizer.decode(tokens[-window:], skip_special_tokens=False)
        return any(stop in tail for stop in job.stop)

    def _text(self, new: list[int], job: GenerationJob) -> str:
        """The decoded reply, cut at the first stop string."""
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        for stop in job.stop:
            if stop in text:
                text = text[: text.index(stop)]
        return text

    # --- worker -----------------------------------------------------------------------------------------
    def _collect(self) -> list[GenerationJob] | None:
        if not self._pending:
            first = self._queue.get()
            if first is None:
                return None
            self._pending.append(first)
        now = time.monotonic()
        deadline, hold = now + self.gather_s, now + self.arrival_s
        while len(self._pending) < self.max_batch:
            now = time.monotonic()
            remaining = deadline - now
            if remaining <= 0 and self._arriving > 0 and now < hold:
                remaining = min(0.005, hold - now)  # a prompt is being rendered: wait for it
            try:
                job = (
                    self._queue.get(timeout=max(remaining, 0.0))
                    if remaining > 0
                    else self._queue.get_nowait()
                )
            except queue.Empty:
                if self._arriving > 0 and time.monotonic() < hold:
                    continue
                break
            if job is None:
                self._closed = True
                break
            self._pending.append(job)
        key = self._pending[0].group
        batch = [j for j in self._pending if j.group == key][: self.max_batch]
        self._pending = [j for j in self._pending if j not in batch]
        return batch

    def _loop(self) -> None:
        while True:
            batch = self._collect()
            if batch is None:
                return
            started = time.perf_counter()
            try:
                results = self._generate(batch)
            except Exception as exc:  # one failed batch must not kill the worker: fail its requests
                logger.exception("batched generation failed")
                for job in batch:
                    job.future.set_exception(BackendError(f"generation failed: {type(exc).__name__}: {exc}"))
                continue
            finally:
                self.stats.busy_s += time.perf_counter() - started
            for job, result in zip(batch, results, strict=True):
                job.future.set_result(result)
            if self._closed and not self._pending and self._queue.empty():
                return


class BatchedGenerator(QueuedGenerator):
    """Owns a causal LM and generates submitted prompts in batches on one worker thread.

    Each row of a batch is prefilled on its own from the longest prefix it can reuse
    (:class:`~shoparena.eval.prefix_cache.PrefixStore`: its episode's previous turn, else the shared system
    turn and tools), so only its new tokens are computed and no row pays for another's padding, into its
    left-padded window of the batch's buffers; the rows are then decoded together in place, greedy rows
    with ``lookahead`` guessed tokens a step (see the module docstring). After decoding, each row that
    names an episode (``GenerationJob.session``) leaves its prompt and reply in the store for the next turn.

    Args:
        model: A loaded transformers causal LM (eval mode).
        tokenizer: Its tokenizer.
        max_batch: Most sequences per generate() call.
        gather_s: How long the worker waits for more requests after the first one arrives.
        seed: Seed of the sampling generator (sampled decoding is reproducible only for the same batches).
        min_prefix: Shortest shared prompt prefix worth caching, in tokens.
        prefix_cache: Reuse computed prefixes (False: every prompt is computed whole).
        max_sessions: Most episode caches kept at once (least recently used dropped first).
        lookahead: Most tokens a greedy row guesses per decoding step from its own text (prompt lookup:
            the tokens that followed the last place its final tokens appeared); 0: one token a step.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        max_batch: int = 8,
        gather_s: float = 0.01,
        seed: int = 0,
        min_prefix: int = 32,
        prefix_cache: bool = True,
        max_sessions: int = 64,
        lookahead: int = 4,
    ) -> None:
        super().__init__(max_batch=max_batch, gather_s=gather_s, name="batched-generate")
        if lookahead < 0:
            raise ValueError(f"BatchedGenerator.lookahead must be >= 0, got {lookahead}")
        self.lookahead = lookahead
        self.model, self.tokenizer = model, tokenizer
        pad = getattr(tokenizer, "pad_token_id", None)
        eos = getattr(tokenizer, "eos_token_id", None)
        self.pad_id = int(pad if pad is not None else (eos if eos is not None else 0))
        import inspect

        import torch

        self._rng = torch.Generator(device=model.device).manual_seed(seed)
        self.store = PrefixStore(min_prefix=min_prefix, max_sessions=max_sessions, enabled=prefix_cache)
        # transformers 5.x names the cache argument ``cache`` (``past_key_values`` before).
        params = inspect.signature(model.forward).parameters
        self._cache_kw = "cache" if "cache" in params else "past_key_values"
        config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
        self._layers = int(config.num_hidden_layers)
        _grouped_sdpa(model)
        self._thread.start()

    def release(self, session: str) -> None:
        """Forget an episode's cache (it ended)."""
        self.store.release(session)

    def _forward(self, **kwargs: Any) -> Any:
        cache = kwargs.pop("cache")
        return self.model(**kwargs, use_cache=True, **{self._cache_kw: cache})

    def _prefill(self, job: GenerationJob, buffers: KVBuffers, row: int, pad: int) -> Any:
        """Compute one row's prompt from the longest prefix it can reuse, into its window of the batch's
        buffers (row ``row`` after ``pad`` positions of left padding); returns its last logits."""
        import torch

        prompt = job.prompt_ids
        found = self.store.match(prompt, job.session)
        prefix = found.entry.head(found.length) if found.entry is not None else None
        cache = slot_cache(buffers, self._layers, slice(row, row + 1), pad, prefix=prefix)
        device = self.model.device
        rest = torch.tensor([prompt[found.length :]], dtype=torch.long, device=device)
        positions = torch.arange(found.length, len(prompt), dtype=torch.long, device=device)[None]
        logits = self._forward(input_ids=rest, position_ids=positions, cache=cache, logits_to_keep=1).logits
        layers = cache_layers(cache)
        self.store.offer_shared(prompt, layers, found)
        job.prefilled, job.miss = len(prompt) - found.length, found.miss
        self.stats.prefix_hits += 1 if found.length else 0
        self.stats.prefix_misses += 1 if found.miss else 0
        return logits[0, -1]

    def _pick(self, logits: Any, job: GenerationJob) -> int:
        import torch

        if job.temperature <= 0:
            return int(torch.argmax(logits))
        probs = torch.softmax(logits.float() / job.temperature, dim=-1)
        if job.top_p < 1.0:
            ordered, index = torch.sort(probs, descending=True)
            keep = torch.cumsum(ordered, dim=-1) - ordered < job.top_p
            probs = torch.zeros_like(probs).scatter(0, index[keep], ordered[keep])
        return int(torch.multinomial(probs, 1, generator=self._rng))

    def _generate(self, batch: list[GenerationJob]) -> list[tuple[list[int], str]]:
        import torch

        with torch.no_grad():
            # One buffer per layer for the whole batch, sized for the longest prompt plus the longest reply:
            # each row is prefilled into its own window (after its left padding) and decoding writes in place.
            rows = len(batch)
            width = max(len(j.prompt_ids) for j in batch)
            pads = [width - len(j.prompt_ids) for j in batch]
            # Each step may feed ``lookahead`` guessed tokens per row, whose slots stay (masked) when wrong.
            capacity = width + max(j.max_new_tokens for j in batch) * (1 + self.lookahead) + 1
            buffers = KVBuffers(rows, capacity, pads)
            logits = torch.stack([self._prefill(job, buffers, r, pads[r]) for r, job in enumerate(batch)])
            cache = slot_cache(buffers, self._layers, slice(0, rows), filled=width)
            mask = torch.ones((rows, capacity), dtype=torch.long, device=self.model.device)
            for row, pad in enumerate(pads):
                mask[row, :pad] = 0  # left padding
            next_pos = torch.tensor([len(j.prompt_ids) for j in batch], dtype=torch.long)
            new = self._decode(batch, cache, mask, width, logits, next_pos)
            self._remember(batch, cache_layers(cache), mask, new)
        results = [(new[row], self._text(new[row], job)) for row, job in enumerate(batch)]
        self.stats.batches += 1
        self.stats.sequences += rows
        self.stats.generated_tokens += sum(len(r[0]) for r in results)
        self.stats.prompt_tokens += sum(len(j.prompt_ids) for j in batch)
        self.stats.prefilled_tokens += sum(j.prefilled or 0 for j in batch)
        self.stats.max_batch_seen = max(self.stats.max_batch_seen, rows)
        return results

    def _decode(
        self, batch: list[GenerationJob], cache: Any, mask: Any, width: int, logits: Any, next_pos: Any
    ) -> list[list[int]]:
        """The batched decoding loop: each row until its EOS, token cap or stop string.

        ``mask`` covers the whole buffer (``width`` prompt positions, then the reply's). Greedy rows guess
        their next tokens from their own text (:func:`draft_tokens`) and each step feeds every row its
        pending token plus its guesses: the guesses the model itself would have picked are kept with the
        token it picks after them (several tokens for one step), the others' slots are masked out.
        """
        import torch

        device = self.model.device
        rows = len(batch)
        eos = _eos_ids(self.model, self.tokenizer)
        new: list[list[int]] = [[] for _ in batch]
        done = [False] * rows
        texts = [list(job.prompt_ids) for job in batch]  # each row's prompt and reply, to draft from
        pending = [0] * rows

        def emit(row: int, token: int) -> None:
            new[row].append(token)
            texts[row].append(token)
            pending[row] = token
            job = batch[row]
            if token in eos or len(new[row]) >= job.max_new_tokens or self._stopped(new[row], job):
                done[row] = True

        for row, job in enumerate(batch):
            emit(row, self._pick(logits[row], job))
        while not all(done):
            drafts = [
                []
                if done[row] or job.temperature > 0
                else draft_tokens(texts[row], min(self.lookahead, job.max_new_tokens - len(new[row]) - 1))
                for row, job in enumerate(batch)
            ]
            block = 1 + max(len(d) for d in drafts)
            ids = torch.full((rows, block), self.pad_id, dtype=torch.long)
            mask[:, width : width + block] = 0
            for row in range(rows):
                if not done[row]:
                    fed = [pending[row], *drafts[row]]
                    ids[row, : len(fed)] = torch.tensor(fed, dtype=torch.long)
                    mask[row, width : width + len(fed)] = 1
            positions = next_pos[:, None] + torch.arange(block)[None]
            out = self._forward(
                input_ids=ids.to(device),
                attention_mask=mask[:, : width + block],
                position_ids=positions.to(device),
                cache=cache,
                logits_to_keep=block,
            ).logits
            for row, job in enumerate(batch):
                if done[row]:
                    continue
                draft = drafts[row]
                picked = [self._pick(out[row, 0], job)]
                if draft:
                    greedy = out[row, 1 : len(draft) + 1].argmax(dim=-1).tolist()
                    for guess, after in zip(draft, greedy, strict=True):
                        if guess != picked[-1]:
                            break
                        picked.append(int(after))
                kept = len(picked) - 1  # guesses that were right: their slots stay
                mask[row, width + 1 + kept : width + block] = 0
                next_pos[row] += 1 + kept
                self.stats.drafted_tokens += len(draft)
                self.stats.accepted_tokens += kept
                for token in picked:
                    emit(row, token)
                    if done[row]:
                        break
            width += block
        return new

    def _remember(
        self, batch: list[GenerationJob], layers: list[Any], mask: Any, new: list[list[int]]
    ) -> None:
        """Store each episode row's prompt and the reply tokens whose states the cache holds (all but the
        last: it was never fed back), from the row's unmasked slots (left padding and wrong guesses are not
        the row's text)."""
        if not self.store.enabled:
            return
        for row, job in enumerate(batch):
            if job.session is not None:
                tokens = [*job.prompt_ids, *new[row][:-1]]
                slots = mask[row, : layers[0][0].shape[-2]].nonzero().flatten()[: len(tokens)]
                history = job.history_len if job.history_len is not None else len(job.prompt_ids)
                self.store.remember(job.session, row_entry(layers, row, slots, tokens, history))


_GROUPED_SDPA = "shoparena_grouped_sdpa"


def _grouped_sdpa(model: Any) -> None:
    """Give an ``sdpa`` model an attention that runs grouped-query heads without copying keys and values.

    transformers' SDPA path calls ``repeat_kv`` (one copy of every layer's keys and values per query-head
    group) whenever a masked query has more than one token, as a step that checks guessed tokens does on a
    left-padded batch; torch's own ``enable_gqa`` gives the same numbers without the copies (SmolLM2: 9
    query heads on 3 key/value heads, ~4x faster attention for such a step). Other calls go to
    transformers' function unchanged.
    """
    config = getattr(model, "config", None)
    if getattr(config, "_attn_implementation", None) not in ("sdpa", _GROUPED_SDPA):
        return
    import torch
    from transformers import AttentionInterface
    from transformers.integrations.sdpa_attention import sdpa_attention_forward
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface

    def grouped(module: Any, query: Any, key: Any, value: Any, attention_mask: Any, **kwargs: Any) -> Any:
        groups = getattr(module, "num_key_value_groups", 1)
        plain = {k: v for k, v in kwargs.items() if k not in ("dropout", "scaling", "is_causal")}
        if (
            groups == 1
            or query.shape[2] == 1
            or attention_mask is None
            or attention_mask.dtype != torch.bool
            or any(v is not None for k, v in plain.items() if k in ("softcap", "position_bias"))
            or kwargs.get("output_attentions")
        ):
            return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)
        out = torch.nn.functional.scaled_dot_product_attention(
            query,
            key,
            value,
            attn_mask=attention_mask,
            dropout_p=kwargs.get("dropout", 0.0),
            scale=kwargs.get("scaling"),
            enable_gqa=True,
        )
        return out.transpose(1, 2).contiguous(), None

    AttentionInterface.register(_GROUPED_SDPA, grouped)
    # The masks are built as for sdpa (an implementation without a mask function would get no mask at all).
    AttentionMaskInterface.register(_GROUPED_SDPA, ALL_MASK_ATTENTION_FUNCTIONS["sdpa"])
    model.set_attn_implementation(_GROUPED_SDPA)


def draft_tokens(text: list[int], limit: int, ngrams: tuple[int, ...] = (3, 2)) -> list[int]:
    """Prompt-lookup guess of the next ``limit`` tokens: find the latest earlier place where ``text``'s last
    ``n`` tokens appear (longest ``n`` first) and return what followed them there ([] when nothing matches).

    An agent's reply repeats much of its context (tool-call syntax, product ids and names from a tool
    result, earlier calls' arguments); a right guess lets one decoding step confirm several tokens.
    """
    if limit <= 0:
        return []
    size = len(text)
    for n in ngrams:
        if size <= n:
            continue
        tail = text[-n:]
        last = tail[-1]
        for end in range(size - 2, n - 2, -1):  # ``end``: the last token of an earlier occurrence
            if text[end] == last and text[end - n + 1 : end + 1] == tail:
                return text[end + 1 : end + 1 + limit]
    return []


def _eos_ids(model: Any, tokenizer: Any) -> set[int]:
    ids: set[int] = set()
    for source in (getattr(model, "generation_config", None), tokenizer):
        value = getattr(source, "eos_token_id", None)
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list | tuple):
            ids.update(int(v) for v in value)
    return ids


def load_model(
    model_dir: str | Path, *, device: str | None = None, threads: int | None = None
) -> tuple[Any, Any]:
    """Load a transformers folder once (tokenizer, model in eval mode).

    ``threads`` sets torch's CPU thread count. On a host whose cores are shared with other busy processes,
    1 is much faster than the default: measured on the 2-core host at load ~15, one SmolLM2 turn (100-token
    prompt suffix, 32 new tokens) took ~88 s with 2 threads spinning against each other and ~2 s with 1.

    Raises:
        BackendError: the folder is missing or torch/transformers are not installed.
    """
    path = Path(model_dir)
    if not path.is_dir():
        raise BackendError(f"model folder {path} is not a directory")
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise BackendError(
            "hf: policies need torch and transformers (pip install 'shoparena[train]')"
        ) from exc
    if threads is not None:
        torch.set_num_threads(threads)
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype="auto")
    model = model.to(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    model.eval()
    return model, tokenizer


class GeneratorChatBackend:
    """A :class:`~shoparena.llm.types.ChatBackend` over a :class:`QueuedGenerator`: renders the chat
    template, submits the prompt and parses the reply (tool calls, reasoning). Subclasses set
    ``tokenizer``, ``generator``, ``name`` and ``default_max_tokens``."""

    tokenizer: Any
    generator: QueuedGenerator
    name: str
    default_max_tokens: int

    def render(self, request: ChatRequest, *, generation_prompt: bool = True) -> list[int]:
        """The prompt token ids for a request (chat template with its tools and template kwargs)."""
        kwargs: dict[str, Any] = dict(request.extra_body.get("chat_template_kwargs") or {})
        if request.tools:
            kwargs["tools"] = request.tools
        text = self.tokenizer.apply_chat_template(
            request.messages, tokenize=False, add_generation_prompt=generation_prompt, **kwargs
        )
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def history_len(self, request: ChatRequest, prompt: list[int]) -> int:
        """How many leading tokens of ``prompt`` are the conversation, not the generation prompt: the next
        turn of the episode must repeat them (see :class:`~shoparena.eval.prefix_cache.KVEntry`)."""
        return common_prefix(self.render(request, generation_prompt=False), prompt, len(prompt))

    def release(self, session: str) -> None:
        """Forget what the engine kept of an episode (called when the episode ends)."""
        release = getattr(self.generator, "release", None)
        if release is not None:
            release(session)

    def _keeps(self, request: ChatRequest) -> bool:
        """Whether the engine keeps this request's episode between turns (then it needs the history)."""
        store = getattr(self.generator, "store", None)
        return request.session is not None and store is not None and store.enabled

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Generate one assistant turn (blocks until its batch is done)."""
        with self.generator.arriving():  # until submitted: the worker holds its batch open for it
            prompt = self.render(request)
            max_new = request.max_tokens or self.default_max_tokens
            top_p = request.extra_body.get("top_p", 1.0)
            job = GenerationJob(
                prompt_ids=prompt,
                max_new_tokens=max_new,
                temperature=float(request.temperature or 0.0),
                top_p=float(top_p if top_p is not None else 1.0),
                stop=tuple(request.stop or ()),
                session=request.session,
                history_len=self.history_len(request, prompt) if self._keeps(request) else None,
            )
            future = self.generator.submit(job)
        new, text = future.result(timeout=request.timeout_s)
        parsed = parse_generated_text(text, parse_tools=bool(request.tools), split_reasoning=True)
        usage = Usage(
            prompt_tokens=len(prompt),
            completion_tokens=len(new),
            prefilled_tokens=job.prefilled if job.prefilled is not None else len(prompt),
            prefix_miss=job.miss,
        )
        return parsed.model_copy(
            update={
                "usage": usage,
                "model": request.model or self.name,
                "finish_reason": "length" if len(new) >= max_new else parsed.finish_reason,
                "raw": {"text": text},
            }
        )


class BatchedTransformersBackend(GeneratorChatBackend):
    """A chat backend whose concurrent requests are generated together (see :class:`BatchedGenerator`).

    The model loads in the constructor (once, before any request), never lazily from a request thread.

    Args:
        model_dir: A transformers folder (config, weights, tokenizer with a chat template).
        max_batch: Most sequences per generate() call.
        default_max_tokens: New-token cap when a request gives none.
        device: ``cpu``/``cuda``; None picks CUDA when available.
        seed: Sampling seed.
        threads: torch intra-op threads while the backend is open (process-wide; the previous count is
            restored on close); None leaves torch's setting alone.
        prefix_cache: Keep the shared prefix and each episode's cache between turns (False: compute every
            prompt whole, ``--no-prefix-cache``).
        model, tokenizer: Preloaded objects (skip loading).
    """

    def __init__(
        self,
        model_dir: str | Path,
        *,
        max_batch: int = 8,
        default_max_tokens: int = 512,
        device: str | None = None,
        seed: int = 0,
        threads: int | None = None,
        prefix_cache: bool = True,
        model: Any = None,
        tokenizer: Any = None,
    ) -> None:
        self.model_dir = Path(model_dir)
        self._restore_threads: int | None = None
        if threads is not None:
            import torch

            if threads < 1:
                raise ValueError(f"BatchedTransformersBackend.threads must be >= 1, got {threads}")
            self._restore_threads = torch.get_num_threads()
            torch.set_num_threads(threads)
        if model is None or tokenizer is None:
            model, tokenizer = load_model(self.model_dir, device=device)
        self.tokenizer = tokenizer
        self.default_max_tokens = default_max_tokens
        self.generator = BatchedGenerator(
            model, tokenizer, max_batch=max_batch, seed=seed, prefix_cache=prefix_cache
        )
        self.name = self.model_dir.name

    def __repr__(self) -> str:
        return f"BatchedTransformersBackend(model_dir={str(self.model_dir)!r})"

    def close(self) -> None:
        self.generator.close()
        if self._restore_threads is not None:
            import torch

            torch.set_num_threads(self._restore_threads)
            self._restore_threads = None


__all__ = [
    "BatchStats",
    "BatchedGenerator",
    "BatchedTransformersBackend",
    "GenerationJob",
    "GeneratorChatBackend",
    "QueuedGenerator",
    "draft_tokens",
    "load_model",
]
