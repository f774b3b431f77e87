"""What a tool-calling shopping policy is told: the system prompt and the OpenAI tool schemas.

One home for the built-in ``agentic`` miner (which runs in the sandbox and may import only
:mod:`shoparena.agent_sdk`), the chat policies of ``eval``, the corpus's default system turn and the
verifiers environment, so that training, evaluation and the arena prompt a policy alike. Stdlib only.
"""

from __future__ import annotations

SYSTEM_PROMPT = (
    "You are a shopping assistant working in a product catalogue. Use the tools to search "
    "(find_product), inspect candidates (view_product_information), look up background facts with "
    "web_search when the request describes a brand instead of naming it, then call recommend_product with "
    "the chosen product ids (comma-separated, one per requested item, in the requested order) and finally "
    "terminate. Think about the tool results before choosing: compare candidates on price, options and "
    "services."
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "find_product",
            "description": "Search the catalogue; 10 hits per page.",
            "parameters": {
                "type": "object",
                "properties": {
                    "q": {"type": "string", "description": "Search words."},
                    "page": {"type": "integer", "description": "Result page, 1-5."},
                    "shop_id": {"type": "string", "description": "Only this shop."},
                    "price": {"type": "string", "description": "Price range 'lo-hi'."},
                    "sort": {"type": "string", "description": "priceasc, pricedesc or order."},
                    "service": {"type": "string", "description": "Comma-separated service filters."},
                },
                "required": ["q"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "view_product_information",
            "description": "Details (SKU options, attributes) of comma-separated product ids.",
            "parameters": {
                "type": "object",
                "properties": {"product_ids": {"type": "string"}},
                "required": ["product_ids"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "web_search",
            "description": "Look up background knowledge (brands, facts) on the web.",
            "parameters": {
                "type": "object",
                "properties": {
                    "q": {"type": "string", "description": "Search words."},
                    "max_results": {"type": "integer", "description": "1-20 results."},
                },
                "required": ["q"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "recommend_product",
            "description": "Recommend products to the user (comma-separated ids).",
            "parameters": {
                "type": "object",
                "properties": {"product_ids": {"type": "string"}},
                "required": ["product_ids"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "terminate",
            "description": "End the conversation.",
            "parameters": {
                "type": "object",
                "properties": {"status": {"type": "string", "enum": ["success", "failure"]}},
                "required": ["status"],
            },
        },
    },
]


__all__ = ["SYSTEM_PROMPT", "TOOLS"]
