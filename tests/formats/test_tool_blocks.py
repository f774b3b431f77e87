"""The one reader of ``<tool_call>`` blocks, and every parser of model text reads through it."""

from __future__ import annotations

import re
from pathlib import Path

from shoparena.formats.tool_blocks import block_call, strip_tool_call_blocks, tool_call_blocks

SRC = Path(__file__).resolve().parents[2] / "src" / "shoparena"

TEXT = (
    'a<tool_call>{"name": "find_product", "arguments": {"q": "x"}}</tool_call>b'
    "<tool_call>not json</tool_call>"
    '<tool_call>[{"tool": "view_product_information", "parameters": {"product_ids": "1"}}, 3]</tool_call>c'
)


def test_blocks_give_their_spans_items_and_list_shape() -> None:
    blocks = tool_call_blocks(TEXT)
    assert [b.index for b in blocks] == [0, 1, 2]
    assert blocks[0].items == [{"name": "find_product", "arguments": {"q": "x"}}] and not blocks[0].listed
    assert blocks[1].items is None and blocks[1].body == "not json"
    assert blocks[2].listed and len(blocks[2].items or []) == 2
    assert all(TEXT[b.start : b.end].startswith("<tool_call>") for b in blocks)
    assert strip_tool_call_blocks(TEXT, blocks) == "abc"


def test_an_unclosed_last_block_counts_only_when_asked() -> None:
    text = '<tool_call>{"name": "a"}</tool_call> then <tool_call>{"name": "b"}'
    assert [b.items for b in tool_call_blocks(text)] == [[{"name": "a"}]]
    assert [b.items for b in tool_call_blocks(text, unclosed_tail=True)] == [[{"name": "a"}], [{"name": "b"}]]


def test_block_call_reads_name_tool_or_function() -> None:
    assert block_call({"name": "a", "parameters": {"k": 1}, "arguments": {"k": 2}}) == ("a", {"k": 1})
    assert block_call({"tool": "b", "arguments": "{}"}) == ("b", "{}")
    assert block_call({"function": {"name": "c", "arguments": {"k": 3}}}) == ("c", {"k": 3})
    assert block_call({"name": 7}) is None and block_call([1]) is None
    assert block_call({"name": "d"}) == ("d", {})


def test_no_other_module_compiles_its_own_tool_call_pattern() -> None:
    # The sandboxed miners may import only agent_sdk, so the agentic miner keeps its own.
    allowed = {"formats/tool_blocks.py", "arena/miners/agentic.py"}
    pattern = re.compile(r"re\.compile\([^)]*<tool_call>")
    found = sorted(
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if pattern.search(path.read_text(encoding="utf-8"))
    )
    assert [name for name in found if name not in allowed] == []
