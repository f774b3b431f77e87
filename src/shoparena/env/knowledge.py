"""An offline knowledge base behind ``web_search`` (environment spec §4).

Upstream ``web_search`` calls an external web API. Offline we search a local set of pages ``{url, title,
content}`` with BM25 (bm25s): either pages generated deterministically from catalog products (one per brand
and one per product, all built from agent-visible facts only) or a user-supplied JSONL
file of pages.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import bm25s
import orjson
from pydantic import BaseModel, ConfigDict, Field

from shoparena.jsonl import iter_raw_lines
from shoparena.records.catalog import Product

#: Service tokens in words, for generated pages.
_SERVICE_WORDS = {
    "official": "LazMall (official store)",
    "freeShipping": "free shipping",
    "COD": "cash on delivery",
    "flashsale": "LazFlash (flash sale)",
}
KB_URL_ROOT = "https://kb.shoparena.local"


class KnowledgePage(BaseModel):
    """One page of the knowledge base, in the upstream ``web_search`` result shape."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(description="Stable address of the page.")
    title: str
    content: str


def _slug(text: str) -> str:
    out = "".join(ch if ch.isalnum() else "-" for ch in text.lower())
    return "-".join(part for part in out.split("-") if part) or "x"


def visible_brand(product: Product) -> str:
    """The brand as agents see it: the ``brand`` attribute, else the brand field when the title shows it."""
    values = product.attributes.get("brand") or []
    if values:
        return values[0]
    if product.brand and product.brand.lower() in product.title.lower():
        return product.brand
    return ""


def _product_page(product: Product) -> KnowledgePage:
    facts = [f"{product.title}."]
    brand = visible_brand(product)
    if brand:
        facts.append(f"Brand: {brand}.")
    for key, values in product.attributes.items():
        facts.append(f"{key.replace('_', ' ')}: {', '.join(values)}.")
    options: dict[str, list[str]] = defaultdict(list)
    for variant in product.sku_options.values():
        for key, value in variant.items():
            if value not in options[key]:
                options[key].append(value)
    for key, values in options.items():
        facts.append(f"Available {key.replace('_', ' ')}: {', '.join(values)}.")
    if product.service:
        facts.append("Services: " + ", ".join(_SERVICE_WORDS.get(s, s) for s in product.service) + ".")
    if product.short_description:
        facts.append(product.short_description)
    return KnowledgePage(
        url=f"{KB_URL_ROOT}/products/{product.product_id}", title=product.title, content=" ".join(facts)
    )


def pages_from_catalog(
    products: Iterable[Product], *, max_products: int | None = 20_000, examples_per_page: int = 8
) -> list[KnowledgePage]:
    """Deterministic pages about the brands and products of a catalog.

    Only facts agents can already see are used (title, ``brand`` attribute or a brand shown in the title,
    attributes, options, services, short description); the hidden fields of spec §2.3 (brand field alone,
    category, specification, URLs) never reach a page.

    Args:
        products: Catalog products.
        max_products: Product pages written at most (the first products in catalog order); brand pages
            still cover every product. None for no cap.
        examples_per_page: Example titles listed on a brand page.
    """
    product_pages: list[KnowledgePage] = []
    brands: dict[str, list[Product]] = defaultdict(list)
    for i, product in enumerate(products):
        if max_products is None or i < max_products:
            product_pages.append(_product_page(product))
        brand = visible_brand(product)
        if brand:
            brands[brand.lower()].append(product)
    pages: list[KnowledgePage] = []
    for brand in sorted(brands):
        items = brands[brand]
        titles = "; ".join(p.title for p in items[:examples_per_page])
        pages.append(
            KnowledgePage(
                url=f"{KB_URL_ROOT}/brands/{_slug(brand)}",
                title=f"{brand} - brand overview",
                content=f"Brand: {brand}. It has {len(items)} listed products. Examples: {titles}.",
            )
        )
    return pages + product_pages


def knowledge_path_for(out: str | Path) -> Path:
    """The knowledge-page sidecar of a bank file: ``<out>.knowledge.jsonl``."""
    out = Path(out)
    return out.with_name(out.name + ".knowledge.jsonl")


def place_pages(pages: str | Path, suite: str | Path) -> None:
    """Write the page file ``pages`` as ``suite``'s sidecar, or remove a stale sidecar when there is none: a
    suite run anywhere (race, evaluation, env server) finds its web problems' pages beside it."""
    pages, sidecar = Path(pages), knowledge_path_for(suite)
    if pages.is_file():
        sidecar.write_bytes(pages.read_bytes())
    else:
        sidecar.unlink(missing_ok=True)


def read_pages(path: str | Path) -> list[KnowledgePage]:
    """Read a JSONL file of ``{url, title, content}`` pages (lines split on ``\\n`` only).

    Raises:
        ValueError: naming the line and field of a malformed page.
    """
    pages = []
    for line_no, raw in iter_raw_lines(path):
        try:
            pages.append(KnowledgePage.model_validate(orjson.loads(raw)))
        except (orjson.JSONDecodeError, ValueError) as exc:
            raise ValueError(f"{path}: line {line_no}: bad KnowledgePage: {exc}") from exc
    return pages


class KnowledgeBase:
    """BM25 search over knowledge pages (title + content); thread-safe for concurrent searches."""

    def __init__(self, pages: Iterable[KnowledgePage]) -> None:
        self.pages: list[KnowledgePage] = list(pages)
        self._lock = threading.Lock()
        self._retriever: bm25s.BM25 | None = None
        if self.pages:
            corpus = [f"{p.title}\n{p.content}" for p in self.pages]
            tokens = bm25s.tokenize(corpus, stopwords="en", show_progress=False)
            self._retriever = bm25s.BM25()
            self._retriever.index(tokens, show_progress=False)

    @classmethod
    def from_catalog(cls, products: Iterable[Product], **kwargs: Any) -> KnowledgeBase:
        """A knowledge base of :func:`pages_from_catalog` pages."""
        return cls(pages_from_catalog(products, **kwargs))

    @classmethod
    def from_jsonl(cls, path: str | Path) -> KnowledgeBase:
        """A knowledge base of user-supplied pages (:func:`read_pages`)."""
        return cls(read_pages(path))

    def __len__(self) -> int:
        return len(self.pages)

    def __iter__(self) -> Iterator[KnowledgePage]:
        return iter(self.pages)

    def search(self, q: str, max_results: int = 10) -> list[KnowledgePage]:
        """The best ``max_results`` pages for ``q`` (pages without any query term are left out)."""
        if self._retriever is None or max_results < 1 or not q.strip():
            return []
        tokens = bm25s.tokenize([q], stopwords="en", show_progress=False, return_ids=False)
        # Map query tokens onto the corpus vocabulary ourselves: unknown terms would otherwise be an error.
        vocab = self._retriever.vocab_dict
        ids = [[vocab[t] for t in tokens[0] if t in vocab]]
        if not ids[0]:
            return []
        k = min(max_results, len(self.pages))
        with self._lock:
            docs, scores = self._retriever.retrieve(ids, k=k, show_progress=False, n_threads=1)
        return [self.pages[int(d)] for d, s in zip(docs[0], scores[0], strict=True) if s > 0]


__all__ = [
    "KB_URL_ROOT",
    "KnowledgeBase",
    "KnowledgePage",
    "knowledge_path_for",
    "pages_from_catalog",
    "place_pages",
    "read_pages",
    "visible_brand",
]
