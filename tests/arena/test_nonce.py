"""HMAC tool-call nonces: every verification outcome."""

from __future__ import annotations

import json

from shoparena.arena.nonce import NonceAuthority, NonceStatus
from shoparena.arena.proxy_log import parse_response_tool_calls


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_statuses():
    clock = Clock()
    auth = NonceAuthority(b"k" * 32, clock=clock)
    raw = '{"q": "shoe", "page": 1}'
    nonce = auth.mint("run1", "call_1", "find_product", raw)
    v = auth.verify
    assert v(None, run="run1", tool="find_product", body=raw.encode()) is NonceStatus.MISSING
    assert v("garbage", run="run1", tool="find_product", body=raw.encode()) is NonceStatus.MALFORMED
    assert v(nonce, run="run2", tool="find_product", body=raw.encode()) is NonceStatus.MISMATCH
    assert v(nonce, run="run1", tool="view_product_information", body=raw.encode()) is NonceStatus.MISMATCH
    assert v(nonce, run="run1", tool="find_product", body=b'{"q":"shoe","page":1}') is NonceStatus.MISMATCH
    assert (
        v(nonce, run="run1", tool="find_product", body=raw.encode(), call_id="other") is NonceStatus.MISMATCH
    )
    other_key = NonceAuthority(b"z" * 32, clock=clock).mint("run1", "call_1", "find_product", raw)
    assert v(other_key, run="run1", tool="find_product", body=raw.encode()) is NonceStatus.MISMATCH
    assert v(nonce, run="run1", tool="find_product", body=raw.encode(), call_id="call_1") is NonceStatus.VALID
    assert v(nonce, run="run1", tool="find_product", body=raw.encode()) is NonceStatus.REPLAYED
    late = auth.mint("run1", "call_2", "find_product", raw)
    clock.now += 61
    assert v(late, run="run1", tool="find_product", body=raw.encode()) is NonceStatus.EXPIRED


def test_payload_field_order_and_enrich():
    auth = NonceAuthority(b"k" * 32, clock=lambda: 10.0)
    response = {
        "choices": [
            {
                "message": {
                    "content": '<tool_call>[{"name": "view_product_information", '
                    '"parameters": {"product_ids": "1"}},'
                    ' {"name": "recommend_product", "parameters": {"product_ids": "1"}}]</tool_call>',
                    "tool_calls": [
                        {
                            "id": "c9",
                            "type": "function",
                            "function": {"name": "find_product", "arguments": '{"q":"a"}'},
                        }
                    ],
                }
            }
        ]
    }
    auth.enrich("r", response)
    meta = response["oro_metadata"]
    assert set(meta["tool_nonces"]) == {"c9", "xml_0_0_0"}  # recommend_product is not a catalogue tool
    assert [c["name"] for c in meta["parsed_tool_calls"]] == [
        "find_product",
        "view_product_information",
        "recommend_product",
    ]
    import base64

    body = meta["tool_nonces"]["c9"].split(".")[0]
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    assert list(payload) == ["e", "c", "t", "a", "x"]
    assert payload["x"] == 70
    xml = next(c for c in parse_response_tool_calls(response) if c.call_id == "xml_0_0_0")
    status = auth.verify(
        meta["tool_nonces"]["xml_0_0_0"],
        run="r",
        tool="view_product_information",
        body=xml.arguments.encode(),
    )
    assert status is NonceStatus.VALID
