"""Builders for judge tests: the arena spec's example episode (§5.4) and its proxy-side summary entries."""

from __future__ import annotations

from typing import Any

from shoparena.records.trajectory import Step, ToolCall, Trajectory

QUERY = "Pink 900ml insulated tumbler with straw lid, 250 to 600 PHP, free shipping."
MODEL = "deepseek-ai/DeepSeek-V3.2-TEE"
SEARCH_IDS = ["4827719036", "4827702215", "4827700001", "4827700002", "4827700003",
              "4827700004", "4827700005", "4827700006", "4827700007", "4827700008"]

SEARCH_RESULT = [
    {"product_id": "4827719036", "shop_id": "2290413", "title": "900ml Insulated Tumbler with Straw Lid",
     "price": 389.0, "service": ["freeShipping"], "sold_count": 1284},
    {"product_id": "4827702215", "shop_id": "2290413", "title": "900ML Double Wall Tumbler with Straw",
     "price": 455.0, "service": ["freeShipping", "COD"], "sold_count": 318},
]
VIEW_RESULT = [
    {"product_id": "4827719036", "short_description": "", "description": "Keeps drinks cold.",
     "sku_options": {"1": {"color_family": "pink", "capacity": "900ml"},
                     "2": {"color_family": "black", "capacity": "900ml"}},
     "attributes": {"material": ["stainless steel"]}},
    {"product_id": "4827702215", "short_description": "", "description": "BPA free.",
     "sku_options": {"1": {"color_family": "white", "capacity": "900ml"}},
     "attributes": {"material": ["stainless steel"]}},
]


def inference_entry(tokens: int | None = 120, *, ts: int = 1_000, status: int = 200,
                    truncated: bool = False, model: str = MODEL) -> dict[str, Any]:
    """A proxy summary entry for one chat completion (usage in the response, or kept beside it)."""
    entry: dict[str, Any] = {
        "kind": "summary", "method": "POST", "path": "/inference/chat/completions", "timestamp": ts,
        "duration_ms": 7790.4, "status_code": status,
        "json_data": {"model": model, "temperature": 0.0, "stream": False},
    }
    if truncated:
        entry.update(response_truncated=True, response_length=2264)
        if tokens is not None:
            entry["usage"] = {"prompt_tokens": 900, "completion_tokens": tokens}
    elif tokens is not None:
        entry["response"] = {"model": model, "usage": {"prompt_tokens": 900, "completion_tokens": tokens}}
    return entry


def search_entry(ids: list[str] | None = None, *, ts: int = 2_000, q: str = "insulated+tumbler+straw+900ml"):
    return {"kind": "summary", "method": "GET", "path": "/search/find_product", "timestamp": ts,
            "duration_ms": 310.0, "status_code": 200, "params": {"q": q, "price": "250-600"},
            "response_truncated": True, "response_length": 5400,
            "result_product_ids": list(SEARCH_IDS if ids is None else ids)}


def view_entry(ids: str = "4827719036,4827702215", *, ts: int = 3_000) -> dict[str, Any]:
    return {"kind": "summary", "method": "GET", "path": "/search/view_product_information", "timestamp": ts,
            "duration_ms": 120.5, "status_code": 200, "params": {"product_ids": ids},
            "response_truncated": True, "response_length": 3100}


def trusted_calls() -> list[dict[str, Any]]:
    """The example's calls: 3 inference, 1 search, 1 view, plus one diagnostic attempt entry."""
    return [inference_entry(140, ts=1_000), search_entry(ts=2_000),
            {"kind": "attempt", "method": "GET", "path": "/search/find_product", "timestamp": 1_999,
             "attempt": 0, "duration_ms": 300.0, "status_code": 200},
            inference_entry(95, ts=3_000, truncated=True), view_entry(ts=4_000),
            inference_entry(60, ts=5_000)]


def step(index: int, think: str, *calls: ToolCall, proxy_calls: list[dict[str, Any]] | None = None) -> Step:
    return Step(index=index, think=think, tool_calls=list(calls), timestamp=index * 1000,
                proxy_calls=proxy_calls or [])


def call(name: str, parameters: dict[str, Any], result: Any = None) -> ToolCall:
    return ToolCall(name=name, parameters=parameters, tool_call_id="abcdefgh", result=result,
                    has_result=result is not None)


def example_trajectory(final_think: str | None = None, *, second_think: str | None = None) -> Trajectory:
    """§5.4's three steps: search, view, then a comparison and recommendation."""
    final = final_think if final_think is not None else (
        "4827719036 has a pink 900ml variant at 389 PHP; 4827702215 is white only, so 4827719036 wins.")
    second = second_think if second_think is not None else "Two candidates; check their colour options."
    return Trajectory(
        run_id="run-1", problem_id="p-1", query=QUERY,
        steps=[
            step(1, "Short query plus price and service filters.",
                 call("find_product", {"q": "insulated tumbler straw 900ml", "price": "250-600",
                                       "service": "freeShipping"}, SEARCH_RESULT)),
            step(2, second, call("view_product_information", {"product_ids": "4827719036,4827702215"},
                                 VIEW_RESULT)),
            step(3, final, call("recommend_product", {"product_ids": "4827719036"},
                                "Having recommended the products to the user: 4827719036."),
                 call("terminate", {"status": "success"}, "done")),
        ],
    )
