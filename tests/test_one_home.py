"""Helpers that used to be written twice (and disagreed) have one definition under ``src/shoparena``.

The Wilson interval was (0, 0) at n = 0 in the report and (0, 1) in eval; the pipeline's deep merge shared
nested sections with its presets while the training config's copied them; two parsers read different
``<tool_call>`` block shapes from a logged reply; the report turned trajectories into chat messages its own
way; the planner split a request into items by other patterns than the compact profile's handles. A second
definition of any of them fails here (by name: a renamed copy is what ``duplicates`` is for).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "shoparena"

#: concept -> (pattern on function names, the one definition as (module, name))
HOMES = {
    "Wilson interval": (re.compile(r"wilson", re.I), {("eval/metrics.py", "wilson_interval")}),
    "config deep merge": (re.compile(r"^_?(deep_)?merge$"), {("runs/config.py", "deep_merge")}),
    "run identity and --out checks": (
        re.compile(r"^(claim_run_dir|_?fingerprint|_?check_resumable|refuse_output_over_inputs)$"),
        {
            ("runs/identity.py", "claim_run_dir"),
            ("runs/identity.py", "fingerprint"),
            ("runs/identity.py", "refuse_output_over_inputs"),
        },
    ),
    "proxy-log reply parser": (
        re.compile(r"^(parse_response_tool_calls|_block_names|requested_tools?|requested_tool_names)$"),
        {("arena/proxy_log.py", "parse_response_tool_calls"), ("arena/proxy_log.py", "requested_tool_names")},
    ),
    # the report's example conversations arrange its messages (report.data.trajectory_messages)
    "trajectory -> chat": (
        re.compile(r"^_?trajectory_to_(chat|messages|openai)$"),
        {("formats/native.py", "trajectory_to_chat")},
    ),
    # lone surrogates are found, replaced and escaped in one place (issue 52)
    "lone surrogates": (
        re.compile(r"lone_surrogate"),
        {
            ("records/unicode.py", "first_lone_surrogate"),
            ("records/unicode.py", "has_lone_surrogate"),
            ("records/unicode.py", "replace_lone_surrogates"),
            ("records/unicode.py", "escape_lone_surrogates"),
        },
    ),
    # the planner's items are the request's listed items (agents.query_parser reads them)
    "request-item splitting": (
        re.compile(r"^_?(enumeration|request_lines|listed_items|numbered_items|split_items|split_request)$"),
        {
            ("formats/profiles.py", "_enumeration"),
            ("formats/profiles.py", "_request_lines"),
            ("formats/profiles.py", "_numbered_items"),
            ("formats/profiles.py", "listed_items"),
        },
    ),
}


def definitions(pattern: re.Pattern[str]) -> set[tuple[str, str]]:
    found = set()
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and pattern.search(node.name):
                found.add((path.relative_to(SRC).as_posix(), node.name))
    return found


def test_each_helper_has_one_home():
    for concept, (pattern, home) in HOMES.items():
        assert definitions(pattern) == home, concept
