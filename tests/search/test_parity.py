"""Scores follow Lucene's BM25 formula, and bm25s reads our index and ranks like our engine."""

from __future__ import annotations

import math
import random
from collections import Counter
from pathlib import Path

import bm25s
import numpy as np
import pytest

from conftest import make_product, write_catalog
from shoparena.records.catalog import build_contents
from shoparena.search import SearchIndex, build_index
from shoparena.search.analysis import LuceneEnglishAnalyzer
from shoparena.search.bm25 import lossy_length

WORDS = [f"w{i}" for i in range(120)] + ["shoe", "shoes", "running", "red", "blue", "kids", "the", "of"]


@pytest.fixture(scope="module")
def random_catalog(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list, SearchIndex]:
    rng = random.Random(5)
    products = []
    for i in range(1200):
        # Zipf-ish word choice and long titles, so lengths pass 24 and the lossy norm matters.
        n = rng.choice([1, 2, 3, 5, 8, 13, 30, 60])
        title = " ".join(WORDS[min(int(rng.paretovariate(0.8)) - 1, len(WORDS) - 1)] for _ in range(n))
        sku = {"1": {"color_family": rng.choice(["red", "blue", "black"])}} if i % 3 == 0 else None
        service = tuple(x for x in ("official", "COD") if rng.random() < 0.5)
        products.append(make_product(str(10_000 + i), str(i % 40), title, 10.0 + i, sku=sku, service=service))
    root = tmp_path_factory.mktemp("parity")
    write_catalog(root / "c.jsonl", products)
    build_index(root / "c.jsonl", root / "index", progress=False)
    return root / "index", products, SearchIndex.open(root / "index")


def test_scores_follow_lucene_formula(random_catalog) -> None:
    _, products, index = random_catalog
    analyzer = LuceneEnglishAnalyzer()
    docs_terms = [analyzer.analyze(build_contents(p)) for p in products]
    n = sum(1 for t in docs_terms if t)
    avgdl = sum(len(t) for t in docs_terms) / n
    df = Counter(term for terms in docs_terms for term in set(terms))
    for query in ["w0", "w3 shoes", "running red w7 w7", "w1 w2 w50 kids"]:
        q_terms = analyzer.analyze(query)
        expected = {}
        for d, terms in enumerate(docs_terms):
            tf = Counter(terms)
            dl = float(lossy_length(len(terms)))
            score = 0.0
            for term in q_terms:  # repeated query terms count repeatedly, as Pyserini's boost does
                if tf[term]:
                    idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                    score += idf * tf[term] / (tf[term] + 0.9 * (1 - 0.4 + 0.4 * dl / avgdl))
            if score:
                expected[d] = score
        got_docs, got_scores = index.search(query, k=len(products))
        assert set(got_docs.tolist()) == set(expected)
        for d, s in zip(got_docs.tolist(), got_scores.tolist(), strict=True):
            assert s == pytest.approx(expected[d], rel=1e-5)
        # Relevance order: score desc, then product_id asc (Pyserini's tie order).
        ids = [products[d].product_id for d in got_docs.tolist()]
        keys = list(zip((-got_scores).tolist(), ids, strict=True))
        assert keys == sorted(keys)


def test_lossy_norm_changes_scores_of_long_documents(random_catalog) -> None:
    _, products, _ = random_catalog
    lengths = [len(LuceneEnglishAnalyzer().analyze(build_contents(p))) for p in products]
    assert max(lengths) > 40  # the fixture really has long documents
    assert any(int(lossy_length(x)) < x for x in lengths)


def test_bm25s_loads_index_and_agrees(random_catalog) -> None:
    index_dir, _, index = random_catalog
    retriever = bm25s.BM25.load(index_dir, mmap=True)
    assert retriever.k1 == 0.9 and retriever.b == 0.4
    analyzer = LuceneEnglishAnalyzer()
    rng = random.Random(9)
    for _ in range(40):
        query = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5)))
        terms = [t for t in analyzer.analyze(query) if t in retriever.vocab_dict]
        if not terms:
            continue
        k = 20
        their_docs, their_scores = retriever.retrieve([terms], k=k, show_progress=False)
        our_docs, our_scores = index.search(query, k=k)
        theirs = their_scores[0][their_scores[0] > 0]
        np.testing.assert_allclose(our_scores[: len(theirs)], theirs, rtol=1e-6)
        # Same documents, except where a score tie straddles the cut.
        cut = our_scores[-1] if len(our_scores) == k else -1.0
        strict_ours = {int(d) for d, s in zip(our_docs, our_scores, strict=True) if s > cut}
        strict_theirs = {
            int(d) for d, s in zip(their_docs[0], their_scores[0], strict=True) if s > cut and s > 0
        }
        assert strict_ours == strict_theirs


def test_vocab_and_terms_blob_agree(random_catalog) -> None:
    index_dir, _, index = random_catalog
    retriever = bm25s.BM25.load(index_dir, mmap=True)
    for term, tid in list(retriever.vocab_dict.items())[:50]:
        assert index._terms.lookup(term) == tid
    assert index._terms.lookup("nonexistentterm") is None
    assert len(retriever.vocab_dict) == len(index._terms)


