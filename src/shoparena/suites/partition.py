"""Partition a problem bank into leak-free pools by whole leak clusters, and rotate the public suites.

Pools, filled in this order from one seeded order of the clusters:

1. ``public_v1`` .. ``public_vK``: public qualifying suites of ``public_size`` problems (ORO: 30, 10 per
   category), balanced across categories and, within each, difficulties as well as the bank allows;
2. ``public_reserve``: problems held back for later public versions (``shoparena suite rotate``);
3. ``heldout``: held-out evaluation, stratified by category and difficulty in proportion to what is left;
4. ``hidden``: the hidden race bank, stratified the same way;
5. ``train``: everything else (giant clusters always end up here: they fit nowhere else).

A cluster is never split, so no near-duplicate, GT product or (with a catalog) shop basket crosses pools.
Every pool is written twice: ``<pool>.full.json`` for scorers and ``<pool>.public.json`` for agents (no
reward, voucher or reward_title_embeddings), next to ``clusters.json`` and ``manifest.json``.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from shoparena.env.knowledge import knowledge_path_for, place_pages
from shoparena.jsonl import sha256_file
from shoparena.records.problem import Problem
from shoparena.runs.manifest import MANIFEST_NAME, FileRef, ManifestError, RunManifest
from shoparena.runs.manifest import read_manifest as read_run_manifest
from shoparena.runs.manifest import write_manifest as write_run_manifest
from shoparena.suites.clusters import (
    NEAR_DUP_THRESHOLD,
    ClusterInput,
    ClusterReport,
    ShopLinks,
    build_clusters,
)
from shoparena.suites.loaders import load_suite, write_oro_suite

CLUSTERS_NAME = "clusters.json"
#: The bank's web_search pages in a partition directory; each pool file gets a copy as its sidecar.
KNOWLEDGE_NAME = "knowledge.jsonl"
RESERVE_POOL = "public_reserve"
#: Held-out share used when no size is given (distillation spec §4: "about 15 %").
DEFAULT_HELDOUT_FRACTION = 0.15

_CATEGORY_ORDER = ("Product", "Shop", "Voucher", "Web")
# Round-robin order for handing out difficulty slots: the remainder of an uneven split goes to the harder
# levels first (ORO v1 has 3 easy, 3 medium, 4 hard per category).
_DIFFICULTY_FILL_ORDER = ("hard", "medium", "easy")
_DIFFICULTY_SORT = {"easy": 0, "medium": 1, "hard": 2}

Cell = tuple[str, str]


class PartitionError(ValueError):
    """A partition or rotation that cannot be done (bad sizes, exhausted reserve, tampered files)."""


class ReserveExhaustedError(PartitionError):
    """The public reserve holds fewer problems than one public version needs."""


class BankFile(FileRef):
    """One input file of the bank."""

    problems: int
    quarantined: int = 0


class PoolSummary(BaseModel):
    """One pool: what was asked, what it holds and its files."""

    model_config = ConfigDict(extra="forbid")

    name: str
    kind: str = Field(description="public, reserve, heldout, hidden or train")
    version: int | None = Field(default=None, description="Public suites: 1, 2, ...")
    requested: int | None = Field(default=None, description="Requested problems (None: the rest).")
    problems: int
    clusters: int
    shortfall: int = 0
    by_intent: dict[str, int] = Field(default_factory=dict)
    by_category: dict[str, int] = Field(default_factory=dict)
    by_difficulty: dict[str, int] = Field(default_factory=dict)
    by_category_difficulty: dict[str, int] = Field(default_factory=dict)
    files: dict[str, FileRef] = Field(default_factory=dict, description="'full' and 'public' files.")
    problem_ids: list[str] = Field(default_factory=list)
    cluster_ids: list[str] = Field(default_factory=list)


class PartitionParams(BaseModel):
    """The requested sizes and the seed."""

    model_config = ConfigDict(extra="forbid")

    seed: int = 0
    public_size: int = Field(default=30, ge=1)
    public_versions: int = Field(default=1, ge=0)
    reserve: int | None = Field(
        default=None, ge=0, description="Problems kept for rotation; default public_size x public_versions."
    )
    heldout: int | None = Field(default=None, ge=0, description="Default: 15 % of the bank.")
    hidden: int = Field(default=0, ge=0)
    near_dup_threshold: float = NEAR_DUP_THRESHOLD


class ClusterCounts(BaseModel):
    """Cluster statistics carried in the manifest."""

    model_config = ConfigDict(extra="forbid")

    total: int
    singletons: int
    largest: int
    size_histogram: dict[str, int]
    edges_by_reason: dict[str, int]
    shop_links: str
    notes: list[str] = Field(default_factory=list)


class RotationEvent(BaseModel):
    """One ``rotate`` call."""

    model_config = ConfigDict(extra="forbid")

    version: int
    problems: int
    reserve_left: int


class PartitionManifest(RunManifest):
    """``manifest.json`` of a partition directory."""

    kind: str = "partition"
    seed: int
    params: PartitionParams
    bank: list[BankFile] = Field(default_factory=list)
    bank_problems: int
    duplicate_ids_dropped: int = 0
    clusters: ClusterCounts
    clusters_file: FileRef
    pools: dict[str, PoolSummary]
    public_versions: list[str] = Field(default_factory=list, description="Public pool names, oldest first.")
    rotations: list[RotationEvent] = Field(default_factory=list)
    knowledge_file: FileRef | None = Field(
        default=None,
        description="The bank files' web_search pages, also written beside every pool file as its "
        "``<pool file>.knowledge.jsonl`` sidecar (None: the bank had no pages).",
    )


# ---------------------------------------------------------------------------------------------- planning


@dataclass(frozen=True, slots=True)
class _Unit:
    """One cluster as a unit of assignment."""

    cid: str
    members: tuple[str, ...]
    cells: Mapping[Cell, int]
    order_key: str

    @property
    def size(self) -> int:
        return len(self.members)

    def categories(self) -> Counter[str]:
        out: Counter[str] = Counter()
        for (cat, _), n in self.cells.items():
            out[cat] += n
        return out


def _cell(problem: Problem) -> Cell:
    return problem.category_label, problem.difficulty or "-"


def _order_key(seed: int, cid: str) -> str:
    # A keyed hash, not random.shuffle: the place of a cluster depends only on the seed and its id, so adding
    # problems to the bank does not reshuffle everything else.
    return hashlib.sha256(f"{seed}:{cid}".encode()).hexdigest()


def _units(problems: Mapping[str, Problem], assignment: Mapping[str, str], seed: int) -> list[_Unit]:
    members: dict[str, list[str]] = {}
    for pid in problems:
        cid = assignment.get(pid)
        if cid is None:
            raise PartitionError(f"problem {pid}: no cluster in the cluster report (field assignment)")
        members.setdefault(cid, []).append(pid)
    units = [
        _Unit(
            cid=cid,
            members=tuple(sorted(ids)),
            cells=dict(Counter(_cell(problems[p]) for p in ids)),
            order_key=_order_key(seed, cid),
        )
        for cid, ids in members.items()
    ]
    units.sort(key=lambda u: (u.order_key, u.cid))
    return units


def _rank(values: Iterable[str], preferred: Sequence[str]) -> list[str]:
    known = [v for v in preferred if v in set(values)]
    return known + sorted(set(values) - set(known))


def _waterfill(total: int, caps: Mapping[str, int], order: Sequence[str]) -> dict[str, int]:
    """Spread ``total`` evenly over ``order`` one by one, never past a bin's cap."""
    alloc = dict.fromkeys(order, 0)
    left = total
    while left > 0:
        progressed = False
        for key in order:
            if left == 0:
                break
            if alloc[key] < caps.get(key, 0):
                alloc[key] += 1
                left -= 1
                progressed = True
        if not progressed:
            break
    return alloc


