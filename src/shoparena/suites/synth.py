"""Problem synthesis over a catalog, following upstream's recipe (environment spec §7).

* **Constraints per slot** (§7.1): product id and title always; the first SKU variant whose coin succeeds;
  one value per attribute key that passes its coin; each service on its own coin; a price bound unless the
  problem is a voucher one (``less than`` off by default, behind ``allow_less_than``).
* **Tasks** (§7.2): product = one unused product; shop = 2-4 products of one shop holding enough unused
  products; voucher = platform (1-4 products anywhere) or shop (2-4 from one shop), a threshold, a fixed or
  percentage-with-cap discount and ``budget = ceil(pav) + randint(0, ceil(0.1 pav))``. Products are never
  reused.
* **Knowledge (web)**: the answer is the GT product's brand, which occurs in its title; the query describes
  the brand only through facts (founder, city and year, or mascot) written on a knowledge-base page that names
  no product, so the agent has to ``web_search`` first. The pages are returned with the bank (JSONL sidecar).
* **Queries**: :mod:`shoparena.suites.queries` (templates; optional LLM rewrite), the voucher appendix exact.
* **Labels**: ORO difficulty per §7.4 (:func:`difficulty_label`), ``problem_id = sha256(query)[:16]`` and ORO
  display titles (``"Shop 4"``).

Every candidate goes through :class:`~shoparena.suites.checks.ProblemChecker`; rejected ones are counted with
their reason and replaced, so ``generated == kept + rejected``. The output depends only on the catalog, the
options and the seed.
"""

from __future__ import annotations

import math
import random
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field

from shoparena.env.knowledge import knowledge_path_for
from shoparena.jsonl import LineWriter
from shoparena.records.catalog import Product
from shoparena.records.problem import (
    CATEGORY_OF_INTENT,
    Intent,
    Problem,
    ProblemSource,
    RewardItem,
    Voucher,
    problem_id_for_query,
)
from shoparena.scoring.lookup import DictLookup
from shoparena.suites.checks import CheckReport, ProblemChecker
from shoparena.suites.options import SynthOptions
from shoparena.suites.queries import (
    LLMRewriter,
    article,
    item_text,
    voucher_appendix,
    write_product_query,
    write_shop_query,
    write_voucher_query,
)

KB_URL_ROOT = "https://kb.shoparena.local"


# ------------------------------------------------------------------------------------------------ sampling


def coin(rng: random.Random) -> bool:
    """Upstream's coin: ``randint(0, 1) == 1``."""
    return rng.randint(0, 1) == 1


def sample_price(
    price: float, rng: random.Random, *, allow_less_than: bool = False
) -> dict[str, list[Any]] | None:
    """One price entry per §7.1 (``less than``, ``greater than``, ``between`` in order; first valid wins)."""
    if price <= 0:
        return None
    for op in ("less than", "greater than", "between"):
        if not coin(rng):
            continue
        lo = int(price - rng.randint(0, int(price)))
        hi = int(price + rng.randint(0, int(price)))
        if op == "less than":
            lo = 0
            if not allow_less_than or hi <= price:
                continue
            return {"less than": [0, hi]}
        if lo < 0 or lo >= price:
            continue
        if op == "between":
            if hi <= price:
                continue
            return {"between": [lo, hi]}
        return {"greater than": [lo, None]}
    return None


def sample_item(
    product: Product, rng: random.Random, *, with_price: bool = True, allow_less_than: bool = False
) -> RewardItem:
    """The constraints of one slot sampled from its GT product (§7.1)."""
    fields: dict[str, Any] = {"product_id": product.product_id, "title": [product.title]}
    for key in sorted(product.sku_options, key=int):
        if coin(rng):
            fields["sku_options"] = [dict(product.sku_options[key])]
            break
    attrs = [
        {key: [rng.choice(values)]} for key, values in product.attributes.items() if values and coin(rng)
    ]
    if attrs:
        fields["attributes"] = attrs
    services = [s for s in product.service if coin(rng)]
    if services:
        fields["service"] = services
    if with_price:
        entry = sample_price(product.price, rng, allow_less_than=allow_less_than)
        if entry is not None:
            fields["price"] = [entry]
    return RewardItem(**fields)


