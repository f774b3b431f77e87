"""Leak-guarded split (spec §4): problems linked by shared GT products and near-duplicate queries (the
problem bank's own linker, :func:`shoparena.suites.clusters.link_nodes`), whole clusters to one side.

Per category, clusters are ordered by ``sha256(seed:cluster_id)`` and moved to eval until the category's eval
share of trajectories reaches ``eval_fraction`` (never the whole category); the result depends only on the
problems, their trajectory counts and the seed. Works on a per-problem index, never on whole records.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from shoparena.corpus.config import SplitConfig
from shoparena.records.problem import Problem
from shoparena.suites.clusters import LinkNode, cluster_id_for, components, link_nodes, node_for_problem


@dataclass
class ProblemEntry:
    """What the split needs about one problem: its query, GT ids, category and trajectory count."""

    query: str
    category: str
    gt_ids: list[str] = field(default_factory=list)
    trajectories: int = 0


class ProblemIndex(dict[str, ProblemEntry]):
    """problem_id → :class:`ProblemEntry`, filled record by record."""

    def add(self, problem_id: str, query: str, category: str, gt_ids: list[str]) -> None:
        entry = self.get(problem_id)
        if entry is None:
            entry = self[problem_id] = ProblemEntry(query=query or problem_id, category=category or "-")
        for gt in gt_ids:
            if gt not in entry.gt_ids:
                entry.gt_ids.append(gt)
        entry.trajectories += 1


def assign_split(
    index: ProblemIndex,
    cfg: SplitConfig,
    *,
    problems: Mapping[str, Problem] | None = None,
    shop_of: Callable[[str], str | None] | None = None,
) -> dict[str, tuple[str, str]]:
    """problem_id → (cluster_id, split).

    Args:
        index: The problems the records reference.
        cfg: Seed, eval share, near-duplicate threshold.
        problems: Ground-truth problems by id: their nodes carry the shop-basket flag (shop edges).
        shop_of: product id → shop id (from the catalogue index), as ``suite audit --index`` uses.
    """
    keys = sorted(index)
    known = problems or {}
    nodes = []
    for k in keys:
        node = node_for_problem(known[k]) if k in known else None
        if node is None:
            node = LinkNode(key=k, query=index[k].query, gt_ids=tuple(index[k].gt_ids))
        node.category = index[k].category
        nodes.append(node)
    edges = link_nodes(nodes, shop_of=shop_of, threshold=cfg.near_dup_threshold)
    cluster_of: dict[str, str] = {}
    weight: Counter[str] = Counter()
    categories: dict[str, Counter[str]] = defaultdict(Counter)
    for members in components(keys, edges):
        cid = cluster_id_for(members)
        for member in members:
            cluster_of[member] = cid
            weight[cid] += index[member].trajectories
            categories[cid][index[member].category] += index[member].trajectories
    by_category: dict[str, list[str]] = defaultdict(list)
    for cid, cats in categories.items():
        # A cluster spanning categories is stratified under its most frequent one (ties: name).
        by_category[sorted(cats.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]].append(cid)
    sides: dict[str, str] = {}
    for _category, cids in sorted(by_category.items()):
        total = sum(weight[c] for c in cids)
        target, taken = cfg.eval_fraction * total, 0
        for cid in sorted(cids, key=lambda c: hashlib.sha256(f"{cfg.seed}:{c}".encode()).hexdigest()):
            if taken < target and taken + weight[cid] < total:
                sides[cid], taken = "eval", taken + weight[cid]
            else:
                sides[cid] = "train"
    return {pid: (cid, sides[cid]) for pid, cid in cluster_of.items()}


__all__ = ["ProblemEntry", "ProblemIndex", "assign_split"]
