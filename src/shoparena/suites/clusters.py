"""Leak clusters: link problems that could leak into each other, then take connected components.

See distillation spec §4.

Three kinds of edge, merged with union-find:

* ``gt``: two problems share a ground-truth ``product_id`` in any reward slot;
* ``shop``: two *shop baskets* (Shop problems and shop-voucher problems) have GT products in one shop.
  Shop ids are not in the problem files; they come from a catalog or a search index. Platform-voucher
  baskets are left out: their products are drawn from anywhere, so a shared shop there is chance, not a
  shared answer, and it would only grow giant components;
* ``near_dup``: the queries are near-duplicates. Queries are normalised (:func:`normalize_query`), identical
  normalised texts are linked directly (similarity 1.0), and the rest go through MinHash LSH over word
  shingles; every LSH candidate is confirmed with the exact Jaccard similarity of the shingle sets.

The threshold (:data:`NEAR_DUP_THRESHOLD`) was measured on the shared upstream data; see
``docs/problem_bank.md`` ("Leak clusters, partitions, audit") for the numbers and the reasoning.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from shoparena.records.problem import Intent, Problem

#: Words per shingle. Bigrams keep some word order (bag-of-words merges "a X that comes with free delivery"
#: with "a Y that comes with free delivery" at 0.67) while tolerating one-word edits better than trigrams.
SHINGLE_SIZE = 2
#: Confirmed-near-duplicate threshold on the exact Jaccard similarity of bigram sets. Measured on the 520
#: distinct shared queries: the most similar pair of *distinct* problems scores 0.52 (p99 of the nearest-
#: neighbour similarity 0.35); whitespace/numbering variants score 1.0, and 91-99 % of light rewrites (opener
#: swapped, one word dropped, two words swapped) stay >= 0.6.
NEAR_DUP_THRESHOLD = 0.6
#: Looser threshold for the advisory "near-miss" list of audits (not a leak by itself).
NEAR_MISS_THRESHOLD = 0.4
#: MinHash permutations and LSH banding (42 bands x 3 rows = 126 of 128 permutations). With these, a pair at
#: Jaccard 0.6 becomes a candidate with probability 1 - (1 - 0.6**3)**42 > 0.9999, at 0.4 with 0.94.
NUM_PERM = 128
LSH_BANDS = 42
LSH_ROWS = 3

EdgeReason = Literal["gt", "shop", "near_dup"]
ShopLinks = Literal["index", "catalog", "mapping", "none"]

# Code-generated voucher appendix phrases (environment spec §6.3), compacted to one token each so that the
# ~40-word template does not dominate the similarity of two otherwise unrelated voucher problems.
_TEMPLATE_PHRASES: tuple[tuple[str, str], ...] = (
    ("my budget is only", "budget"),
    ("but i have a voucher with the following rules", "voucher"),
    ("the voucher applies to all products", "platformvoucher"),
    ("the voucher only applies to the products from the same shop", "shopvoucher"),
    ("it is valid only when the total price of the products exceeds", "threshold"),
    ("it provides a fixed discount of", "fixeddiscount"),
    ("it provides a percentage discount of", "percentdiscount"),
    ("with a cap of", "cap"),
)
_TEMPLATE_RE = re.compile(r"\b(" + "|".join(re.escape(p) for p, _ in _TEMPLATE_PHRASES) + r")\b")
_TEMPLATE_TOKEN = dict(_TEMPLATE_PHRASES)
_PAREN_NUMBER = re.compile(r"\(\d{1,2}\)")
_BULLET = re.compile(r"(?m)^\s*[-*•·]+(?=\s)")
# "1." / "2)" as a standalone token before a word: a list marker (or a short number ending a sentence that
# another starts). Removed before bullets, so "exceeds 67.\n- It" keeps 67 as "exceeds 67.\n3. It" does;
# "rules:\n1. The" == "rules: 1. The" and "shoe\n2. hat" == "shoe 2. hat".
_LIST_NUMBER = re.compile(r"(?<!\S)\d{1,2}[.)](?=\s+[^\W\d_])")
_NON_WORD = re.compile(r"[^\w\s]+")


def normalize_query(text: str) -> str:
    """Canonical form of a query for duplicate detection.

    NFKC, lower-case, backticks and list numbering ("1.", "2)", "(3)", bullets) removed, punctuation turned
    into spaces, whitespace collapsed, and the fixed voucher-appendix phrases compacted to single tokens.

    >>> normalize_query("Find:\\n1. A red  shoe.\\n2) Size `42`!")
    'find a red shoe size 42'
    """
    text = unicodedata.normalize("NFKC", text).lower().replace("`", "")
    text = _PAREN_NUMBER.sub(" ", text)
    text = _LIST_NUMBER.sub(" ", text)
    text = _BULLET.sub(" ", text)
    text = " ".join(_NON_WORD.sub(" ", text).split())
    return _TEMPLATE_RE.sub(lambda m: _TEMPLATE_TOKEN[m.group(1)], text)


def shingles(normalized: str, size: int = SHINGLE_SIZE) -> frozenset[str]:
    """Word shingles of an already normalised text; a text shorter than ``size`` words is one shingle."""
    words = normalized.split()
    if len(words) <= size:
        return frozenset([" ".join(words)]) if words else frozenset()
    return frozenset(" ".join(words[i : i + size]) for i in range(len(words) - size + 1))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Exact Jaccard similarity of two sets (two empty sets are identical: 1.0)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


@dataclass(frozen=True, slots=True)
class SimilarPair:
    """Two texts (by position) whose shingle sets have exact Jaccard ``similarity``."""

    i: int
    j: int
    similarity: float


def similar_pairs(
    texts: Sequence[str],
    *,
    threshold: float = NEAR_DUP_THRESHOLD,
    shingle_size: int = SHINGLE_SIZE,
    normalized: bool = False,
    expand: bool = True,
) -> list[SimilarPair]:
    """All pairs of ``texts`` with exact shingle Jaccard >= ``threshold`` (MinHash LSH for the candidates).

    Identical normalised texts are always paired (similarity 1.0) without going through LSH. Pairs come
    sorted by ``(i, j)`` with ``i < j``.

    Args:
        texts: Queries (raw, or normalised when ``normalized`` is set).
        threshold: Minimum exact Jaccard similarity to report.
        shingle_size: Words per shingle.
        normalized: The texts are already the output of :func:`normalize_query`.
        expand: Every pair; when ``False``, only enough pairs to connect the same texts: each group of
            identical normalised texts as a star from its first member, and similar groups by their first
            members (linear in the number of repeats, for corpora with many rollouts of one problem).
    """
    norms = list(texts) if normalized else [normalize_query(t) for t in texts]
    groups: dict[str, list[int]] = defaultdict(list)
    for i, text in enumerate(norms):
        if text:  # an empty query carries no evidence either way
            groups[text].append(i)
    pairs: list[SimilarPair] = []
    for members in groups.values():
        if expand:
            pairs.extend(SimilarPair(a, b, 1.0) for k, a in enumerate(members) for b in members[k + 1 :])
        else:
            pairs.extend(SimilarPair(members[0], b, 1.0) for b in members[1:])
    reps = list(groups.values()) if expand else [members[:1] for members in groups.values()]
    sets = [shingles(norms[members[0]], shingle_size) for members in reps]
    if len(reps) > 1:
        # Imported here: datasketch imports scipy (a second of CPU), which a process that only reads this
        # module's constants (a corpus build's ingest processes, through the config) never needs.
        from datasketch import MinHash, MinHashLSH

        minhashes = MinHash.bulk(
            [[s.encode("utf-8") for s in sorted(shingle_set)] for shingle_set in sets], num_perm=NUM_PERM
        )
        lsh = MinHashLSH(num_perm=NUM_PERM, params=(LSH_BANDS, LSH_ROWS))
        for r, mh in enumerate(minhashes):
            lsh.insert(r, mh)
        for r, mh in enumerate(minhashes):
            for c in lsh.query(mh):
                if c <= r:
                    continue
                sim = jaccard(sets[r], sets[c])
                if sim >= threshold:
                    pairs.extend(SimilarPair(min(a, b), max(a, b), sim) for a in reps[r] for b in reps[c])
    pairs.sort(key=lambda p: (p.i, p.j))
    return pairs


class UnionFind:
    """Disjoint sets over hashable keys, with path halving and union by size."""

    def __init__(self, keys: Iterable[str] = ()) -> None:
        self._parent: dict[str, str] = {}
        self._size: dict[str, int] = {}
        for key in keys:
            self.add(key)

    def add(self, key: str) -> None:
        if key not in self._parent:
            self._parent[key] = key
            self._size[key] = 1

    def find(self, key: str) -> str:
        parent = self._parent
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    def union(self, a: str, b: str) -> bool:
        """Merge the sets of ``a`` and ``b``; ``True`` when they were separate."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        if self._size[ra] < self._size[rb]:
            ra, rb = rb, ra
        self._parent[rb] = ra
        self._size[ra] += self._size[rb]
        return True

    def groups(self) -> list[list[str]]:
        """The sets, each sorted, ordered by their first key."""
        out: dict[str, list[str]] = defaultdict(list)
        for key in self._parent:
            out[self.find(key)].append(key)
        return sorted((sorted(v) for v in out.values()), key=lambda g: g[0])