def sample_voucher(total: float, voucher_type: str, rng: random.Random) -> Voucher | None:
    """A voucher for a GT basket of price ``total`` (§7.2); None when this draw is rejected."""
    if total < 100:
        return None
    thr = rng.randint(int(0.1 * total), int(0.9 * total))
    fields: dict[str, Any]
    if coin(rng):
        face = rng.randint(int(0.1 * thr), int(0.5 * thr))
        pav = total - face
        fields = {"discount_type": "fixed", "face_value": face}
    else:
        d = rng.randint(10, 50)
        cap = rng.randint(int(thr * d / 100), thr)
        if not cap > thr * d / 100:
            return None
        pav = max(total * (1 - d / 100), total - cap)
        fields = {"discount_type": "percentage", "discount": d / 100, "cap": cap}
    budget = math.ceil(pav) + rng.randint(0, math.ceil(0.1 * pav))
    return Voucher(
        voucher_type=voucher_type,  # type: ignore[arg-type]
        threshold=thr,
        price_after_voucher=float(pav),
        budget=budget,
        **fields,
    )


# ------------------------------------------------------------------------------------------------ labels


def difficulty_score(problem: Problem) -> int:
    """The §7.4 score: product = id + title + SKU dicts + attribute dicts + price entries + services; shop =
    items; voucher = items + 1 (shop voucher) + 1 (percentage)."""
    if problem.intent is Intent.SHOP:
        return len(problem.reward)
    if problem.intent is Intent.VOUCHER:
        v = problem.voucher
        assert v is not None
        return len(problem.reward) + (v.voucher_type == "shop") + (v.discount_type == "percentage")
    item = problem.reward[0]
    return 2 + len(item.sku_options) + len(item.attributes) + len(item.price) + len(item.service)


def difficulty_label(problem: Problem) -> str:
    """ORO's difficulty label (spec §7.4); web problems (no upstream rule) use the product thresholds on
    the knowledge hop: ``medium``, or ``hard`` when the answer brand has several products in the GT leaf
    (recorded by synthesis in ``problem.difficulty``; loaded web problems keep theirs)."""
    score = difficulty_score(problem)
    if problem.intent is Intent.SHOP:
        return {2: "easy", 3: "medium"}.get(score, "hard")
    if problem.intent is Intent.VOUCHER:
        return "easy" if score <= 2 else "medium" if score <= 4 else "hard"
    if problem.intent is Intent.WEB:
        return problem.difficulty or "medium"
    return "easy" if score <= 4 else "medium" if score <= 6 else "hard"


# ------------------------------------------------------------------------------------------------ knowledge

_FIRST_TEXT = (
    "Maria Jose Ana Carlo Paolo Liza Ramon Teresa Miguel Andrea Rafael Carmela Nico Bea Marco Joy "
    "Enrique Isabel Dante Rosa Victor Camille Hiro Mei Arjun Lena Tomas Ingrid Kofi Sofia "
)
_FIRST = tuple(_FIRST_TEXT.split())
_LAST_TEXT = (
    "Santos Reyes Cruz Bautista Garcia Mendoza Villanueva Ramos Aquino Navarro Dela Rosa Castillo Tan "
    "Lim Go Sy Ong Morales Flores Soriano Tanaka Chen Kapoor Novak Lindqvist Mensah Rossi Weber Silva "
    "Kowalski "
)
_LAST = tuple(_LAST_TEXT.split())
_CITIES = (
    "Cebu City",
    "Davao",
    "Iloilo",
    "Baguio",
    "Quezon City",
    "Makati",
    "Pasig",
    "Bacolod",
    "Zamboanga",
    "Cagayan de Oro",
    "Taipei",
    "Osaka",
    "Shenzhen",
    "Busan",
    "Penang",
    "Bangkok",
    "Jakarta",
    "Hanoi",
    "Melbourne",
    "Milan",
    "Lyon",
    "Porto",
    "Gdansk",
    "Austin",
    "Toronto",
)
_ANIMALS = (
    "carabao",
    "tarsier",
    "eagle",
    "owl",
    "fox",
    "panda",
    "otter",
    "tiger",
    "turtle",
    "dolphin",
    "rooster",
    "parrot",
    "koala",
    "penguin",
    "gecko",
    "rabbit",
    "lion",
    "whale",
    "bee",
    "crab",
)
_PET_NAMES = (
    "Bong",
    "Tala",
    "Kiko",
    "Mimi",
    "Dodong",
    "Lulu",
    "Pipo",
    "Nena",
    "Bantay",
    "Chiko",
    "Ising",
    "Popoy",
    "Tisoy",
    "Moymoy",
    "Biboy",
    "Kulot",
    "Inday",
    "Toto",
    "Dindo",
    "Ningning",
)


