"""Builders for the leak-cluster, partition and audit tests: random banks, planted variants, tiny catalog."""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

from shoparena.catalog.io import CatalogWriter
from shoparena.records.catalog import Product
from shoparena.records.problem import Intent, Problem, RewardItem, Voucher, problem_id_for_query
from world import SHARED_DATA

SHARED = SHARED_DATA
SB_PRODUCT = SHARED / "shoppingbench" / "synthesize_product_test.jsonl"
SB_SHOP = SHARED / "shoppingbench" / "synthesize_shop_test.jsonl"
ORO_V1 = SHARED / "oro" / "problem_suite_v1.json"
ORO_V3 = SHARED / "oro" / "problem_suite_v3.json"
SN15_ROWS = SHARED / "oro" / "sft_corpus_prefix_examples.jsonl"
SHARED_SUITES = [p for p in (SB_PRODUCT, SB_SHOP, ORO_V1, ORO_V3) if p.exists()]

CATEGORY = {Intent.PRODUCT: "Product", Intent.SHOP: "Shop", Intent.VOUCHER: "Voucher"}
DIFFICULTIES = ("easy", "medium", "hard")

# Unrelated nouns: random 12-word queries over them share few bigrams by chance.
_WORDS = str.split(
    "amber basket cable drill easel fabric garden hammer ink jacket kettle ladder mirror napkin oven "
    "pillow quilt radio saddle tablet umbrella vase wallet xylophone yarn zipper anchor blender candle "
    "desk engine fan glove helmet iron jar kite lamp magnet needle orchid pan quartz rope sofa towel "
    "utensil violin whistle yoyo bucket charger diaper eraser filter grater hose"
)


def random_query(rng: random.Random, words: int = 12) -> str:
    """A query of unrelated random words with a numbered-list tail, like the shop prompts."""
    body = " ".join(rng.choice(_WORDS) for _ in range(words))
    return f"Looking for {body}.\n1. priced above {rng.randint(10, 999)} PHP.\n2. with free shipping."


def whitespace_variant(query: str) -> str:
    """Newlines become spaces and spaces double: the released SN15 eval file has such pairs."""
    return re.sub(r"\s+", "  ", query).strip() + " "


def numbering_variant(query: str) -> str:
    """Line-start "1." list markers become "(1)" markers inline."""
    return re.sub(r"(?m)^(\d{1,2})\.\s", r"(\1) ", query).replace("\n", " ")


def reworded(query: str) -> str:
    """A light rewording: another opener and one word dropped near the end."""
    words = query.replace("Looking for", "Please find me", 1).split(" ")
    return " ".join(words[:-4] + words[-3:])


def make_problem(
    pid: str,
    query: str,
    intent: Intent,
    gt_ids: list[str],
    difficulty: str | None = "easy",
    voucher_type: str = "platform",
) -> Problem:
    """A valid problem of ``intent`` with the given GT ids (one reward item per id)."""
    voucher = None
    if intent is Intent.VOUCHER:
        voucher = Voucher(
            voucher_type=voucher_type,  # type: ignore[arg-type]
            threshold=100,
            discount_type="fixed",
            face_value=10,
            price_after_voucher=150.0,
            budget=160,
        )
    if intent is Intent.PRODUCT:
        gt_ids = gt_ids[:1]
    return Problem(
        problem_id=pid,
        query=query,
        intent=intent,
        category=CATEGORY[intent],
        difficulty=difficulty,
        reward=[RewardItem(product_id=g, title=[f"title {g}"]) for g in gt_ids],
        voucher=voucher,
    )


@dataclass
class RandomBank:
    """A random bank with the links planted in it, for checking partitions against."""

    problems: list[Problem]
    shop_of: dict[str, str]
    planted_near_dups: list[tuple[str, str]] = field(default_factory=list)


