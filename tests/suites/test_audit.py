"""Leak audit: planted leaks found (exit 1), clean splits pass (exit 0), every input format, shared data."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import typer
from _leak_helpers import (
    ORO_V1,
    ORO_V3,
    SB_PRODUCT,
    SB_SHOP,
    SN15_ROWS,
    balanced_singletons,
    make_problem,
    numbering_variant,
    random_bank,
    random_query,
    reworded,
    tiny_catalog,
    whitespace_variant,
    write_chat_rows,
    write_envelopes,
)
from typer.testing import CliRunner

from shoparena.records.problem import Intent
from shoparena.suites.audit import AuditInputError, AuditReport, audit_files, load_audit_items
from shoparena.suites.loaders import write_oro_suite, write_sb_jsonl
from shoparena.suites.partition import PartitionParams, partition_bank


def _audit(app: typer.Typer, a: Path, b: Path, *extra: str) -> tuple[int, AuditReport]:
    result = CliRunner().invoke(app, ["suite", "audit", str(a), str(b), "--json", *extra])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, AuditReport.model_validate_json(result.output)


@pytest.fixture
def clean_pair(tmp_path: Path) -> tuple[list, list]:
    rng = random.Random(8)
    problems = balanced_singletons(per_cell=3, seed=8)
    rng.shuffle(problems)
    return problems[:15], problems[15:]


def test_clean_split_passes(app: typer.Typer, tmp_path: Path, clean_pair) -> None:
    a, b = clean_pair
    write_oro_suite(a, tmp_path / "a.json")
    write_sb_jsonl(b, tmp_path / "b.jsonl")
    code, report = _audit(app, tmp_path / "a.json", tmp_path / "b.jsonl")
    assert code == 0 and not report.leak
    assert report.counts.straddling_clusters == 0 and report.a.items == 15 and report.b.items == 12


@pytest.mark.parametrize(
    "plant",
    ["shared_gt", "reworded", "whitespace", "numbering", "exact"],
)
def test_planted_leak_is_found(app: typer.Typer, tmp_path: Path, clean_pair, plant: str) -> None:
    a, b = clean_pair
    source = a[3]
    other_ids = [f"77{i}" for i in range(len(source.reward))]
    query = {
        "shared_gt": random_query(random.Random(99)),
        "reworded": reworded(source.query),
        "whitespace": whitespace_variant(source.query),
        "numbering": numbering_variant(source.query),
        "exact": source.query,
    }[plant]
    gt = source.gt_ids if plant == "shared_gt" else other_ids
    leaked = make_problem("leak", query, source.intent, gt, difficulty=source.difficulty)
    write_oro_suite(a, tmp_path / "a.json")
    write_oro_suite([*b, leaked], tmp_path / "b.json")
    code, report = _audit(app, tmp_path / "a.json", tmp_path / "b.json")
    assert code == 1 and report.leak
    assert len(report.straddling) == 1
    (cluster,) = report.straddling
    assert [r.query for r in cluster.b] == [" ".join(query.split())[:80]]
    expected = {
        "shared_gt": ("shared_gt", "gt"),
        "reworded": ("near_dup", "near_dup"),
        "whitespace": ("normalised", "near_dup"),
        "numbering": ("normalised", "near_dup"),
        "exact": ("exact", "near_dup"),
    }[plant]
    assert getattr(report.counts, expected[0]) == 1
    assert expected[1] in cluster.edges_by_reason


def test_leak_through_a_chain_inside_one_side(tmp_path: Path) -> None:
    """A1 shares a GT product with A2, A2's query is B1's: the cluster {A1, A2, B1} straddles."""
    rng = random.Random(3)
    q1, q2 = random_query(rng), random_query(rng)
    side_a = [
        make_problem("a1", q1, Intent.PRODUCT, ["5"]),
        make_problem("a2", q2, Intent.PRODUCT, ["5"]),
    ]
    side_b = [make_problem("b1", whitespace_variant(q2), Intent.PRODUCT, ["6"])]
    write_oro_suite(side_a, tmp_path / "a.json")
    write_oro_suite(side_b, tmp_path / "b.json")
    report = audit_files(tmp_path / "a.json", tmp_path / "b.json")
    (cluster,) = report.straddling
    assert len(cluster.a) == 2 and cluster.edges_by_reason == {"gt": 1, "near_dup": 1}


def test_shop_links_need_a_catalog(app: typer.Typer, tmp_path: Path) -> None:
    rng = random.Random(4)
    a = [make_problem("a1", random_query(rng), Intent.SHOP, ["11", "12"])]
    b = [make_problem("b1", random_query(rng), Intent.SHOP, ["21", "22"])]
    write_oro_suite(a, tmp_path / "a.json")
    write_oro_suite(b, tmp_path / "b.json")
    catalog = tiny_catalog(tmp_path / "documents.jsonl", {"11": "7", "12": "7", "21": "7", "22": "7"})
    code, report = _audit(app, tmp_path / "a.json", tmp_path / "b.json")
    assert code == 0 and any("shop links skipped" in n for n in report.notes)
    code, report = _audit(app, tmp_path / "a.json", tmp_path / "b.json", "--catalog", str(catalog))
    assert code == 1 and report.shop_links == "catalog"
    assert [k.key for k in report.shared_shops] == ["7"]


def test_corpus_rows_and_envelopes(app: typer.Typer, tmp_path: Path, clean_pair) -> None:
    a, b = clean_pair
    write_oro_suite(a, tmp_path / "suite.json", public=True)  # a public suite: queries only, no rewards
    queries = [p.query for p in b] + [whitespace_variant(a[0].query)]
    write_chat_rows(tmp_path / "rows.jsonl", queries, parts=True)
    write_envelopes(tmp_path / "out.jsonl", [p.query for p in b])
    items, summary = load_audit_items(tmp_path / "rows.jsonl")
    assert summary.format == "chat_jsonl" and [i.query for i in items] == queries
    assert load_audit_items(tmp_path / "out.jsonl")[1].format == "envelope_jsonl"

    code, report = _audit(app, tmp_path / "suite.json", tmp_path / "rows.jsonl")
    assert code == 1 and report.counts.normalised == 1 and report.counts.straddling_clusters == 1
    assert report.straddling[0].b[0].id == f"row-{len(b)}"
    code, report = _audit(app, tmp_path / "suite.json", tmp_path / "out.jsonl")
    assert code == 0, report.straddling


def test_unreadable_input_exits_2(app: typer.Typer, tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("[not json")
    (tmp_path / "other.jsonl").write_text(json.dumps({"hello": 1}) + "\n")
    result = CliRunner().invoke(
        app, ["suite", "audit", str(tmp_path / "bad.json"), str(tmp_path / "other.jsonl")]
    )
    assert result.exit_code == 2
    with pytest.raises(AuditInputError, match="no problem"):
        load_audit_items(tmp_path / "other.jsonl")


def test_partition_pools_audit_clean(app: typer.Typer, tmp_path: Path) -> None:
    bank = random_bank(17, 80, gt_share=0.2, near_dups=6, shops=500)
    params = PartitionParams(seed=2, public_size=12, public_versions=1, hidden=15, heldout=15)
    partition_bank(bank.problems, tmp_path, params=params)
    for pool in ("public_v1", "heldout", "hidden", "public_reserve"):
        code, report = _audit(app, tmp_path / f"{pool}.full.json", tmp_path / "train.full.json")
        assert code == 0, (pool, report.straddling)
    # the same pools with one planted cross-pool copy do leak
    train = json.loads((tmp_path / "train.full.json").read_text())
    heldout = json.loads((tmp_path / "heldout.full.json").read_text())
    train.append({**heldout[0], "problem_id": "copied", "query": whitespace_variant(heldout[0]["query"])})
    (tmp_path / "train2.json").write_text(json.dumps(train))
    code, _ = _audit(app, tmp_path / "heldout.full.json", tmp_path / "train2.json")
    assert code == 1


# ---------------------------------------------------------------------------------------------- shared data


needs = pytest.mark.skipif(not all(p.exists() for p in (ORO_V1, ORO_V3, SB_PRODUCT)), reason="no shared data")


@needs
def test_oro_suites_repeat_sb_problems(app: typer.Typer) -> None:
    code, report = _audit(app, SB_PRODUCT, ORO_V3)
    oro = json.loads(ORO_V3.read_text())
    sb = {json.loads(line)["query"] for line in SB_PRODUCT.read_text(encoding="utf-8").split("\n") if line}
    verbatim = sum(1 for r in oro if r["query"] in sb)
    assert verbatim > 0 and code == 1
    assert report.counts.exact == verbatim
    assert report.counts.straddling_clusters >= verbatim


@needs
def test_oro_v1_and_v3_audit_runs(app: typer.Typer) -> None:
    code, report = _audit(app, ORO_V1, ORO_V3)
    v1 = {r["query"] for r in json.loads(ORO_V1.read_text())}
    v3 = {r["query"] for r in json.loads(ORO_V3.read_text())}
    assert report.counts.exact == len(v1 & v3)
    assert code == (1 if report.straddling else 0)
    assert report.a.items == 30 and report.b.items == 30 and report.a.with_gt == 30


@pytest.mark.skipif(not (SN15_ROWS.exists() and SB_SHOP.exists()), reason="no shared data")
def test_released_corpus_rows_against_themselves_and_sb(app: typer.Typer, tmp_path: Path) -> None:
    rows = SN15_ROWS.read_text(encoding="utf-8").splitlines()
    (tmp_path / "first.jsonl").write_text(rows[1] + "\n")
    (tmp_path / "rest.jsonl").write_text("\n".join([rows[0], rows[2]]) + "\n")
    code, report = _audit(app, tmp_path / "first.jsonl", tmp_path / "rest.jsonl")
    # rows 50 and 53 of the released eval file: one voucher query, newlines vs spaces
    assert code == 1 and report.counts.normalised == 1 and report.counts.exact == 0
    code, report = _audit(app, SN15_ROWS, SB_SHOP)
    assert report.a.format == "chat_jsonl" and report.a.items == 3