@dataclass(frozen=True, slots=True)
class BrandFacts:
    """Invented facts about one brand, written on its knowledge-base page."""

    brand: str
    founder: str
    city: str
    year: int
    animal: str
    mascot: str

    def page(self) -> dict[str, str]:
        """The ``{url, title, content}`` page; it names the brand but no product."""
        slug = "-".join("".join(c if c.isalnum() else " " for c in self.brand.lower()).split())
        content = (
            f"Brand: {self.brand}. Founded: {self.year}, {self.city}. Founder: {self.founder}. "
            f"Mascot: a {self.animal} named {self.mascot}. {self.brand} was started in {self.city} in "
            f"{self.year} by {self.founder}. Its mascot, a {self.animal} called {self.mascot}, appears on "
            f"the packaging of most of its lines."
        )
        return {"url": f"{KB_URL_ROOT}/wiki/{slug}", "title": f"{self.brand} (company)", "content": content}


def brand_facts(brands: Sequence[str], seed: int) -> dict[str, BrandFacts]:
    """Unique invented facts for each brand (deterministic for the sorted brand list and the seed)."""
    rng = random.Random(f"{seed}:brand-facts")
    used_founders: set[str] = set()
    used_mascots: set[tuple[str, str]] = set()
    out: dict[str, BrandFacts] = {}
    for brand in sorted(set(brands)):
        for _ in range(200):
            founder = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
            mascot = (rng.choice(_ANIMALS), rng.choice(_PET_NAMES))
            if founder not in used_founders and mascot not in used_mascots:
                break
        else:
            continue  # vocabulary exhausted: this brand gets no page
        used_founders.add(founder)
        used_mascots.add(mascot)
        out[brand] = BrandFacts(brand, founder, rng.choice(_CITIES), rng.randint(1950, 2021), *mascot)
    return out


def _web_query(product: Product, facts: BrandFacts, rng: random.Random) -> tuple[str, str]:
    text = item_text(
        RewardItem(product_id=product.product_id, title=[product.title]), product, rng, exclude=[facts.brand]
    )
    name = text.name
    art = article(name)
    if rng.random() < 0.5:
        clue = rng.choice(
            (
                f"the brand that {facts.founder} founded in {facts.city} in {facts.year}",
                f"the company {facts.founder} started in {facts.year} in {facts.city}",
                f"the brand founded by {facts.founder} ({facts.city}, {facts.year})",
            )
        )
    else:
        clue = rng.choice(
            (
                f"the brand whose mascot is a {facts.animal} named {facts.mascot}",
                f"the company with the {facts.animal} mascot called {facts.mascot}",
                f"the maker whose mascot is {facts.mascot} the {facts.animal}",
            )
        )
    shape = rng.randrange(3)
    if shape == 0:
        query = f"I'm looking for {art} {name} made by {clue}. Which one would you recommend?"
    elif shape == 1:
        query = f"Can you find {art} {name} from {clue}?"
    else:
        query = f"My friend swears by {clue}. I want {art} {name} from them."
    return query, name


# ------------------------------------------------------------------------------------------------ synthesis


