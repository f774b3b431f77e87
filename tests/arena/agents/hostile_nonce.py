"""Gets a real nonce from an inference reply, then dispatches forged, valid, replayed and malformed ones."""

from shoparena.agent_sdk import ProxyClient

client = ProxyClient(max_retries=1)


def agent_main(problem: dict) -> list:
    reply = client.chat_completion({"model": "scripted", "messages": [{"role": "user", "content": "hi"}]})
    call = reply["choices"][0]["message"]["tool_calls"][0]
    call_id, raw = call["id"], call["function"]["arguments"]
    nonce = client.parse_nonces(reply)[call_id]
    payload, signature = nonce.split(".")
    forged = payload + "." + ("A" if signature[0] != "A" else "B") + signature[1:]
    statuses = []
    for label, token, body in [
        ("forged", forged, raw),
        ("tampered_args", nonce, raw.replace("shoe", "sock")),
        ("valid", nonce, raw),
        ("replayed", nonce, raw),
        ("malformed", "@@@", raw),
        ("missing", None, raw),
    ]:
        client.dispatch_tool("find_product", body, token, call_id)
        statuses.append(
            [
                label,
                client.last_headers.get("X-Nonce-Status") or client.last_headers.get("x-nonce-status"),
                client.last_status,
            ]
        )
    return [{"statuses": statuses}]
