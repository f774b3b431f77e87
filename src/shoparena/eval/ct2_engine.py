"""CTranslate2 as the CPU serving engine of ``hf:`` policies (``--engine ctranslate2``).

CTranslate2 (PyPI ``ctranslate2``, no torch at inference) runs Llama and Qwen3 decoders with fused CPU
kernels, float32 or int8 weights. shoparena converts the transformers folder once (cached by the folder's
content, the weight type and the ctranslate2 version under ``~/.cache/shoparena/ct2/``), loads it in
process and closes it with the backend, so ``eval run`` and ``eval serve`` start and stop the engine
themselves; the OpenAI-compatible API stays :mod:`shoparena.eval.server`'s.

Batching: CTranslate2 has no continuous batching (a ``generate_batch`` call admits nobody once it runs), so
:class:`CT2Generator` batches what is queued, like :class:`~shoparena.eval.batching.BatchedGenerator`.
The shared system turn and tool schemas go in as CTranslate2's ``static_prompt``, whose state the engine
caches. CTranslate2 prefills only the shortest prompt suffix of a batch at once and feeds the rest of the
longer ones one decoding step at a time, so rows whose suffixes differ by more than ``max_spread`` tokens
run as separate calls instead (a first turn and a later turn of two episodes, typically).

Greedy float32 decodes the same tokens as the transformers backend on the measured prompts (tested, and
docs/benchmarks.md); ``int8`` quantises the weights and may change greedy tokens (measured there).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from pathlib import Path
from typing import Any

from shoparena.eval.batching import GenerationJob, GeneratorChatBackend, QueuedGenerator
from shoparena.jsonl import HASH_BLOCK, update_from_file
from shoparena.llm.types import BackendError

logger = logging.getLogger(__name__)

#: ``--engine`` values of ``hf:`` policies: the torch backend, CTranslate2 float32, CTranslate2 int8.
ENGINES = ("transformers", "ctranslate2", "ctranslate2-int8")

#: Files of a transformers folder that decide the converted model (weights, config, vocabulary).
_MODEL_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "generation_config.json")


def engine_compute_type(engine: str) -> str:
    """CTranslate2's ``compute_type`` of an ``--engine`` value."""
    return "int8" if engine == "ctranslate2-int8" else "float32"


def ct2_version() -> str | None:
    """The installed ctranslate2 version, None when it is not installed."""
    try:
        import ctranslate2
    except ImportError:
        return None
    return str(ctranslate2.__version__)


def _require_ct2() -> Any:
    try:
        import ctranslate2
    except ImportError:
        raise BackendError(
            "engine ctranslate2 is not installed (pip install 'shoparena[ct2]', or --engine transformers)"
        ) from None
    return ctranslate2


def model_fingerprint(model_dir: Path) -> str:
    """sha256 over the weight, config and tokenizer files of a transformers folder (names and bytes)."""
    files = sorted(
        p
        for p in model_dir.iterdir()
        if p.is_file() and (p.suffix == ".safetensors" or p.name in _MODEL_FILES)
    )
    if not any(p.suffix == ".safetensors" for p in files) or not (model_dir / "config.json").is_file():
        raise BackendError(f"model folder {model_dir}: no config.json or *.safetensors weights to convert")
    digest, buffer = hashlib.sha256(), bytearray(HASH_BLOCK)
    for path in files:
        digest.update(path.name.encode() + b"\0")
        update_from_file(digest, path, buffer)
    return digest.hexdigest()


