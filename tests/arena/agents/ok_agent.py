"""A well-behaved ORO-style miner: one search through the proxy, then a recommendation."""

from shoparena.agent_sdk import ProxyClient, Tool, create_dialogue_step, execute_tool_call

client = ProxyClient(retry_delay=0.01, rate_limit_retry_delay=0.01)


@Tool
def find_product(q: str, page: int = 1) -> list:
    return client.find_product(q, page) or []


@Tool
def recommend_product(product_ids: str) -> str:
    return f"Having recommended the products to the user: {product_ids}."


def agent_main(problem: dict) -> list:
    query = problem["query"]
    found = execute_tool_call("find_product", {"q": query, "page": 1})
    first = create_dialogue_step("Search first.", [found], "", query, 1)
    ids = ",".join(hit["product_id"] for hit in found["result"][:1])
    rec = execute_tool_call("recommend_product", {"product_ids": ids})
    return [first, create_dialogue_step(f"Pick {ids}.", [rec], "Done.", query, 2)]
