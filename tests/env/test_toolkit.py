"""Tool schemas derived from signatures and docstrings; validation, errors and hidden arguments."""

from __future__ import annotations

from typing import Annotated

import pytest

from shoparena.env import OroHelperTools, Param, ShopTools, ToolError, ToolKind, ToolKit, tool
from shoparena.env.session import ShopSession
from shoparena.env.shop_tools import normalise_find_params


def schemas(kit: ToolKit) -> dict[str, dict]:
    return {s.name: s.model_dump() for s in kit.tool_schemas()}


def test_core_tool_names_required_and_enums_match_upstream(hand) -> None:
    s = schemas(ShopTools(hand.index))
    assert list(s) == [
        "find_product",
        "view_product_information",
        "recommend_product",
        "terminate",
        "web_search",
    ]
    fp = s["find_product"]["parameters"]
    assert fp["required"] == ["q", "page"]
    assert set(fp["properties"]) == {"q", "page", "shop_id", "price", "sort", "service"}
    assert fp["properties"]["page"] == {
        **fp["properties"]["page"],
        "type": "integer",
        "minimum": 1,
        "maximum": 5,
    }
    assert fp["properties"]["sort"]["enum"] == ["priceasc", "pricedesc", "order", "default"]
    assert fp["properties"]["shop_id"]["type"] == "string"  # Optional collapsed, no anyOf/null
    assert "session" not in fp["properties"]  # hidden per-session argument
    assert s["view_product_information"]["parameters"]["required"] == ["product_ids"]
    assert s["recommend_product"]["parameters"]["required"] == ["product_ids"]
    term = s["terminate"]["parameters"]
    assert term["required"] == ["status"] and term["properties"]["status"]["enum"] == ["success", "failure"]
    ws = s["web_search"]["parameters"]
    assert ws["required"] == ["q"]
    max_results = ws["properties"]["max_results"]
    assert (max_results["type"], max_results["minimum"], max_results["maximum"], max_results["default"]) == (
        "integer",
        1,
        20,
        10,
    )
    # Descriptions come from the docstrings.
    assert (
        "Comma-separated product ids"
        in s["view_product_information"]["parameters"]["properties"]["product_ids"]["description"]
    )
    assert s["find_product"]["description"].startswith("Search the product catalog.")


def test_oro_helper_schemas(hand) -> None:
    s = schemas(OroHelperTools(hand.index))
    assert list(s) == ["check_product_match", "find_products_in_same_shop", "calculate_voucher"]
    assert s["calculate_voucher"]["parameters"]["required"] == [
        "product_prices",
        "voucher_type",
        "discount_value",
        "threshold",
        "budget",
    ]
    assert s["calculate_voucher"]["parameters"]["properties"]["cap"]["default"] == 0
    assert s["check_product_match"]["parameters"]["properties"]["requirements"]["type"] == "string"


class Demo(ToolKit):
    @tool(kind=ToolKind.ACTION)
    def act(
        self, n: Annotated[int, Param(minimum=1, maximum=3)], session: ShopSession, tag: str = "x"
    ) -> str:
        """Do a thing.

        Args:
            n: How many.
            tag: A label.
        """
        if n == 2:
            raise ToolError("two is not allowed")
        if n == 99:
            raise RuntimeError("backend down")
        session.recommendations.append(n)
        return f"{tag}{n}"


def test_run_validation_errors_and_infra_errors() -> None:
    bound = Demo().get_tool("act")
    assert bound is not None and bound.kind is ToolKind.ACTION and bound.hidden == ["session"]
    session = ShopSession("p", "q")
    ok = bound.run({"n": "1", "extra": 5}, {"session": session})  # lax types, unknown keys ignored
    assert ok.ok and ok.result == "x1" and session.recommendations == [1]
    # Schema-only range: 7 is shown as invalid in the schema but runs (upstream ignores such values).
    assert bound.run({"n": 7}, {"session": session}).result == "x7"
    missing = bound.run({}, {"session": session})
    assert missing.error == "act: missing required parameter 'n'" and missing.result.startswith("Error: ")
    wrong = bound.run({"n": "abc"}, {"session": session})
    assert wrong.error is not None and "'n'" in wrong.error
    err = bound.run({"n": 2}, {"session": session})
    assert err.result == "Error: two is not allowed" and err.infra_error is None
    infra = bound.run({"n": 99}, {"session": session})
    assert infra.infra_error == "RuntimeError: backend down" and infra.result is None