def default_ct2_cache() -> Path:
    """``$XDG_CACHE_HOME/shoparena/ct2`` (``~/.cache/shoparena/ct2`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "shoparena" / "ct2"


def converted_model(
    model_dir: str | Path, *, compute_type: str = "float32", cache_dir: str | Path | None = None
) -> Path:
    """The CTranslate2 folder of a transformers folder, converted once and reused while its content holds.

    The key is the folder's content (:func:`model_fingerprint`), the weight type and the ctranslate2
    version; a conversion is written to a temporary folder and renamed into place, so a killed conversion
    leaves nothing that looks done.

    Raises:
        BackendError: ctranslate2 is missing, the folder is not a transformers model, or conversion failed.
    """
    ctranslate2 = _require_ct2()
    source = Path(model_dir)
    if not source.is_dir():
        raise BackendError(f"model folder {source} is not a directory")
    key = hashlib.sha256(
        f"{model_fingerprint(source)}|{compute_type}|{ctranslate2.__version__}".encode()
    ).hexdigest()[:20]
    target = Path(cache_dir) if cache_dir else default_ct2_cache()
    out = target / f"{source.resolve().name}-{compute_type}-{key}"
    if (out / "model.bin").is_file():
        return out
    target.mkdir(parents=True, exist_ok=True)
    tmp = target / f".{out.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    from ctranslate2.converters import TransformersConverter

    try:
        TransformersConverter(str(source)).convert(str(tmp), quantization=compute_type, force=True)
    except Exception as exc:  # the converter raises whatever transformers or its loaders raise
        shutil.rmtree(tmp, ignore_errors=True)
        raise BackendError(
            f"model folder {source}: ctranslate2 conversion failed: {type(exc).__name__}: {exc}"
        ) from None
    try:
        tmp.rename(out)
    except OSError:  # another process finished the same conversion first
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _common_prefix(rows: list[list[int]], limit: int) -> int:
    n = 0
    while n < limit and all(r[n] == rows[0][n] for r in rows):
        n += 1
    return n


def _spread_groups(
    jobs: list[tuple[int, GenerationJob]], suffix: dict[int, int], max_spread: int
) -> list[list[tuple[int, GenerationJob]]]:
    """Rows sorted by suffix length, cut where a row is more than ``max_spread`` longer than the group's
    shortest (CTranslate2 would feed the difference one step at a time)."""
    ordered = sorted(jobs, key=lambda item: suffix[item[0]])
    groups: list[list[tuple[int, GenerationJob]]] = []
    for item in ordered:
        if groups and suffix[item[0]] - suffix[groups[-1][0][0]] <= max_spread:
            groups[-1].append(item)
        else:
            groups.append([item])
    return groups


class CT2Generator(QueuedGenerator):
    """Generates queued prompts in batches with a ``ctranslate2.Generator`` (see the module docstring).

    Args:
        generator: A loaded ``ctranslate2.Generator``.
        tokenizer: The transformers tokenizer of the source folder (decoding, stop strings).
        vocabulary: CTranslate2's token strings by id (the converted folder's ``vocabulary.json``).
        eos_ids: Token ids that end a reply (kept in the reply, as the transformers backend does).
        max_batch: Most sequences per ``generate_batch`` call.
        gather_s: How long the worker waits for more requests after the first one arrives.
        min_prefix: Shortest shared prompt prefix worth passing as the static prompt, in tokens.
        max_spread: Most suffix-length difference within one call; None: the batch's max new tokens.
        max_static_prompts: Distinct static prompts whose state the engine may cache (memory bound).
        prefix_cache: Use a static prompt at all (False: every prompt is computed whole).
    """

    def __init__(
        self,
        generator: Any,
        tokenizer: Any,
        vocabulary: list[str],
        eos_ids: set[int],
        *,
        max_batch: int = 8,
        gather_s: float = 0.01,
        min_prefix: int = 32,
        max_spread: int | None = None,
        max_static_prompts: int = 4,
        prefix_cache: bool = True,
    ) -> None:
        super().__init__(max_batch=max_batch, gather_s=gather_s, name="ct2-generate")
        self.engine, self.tokenizer, self.vocabulary = generator, tokenizer, vocabulary
        self.eos_ids = sorted(eos_ids)
        self.min_prefix, self.max_spread = min_prefix, max_spread
        self.max_static_prompts = max_static_prompts
        self.prefix_cache = prefix_cache
        self._prefix: list[int] = []
        self._previous: list[int] = []
        self._cached: set[tuple[int, ...]] = set()
        self._thread.start()

    def _static_prefix(self, prompts: list[list[int]]) -> int:
        """Tokens every prompt shares with the remembered prefix (or, before one exists, with the previous
        prompt), leaving each row at least one token to feed."""
        limit = min(len(p) for p in prompts) - 1
        reference = self._prefix or self._previous
        shared = _common_prefix([*prompts, reference], min(limit, len(reference))) if reference else 0
        if not reference or (shared < self.min_prefix and len(prompts) > 1):
            shared = _common_prefix(prompts, limit) if len(prompts) > 1 else 0
        self._previous = prompts[-1]
        if shared < self.min_prefix:
            return 0
        self._prefix = prompts[0][:shared]
        return shared

    def _generate(self, batch: list[GenerationJob]) -> list[tuple[list[int], str]]:
        prompts = [j.prompt_ids for j in batch]
        shared = self._static_prefix(prompts) if self.prefix_cache else 0
        suffix = {row: len(p) - shared for row, p in enumerate(prompts)}
        # A static prompt cached by an earlier call is not computed again (counted whole until it is).
        cached = bool(shared) and tuple(prompts[0][:shared]) in self._cached
        for row, job in enumerate(batch):
            job.prefilled = suffix[row] if cached else len(job.prompt_ids)
        spread = self.max_spread if self.max_spread is not None else max(j.max_new_tokens for j in batch)
        new: dict[int, list[int]] = {}
        for group in _spread_groups(list(enumerate(batch)), suffix, spread):
            new.update(self._call(group, shared))
        self.stats.batches += 1
        self.stats.sequences += len(batch)
        self.stats.generated_tokens += sum(len(v) for v in new.values())
        self.stats.prompt_tokens += sum(len(p) for p in prompts)
        self.stats.prefilled_tokens += sum(suffix.values())
        self.stats.prefix_hits += 1 if shared else 0
        self.stats.max_batch_seen = max(self.stats.max_batch_seen, len(batch))
        return [(new[row], self._text(new[row], job)) for row, job in enumerate(batch)]

    def _call(self, group: list[tuple[int, GenerationJob]], shared: int) -> dict[int, list[int]]:
        """One ``generate_batch`` call; per-row token caps and stop strings end rows through the callback."""
        vocab = self.vocabulary
        jobs = [job for _, job in group]
        static = jobs[0].prompt_ids[:shared]
        key = tuple(static)
        cache_it = key in self._cached or len(self._cached) < self.max_static_prompts
        if cache_it:
            self._cached.add(key)
        tokens: list[list[int]] = [[] for _ in jobs]
        failures: list[BaseException] = []

        def on_token(step: Any) -> bool:
            # An exception escaping this callback aborts the process inside CTranslate2: keep it here,
            # stop the row, and fail the batch after the call instead.
            try:
                row, job = step.batch_id, jobs[step.batch_id]
                tokens[row].append(int(step.token_id))
                return len(tokens[row]) >= job.max_new_tokens or self._stopped(tokens[row], job)
            except BaseException as exc:
                failures.append(exc)
                return True

        head = jobs[0]
        sampled = head.temperature > 0
        options: dict[str, Any] = {
            "max_length": max(j.max_new_tokens for j in jobs),
            "end_token": self.eos_ids,
            "return_end_token": True,
            "include_prompt_in_result": False,
            "sampling_topk": 0 if sampled else 1,
            "callback": on_token,
        }
        if sampled:
            options.update(sampling_temperature=head.temperature, sampling_topp=head.top_p)
        if shared:
            options.update(static_prompt=[vocab[i] for i in static], cache_static_prompt=cache_it)
        results = self.engine.generate_batch(
            [[vocab[i] for i in j.prompt_ids[shared:]] for j in jobs], **options
        )
        if failures:
            raise failures[0]
        out: dict[int, list[int]] = {}
        for (row, job), result, streamed in zip(group, results, tokens, strict=True):
            ids = [int(t) for t in result.sequences_ids[0]]
            # The callback's stop ends the row after the token it saw; the result may hold one more.
            out[row] = streamed if len(streamed) <= len(ids) and ids[: len(streamed)] == streamed else ids
            out[row] = out[row][: job.max_new_tokens]
        return out


def _eos_ids(model_dir: Path, tokenizer: Any) -> set[int]:
    ids: set[int] = set()
    sources: list[Any] = [tokenizer.eos_token_id]
    for name in ("generation_config.json", "config.json"):
        path = model_dir / name
        if path.is_file():
            sources.append(json.loads(path.read_text(encoding="utf-8")).get("eos_token_id"))
    for value in sources:
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list):
            ids.update(int(v) for v in value)
    return ids


class CTranslate2Backend(GeneratorChatBackend):
    """A chat backend over CTranslate2 (converted on first use, loaded in the constructor).

    Args:
        model_dir: A transformers folder (config, safetensors weights, tokenizer with a chat template).
        compute_type: ``float32`` (same greedy tokens as the transformers backend) or ``int8``.
        max_batch: Most sequences per call.
        default_max_tokens: New-token cap when a request gives none.
        seed: Sampling seed (CTranslate2's random seed).
        threads: Intra-op threads of the engine; None: CTranslate2's default (its own choice of cores).
        cache_dir: Where converted folders are kept (default ``~/.cache/shoparena/ct2``).
        prefix_cache: Pass the shared prefix as the engine's cached ``static_prompt`` (False: every prompt
            is computed whole).
    """

    def __init__(
        self,
        model_dir: str | Path,
        *,
        compute_type: str = "float32",
        max_batch: int = 8,
        default_max_tokens: int = 512,
        seed: int = 0,
        threads: int | None = None,
        cache_dir: str | Path | None = None,
        prefix_cache: bool = True,
    ) -> None:
        ctranslate2 = _require_ct2()
        self.model_dir = Path(model_dir)
        self.converted = converted_model(self.model_dir, compute_type=compute_type, cache_dir=cache_dir)
        from transformers import AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(self.model_dir)
        vocabulary = json.loads((self.converted / "vocabulary.json").read_text(encoding="utf-8"))
        if len(set(vocabulary)) != len(vocabulary):
            raise BackendError(f"model folder {self.model_dir}: tokenizer vocabulary has duplicate strings")
        ctranslate2.set_random_seed(seed)
        engine = ctranslate2.Generator(
            str(self.converted),
            device="cpu",
            compute_type=compute_type,
            inter_threads=1,
            intra_threads=threads or 0,
        )
        self.compute_type = compute_type
        self.default_max_tokens = default_max_tokens
        self.generator = CT2Generator(
            engine,
            self.tokenizer,
            vocabulary,
            _eos_ids(self.model_dir, self.tokenizer),
            max_batch=max_batch,
            prefix_cache=prefix_cache,
        )
        self.name = self.model_dir.name

    def __repr__(self) -> str:
        return f"CTranslate2Backend(model_dir={str(self.model_dir)!r}, compute_type={self.compute_type!r})"

    def close(self) -> None:
        """Stop the worker and release the engine's memory."""
        self.generator.close()
        engine, self.generator.engine = self.generator.engine, None
        if engine is not None:
            engine.unload_model()
        # Drop the last reference here: left to the garbage collector (the worker thread is in a reference
        # cycle), the engine could be destroyed on one of CTranslate2's own threads, which aborts the process.
        del engine


__all__ = [
    "ENGINES",
    "CT2Generator",
    "CTranslate2Backend",
    "converted_model",
    "ct2_version",
    "engine_compute_type",
    "model_fingerprint",
]
