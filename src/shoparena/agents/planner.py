"""``planner``: a strong rule-based reference agent (a baseline, not a language model).

It parses the request (:mod:`shoparena.agents.query_parser`), searches with the stated price and service
filters, inspects candidates with ``view_product_information``, checks SKU/attribute pairs the way the scorer
does (one variant plus the attribute pool), and ranks candidates by constraint satisfaction, then by title
overlap with the request. Shop requests look for one shop holding every item (search each item, then search
every item inside the most promising shops); voucher requests enumerate baskets of good candidates and keep
one that passes the scorer's budget rule (spec §8.3), cheapest first. Web requests look the clue up with
``web_search`` first. It finishes with one ``recommend_product`` (ids in the user's order) and ``terminate``.
Every step is a well-formed tagged completion (``<think>`` + ``<tool_call>`` JSON list).
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz, utils

from shoparena.agents.base import tagged_step
from shoparena.agents.query_parser import ItemSpec, QuerySpec, VoucherSpec, parse_item, parse_query
from shoparena.env.environment import Observation
from shoparena.records.message import ToolSchema
from shoparena.records.trajectory import Step

_TOKEN_RE = re.compile(r"[a-z0-9]+(?:[.:'-][a-z0-9]+)*")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "for",
        "with",
        "in",
        "on",
        "to",
        "by",
        "from",
        "at",
        "is",
        "are",
        "be",
        "it",
        "its",
        "this",
        "that",
        "i",
        "me",
        "my",
        "want",
        "need",
        "looking",
        "find",
        "show",
        "please",
        "can",
        "you",
        "help",
        "which",
        "one",
        "do",
        "recommend",
        "product",
        "products",
        "item",
        "items",
    ]
)
_QUOTED_RE = re.compile(r"\"([^\"]{4,})\"")
_BRAND_RE = re.compile(r"Brand: ([^.]+)\.")

Plan = Generator[str, Step, None]


def _tokens(text: str) -> set[str]:
    return {t for t in _TOKEN_RE.findall(text.lower()) if t not in _STOP and len(t) > 1}


def _clean_think(text: str) -> str:
    # Tags inside the think text would break the format grammar.
    return text.replace("<", "(").replace(">", ")")


@dataclass(slots=True)
class Candidate:
    """A product considered for one item, with how well it fits."""

    product_id: str
    shop_id: str
    title: str
    price: float
    sat: float
    text: float
    rank: int

    def key(self) -> tuple[float, float, int]:
        return (round(self.sat, 6), round(self.text, 2), -self.rank)


def pair_hits(pairs: Sequence[tuple[str, str]], view: dict[str, Any] | None) -> int:
    """Required (key, value) pairs met by the best single variant plus the attribute pool (scorer rule)."""
    if not pairs or view is None:
        return 0
    pool = {(k, v) for k, vals in (view.get("attributes") or {}).items() for v in vals}
    variants = [set(opts.items()) for opts in (view.get("sku_options") or {}).values()] + [set()]
    return max(sum(1 for p in pairs if p in variant or p in pool) for variant in variants)


def satisfaction(item: ItemSpec, hit: dict[str, Any], view: dict[str, Any] | None) -> float:
    """Share of the item's checkable units (pairs, price bound, services) the product meets."""
    units = item.unit_count()
    if not units:
        return 1.0
    hits = pair_hits(item.pairs, view)
    if item.price_lo is not None or item.price_hi is not None:
        price = float(hit.get("price", 0.0))
        ok = (item.price_lo is None or price >= item.price_lo) and (
            item.price_hi is None or price <= item.price_hi
        )
        hits += int(ok)
    hits += sum(1 for s in item.services if s in (hit.get("service") or []))
    return hits / units