# ---------------------------------------------------------------------------------------------- records


class ClusterEdge(BaseModel):
    """Why two nodes are in one cluster."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    a: str
    b: str
    reason: EdgeReason
    key: str | None = Field(default=None, description="The shared product id (gt) or shop id (shop).")
    similarity: float | None = Field(default=None, description="Exact shingle Jaccard (near_dup).")


class Cluster(BaseModel):
    """One connected component."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cluster_id: str = Field(description="'c' + sha256 of the sorted member ids, first 12 hex digits.")
    size: int
    members: list[str]
    by_category: dict[str, int] = Field(default_factory=dict)


class ClusterParams(BaseModel):
    """The settings a cluster report was made with."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    near_dup_threshold: float = NEAR_DUP_THRESHOLD
    shingle_size: int = SHINGLE_SIZE
    num_perm: int = NUM_PERM
    lsh_bands: int = LSH_BANDS
    lsh_rows: int = LSH_ROWS


class ClusterStats(BaseModel):
    """Counts for the audit report: nodes, clusters, sizes, edges by reason."""

    model_config = ConfigDict(extra="forbid")

    problems: int
    clusters: int
    singletons: int
    largest: int
    largest_cluster_id: str | None = None
    size_histogram: dict[str, int] = Field(default_factory=dict, description="cluster size -> count")
    edges_by_reason: dict[str, int] = Field(default_factory=dict)
    gt_ids_without_shop: int = Field(default=0, description="GT ids of shop baskets the shop lookup lacked.")


class ClusterInput(BaseModel):
    """One input file of a cluster report."""

    model_config = ConfigDict(extra="forbid")

    path: str
    problems: int
    quarantined: int = 0


class ClusterReport(BaseModel):
    """Output of ``shoparena suite cluster``: assignment, clusters and the edges that made them."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    params: ClusterParams = Field(default_factory=ClusterParams)
    shop_links: ShopLinks = "none"
    notes: list[str] = Field(default_factory=list)
    inputs: list[ClusterInput] = Field(default_factory=list)
    stats: ClusterStats
    assignment: dict[str, str] = Field(description="problem id -> cluster id")
    clusters: list[Cluster]
    edges: list[ClusterEdge]

    def members_of(self) -> dict[str, list[str]]:
        """cluster id -> member ids."""
        return {c.cluster_id: list(c.members) for c in self.clusters}


