"""Leak audit of two problem or corpus files: shared queries, shared GT products, clusters across the two.

Either side may be a ShoppingBench test file (JSONL), an ORO suite (JSON array, full or public), a chat corpus
in the SN15 style (JSONL rows with ``messages`` + ``tools``; the problem is the first user message), or ORO
``output.jsonl`` envelopes (the problem is the first step's ``extra_info.query``). Records are read leniently:
the audit needs only a query and, when present, the GT product ids, so a public suite without rewards or a
corpus row without labels is still audited on its queries.

A *leak* is a leak cluster (see :mod:`shoparena.suites.clusters`) with members on both sides: it covers exact
and normalised query matches, near-duplicate queries, shared GT products and, with a catalog, shared shops of
shop baskets, also through chains (A1 ~ A2 ~ B1).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

from shoparena.jsonl import read_bytes
from shoparena.records.problem import problem_id_for_query
from shoparena.suites.clusters import (
    NEAR_DUP_THRESHOLD,
    NEAR_MISS_THRESHOLD,
    SHINGLE_SIZE,
    ClusterEdge,
    LinkNode,
    ShopLinks,
    catalog_shop_map,
    cluster_id_for,
    components,
    index_shop_lookup,
    link_nodes,
    normalize_query,
    similar_pairs,
)

AuditFormat = Literal["suite_jsonl", "suite_json", "chat_jsonl", "chat_json", "envelope_jsonl"]
Side = Literal["A", "B"]
_PREFIX = 80


class AuditInputError(ValueError):
    """A file the audit cannot read at all (not JSON, no recognisable records)."""


@dataclass(slots=True)
class AuditItem:
    """One problem (or corpus row) as the audit sees it."""

    item_id: str
    query: str
    gt_ids: tuple[str, ...]
    shop_basket: bool
    where: str


class SkippedRecord(BaseModel):
    """A record without a usable query, with where and why."""

    model_config = ConfigDict(extra="forbid")

    where: str
    reason: str


class AuditInput(BaseModel):
    """One audited file."""

    model_config = ConfigDict(extra="forbid")

    path: str
    format: str
    items: int
    with_gt: int = Field(description="Items that carry GT product ids.")
    skipped: list[SkippedRecord] = Field(default_factory=list)


class ItemRef(BaseModel):
    """A pointer to an item in a finding."""

    model_config = ConfigDict(extra="forbid")

    id: str
    where: str
    query: str = Field(description="The first characters of the query.")


class QueryOverlap(BaseModel):
    """Items of A and B whose queries are identical (``exact``) or identical after normalisation."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["exact", "normalised"]
    a: list[ItemRef]
    b: list[ItemRef]


class NearDuplicate(BaseModel):
    """A query of A and one of B with shingle Jaccard ``similarity`` (different normalised texts)."""

    model_config = ConfigDict(extra="forbid")

    similarity: float
    a: ItemRef
    b: ItemRef
    a_count: int = Field(default=1, description="Items of A with this normalised query.")
    b_count: int = Field(default=1, description="Items of B with this normalised query.")


class SharedKey(BaseModel):
    """A GT product id or shop id used on both sides."""

    model_config = ConfigDict(extra="forbid")

    key: str
    a: list[ItemRef]
    b: list[ItemRef]


class StraddlingCluster(BaseModel):
    """A leak cluster with members in both files."""

    model_config = ConfigDict(extra="forbid")

    cluster_id: str
    a: list[ItemRef]
    b: list[ItemRef]
    edges_by_reason: dict[str, int]


class AuditCounts(BaseModel):
    """Headline numbers of an audit."""

    model_config = ConfigDict(extra="forbid")

    exact: int = 0
    normalised: int = 0
    near_dup: int = 0
    shared_gt: int = 0
    shared_shop: int = 0
    straddling_clusters: int = 0
    near_misses: int = 0