class SynthReport(BaseModel):
    """What one synthesis run did; ``generated == kept + rejected``."""

    model_config = ConfigDict(extra="forbid")

    catalog_products: int
    requested: dict[str, int]
    generated: int = 0
    kept: int = 0
    rejected: int = 0
    kept_by_intent: dict[str, int] = Field(default_factory=dict)
    kept_by_difficulty: dict[str, dict[str, int]] = Field(default_factory=dict)
    rejected_by_reason: dict[str, int] = Field(default_factory=dict)
    rejected_examples: list[dict[str, Any]] = Field(default_factory=list)
    shortfall: dict[str, int] = Field(default_factory=dict, description="Quota minus kept, per intent.")
    knowledge_pages: int = 0
    rewriter: dict[str, int] | None = None
    seconds: float = 0.0


@dataclass(slots=True)
class SynthResult:
    """The kept problems, the name words of each (for checks), knowledge pages and the report."""

    problems: list[Problem]
    names: dict[str, list[str]]
    pages: list[dict[str, str]]
    report: SynthReport
    checks: CheckReport = field(default_factory=CheckReport)


class _Pool:
    """Unused products, by shop, drawn without replacement."""

    def __init__(self, products: Sequence[Product], rng: random.Random) -> None:
        self.rng = rng
        self.products = [p for p in products if p.price > 0]
        self.used: set[str] = set()
        by_shop: dict[str, list[Product]] = defaultdict(list)
        for p in self.products:
            by_shop[p.shop_id].append(p)
        self.by_shop = by_shop
        self.shops = sorted(by_shop)

    def one(self) -> Product | None:
        for _ in range(50):
            p = self.rng.choice(self.products)
            if p.product_id not in self.used:
                return p
        free = [p for p in self.products if p.product_id not in self.used]
        return self.rng.choice(free) if free else None

    def many(self, k: int) -> list[Product] | None:
        free = [p for p in self.products if p.product_id not in self.used]
        return self.rng.sample(free, k) if len(free) >= k else None

    def from_one_shop(self, k: int) -> list[Product] | None:
        for _ in range(100):
            shop = self.rng.choice(self.shops)
            free = [p for p in self.by_shop[shop] if p.product_id not in self.used]
            if len(free) >= k:
                return self.rng.sample(free, k)
        return None

    def take(self, products: Sequence[Product]) -> None:
        self.used.update(p.product_id for p in products)