@pytest.mark.parametrize("block", [8, 1024])
@pytest.mark.parametrize("strategy", ["auto", "lookup", "dense"])
@pytest.mark.parametrize("retrieve_k", [10_000, 60, 7])
def test_pruned_retrieval_equals_exhaustive(
    random_catalog, retrieve_k: int, strategy: str, block: int
) -> None:
    index_dir, _, _ = random_catalog
    fast = SearchIndex.open(index_dir, retrieve_k=retrieve_k)
    fast._strategy = strategy  # score candidates by posting-list lookups, the dense buffer, or either
    fast._dense_block = block  # small blocks: the dense window's block maxima select few documents
    exact = SearchIndex.open(index_dir, retrieve_k=retrieve_k, exact=True)
    rng = random.Random(retrieve_k)
    services = ["", "official", "COD", "official,COD"]
    checked = 0
    for _ in range(150):
        query = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6)))
        price = rng.choice([None, f"{rng.randint(10, 600)}-", f"-{rng.randint(10, 1200)}", "100-400"])
        shop = rng.choice([None, None, None, str(rng.randrange(40))])
        sort = rng.choice([None, "priceasc", "order"])
        service = rng.choice(services)
        got = fast.find_window(query, shop, price, sort, service)
        want = exact.find_window(query, shop, price, sort, service)
        assert got.tolist() == want.tolist(), (query, price, shop, sort, service)
        checked += len(want) > 0
    assert checked > 50  # most cases have results, so the comparison means something


def test_lookup_scores_are_bit_identical_to_the_accumulator(random_catalog) -> None:
    from shoparena.search.retrieval import _Scorer

    _, products, index = random_catalog
    rng = random.Random(3)
    for _ in range(30):
        query = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6)))
        spans = index._spans(query)
        if len(spans) < 2:
            continue
        docs = np.unique(np.array([rng.randrange(len(products)) for _ in range(200)], dtype=np.int32))
        lookup = _Scorer(index, spans)
        lookup.mode = "lookup"
        dense = _Scorer(index, spans)
        dense.mode = "dense"
        try:
            assert lookup.scores(docs).tobytes() == dense.scores(docs).tobytes()
        finally:
            lookup.close()
            dense.close()
        assert not index._accumulator().any()  # the thread's buffer is left clean


def _floors(index, seed: int, queries: int):
    """(term spans rarest first, all hits, their scores, a floor among the top 60) of random queries."""
    rng = random.Random(seed)
    for _ in range(queries):
        query = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6)))
        spans = index._spans(query)
        if not spans:
            continue
        docs, scores = index.search(query, k=len(index))
        floor = float(scores[min(len(scores) - 1, rng.randrange(1, 60))])
        yield sorted(spans, key=lambda sp: sp[2] - sp[1]), docs, scores, floor


def test_rivals_hold_every_document_scoring_the_floor(random_catalog) -> None:
    _, _, index = random_catalog
    for order, docs, scores, floor in _floors(index, seed=4, queries=30):
        rivals = index._rivals(order, floor)
        assert set(docs[scores >= floor].tolist()) <= set(rivals.tolist())
        assert np.all(np.diff(rivals) > 0)


def test_rival_count_bounds_the_documents_scoring_the_floor(random_catalog) -> None:
    _, _, index = random_catalog
    checked = 0
    for order, _, scores, floor in _floors(index, seed=6, queries=40):
        reaching = int(np.count_nonzero(scores >= floor))
        assert index._rival_bound(order, floor, 10**9) >= len(index._rivals(order, floor)) >= reaching
        checked += 1
    assert checked > 20


@pytest.fixture(scope="module")
def tied_catalog(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    """Many identical titles (exact score ties) under product ids whose byte order is not index order."""
    rng = random.Random(8)
    ids = rng.sample(range(1, 10**6), 900)
    products = []
    for i, pid in enumerate(ids):
        title = " ".join(rng.choice(WORDS[:12]) for _ in range(rng.choice([1, 2, 3, 30])))
        service = ("official",) if i % 2 else ()
        products.append(make_product(str(pid), str(i % 9), title, float(i % 50), service=service))
    root = tmp_path_factory.mktemp("tied")
    write_catalog(root / "c.jsonl", products)
    build_index(root / "c.jsonl", root / "index", progress=False)
    return root / "index", products


def test_ties_rank_by_product_id_bytes(tied_catalog) -> None:
    index_dir, products = tied_catalog
    index = SearchIndex.open(index_dir)
    ties = not_index_order = 0
    for query in ["w0", "w1 w2", "w3 w3 w4", "w0 w5 w6 w7"]:
        docs, scores = index.search(query, k=len(products))
        ids = [products[d].product_id.encode() for d in docs.tolist()]
        keys = list(zip((-scores).tolist(), ids, strict=True))
        assert keys == sorted(keys)
        ties += len(scores) - len(set(scores.tolist()))
        for value in set(scores.tolist()):
            group = docs[scores == value].tolist()
            not_index_order += group != sorted(group)
    assert ties > 100 and not_index_order > 0  # ties exist, and id order is not index order there


@pytest.mark.parametrize("block", [8, 1024])
@pytest.mark.parametrize("strategy", ["auto", "lookup", "dense"])
@pytest.mark.parametrize("retrieve_k", [10_000, 40])
def test_pruned_equals_exhaustive_with_ties(tied_catalog, retrieve_k: int, strategy: str, block: int) -> None:
    index_dir, _ = tied_catalog
    fast = SearchIndex.open(index_dir, retrieve_k=retrieve_k)
    fast._strategy = strategy
    fast._dense_block = block
    exact = SearchIndex.open(index_dir, retrieve_k=retrieve_k, exact=True)
    rng = random.Random(retrieve_k)
    for _ in range(80):
        query = " ".join(rng.choice(WORDS[:12]) for _ in range(rng.randint(2, 5)))
        price = rng.choice([None, "10-30", "-20"])
        service = rng.choice(["", "official"])
        got = fast.find_window(query, None, price, None, service)
        want = exact.find_window(query, None, price, None, service)
        assert got.tolist() == want.tolist(), (query, price, service)
