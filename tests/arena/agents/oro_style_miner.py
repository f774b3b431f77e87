"""A miner written the way ORO's reference miner is: stateless tagged history, tags in content, no nonces.

Every step sends two messages: a system prompt built from the registered tools and ONE user message holding
the whole history (``# Dialogue Records History`` then ``<user>``, ``<think>``, ``<tool_call>``, ``<obs>``,
``<response>`` entries). Tool calls are read only from ``<tool_call>`` tags in ``message.content``, run with
``execute_tool_call`` (catalogue tools via ``ProxyClient.get``, with ``q`` '+'-encoded first, as upstream
does) and never carry nonce headers. The only shoparena import is the agent SDK.
"""

import inspect
import json
import re
from os import getenv
from urllib.parse import quote_plus

from shoparena.agent_sdk import (
    ProxyClient,
    Tool,
    create_dialogue_step,
    execute_tool_call,
    generate_tool_call_id,
)

STEP_LIMIT = 20
proxy = ProxyClient(timeout=60, max_retries=2)


@Tool
def find_product(q: str, page: int = 1, shop_id: str | None = None, price: str | None = None,
                 sort: str | None = None, service: str | None = None) -> list[dict]:
    """Search the catalogue; 10 products per page."""
    params = {"q": quote_plus(q), "page": page, "shop_id": shop_id, "price": price, "sort": sort,
              "service": service}
    return proxy.get("/search/find_product", params) or []


@Tool
def view_product_information(product_ids: str) -> list[dict]:
    """Full details of comma-separated product ids."""
    return proxy.get("/search/view_product_information", {"product_ids": product_ids}) or []


@Tool
def recommend_product(product_ids: str) -> str:
    """Recommend comma-separated product ids to the user."""
    return f"Having recommended the products to the user: {product_ids}."


@Tool
def terminate(status: str = "success") -> str:
    """End the dialogue."""
    return f"The interaction has been completed with status: {status}"


def tool_descriptions() -> str:
    from shoparena.agent_sdk import _TOOL_REGISTRY

    return "\n".join(f"{i}. {name}{inspect.signature(fn)}: {inspect.getdoc(fn)}"
                     for i, (name, fn) in enumerate(_TOOL_REGISTRY.items(), 1))


SYSTEM = ("# Role\nYou are a shopping assistant.\n\n# Available Tools\n" + tool_descriptions()
          + "\n\n# Output Format\n<think>...</think> then <tool_call>[{\"name\": ..., \"parameters\": {...}}]"
          "</tool_call> and/or <response>...</response>.")


def tag(role: str, value) -> str:
    return f"<{role}>{json.dumps(value) if isinstance(value, (dict, list)) else value}</{role}>"


def parse(content: str) -> dict:
    think = re.search(r"<think>(.+?)</think>", content, re.DOTALL)
    response = re.search(r"<response>(.+?)</response>", content, re.DOTALL)
    calls = []
    block = re.search(r"<tool_call>(.+?)</tool_call>", content, re.DOTALL)
    if block:
        try:
            items = json.loads(block.group(1).strip())
            for item in items if isinstance(items, list) else [items]:
                params = item.get("parameters", {})
                calls.append({"name": item["name"], "parameters": params,
                              "tool_call_id": generate_tool_call_id(item["name"], params)})
        except (ValueError, KeyError, TypeError, AttributeError):
            calls = []
    return {"think": think.group(1).strip() if think else "", "tool_call": calls,
            "response": response.group(1).strip() if response else ""}


def agent_main(problem_data: dict) -> list[dict]:
    query = problem_data.get("query", "")
    model = getenv("SANDBOX_MODEL", "deepseek-ai/DeepSeek-V3.2-TEE")
    history = [tag("user", query)]
    steps = []
    for number in range(1, STEP_LIMIT + 1):
        reply = proxy.post("/inference/chat/completions", json_data={
            "model": model, "temperature": 0.0, "stream": False,
            "messages": [{"role": "system", "content": SYSTEM},
                         {"role": "user", "content": "# Dialogue Records History\n" + "\n\n".join(history)}]})
        if not reply or not reply.get("choices"):
            break
        parsed = parse(reply["choices"][0].get("message", {}).get("content") or "")
        if not (parsed["think"] or parsed["tool_call"] or parsed["response"]):
            break
        results, observations = [], []
        for call in parsed["tool_call"]:
            result = execute_tool_call(call["name"], call["parameters"])
            results.append(result)
            observations.append({"tool_call_id": call["tool_call_id"], "results": result["result"]})
        steps.append(create_dialogue_step(parsed["think"], results, parsed["response"], query, number))
        if parsed["think"]:
            history.append(tag("think", parsed["think"]))
        if parsed["tool_call"]:
            history.append(tag("tool_call", [{"name": c["name"], "parameters": c["parameters"]}
                                             for c in parsed["tool_call"]]))
        if observations:
            history.append(tag("obs", observations))
        if parsed["response"]:
            history.append(tag("response", parsed["response"]))
        if any(c["name"] == "terminate" for c in parsed["tool_call"]):
            break
    return steps
