"""The offline query writer of problem synthesis (environment spec §6.3, §7.3).

Upstream has GPT-4.1 turn numbered requirement lines into one conversational request that covers every
requirement, names the category in at most five tokens and never repeats the title. Offline, this module
writes such requests from templates with real variety: several phrasings per constraint kind (SKU options and
attributes by key family, price operators, each service), synonyms, shuffled orderings, several sentence
shapes and enumeration styles, and the item named by a *few* title words plus the category leaf, never the
whole title. Values are stated verbatim (the scorer compares them exactly).

The voucher appendix is code-generated exactly as upstream writes it (:func:`voucher_appendix`).
An optional :class:`LLMRewriter` rewrites the template draft with any OpenAI-compatible model and falls back
to the draft whenever the rewrite drops a value or leaks the title.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from shoparena.records.catalog import Product
from shoparena.records.problem import RewardItem, Voucher

if TYPE_CHECKING:
    from shoparena.llm.types import ChatBackend

MAX_CATEGORY_TOKENS = 5
_WORD_RE = re.compile(r"[a-z][a-z0-9'&-]*[a-z0-9]|[a-z]")
_STOP_TEXT = (
    "a an and the for with of in on to by from at or new hot sale original sulit mura best quality free "
    "ready stock pcs pc set cod shipping delivery fast lazmall lazflash flash official "
)
_STOP = frozenset(_STOP_TEXT.split())

# ------------------------------------------------------------------------------------------------- phrasings

_INTROS = (
    "I'm looking for",
    "Can you find me",
    "Show me",
    "I need",
    "Help me find",
    "I'd like to buy",
    "Looking for",
    "Please find",
    "I want",
    "Do you have",
)
_ENDINGS = ("", "", " Any suggestions?", " What would you recommend?", " Can you help?", " Thanks!")
_COLOR_KEYS = ("color", "colour")
_SIZE_KEYS = ("size", "waist", "shoe_size")
_KEY_ALIASES: dict[str, tuple[str, ...]] = {
    "color_family": ("color", "colour", "color family"),
    "color family": ("color", "colour", "color family"),
    "fa_pattern": ("pattern", "print"),
    "clothing_material": ("material", "fabric"),
    "model": ("model",),
    "variation": ("variation", "variant", "option"),
}
_PAIR_TEMPLATES: dict[str, tuple[str, ...]] = {
    "brand": ("from {v}", "by {v}", "of the brand {v}", "made by {v}", "from the {v} brand"),
    "color": ("in {v}", "in the color {v}", "in {v} colour", "with {v} as the color", "that comes in {v}"),
    "size": ("in size {v}", "size {v}", "with size {v}", "in the {v} size"),
    "material": ("made of {v}", "in {v} material", "with {v} as the {alias}", "crafted from {v}"),
    "generic": (
        "with {alias} {v}",
        "whose {alias} is {v}",
        "with a {alias} of {v}",
        "having {v} as the {alias}",
        "where the {alias} is {v}",
        "({alias}: {v})",
    ),
}
_PRICE_TEMPLATES: dict[str, tuple[str, ...]] = {
    "greater than": (
        "priced at least {lo} pesos",
        "costing {lo} PHP or more",
        "priced from PHP {lo} upwards",
        "with a price of no less than {lo} Philippine Peso",
        "that costs at least ₱{lo}",
        "priced above {lo} PHP",
    ),
    "between": (
        "priced between {lo} and {hi} pesos",
        "costing from PHP {lo} to {hi}",
        "in the {lo}-{hi} PHP price range",
        "with a price between ₱{lo} and ₱{hi}",
        "that costs {lo} to {hi} Philippine Peso",
    ),
    "less than": (
        "priced at most {hi} pesos",
        "costing no more than PHP {hi}",
        "under ₱{hi}",
        "with a price up to {hi} Philippine Peso",
    ),
}
_SERVICE_TEMPLATES: dict[str, tuple[str, ...]] = {
    "freeShipping": ("with free shipping", "that ships for free", "with free delivery"),
    "COD": ("with cash on delivery", "that I can pay for on delivery (COD)", "with COD payment"),
    "official": (
        "from a LazMall store",
        "sold by an official store (LazMall)",
        "from a LazMall official shop",
    ),
    "flashsale": ("on a LazFlash deal", "currently in a flash sale (LazFlash)", "on LazFlash"),
}
_SHOP_INTROS = (
    "I want to buy all of these from one shop:",
    "Find me a single store that sells everything below.",
    "Which shop carries all of the following?",
    "I'm looking for one seller that has these items:",
    "Please find one shop where I can get all of these:",
)
_SHOP_OUTROS = ("", " They must all come from the same shop.", " Everything should be from one store.")
_MULTI_INTROS = (
    "I want to buy these products:",
    "Help me pick the following items:",
    "I'm shopping for a few things:",
    "Please find these for me:",
)
_ORDINALS = ("First", "Second", "Third", "Fourth")


def voucher_appendix(voucher: Voucher) -> str:
    """The code-generated voucher appendix as upstream writes it (§6.3), with its leading blank line."""
    scope = (
        "The voucher applies to all products."
        if voucher.voucher_type == "platform"
        else "The voucher only applies to the products from the same shop."
    )
    if voucher.discount_type == "fixed":
        discount = f"It provides a fixed discount of `{voucher.face_value}`."
    else:
        pct = round(float(voucher.discount or 0) * 100)
        discount = f"It provides a percentage discount of `{pct}%` with a cap of `{voucher.cap}`."
    return (
        f"\n\nMy budget is only `{voucher.budget}`, but I have a voucher with the following rules:\n"
        f"1. {scope}\n"
        f"2. It is valid only when the total price of the products exceeds `{voucher.threshold}`.\n"
        f"3. {discount}"
    )


def category_name(category: str) -> str:
    """The category leaf in lower case, at most :data:`MAX_CATEGORY_TOKENS` tokens."""
    leaf = category.split(" > ")[-1].strip().lower()
    return " ".join(leaf.split()[-MAX_CATEGORY_TOKENS:])


def title_words(title: str) -> list[str]:
    """Distinct content words of a title, lower-cased, in title order."""
    out: list[str] = []
    for word in _WORD_RE.findall(title.lower()):
        if len(word) > 2 and word not in _STOP and word not in out:
            out.append(word)
    return out


def partial_title(title: str, rng: random.Random, *, exclude: Sequence[str] = (), leaf: str = "") -> str:
    """One to three title words (title order), never all of them, avoiding ``exclude`` and the leaf words."""
    banned = {w.lower() for text in exclude for w in _WORD_RE.findall(text.lower())}
    banned |= set(leaf.split())
    words = [w for w in title_words(title) if w not in banned]
    if not words:
        return ""
    limit = min(3, len(words) - 1) if len(words) > 1 else 1
    k = rng.randint(1, max(1, limit))
    picked = sorted(rng.sample(range(len(words)), k))
    return " ".join(words[i] for i in picked)


def article(phrase: str) -> str:
    """ "a", "an" or (plural-looking names) "some"."""
    last = phrase.rstrip(")").split("(")[0].split()[-1:] or [""]
    if last[0].endswith("s") and not last[0].endswith("ss"):
        return "some"  # leaves are mostly plural ("tires & wheels")
    return "an" if phrase[:1] in "aeiou" else "a"


def _alias(key: str, rng: random.Random) -> str:
    if key in _KEY_ALIASES:
        return rng.choice(_KEY_ALIASES[key])
    words = [w for w in key.replace("_", " ").split() if w not in ("hb", "fa")]
    return " ".join(words) or key


def _family(key: str) -> str:
    k = key.lower()
    if k == "brand":
        return "brand"
    if any(c in k for c in _COLOR_KEYS):
        return "color"
    if k in _SIZE_KEYS or k.endswith("size"):
        return "size"
    if "material" in k:
        return "material"
    return "generic"


def pair_phrase(key: str, value: str, rng: random.Random) -> str:
    """One (key, value) requirement as a modifier phrase, value verbatim."""
    template = rng.choice(_PAIR_TEMPLATES[_family(key)])
    return template.format(v=value, alias=_alias(key, rng))


def price_phrase(op: str, bounds: Sequence[Any], rng: random.Random) -> str:
    """One price requirement as a modifier phrase (bounds verbatim)."""
    lo, hi = bounds
    return rng.choice(_PRICE_TEMPLATES[op]).format(lo=lo, hi=hi)


def service_phrase(service: str, rng: random.Random) -> str:
    """One service requirement as a modifier phrase."""
    return rng.choice(_SERVICE_TEMPLATES[service])


def item_modifiers(item: RewardItem, rng: random.Random) -> list[str]:
    """Every non-title constraint of a slot as modifier phrases, shuffled (a value required twice under
    keys of one family, e.g. SKU ``color_family`` and attribute ``color``, is stated once)."""
    pairs = [(k, v) for opts in item.sku_options for k, v in opts.items()]
    pairs += [(k, v) for attr in item.attributes for k, vals in attr.items() for v in vals]
    seen: set[tuple[str, str]] = set()
    mods = []
    for k, v in pairs:
        if (_family(k) if _family(k) != "generic" else k, v) in seen:
            continue
        seen.add((_family(k) if _family(k) != "generic" else k, v))
        mods.append(pair_phrase(k, v, rng))
    mods += [price_phrase(op, b, rng) for entry in item.price for op, b in entry.items()]
    mods += [service_phrase(s, rng) for s in item.service if s in _SERVICE_TEMPLATES]
    rng.shuffle(mods)
    return mods


def _join(parts: Sequence[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


@dataclass(slots=True)
class ItemText:
    """How one slot is written: its name words (what a search over the query sees) and its noun phrase."""

    name: str
    phrase: str
    modifiers: list[str] = field(default_factory=list)


def item_text(
    item: RewardItem, product: Product, rng: random.Random, *, exclude: Sequence[str] = ()
) -> ItemText:
    """The noun phrase of one slot: article, a few title words, the category leaf, then the modifiers."""
    leaf = category_name(product.category)
    words = partial_title(product.title, rng, exclude=exclude, leaf=leaf)
    name = f"{words} {leaf}".strip() if rng.random() < 0.75 or not words else f"{leaf} ({words})"
    mods = item_modifiers(item, rng)
    phrase = f"{article(name)} {name}" + (f" {_join(mods)}" if mods else "")
    return ItemText(name=name, phrase=phrase, modifiers=mods)


def _one_item_sentence(text: ItemText, rng: random.Random) -> str:
    intro = rng.choice(_INTROS)
    shape = rng.randrange(4)
    if shape == 1 and len(text.modifiers) >= 2:
        cut = rng.randint(1, len(text.modifiers) - 1)
        head = f"{article(text.name)} {text.name} {_join(text.modifiers[:cut])}"
        return f"{intro} {head}. Make sure it comes {_join(text.modifiers[cut:])}."
    if shape == 2:
        return f"{text.phrase[0].upper()}{text.phrase[1:]} is what I need."
    question = intro in ("Can you find me", "Do you have")
    return f"{intro} {text.phrase}{'?' if question else '.'}{rng.choice(_ENDINGS)}"


def _enumerate(phrases: Sequence[str], rng: random.Random) -> str:
    style = rng.randrange(3)
    if style == 0:
        parts = []
        for i, p in enumerate(phrases):
            word = "Lastly" if i == len(phrases) - 1 and i >= 2 else _ORDINALS[i]
            parts.append(f"{word}, {p}.")
        return " ".join(parts)
    if style == 1:
        return " ".join(f"({i}) {p};" for i, p in enumerate(phrases, start=1)).rstrip(";") + "."
    return "\n" + "\n".join(f"- {p[0].upper()}{p[1:]}" for p in phrases)


def write_product_query(item: RewardItem, product: Product, rng: random.Random) -> tuple[str, list[str]]:
    """A one-item request; returns (query, name words per slot)."""
    text = item_text(item, product, rng)
    return _one_item_sentence(text, rng), [text.name]


def write_shop_query(
    items: Sequence[RewardItem], products: Sequence[Product], rng: random.Random
) -> tuple[str, list[str]]:
    """A same-shop request over 2-4 items, in slot order."""
    texts = [item_text(i, p, rng) for i, p in zip(items, products, strict=True)]
    body = _enumerate([t.phrase for t in texts], rng)
    sep = "" if body.startswith("\n") else " "
    outro = rng.choice(_SHOP_OUTROS)
    if outro and sep == "":
        outro = "\n" + outro.lstrip()  # after a bullet list, on its own line
    return f"{rng.choice(_SHOP_INTROS)}{sep}{body}{outro}", [t.name for t in texts]


def write_voucher_query(
    items: Sequence[RewardItem], products: Sequence[Product], voucher: Voucher, rng: random.Random
) -> tuple[str, list[str]]:
    """A 1-4 item request followed by the exact voucher appendix."""
    texts = [item_text(i, p, rng) for i, p in zip(items, products, strict=True)]
    if len(texts) == 1:
        body = _one_item_sentence(texts[0], rng)
    else:
        listing = _enumerate([t.phrase for t in texts], rng)
        sep = "" if listing.startswith("\n") else " "
        body = f"{rng.choice(_MULTI_INTROS)}{sep}{listing}"
    return body + voucher_appendix(voucher), [t.name for t in texts]


# ---------------------------------------------------------------------------------------------- requirements


def requirement_lines(item: RewardItem) -> list[str]:
    """The numbered requirement lines of one slot in upstream's prompt style (§7.3), for the LLM rewriter."""
    lines = [f"The `title` is `{item.title[0]}`."] if item.title else []
    lines += [f"The `{k}` is `{v}`." for opts in item.sku_options for k, v in opts.items()]
    lines += [f"The `{k}` is `{v}`." for attr in item.attributes for k, vals in attr.items() for v in vals]
    for entry in item.price:
        for op, (lo, hi) in entry.items():
            if op == "between":
                lines.append(f"The `price` between `{lo}` and `{hi}` Philippine Peso.")
            elif op == "greater than":
                lines.append(f"The `price` greater than `{lo}` Philippine Peso.")
            else:
                lines.append(f"The `price` less than `{hi}` Philippine Peso.")
    words = {
        "freeShipping": "It offers free shipping.",
        "COD": "It supports cash on delivery.",
        "official": "It is sold in a LazMall store.",
        "flashsale": "It is on a LazFlash deal.",
    }
    lines += [words[s] for s in item.service if s in words]
    return [f"{i}. {line}" for i, line in enumerate(lines, start=1)]


