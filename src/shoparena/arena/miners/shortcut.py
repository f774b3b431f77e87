"""Built-in miner ``shortcut``: no model at all. Search the request, recommend the first hit, terminate.

Stdlib + :mod:`shoparena.agent_sdk` only (it runs inside the sandbox).
"""

from shoparena.agent_sdk import ProxyClient, create_dialogue_step, tool_call_id

client = ProxyClient(max_retries=2, retry_delay=0.5, rate_limit_retry_delay=1.0)


def call(name, params, result):
    return {"name": name, "parameters": params, "tool_call_id": tool_call_id(name, params), "result": result}


def agent_main(problem):
    query = problem.get("query", "")
    hits = client.find_product(query) or []
    first = next((str(h["product_id"]) for h in hits if isinstance(h, dict) and h.get("product_id")), "")
    calls = [call("find_product", {"q": query, "page": 1}, hits)]
    steps = [create_dialogue_step("", calls, "", query, 1)]
    final = []
    if first:
        final.append(
            call(
                "recommend_product",
                {"product_ids": first},
                f"Having recommended the products to the user: {first}.",
            )
        )
    status = "success" if first else "failure"
    done = f"The interaction has been completed with status: {status}"
    final.append(call("terminate", {"status": status}, done))
    steps.append(create_dialogue_step("", final, "", query, 2))
    return steps