# ---------------------------------------------------------------------------------------------- linking


@dataclass(slots=True)
class LinkNode:
    """What linking needs to know about one node: its query, GT ids and whether it is a shop basket."""

    key: str
    query: str
    gt_ids: tuple[str, ...] = ()
    shop_basket: bool = False
    category: str = "-"
    extra_queries: list[str] = field(default_factory=list)


def is_shop_basket(problem: Problem) -> bool:
    """Shop problems and shop-voucher problems: their answers are tied to one shop."""
    if problem.intent is Intent.SHOP:
        return True
    return (
        problem.intent is Intent.VOUCHER
        and problem.voucher is not None
        and (problem.voucher.voucher_type == "shop")
    )


def node_for_problem(problem: Problem) -> LinkNode:
    """The link node of a problem (keyed by ``problem_id``)."""
    return LinkNode(
        key=problem.problem_id,
        query=problem.query,
        gt_ids=tuple(problem.gt_ids),
        shop_basket=is_shop_basket(problem),
        category=problem.category_label,
    )


def _star_edges(groups: Mapping[str, Sequence[str]], reason: EdgeReason) -> list[ClusterEdge]:
    # A star per shared key is enough for connectivity and keeps the edge list linear in the group size.
    edges: list[ClusterEdge] = []
    for key in sorted(groups):
        members = sorted(set(groups[key]))
        edges.extend(ClusterEdge(a=members[0], b=m, reason=reason, key=key) for m in members[1:])
    return edges