class AuditReport(BaseModel):
    """Everything ``shoparena suite audit`` found; ``leak`` is true when any cluster straddles A and B."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    a: AuditInput
    b: AuditInput
    near_dup_threshold: float
    near_miss_threshold: float
    shingle_size: int
    shop_links: ShopLinks
    notes: list[str] = Field(default_factory=list)
    leak: bool
    counts: AuditCounts
    query_overlaps: list[QueryOverlap]
    near_duplicates: list[NearDuplicate]
    shared_gt: list[SharedKey]
    shared_shops: list[SharedKey]
    straddling: list[StraddlingCluster]
    near_misses: list[NearDuplicate] = Field(
        description="Cross pairs at near_miss_threshold <= similarity < near_dup_threshold (not leaks)."
    )


# ---------------------------------------------------------------------------------------------- reading


def _records(path: Path) -> tuple[bool, Iterator[tuple[str, Any]]]:
    """(is_array, iterator of (where, record)); JSONL split on b"\\n" only (queries may hold U+0085)."""
    data = read_bytes(path)  # a damaged .gz raises JsonlReadError (CLI exit 3)
    if data.lstrip()[:1] == b"[":
        try:
            array = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise AuditInputError(f"{path}: not valid JSON: {exc}") from None
        return True, ((f"{path}:index {i}", rec) for i, rec in enumerate(array))

    def lines() -> Iterator[tuple[str, Any]]:
        for line_no, raw in enumerate(data.split(b"\n"), start=1):
            if raw.strip():
                try:
                    yield f"{path}:line {line_no}", orjson.loads(raw)
                except orjson.JSONDecodeError as exc:
                    yield f"{path}:line {line_no}", ValueError(f"invalid JSON: {exc}")

    return False, lines()


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        parts = [p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return "".join(parts) if parts else None
    return None


def _reward_ids(reward: Any) -> tuple[str, ...]:
    items = reward if isinstance(reward, list) else [reward]
    ids = [str(item["product_id"]) for item in items if isinstance(item, dict) and item.get("product_id")]
    return tuple(dict.fromkeys(ids))


def _suite_item(record: dict[str, Any], where: str) -> AuditItem:
    query = record.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ValueError("field query: missing or not a non-empty string")
    reward = record.get("reward")
    category = str(record.get("category", "")).lower()
    voucher = record.get("voucher")
    if category:
        shop_basket = category == "shop"
    else:  # SB files: a list reward without a voucher is a shop task
        shop_basket = isinstance(reward, list) and voucher is None and "Knowledge_Attribute" not in record
    if isinstance(voucher, dict) and voucher.get("voucher_type") == "shop":
        shop_basket = True
    pid = record.get("problem_id")
    return AuditItem(
        item_id=str(pid) if pid not in (None, "") else problem_id_for_query(query),
        query=query,
        gt_ids=_reward_ids(reward) if reward is not None else (),
        shop_basket=shop_basket,
        where=where,
    )


def _chat_item(record: dict[str, Any], where: str) -> AuditItem:
    messages = record.get("messages")
    if not isinstance(messages, list):
        raise ValueError("field messages: not a list")
    first_user = next((m for m in messages if isinstance(m, dict) and m.get("role") == "user"), None)
    query = _text(first_user.get("content")) if first_user is not None else None
    if not query or not query.strip():
        raise ValueError("field messages: no user message with text")
    rid = next(
        (record[k] for k in ("problem_id", "record_id", "id") if record.get(k) not in (None, "")), None
    )
    return AuditItem(
        item_id=str(rid) if rid is not None else problem_id_for_query(query),
        query=query,
        gt_ids=_reward_ids(record["reward"]) if "reward" in record else (),
        shop_basket=str(record.get("category", "")).lower() == "shop",
        where=where,
    )


def _envelope_item(record: Any, where: str) -> AuditItem:
    dialogue = record.get("dialogue") if isinstance(record, dict) else record
    if not isinstance(dialogue, list) or not dialogue:
        raise ValueError("field dialogue: empty or missing (not a SUCCESS envelope)")
    extra = dialogue[0].get("extra_info") if isinstance(dialogue[0], dict) else None
    query = extra.get("query") if isinstance(extra, dict) else None
    if not isinstance(query, str) or not query.strip():
        raise ValueError("field dialogue.0.extra_info.query: missing")
    pid = record.get("problem_id") if isinstance(record, dict) else None
    pid = pid or (extra.get("problem_id") if isinstance(extra, dict) else None)
    return AuditItem(
        item_id=str(pid) if pid else problem_id_for_query(query),
        query=query,
        gt_ids=(),
        shop_basket=False,
        where=where,
    )


def _kind(record: Any) -> str | None:
    if isinstance(record, list):
        return "envelope"  # the older envelope format: a bare dialogue list
    if not isinstance(record, dict):
        return None
    if "messages" in record:
        return "chat"
    if "dialogue" in record:
        return "envelope"
    if "query" in record:
        return "suite"
    return None


def load_audit_items(path: str | Path) -> tuple[list[AuditItem], AuditInput]:
    """Read any supported problem or corpus file as audit items (format detected from the first record).

    Raises:
        AuditInputError: when the file is not JSON/JSONL or holds no record of a known kind.
    """
    path = Path(path)
    is_array, records = _records(path)
    items: list[AuditItem] = []
    skipped: list[SkippedRecord] = []
    kind: str | None = None
    readers: dict[str, Callable[[Any, str], AuditItem]] = {
        "suite": _suite_item,
        "chat": _chat_item,
        "envelope": _envelope_item,
    }
    for where, record in records:
        if isinstance(record, ValueError):
            skipped.append(SkippedRecord(where=where, reason=str(record)))
            continue
        kind = kind or _kind(record)
        if kind is None:
            skipped.append(SkippedRecord(where=where, reason="not a problem, chat row or envelope"))
            continue
        try:
            items.append(readers[kind](record, where))
        except (ValueError, AttributeError, TypeError) as exc:
            skipped.append(SkippedRecord(where=where, reason=str(exc)))
    if kind is None:
        raise AuditInputError(f"{path}: no problem, chat row or envelope records found")
    fmt = {"suite": "suite", "chat": "chat", "envelope": "envelope"}[kind] + (
        "_json" if is_array else "_jsonl"
    )
    summary = AuditInput(
        path=str(path),
        format=fmt,
        items=len(items),
        with_gt=sum(1 for i in items if i.gt_ids),
        skipped=skipped,
    )
    return items, summary


# ---------------------------------------------------------------------------------------------- auditing


def _ref(item: AuditItem) -> ItemRef:
    query = " ".join(item.query.split())
    return ItemRef(id=item.item_id, where=item.where, query=query[:_PREFIX])


def _query_overlaps(norm_groups: Mapping[str, dict[Side, list[AuditItem]]]) -> list[QueryOverlap]:
    """Queries of both sides that are the same, by raw text and by normalised text."""
    overlaps: list[QueryOverlap] = []
    for norm in sorted(norm_groups):
        group = norm_groups[norm]
        if not norm or not group["A"] or not group["B"]:
            continue
        raw_a = {i.query for i in group["A"]}
        raw_b = {i.query for i in group["B"]}
        common = raw_a & raw_b
        if common:
            overlaps.append(
                QueryOverlap(
                    kind="exact",
                    a=[_ref(i) for i in group["A"] if i.query in common],
                    b=[_ref(i) for i in group["B"] if i.query in common],
                )
            )
        # Members of a cross pair whose raw texts differ (whitespace, numbering, punctuation variants).
        a_var = [i for i in group["A"] if raw_b - {i.query}]
        b_var = [i for i in group["B"] if raw_a - {i.query}]
        if a_var and b_var:
            overlaps.append(
                QueryOverlap(kind="normalised", a=[_ref(i) for i in a_var], b=[_ref(i) for i in b_var])
            )
    return overlaps


def _near_findings(
    norm_groups: Mapping[str, dict[Side, list[AuditItem]]], threshold: float, near_miss_threshold: float
) -> tuple[list[NearDuplicate], list[NearDuplicate]]:
    """Near duplicates and near misses between different normalised texts, one representative per text."""
    reps: list[tuple[str, Side]] = [
        (norm, side) for norm in sorted(norm_groups) if norm for side in ("A", "B") if norm_groups[norm][side]
    ]
    near_dups: list[NearDuplicate] = []
    near_misses: list[NearDuplicate] = []
    for pair in similar_pairs(
        [norm for norm, _ in reps], threshold=near_miss_threshold, normalized=True, expand=True
    ):
        (na, sa), (nb, sb) = reps[pair.i], reps[pair.j]
        if sa == sb or na == nb:
            continue
        if sa == "B":
            (na, sa), (nb, sb) = (nb, sb), (na, sa)
        ga, gb = norm_groups[na]["A"], norm_groups[nb]["B"]
        finding = NearDuplicate(
            similarity=round(pair.similarity, 4),
            a=_ref(ga[0]),
            b=_ref(gb[0]),
            a_count=len(ga),
            b_count=len(gb),
        )
        (near_dups if pair.similarity >= threshold else near_misses).append(finding)
    near_dups.sort(key=lambda f: (-f.similarity, f.a.id, f.b.id))
    near_misses.sort(key=lambda f: (-f.similarity, f.a.id, f.b.id))
    return near_dups, near_misses


def _shared(
    sides: Mapping[Side, list[AuditItem]], key_of: Callable[[AuditItem], list[str]]
) -> list[SharedKey]:
    """Keys (GT products, shops) that items of both sides share."""
    index: dict[str, dict[Side, list[AuditItem]]] = defaultdict(lambda: {"A": [], "B": []})
    for side, items in sides.items():
        for item in items:
            for key in dict.fromkeys(key_of(item)):
                index[key][side].append(item)
    return [
        SharedKey(key=k, a=[_ref(i) for i in v["A"]], b=[_ref(i) for i in v["B"]])
        for k, v in sorted(index.items())
        if v["A"] and v["B"]
    ]


def _straddling(
    nodes: list[LinkNode],
    keyed: Mapping[str, tuple[Side, AuditItem]],
    shop_of: Callable[[str], str | None] | None,
    threshold: float,
) -> list[StraddlingCluster]:
    """Clusters over both sides together that hold items of each (chains inside one side can carry a
    leak across)."""
    edges: list[ClusterEdge] = link_nodes(nodes, shop_of=shop_of, threshold=threshold)
    reasons_of: dict[str, Counter[str]] = defaultdict(Counter)
    groups = components([n.key for n in nodes], edges)
    where_group = {key: gi for gi, members in enumerate(groups) for key in members}
    for edge in edges:
        reasons_of[str(where_group[edge.a])][edge.reason] += 1
    straddling: list[StraddlingCluster] = []
    for gi, members in enumerate(groups):
        a_side = [keyed[k][1] for k in members if keyed[k][0] == "A"]
        b_side = [keyed[k][1] for k in members if keyed[k][0] == "B"]
        if a_side and b_side:
            straddling.append(
                StraddlingCluster(
                    cluster_id=cluster_id_for(f"{k}:{keyed[k][1].item_id}" for k in members),
                    a=[_ref(i) for i in a_side],
                    b=[_ref(i) for i in b_side],
                    edges_by_reason=dict(sorted(reasons_of[str(gi)].items())),
                )
            )
    straddling.sort(key=lambda c: (-(len(c.a) + len(c.b)), c.cluster_id))
    return straddling


def audit_items(
    a_items: list[AuditItem],
    b_items: list[AuditItem],
    a_input: AuditInput,
    b_input: AuditInput,
    *,
    shop_of: Callable[[str], str | None] | None = None,
    shop_links: ShopLinks | None = None,
    threshold: float = NEAR_DUP_THRESHOLD,
    near_miss_threshold: float = NEAR_MISS_THRESHOLD,
) -> AuditReport:
    """Audit two lists of items (see :func:`audit_files`)."""
    sides: dict[Side, list[AuditItem]] = {"A": a_items, "B": b_items}
    keyed: dict[str, tuple[Side, AuditItem]] = {}
    nodes: list[LinkNode] = []
    for side, items in sides.items():
        for n, item in enumerate(items):
            key = f"{side}:{n}"
            keyed[key] = (side, item)
            nodes.append(
                LinkNode(key=key, query=item.query, gt_ids=item.gt_ids, shop_basket=item.shop_basket)
            )

    # Query overlaps, by raw text and by normalised text.
    norm_groups: dict[str, dict[Side, list[AuditItem]]] = defaultdict(lambda: {"A": [], "B": []})
    for side, items in sides.items():
        for item in items:
            norm_groups[normalize_query(item.query)][side].append(item)
    overlaps = _query_overlaps(norm_groups)

    # Near duplicates and near misses between different normalised texts, one representative per text.
    near_dups, near_misses = _near_findings(norm_groups, threshold, near_miss_threshold)

    # Shared GT products and shops.
    shared_gt = _shared(sides, lambda item: list(item.gt_ids))
    shared_shops: list[SharedKey] = []
    if shop_of is not None:
        shared_shops = _shared(
            sides,
            lambda item: [s for s in (shop_of(p) for p in item.gt_ids) if s] if item.shop_basket else [],
        )

    # Clusters over both sides together: chains inside one side can carry a leak across.
    straddling = _straddling(nodes, keyed, shop_of, threshold)

    notes: list[str] = []
    links: ShopLinks = shop_links or ("mapping" if shop_of is not None else "none")
    if shop_of is None:
        notes.append("no catalog or index given: shop links skipped; GT-id and query links only")
    for inp in (a_input, b_input):
        if inp.items and not inp.with_gt:
            notes.append(f"{inp.path}: no GT product ids (queries only)")
    counts = AuditCounts(
        exact=sum(1 for o in overlaps if o.kind == "exact"),
        normalised=sum(1 for o in overlaps if o.kind == "normalised"),
        near_dup=len(near_dups),
        shared_gt=len(shared_gt),
        shared_shop=len(shared_shops),
        straddling_clusters=len(straddling),
        near_misses=len(near_misses),
    )
    return AuditReport(
        a=a_input,
        b=b_input,
        near_dup_threshold=threshold,
        near_miss_threshold=near_miss_threshold,
        shingle_size=SHINGLE_SIZE,
        shop_links=links,
        notes=notes,
        leak=bool(straddling),
        counts=counts,
        query_overlaps=overlaps,
        near_duplicates=near_dups,
        shared_gt=shared_gt,
        shared_shops=shared_shops,
        straddling=straddling,
        near_misses=near_misses,
    )


def audit_files(
    a: str | Path,
    b: str | Path,
    *,
    shop_of: Callable[[str], str | None] | None = None,
    shop_links: ShopLinks | None = None,
    threshold: float = NEAR_DUP_THRESHOLD,
    near_miss_threshold: float = NEAR_MISS_THRESHOLD,
    index_dir: str | Path | None = None,
    catalog: str | Path | None = None,
) -> AuditReport:
    """Audit two files for leaks: query overlaps, near-duplicates, shared GT products/shops, straddling.

    Args:
        a: First file (any format :func:`load_audit_items` reads).
        b: Second file.
        shop_of: product id -> shop id lookup for shop links (``None``: skipped, and a note says so).
        shop_links: How ``shop_of`` was obtained, for the report.
        threshold: Near-duplicate Jaccard threshold (a leak).
        near_miss_threshold: Lower bound of the advisory near-miss list.
        index_dir: Search index to look shop ids up in (when ``shop_of`` is not given).
        catalog: Catalog file to look shop ids up in (when neither ``shop_of`` nor ``index_dir`` is given).

    Raises:
        AuditInputError: when a file cannot be read.
    """
    a_items, a_input = load_audit_items(a)
    b_items, b_input = load_audit_items(b)
    if shop_of is None and index_dir is not None:
        shop_of, shop_links = index_shop_lookup(index_dir), "index"
    elif shop_of is None and catalog is not None:
        wanted = {pid for item in (*a_items, *b_items) if item.shop_basket for pid in item.gt_ids}
        shop_of, shop_links = catalog_shop_map(catalog, wanted).get, "catalog"
    return audit_items(
        a_items,
        b_items,
        a_input,
        b_input,
        shop_of=shop_of,
        shop_links=shop_links,
        threshold=threshold,
        near_miss_threshold=near_miss_threshold,
    )


def describe_findings(report: AuditReport, limit: int = 10) -> list[str]:
    """Plain-text lines for the findings of an audit, at most ``limit`` per kind, then the notes."""

    def ids(refs: list[ItemRef]) -> str:
        return ", ".join(r.id for r in refs[:5]) + (f" (+{len(refs) - 5})" if len(refs) > 5 else "")

    sections: list[list[str]] = [
        [f"  {o.kind} query: A {ids(o.a)} ~ B {ids(o.b)}: {o.a[0].query!r}" for o in report.query_overlaps],
        [f"  near_dup {d.similarity:.2f}: {d.a.query!r} ~ {d.b.query!r}" for d in report.near_duplicates],
        [f"  shared GT {k.key}: A {ids(k.a)} ~ B {ids(k.b)}" for k in report.shared_gt],
        [f"  shared shop {k.key}: A {ids(k.a)} ~ B {ids(k.b)}" for k in report.shared_shops],
        [
            f"  straddling {c.cluster_id} {c.edges_by_reason}: A {ids(c.a)} ~ B {ids(c.b)}"
            for c in report.straddling
        ],
        [f"  near miss {m.similarity:.2f}: {m.a.query!r} ~ {m.b.query!r}" for m in report.near_misses],
    ]
    lines: list[str] = []
    for section in sections:
        lines.extend(section[:limit])
        if len(section) > limit:
            lines.append(f"  ... and {len(section) - limit} more")
    lines.extend(f"note: {note}" for note in report.notes)
    return lines
