"""Partitions by whole leak clusters: invariants over random banks, balance, determinism, rotation, CLI."""

from __future__ import annotations

import json
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import pytest
import typer
from _leak_helpers import SHARED_SUITES, balanced_singletons, random_bank
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from shoparena.jsonl import sha256_file
from shoparena.suites.clusters import ClusterReport
from shoparena.suites.loaders import load_suite, write_oro_suite
from shoparena.suites.partition import (
    PartitionError,
    PartitionParams,
    ReserveExhaustedError,
    balanced_quota,
    partition_bank,
    pool_overlaps,
    read_manifest,
    rotate_public,
)

FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _pool_of(manifest) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, pool in manifest.pools.items():
        for pid in pool.problem_ids:
            assert pid not in out, f"{pid} in {out.get(pid)} and {name}"
            out[pid] = name
    return out


def _check_invariants(bank, manifest, out: Path, params: PartitionParams) -> None:
    report = ClusterReport.model_validate_json((out / "clusters.json").read_bytes())
    pool_of = _pool_of(manifest)
    # every problem in exactly one pool
    assert set(pool_of) == {p.problem_id for p in bank.problems}
    # no cluster in two pools
    assert pool_overlaps(manifest, report) == {}
    # checked against the raw links, independently of the cluster report
    by_gt: dict[str, set[str]] = defaultdict(set)
    by_shop: dict[str, set[str]] = defaultdict(set)
    for p in bank.problems:
        for g in p.gt_ids:
            by_gt[g].add(pool_of[p.problem_id])
        basket = p.intent.value == "shop" or (p.voucher is not None and p.voucher.voucher_type == "shop")
        if basket:
            for g in p.gt_ids:
                by_shop[bank.shop_of[g]].add(pool_of[p.problem_id])
    assert all(len(pools) == 1 for pools in by_gt.values()), "a GT product id in two pools"
    assert all(len(pools) == 1 for pools in by_shop.values()), "a shop basket's shop in two pools"
    for a, b in bank.planted_near_dups:
        assert pool_of[a] == pool_of[b], "a planted near-duplicate crossed pools"

    # sizes: never above the request; a shortfall only when no unused cluster would have fitted
    def sizes_in(pool: str) -> list[int]:
        ids = set(manifest.pools[pool].cluster_ids)
        return [c.size for c in report.clusters if c.cluster_id in ids]

    for pool in manifest.pools.values():
        if pool.requested is None:
            continue
        assert pool.problems <= pool.requested
        gap = pool.requested - pool.problems
        assert pool.shortfall == gap
        # clusters never used were candidates when the pool was filled: train for the first pools, what is
        # left of the reserve for rotated public versions
        rotated = pool.version is not None and pool.version > params.public_versions
        leftovers = sizes_in("public_reserve" if rotated else "train")
        if pool.kind == "reserve":  # the reserve only takes clusters that fit a public suite
            leftovers = [size for size in leftovers if size <= params.public_size]
        assert gap == 0 or all(size > gap for size in leftovers)
    publics = [manifest.pools[n] for n in manifest.public_versions]
    assert len(publics) == params.public_versions + len(manifest.rotations)
    assert all(p.problems <= params.public_size for p in publics)
    # files match the manifest and the public files hide the answers
    for pool in manifest.pools.values():
        full = json.loads((out / pool.files["full"].path).read_bytes())
        public = json.loads((out / pool.files["public"].path).read_bytes())
        assert [r["problem_id"] for r in full] == [r["problem_id"] for r in public] == pool.problem_ids
        assert all("reward" in r for r in full)
        assert not any({"reward", "voucher", "reward_title_embeddings"} & set(r) for r in public)
        for ref in pool.files.values():
            assert sha256_file(out / ref.path) == ref.sha256


@FAST
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(5, 90),
    gt_share=st.sampled_from([0.0, 0.05, 0.3]),
    shops=st.sampled_from([3, 30, 400]),
    near_dups=st.integers(0, 6),
    public_size=st.integers(1, 12),
    public_versions=st.integers(0, 3),
    hidden=st.integers(0, 20),
    heldout=st.one_of(st.none(), st.integers(0, 20)),
    part_seed=st.integers(0, 3),
)
def test_partition_invariants_on_random_banks(
    seed, n, gt_share, shops, near_dups, public_size, public_versions, hidden, heldout, part_seed
) -> None:
    bank = random_bank(seed, n, gt_share=gt_share, near_dups=near_dups, shops=shops)
    params = PartitionParams(
        seed=part_seed,
        public_size=public_size,
        public_versions=public_versions,
        hidden=hidden,
        heldout=heldout,
    )
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        manifest = partition_bank(bank.problems, out, params=params, shop_of=bank.shop_of.get)
        _check_invariants(bank, manifest, out, params)


