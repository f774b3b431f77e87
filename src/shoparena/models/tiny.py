"""A tiny random Qwen3 (about 330 k parameters) with a real tokenizer and chat template, for fast tests.

The tokenizer is a byte-level BPE trained in well under a second on a built-in corpus of shopping-agent text
(queries, ``<think>`` notes, tool calls, tool observations, answers), so the prompts and completions of this
project tokenise into plausible pieces. The weights are random: the model generates noise, but it exercises
every real code path (chat template with tools, generation, SFT/GRPO steps) in about a second.

The corpus, and therefore the tokenizer, is fixed; the seed only selects the weights. Two builds with the same
seed produce byte-identical folders.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shoparena.models.folder import is_valid_model_dir, read_manifest, save_model_folder
from shoparena.models.templates import TEMPLATE_VERSION, ChatTemplateTokenizer, chatml_tools_template

KIND = "tiny-qwen3"
VOCAB_SIZE = 4000
# Special tokens (the chat frame) get the first ids; tag tokens are added after training as non-special added
# tokens, so ``skip_special_tokens=True`` keeps them in decoded text where the tool-call parser needs them.
SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
TAG_TOKENS = ("<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>")

_PRODUCTS = (
    "running shoes",
    "waist bag",
    "phone case",
    "water bottle",
    "yoga mat",
    "desk lamp",
    "backpack",
    "wireless earbuds",
    "coffee grinder",
    "rain jacket",
    "hiking socks",
    "laptop stand",
    "throw pillow",
    "baby stroller",
    "dog leash",
    "electric kettle",
    "sunglasses",
    "winter gloves",
    "bath towel",
    "mechanical keyboard",
    "frying pan",
    "tent",
    "sleeping bag",
    "smart watch",
    "hair dryer",
    "t-shirt",
    "jeans",
    "sneakers",
    "notebook",
    "fountain pen",
    "lunch box",
    "bike helmet",
    "power bank",
)
_BRANDS = (
    "hosport",
    "nike",
    "adidas",
    "xiaomi",
    "anker",
    "lenovo",
    "philips",
    "uniqlo",
    "decathlon",
    "lego",
    "casio",
    "sony",
    "haier",
    "midea",
    "baseus",
    "ugreen",
    "lining",
    "anta",
    "skechers",
    "osprey",
)
_COLORS = ("red", "black", "white", "navy blue", "pink", "grey", "green", "beige", "purple", "orange")
_MATERIALS = ("cotton", "leather", "stainless steel", "bamboo", "nylon", "silicone", "wool", "plastic")
_SIZES = ("small", "medium", "large", "XL", "size 42", "500ml", "1.5L", "13 inch", "2 pack", "queen")
_SERVICES = ("official", "freeShipping", "COD", "flashsale")
_SORTS = ("priceasc", "pricedesc", "order", "default")
_ASKS = (
    "I need {a} {color} {product} under {price} yuan.",
    "Find me a {brand} {product} with free shipping, {size} please.",
    "Can you recommend a {material} {product} for my mother? Budget is {price}.",
    "Looking for the cheapest {product} from an official store.",
    "I want to buy a {product} and a matching {product2} from the same shop.",
    "Which {brand} {product} sells the most? Show me options between {low} and {high}.",
    "Please help me choose a {color} {product} that supports cash on delivery.",
    "My last {product} broke. Something {material}, {size}, below {price} RMB.",
)
_THOUGHTS = (
    "The user wants a {color} {product}. I should search with a price filter first.",
    "The results look relevant. Let me check the details of the top two products.",
    "Product {pid} matches the {material} requirement and costs {price}, which is within budget.",
    "None of the results are from {brand}. I will refine the query.",
    "Both items are sold by shop {shop}, so this satisfies the same-shop constraint.",
    "I have enough information to recommend the product and finish.",
)
_ANSWERS = (
    "I recommend product {pid}: a {color} {product} for {price} yuan with free shipping.",
    "Here are two options from shop {shop}: {pid} and {pid2}. Both fit your budget.",
    "Sorry, I could not find a {brand} {product} under {price}. The closest match is {pid}.",
)


def shopping_corpus(n_episodes: int = 240) -> list[str]:
    """The built-in training text for the tiny tokenizer: ``n_episodes`` synthetic agent transcripts.

    Args:
        n_episodes: How many transcripts to generate (fixed internal seed, so the list is always the same).

    Returns:
        One string per transcript, in ChatML with tool calls and observations.
    """
    rng = random.Random(20240521)
    return [_episode(rng) for _ in range(n_episodes)]


def _slots(rng: random.Random) -> dict[str, Any]:
    low = rng.choice((10, 20, 50, 80, 100, 150, 200, 300, 500))
    return {
        "a": "a",
        "product": rng.choice(_PRODUCTS),
        "product2": rng.choice(_PRODUCTS),
        "brand": rng.choice(_BRANDS),
        "color": rng.choice(_COLORS),
        "material": rng.choice(_MATERIALS),
        "size": rng.choice(_SIZES),
        "price": rng.choice((29, 49, 99, 128, 199, 259, 399, 599, 999, 1299)),
        "low": low,
        "high": low * rng.choice((2, 3, 5)),
        "pid": str(rng.randrange(100_000_000, 999_999_999)),
        "pid2": str(rng.randrange(100_000_000, 999_999_999)),
        "shop": str(rng.randrange(10_000, 99_999)),
    }


def _call(name: str, arguments: dict[str, Any]) -> str:
    body = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    return f"<tool_call>\n{body}\n</tool_call>"


def _observation(payload: Any) -> str:
    body = json.dumps(payload, ensure_ascii=False)
    return f"<|im_start|>user\n<tool_response>\n{body}\n</tool_response><|im_end|>"


def _episode(rng: random.Random) -> str:
    s = _slots(rng)
    query = f"{s['brand']} {s['color']} {s['product']}"
    find_args: dict[str, Any] = {"q": query, "page": rng.randint(1, 5)}
    if rng.random() < 0.6:
        find_args["price"] = f"{s['low']}-{s['high']}"
    if rng.random() < 0.4:
        find_args["service"] = ",".join(rng.sample(_SERVICES, rng.randint(1, 2)))
    if rng.random() < 0.3:
        find_args["sort"] = rng.choice(_SORTS)
    hits = [
        {
            "product_id": str(rng.randrange(100_000_000, 999_999_999)),
            "shop_id": s["shop"] if i == 0 else str(rng.randrange(10_000, 99_999)),
            "title": " ".join(rng.choice(words) for words in (_BRANDS, _COLORS, _MATERIALS, _PRODUCTS)),
            "price": round(rng.uniform(5, 2000), 2),
            "service": rng.sample(_SERVICES, rng.randint(0, 3)),
            "sold_count": rng.randrange(0, 50_000),
        }
        for i in range(rng.randint(1, 3))
    ]
    view = [
        {
            "product_id": hit["product_id"],
            "short_description": f"{s['material']} {s['product']}, {s['size']}",
            "sku_options": {"color": rng.sample(_COLORS, 2), "size": rng.sample(_SIZES, 2)},
            "attributes": {"brand": rng.choice(_BRANDS), "material": s["material"]},
        }
        for hit in hits[:2]
    ]
    ids = ",".join(hit["product_id"] for hit in hits[:2])
    turns = [
        "<|im_start|>user\n" + rng.choice(_ASKS).format(**s) + "<|im_end|>",
        "<|im_start|>assistant\n<think>\n"
        + rng.choice(_THOUGHTS).format(**s)
        + "\n</think>\n\n"
        + _call("find_product", find_args)
        + "<|im_end|>",
        _observation(hits),
        "<|im_start|>assistant\n" + _call("view_product_information", {"product_ids": ids}) + "<|im_end|>",
        _observation(view),
        "<|im_start|>assistant\n<think>\n"
        + rng.choice(_THOUGHTS).format(**s)
        + "\n</think>\n\n"
        + rng.choice(_ANSWERS).format(**s)
        + "\n"
        + _call("recommend_product", {"product_ids": ids})
        + "\n"
        + _call("terminate", {"status": rng.choice(("success", "success", "failure"))})
        + "<|im_end|>",
    ]
    return "\n".join(turns)


def train_tiny_tokenizer(vocab_size: int = VOCAB_SIZE) -> Any:
    """Train the byte-level BPE on :func:`shopping_corpus` and wrap it as a transformers tokenizer.

    Args:
        vocab_size: Total vocabulary, tag tokens included.

    Returns:
        A ``PreTrainedTokenizerFast`` with ``<|im_end|>`` as EOS, ``<|endoftext|>`` as padding and the tools
        chat template (thinking variant).
    """
    return wrap_tiny_tokenizer(_train_backend(vocab_size))


def _train_backend(vocab_size: int) -> Any:
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size - len(TAG_TOKENS),
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(shopping_corpus(), trainer=trainer)
    tokenizer.add_tokens([AddedToken(tag, special=False, normalized=False) for tag in TAG_TOKENS])
    return tokenizer


def wrap_tiny_tokenizer(backend: Any) -> Any:
    """A trained tiny BPE (a ``tokenizers.Tokenizer``) as the transformers tokenizer
    :func:`train_tiny_tokenizer` returns."""
    from transformers import PreTrainedTokenizerFast

    wrapped = PreTrainedTokenizerFast(tokenizer_object=backend, **_TINY_SPECIAL_TOKENS, model_max_length=4096)
    wrapped.chat_template = chatml_tools_template(thinking=True)
    return wrapped


#: The tiny tokenizer's named special tokens (transformers' ``special_tokens_map``, which templates see).
_TINY_SPECIAL_TOKENS = {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}


def tiny_chat_tokenizer(backend: Any) -> ChatTemplateTokenizer:
    """A trained tiny BPE with the chat template of :func:`wrap_tiny_tokenizer`, rendering the same text and
    counting the same ids without importing transformers (what the corpus build needs of it). The template
    is this package's own (:func:`chatml_tools_template`), so it renders outside Jinja's sandbox."""
    template = chatml_tools_template(thinking=True)
    return ChatTemplateTokenizer(backend, template, _TINY_SPECIAL_TOKENS, sandboxed=False)


def _tokenizer_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/shoparena/tokenizers`` (``~/.cache/shoparena/tokenizers`` by default)."""
    from shoparena.models.smollm2 import default_cache_dir

    return default_cache_dir() / "tokenizers"


