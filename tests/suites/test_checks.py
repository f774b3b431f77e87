"""Solvability and quality checks, and the planner difficulty card."""

from __future__ import annotations

from _synth_helpers import small_bank, small_index

from shoparena.records.catalog import Product, ProductHit
from shoparena.records.problem import Intent, Problem, RewardItem
from shoparena.scoring import DictLookup
from shoparena.suites.checks import (
    ProblemChecker,
    check_problems,
    difficulty_card,
    discriminative_reasons,
    render_card_markdown,
    run_planner,
)


def _product(pid: str, title: str, **kw) -> Product:
    fields = {"shop_id": "7", "category": "Home > Lamps", "price": 100.0, "sold_count": 1} | kw
    return Product(product_id=pid, title=title, **fields)


class _Engine:
    """A fake search engine returning fixed hits for every query."""

    def __init__(self, hits: list[Product]) -> None:
        self.hits = hits

    def find_product(self, q: str, page: int = 1, **_: object) -> list[ProductHit]:
        return [
            ProductHit(
                product_id=p.product_id,
                shop_id=p.shop_id,
                title=p.title,
                price=p.price,
                service=list(p.service),
                sold_count=p.sold_count,
            )
            for p in self.hits
        ]


def _problem(query: str, item: RewardItem) -> Problem:
    return Problem(
        problem_id=str(abs(hash(query)) % 10**8), query=query, intent=Intent.PRODUCT, reward=[item]
    )


GT = _product("1", "Glow Desk Lamp Warm White", service=["COD"])
ITEM = RewardItem(product_id="1", title=[GT.title], service=["COD"])


def test_rejects_duplicates_title_leaks_and_unsatisfiable_gt_with_reasons() -> None:
    lookup = DictLookup([GT])
    checker = ProblemChecker(None, lookup)
    ok = checker.check(_problem("a desk lamp with cash on delivery", ITEM))
    dup = checker.check(_problem("A desk  lamp with cash on delivery", ITEM))
    leak = checker.check(_problem("glow desk lamp warm white please", ITEM))
    bad_item = RewardItem(product_id="1", title=[GT.title], service=["flashsale"])
    unsat = checker.check(_problem("a flash-sale desk lamp", bad_item))
    missing = checker.check(_problem("a lamp", RewardItem(product_id="9", title=["x"])))
    assert ok.ok and ok.reasons == []
    assert [r.split(":")[0] for r in dup.reasons] == ["unique"]
    assert leak.reasons[0].startswith("query: contains the whole title")
    assert any(r.startswith("solvable: slot 0 GT misses") for r in unsat.reasons)
    assert missing.reasons[0].startswith("solvable: GT product(s)")
    report = checker.report
    assert report.checked == report.kept + report.rejected == 5
    assert report.kept == 1 and report.reasons == {"unique": 1, "query": 1, "solvable": 2}


def test_discriminative_needs_a_wrong_first_hit_or_a_near_miss() -> None:
    problem = _problem("a warm desk lamp with COD", ITEM)
    sibling_ok = _product("2", "Glow Desk Lamp Warm White", service=["COD"])
    sibling_miss = _product("3", "Glow Desk Lamp Warm White")
    unrelated = _product("4", "Garden Hose 10m")
    lookup = DictLookup([GT, sibling_ok, sibling_miss, unrelated])
    assert discriminative_reasons(problem, _Engine([GT, unrelated]), lookup, ["warm desk lamp"])
    assert discriminative_reasons(problem, _Engine([GT, sibling_ok]), lookup, ["warm desk lamp"])
    assert discriminative_reasons(problem, _Engine([GT, sibling_miss]), lookup, ["warm desk lamp"]) == []
    assert discriminative_reasons(problem, _Engine([unrelated, GT]), lookup, ["warm desk lamp"]) == []


def test_check_problems_keeps_a_generated_bank() -> None:
    _, engine, _ = small_index()
    problems = small_bank().problems
    kept, report = check_problems(problems, engine, names=small_bank().names)
    assert len(kept) == len(problems) and report.rejected == 0


def test_planner_card_counts_add_up() -> None:
    _, engine, _ = small_index()
    problems = [p for p in small_bank().problems if p.intent is not Intent.WEB][::6]
    verdicts = run_planner(problems, engine)
    card = difficulty_card(problems, verdicts)
    assert sum(row["all"][1] for row in card.values()) == len(problems)
    assert sum(row["all"][0] for row in card.values()) == sum(v.success for v in verdicts)
    for row in card.values():
        assert row["all"][1] == sum(n for key, (_, n) in row.items() if key != "all")
    assert "| intent | easy | medium | hard | all |" in render_card_markdown(card)