@FAST
@given(seed=st.integers(0, 10_000), n=st.integers(10, 80), public_size=st.integers(1, 10))
def test_rotation_never_reuses_and_ends_exhausted(seed, n, public_size) -> None:
    bank = random_bank(seed, n, gt_share=0.05, shops=400)
    params = PartitionParams(seed=seed, public_size=public_size, public_versions=1, reserve=3 * public_size)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        manifest = partition_bank(bank.problems, out, params=params, shop_of=bank.shop_of.get)
        reserve_ids = set(manifest.pools["public_reserve"].problem_ids)
        for _ in range(n + 2):
            try:
                manifest = rotate_public(out)
            except ReserveExhaustedError:
                break
        else:
            pytest.fail("rotation never reported an exhausted reserve")
        assert manifest.pools["public_reserve"].problems < public_size
        seen: set[str] = set()
        for name in manifest.public_versions:
            ids = set(manifest.pools[name].problem_ids)
            assert not ids & seen, f"{name} reuses problems"
            seen |= ids
        rotated = seen - set(manifest.pools["public_v1"].problem_ids)
        assert rotated <= reserve_ids
        assert len(manifest.rotations) == len(manifest.public_versions) - 1
        _check_invariants(bank, manifest, out, params)


def test_public_suites_are_balanced_like_oro(tmp_path: Path) -> None:
    problems = balanced_singletons(per_cell=12)
    params = PartitionParams(seed=4, public_size=30, public_versions=2, heldout=0)
    manifest = partition_bank(problems, tmp_path, params=params)
    for name in ("public_v1", "public_v2"):
        pool = manifest.pools[name]
        assert pool.by_category == {"Product": 10, "Shop": 10, "Voucher": 10}
        for cat in ("Product", "Shop", "Voucher"):
            counts = sorted(pool.by_category_difficulty[f"{cat}/{d}"] for d in ("easy", "medium", "hard"))
            assert counts == [3, 3, 4]  # ORO v1: 3 easy, 3 medium, 4 hard


def test_balanced_quota_respects_scarce_supply() -> None:
    supply = {("Product", "easy"): 50, ("Shop", "easy"): 50, ("Voucher", "easy"): 2, ("Voucher", "hard"): 1}
    quota = balanced_quota(30, supply)
    assert quota[("Voucher", "easy")] == 2 and quota[("Voucher", "hard")] == 1
    assert sum(quota.values()) == 30
    assert abs(quota[("Product", "easy")] - quota[("Shop", "easy")]) <= 1


def test_partition_is_deterministic_for_a_seed(tmp_path: Path) -> None:
    bank = random_bank(21, 120, gt_share=0.05, shops=300)
    params = PartitionParams(seed=9, public_size=12, public_versions=2, hidden=15, heldout=15)
    one = partition_bank(bank.problems, tmp_path / "a", params=params, shop_of=bank.shop_of.get)
    two = partition_bank(
        list(reversed(bank.problems)), tmp_path / "b", params=params, shop_of=bank.shop_of.get
    )
    assert {k: v.files for k, v in one.pools.items()} == {k: v.files for k, v in two.pools.items()}
    other = partition_bank(
        bank.problems, tmp_path / "c", params=params.model_copy(update={"seed": 10}), shop_of=bank.shop_of.get
    )
    assert other.pools["public_v1"].problem_ids != one.pools["public_v1"].problem_ids


def test_rotate_refuses_an_edited_pool(tmp_path: Path) -> None:
    partition_bank(balanced_singletons(4), tmp_path, params=PartitionParams(public_size=6, reserve=12))
    reserve = tmp_path / "public_reserve.full.json"
    reserve.write_text(reserve.read_text() + " ")
    with pytest.raises(PartitionError, match="sha256"):
        rotate_public(tmp_path)
    with pytest.raises(PartitionError, match="no partition manifest"):
        rotate_public(tmp_path / "nowhere")


# ---------------------------------------------------------------------------------------------- CLI


