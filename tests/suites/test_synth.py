"""Problem synthesis: determinism, upstream recipe arithmetic, query rules, labels, formats."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from _synth_helpers import small_bank, small_index
from typer.testing import CliRunner

from shoparena.cli.main import app
from shoparena.llm.scripted import ScriptedBackend, scripted_reply
from shoparena.records.problem import Intent, RewardItem
from shoparena.scoring import DictLookup
from shoparena.suites.checks import gt_reasons, query_reasons
from shoparena.suites.loaders import load_suite
from shoparena.suites.options import SynthOptions, parse_intents
from shoparena.suites.queries import LLMRewriter, category_name
from shoparena.suites.synth import difficulty_label, synthesize_problems
from world import SHARED_DATA

SHARED = SHARED_DATA


def _by_id():
    _, _, products = small_index()
    return {p.product_id: p for p in products}


def test_same_seed_same_bank_and_other_seed_differs() -> None:
    _, engine, products = small_index()
    a = synthesize_problems(products, SynthOptions(n=24, seed=7), engine=engine)
    b = synthesize_problems(products, SynthOptions(n=24, seed=7), engine=engine)
    c = synthesize_problems(products, SynthOptions(n=24, seed=8), engine=engine)
    dump = lambda r: [(p.problem_id, p.query, p.content_hash, p.difficulty, p.title) for p in r.problems]  # noqa: E731
    assert dump(a) == dump(b)
    assert a.pages == b.pages
    assert dump(a) != dump(c)


def test_quota_met_and_counts_add_up() -> None:
    result = small_bank()
    report = result.report
    assert report.generated == report.kept + report.rejected
    assert report.kept == len(result.problems) == 80
    assert report.kept_by_intent == {"product": 20, "shop": 20, "voucher": 20, "web": 20}
    assert len({p.problem_id for p in result.problems}) == len(result.problems)


def test_every_problem_passes_its_own_checks() -> None:
    lookup = DictLookup(_by_id())
    for problem in small_bank().problems:
        assert gt_reasons(problem, lookup) == [], problem.query
        assert query_reasons(problem) == [], problem.query


def test_products_never_reused_and_shop_baskets_share_a_shop() -> None:
    by_id = _by_id()
    ids = [pid for p in small_bank().problems for pid in p.gt_ids]
    assert len(ids) == len(set(ids))
    for problem in small_bank().problems:
        shops = {by_id[pid].shop_id for pid in problem.gt_ids}
        if problem.intent is Intent.SHOP:
            assert 2 <= len(problem.reward) <= 4 and len(shops) == 1
        if problem.voucher is not None and problem.voucher.voucher_type == "shop":
            assert 2 <= len(problem.reward) <= 4 and len(shops) == 1


def test_voucher_arithmetic_rederived_independently() -> None:
    by_id = _by_id()
    vouchers = [p for p in small_bank().problems if p.intent is Intent.VOUCHER]
    assert vouchers
    for problem in vouchers:
        v = problem.voucher
        total = sum(by_id[pid].price for pid in problem.gt_ids)
        assert total >= 100
        assert int(0.1 * total) <= v.threshold <= int(0.9 * total)
        if v.discount_type == "fixed":
            assert int(0.1 * v.threshold) <= v.face_value <= int(0.5 * v.threshold)
            expected = total - v.face_value
        else:
            assert 0.10 <= v.discount <= 0.50 and v.discount * 100 == pytest.approx(round(v.discount * 100))
            assert v.threshold * v.discount < v.cap <= v.threshold
            expected = max(total * (1 - v.discount), total - v.cap)
        assert v.price_after_voucher == pytest.approx(expected)
        assert math.ceil(expected) <= v.budget <= math.ceil(expected) + math.ceil(0.1 * expected)
        assert all(not item.price for item in problem.reward)


def test_query_never_contains_whole_title_and_names_category_briefly() -> None:
    by_id = _by_id()
    for problem in small_bank().problems:
        low = problem.query.lower()
        for item in problem.reward:
            assert item.title[0].lower() not in low
            assert len(category_name(by_id[item.product_id].category).split()) <= 5


def test_voucher_appendix_wording_is_exact() -> None:
    for problem in small_bank().problems:
        if problem.voucher is None:
            continue
        v = problem.voucher
        scope = (
            "The voucher applies to all products."
            if v.voucher_type == "platform"
            else "The voucher only applies to the products from the same shop."
        )
        disc = (
            f"It provides a fixed discount of `{v.face_value}`."
            if v.discount_type == "fixed"
            else f"It provides a percentage discount of `{round(v.discount * 100)}%` with a cap of `{v.cap}`."
        )
        tail = (
            f"\n\nMy budget is only `{v.budget}`, but I have a voucher with the following rules:\n"
            f"1. {scope}\n"
            f"2. It is valid only when the total price of the products exceeds `{v.threshold}`.\n"
            f"3. {disc}"
        )
        assert problem.query.endswith(tail)
        assert not problem.query[: -len(tail)].endswith("\n")


def test_queries_vary() -> None:
    problems = small_bank().problems
    openings = {" ".join(p.query.split()[:2]) for p in problems}
    assert len(openings) >= 10


def test_web_problems_need_the_knowledge_page() -> None:
    result = small_bank()
    webs = [p for p in result.problems if p.intent is Intent.WEB]
    assert webs
    for problem in webs:
        answer = str(problem.knowledge_attribute).lower()
        assert answer in problem.web_product["title"].lower()
        assert answer not in problem.query.lower()
        pages = [pg for pg in result.pages if answer in pg["content"].lower()]
        assert pages, "no knowledge page carries the answer"
        for page in pages:
            assert problem.gt_ids[0] not in page["content"]
            assert problem.web_product["title"].lower() not in page["content"].lower()


@pytest.mark.parametrize("name", ["problem_suite_v1.json", "problem_suite_v3.json"])
def test_difficulty_labels_reproduce_oro_suites(name: str) -> None:
    problems, _ = load_suite(SHARED / "oro" / name)
    assert problems
    for problem in problems:
        assert difficulty_label(problem) == problem.difficulty, problem.title


def test_parse_intents() -> None:
    assert parse_intents("knowledge,product,web") == (Intent.WEB, Intent.PRODUCT)
    with pytest.raises(ValueError, match="unknown intent 'books'"):
        parse_intents("product,books")


def test_less_than_only_behind_the_switch() -> None:
    _, engine, products = small_index()
    off = synthesize_problems(products, SynthOptions(n=60, seed=5, intents=(Intent.PRODUCT,)), engine=engine)
    on = synthesize_problems(
        products, SynthOptions(n=60, seed=5, intents=(Intent.PRODUCT,), allow_less_than=True), engine=engine
    )
    ops = lambda r: {op for p in r.problems for e in p.reward[0].price for op in e}  # noqa: E731
    assert "less than" not in ops(off)
    assert "less than" in ops(on)


def test_rewriter_accepts_covering_rewrites_and_falls_back_otherwise() -> None:
    item = RewardItem(
        product_id="1",
        title=["Haora Red Press On Nails"],
        attributes=[{"finish": ["dewy"]}],
        price=[{"greater than": [120, None]}],
    )
    good = scripted_reply('{"query": "Got dewy nails over 120 pesos?"}')
    leaky = scripted_reply('{"query": "I want Haora Red Press On Nails, dewy, over 120"}')
    missing = scripted_reply('{"query": "Any nails?"}')
    rewriter = LLMRewriter(ScriptedBackend([good, leaky, missing, "not json"]))
    assert rewriter.rewrite("draft", [item]) == "Got dewy nails over 120 pesos?"
    assert [rewriter.rewrite("draft", [item]) for _ in range(3)] == ["draft"] * 3
    assert (rewriter.accepted, rewriter.fallbacks) == (1, 3)


@pytest.mark.parametrize("fmt", ["oro", "sb"])
def test_cli_synth_writes_a_loadable_bank(tmp_path: Path, fmt: str) -> None:
    catalog, _, _ = small_index()
    index_dir = catalog.parent / "index"
    out = tmp_path / ("bank.json" if fmt == "oro" else "bank.jsonl")
    result = CliRunner().invoke(
        app,
        [
            "suite",
            "synth",
            "--index",
            str(index_dir),
            "--out",
            str(out),
            "--n",
            "8",
            "--format",
            fmt,
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    problems, summary = load_suite(out, strict=True)
    assert summary.kept == 8
    assert {p.intent for p in problems} == set(Intent)
    if fmt == "oro":
        assert all(p.difficulty in ("easy", "medium", "hard") and p.title for p in problems)
        assert all(p.source.problem_id_given for p in problems)
    assert (tmp_path / (out.name + ".knowledge.jsonl")).exists()
