"""Leak-guarded split (spec §4): problems linked by shared GT products and near-duplicate queries (the
problem bank's own linker, :func:`shoparena.suites.clusters.link_nodes`), whole clusters to one side.

Per category, clusters are ordered by ``sha256(seed:cluster_id)`` and moved to eval until the category's eval
share of trajectories reaches ``eval_fraction``; the result depends only on (records, seed).
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Sequence

from shoparena.corpus.config import SplitConfig
from shoparena.records.corpus import CorpusRecord
from shoparena.suites.clusters import LinkNode, cluster_id_for, components, link_nodes


def cluster_problems(records: Sequence[CorpusRecord], threshold: float) -> dict[str, str]:
    """problem_id → cluster_id over every problem the records reference."""
    nodes: dict[str, LinkNode] = {}
    for record in records:
        node = nodes.get(record.problem_id)
        if node is None:
            nodes[record.problem_id] = LinkNode(
                key=record.problem_id,
                query=record.query or record.problem_id,
                gt_ids=tuple(record.gt_product_ids),
                category=record.category or "-",
            )
        elif record.gt_product_ids:
            node.gt_ids = tuple(dict.fromkeys((*node.gt_ids, *record.gt_product_ids)))
    keys = sorted(nodes)
    edges = link_nodes([nodes[k] for k in keys], threshold=threshold)
    assignment: dict[str, str] = {}
    for members in components(keys, edges):
        cid = cluster_id_for(members)
        for member in members:
            assignment[member] = cid
    return assignment


def assign_split(records: Sequence[CorpusRecord], cfg: SplitConfig) -> dict[str, str]:
    """Set ``cluster_id`` and ``split`` on every record; returns cluster_id → split."""
    assignment = cluster_problems(records, cfg.near_dup_threshold)
    weight: Counter[str] = Counter()
    categories: dict[str, Counter[str]] = defaultdict(Counter)
    for record in records:
        cid = assignment[record.problem_id]
        weight[cid] += 1
        categories[cid][record.category or "-"] += 1
    by_category: dict[str, list[str]] = defaultdict(list)
    for cid, cats in categories.items():
        # A cluster spanning categories is stratified under its most frequent one (ties: name).
        top = sorted(cats.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        by_category[top].append(cid)
    sides: dict[str, str] = {}
    for _category, cids in sorted(by_category.items()):
        total = sum(weight[c] for c in cids)
        target = cfg.eval_fraction * total
        taken = 0
        order = sorted(cids, key=lambda c: hashlib.sha256(f"{cfg.seed}:{c}".encode()).hexdigest())
        for cid in order:
            if taken < target and taken + weight[cid] < total:  # never the whole category
                sides[cid] = "eval"
                taken += weight[cid]
            else:
                sides[cid] = "train"
    for record in records:
        record.cluster_id = assignment[record.problem_id]
        record.split = sides[record.cluster_id]
    return sides


__all__ = ["assign_split", "cluster_problems"]