def test_cli_partition_rotate_and_exhaustion(app: typer.Typer, tmp_path: Path) -> None:
    bank_file = tmp_path / "bank.json"
    write_oro_suite(balanced_singletons(per_cell=4), bank_file)
    out = tmp_path / "pools"
    args = ["suite", "partition", "--bank", str(bank_file), "--out", str(out), "--public-size", "9"]
    args += ["--public-versions", "1", "--reserve", "18", "--hidden", "5", "--heldout", "5", "--seed", "3"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "public_v1" in result.output and "shop links skipped" in result.output
    manifest = read_manifest(out)
    assert manifest.bank[0].sha256 == sha256_file(bank_file) and manifest.bank[0].problems == 36
    assert manifest.pools["public_v1"].problems == 9 and manifest.pools["heldout"].problems == 5

    again = CliRunner().invoke(app, args)
    assert again.exit_code == 2 and "pass --restart" in again.output
    forced = CliRunner().invoke(app, [*args, "--force"])  # the deprecated alias still works, and says so
    assert forced.exit_code == 0 and "--force is deprecated" in forced.stderr and "--restart" in forced.stderr

    for version in (2, 3):
        result = CliRunner().invoke(app, ["suite", "rotate", "--dir", str(out), "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["public_versions"][-1] == f"public_v{version}"
    result = CliRunner().invoke(app, ["suite", "rotate", "--dir", str(out)])
    assert result.exit_code == 1 and "exhausted" in result.output

    loaded, summary = load_suite(out / "public_v3.full.json")
    assert summary.quarantined == 0 and len(loaded) == 9
    assert all(p.source.problem_id_given for p in loaded)


@pytest.mark.skipif(not SHARED_SUITES, reason="shared data not present")
def test_partition_of_shared_suites_keeps_oro_leaks_together(tmp_path: Path) -> None:
    """ORO suites repeat SB problems verbatim and share GT products with them: they must stay together."""
    from shoparena.suites.clusters import load_problem_files

    problems, inputs = load_problem_files(SHARED_SUITES)
    params = PartitionParams(seed=1, public_size=30, public_versions=1, hidden=50)
    manifest = partition_bank(problems, tmp_path, params=params, bank_files=inputs)
    assert manifest.duplicate_ids_dropped == len(problems) - manifest.bank_problems > 0
    report = ClusterReport.model_validate_json((tmp_path / "clusters.json").read_bytes())
    assert pool_overlaps(manifest, report) == {}
    pool_of = _pool_of(manifest)
    gt_pools: dict[str, set[str]] = defaultdict(set)
    for p in problems:
        for g in p.gt_ids:
            gt_pools[g].add(pool_of[p.problem_id])
    assert all(len(v) == 1 for v in gt_pools.values())
    assert Counter(manifest.pools["public_v1"].by_category) == Counter(Product=10, Shop=10, Voucher=10)


def test_cli_refuses_sizes_that_leave_the_held_out_pool_empty(app: typer.Typer, tmp_path: Path) -> None:
    """A 12-problem bank with --heldout 10 and the default public suite (30) and reserve (30): refused,
    nothing written, the sizes named; with room for some held-out problems but not all, a warning names the
    pool."""
    bank_file = tmp_path / "bank.json"
    write_oro_suite(balanced_singletons(per_cell=2)[:12], bank_file)
    out = tmp_path / "pools"
    base = ["suite", "partition", "--bank", str(bank_file), "--out", str(out)]
    refused = CliRunner().invoke(app, [*base, "--heldout", "10"])
    assert refused.exit_code == 2 and "held-out pool would be empty" in refused.stderr
    assert "the bank has 12 problems" in refused.stderr
    assert "public 30 x 1 + reserve 30 = 60" in refused.stderr
    assert not out.exists()
    short = CliRunner().invoke(app, [*base, "--heldout", "10", "--public-size", "4", "--reserve", "0"])
    assert short.exit_code == 0, short.output
    assert "warning: pool heldout got 8 of 10 problems (heldout: 10 requested, at most 8 left" in short.stderr


def test_size_shortfalls_follow_the_filling_order() -> None:
    from shoparena.suites.partition import PartitionParams, size_shortfalls

    params = PartitionParams(public_size=30, public_versions=1, heldout=10)
    assert [(s.pool, s.requested, s.available) for s in size_shortfalls(12, params)] == [
        ("public_v1", 30, 12), ("public_reserve", 30, 0), ("heldout", 10, 0),
    ]  # fmt: skip
    assert size_shortfalls(100, params) == []


def test_every_pool_file_carries_the_banks_web_pages(tmp_path: Path) -> None:
    from shoparena.env.knowledge import knowledge_path_for
    from shoparena.suites.clusters import ClusterInput

    problems = balanced_singletons(4)
    banks = [tmp_path / "bank-a.json", tmp_path / "bank-b.json"]
    pages = [
        b'{"url":"u1","title":"A (company)","content":"Brand: A."}',
        b'{"url":"u2","title":"B","content":"x"}\n',
    ]
    for bank, text in zip(banks, pages, strict=True):
        write_oro_suite(problems, bank)
        knowledge_path_for(bank).write_bytes(text)
    inputs = [ClusterInput(path=str(b), problems=len(problems)) for b in banks]
    out = tmp_path / "parts"
    manifest = partition_bank(
        problems, out, params=PartitionParams(public_size=6, reserve=12), bank_files=inputs
    )
    both = pages[0] + b"\n" + pages[1]  # one page a line, whether or not a bank's file ended its last line
    assert manifest.knowledge_file is not None and (out / manifest.knowledge_file.path).read_bytes() == both
    for pool in manifest.pools.values():
        for ref in pool.files.values():
            assert knowledge_path_for(out / ref.path).read_bytes() == both, ref.path
    rotated = rotate_public(out)
    assert knowledge_path_for(out / rotated.pools[rotated.public_versions[-1]].files["full"].path).is_file()
    # A bank without pages gives pools without pages (no stale sidecar from an earlier partition).
    knowledge_path_for(banks[0]).unlink()
    knowledge_path_for(banks[1]).unlink()
    bare = partition_bank(problems, out, params=PartitionParams(public_size=6, reserve=12), bank_files=inputs)
    assert bare.knowledge_file is None and not (out / "knowledge.jsonl").exists()
    assert not knowledge_path_for(out / bare.pools["heldout"].files["full"].path).exists()
