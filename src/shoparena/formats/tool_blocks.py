"""The one reader of ``<tool_call>`` blocks in model text (Hermes / Qwen3 and the ORO proxy's XML calls).

:func:`tool_call_blocks` finds the blocks, where they are and their JSON items; :func:`block_call` reads
one item's name and arguments by the published rule. What a site does with a block that is not JSON
(skip it, fail the whole text, repair it) is that site's policy: the proxy log and the nonces follow the
published proxy, ``formats.native`` repairs leniently, the training reward refuses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shoparena.formats.scan import loads_bounded, tag_spans


@dataclass(frozen=True, slots=True)
class ToolCallBlock:
    """One ``<tool_call>`` block.

    Attributes:
        index: Position among the text's blocks (0-based).
        start, end: The block's span in the text, tags included.
        body: The text between the tags, stripped.
        items: The body's JSON value as a list of items (a JSON list gives its elements); None when the body
            is not JSON.
        listed: The body was a JSON list.
    """

    index: int
    start: int
    end: int
    body: str
    items: list[Any] | None
    listed: bool


def tool_call_blocks(text: str, *, unclosed_tail: bool = False) -> list[ToolCallBlock]:
    """The ``<tool_call>`` blocks of ``text``, in order; with ``unclosed_tail`` a final block whose closing
    tag never came counts too (a truncated generation can end inside its last block). Linear in the text
    (``scan.tag_spans``); a body nested deeper than ``scan.MAX_JSON_DEPTH`` is not JSON here."""
    blocks = []
    spans = tag_spans(text, "tool_call", tail=unclosed_tail)
    for index, (start, body_start, body_end, end) in enumerate(spans):
        body = text[body_start:body_end].strip()
        try:
            value = loads_bounded(body)
        except ValueError:
            items, listed = None, False
        else:
            listed = isinstance(value, list)
            items = value if listed else [value]
        blocks.append(ToolCallBlock(index, start, end, body, items, listed))
    return blocks


def strip_tool_call_blocks(text: str, blocks: list[ToolCallBlock]) -> str:
    """``text`` without ``blocks`` (as :func:`tool_call_blocks` found them in it)."""
    pieces, position = [], 0
    for block in blocks:
        pieces.append(text[position : block.start])
        position = block.end
    pieces.append(text[position:])
    return "".join(pieces)


def block_call(item: Any) -> tuple[str, Any] | None:
    """(name, arguments) of one block item, or None: the name from ``name``, ``tool`` or ``function``
    (published), where a ``function`` object gives its own ``name`` and ``arguments``; the arguments from
    ``parameters``, else ``arguments``, else ``{}``."""
    if not isinstance(item, dict):
        return None
    name = item.get("name") or item.get("tool") or item.get("function")
    args = item.get("parameters", item.get("arguments", {}))
    if isinstance(name, dict):
        args = name.get("arguments", name.get("parameters", args))
        name = name.get("name")
    return (name, args) if isinstance(name, str) else None


__all__ = ["ToolCallBlock", "block_call", "strip_tool_call_blocks", "tool_call_blocks"]