class _Synth:
    def __init__(
        self,
        products: Sequence[Product],
        options: SynthOptions,
        checker: ProblemChecker | None,
        rewriter: LLMRewriter | None,
    ) -> None:
        self.options = options
        self.rng = random.Random(options.seed)
        self.text_rng = random.Random(f"{options.seed}:text")
        self.pool = _Pool(products, self.rng)
        self.checker = checker
        self.rewriter = rewriter
        self.counters: dict[str, int] = defaultdict(int)
        self._facts: dict[str, BrandFacts] | None = None
        self._branded: list[Product] | None = None
        self._leaf_brand: dict[tuple[str, str], int] = {}

    # --- one candidate per intent --------------------------------------------------------------------
    def product(self) -> tuple[Problem, list[str]] | None:
        p = self.pool.one()
        if p is None:
            return None
        self.pool.take([p])
        item = sample_item(p, self.rng, allow_less_than=self.options.allow_less_than)
        query, names = write_product_query(item, p, self.text_rng)
        query = self._rewrite(query, [item])
        return self._problem(Intent.PRODUCT, query, [item]), names

    def shop(self) -> tuple[Problem, list[str]] | None:
        chosen = self.pool.from_one_shop(self.rng.randint(2, 4))
        if chosen is None:
            return None
        self.pool.take(chosen)
        items = [sample_item(p, self.rng, allow_less_than=self.options.allow_less_than) for p in chosen]
        query, names = write_shop_query(items, chosen, self.text_rng)
        query = self._rewrite(query, items, multi_shop=True)
        return self._problem(Intent.SHOP, query, items), names

    def voucher(self) -> tuple[Problem, list[str]] | None:
        vtype = "platform" if coin(self.rng) else "shop"
        chosen = (
            self.pool.many(self.rng.randint(1, 4))
            if vtype == "platform"
            else self.pool.from_one_shop(self.rng.randint(2, 4))
        )
        if not chosen:
            return None
        voucher = sample_voucher(sum(p.price for p in chosen), vtype, self.rng)
        if voucher is None:
            return None
        self.pool.take(chosen)
        items = [sample_item(p, self.rng, with_price=False) for p in chosen]
        query, names = write_voucher_query(items, chosen, voucher, self.text_rng)
        if self.rewriter is not None:
            body = query[: -len(voucher_appendix(voucher))]
            query = self._rewrite(body, items, multi_shop=vtype == "shop") + voucher_appendix(voucher)
        return self._problem(Intent.VOUCHER, query, items, voucher=voucher), names

    def _knowledge_tables(self) -> tuple[dict[str, BrandFacts], list[Product]]:
        if self._facts is None or self._branded is None:
            branded = [
                p for p in self.pool.products if len(p.brand) >= 3 and p.brand.lower() in p.title.lower()
            ]
            self._facts = brand_facts([p.brand for p in branded], self.options.seed)
            self._branded = [p for p in branded if p.brand in self._facts]
            for p in self.pool.products:
                key = (p.brand, p.category)
                self._leaf_brand[key] = self._leaf_brand.get(key, 0) + 1
        return self._facts, self._branded

    def web(self) -> tuple[Problem, list[str]] | None:
        facts, branded = self._knowledge_tables()
        if not branded:
            return None
        for _ in range(50):
            p = self.rng.choice(branded)
            if p.product_id not in self.pool.used:
                break
        else:
            return None
        self.pool.take([p])
        query, name = _web_query(p, facts[p.brand], self.text_rng)
        item = RewardItem(product_id=p.product_id, title=[p.title])
        siblings = self._leaf_brand.get((p.brand, p.category), 1)
        problem = self._problem(
            Intent.WEB,
            query,
            [item],
            knowledge_attribute=p.brand,
            web_product=p.model_dump(mode="json"),
            difficulty="hard" if siblings > 1 else "medium",
        )
        return problem, [name]

    # --- helpers --------------------------------------------------------------------------------------
    def _rewrite(self, draft: str, items: Sequence[RewardItem], *, multi_shop: bool = False) -> str:
        if self.rewriter is None:
            return draft
        return self.rewriter.rewrite(draft, items, multi_shop=multi_shop)

    def _problem(self, intent: Intent, query: str, reward: list[RewardItem], **extra: Any) -> Problem:
        difficulty = extra.pop("difficulty", None)
        draft = Problem(
            problem_id=problem_id_for_query(query),
            query=query,
            intent=intent,
            reward=reward,
            difficulty=difficulty,
            **extra,
        )
        if not self.options.oro_labels:
            return draft
        return draft.model_copy(
            update={"category": CATEGORY_OF_INTENT[intent], "difficulty": difficulty_label(draft)}
        )

    def label(self, problem: Problem) -> Problem:
        """Final ORO display title, numbered per category in bank order; ids are written out."""
        category = problem.category_label
        self.counters[category] += 1
        update: dict[str, Any] = {"source": ProblemSource(format="inline", problem_id_given=True)}
        if self.options.oro_labels:
            update["title"] = f"{category} {self.counters[category]}"
        return problem.model_copy(update=update)


