"""Built-in miner ``subtask``: a deterministic search loop with the language model as a picker/narrator.

The code builds the search query itself, calls ``find_product`` and ``view_product_information`` itself
(plain GETs, so the proxy stamps every dispatch ``nonce_status: missing``), then asks the model only to pick
one of the listed candidates and say why. The pick is the first listed id the reply mentions (else the top
hit); the code then recommends it and terminates. This is the "sub-task" shape of distillation spec §2.

Stdlib + :mod:`shoparena.agent_sdk` only (it runs inside the sandbox).
"""

import json
import os
import re

from shoparena.agent_sdk import ProxyClient, create_dialogue_step, tool_call_id

MODEL = os.environ.get("SANDBOX_MODEL") or "deepseek-ai/DeepSeek-V3.2-TEE"
TOP_K = 5
_VOUCHER = re.compile(r"\s*My budget is only.*$", re.DOTALL)
_WORDS = re.compile(r"[A-Za-z0-9][A-Za-z0-9.'-]*")

client = ProxyClient(max_retries=2, retry_delay=0.5, rate_limit_retry_delay=1.0)


def call(name, params, result):
    return {"name": name, "parameters": params, "tool_call_id": tool_call_id(name, params), "result": result}


def search_words(query):
    """A templated query: the request without its voucher appendix, backticks and line breaks, 40 words."""
    body = _VOUCHER.sub("", query).replace("`", " ")
    return " ".join(_WORDS.findall(body)[:40])


def agent_main(problem):
    query = problem.get("query", "")
    q = search_words(query)
    hits = client.find_product(q) or []
    steps = [
        create_dialogue_step(
            f"Searching the catalogue with the request text: {q[:80]}",
            [call("find_product", {"q": q, "page": 1}, hits)],
            "",
            query,
            1,
        )
    ]
    top = [h for h in hits if isinstance(h, dict) and h.get("product_id")][:TOP_K]
    if not top:
        done = "The interaction has been completed with status: failure"
        end = call("terminate", {"status": "failure"}, done)
        steps.append(create_dialogue_step("Nothing found.", [end], "", query, 2))
        return steps
    ids = ",".join(str(h["product_id"]) for h in top)
    views = client.view_product_information(ids) or []
    steps.append(
        create_dialogue_step(
            f"Viewing the top {len(top)} hits.",
            [call("view_product_information", {"product_ids": ids}, views)],
            "",
            query,
            2,
        )
    )
    listing = "\n".join(
        f"- {h['product_id']}: {h.get('title', '')} | price {h.get('price')} | "
        f"services {','.join(h.get('service') or []) or 'none'}"
        for h in top
    )
    prompt = (
        f"A shopper asked:\n{query}\n\nCandidates:\n{listing}\n\n"
        "Reply with the product_id of the best candidate and one sentence saying why."
    )
    reply = client.chat_completion(
        {
            "model": MODEL,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": 0.0,
            "max_tokens": 256,
        }
    )
    text = ""
    if reply and reply.get("choices"):
        message = reply["choices"][0].get("message") or {}
        text = (message.get("content") or message.get("reasoning_content") or "").strip()
        text += " " + json.dumps([c.get("function", {}) for c in message.get("tool_calls") or []])
    listed = [str(h["product_id"]) for h in top]
    chosen = next((pid for pid in listed if pid in text), listed[0])
    narration = (text.strip() or "No model reply; taking the top hit.")[:1500]
    rec = call(
        "recommend_product",
        {"product_ids": chosen},
        f"Having recommended the products to the user: {chosen}.",
    )
    end = call("terminate", {"status": "success"}, "The interaction has been completed with status: success")
    steps.append(create_dialogue_step(narration, [rec, end], f"Recommended: {chosen}.", query, 3))
    return steps
