"""A miner whose model request, reasoning and answer hold a lone surrogate (half of a UTF-16 pair, as a JSON
escape gives): the proxy must log the request, and the viewer and the judge must read the answer."""

from shoparena.agent_sdk import ProxyClient, Tool, create_dialogue_step, execute_tool_call

client = ProxyClient(retry_delay=0.01, rate_limit_retry_delay=0.01)
LONE = "\ud83d"  # a high surrogate with no low one after it


@Tool
def find_product(q: str, page: int = 1) -> list:
    return client.find_product(q, page) or []


@Tool
def recommend_product(product_ids: str) -> str:
    return f"Having recommended the products to the user: {product_ids}."


def agent_main(problem: dict) -> list:
    query = problem["query"]
    # The SDK sends JSON with ASCII escapes: the proxy receives "\\ud83d", which decodes to a lone surrogate.
    client.chat_completion({"model": "m", "messages": [{"role": "user", "content": query + LONE}]})
    found = execute_tool_call("find_product", {"q": query, "page": 1})
    first = create_dialogue_step(f"Search first {LONE}.", [found], "", query + LONE, 1)
    ids = ",".join(hit["product_id"] for hit in found["result"][:1])
    rec = execute_tool_call("recommend_product", {"product_ids": ids})
    return [first, create_dialogue_step(f"Pick {ids} {LONE}.", [rec], f"Done {LONE}.", query + LONE, 2)]