def balanced_quota(size: int, supply: Mapping[Cell, int]) -> dict[Cell, int]:
    """Equal shares per category, then equal shares per difficulty within each, limited by ``supply``.

    >>> q = balanced_quota(30, {(c, d): 50 for c in ("Product", "Shop", "Voucher") for d in ("easy", "hard")})
    >>> q[("Product", "easy")], q[("Product", "hard")], sum(q.values())
    (5, 5, 30)
    """
    cat_supply: Counter[str] = Counter()
    for (cat, _), n in supply.items():
        cat_supply[cat] += n
    cats = _rank(cat_supply, _CATEGORY_ORDER)
    cat_quota = _waterfill(size, cat_supply, cats)
    quota: dict[Cell, int] = {}
    for cat in cats:
        diffs = {d: n for (c, d), n in supply.items() if c == cat}
        fill = _rank(diffs, _DIFFICULTY_FILL_ORDER)
        fill = [d for d in fill if d != "-"] + (["-"] if "-" in fill else [])
        for diff, n in _waterfill(cat_quota[cat], diffs, fill).items():
            quota[(cat, diff)] = n
    return quota


def proportional_quota(size: int, supply: Mapping[Cell, int]) -> dict[Cell, int]:
    """Shares of ``size`` proportional to ``supply`` (largest remainder), never past the supply.

    >>> proportional_quota(10, {("Product", "easy"): 30, ("Shop", "easy"): 10})
    {('Product', 'easy'): 8, ('Shop', 'easy'): 2}
    """
    total = sum(supply.values())
    if total == 0 or size <= 0:
        return dict.fromkeys(supply, 0)
    if size >= total:
        return dict(supply)
    cells = sorted(supply)
    exact = {c: size * supply[c] / total for c in cells}
    quota = {c: int(exact[c]) for c in cells}
    left = size - sum(quota.values())
    for c in sorted(cells, key=lambda c: (-(exact[c] - quota[c]), c))[:left]:
        quota[c] += 1
    return quota