def required_values(item: RewardItem) -> list[str]:
    """Strings a query must contain to cover the slot: SKU and attribute values and price bounds."""
    values = [v for opts in item.sku_options for v in opts.values()]
    values += [v for attr in item.attributes for vals in attr.values() for v in vals]
    for entry in item.price:
        for op, (lo, hi) in entry.items():
            values += (
                [str(lo)] if op == "greater than" else [str(hi)] if op == "less than" else [str(lo), str(hi)]
            )
    return values


_REWRITE_SYSTEM = (
    "You rewrite shopping requests. Given numbered requirements and a draft request, write ONE natural, "
    "conversational request a shopper would type. Cover every requirement and keep every value exactly as "
    "written. Name the product category in at most five words and never repeat the product title. "
    'Answer with JSON only: {"query": "..."}'
)


class LLMRewriter:
    """Rewrite template drafts with an OpenAI-compatible chat model (optional; synthesis works without it).

    A rewrite is accepted only when it parses, keeps every required value and does not contain a title;
    otherwise the draft is kept. ``accepted`` and ``fallbacks`` count the outcomes.

    Args:
        backend: Any :class:`~shoparena.llm.types.ChatBackend` (e.g. ``OpenAICompatibleBackend``).
        model: Model name sent with each request (None: the backend's default).
        temperature: Sampling temperature (upstream 0.2).
    """

    def __init__(self, backend: ChatBackend, *, model: str | None = None, temperature: float = 0.2) -> None:
        self.backend = backend
        self.model = model
        self.temperature = temperature
        self.accepted = 0
        self.fallbacks = 0

    @classmethod
    def from_url(cls, url: str, *, model: str | None = None, api_key: str | None = None) -> LLMRewriter:
        """A rewriter over ``{url}/chat/completions``."""
        from shoparena.llm.openai_compat import OpenAICompatibleBackend

        return cls(OpenAICompatibleBackend(url, api_key=api_key, model=model), model=model)

    def rewrite(self, draft: str, items: Sequence[RewardItem], *, multi_shop: bool = False) -> str:
        """The rewritten request body (no voucher appendix), or ``draft`` when the rewrite is unusable."""
        from shoparena.llm.types import BackendError, ChatRequest

        blocks = []
        for i, item in enumerate(items, start=1):
            lines = "\n".join(requirement_lines(item))
            blocks.append(f"## Product {i}\n{lines}" if len(items) > 1 else lines)
        prompt = "\n\n".join(blocks) + (
            "\n\nAll products must come from the same shop." if multi_shop else ""
        )
        request = ChatRequest(
            model=self.model,
            messages=[
                {"role": "system", "content": _REWRITE_SYSTEM},
                {"role": "user", "content": f"Requirements:\n{prompt}\n\nDraft:\n{draft}"},
            ],
            temperature=self.temperature,
        )
        try:
            content = self.backend.complete(request).content
            start, end = content.find("{"), content.rfind("}")
            query = orjson.loads(content[start : end + 1]).get("query") if start >= 0 else None
        except (BackendError, orjson.JSONDecodeError, AttributeError):
            query = None
        if isinstance(query, str) and query.strip() and _covers(query, items):
            self.accepted += 1
            return query.strip()
        self.fallbacks += 1
        return draft


def _covers(query: str, items: Sequence[RewardItem]) -> bool:
    low = query.lower()
    for item in items:
        if any(t.lower() in low for t in item.title):
            return False
        if any(v.lower() not in low for v in required_values(item)):
            return False
    return True


__all__ = [
    "MAX_CATEGORY_TOKENS",
    "ItemText",
    "LLMRewriter",
    "article",
    "category_name",
    "item_modifiers",
    "item_text",
    "pair_phrase",
    "partial_title",
    "price_phrase",
    "required_values",
    "requirement_lines",
    "service_phrase",
    "title_words",
    "voucher_appendix",
    "write_product_query",
    "write_shop_query",
    "write_voucher_query",
]
