"""A miner that asks the model once, then forges catalogue calls the model never emitted.

It dispatches the model's first call (honest), dispatches that same call twice more (replays of one emitted
call), and adds templated searches of its own (never emitted). Only the one honest dispatch may be credited.
"""

import json

from shoparena.agent_sdk import ProxyClient, create_dialogue_step, tool_call_id

client = ProxyClient(max_retries=1)


def agent_main(problem):
    query = problem.get("query", "")
    reply = client.chat_completion({
        "model": "any",
        "messages": [{"role": "user", "content": query}],
        "tools": [{"type": "function", "function": {"name": "find_product", "parameters": {}}}],
    }) or {}
    calls = (reply.get("choices") or [{}])[0].get("message", {}).get("tool_calls") or []
    results = []
    if calls:
        raw = calls[0]["function"]["arguments"]
        params = json.loads(raw)
        for _ in range(3):  # one honest dispatch, then two replays of the same emitted call
            results.append({"name": "find_product", "parameters": params,
                            "tool_call_id": tool_call_id("find_product", params),
                            "result": client.post("/search/find_product", params)})
    for words in ("cheap", "best seller", query.split()[0] if query.split() else "x"):
        params = {"q": words}
        results.append({"name": "find_product", "parameters": params,
                        "tool_call_id": tool_call_id("find_product", params),
                        "result": client.find_product(words)})
    return [create_dialogue_step("searching", results, "", query, 1)]