def tiny_tokenizer_json(cache_dir: str | Path | None = None, vocab_size: int = VOCAB_SIZE) -> str:
    """The trained tiny BPE as ``tokenizer.json`` text, trained once per machine and kept in ``cache_dir``
    (default ``~/.cache/shoparena/tokenizers``).

    The file is named by what the training reads (the corpus, the vocabulary size, the special and tag
    tokens, the ``tokenizers`` version), so a changed recipe trains anew; a file that does not load is
    trained over. ``Tokenizer.from_str`` of the text encodes exactly as the tokenizer just trained does
    (``tests/models/test_tiny_tokenizer_cache.py``). A folder that cannot be written only costs the caching.
    """
    import hashlib

    import tokenizers
    from tokenizers import Tokenizer

    recipe = [shopping_corpus(), vocab_size, SPECIAL_TOKENS, TAG_TOKENS, tokenizers.__version__]
    key = hashlib.sha256(json.dumps(recipe, ensure_ascii=False).encode("utf-8")).hexdigest()[:24]
    path = Path(cache_dir) if cache_dir is not None else _tokenizer_cache_dir()
    path = path / f"{KIND}-{key}.json"
    try:
        text = path.read_text(encoding="utf-8")
        Tokenizer.from_str(text)
        return text
    except Exception:  # missing or damaged (OSError; tokenizers raises a plain Exception)
        pass
    text = _train_backend(vocab_size).to_str()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)  # concurrent builds each write whole files; the last rename wins
    except OSError:
        pass
    return text


