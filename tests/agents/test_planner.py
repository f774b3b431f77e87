"""The rule-based planner: solves most synthesised problems of each intent, well-formed, budget-aware."""

from __future__ import annotations

import pytest

from shoparena.agents import PlannerAgent, get_agent
from shoparena.catalog.io import CatalogWriter
from shoparena.env import KnowledgeBase, ShopEnv
from shoparena.env.knowledge import KnowledgePage, pages_from_catalog
from shoparena.records.catalog import Product
from shoparena.records.problem import Intent, Problem, RewardItem, Voucher
from shoparena.scoring import ExactSimilarity, LexicalSimilarity, score_trajectory
from shoparena.scoring.bench import ScoringBench
from shoparena.search import SearchIndex, build_index
from shoparena.suites.options import SynthOptions
from shoparena.suites.queries import voucher_appendix
from shoparena.suites.synth import synthesize_problems


def play(agent, index, problem, kb=None):
    env = ShopEnv(index, knowledge=kb)
    obs = env.reset(problem)
    while not obs.done:
        obs = env.step(agent.act(obs, obs.tools)).observation
    return env.trajectory()


# Lower bounds well below what the planner measures on these 12-problem banks over the 2,000-product test
# catalog (seeds 21-23: product 1.00/1.00/1.00, shop 1.00/0.83/0.83, voucher 1.00/1.00/0.92, web
# 0.92/0.83/0.67; n = 40: 0.95 / 0.975 / 0.95 / 0.90). Sibling listings with near-identical titles make
# some problems undecidable from the text alone, so 100 % is not the target.
ASR_BOUNDS = {Intent.PRODUCT: 0.75, Intent.SHOP: 0.6, Intent.VOUCHER: 0.6, Intent.WEB: 0.5}


@pytest.mark.parametrize("intent", list(ASR_BOUNDS))
def test_planner_solves_synthesized_suites(synth, intent) -> None:
    products = list(synth.index.iter_products())
    result = synthesize_problems(products, SynthOptions(n=12, seed=21, intents=(intent,)), engine=synth.index)
    assert len(result.problems) == 12
    kb = KnowledgeBase(pages_from_catalog(products) + [KnowledgePage(**p) for p in result.pages])
    agent = get_agent("planner")
    wins = []
    for problem in result.problems:
        traj = play(agent, synth.index, problem, kb)
        verdict = score_trajectory(
            problem, traj, synth.index, scoring_profile="strict", similarity=LexicalSimilarity()
        )
        assert verdict.format_score == 1.0, problem.problem_id
        assert traj.steps[-1].tool_calls[-1].name == "terminate"
        assert len(traj.steps) <= 15
        recommended = traj.last_recommendation()
        assert recommended is not None
        assert len(recommended.parameters["product_ids"].split(",")) == len(problem.reward)
        wins.append(verdict.success)
    assert sum(wins) / len(wins) >= ASR_BOUNDS[intent], wins
    assert not agent._episodes  # per-episode state is released


def test_web_needs_the_knowledge_page(synth) -> None:
    """Without the bank's brand pages the clue cannot be resolved; with them the planner finds the brand."""
    products = list(synth.index.iter_products())
    result = synthesize_problems(products, SynthOptions(n=6, seed=9, intents=(Intent.WEB,)))
    with_pages = KnowledgeBase(pages_from_catalog(products) + [KnowledgePage(**p) for p in result.pages])
    without = KnowledgeBase(pages_from_catalog(products))
    lexical = LexicalSimilarity()

    def rate(kb: KnowledgeBase) -> float:
        wins = [
            score_trajectory(
                p,
                play(PlannerAgent(), synth.index, p, kb),
                synth.index,
                scoring_profile="strict",
                similarity=lexical,
            ).success
            for p in result.problems
        ]
        return sum(wins) / len(wins)

    assert rate(with_pages) > rate(without)


def _p(pid: str, shop: str, title: str, price: float, **kw) -> Product:
    return Product(
        product_id=pid,
        shop_id=shop,
        category="Home > Kitchen > Mugs",
        title=title,
        price=price,
        sold_count=0,
        **kw,
    )


