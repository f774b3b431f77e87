"""Built-in miner ``agentic``: the language model emits every tool call; this file only executes them.

Loop (at most ``MAX_STEPS`` model turns): send the conversation to the proxy's
``/inference/chat/completions`` with OpenAI tool schemas; take the reply's tool calls (native ``tool_calls``
first, else ``<tool_call>`` blocks, as the proxy parsed them into ``oro_metadata.parsed_tool_calls``);
dispatch catalogue calls through the proxy with the nonce the proxy minted for them
(``X-Tool-Nonce`` / ``X-Tool-Call-Id`` and the model's raw ``arguments`` bytes as the body); run
``recommend_product`` and ``terminate`` locally; feed the results back as ``tool`` messages. It stops at
``terminate``, at the step cap, or after two replies without a tool call. Nothing is recommended by code:
a trajectory without an LLM-emitted ``recommend_product`` simply has none.

Stdlib + :mod:`shoparena.agent_sdk` only (it runs inside the sandbox).
"""

import json
import os
import re

from shoparena.agent_sdk import ProxyClient, create_dialogue_step, tool_call_id
from shoparena.agent_sdk.prompt import SYSTEM_PROMPT, TOOLS

MAX_STEPS = 12
MODEL = os.environ.get("SANDBOX_MODEL") or "deepseek-ai/DeepSeek-V3.2-TEE"
#: The run's cap on reply tokens (the arena announces it); the proxy enforces it either way.
MAX_TOKENS = int(os.environ.get("SHOPARENA_MAX_TOKENS") or 1024)
#: Tool results fed back to the model are cut to this many characters (whole list items are dropped).
RESULT_CHARS = 12000
#: Tools served by the proxy (web_search: the offline knowledge pages, for web problems).
PROXY_TOOLS = ("find_product", "view_product_information", "web_search")
_THINK = re.compile(r"<think>(.*?)(?:</think>|$)", re.DOTALL)
_BLOCKS = re.compile(r"<tool_call>.*?(?:</tool_call>|$)|<response>.*?(?:</response>|$)", re.DOTALL)

client = ProxyClient(max_retries=2, retry_delay=0.5, rate_limit_retry_delay=1.0)


def user_message(problem):
    """The opening user turn: category and difficulty, then the request (the planner backend reads it)."""
    return (
        f"Shopping request (category: {problem.get('category') or 'Product'}, "
        f"difficulty: {problem.get('difficulty') or 'unknown'}):\n{problem.get('query', '')}"
    )


def compact(result):
    """Tool result as text for the model: prose fields dropped, whole items cut past RESULT_CHARS."""
    if isinstance(result, list):
        items = [
            {k: v for k, v in item.items() if k not in ("description", "short_description")}
            if isinstance(item, dict)
            else item
            for item in result
        ]
        while items and len(json.dumps(items)) > RESULT_CHARS:
            items.pop()
        return json.dumps(items)
    text = result if isinstance(result, str) else json.dumps(result)
    return text[:RESULT_CHARS]


def reply_calls(reply, message):
    """(call_id, name, raw_arguments) of the reply: native calls, else the proxy-parsed XML blocks."""
    native = message.get("tool_calls") or []
    calls = []
    for call in native:
        function = call.get("function") or {}
        raw = function.get("arguments", "{}")
        calls.append(
            (
                str(call.get("id", "")),
                function.get("name", ""),
                raw if isinstance(raw, str) else json.dumps(raw),
            )
        )
    if calls:
        return calls
    meta = reply.get("oro_metadata") or {}
    return [
        (str(c.get("id", "")), c.get("name", ""), c.get("arguments", "{}"))
        for c in meta.get("parsed_tool_calls") or []
        if isinstance(c, dict)
    ]


def execute(name, raw, call_id, nonces, problem):
    """Run one emitted call; returns (parameters, result)."""
    try:
        params = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return {}, f"Error: arguments of {name} are not valid JSON."
    if not isinstance(params, dict):
        return {}, f"Error: arguments of {name} must be a JSON object."
    if name in PROXY_TOOLS:
        result = client.dispatch_tool(name, raw, nonces.get(call_id), call_id)
        if result is None:
            return params, f"Error: {name} failed (HTTP {client.last_status})."
        return params, result
    if name == "recommend_product":
        return params, f"Having recommended the products to the user: {params.get('product_ids', '')}."
    if name == "terminate":
        return params, f"The interaction has been completed with status: {params.get('status', 'success')}"
    return params, f"Error: unknown tool {name!r}."


def agent_main(problem):
    query = problem.get("query", "")
    messages = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": user_message(problem)},
    ]
    steps, idle = [], 0
    for _ in range(MAX_STEPS):
        reply = client.chat_completion(
            {
                "model": MODEL,
                "messages": messages,
                "tools": TOOLS,
                "temperature": 0.0,
                "max_tokens": MAX_TOKENS,
            }
        )
        if not reply or not reply.get("choices"):
            break
        message = reply["choices"][0].get("message") or {}
        content = message.get("content") or ""
        think_match = _THINK.search(content)
        think = (message.get("reasoning_content") or (think_match.group(1) if think_match else "")).strip()
        response = _BLOCKS.sub("", _THINK.sub("", content)).strip()
        calls = reply_calls(reply, message)
        nonces = client.parse_nonces(reply)
        results, tool_messages, done = [], [], False
        for call_id, name, raw in calls:
            params, result = execute(name, raw, call_id, nonces, problem)
            results.append(
                {
                    "name": name,
                    "parameters": params,
                    "tool_call_id": tool_call_id(name, params),
                    "result": result,
                }
            )
            tool_messages.append(
                {"role": "tool", "tool_call_id": call_id, "name": name, "content": compact(result)}
            )
            done = done or name == "terminate"
        steps.append(create_dialogue_step(think, results, response, query, len(steps) + 1))
        assistant = {"role": "assistant", "content": content}
        if message.get("tool_calls"):
            assistant["tool_calls"] = message["tool_calls"]
            messages.append(assistant)
            messages.extend(tool_messages)
        else:
            # Calls written as <tool_call> text get their results back as text, in call order.
            messages.append(assistant)
            if tool_messages:
                blocks = [
                    "<tool_response>"
                    + json.dumps({"name": m["name"], "content": m["content"]})
                    + "</tool_response>"
                    for m in tool_messages
                ]
                messages.append({"role": "user", "content": "\n".join(blocks)})
        if done:
            break
        if not calls:
            idle += 1
            if idle >= 2:
                break
            messages.append({"role": "user", "content": "Please continue by calling one of the tools."})
        else:
            idle = 0
    return steps