def test_undocumented_parameter_is_rejected() -> None:
    class Bad(ToolKit):
        @tool()
        def f(self, x: int) -> int:
            """No args section."""
            return x

    with pytest.raises(TypeError, match="no Args"):
        Bad().tools()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("", "", "default", "default"), {}),
        (
            ("12", "0-100", "order", "COD,default"),
            {"shop_id": "12", "price": "0-100", "sort": "order", "service": "COD"},
        ),
        ((None, None, None, "default,default"), {}),
        (
            (None, "1000-", "priceasc", "official,freeShipping"),
            {"price": "1000-", "sort": "priceasc", "service": "official,freeShipping"},
        ),
    ],
)
def test_find_product_normalisation(args, expected) -> None:
    assert normalise_find_params(*args) == expected


def test_tool_returns_follow_upstream(hand) -> None:
    kit = ShopTools(hand.index)
    s = ShopSession("p", "q")
    hits = (
        kit.get_tool("find_product")
        .run({"q": "shoes", "page": 1, "sort": "default", "shop_id": ""}, {"session": s})
        .result
    )
    assert hits and list(hits[0]) == ["product_id", "shop_id", "title", "price", "service", "sold_count"]
    assert s.searches == [{"q": "shoes", "page": 1}]
    assert kit.get_tool("find_product").run({"q": "shoes", "page": 6}, {"session": s}).result == []
    views = kit.get_tool("view_product_information").run({"product_ids": "101, 102"}, {"session": s}).result
    assert [v["product_id"] for v in views] == ["101"]  # no whitespace stripping, unknown skipped
    assert list(views[0]) == ["product_id", "short_description", "description", "sku_options", "attributes"]
    assert s.viewed_ids == ["101"]
    rec = kit.get_tool("recommend_product").run({"product_ids": "101,102"}, {"session": s})
    assert rec.result == "Having recommended the products to the user: 101,102."
    term = kit.get_tool("terminate").run({"status": "failure"}, {"session": s})
    assert term.result == "The interaction has been completed with status: failure" and s.terminated
    defaulted = kit.get_tool("terminate").run({}, {"session": s})
    assert defaulted.result == "The interaction has been completed with status: success"
    assert defaulted.violations and "status" in defaulted.violations[0]
    assert kit.get_tool("web_search").run({"q": "shoes"}).result == {"observation": [], "success": False}


def test_oro_helpers(hand) -> None:
    kit = OroHelperTools(hand.index)
    match = (
        kit.get_tool("check_product_match")
        .run({"product_id": "101", "requirements": '{"material": "mesh", "color": "red"}'})
        .result
    )
    assert match["matched"] is False and match["matches"] == ["material"] and match["mismatches"] == ["color"]
    assert "title" not in match["product_summary"] and "price" not in match["product_summary"]
    bad = kit.get_tool("check_product_match").run({"product_id": "101", "requirements": "{oops"})
    assert bad.error is not None and "not valid JSON" in bad.error
    same = (
        kit.get_tool("find_products_in_same_shop")
        .run({"product_queries": '[{"q": "running shoes"}, {"q": "socks"}]'})
        .result
    )
    assert same["found"] is True and same["shop_id"] == "9"
    assert [p["product_id"] for p in same["products"]] == ["101", "102"]
    calc = kit.get_tool("calculate_voucher")
    fixed = calc.run(
        {
            "product_prices": "90,60",
            "voucher_type": "fixed",
            "discount_value": 53,
            "threshold": 139,
            "budget": 104,
        }
    ).result
    assert fixed["total_after"] == 97 and fixed["within_budget"] and fixed["voucher_applied"]
    pct = calc.run(
        {
            "product_prices": "[115]",
            "voucher_type": "percentage",
            "discount_value": 34,
            "threshold": 63,
            "budget": 82,
            "cap": 28,
        }
    ).result
    assert pct["total_after"] == 87 and not pct["within_budget"]
    below = calc.run(
        {
            "product_prices": "80,50",
            "voucher_type": "fixed",
            "discount_value": 53,
            "threshold": 139,
            "budget": 104,
        }
    ).result
    assert below["voucher_applied"] is False and below["total_after"] == 130
