"""Title similarity backends (environment spec §9) and the lexical calibration."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from scoring_helpers import SHARED_SUITES, problem, product, recommending

from shoparena.scoring import (
    DictLookup,
    EmbeddingSimilarity,
    ExactSimilarity,
    LexicalSimilarity,
    get_similarity,
    score_trajectory,
)
from shoparena.scoring.calibration import build_pairs, calibrate
from shoparena.scoring.similarity import LEXICAL_THRESHOLDS
from shoparena.suites.loaders import titles_from_suites


class FakeEncoder:
    """Bag-of-letters vectors; records what it was asked to encode."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, sentences: list[str], **_: object) -> np.ndarray:
        self.seen.extend(sentences)
        out = np.zeros((len(sentences), 26), dtype=np.float32)
        for i, s in enumerate(sentences):
            for ch in s.lower():
                if "a" <= ch <= "z":
                    out[i, ord(ch) - 97] += 1
        return out + 1e-3


@pytest.mark.parametrize(
    "backend", [ExactSimilarity(), LexicalSimilarity(), EmbeddingSimilarity(encoder=FakeEncoder())]
)
def test_identical_strings_score_one(backend) -> None:
    assert backend.similarity("Nike Air 90 shoes", "Nike Air 90 shoes") == 1.0
    assert backend.batch([("x y", "x y"), ("", "")]) == [1.0, 1.0]


def test_exact_and_lexical_values() -> None:
    assert ExactSimilarity().similarity("a", "A") == 0.0
    lex = LexicalSimilarity()
    assert lex.similarity("Red Cotton Shirt", "shirt cotton red") == 1.0  # case and order free
    assert lex.similarity("Red Cotton Shirt", "Rice cooker 1.8L") < 0.5
    assert lex.threshold("strict") == LEXICAL_THRESHOLDS["strict"]
    assert not lex.comparable and lex.version.startswith("token_set_ratio")


def test_embedding_uses_precomputed_reward_vectors() -> None:
    enc = FakeEncoder()
    sim = EmbeddingSimilarity(encoder=enc)
    ref = {"reward title": [1.0] + [0.0] * 25}
    score = sim.batch([("aaaa", "reward title")], reference_vectors=ref)[0]
    assert score == pytest.approx(1.0, abs=1e-3)  # 'a' axis only, like the reference vector
    assert enc.seen == ["aaaa"]  # the reward side was never encoded
    sim.batch([("aaaa", "other title")])
    assert enc.seen == ["aaaa", "other title"]  # cached product title, new reward title encoded


def test_embedding_through_the_scorer_with_suite_vectors() -> None:
    enc = FakeEncoder()
    prob = problem([{"product_id": "1", "title": ["GT"]}], reward_title_embeddings={"GT": [1.0] + [0.0] * 25})
    lookup = DictLookup([product("2", title="aaa")])
    v = score_trajectory(
        prob, recommending("2"), lookup, scoring_profile="strict", similarity=EmbeddingSimilarity(encoder=enc)
    )
    assert v.success and "GT" not in enc.seen and v.title_threshold == 0.7


def test_embedding_never_downloads(tmp_path) -> None:
    with pytest.raises(ValueError, match="model_path or an encoder"):
        EmbeddingSimilarity()
    backend = EmbeddingSimilarity(tmp_path / "Qwen3-Embedding-0.6B")
    assert backend.comparable  # the reference model by name
    with pytest.raises(FileNotFoundError, match="never downloaded"):
        backend.similarity("a", "b")


@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is not None, reason="installed")
def test_embedding_without_library_fails_loudly(tmp_path) -> None:
    with pytest.raises(RuntimeError, match="sentence-transformers"):
        EmbeddingSimilarity(tmp_path).similarity("a", "b")


def test_get_similarity() -> None:
    assert get_similarity("exact").name == "exact"
    with pytest.raises(ValueError, match="unknown similarity backend"):
        get_similarity("bogus")


def test_lexical_calibration_separates_rewrites_from_siblings() -> None:
    titles = titles_from_suites(SHARED_SUITES)[:300]
    positives, siblings, edits = build_pairs(titles, seed=3)
    assert positives and siblings and edits
    lex = LexicalSimilarity()
    res = calibrate(lex.version, lex.similarity, positives, siblings)
    assert res.auc > 0.85
    tpr, _ = res.rates["shoppingbench"]
    assert tpr >= 0.975
    assert res.thresholds["shoppingbench"] <= res.thresholds["strict"] <= res.thresholds["web"]
