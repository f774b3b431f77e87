"""``planner``: a strong rule-based reference agent (a baseline, not a language model).

It parses the request (:mod:`shoparena.agents.query_parser`) into items with price bounds, services and a
value text, searches each item with several query forms under the stated price/service filters, inspects
candidates with ``view_product_information`` and scores them generically: for each candidate, which of its SKU
option values and attribute values the item's text states (one variant plus the attribute pool, as the scorer
counts them), then how many of the item's name words its title holds. When the best candidate's evidence is
weak it searches again (the name plus the values seen so far, further pages) and views more.

Shop requests look for one shop holding every item: shops are ranked by how many items' good candidates they
hold, then every item is searched inside the most promising shops (``shop_id`` filter). Voucher requests
enumerate baskets of near-best candidates and keep one that passes the scorer's budget rule (spec §8.3).
Web requests look the clue up with ``web_search`` (the brand page whose facts match the question) and then
search the named product of that brand. The episode ends with one ``recommend_product`` (ids in the user's
order) and ``terminate``. Every step is a well-formed tagged completion (``<think>`` + ``<tool_call>`` list).
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import Stemmer

from shoparena.agents.base import tagged_step
from shoparena.agents.query_parser import (
    ItemSpec,
    QuerySpec,
    VoucherSpec,
    head_phrase,
    key_named,
    mentioned_values,
    parse_item,
    parse_query,
)
from shoparena.env.environment import Observation
from shoparena.records.message import ToolSchema
from shoparena.records.trajectory import Step

_TOKEN_RE = re.compile(r"[a-z0-9]+(?:[.:'-][a-z0-9]+)*")
_STOP_WORDS = (
    "a an the and or of for with in on to by from at is are be it its this that i me my want need looking",
    "find show please can you help which one do recommend product products item items some any make sure",
    "comes come what would like buy thanks whose where having made as color colour size material brand",
    "priced price costing costs cost pesos peso php philippine shop store seller them they their all",
    "these following first second third lastly also then next get look i'm i'd set pair",
)
_STOP = frozenset(w for line in _STOP_WORDS for w in line.split())
_BRAND_RE = re.compile(r"Brand: ([^.]+)\.")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+")
_CLUE_CUT_RE = re.compile(
    r"\s+(?:made by|from|by)\s+(?:the\s+)?(?:brand|company|maker|manufacturer|label|firm)\b.*$",
    re.IGNORECASE | re.DOTALL,
)
_STEMMER = Stemmer.Stemmer("english")
_STEM_LOCK = threading.Lock()

Plan = Generator[str, Step, None]


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    with _STEM_LOCK:  # PyStemmer objects are not thread-safe
        return str(_STEMMER.stemWord(word))


def _tokens(text: str) -> set[str]:
    """Stemmed content tokens."""
    return {_stem(t) for t in _TOKEN_RE.findall(text.lower()) if t not in _STOP and len(t) > 1}


def _clean_think(text: str) -> str:
    # Tags inside the think text would break the format grammar.
    return text.replace("<", "(").replace(">", ")")


def _values_of(view: dict[str, Any] | None) -> tuple[set[str], list[set[str]]]:
    """(attribute value pool, value set per SKU variant), lower-cased."""
    if not view:
        return set(), []
    pool = {str(v).lower() for vals in (view.get("attributes") or {}).values() for v in vals or []}
    variants = [
        {str(v).lower() for v in opts.values()}
        for opts in (view.get("sku_options") or {}).values()
        if isinstance(opts, dict)
    ]
    return pool, variants


def _pairs_of(view: dict[str, Any] | None) -> list[tuple[str, str]]:
    """Every (key, value) of a product view, SKU options and attributes."""
    if not view:
        return []
    out = [(str(k), str(v)) for k, vals in (view.get("attributes") or {}).items() for v in vals or []]
    for opts in (view.get("sku_options") or {}).values():
        if isinstance(opts, dict):
            out += [(str(k), str(v)) for k, v in opts.items()]
    return out


def pair_hits(pairs: Sequence[tuple[str, str]], view: dict[str, Any] | None) -> int:
    """Required (key, value) pairs met by the best single variant plus the attribute pool (scorer rule)."""
    if not pairs or view is None:
        return 0
    pool = {(k, v) for k, vals in (view.get("attributes") or {}).items() for v in vals}
    variants = [set(opts.items()) for opts in (view.get("sku_options") or {}).values()] + [set()]
    return max(sum(1 for p in pairs if p in variant or p in pool) for variant in variants)


def value_hits(wanted: set[str], view: dict[str, Any] | None) -> int:
    """How many ``wanted`` values the product holds in one SKU variant plus its attribute pool."""
    if not wanted or view is None:
        return 0
    pool, variants = _values_of(view)
    base = wanted & pool
    best = len(base)
    for variant in variants:
        best = max(best, len(base | (wanted & variant)))
    return best


@dataclass(slots=True)
class Candidate:
    """A product considered for one item, with how well it fits.

    ``hard`` = price bound and services met (share); ``values`` = stated values held; ``text`` = share of the
    item's name words in the title; ``rank`` = best search position.
    """

    product_id: str
    shop_id: str
    title: str
    price: float
    hard: float
    values: float
    text: float
    rank: int
    viewed: bool
    head_values: int = 0
    key_hits: int = 0

    def key(self) -> tuple[float, ...]:
        return (*self.fit(), float(self.viewed), self.head_values, self.key_hits, -self.rank)

    def fit(self) -> tuple[float, float, float]:
        """What makes a candidate a full match (ranking without the search position)."""
        return (round(self.hard, 6), self.values, round(self.text, 2))


@dataclass(slots=True)
class ItemState:
    """What the planner knows about one requested item."""

    spec: ItemSpec
    hits: dict[str, dict[str, Any]] = field(default_factory=dict)
    rank: dict[str, int] = field(default_factory=dict)
    seen_calls: set[str] = field(default_factory=set)
    name_tokens: set[str] = field(default_factory=set)
    mentioned: set[str] = field(default_factory=set)
    head_mentioned: set[str] = field(default_factory=set)

    def add(self, results: Any, offset: int) -> None:
        for pos, hit in enumerate(results if isinstance(results, list) else []):
            if not isinstance(hit, dict) or "product_id" not in hit:
                continue
            pid = str(hit["product_id"])
            self.hits.setdefault(pid, hit)
            self.rank[pid] = min(self.rank.get(pid, 10**6), offset + pos)


class PlannerAgent:
    """The rule-based reference agent ``planner`` (a baseline for comparisons; no model involved).

    Args:
        max_shops: Shops searched item by item per round for same-shop requests.
        view_per_item: Candidates per item passed to ``view_product_information`` per round.
        basket_width: Candidates per item considered when enumerating voucher baskets.
        extra_rounds: Further search rounds for items whose best candidate is weak.
        search_forms: Query forms searched per item in the first round (1: the parsed request text only;
            up to 3: also the title and the bare name). A decisive teacher searches once.
        top_k: Results per search page the planner considers (a decisive teacher only weighs the top few,
            which is also all a compact rendering shows a student).
        verbatim: Search each item with its words exactly as the request writes them (for a one-item request,
            the whole request) and without price/service filters: a copy a small student can learn, at
            about the same success (docs/training.md). Price and services still decide the final pick.
        shop_anchor: Same-shop requests are solved item by item from the first item: search it, then search
            every other item inside the shop of its best candidate (the next candidate's shop when one comes
            back empty, at most ``max_shops`` shops). Every call is a step a small student can read off the
            page (the shop handle stands on the chosen product's result line), where the coverage search
            ranks every shop seen over all items first (docs/training.md, "regular teachers").
        one_search_per_step: Each search is a step of its own (item after item, each result read before the
            next call), instead of one step holding every search of a round.
        running_basket: With ``one_search_per_step``, every search after the first also restates the basket
            so far (``recommend_product`` with the best pick of each item already searched, inside the shop
            being searched when there is one). Only the last recommendation is scored, so this changes no
            outcome; it makes each pick a decision on the list just read and the final basket the previous
            one plus one id, instead of a count of every search made (docs/training.md, "running baskets").
        plan_items: With ``one_search_per_step``, each search step's think lists the items still to search,
            the one searched now first, one per line in the words it is searched with: a running to-do list
            (the compact profile shows it as request-line handles, ``items: U3,U4``), so "which item next, or
            recommend now" is read off the previous turn instead of counted (docs/training.md, "planned
            teachers").
        web_brand_request: A web request's catalogue search is the brand its page names followed by the
            whole request (``{brand} {request}``) instead of the brand and the parsed product name: two
            copies (the page's brand, the request) a small student can make, where the name is a parse
            (docs/training.md, "web requests").
    """

    name = "planner"
    #: Weight of values stated only in the item's head noun phrase (often title or category words).
    head_weight = 0.0

    def __init__(
        self,
        *,
        max_shops: int = 6,
        view_per_item: int = 10,
        basket_width: int = 5,
        extra_rounds: int = 2,
        search_forms: int = 3,
        top_k: int = 10,
        verbatim: bool = False,
        shop_anchor: bool = False,
        one_search_per_step: bool = False,
        running_basket: bool = False,
        plan_items: bool = False,
        web_brand_request: bool = False,
    ) -> None:
        if search_forms < 1 or top_k < 1:
            raise ValueError(f"planner: search_forms and top_k must be >= 1, got {search_forms}, {top_k}")
        self.search_forms = search_forms
        self.verbatim = verbatim
        self.shop_anchor = shop_anchor
        self.one_search_per_step = one_search_per_step
        self.running_basket = running_basket
        self.plan_items = plan_items
        self.web_brand_request = web_brand_request
        self.top_k = top_k
        self.max_shops = max_shops
        self.view_per_item = view_per_item
        self.basket_width = basket_width
        self.extra_rounds = extra_rounds
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

    def _item_query(self, spec: ItemSpec) -> str:
        """The first-round search text of an item: its words as written (``verbatim``) or the parsed text."""
        return spec.text.strip() if self.verbatim else (spec.search_text or spec.name)

    @staticmethod
    def _search_call(
        item: ItemSpec, q: str, page: int = 1, shop_id: str | None = None, filters: bool = True
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"q": q[:300], "page": page}
        if shop_id:
            params["shop_id"] = shop_id
        if filters and (price := item.price_filter()):
            params["price"] = price
        if filters and (service := item.service_filter()):
            params["service"] = service
        return {"name": "find_product", "parameters": params}

    def _searches(
        self,
        states: list[ItemState],
        wanted: list[tuple[int, str, int, str | None, bool]],
        think: str,
        todo: list[ItemState] | None = None,
    ) -> Generator[str, Step, int]:
        """Run the not-yet-made searches ``(item, q, page, shop, filters)`` in one step; returns how many."""
        calls, owners = [], []
        for i, q, page, shop, filters in wanted:
            if not q.strip():
                continue
            call = self._search_call(states[i].spec, q, page, shop, filters)
            sig = repr(sorted(call["parameters"].items()))
            if sig in states[i].seen_calls:
                continue
            states[i].seen_calls.add(sig)
            calls.append(call)
            owners.append((i, page))
        if not calls:
            return 0
        if self.one_search_per_step:
            for call, (i, page) in zip(calls, owners, strict=True):
                step_calls = [call]
                shop = call["parameters"].get("shop_id")
                basket = self._basket_so_far(states, shop) if self.running_basket else ""
                if basket:
                    # The search first: the turn's first word still decides "search on or recommend".
                    step_calls.append({"name": "recommend_product", "parameters": {"product_ids": basket}})
                step_think = self._todo(todo or states, i) if self.plan_items else think
                result = (yield from self._run(step_think, step_calls))[0]
                states[i].add(result[: self.top_k] if isinstance(result, list) else result, (page - 1) * 10)
            return len(calls)
        results = yield from self._run(think, calls)
        for (i, page), result in zip(owners, results, strict=True):
            states[i].add(result[: self.top_k] if isinstance(result, list) else result, (page - 1) * 10)
        return len(calls)

    def _todo(self, states: list[ItemState], first: int) -> str:
        """The items from ``first`` to the last, one per line, each in the words it is searched with (cut as
        a search query is)."""
        return "\n".join(self._item_query(st.spec)[:300] for st in states[first:])

    def _basket_so_far(self, states: list[ItemState], shop: str | None) -> str:
        """The best pick (by search evidence) of each item found so far, in request order and contiguous from
        the first item (inside ``shop`` where it holds a candidate), as ``recommend_product`` ids."""
        picks: list[str] = []
        for st in states:
            ranked = [c for c in self._ranked(st, {}) if c.product_id not in picks]
            inside = [c for c in ranked if shop and c.shop_id == shop]
            pick = (inside or ranked)[:1]
            if not pick:
                break
            picks.append(pick[0].product_id)
        return ",".join(picks)

    def _view(self, ids: Sequence[str], views: dict[str, dict[str, Any]]) -> Generator[str, Step, None]:
        todo = [i for i in dict.fromkeys(ids) if i not in views]
        if not todo:
            return
        (result,) = yield from self._run(
            f"Inspecting {len(todo)} candidates' SKU options and attributes against the stated requirements.",
            [{"name": "view_product_information", "parameters": {"product_ids": ",".join(todo)}}],
        )
        for view in result if isinstance(result, list) else []:
            if isinstance(view, dict) and "product_id" in view:
                views[str(view["product_id"])] = view
        for pid in todo:
            views.setdefault(pid, {})  # unknown id: do not ask again

    # --- scoring --------------------------------------------------------------------------------------
    @staticmethod
    def _refresh(state: ItemState, views: dict[str, dict[str, Any]]) -> None:
        """Recompute which seen values the item's text states (after its head, and in its head only)."""
        pairs = [p for pid in state.hits for p in _pairs_of(views.get(pid))]
        spec = state.spec
        state.mentioned = mentioned_values(spec.value_text, pairs) if pairs else set()
        head = mentioned_values(spec.head_text, pairs) if pairs and spec.head_text else set()
        state.head_mentioned = head - state.mentioned

    def _candidate(self, state: ItemState, pid: str, views: dict[str, dict[str, Any]]) -> Candidate:
        spec, hit = state.spec, state.hits[pid]
        view = views.get(pid)
        price = float(hit.get("price") or 0.0)
        priced = spec.price_lo is not None or spec.price_hi is not None
        units = int(priced) + len(spec.services)
        got = int(spec.price_ok(price)) if priced else 0
        services = hit.get("service") or []
        got += sum(1 for s in spec.services if s in services)
        hard = got / units if units else 1.0
        head_values = value_hits(state.head_mentioned, view)
        values = (
            value_hits(state.mentioned, view) + pair_hits(spec.pairs, view) + self.head_weight * head_values
        )
        key_hits = sum(
            1 for k, v in _pairs_of(view) if v.lower() in state.mentioned and key_named(spec.value_text, k)
        )
        title = str(hit.get("title", ""))
        if spec.title:
            a, b = _tokens(spec.title), _tokens(title)
            text = 1.0 if title == spec.title else len(a & b) / max(1, len(a | b))
        elif state.name_tokens:
            text = len(state.name_tokens & _tokens(title)) / len(state.name_tokens)
        else:
            text = 0.0
        return Candidate(
            pid,
            str(hit.get("shop_id", "")),
            title,
            price,
            hard,
            values,
            text,
            state.rank.get(pid, 10**6),
            view is not None,
            head_values,
            key_hits,
        )

    def _ranked(self, state: ItemState, views: dict[str, dict[str, Any]]) -> list[Candidate]:
        cands = [self._candidate(state, pid, views) for pid in state.hits]
        return sorted(cands, key=Candidate.key, reverse=True)

    @staticmethod
    def _weak(state: ItemState, best: Candidate | None, views: dict[str, dict[str, Any]]) -> bool:
        """The best candidate misses a stated value, a filter, or most name words."""
        if best is None or best.hard < 1 or best.text < 0.5:
            return True
        pool, variants = _values_of(views.get(best.product_id))
        held = pool.union(*variants)
        return bool(state.mentioned - held)

    def _to_view(self, state: ItemState, views: dict[str, dict[str, Any]], k: int) -> list[str]:
        cands = [c for c in self._ranked(state, views) if c.product_id not in views]
        # Search position first: the full-text search already weighs the stated values.
        cands.sort(key=lambda c: (c.hard, -c.rank, round(c.text, 1)), reverse=True)
        return [c.product_id for c in cands[:k]]

    # --- the plan -------------------------------------------------------------------------------------
    def _plan(self, obs: Observation, tools: set[str]) -> Plan:
        category = str(obs.problem.get("category") or "")
        if category.lower() == "web" and "web_search" in tools:
            yield from self._web_plan(obs.query)
            return
        spec = parse_query(obs.query, category)
        views: dict[str, dict[str, Any]] = {}
        states = [
            ItemState(spec=item, name_tokens=_tokens(item.name or item.search_text)) for item in spec.items
        ]
        multi = len(states) > 1
        use_shop = multi and (
            spec.same_shop or (spec.voucher is not None and spec.voucher.voucher_type == "shop")
        )
        shop_picks: dict[str, list[list[Candidate]]] = {}
        if use_shop and self.shop_anchor:
            yield from self._search_items(states[:1], views, todo=states)
            shop_picks = yield from self._anchor_shops(states, views)
        else:
            yield from self._search_items(states, views)
            if use_shop:
                shop_picks = yield from self._search_shops(states, views)
        chosen = self._choose(spec, states, views, shop_picks)
        yield self._finish(chosen, len(states))

    @staticmethod
    def _finish(chosen: Sequence[Candidate | None], n_items: int) -> str:
        ids = [c.product_id for c in chosen if c is not None]
        found = bool(ids) and len(ids) == n_items
        summary = "; ".join(
            f"item {i + 1}: {c.product_id} (filters {c.hard:.0%}, {c.values:g} stated values, "
            f"title words {c.text:.0%})"
            if c
            else f"item {i + 1}: not found"
            for i, c in enumerate(chosen)
        )
        calls: list[dict[str, Any]] = []
        if ids:
            calls.append({"name": "recommend_product", "parameters": {"product_ids": ",".join(ids)}})
        calls.append({"name": "terminate", "parameters": {"status": "success" if found else "failure"}})
        return tagged_step(
            _clean_think(f"Final choice: {summary}. Recommending in the requested order."), calls
        )

    def _search_items(
        self,
        states: list[ItemState],
        views: dict[str, dict[str, Any]],
        todo: list[ItemState] | None = None,
    ) -> Generator[str, Step, None]:
        """Search every item (full text and name, filtered), view the best, then refine weak items (``todo``:
        every item of the request when ``states`` are its first ones, for ``plan_items``)."""
        wanted: list[tuple[int, str, int, str | None, bool]] = []
        for i, st in enumerate(states):
            spec = st.spec
            text = (i, self._item_query(spec), 1, None, not self.verbatim)
            title = [(i, spec.title, 1, None, True)] if spec.title else []
            name = [(i, spec.name, 1, None, True)] if spec.name and spec.name != spec.search_text else []
            chosen = [text, *title, *name][: self.search_forms]  # the request text first when cut
            wanted += [f for f in [*title, text, *name] if f in chosen]
        yield from self._searches(
            states, wanted, f"Searching {len(states)} item(s) with their price and service filters.", todo
        )
        yield from self._view(
            [p for st in states for p in self._to_view(st, views, self.view_per_item)], views
        )
        for st in states:
            self._refresh(st, views)
        for round_no in range(self.extra_rounds):
            weak = [
                i
                for i, st in enumerate(states)
                if self._weak(st, next(iter(self._ranked(st, views)), None), views)
            ]
            if not weak:
                break
            wanted = []
            for i in weak:
                st = states[i]
                values = " ".join(sorted(st.mentioned))
                if round_no == 0:
                    wanted.append((i, f"{st.spec.name} {values}".strip(), 1, None, True))
                    wanted.append((i, st.spec.search_text or st.spec.name, 2, None, True))
                else:
                    wanted.append((i, st.spec.search_text or st.spec.name, 3, None, True))
                    wanted.append((i, f"{st.spec.name} {values}".strip(), 2, None, True))
                    if st.spec.price_filter() or st.spec.service_filter():
                        wanted.append((i, st.spec.search_text or st.spec.name, 1, None, False))
            n = yield from self._searches(
                states,
                wanted,
                f"The best match for item(s) {[i + 1 for i in weak]} is weak: searching further.",
            )
            if not n:
                break
            yield from self._view(
                [p for i in weak for p in self._to_view(states[i], views, self.view_per_item)], views
            )
            for i in weak:
                self._refresh(states[i], views)

    def _search_shops(
        self, states: list[ItemState], views: dict[str, dict[str, Any]]
    ) -> Generator[str, Step, dict[str, list[list[Candidate]]]]:
        """Search every item inside the shops that hold good candidates for most items (two rounds at most;
        the second only when no shop holds a best-fitting candidate for every item)."""
        tried: set[str] = set()
        for round_no in range(2):
            ranked = [self._ranked(st, views) for st in states]
            best_fit = [r[0].fit() if r else (0.0, 0.0, 0.0) for r in ranked]
            if round_no and self._full_shops(states, views, best_fit):
                break
            coverage: dict[str, list[float]] = {}
            for i, cands in enumerate(ranked):
                for c in cands[:40]:
                    row = coverage.setdefault(c.shop_id, [0.0] * len(states))
                    good = 1.0 if c.fit() >= best_fit[i] else 0.5 if c.hard >= 1 and c.text >= 0.5 else 0.2
                    row[i] = max(row[i], good)
            order = sorted(
                (s for s in coverage if s not in tried),
                key=lambda s: (sum(1 for x in coverage[s] if x > 0), sum(coverage[s])),
                reverse=True,
            )[: self.max_shops]
            if not order:
                break
            tried.update(order)
            wanted: list[tuple[int, str, int, str | None, bool]] = [
                (i, self._item_query(st.spec), 1, shop, not self.verbatim)
                for shop in order
                for i, st in enumerate(states)
            ]
            yield from self._searches(
                states,
                wanted,
                f"The items must come from one shop: searching each item inside {len(order)} shops.",
            )
            by_shop = self._by_shop(states, views)
            ids = [c.product_id for shop in order for cands in by_shop.get(shop, []) for c in cands[:4]]
            yield from self._view([i for i in ids if i not in views], views)
            for st in states:
                self._refresh(st, views)
        return {shop: per_item for shop, per_item in self._by_shop(states, views).items() if all(per_item)}

    def _anchor_shops(
        self, states: list[ItemState], views: dict[str, dict[str, Any]]
    ) -> Generator[str, Step, dict[str, list[list[Candidate]]]]:
        """Search the other items inside the shop of the first item's best candidate; when that shop lacks
        one of them, inside the next candidate's shop (``max_shops`` shops at most)."""
        tried: list[str] = []
        for cand in self._ranked(states[0], views):
            if len(tried) >= self.max_shops:
                break
            if not cand.shop_id or cand.shop_id in tried:
                continue
            tried.append(cand.shop_id)
            wanted: list[tuple[int, str, int, str | None, bool]] = [
                (i, self._item_query(st.spec), 1, cand.shop_id, not self.verbatim)
                for i, st in enumerate(states[1:], start=1)
            ]
            yield from self._searches(
                states, wanted, f"The items must come from one shop: searching the others in {cand.shop_id}."
            )
            picks = self._by_shop(states, views).get(cand.shop_id)
            if picks and all(picks):
                return {cand.shop_id: picks}
        return {shop: per_item for shop, per_item in self._by_shop(states, views).items() if all(per_item)}

    def _by_shop(
        self, states: list[ItemState], views: dict[str, dict[str, Any]]
    ) -> dict[str, list[list[Candidate]]]:
        """Every shop seen, with its candidates per item (best first; an item may have none)."""
        out: dict[str, list[list[Candidate]]] = {}
        for i, st in enumerate(states):
            for c in self._ranked(st, views):
                out.setdefault(c.shop_id, [[] for _ in states])[i].append(c)
        return out

    def _full_shops(
        self, states: list[ItemState], views: dict[str, dict[str, Any]], best_fit: list[tuple[float, ...]]
    ) -> dict[str, list[list[Candidate]]]:
        """Shops holding, for every item, a candidate as good as the best one found anywhere."""
        return {
            shop: per_item
            for shop, per_item in self._by_shop(states, views).items()
            if all(p and p[0].fit() >= best_fit[i] for i, p in enumerate(per_item))
        }

    def _choose(
        self,
        spec: QuerySpec,
        states: list[ItemState],
        views: dict[str, dict[str, Any]],
        shop_picks: dict[str, list[list[Candidate]]],
    ) -> list[Candidate | None]:
        """The best assignment of distinct products to the items: from one shop when required, within the
        voucher budget when there is one."""
        global_cands = [self._ranked(st, views) for st in states]
        best_fit = [c[0].fit() if c else (0.0, 0.0, 0.0) for c in global_cands]
        voucher = spec.voucher
        pools = list(shop_picks.values())
        if not shop_picks or (
            voucher is not None and voucher.voucher_type == "platform" and not spec.same_shop
        ):
            pools.append(global_cands)
        best: tuple[tuple[float, ...], tuple[Candidate, ...]] | None = None
        for per_item in pools:
            found = self._assign(per_item, best_fit, voucher)
            if found is not None and (best is None or found[0] > best[0]):
                best = found
        if best is not None:
            return list(best[1])
        return _distinct_picks(global_cands)

    def _assign(
        self, per_item: list[list[Candidate]], best_fit: list[tuple[float, ...]], voucher: VoucherSpec | None
    ) -> tuple[tuple[float, ...], tuple[Candidate, ...]] | None:
        """The best combination of distinct candidates: most best-fitting items, then (vouchers) passing
        the budget rule, then the most constraints met, title words, and the cheapest or best-ranked."""
        lists = [self._shortlist(cands, voucher is not None) for cands in per_item]
        if any(not lst for lst in lists):
            return None
        best: tuple[tuple[float, ...], tuple[Candidate, ...]] | None = None
        for combo in itertools.product(*lists):
            if len({c.product_id for c in combo}) < len(combo):
                continue
            total = sum(c.price for c in combo)
            ok = voucher.total_ok(total, len({c.shop_id for c in combo})) if voucher is not None else True
            key = (
                float(sum(1 for i, c in enumerate(combo) if c.fit() >= best_fit[i])),
                float(ok),
                sum(c.hard for c in combo),
                sum(c.values for c in combo),
                round(sum(c.text for c in combo), 2),
                sum(c.head_values + c.key_hits for c in combo),
                -sum(c.rank for c in combo),
                -total,
            )
            if best is None or key > best[0]:
                best = (key, combo)
        return best

    def _shortlist(self, cands: list[Candidate], cheap: bool) -> list[Candidate]:
        """The best few candidates of one item, plus (vouchers) the cheapest near-best ones."""
        out = cands[: self.basket_width]
        if cheap and cands:
            top = cands[0]
            near = [c for c in cands if c.fit()[:2] >= top.fit()[:2] and c.text >= top.text - 0.2]
            near.sort(key=lambda c: c.price)
            out += [c for c in near[: self.basket_width] if c not in out]
        return out

    # --- web (knowledge) requests ---------------------------------------------------------------------
    def _web_plan(self, query: str) -> Plan:
        """Find the brand the question describes with ``web_search``, then the named product of it."""
        (result,) = yield from self._run(
            "This request describes the brand only through facts: looking them up on the web first.",
            [{"name": "web_search", "parameters": {"q": query[:300], "max_results": 10}}],
        )
        pages = result.get("observation", []) if isinstance(result, dict) else []
        name = _web_product_name(query)
        brand = _best_brand(query, pages if isinstance(pages, list) else [], name)
        item = parse_item(name)
        state = ItemState(spec=item, name_tokens=_tokens(name))
        views: dict[str, dict[str, Any]] = {}
        first = f"{brand} {query[:300]}" if self.web_brand_request else f"{brand} {name}"
        wanted: list[tuple[int, str, int, str | None, bool]] = [(0, first.strip(), 1, None, True)]
        if brand and self.search_forms > 1:
            wanted += [(0, f"{brand} {name}".strip(), 2, None, True), (0, name, 1, None, True)]
        yield from self._searches(
            [state], wanted, f"The brand is {brand or 'unknown'}; searching for its {name or 'product'}."
        )
        cands = self._ranked(state, views)
        low = brand.lower()
        if low:
            branded = [c for c in cands if low in c.title.lower()]
            if not branded:
                # The answer may sit in the description only: look at the best few.
                yield from self._view([c.product_id for c in cands[:10]], views)
                branded = [
                    c
                    for c in cands
                    if low in str((views.get(c.product_id) or {}).get("description", "")).lower()
                ]
            cands = branded or cands
        cands.sort(key=lambda c: (round(c.text, 2), -c.rank), reverse=True)
        yield self._finish([cands[0] if cands else None], 1)


def _best_brand(query: str, pages: list[Any], name: str = "") -> str:
    """The brand of the knowledge page sharing the most clue words with the question (the words naming the
    product are left out, so product pages that merely describe a similar item do not win)."""
    q = _tokens(query) - _tokens(name)
    best: tuple[int, int] = (0, 0)
    brand = ""
    for page in pages:
        if not isinstance(page, dict):
            continue
        content = str(page.get("content", ""))
        m = _BRAND_RE.search(content)
        if not m:
            continue
        facts = int(bool(re.search(r"\b(?:Founder|Founded|Mascot|founded|started)\b", content)))
        score = (len(q & _tokens(f"{page.get('title', '')} {content}")), facts)
        if score > best:
            best, brand = score, m.group(1).strip()
    return brand


def _web_product_name(query: str) -> str:
    """The product a web question asks for, without the brand clue."""
    sentences = [s for s in _SENTENCE_RE.split(query.strip()) if s]
    asking = [
        s for s in sentences if re.match(r"\s*(?:I want|I need|I'm looking|Can you|Show me|Find|Looking)", s)
    ]
    text = asking[0] if asking else sentences[0] if sentences else query
    text = _CLUE_CUT_RE.sub("", text)
    text = re.sub(r"\s+from them\b.*$", "", text, flags=re.IGNORECASE)
    return head_phrase(text)


def _distinct_picks(per_item: list[list[Candidate]]) -> list[Candidate | None]:
    used: set[str] = set()
    picks: list[Candidate | None] = []
    for cands in per_item:
        pick = next((c for c in cands if c.product_id not in used), None)
        if pick is not None:
            used.add(pick.product_id)
        picks.append(pick)
    return picks


__all__ = ["Candidate", "ItemState", "PlannerAgent", "pair_hits", "value_hits"]