def test_voucher_basket_respects_budget_and_shop(tmp_path) -> None:
    products = [
        _p("11", "1", "Ceramic Coffee Mug Blue", 150.0, attributes={"color_family": ["blue"]}),
        _p("12", "2", "Ceramic Coffee Mug Blue", 90.0, attributes={"color_family": ["blue"]}),
        _p("13", "1", "Ceramic Coffee Mug Red", 40.0, attributes={"color_family": ["red"]}),
        _p("21", "1", "Bamboo Tea Tray Large", 60.0),
        _p("22", "2", "Bamboo Tea Tray Large", 200.0),
    ]
    with CatalogWriter(tmp_path / "c.jsonl") as w:
        for p in products:
            w.write(p)
    build_index(tmp_path / "c.jsonl", tmp_path / "idx", progress=False)
    index = SearchIndex.open(tmp_path / "idx")
    # Shop voucher: shop 1 holds 150 + 60 = 210 → 210 - 80 = 130 <= 140. The cheaper mix 90 + 60 = 150 spans
    # two shops, so it exceeds the budget with no voucher applying.
    voucher = Voucher(
        voucher_type="shop",
        threshold=200,
        discount_type="fixed",
        face_value=80,
        price_after_voucher=130,
        budget=140,
    )
    query = (
        "I want to buy these products:\n## Product 1\nI want mugs: ceramic coffee mug.\n"
        "1. The `color_family` is `blue`.\n## Product 2\nI want trays: bamboo tea tray."
    ) + voucher_appendix(voucher)
    problem = Problem(
        problem_id="v",
        query=query,
        intent=Intent.VOUCHER,
        category="Voucher",
        voucher=voucher,
        reward=[
            RewardItem(
                product_id="11", title=["Ceramic Coffee Mug Blue"], attributes=[{"color_family": ["blue"]}]
            ),
            RewardItem(product_id="21", title=["Bamboo Tea Tray Large"]),
        ],
    )
    traj = play(PlannerAgent(), index, problem)
    assert traj.last_recommendation().parameters["product_ids"] == "11,21"
    verdict = score_trajectory(problem, traj, index, scoring_profile="strict", similarity=ExactSimilarity())
    assert verdict.success and verdict.budget == 1.0
    # Platform voucher, threshold 100, budget 120: only the cross-shop basket 90 + 60 = 150 -> 70 fits
    # (150 + 60 = 210 -> 130 does not), so the planner must mix shops.
    platform = voucher.model_copy(update={"voucher_type": "platform", "threshold": 100, "budget": 120})
    problem2 = problem.model_copy(
        update={"voucher": platform, "query": query.split("\n\nMy budget")[0] + voucher_appendix(platform)}
    )
    traj = play(PlannerAgent(), index, problem2)
    assert traj.last_recommendation().parameters["product_ids"] == "12,21"
    verdict = score_trajectory(problem2, traj, index, scoring_profile="strict", similarity=ExactSimilarity())
    assert verdict.budget == 1.0


def test_shop_anchor_builds_the_basket_item_by_item(synth) -> None:
    """The regular teacher's shop round: the first item alone, then every other item inside the shop of the
    first item's pick (a shop handle that stood on the first search's result lines), one search per step, one
    id per item, all from that shop unless a shop came back empty."""
    from shoparena.arena.firehose import DEFAULT_TEACHERS

    products = list(synth.index.iter_products())
    result = synthesize_problems(
        products, SynthOptions(n=12, seed=21, intents=(Intent.SHOP,)), engine=synth.index
    )
    agent = PlannerAgent(**DEFAULT_TEACHERS["regular"].planner_options)
    wins = []
    for problem in result.problems:
        traj = play(agent, synth.index, problem)
        items = len(problem.reward)
        first = traj.steps[0].tool_calls
        assert [c.name for c in first] == ["find_product"] and "shop_id" not in first[0].parameters
        shown = {str(hit["shop_id"]) for hit in first[0].result}
        searches = traj.steps[1:-1]
        assert all(len(step.tool_calls) == 1 for step in searches)  # one search per step
        anchored = [step.tool_calls[0].parameters.get("shop_id") for step in searches[: items - 1]]
        assert len(set(anchored)) == 1 and anchored[0] in shown
        ids = traj.last_recommendation().parameters["product_ids"].split(",")
        assert len(ids) == items
        if len(searches) == items - 1:  # no fallback shop: the basket is the anchor shop's
            assert {synth.index.get_product(pid).shop_id for pid in ids} == {anchored[0]}
        bench = ScoringBench([problem], synth.index, LexicalSimilarity())
        wins.append(bench.verdict(problem, traj, "strict").success)
    # Measured 10/12 on this bank; the coverage search of the decisive teacher solves more, in more steps.
    assert sum(wins) >= 6, wins