def random_bank(
    seed: int,
    n: int,
    *,
    gt_share: float = 0.1,
    near_dups: int = 3,
    shops: int = 40,
) -> RandomBank:
    """``n`` random problems over three intents and difficulties with shared GT ids, shops and variants.

    Args:
        seed: RNG seed.
        n: Problems (before planted variants).
        gt_share: Chance that a slot reuses an earlier GT product id.
        near_dups: Planted whitespace / numbering / reworded copies (new ids, new GT ids).
        shops: Distinct shops the GT products are spread over (fewer: more shop links).
    """
    rng = random.Random(seed)
    used: list[str] = []
    shop_of: dict[str, str] = {}
    problems: list[Problem] = []

    def gt() -> str:
        if used and rng.random() < gt_share:
            return rng.choice(used)
        pid = str(1_000_000 + len(shop_of))
        shop_of[pid] = str(500 + rng.randrange(shops))
        used.append(pid)
        return pid

    for i in range(n):
        intent = rng.choice(list(CATEGORY))
        slots = 1 if intent is Intent.PRODUCT else rng.randint(2, 3)
        problems.append(
            make_problem(
                f"p{i:04d}",
                random_query(rng),
                intent,
                [gt() for _ in range(slots)],
                difficulty=rng.choice(DIFFICULTIES),
                voucher_type=rng.choice(("platform", "shop")),
            )
        )
    planted: list[tuple[str, str]] = []
    variants = (whitespace_variant, numbering_variant, reworded)
    for k in range(min(near_dups, n)):
        source = rng.choice(problems[:n])
        fresh = str(9_000_000 + k)
        shop_of[fresh] = str(900 + k)  # a shop nobody else has: the copy links only by its query
        copy = make_problem(
            f"v{k:03d}",
            variants[k % len(variants)](source.query),
            source.intent,
            [fresh] * len(source.reward) if source.intent is Intent.PRODUCT else [fresh, fresh + "1"],
            difficulty=source.difficulty,
        )
        shop_of[fresh + "1"] = str(950 + k)
        problems.append(copy)
        planted.append((source.problem_id, copy.problem_id))
    return RandomBank(problems, shop_of, planted)


def balanced_singletons(per_cell: int, seed: int = 0) -> list[Problem]:
    """``per_cell`` unrelated product/shop/voucher problems for each difficulty, every GT id unique."""
    rng = random.Random(seed)
    out: list[Problem] = []
    n = 0
    for intent in CATEGORY:
        for diff in DIFFICULTIES:
            for _ in range(per_cell):
                ids = [str(2_000_000 + n * 10 + s) for s in range(1 if intent is Intent.PRODUCT else 2)]
                out.append(make_problem(f"b{n:04d}", random_query(rng), intent, ids, difficulty=diff))
                n += 1
    return out


def write_chat_rows(path: Path, queries: list[str], *, parts: bool = False) -> Path:
    """SN15-style corpus rows (``messages`` + ``tools``); ``parts`` uses OpenAI content-part lists."""
    with open(path, "w", encoding="utf-8") as fh:
        for i, query in enumerate(queries):
            content: object = [{"type": "text", "text": query}] if parts else query
            row = {
                "id": f"row-{i}",
                "messages": [
                    {"role": "system", "content": "You are Teacher, a shopping assistant."},
                    {"role": "user", "content": content},
                    {"role": "assistant", "content": "<think>x</think>"},
                ],
                "tools": [{"type": "function", "function": {"name": "find_product", "parameters": {}}}],
            }
            fh.write(json.dumps(row) + "\n")
    return path


def write_envelopes(path: Path, queries: list[str]) -> Path:
    """ORO ``output.jsonl`` envelopes whose first step carries the query."""
    with open(path, "w", encoding="utf-8") as fh:
        for i, query in enumerate(queries):
            env = {
                "problem_id": f"env-{i}",
                "status": "SUCCESS",
                "execution_time": 1.0,
                "inference_failure_count": 0,
                "inference_total": 1,
                "error": None,
                "dialogue": [{"completion": {"content": ""}, "extra_info": {"step": 1, "query": query}}],
            }
            fh.write(json.dumps(env) + "\n")
    return path


def tiny_catalog(path: Path, shop_of: dict[str, str]) -> Path:
    """A catalog holding one product per GT id, in the given shops."""
    with CatalogWriter(path) as writer:
        for pid, shop in sorted(shop_of.items()):
            writer.write(
                Product(
                    product_id=pid,
                    shop_id=shop,
                    category="Test > Things",
                    title=f"Product {pid}",
                    price=100.0,
                    sold_count=0,
                    service=[],
                    sku_options={},
                    attributes={},
                    product_url=f"https://www.lazada.com.ph/products/-i{pid}.html",
                )
            )
    return path


def qid(query: str) -> str:
    return problem_id_for_query(query)