def link_nodes(
    nodes: Sequence[LinkNode],
    *,
    shop_of: Callable[[str], str | None] | None = None,
    threshold: float = NEAR_DUP_THRESHOLD,
    shingle_size: int = SHINGLE_SIZE,
    gt_ids_without_shop: list[str] | None = None,
) -> list[ClusterEdge]:
    """Every gt, shop and near-duplicate edge between ``nodes`` (keys must be unique).

    Args:
        nodes: The nodes to link.
        shop_of: product id -> shop id (or ``None`` when unknown); ``None`` skips shop edges.
        threshold: Near-duplicate Jaccard threshold.
        shingle_size: Words per shingle.
        gt_ids_without_shop: Filled with the shop-basket GT ids that ``shop_of`` could not resolve.
    """
    by_gt: dict[str, list[str]] = defaultdict(list)
    by_shop: dict[str, list[str]] = defaultdict(list)
    for node in nodes:
        for pid in dict.fromkeys(node.gt_ids):
            by_gt[pid].append(node.key)
        if shop_of is not None and node.shop_basket:
            for pid in dict.fromkeys(node.gt_ids):
                shop = shop_of(pid)
                if shop is None:
                    if gt_ids_without_shop is not None:
                        gt_ids_without_shop.append(pid)
                    continue
                by_shop[shop].append(node.key)
    edges = _star_edges({k: v for k, v in by_gt.items() if len(set(v)) > 1}, "gt")
    edges += _star_edges({k: v for k, v in by_shop.items() if len(set(v)) > 1}, "shop")

    texts: list[str] = []
    owner: list[str] = []
    for node in nodes:
        for query in (node.query, *node.extra_queries):
            texts.append(query)
            owner.append(node.key)
    seen: set[tuple[str, str]] = set()
    for pair in similar_pairs(texts, threshold=threshold, shingle_size=shingle_size, expand=False):
        a, b = sorted((owner[pair.i], owner[pair.j]))
        if a == b or (a, b) in seen:
            continue
        seen.add((a, b))
        edges.append(ClusterEdge(a=a, b=b, reason="near_dup", similarity=round(pair.similarity, 4)))
    return edges


def cluster_id_for(members: Iterable[str]) -> str:
    """Stable cluster id: independent of input order and of which edges joined the members."""
    digest = hashlib.sha256("\n".join(sorted(members)).encode("utf-8")).hexdigest()
    return "c" + digest[:12]


def components(keys: Sequence[str], edges: Iterable[ClusterEdge]) -> list[list[str]]:
    """Connected components (each sorted) of the graph ``keys`` + ``edges``."""
    uf = UnionFind(keys)
    for edge in edges:
        uf.union(edge.a, edge.b)
    return uf.groups()


def build_clusters(
    problems: Sequence[Problem],
    *,
    shop_of: Callable[[str], str | None] | None = None,
    shop_links: ShopLinks | None = None,
    threshold: float = NEAR_DUP_THRESHOLD,
    shingle_size: int = SHINGLE_SIZE,
    inputs: Sequence[ClusterInput] = (),
) -> ClusterReport:
    """Cluster problems by shared GT products, shared shops (with ``shop_of``) and near-duplicate queries.

    Problems with the same ``problem_id`` (the same problem read from several files) are one node; their GT
    ids and queries are pooled.

    Args:
        problems: The problems.
        shop_of: product id -> shop id lookup; without it, shop edges are skipped and a note says so.
        shop_links: How ``shop_of`` was obtained, for the report (defaults to ``mapping``/``none``).
        threshold: Near-duplicate Jaccard threshold.
        shingle_size: Words per shingle.
        inputs: Input files, for the report.
    """
    nodes: dict[str, LinkNode] = {}
    for problem in problems:
        node = nodes.get(problem.problem_id)
        if node is None:
            nodes[problem.problem_id] = node_for_problem(problem)
            continue
        # The same id seen again: pool what the copies say so no link is lost.
        node.gt_ids = tuple(dict.fromkeys((*node.gt_ids, *problem.gt_ids)))
        node.shop_basket = node.shop_basket or is_shop_basket(problem)
        if problem.query != node.query and problem.query not in node.extra_queries:
            node.extra_queries.append(problem.query)
    missing: list[str] = []
    edges = link_nodes(
        list(nodes.values()),
        shop_of=shop_of,
        threshold=threshold,
        shingle_size=shingle_size,
        gt_ids_without_shop=missing,
    )
    notes: list[str] = []
    links: ShopLinks = shop_links or ("mapping" if shop_of is not None else "none")
    if shop_of is None:
        notes.append("no catalog or index given: shop links skipped; clusters use GT-id and query links only")
    elif missing:
        notes.append(f"{len(set(missing))} GT ids of shop baskets have no shop in the lookup (not linked)")
    return report_from_edges(
        nodes,
        edges,
        params=ClusterParams(near_dup_threshold=threshold, shingle_size=shingle_size),
        shop_links=links,
        notes=notes,
        inputs=inputs,
        gt_ids_without_shop=len(set(missing)),
    )