def select_units(units: Sequence[_Unit], size: int, quota: Mapping[Cell, int]) -> list[_Unit]:
    """Pick whole clusters in ``units`` order: within cell quotas, then category quotas, then any that fit.

    Clusters holding a scarce cell (one whose whole supply is needed to meet its quota) are offered first, so
    that plentiful cells do not use up the room a scarce problem's cluster needs.
    """
    cat_quota: Counter[str] = Counter()
    for (cat, _), n in quota.items():
        cat_quota[cat] += n
    supply = _supply(units, size)
    scarce = {cell for cell, n in quota.items() if n > 0 and supply[cell] <= n}
    first = [u for u in units if scarce.intersection(u.cells)]
    ordered = first + [u for u in units if not scarce.intersection(u.cells)]
    chosen: list[_Unit] = []
    taken: set[str] = set()
    cells: Counter[Cell] = Counter()
    cats: Counter[str] = Counter()
    total = 0
    for level in ("cell", "category", "total"):
        for unit in ordered if level == "cell" else units:
            if total >= size:
                break
            if unit.cid in taken or total + unit.size > size:
                continue
            if level == "cell" and any(cells[k] + n > quota.get(k, 0) for k, n in unit.cells.items()):
                continue
            if level == "category" and any(
                cats[k] + n > cat_quota.get(k, 0) for k, n in unit.categories().items()
            ):
                continue
            chosen.append(unit)
            taken.add(unit.cid)
            total += unit.size
            cells.update(unit.cells)
            cats.update(unit.categories())
    return chosen


def _supply(units: Iterable[_Unit], max_size: int) -> Counter[Cell]:
    out: Counter[Cell] = Counter()
    for unit in units:
        if unit.size <= max_size:  # a cluster larger than the pool can never be used: not supply
            out.update(unit.cells)
    return out


@dataclass(slots=True)
class PoolPlan:
    """A planned pool: its name, kind, requested size and chosen clusters."""

    name: str
    kind: str
    requested: int | None
    units: list[_Unit]
    version: int | None = None

    @property
    def problem_ids(self) -> list[str]:
        return sorted(pid for u in self.units for pid in u.members)


class PoolShortfall(BaseModel):
    """A pool whose requested size the bank cannot meet, counted before clustering (whole clusters can only
    make it worse)."""

    model_config = ConfigDict(extra="forbid")

    pool: str
    requested: int
    available: int

    def line(self) -> str:
        return f"{self.pool}: {self.requested} requested, at most {max(self.available, 0)} left in the bank"


def size_shortfalls(bank_problems: int, params: PartitionParams) -> list[PoolShortfall]:
    """The pools (in the order they are filled: public versions, reserve, held-out, hidden) that ``params``
    asks more problems of than a bank of ``bank_problems`` has left for them."""
    reserve = params.reserve if params.reserve is not None else params.public_size * params.public_versions
    heldout = (
        params.heldout if params.heldout is not None else round(DEFAULT_HELDOUT_FRACTION * bank_problems)
    )
    wanted = [(f"public_v{v}", params.public_size) for v in range(1, params.public_versions + 1)]
    wanted += [(RESERVE_POOL, reserve), ("heldout", heldout), ("hidden", params.hidden)]
    left, short = bank_problems, []
    for pool, size in wanted:
        if size > left:
            short.append(PoolShortfall(pool=pool, requested=size, available=left))
        left = max(0, left - size)
    return short