def random_qwen3(
    tokenizer: Any,
    *,
    hidden: int,
    layers: int,
    heads: int,
    kv_heads: int,
    seed: int,
    intermediate: int | None = None,
    max_positions: int = 4096,
) -> Any:
    """A randomly initialised Qwen3 causal LM over ``tokenizer`` (which holds :data:`SPECIAL_TOKENS`), with
    tied embeddings, no BOS, ``<|im_end|>`` as EOS and ``<|endoftext|>`` as padding; weights from
    ``torch.manual_seed(seed)``. The one recipe behind the tiny test model and the CPU students.
    """
    import torch
    from transformers import GenerationConfig, Qwen3Config, Qwen3ForCausalLM

    special = {tok: tokenizer.convert_tokens_to_ids(tok) for tok in SPECIAL_TOKENS}
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=intermediate or hidden * 3,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=hidden // heads,
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=special["<|im_end|>"],
        pad_token_id=special["<|endoftext|>"],
    )
    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(config)
    model.generation_config = GenerationConfig(
        eos_token_id=[special["<|im_end|>"], special["<|endoftext|>"]], pad_token_id=special["<|endoftext|>"]
    )
    return model


def build_tiny_qwen3(
    out_dir: str | Path,
    *,
    seed: int = 0,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """Build (or reuse) the tiny Qwen3 folder.

    Args:
        out_dir: Destination folder; created, or replaced when ``force`` or when it is not a valid build.
        seed: Torch seed for the random weights.
        force: Rebuild even when a valid folder with the same seed exists.
        progress: Called with short status lines (the CLI shows them).

    Returns:
        ``out_dir``, loadable with ``AutoTokenizer`` / ``AutoModelForCausalLM``.

    Raises:
        ImportError: torch, transformers or tokenizers is missing (``pip install 'shoparena[train]'``).
    """
    out = Path(out_dir).expanduser()
    say = progress or (lambda _msg: None)
    if not force and is_valid_model_dir(out, kind=KIND, template_version=TEMPLATE_VERSION):
        manifest = read_manifest(out)
        if manifest is not None and manifest.details.get("seed") == seed:
            say(f"reusing {out}")
            return out
    say("training tokenizer")
    tokenizer = train_tiny_tokenizer()
    say("initialising weights")
    model = random_qwen3(tokenizer, hidden=64, intermediate=128, layers=2, heads=4, kv_heads=2, seed=seed)
    return save_model_folder(
        model,
        tokenizer,
        out,
        kind=KIND,
        source="random-init",
        template_version=TEMPLATE_VERSION,
        details={"seed": seed, "vocab_size": len(tokenizer)},
        say=say,
    )