def test_running_basket_restates_the_picks_so_far_and_changes_no_outcome(synth) -> None:
    """The running teacher: every search after the first carries a ``recommend_product`` of the basket so
    far (one id per item already searched, inside the shop being searched), so the final basket is the
    previous one plus one id; only the last recommendation is scored, so outcomes equal the regular
    teacher's."""
    from shoparena.arena.firehose import DEFAULT_TEACHERS

    products = list(synth.index.iter_products())
    result = synthesize_problems(
        products, SynthOptions(n=12, seed=21, intents=(Intent.SHOP, Intent.VOUCHER)), engine=synth.index
    )
    regular = PlannerAgent(**DEFAULT_TEACHERS["regular"].planner_options)
    running = PlannerAgent(**DEFAULT_TEACHERS["running"].planner_options)
    bench = ScoringBench(result.problems, synth.index, LexicalSimilarity())
    extended = 0
    for problem in result.problems:
        plain, traj = play(regular, synth.index, problem), play(running, synth.index, problem)
        verdicts = [bench.verdict(problem, t, "strict").success for t in (traj, plain)]
        assert verdicts[0] == verdicts[1]
        assert traj.last_recommendation().parameters == plain.last_recommendation().parameters
        baskets = [
            (c.parameters["product_ids"].split(","), step)
            for step in traj.steps
            for c in step.tool_calls
            if c.name == "recommend_product"
        ]
        for ids, step in baskets[:-1]:
            names = [c.name for c in step.tool_calls]
            assert names == ["find_product", "recommend_product"]  # the basket rides after a search
            shop = step.tool_calls[0].parameters.get("shop_id")
            if shop:
                assert synth.index.get_product(ids[0]).shop_id == shop
        sizes = [len(ids) for ids, _ in baskets]
        assert sizes == sorted(sizes) and sizes[0] == 1
        if len(baskets) > 1 and baskets[-1][0][:-1] == baskets[-2][0]:
            extended += 1
    assert extended >= len(result.problems) // 2, extended


def test_planned_teacher_keeps_a_to_do_list_and_changes_no_outcome(synth) -> None:
    """The planned teacher: each search step's think lists the items still to search, the searched one
    first (its first line is the step's query), so the list shrinks item by item and the compact profile
    shows it as request-line handles; the calls and outcomes are the regular teacher's."""
    from shoparena.arena.firehose import DEFAULT_TEACHERS
    from shoparena.formats.native import trajectory_to_chat
    from shoparena.formats.profiles import render_chat

    products = list(synth.index.iter_products())
    result = synthesize_problems(
        products, SynthOptions(n=12, seed=21, intents=(Intent.SHOP, Intent.VOUCHER)), engine=synth.index
    )
    regular = PlannerAgent(**DEFAULT_TEACHERS["regular"].planner_options)
    planned = PlannerAgent(**DEFAULT_TEACHERS["planned"].planner_options)
    shrinking = 0
    for problem in result.problems:
        plain, traj = play(regular, synth.index, problem), play(planned, synth.index, problem)
        calls = [[(c.name, c.parameters) for c in s.tool_calls] for s in traj.steps]
        assert calls == [[(c.name, c.parameters) for c in s.tool_calls] for s in plain.steps]
        searches = [s for s in traj.steps if s.tool_calls and s.tool_calls[0].name == "find_product"]
        lists = [s.think.splitlines() for s in searches]
        firsts = [s.tool_calls[0].parameters["q"] for s in searches]
        assert all(t and t[0] == q for t, q in zip(lists, firsts, strict=True))
        rendered = render_chat(trajectory_to_chat(traj), None, "compact")[0]
        shown = [m["content"] for m in rendered if m["role"] == "assistant"]
        assert all(text.startswith("items: U") for text in shown[: len(searches)]) and shown[-1] == ""
        sizes = [len(todo) for todo in lists]
        if len(sizes) > 1 and sizes == list(range(sizes[0], 0, -1)):
            shrinking += 1
    assert shrinking >= len(result.problems) // 2, shrinking