def plan_partition(
    problems: Mapping[str, Problem], report: ClusterReport, params: PartitionParams
) -> list[PoolPlan]:
    """Assign every cluster of ``report`` to exactly one pool (pure: nothing is written).

    Args:
        problems: problem id -> problem (the nodes of ``report``).
        report: The cluster report of those problems.
        params: Sizes and seed.
    """
    remaining = _units(problems, report.assignment, params.seed)
    n = len(problems)
    plans: list[PoolPlan] = []

    def take(
        name: str, kind: str, size: int, quota_fn: Callable, version: int | None = None, max_unit: int = 0
    ) -> None:
        nonlocal remaining
        candidates = [u for u in remaining if not max_unit or u.size <= max_unit]
        quota = quota_fn(size, _supply(candidates, size))
        chosen = select_units(candidates, size, quota)
        picked = {u.cid for u in chosen}
        remaining = [u for u in remaining if u.cid not in picked]
        plans.append(PoolPlan(name, kind, size, chosen, version))

    for v in range(1, params.public_versions + 1):
        take(f"public_v{v}", "public", params.public_size, balanced_quota, v)
    reserve = params.reserve if params.reserve is not None else params.public_size * params.public_versions
    # The reserve only feeds public versions: a cluster larger than one of them would be stuck there.
    take(RESERVE_POOL, "reserve", reserve, balanced_quota, max_unit=params.public_size)
    heldout = params.heldout if params.heldout is not None else round(DEFAULT_HELDOUT_FRACTION * n)
    take("heldout", "heldout", heldout, proportional_quota)
    take("hidden", "hidden", params.hidden, proportional_quota)
    plans.append(PoolPlan("train", "train", None, remaining))
    return plans


# ---------------------------------------------------------------------------------------------- writing


def _suite_order(problem: Problem) -> tuple[int, str, int, str]:
    cat = problem.category_label
    rank = _CATEGORY_ORDER.index(cat) if cat in _CATEGORY_ORDER else len(_CATEGORY_ORDER)
    return rank, cat, _DIFFICULTY_SORT.get(problem.difficulty or "", 3), problem.problem_id


def _with_id(problem: Problem) -> Problem:
    # Full files must carry problem_id so scorers can join them with the public files.
    if problem.source.problem_id_given:
        return problem
    return problem.model_copy(update={"source": problem.source.model_copy(update={"problem_id_given": True})})


def _write_pool(plan: PoolPlan, problems: Mapping[str, Problem], out_dir: Path) -> PoolSummary:
    chosen = sorted((problems[pid] for pid in plan.problem_ids), key=_suite_order)
    files: dict[str, FileRef] = {}
    pages = out_dir / KNOWLEDGE_NAME
    for variant, public in (("full", False), ("public", True)):
        path = out_dir / f"{plan.name}.{variant}.json"
        write_oro_suite([_with_id(p) for p in chosen], path, public=public)
        files[variant] = FileRef(path=path.name, sha256=sha256_file(path))
        place_pages(pages, path)  # or web_search finds no brand facts wherever the pool runs
    size = len(chosen)
    return PoolSummary(
        name=plan.name,
        kind=plan.kind,
        version=plan.version,
        requested=plan.requested,
        problems=size,
        clusters=len(plan.units),
        shortfall=max(0, (plan.requested or 0) - size) if plan.requested is not None else 0,
        by_intent=dict(sorted(Counter(p.intent.value for p in chosen).items())),
        by_category=dict(sorted(Counter(p.category_label for p in chosen).items())),
        by_difficulty=dict(sorted(Counter(p.difficulty or "-" for p in chosen).items())),
        by_category_difficulty=dict(sorted(Counter("/".join(_cell(p)) for p in chosen).items())),
        files=files,
        problem_ids=[p.problem_id for p in chosen],
        cluster_ids=sorted(u.cid for u in plan.units),
    )


def _dedupe(problems: Sequence[Problem]) -> tuple[dict[str, Problem], int]:
    out: dict[str, Problem] = {}
    dropped = 0
    for problem in problems:
        if problem.problem_id in out:
            dropped += 1  # the same problem in two bank files: keep the first copy
            continue
        out[problem.problem_id] = problem
    return out, dropped


