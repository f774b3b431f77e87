"""Leak clusters: normalisation, MinHash LSH near-duplicates, gt/shop edges, union-find, the cluster CLI."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
import typer
from _leak_helpers import (
    SHARED_SUITES,
    SN15_ROWS,
    make_problem,
    numbering_variant,
    qid,
    random_bank,
    random_query,
    reworded,
    tiny_catalog,
    whitespace_variant,
)
from typer.testing import CliRunner

from shoparena.records.problem import Intent
from shoparena.search import build_index
from shoparena.suites.clusters import (
    NEAR_DUP_THRESHOLD,
    ClusterReport,
    UnionFind,
    build_clusters,
    jaccard,
    load_problem_files,
    normalize_query,
    shingles,
    similar_pairs,
)

needs_shared = pytest.mark.skipif(not SHARED_SUITES, reason="shared data not present")


# ---------------------------------------------------------------------------------------------- normalising


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Find:\n1. red shoe\n2. blue hat", "Find: 1. red shoe 2. blue hat"),
        ("Find: (1) red shoe; (2) blue hat", "Find:\n1) red shoe\n2) blue hat"),
        ("Find:\n- red shoe\n* blue hat", "find red   shoe blue hat"),
        ("Budget `104`, exceeds `139`.\n3. It", "budget 104, exceeds 139. 3. it"),
        ("ＦＵＬＬ width", "full width"),
    ],
)
def test_whitespace_and_numbering_variants_normalise_equal(a: str, b: str) -> None:
    assert normalize_query(a) == normalize_query(b)


def test_numbers_that_are_not_list_markers_are_kept() -> None:
    assert "139" in normalize_query("It is valid only when the total exceeds `139`.\n3. It provides")
    assert normalize_query("exceeds `67`.\n3. It").split()[:2] == ["exceeds", "67"]
    assert normalize_query("exceeds 67.\n- It") == normalize_query("exceeds `67`.\n3. It")
    assert normalize_query("with a cap of `28`.").endswith("cap 28")
    assert normalize_query("size 42 shoes") != normalize_query("size 43 shoes")
    assert normalize_query("price 10 to 20 PHP") != normalize_query("price 10 to 30 PHP")
    assert normalize_query("a 1.5 l kettle") != normalize_query("a 1.7 l kettle")


@pytest.mark.skipif(not SN15_ROWS.exists(), reason="shared data not present")
def test_released_sn15_whitespace_pair_is_one_text() -> None:
    rows = [json.loads(line) for line in SN15_ROWS.read_text(encoding="utf-8").splitlines() if line]
    users = [next(m["content"] for m in r["messages"] if m["role"] == "user") for r in rows]
    newline = [u for u in users if "\n1. " in u]
    flat = [u for u in users if "rules: 1. " in u]
    assert newline and flat and newline[0] != flat[0]
    assert normalize_query(newline[0]) == normalize_query(flat[0])
    pairs = similar_pairs(users)
    assert any({users[p.i], users[p.j]} == {newline[0], flat[0]} and p.similarity == 1.0 for p in pairs)


def test_shingles_and_jaccard() -> None:
    assert shingles("a b c") == frozenset({"a b", "b c"})
    assert shingles("solo") == frozenset({"solo"})
    assert shingles("") == frozenset()
    assert jaccard(frozenset({"x"}), frozenset({"x", "y"})) == 0.5
    assert jaccard(frozenset(), frozenset()) == 1.0


# ---------------------------------------------------------------------------------------------- near-dups


def _brute(texts: list[str], threshold: float) -> set[tuple[int, int]]:
    sets = [shingles(normalize_query(t)) for t in texts]
    return {
        (i, j)
        for i, j in itertools.combinations(range(len(texts)), 2)
        if normalize_query(texts[i]) and jaccard(sets[i], sets[j]) >= threshold
    }


def test_lsh_pairs_equal_brute_force_on_random_texts() -> None:
    import random

    rng = random.Random(5)
    base = [random_query(rng) for _ in range(60)]
    texts = base + [whitespace_variant(q) for q in base[:10]] + [reworded(q) for q in base[10:20]]
    got = {(p.i, p.j) for p in similar_pairs(texts)}
    assert got == _brute(texts, NEAR_DUP_THRESHOLD)
    assert all(p.similarity >= NEAR_DUP_THRESHOLD for p in similar_pairs(texts))


@pytest.fixture(scope="module")
def shared_problems():
    problems, _ = load_problem_files(SHARED_SUITES)
    unique: dict[str, object] = {}
    for p in problems:
        unique.setdefault(p.query, p)
    return list(unique.values())


@needs_shared
def test_near_dup_does_not_merge_distinct_shared_problems(shared_problems) -> None:
    """Measured bound: distinct upstream queries (LLM-written, templated voucher tails) stay apart."""
    queries = [p.query for p in shared_problems]
    pairs = similar_pairs(queries)
    # Identical normalised texts would be duplicates, not distinct problems; there are none upstream.
    assert len({normalize_query(q) for q in queries}) == len(queries)
    # Bound: at most 1 % of the distinct problems in a near-dup pair (measured: 0; max similarity 0.52).
    in_pairs = {i for p in pairs for i in (p.i, p.j)}
    assert len(in_pairs) <= 0.01 * len(queries)
    loose = similar_pairs(queries, threshold=0.5)
    assert loose, "the measurement behind the threshold saw pairs at 0.5; the loose run should too"
    assert max(p.similarity for p in loose) < NEAR_DUP_THRESHOLD


@needs_shared
def test_near_dup_catches_planted_variants_of_shared_queries(shared_problems) -> None:
    queries = [p.query for p in shared_problems]
    n = len(queries)
    variants = {
        "whitespace": [whitespace_variant(q) for q in queries],
        "numbering": [numbering_variant(q) for q in queries],
        "reworded": [reworded(q) for q in queries],
    }
    recall: dict[str, float] = {}
    for name, planted in variants.items():
        pairs = {(p.i, p.j) for p in similar_pairs(queries + planted) if p.j >= n}
        found = sum(1 for i in range(n) if (i, n + i) in pairs)
        recall[name] = found / n
    assert recall["whitespace"] == 1.0 and recall["numbering"] == 1.0, recall
    assert recall["reworded"] >= 0.85, recall  # opener swap + one dropped word (measured 0.90)


# ---------------------------------------------------------------------------------------------- clustering


def test_union_find_merges_transitively() -> None:
    uf = UnionFind("abcde")
    assert uf.union("a", "b") and uf.union("c", "b") and not uf.union("a", "c")
    assert uf.groups() == [["a", "b", "c"], ["d"], ["e"]]


def test_gt_shop_and_near_dup_edges() -> None:
    p = [
        make_problem("a", "red running shoes for men size 42 with free shipping", Intent.PRODUCT, ["1"]),
        make_problem("b", "steel water bottle one litre for the gym and hiking", Intent.PRODUCT, ["1"]),
        make_problem("c", "Find a shop: (1) yoga mat (2) dumbbell set", Intent.SHOP, ["2", "3"]),
        make_problem(
            "d", "a shop selling rice cookers and kettles and kitchen scales", Intent.SHOP, ["4", "5"]
        ),
        make_problem(
            "e",
            "platform voucher basket wooden toys puzzle board",
            Intent.VOUCHER,
            ["6"],
            voucher_type="platform",
        ),
        make_problem("f", "Find a shop:\n1) yoga mat\n2) dumbbell set", Intent.SHOP, ["7", "8"]),
    ]
    shop_of = {"2": "S1", "3": "S1", "4": "S1", "5": "S9", "6": "S1", "7": "S2", "8": "S2"}
    report = build_clusters(p, shop_of=shop_of.get)
    reasons = {(e.a, e.b): e.reason for e in report.edges}
    assert reasons[("a", "b")] == "gt"
    assert reasons[("c", "d")] == "shop"  # two shop baskets in shop S1
    assert reasons[("c", "f")] == "near_dup"  # numbering variant
    # a platform-voucher basket's shop is chance, not a shared answer: no shop edge to e
    assert not any("e" in (e.a, e.b) for e in report.edges)
    assert report.assignment["a"] == report.assignment["b"]
    assert len({report.assignment[k] for k in "cdf"}) == 1
    assert report.stats.edges_by_reason == {"gt": 1, "near_dup": 1, "shop": 1}
    assert report.shop_links == "mapping" and not report.notes

    without = build_clusters(p)
    assert "shop" not in without.stats.edges_by_reason
    assert without.assignment["c"] != without.assignment["d"]
    assert any("shop links skipped" in note for note in without.notes)


def test_cluster_ids_do_not_depend_on_input_order() -> None:
    bank = random_bank(3, 40)
    one = build_clusters(bank.problems, shop_of=bank.shop_of.get)
    two = build_clusters(list(reversed(bank.problems)), shop_of=bank.shop_of.get)
    assert one.assignment == two.assignment
    members = one.members_of()
    for cid, ids in members.items():
        assert all(one.assignment[i] == cid for i in ids)
    assert sum(len(v) for v in members.values()) == len(bank.problems)


def test_same_problem_in_two_files_is_one_node() -> None:
    a = make_problem("x", "a blue kite with a long tail for kids", Intent.PRODUCT, ["1"])
    b = make_problem("x", "a blue kite with a long tail for kids", Intent.PRODUCT, ["1"])
    report = build_clusters([a, b])
    assert report.stats.problems == 1 and report.stats.clusters == 1


# ---------------------------------------------------------------------------------------------- CLI


def test_cli_cluster_with_and_without_index(app: typer.Typer, tmp_path: Path) -> None:
    from shoparena.suites.loaders import write_oro_suite

    bank = random_bank(11, 30, shops=8)
    suite = tmp_path / "bank.json"
    write_oro_suite(bank.problems, suite)
    catalog = tiny_catalog(tmp_path / "documents.jsonl", bank.shop_of)
    build_index(catalog, tmp_path / "index", progress=False)

    # write_oro_suite writes no ids for problems without one, so the file's ids are the query hashes
    ids = {p.problem_id: qid(p.query) for p in bank.problems}
    out = tmp_path / "plain.json"
    result = CliRunner().invoke(app, ["suite", "cluster", str(suite), "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    plain = ClusterReport.model_validate_json(out.read_text())
    assert plain.shop_links == "none" and "shop links skipped" in result.output
    assert set(plain.assignment) == set(ids.values())

    out2 = tmp_path / "indexed.json"
    result = CliRunner().invoke(
        app, ["suite", "cluster", str(suite), "--out", str(out2), "--index", str(tmp_path / "index")]
    )
    assert result.exit_code == 0, result.output
    indexed = ClusterReport.model_validate_json(out2.read_text())
    assert indexed.shop_links == "index" and indexed.stats.edges_by_reason.get("shop", 0) > 0
    # shop links only ever merge clusters
    assert indexed.stats.clusters < plain.stats.clusters
    for a, b in bank.planted_near_dups:
        assert indexed.assignment[ids[a]] == indexed.assignment[ids[b]]
        assert plain.assignment[ids[a]] == plain.assignment[ids[b]]

    out3 = tmp_path / "catalog.json"
    result = CliRunner().invoke(
        app, ["suite", "cluster", str(suite), "--out", str(out3), "--catalog", str(catalog)]
    )
    assert result.exit_code == 0, result.output
    assert ClusterReport.model_validate_json(out3.read_text()).assignment == indexed.assignment