def report_from_edges(
    nodes: Mapping[str, LinkNode],
    edges: list[ClusterEdge],
    *,
    params: ClusterParams,
    shop_links: ShopLinks,
    notes: list[str],
    inputs: Sequence[ClusterInput] = (),
    gt_ids_without_shop: int = 0,
) -> ClusterReport:
    """Assemble a :class:`ClusterReport` from nodes and their edges."""
    groups = components(list(nodes), edges)
    clusters: list[Cluster] = []
    assignment: dict[str, str] = {}
    for members in groups:
        cid = cluster_id_for(members)
        cats = Counter(nodes[m].category for m in members)
        clusters.append(Cluster(cluster_id=cid, size=len(members), members=members, by_category=dict(cats)))
        for m in members:
            assignment[m] = cid
    clusters.sort(key=lambda c: (-c.size, c.cluster_id))
    sizes = Counter(c.size for c in clusters)
    largest = clusters[0] if clusters else None
    stats = ClusterStats(
        problems=len(nodes),
        clusters=len(clusters),
        singletons=sizes.get(1, 0),
        largest=largest.size if largest else 0,
        largest_cluster_id=largest.cluster_id if largest else None,
        size_histogram={str(k): sizes[k] for k in sorted(sizes)},
        edges_by_reason=dict(sorted(Counter(e.reason for e in edges).items())),
        gt_ids_without_shop=gt_ids_without_shop,
    )
    return ClusterReport(
        params=params,
        shop_links=shop_links,
        notes=notes,
        inputs=list(inputs),
        stats=stats,
        assignment=dict(sorted(assignment.items())),
        clusters=clusters,
        edges=edges,
    )


# ---------------------------------------------------------------------------------------------- shop lookups


def index_shop_lookup(index_dir: str | Path) -> Callable[[str], str | None]:
    """product id -> shop id from a search index directory (``shoparena.search.SearchIndex``)."""
    from shoparena.search import SearchIndex

    index = SearchIndex.open(index_dir)
    cache: dict[str, str | None] = {}

    def shop_of(product_id: str) -> str | None:
        if product_id not in cache:
            i = index.doc_index(product_id)
            cache[product_id] = None if i is None else str(index.product_dict(i).get("shop_id") or "") or None
        return cache[product_id]

    return shop_of


def catalog_shop_map(catalog_path: str | Path, product_ids: Iterable[str]) -> dict[str, str]:
    """product id -> shop id for the wanted ids, streaming a catalog file once."""
    from shoparena.catalog.io import iter_products

    wanted = set(product_ids)
    found: dict[str, str] = {}
    for line in iter_products(catalog_path):
        product = line.product
        if product.product_id in wanted and product.product_id not in found:
            found[product.product_id] = product.shop_id
            if len(found) == len(wanted):
                break
    return found


def load_problem_files(paths: Sequence[str | Path]) -> tuple[list[Problem], list[ClusterInput]]:
    """Read suite files (any format :func:`~shoparena.suites.loaders.load_suite` knows), in order."""
    from shoparena.suites.loaders import load_suite

    problems: list[Problem] = []
    inputs: list[ClusterInput] = []
    for path in paths:
        loaded, summary = load_suite(path)
        problems.extend(loaded)
        inputs.append(ClusterInput(path=str(path), problems=len(loaded), quarantined=summary.quarantined))
    return problems, inputs


def shop_lookup_for(
    problems: Sequence[Problem], *, index_dir: str | Path | None = None, catalog: str | Path | None = None
) -> tuple[Callable[[str], str | None] | None, ShopLinks]:
    """The shop lookup for ``problems`` from an index directory or a catalog file (index wins), if any."""
    if index_dir is not None:
        return index_shop_lookup(index_dir), "index"
    if catalog is not None:
        wanted = {pid for p in problems if is_shop_basket(p) for pid in p.gt_ids}
        mapping = catalog_shop_map(catalog, wanted)
        return mapping.get, "catalog"
    return None, "none"