def partition_bank(
    problems: Sequence[Problem],
    out_dir: str | Path,
    *,
    params: PartitionParams | None = None,
    shop_of: Callable[[str], str | None] | None = None,
    shop_links: ShopLinks | None = None,
    bank_files: Sequence[ClusterInput] = (),
    report: ClusterReport | None = None,
) -> PartitionManifest:
    """Cluster a bank, assign whole clusters to pools and write the pool files and the manifest.

    Args:
        problems: The bank (duplicates by ``problem_id`` keep their first copy).
        out_dir: Directory to write (created).
        params: Sizes and seed (defaults: one public version of 30, a reserve of 30, 15 % held out).
        shop_of: product id -> shop id, for shop links.
        shop_links: How ``shop_of`` was obtained (for the report).
        bank_files: The files the bank came from (as read), recorded with their sha256.
        report: A cluster report of ``problems`` to reuse instead of clustering again.

    Returns:
        The manifest (also written to ``out_dir/manifest.json``).
    """
    params = params or PartitionParams()
    by_id, dropped = _dedupe(problems)
    if report is None:
        report = build_clusters(
            list(by_id.values()),
            shop_of=shop_of,
            shop_links=shop_links,
            threshold=params.near_dup_threshold,
            inputs=bank_files,
        )
    missing = sorted(set(by_id) - set(report.assignment))
    if missing:
        raise PartitionError(f"problem {missing[0]}: not in the cluster report (field assignment)")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    knowledge_file = _write_knowledge([Path(f.path) for f in bank_files], out)
    plans = plan_partition(by_id, report, params)
    pools = {plan.name: _write_pool(plan, by_id, out) for plan in plans}
    clusters_path = out / CLUSTERS_NAME
    clusters_path.write_text(report.model_dump_json(indent=1), encoding="utf-8")
    bank = [
        BankFile(path=f.path, sha256=sha256_file(f.path), problems=f.problems, quarantined=f.quarantined)
        for f in bank_files
    ]
    manifest = PartitionManifest(
        seed=params.seed,
        params=params,
        bank=bank,
        bank_problems=len(by_id),
        duplicate_ids_dropped=dropped,
        clusters=ClusterCounts(
            total=report.stats.clusters,
            singletons=report.stats.singletons,
            largest=report.stats.largest,
            size_histogram=report.stats.size_histogram,
            edges_by_reason=report.stats.edges_by_reason,
            shop_links=report.shop_links,
            notes=report.notes,
        ),
        clusters_file=FileRef(path=CLUSTERS_NAME, sha256=sha256_file(clusters_path)),
        pools=pools,
        public_versions=[p.name for p in plans if p.kind == "public"],
        knowledge_file=knowledge_file,
    )
    write_manifest(manifest, out)
    return manifest


def _write_knowledge(bank_paths: Sequence[Path], out: Path) -> FileRef | None:
    """The bank files' knowledge sidecars, one after another, as ``out/knowledge.jsonl``."""
    sidecars = [knowledge_path_for(p) for p in bank_paths if knowledge_path_for(p).is_file()]
    path = out / KNOWLEDGE_NAME
    if not sidecars:
        path.unlink(missing_ok=True)
        return None
    chunks = [s.read_bytes() for s in sidecars]
    path.write_bytes(b"".join(c if c.endswith(b"\n") or not c else c + b"\n" for c in chunks))
    return FileRef(path=KNOWLEDGE_NAME, sha256=sha256_file(path))


def write_manifest(manifest: PartitionManifest, out_dir: str | Path) -> Path:
    """Write ``manifest.json`` atomically (indent 1, keys in model order)."""
    return write_run_manifest(manifest, out_dir, indent=1)


def read_manifest(out_dir: str | Path) -> PartitionManifest:
    """Read ``manifest.json`` of a partition directory.

    Raises:
        PartitionError: when it is missing, empty, torn or not a partition manifest.
    """
    path = Path(out_dir) / MANIFEST_NAME
    if not path.is_file():
        raise PartitionError(f"{path}: no partition manifest (run `shoparena suite partition` first)")
    try:
        return read_run_manifest(path, PartitionManifest)
    except ManifestError as exc:
        raise PartitionError(f"not a partition manifest: {exc}") from None