def text_score(item: ItemSpec, hit: dict[str, Any], view: dict[str, Any] | None, must: str = "") -> float:
    """Title (and value) match with what the user named, in [0, 1]; +1 when ``must`` is in the title."""
    title = str(hit.get("title", ""))
    bonus = 1.0 if must and must.lower() in title.lower() else 0.0
    if item.title:
        if title == item.title:
            return 1.0 + bonus
        return fuzz.token_set_ratio(title, item.title, processor=utils.default_process) / 100 + bonus
    wanted = _tokens(item.name)
    if not wanted:
        return bonus
    have = _tokens(title)
    if view is not None:
        for vals in (view.get("attributes") or {}).values():
            for v in vals:
                have |= _tokens(v)
        for opts in (view.get("sku_options") or {}).values():
            for v in opts.values():
                have |= _tokens(v)
    title_part = len(wanted & _tokens(title)) / len(wanted)
    any_part = len(wanted & have) / len(wanted)
    return 0.7 * title_part + 0.3 * any_part + bonus


class PlannerAgent:
    """The rule-based reference agent ``planner`` (a baseline for comparisons; no model involved).

    Args:
        max_shops: Shops searched item by item for same-shop requests.
        view_per_search: Candidates per search passed to ``view_product_information``.
        basket_width: Candidates per item considered when enumerating voucher baskets.
    """

    name = "planner"

    def __init__(self, *, max_shops: int = 8, view_per_search: int = 10, basket_width: int = 4) -> None:
        self.max_shops = max_shops
        self.view_per_search = view_per_search
        self.basket_width = basket_width
        self._episodes: dict[str, Plan] = {}
        self._lock = threading.Lock()

    # --- protocol -------------------------------------------------------------------------------------
    def act(self, observation: Observation, tools: Sequence[ToolSchema]) -> str:
        """The next tagged completion of the episode ``observation.episode_id``."""
        with self._lock:
            plan = self._episodes.get(observation.episode_id)
        try:
            if plan is None:
                names = {t.name for t in tools}
                plan = self._plan(observation, names)
                with self._lock:
                    self._episodes[observation.episode_id] = plan
                text = next(plan)
            else:
                assert observation.last_step is not None
                text = plan.send(observation.last_step)
        except StopIteration:
            text = ""
        if not text or '"name": "terminate"' in text:
            self.close(observation.episode_id)
        return text

    def close(self, episode_id: str) -> None:
        """Drop the state of an episode (called when it ends early)."""
        with self._lock:
            plan = self._episodes.pop(episode_id, None)
        if plan is not None:
            plan.close()

    # --- plumbing -------------------------------------------------------------------------------------
    @staticmethod
    def _run(think: str, calls: list[dict[str, Any]]) -> Generator[str, Step, list[Any]]:
        step = yield tagged_step(_clean_think(think), calls)
        results = [c.result if c.has_result else None for c in step.tool_calls]
        return results + [None] * (len(calls) - len(results))

    @staticmethod
    def _search(item: ItemSpec, q: str, page: int = 1, shop_id: str | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"q": q, "page": page}
        if shop_id:
            params["shop_id"] = shop_id
        if price := item.price_filter():
            params["price"] = price
        if service := item.service_filter():
            params["service"] = service
        return {"name": "find_product", "parameters": params}

    @staticmethod
    def _queries(item: ItemSpec) -> list[str]:
        if item.title:
            return [item.title]
        base = item.name.strip() or item.text[:200]
        values = " ".join(dict.fromkeys(v for _, v in item.pairs))
        out = [base]
        if values:
            out.append(f"{base} {values}")
        return out

    def _candidates(
        self,
        item: ItemSpec,
        hits: Sequence[dict[str, Any]],
        views: dict[str, dict[str, Any]],
        must: str = "",
    ) -> list[Candidate]:
        seen: dict[str, Candidate] = {}
        for rank, hit in enumerate(hits):
            pid = hit["product_id"]
            if pid in seen:
                continue
            view = views.get(pid)
            seen[pid] = Candidate(
                pid,
                hit["shop_id"],
                hit["title"],
                float(hit["price"]),
                satisfaction(item, hit, view),
                text_score(item, hit, view, must),
                rank,
            )
        return sorted(seen.values(), key=Candidate.key, reverse=True)

    def _view(self, ids: Sequence[str], views: dict[str, dict[str, Any]]) -> Generator[str, Step, None]:
        todo = [i for i in dict.fromkeys(ids) if i not in views]
        if not todo:
            return
        (result,) = yield from self._run(
            f"Inspecting {len(todo)} candidates' SKU options and attributes to check the requirements.",
            [{"name": "view_product_information", "parameters": {"product_ids": ",".join(todo)}}],
        )
        for view in result if isinstance(result, list) else []:
            if isinstance(view, dict) and "product_id" in view:
                views[view["product_id"]] = view

    # --- the plan -------------------------------------------------------------------------------------
    def _plan(self, obs: Observation, tools: set[str]) -> Plan:
        category = str(obs.problem.get("category") or "")
        spec = parse_query(obs.query, category)
        must = ""
        if category.lower() == "web" and "web_search" in tools:
            must = yield from self._web_lookup(obs.query, spec)
        views: dict[str, dict[str, Any]] = {}
        multi = len(spec.items) > 1
        use_shop = multi and (
            spec.same_shop or (spec.voucher is not None and spec.voucher.voucher_type == "shop")
        )
        shop_cands: dict[str, list[list[Candidate]]] = {}
        global_cands = yield from self._search_items(spec, views, must)
        if use_shop:
            shop_cands = yield from self._search_shops(spec, global_cands, views)
        chosen = self._choose(spec, global_cands, shop_cands)
        ids = [c.product_id for c in chosen if c is not None]
        found = bool(ids) and len(ids) == len(spec.items)
        summary = "; ".join(
            f"item {i + 1}: {c.product_id} (constraints {c.sat:.0%})" if c else f"item {i + 1}: not found"
            for i, c in enumerate(chosen)
        )
        calls: list[dict[str, Any]] = []
        if ids:
            calls.append({"name": "recommend_product", "parameters": {"product_ids": ",".join(ids)}})
        calls.append({"name": "terminate", "parameters": {"status": "success" if found else "failure"}})
        yield tagged_step(
            _clean_think(f"Final choice: {summary}. Recommending in the requested order."), calls
        )

    def _web_lookup(self, query: str, spec: QuerySpec) -> Generator[str, Step, str]:
        """Find the answer of a web question (the brand of a quoted product); returns it or ''."""
        quoted = _QUOTED_RE.search(query)
        q = quoted.group(1) if quoted else query
        (result,) = yield from self._run(
            "This request depends on outside knowledge; searching the web for the product it mentions.",
            [{"name": "web_search", "parameters": {"q": q, "max_results": 5}}],
        )
        pages = result.get("observation", []) if isinstance(result, dict) else []
        brand = ""
        best = -1.0
        for page in pages:
            m = _BRAND_RE.search(str(page.get("content", "")))
            if not m:
                continue
            sim = fuzz.token_set_ratio(str(page.get("title", "")), q, processor=utils.default_process)
            if sim > best:
                best, brand = sim, m.group(1).strip()
        item = spec.items[0]
        head = re.split(r"\s+made by\s+|\s+from the (?:same )?brand", item.text, maxsplit=1)[0]
        name = parse_item(head).name
        item.name = f"{brand} {name}".strip()
        return brand

    def _search_items(
        self, spec: QuerySpec, views: dict[str, dict[str, Any]], must: str
    ) -> Generator[str, Step, list[list[Candidate]]]:
        """Search every item (two query forms, then a second page where needed) and rank candidates."""
        hits: list[list[dict[str, Any]]] = [[] for _ in spec.items]
        for page in (1, 2):
            calls, owners = [], []
            for i, item in enumerate(spec.items):
                if page == 2:
                    best = self._candidates(item, hits[i], views, must)
                    if best and best[0].sat >= 1 and best[0].text >= 0.8:
                        continue
                for q in self._queries(item):
                    calls.append(self._search(item, q, page))
                    owners.append(i)
            if not calls:
                break
            what = "Searching" if page == 1 else "Looking further (page 2) for items without a full match;"
            results = yield from self._run(
                f"{what} {len(spec.items)} item(s) with their price and service filters.", calls
            )
            for i, result in zip(owners, results, strict=True):
                hits[i].extend(h for h in (result or []) if isinstance(h, dict))
            to_view = []
            for i, item in enumerate(spec.items):
                pre = self._candidates(item, hits[i], views, must)
                to_view += [c.product_id for c in pre[: self.view_per_search]]
            yield from self._view(to_view, views)
        return [self._candidates(item, hits[i], views, must) for i, item in enumerate(spec.items)]

    def _search_shops(
        self, spec: QuerySpec, global_cands: list[list[Candidate]], views: dict[str, dict[str, Any]]
    ) -> Generator[str, Step, dict[str, list[list[Candidate]]]]:
        """Search every item inside the shops that appear for most items."""
        coverage: dict[str, tuple[int, int]] = {}
        for cands in global_cands:
            for c in cands:
                n, first = coverage.get(c.shop_id, (0, 10**9))
                coverage[c.shop_id] = (n, min(first, c.rank))
            for shop in {c.shop_id for c in cands}:
                n, first = coverage[shop]
                coverage[shop] = (n + 1, first)
        shops = sorted(coverage, key=lambda s: (-coverage[s][0], coverage[s][1]))[: self.max_shops]
        if not shops:
            return {}
        calls, owners = [], []
        for shop in shops:
            for i, item in enumerate(spec.items):
                calls.append(self._search(item, self._queries(item)[0], 1, shop))
                owners.append((shop, i))
        results = yield from self._run(
            f"The items must come from one shop: searching each item inside {len(shops)} candidate shops.",
            calls,
        )
        hits: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for owner, result in zip(owners, results, strict=True):
            hits[owner] = [h for h in (result or []) if isinstance(h, dict)]
        to_view = []
        for (_, i), hs in hits.items():
            to_view += [c.product_id for c in self._candidates(spec.items[i], hs, views)[:5]]
        yield from self._view(to_view, views)
        return {
            shop: [self._candidates(item, hits[(shop, i)], views) for i, item in enumerate(spec.items)]
            for shop in shops
        }

    def _choose(
        self,
        spec: QuerySpec,
        global_cands: list[list[Candidate]],
        shop_cands: dict[str, list[list[Candidate]]],
    ) -> list[Candidate | None]:
        if spec.voucher is not None:
            basket = self._best_basket(spec.voucher, global_cands, shop_cands)
            if basket is not None:
                return list(basket)
        if shop_cands:
            best: tuple[tuple[float, ...], list[Candidate]] | None = None
            for per_item in shop_cands.values():
                picks = _distinct_picks(per_item)
                if any(p is None for p in picks):
                    continue
                key = (sum(p.sat for p in picks), round(sum(p.text for p in picks), 2))
                if best is None or key > best[0]:
                    best = (key, picks)
            if best is not None:
                return list(best[1])
        return _distinct_picks(global_cands)

    def _best_basket(
        self,
        voucher: VoucherSpec,
        global_cands: list[list[Candidate]],
        shop_cands: dict[str, list[list[Candidate]]],
    ) -> tuple[Candidate, ...] | None:
        """The best basket under the budget rule: full matches, then passing the budget, then cheapest."""
        pools = [global_cands, *shop_cands.values()]
        best: tuple[tuple[float, ...], tuple[Candidate, ...]] | None = None
        for per_item in pools:
            lists = [self._shortlist(cands) for cands in per_item]
            if any(not lst for lst in lists):
                continue
            for combo in itertools.product(*lists):
                if len({c.product_id for c in combo}) < len(combo):
                    continue
                total = sum(c.price for c in combo)
                ok = voucher.total_ok(total, len({c.shop_id for c in combo}))
                full = all(c.sat >= 1 for c in combo)
                key = (
                    float(full and ok),
                    sum(c.sat for c in combo),
                    round(sum(c.text for c in combo), 1),
                    float(ok),
                    -total,
                )
                if best is None or key > best[0]:
                    best = (key, combo)
        return None if best is None else best[1]

    def _shortlist(self, cands: list[Candidate]) -> list[Candidate]:
        if not cands:
            return []
        top = cands[0]
        near = [c for c in cands if c.sat >= top.sat and c.text >= top.text - 0.15]
        near.sort(key=lambda c: c.price)
        return near[: self.basket_width]


def _distinct_picks(per_item: list[list[Candidate]]) -> list[Candidate | None]:
    used: set[str] = set()
    picks: list[Candidate | None] = []
    for cands in per_item:
        pick = next((c for c in cands if c.product_id not in used), None)
        if pick is not None:
            used.add(pick.product_id)
        picks.append(pick)
    return picks


__all__ = ["Candidate", "PlannerAgent", "pair_hits", "satisfaction", "text_score"]
