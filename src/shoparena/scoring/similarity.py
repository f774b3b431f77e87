"""Pluggable title similarity (environment spec §9).

Upstream compares titles by Qwen3-Embedding-0.6B cosine. That model may be unavailable offline, so the scorer
takes a :class:`TitleSimilarity` backend. Every backend returns 1.0 for identical strings; thresholds are
per backend and per profile (:meth:`TitleSimilarity.threshold`), and only the reference embedding
model's scores are comparable with upstream numbers (:attr:`TitleSimilarity.comparable`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

#: The upstream model; an embedding backend loaded from a folder of this name is labelled comparable.
REFERENCE_MODEL_NAME = "Qwen3-Embedding-0.6B"

#: Upstream thresholds, calibrated for the reference model only (spec §8.1).
REFERENCE_THRESHOLDS: dict[str, float] = {"shoppingbench": 0.5, "strict": 0.7, "web": 0.8}

#: Lexical thresholds from ``shoparena.scoring.calibration`` on the shared-data titles (see docs/scoring.md).
LEXICAL_THRESHOLDS: dict[str, float] = {"shoppingbench": 0.85, "strict": 0.9, "web": 1.0}


@runtime_checkable
class TitleSimilarity(Protocol):
    """A title similarity backend: a score in [0, 1] (cosine for embeddings), 1.0 for identical strings."""

    name: str
    version: str
    comparable: bool

    def similarity(self, a: str, b: str) -> float:
        """Similarity of a product title ``a`` and a reward title ``b``."""
        ...

    def batch(
        self,
        pairs: Sequence[tuple[str, str]],
        *,
        reference_vectors: Mapping[str, Sequence[float]] | None = None,
    ) -> list[float]:
        """Similarities of many (product title, reward title) pairs.

        ``reference_vectors`` maps reward titles to precomputed reference-model vectors (ORO v3
        ``reward_title_embeddings``); backends that do not embed ignore it.
        """
        ...

    def threshold(self, key: str) -> float:
        """The hit threshold for ``key`` in {"shoppingbench", "strict", "web"}."""
        ...


class ExactSimilarity:
    """1.0 for identical strings, else 0.0: a deterministic floor for tests and audits."""

    name = "exact"
    version = "1"
    comparable = False

    def similarity(self, a: str, b: str) -> float:
        return 1.0 if a == b else 0.0

    def batch(
        self,
        pairs: Sequence[tuple[str, str]],
        *,
        reference_vectors: Mapping[str, Sequence[float]] | None = None,
    ) -> list[float]:
        return [1.0 if a == b else 0.0 for a, b in pairs]

    def threshold(self, key: str) -> float:
        return 1.0


class LexicalSimilarity:
    """Fast, offline, deterministic: rapidfuzz token-set ratio of case-folded, punctuation-free titles.

    Token-set separated rewrites from real near-miss siblings best of the measures tried (token-sort, plain
    ratio, char-3-gram cosine); it scores a title whose words are a subset of the other's as 1.0. Calibration
    numbers are in docs/scoring.md.
    """

    name = "lexical"
    comparable = False

    def __init__(self, thresholds: Mapping[str, float] | None = None) -> None:
        from rapidfuzz import __version__ as rf_version
        from rapidfuzz import fuzz, utils

        self._ratio = fuzz.token_set_ratio
        self._process = utils.default_process
        self.version = f"token_set_ratio/rapidfuzz-{rf_version}"
        self._thresholds = dict(LEXICAL_THRESHOLDS if thresholds is None else thresholds)

    def similarity(self, a: str, b: str) -> float:
        if a == b:
            return 1.0
        return self._ratio(a, b, processor=self._process) / 100.0

    def batch(
        self,
        pairs: Sequence[tuple[str, str]],
        *,
        reference_vectors: Mapping[str, Sequence[float]] | None = None,
    ) -> list[float]:
        ratio, process = self._ratio, self._process
        return [1.0 if a == b else ratio(a, b, processor=process) / 100.0 for a, b in pairs]

    def threshold(self, key: str) -> float:
        return self._thresholds[key]


class Encoder(Protocol):
    """What the embedding backend needs from a model: ``encode(list[str]) -> array (n, d)``."""

    def encode(self, sentences: list[str], **kwargs: Any) -> Any: ...


class EmbeddingSimilarity:
    """Cosine of sentence-transformers embeddings (float32, no instruction prompt), the upstream reference.

    The model is loaded lazily from a local folder and never downloaded. Reward titles use the suite's
    precomputed ``reward_title_embeddings`` when given; product titles are always encoded. Vectors are cached.

    Args:
        model_path: A local sentence-transformers model folder.
        encoder: An already-built encoder (tests pass a tiny fake); overrides ``model_path``.
        thresholds: Override the per-profile thresholds (default: upstream's 0.5 / 0.7 / 0.8).
    """

    name = "embedding"

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        encoder: Encoder | None = None,
        thresholds: Mapping[str, float] | None = None,
    ) -> None:
        if encoder is None and model_path is None:
            raise ValueError("EmbeddingSimilarity needs a local model_path or an encoder")
        self._model_path = Path(model_path) if model_path is not None else None
        self._encoder = encoder
        label = self._model_path.name if self._model_path else type(encoder).__name__
        self.version = label
        self.comparable = label.lower() == REFERENCE_MODEL_NAME.lower()
        self._thresholds = dict(REFERENCE_THRESHOLDS if thresholds is None else thresholds)
        self._cache: dict[str, np.ndarray] = {}

    def _model(self) -> Encoder:
        if self._encoder is None:
            assert self._model_path is not None
            if not self._model_path.is_dir():
                raise FileNotFoundError(
                    f"embedding model folder {self._model_path} does not exist (models are never downloaded)"
                )
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:  # never fall back silently (spec §9)
                raise RuntimeError(
                    "the embedding backend needs sentence-transformers (or use --similarity lexical)"
                ) from exc
            self._encoder = SentenceTransformer(
                str(self._model_path), local_files_only=True, model_kwargs={"torch_dtype": "float32"}
            )
        return self._encoder

    def _vectors(self, texts: Sequence[str]) -> list[np.ndarray]:
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if todo:
            encoded = np.asarray(self._model().encode(list(todo)), dtype=np.float32)
            for text, vec in zip(todo, encoded, strict=True):
                self._cache[text] = vec
        return [self._cache[t] for t in texts]

    @staticmethod
    def _cosine(u: np.ndarray, v: np.ndarray) -> float:
        denom = float(np.linalg.norm(u)) * float(np.linalg.norm(v))
        return float(np.dot(u, v)) / denom if denom > 0 and math.isfinite(denom) else 0.0

    def similarity(self, a: str, b: str) -> float:
        return self.batch([(a, b)])[0]

    def batch(
        self,
        pairs: Sequence[tuple[str, str]],
        *,
        reference_vectors: Mapping[str, Sequence[float]] | None = None,
    ) -> list[float]:
        refs = reference_vectors or {}
        need = [a for a, b in pairs if a != b] + [b for a, b in pairs if a != b and b not in refs]
        self._vectors(need)
        out: list[float] = []
        for a, b in pairs:
            if a == b:
                out.append(1.0)
                continue
            vb = np.asarray(refs[b], dtype=np.float32) if b in refs else self._cache[b]
            out.append(self._cosine(self._cache[a], vb))
        return out

    def threshold(self, key: str) -> float:
        return self._thresholds[key]


def get_similarity(
    name: str, *, model_path: str | Path | None = None, encoder: Encoder | None = None
) -> TitleSimilarity:
    """Build a backend by name: ``exact``, ``lexical`` or ``embedding`` (needs a model path or encoder)."""
    if name == "exact":
        return ExactSimilarity()
    if name == "lexical":
        return LexicalSimilarity()
    if name == "embedding":
        return EmbeddingSimilarity(model_path, encoder=encoder)
    raise ValueError(f"unknown similarity backend {name!r} (exact, lexical, embedding)")
