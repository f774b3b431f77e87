"""The one tool-name catalogue: which tools exist, in which upstream order, and what kind each is.

Every layer (environment, formats, judge, arena proxy, agents) takes tool names from here; nothing else
spells the tuples out.
"""

from __future__ import annotations

FIND_PRODUCT = "find_product"
VIEW_PRODUCT = "view_product_information"
RECOMMEND_PRODUCT = "recommend_product"
TERMINATE = "terminate"
WEB_SEARCH = "web_search"

#: Upstream registry order of the core tools (system-prompt numbering follows it).
CORE_TOOLS: tuple[str, ...] = (FIND_PRODUCT, VIEW_PRODUCT, RECOMMEND_PRODUCT, TERMINATE)
#: Upstream tool registry order; system-prompt numbering follows it, leaving gaps for excluded tools.
REGISTRY_ORDER: tuple[str, ...] = (*CORE_TOOLS, WEB_SEARCH)
#: The ORO sandbox's extra catalogue helpers.
ORO_HELPER_TOOLS: tuple[str, ...] = ("check_product_match", "find_products_in_same_shop", "calculate_voucher")
#: Search tools served by the catalogue (``/search/<name>``).
SEARCH_TOOLS: tuple[str, ...] = (FIND_PRODUCT, VIEW_PRODUCT)
#: Tools whose dispatches are "catalogue dispatches" (distillation spec §2).
CATALOGUE_TOOLS: frozenset[str] = frozenset({*SEARCH_TOOLS, *ORO_HELPER_TOOLS})
#: Tools whose main argument is a free-text query (``q``).
QUERY_TOOLS: frozenset[str] = frozenset({FIND_PRODUCT, WEB_SEARCH})

__all__ = [
    "CATALOGUE_TOOLS",
    "CORE_TOOLS",
    "FIND_PRODUCT",
    "ORO_HELPER_TOOLS",
    "QUERY_TOOLS",
    "RECOMMEND_PRODUCT",
    "REGISTRY_ORDER",
    "SEARCH_TOOLS",
    "TERMINATE",
    "VIEW_PRODUCT",
    "WEB_SEARCH",
]