def _check_file(out: Path, ref: FileRef) -> Path:
    path = out / ref.path
    if not path.is_file():
        raise PartitionError(f"{path}: missing (listed in the manifest)")
    if sha256_file(path) != ref.sha256:
        raise PartitionError(f"{path}: sha256 differs from the manifest; refusing to rotate an edited pool")
    return path


def rotate_public(out_dir: str | Path) -> PartitionManifest:
    """Draw the next public version from the reserve: balanced, whole clusters, never reusing a problem.

    Raises:
        ReserveExhaustedError: when the reserve holds fewer problems than a public suite needs.
        PartitionError: when the manifest is missing or a pool file differs from the manifest.
    """
    out = Path(out_dir)
    manifest = read_manifest(out)
    reserve_pool = manifest.pools.get(RESERVE_POOL)
    if reserve_pool is None:
        raise PartitionError(f"{out / MANIFEST_NAME}: pools has no {RESERVE_POOL}")
    size = manifest.params.public_size
    if reserve_pool.problems < size:
        raise ReserveExhaustedError(
            f"{RESERVE_POOL} exhausted: {reserve_pool.problems} problems left, a public version needs {size}"
        )
    reserve_path = _check_file(out, reserve_pool.files["full"])
    report = ClusterReport.model_validate_json(_check_file(out, manifest.clusters_file).read_bytes())
    loaded, _ = load_suite(reserve_path, strict=True)
    by_id = {p.problem_id: p for p in loaded}
    units = _units(by_id, report.assignment, manifest.seed)
    chosen = select_units(units, size, balanced_quota(size, _supply(units, size)))
    if not chosen:  # only clusters larger than a public suite are left (reserves written by older versions)
        raise ReserveExhaustedError(
            f"{RESERVE_POOL} exhausted: no cluster left fits a public suite of {size}"
        )
    used = {pid for name in manifest.public_versions for pid in manifest.pools[name].problem_ids}
    new_ids = {pid for u in chosen for pid in u.members}
    if new_ids & used:
        raise PartitionError(f"problem {sorted(new_ids & used)[0]}: already in a public version")
    version = len(manifest.public_versions) + 1
    name = f"public_v{version}"
    while name in manifest.pools:  # never overwrite a pool, whatever the history says
        version += 1
        name = f"public_v{version}"
    picked = {u.cid for u in chosen}
    new_pool = _write_pool(PoolPlan(name, "public", size, chosen, version), by_id, out)
    # What is left of the reserve: no size target any more, so no shortfall to report.
    left = PoolPlan(RESERVE_POOL, "reserve", None, [u for u in units if u.cid not in picked])
    new_reserve = _write_pool(left, by_id, out)
    pools = {k: v for k, v in manifest.pools.items() if k != RESERVE_POOL}
    pools[name] = new_pool
    pools[RESERVE_POOL] = new_reserve
    manifest = manifest.model_copy(
        update={
            "pools": pools,
            "public_versions": [*manifest.public_versions, name],
            "rotations": [
                *manifest.rotations,
                RotationEvent(version=version, problems=new_pool.problems, reserve_left=new_reserve.problems),
            ],
        }
    )
    write_manifest(manifest, out)
    return manifest


def pool_overlaps(manifest: PartitionManifest, report: ClusterReport) -> dict[str, list[str]]:
    """Leak check of a manifest: cluster id -> its pools, for every cluster in several (want: empty)."""
    seen: dict[str, str] = {}
    bad: dict[str, list[str]] = {}
    for name, pool in manifest.pools.items():
        for pid in pool.problem_ids:
            cid = report.assignment.get(pid, pid)
            if cid in seen and seen[cid] != name:
                bad.setdefault(cid, sorted({seen[cid], name}))
            seen.setdefault(cid, name)
    return bad


def summary_rows(manifest: PartitionManifest) -> list[list[str]]:
    """Rows for a pool table: name, problems/requested, clusters, by category, by difficulty."""
    rows = []
    for name, pool in manifest.pools.items():
        req = "rest" if pool.requested is None else str(pool.requested)
        rows.append(
            [
                name,
                f"{pool.problems}/{req}",
                str(pool.clusters),
                json.dumps(pool.by_category),
                json.dumps(pool.by_difficulty),
            ]
        )
    return rows