def synthesize_problems(
    products: Sequence[Product],
    options: SynthOptions,
    *,
    engine: Any | None = None,
    rewriter: LLMRewriter | None = None,
) -> SynthResult:
    """Synthesise a checked problem bank from catalog products.

    Args:
        products: The catalog (in a fixed order; the bank depends on it).
        options: Sizes, intents, seed and switches.
        engine: Search engine over the same catalog, for the discriminative check (None skips it).
        rewriter: Optional LLM rewriter of the template queries.

    Returns:
        Kept problems in intent order, per-problem name words, knowledge pages and the report.
    """
    started = time.perf_counter()
    lookup = engine if engine is not None else DictLookup(products)
    checker = ProblemChecker(
        engine,
        lookup,
        discriminative=options.discriminative and engine is not None,
        shortcut=options.hard and engine is not None,
    )
    synth = _Synth(products, options, checker, rewriter)
    makers = {
        Intent.PRODUCT: synth.product,
        Intent.SHOP: synth.shop,
        Intent.VOUCHER: synth.voucher,
        Intent.WEB: synth.web,
    }
    quotas = options.quotas()
    report = SynthReport(catalog_products=len(products), requested={i.value: n for i, n in quotas.items()})
    kept: list[Problem] = []
    names: dict[str, list[str]] = {}
    used_brands: set[str] = set()
    for intent, quota in quotas.items():
        got = attempts = 0
        while got < quota and attempts < quota * options.attempts_per_problem:
            attempts += 1
            made = makers[intent]()
            if made is None:
                continue
            problem, slot_names = made
            outcome = checker.check(problem, slot_names)
            report.generated += 1
            if not outcome.ok:
                continue
            problem = synth.label(problem)
            kept.append(problem)
            names[problem.problem_id] = slot_names
            if intent is Intent.WEB:
                used_brands.add(str(problem.knowledge_attribute))
            got += 1
        report.kept_by_intent[intent.value] = got
        if got < quota:
            report.shortfall[intent.value] = quota - got
    checks = checker.report
    report.kept, report.rejected = checks.kept, checks.rejected
    report.rejected_by_reason = dict(sorted(checks.reasons.items()))
    report.rejected_examples = checks.as_dict()["rejected_examples"]
    for p in kept:
        row = report.kept_by_difficulty.setdefault(p.intent.value, {})
        row[p.difficulty or "-"] = row.get(p.difficulty or "-", 0) + 1
    pages: list[dict[str, str]] = []
    if Intent.WEB in quotas and synth._facts:
        # Every brand with facts gets a page (decoys included): the answer page must be searched for.
        pages = [synth._facts[b].page() for b in sorted(synth._facts)]
    report.knowledge_pages = len(pages)
    if rewriter is not None:
        report.rewriter = {"accepted": rewriter.accepted, "fallbacks": rewriter.fallbacks}
    report.seconds = round(time.perf_counter() - started, 3)
    return SynthResult(kept, names, pages, report, checks)


def synthesize_bank(
    index_dir: str | Path,
    out: str | Path,
    options: SynthOptions,
    *,
    fmt: str = "oro",
    rewriter: LLMRewriter | None = None,
) -> SynthReport:
    """Synthesise a bank over an index directory and write it (ORO suite JSON or SB JSONL).

    Web problems need their knowledge pages: they are written to :func:`knowledge_path_for` ``(out)``
    (``{url, title, content}`` JSONL, load with :meth:`~shoparena.env.knowledge.KnowledgeBase.from_jsonl`).
    """
    from shoparena.search import SearchIndex
    from shoparena.suites.loaders import write_oro_suite, write_sb_jsonl

    if fmt not in ("oro", "sb"):
        raise ValueError(f"synthesize_bank: format must be 'oro' or 'sb', got {fmt!r}")
    engine = SearchIndex.open(index_dir)
    products = list(engine.iter_products())
    result = synthesize_problems(products, options, engine=engine, rewriter=rewriter)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "oro":
        write_oro_suite(result.problems, out)
    else:
        write_sb_jsonl(result.problems, out)
    if result.pages:
        with LineWriter(knowledge_path_for(out)) as fh:
            for page in result.pages:
                fh.write(orjson.dumps(page))
    return result.report


__all__ = [
    "BrandFacts",
    "SynthReport",
    "SynthResult",
    "brand_facts",
    "coin",
    "difficulty_label",
    "difficulty_score",
    "sample_item",
    "sample_price",
    "sample_voucher",
    "synthesize_bank",
    "synthesize_problems",
]
