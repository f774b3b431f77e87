"""Seeded mutators and seed records for the fuzz tests (catalog lines, problem files, trajectory files).

Every mutation is reproducible from ``(seed, index)``. The checks assert the reliability promise: no
traceback, only documented errors, and ``read == kept + quarantined`` with a reason naming the field.
"""

from __future__ import annotations

import copy
import gzip
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shoparena.catalog.io import LoadSummary, QuarantinedLine, iter_products
from shoparena.catalog.synth import SynthConfig, synthesize_catalog
from shoparena.formats.io import read_trajectories
from shoparena.formats.oro import dumps_oro_line
from shoparena.formats.sb import dumps_sb_line
from shoparena.jsonl import JsonlReadError
from shoparena.records.catalog import MAX_COUNT, IndexLine, Product
from shoparena.records.problem import MAX_PESOS
from shoparena.records.trajectory import Step, ToolCall, Trajectory
from shoparena.suites.loaders import SuiteLoadError, SuiteLoadSummary, iter_suite
from world import SHARED_DATA

SHARED = SHARED_DATA
ORO_SUITES = [SHARED / "oro/problem_suite_v1.json", SHARED / "oro/problem_suite_v3.json"]
SB_SUITES = sorted((SHARED / "shoppingbench").glob("*.jsonl"))
CHAT_ROWS = SHARED / "oro/sft_corpus_prefix_examples.jsonl"

HOSTILE_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    2**63,
    2**53,
    -(2**70),
    1e308,
    "inf",
    "Infinity",
    "NaN",
    "-0",
    "",
    " ",
    "\x00",
    "\ud800",
    "\u2028x\u0085",
    "x" * 5000,
    [],
    {},
    [None],
    {"a": [1, {"b": None}]},
    [[[[[]]]]],
    "1,2,3",
    "SUCCESS",
]

#: Reason prefixes that are not a field name but still say exactly what is wrong with the line.
GENERIC_REASONS = ("invalid JSON", "invalid UTF-8", "expected a JSON object", "<root>")


# ------------------------------------------------------------------------------------------- mutators


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key/index path inside a JSON value (the root excluded)."""
    out: list[tuple[Any, ...]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, child in items:
        out.append((*prefix, key))
        if len(out) < 400:
            out.extend(_paths(child, (*prefix, key)))
    return out


def _parent(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        value = value[key]
    return value


def mutate_value(rng: random.Random, value: Any) -> Any:
    """One structural mutation of a decoded JSON value: drop, replace, rename or retype something."""
    value = copy.deepcopy(value)
    paths = _paths(value)
    if not paths:
        return rng.choice(HOSTILE_VALUES)
    path = rng.choice(paths)
    parent = _parent(value, path)
    key = path[-1]
    op = rng.randrange(4)
    if op == 0 and isinstance(parent, dict):
        del parent[key]
    elif op == 1 and isinstance(parent, dict):
        parent[rng.choice(["Query", "rewards", "", "product_id ", "__proto__"])] = parent.pop(key)
    elif op == 2:
        child = parent[key]
        parent[key] = [child] if not isinstance(child, list) else {"0": child}
    else:
        parent[key] = rng.choice(HOSTILE_VALUES)
    return value


def dumps(value: Any) -> bytes:
    """JSON bytes; NaN/inf become the bare tokens a sloppy writer would emit (invalid JSON)."""
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


def mutate_bytes(rng: random.Random, line: bytes) -> bytes:
    """One byte-level mutation of a serialised line."""
    op = rng.randrange(8)
    pos = rng.randrange(len(line) + 1) if line else 0
    if op == 0:
        return line[:pos]  # truncated (a torn write)
    if op == 1 and line:
        i = rng.randrange(len(line))
        return line[:i] + bytes([line[i] ^ (1 << rng.randrange(8))]) + line[i + 1 :]
    if op == 2:
        return line[:pos] + b"\xff\xfe" + line[pos:]  # bad UTF-8, deep in the line
    if op == 3:
        return line[:pos] + b"\x00" + line[pos:]
    if op == 4:
        return line[:pos] + b"\r" + line[pos:]
    if op == 5:
        return line[:pos] + "\u0085\u2028".encode() + line[pos:]
    if op == 6:
        return line + b" " + line  # two records on one line
    return b"\xef\xbb\xbf" + line  # a BOM at the start of a line


def mutate_line(rng: random.Random, line: bytes) -> bytes:
    """A structural mutation (decoded lines) or a byte-level one, evenly."""
    if rng.random() < 0.5:
        try:
            return dumps(mutate_value(rng, json.loads(line)))
        except ValueError:
            pass
    return mutate_bytes(rng, line)


def encode_file(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """A whole-file encoding variant: plain, BOM, UTF-16 (BOM), CRLF; returns the bytes and its name."""
    kind = rng.choice(["plain", "bom", "utf16", "crlf"])
    if kind == "bom":
        return b"\xef\xbb\xbf" + data, kind
    if kind == "utf16":
        return data.decode("utf-8", "surrogateescape").encode("utf-16", "surrogatepass"), kind
    if kind == "crlf":
        return data.replace(b"\n", b"\r\n"), kind
    return data, kind


def corrupt_gzip(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """Gzip-level damage: not gzip at all, truncated, or a bad CRC."""
    blob = gzip.compress(data, mtime=0)
    kind = rng.choice(["not_gzip", "truncated", "bad_crc"])
    if kind == "not_gzip":
        return data, kind
    if kind == "truncated":
        return blob[: rng.randrange(10, max(11, len(blob) - 8))], kind
    return blob[:-8] + bytes(b ^ 0x5A for b in blob[-8:-4]) + blob[-4:], kind


# ------------------------------------------------------------------------------------------- seeds


def catalog_seed_lines(tmp: Path, n: int = 200) -> list[bytes]:
    path = tmp / "seed_catalog.jsonl"
    synthesize_catalog(SynthConfig(products=n, seed=3), path, progress=False)
    return [line for line in path.read_bytes().split(b"\n") if line]


def problem_seed_records() -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for path in ORO_SUITES:
        records.extend(json.loads(path.read_text()))
    for path in SB_SUITES:
        records.extend(json.loads(line) for line in path.read_bytes().split(b"\n")[:40] if line.strip())
    return records


def trajectory_seed_lines() -> list[bytes]:
    """One line of every supported trajectory shape."""
    calls = [
        ToolCall(name="find_product", parameters={"q": "red mug", "page": 1}),
        ToolCall(name="recommend_product", parameters={"product_ids": "1,2"}),
        ToolCall(name="terminate", parameters={"status": "success"}),
    ]
    traj = Trajectory(
        problem_id="p-1",
        query="red mug",
        steps=[Step(index=1, think="look", response="ok", timestamp=1.7e12, tool_calls=calls)],
    )
    lines = [
        dumps_oro_line(traj).encode(),
        dumps_oro_line(traj, legacy_bare=True).encode(),
        dumps_sb_line(traj, system_prompt="You shop.").encode(),
        traj.model_dump_json().encode(),
    ]
    lines.extend(line for line in CHAT_ROWS.read_bytes().split(b"\n")[:3] if line.strip())
    return lines


# ------------------------------------------------------------------------------------------- checks


@dataclass
class Tally:
    """What one fuzz run saw, for the record in docs/reliability.md."""

    read: int = 0
    kept: int = 0
    quarantined: int = 0
    file_errors: int = 0
    #: Non-blank lines written (what ``read`` must count), where known.
    records: int = 0
    reasons: dict[str, int] = field(default_factory=dict)

    def add_reason(self, reason: str) -> None:
        kind = reason.split(":", 1)[0][:40]
        self.reasons[kind] = self.reasons.get(kind, 0) + 1


def _names_a_field(reason: str, fields: set[str]) -> bool:
    head = reason.split(":", 1)[0]
    return head.startswith(GENERIC_REASONS) or head.split(".")[0] in fields or head.split(".")[-1] in fields


PRODUCT_FIELDS = set(Product.model_fields) | set(IndexLine.model_fields)


def check_catalog(path: Path, tally: Tally) -> list[IndexLine]:
    summary = LoadSummary(path=str(path))
    bad: list[QuarantinedLine] = []
    try:
        kept = list(iter_products(path, summary=summary, quarantine=bad.append))
    except JsonlReadError as exc:  # documented: UTF-16/32 files are refused as a whole
        assert str(path) in str(exc) and summary.read == 0
        tally.file_errors += 1
        return []
    assert summary.read == summary.kept + summary.quarantined == len(kept) + len(bad)
    for item in bad:
        assert item.reason and item.line_no >= 1
        assert _names_a_field(item.reason, PRODUCT_FIELDS), item.reason
        tally.add_reason(item.reason)
    for line in kept:
        product = line.product
        assert 0 <= product.price < float("inf") and 0 <= product.sold_count <= MAX_COUNT
        assert product.product_id.isdigit() and line.id == product.product_id
    tally.read, tally.kept = tally.read + summary.read, tally.kept + summary.kept
    tally.quarantined += summary.quarantined
    return kept


PROBLEM_FIELDS = {
    "problem_id",
    "query",
    "reward",
    "voucher",
    "category",
    "difficulty",
    "title",
    "Knowledge_Attribute",
    "reward_title_embeddings",
    "knowledge_attribute",
    "web_product",
    "intent",
}


def check_suite(path: Path, tally: Tally) -> None:
    summary = SuiteLoadSummary(path=str(path))
    try:
        problems = list(iter_suite(path, summary=summary))
    except SuiteLoadError as exc:  # documented: the file as a whole is unreadable
        assert str(path) in str(exc)
        tally.file_errors += 1
        return
    assert (
        summary.read
        == summary.kept + summary.quarantined
        == len(problems) + len(summary.problems_quarantined)
    )
    for bad in summary.problems_quarantined:
        assert bad.reason
        named = bad.field.split(".")[0] in PROBLEM_FIELDS or bad.field in {"", "<record>"}
        assert named or bad.reason.startswith("unknown key"), bad
        if not bad.field:  # a record-level reason says what the record is
            assert bad.reason.startswith(("invalid JSON", "invalid UTF-8", "expected a JSON object")), bad
        tally.add_reason(f"{bad.field or '<record>'}: {bad.reason}")
    for problem in problems:
        assert problem.query.strip() and all(item.product_id.strip() for item in problem.reward)
        if problem.voucher is not None:
            v = problem.voucher
            assert 0 < v.budget <= MAX_PESOS and 0 <= v.threshold <= MAX_PESOS
    tally.read, tally.kept = tally.read + summary.read, tally.kept + summary.kept
    tally.quarantined += summary.quarantined


def check_trajectories(path: Path, tally: Tally) -> None:
    summary = LoadSummary(path=str(path))
    bad: list[QuarantinedLine] = []
    try:
        kept = list(read_trajectories(path, summary=summary, quarantine=bad.append))
    except JsonlReadError as exc:
        assert str(path) in str(exc) and summary.read == 0
        tally.file_errors += 1
        return
    assert summary.read == summary.kept + summary.quarantined == len(kept) + len(bad)
    for item in bad:
        assert item.reason and item.line_no >= 1, item
        head, _, detail = item.reason.partition(": ")
        if head == "<record>":  # the record as a whole: the detail must say what is wrong with it
            assert detail.startswith(RECORD_DETAILS), item.reason
        tally.add_reason(item.reason)
    tally.read, tally.kept = tally.read + summary.read, tally.kept + summary.kept
    tally.quarantined += summary.quarantined


#: What a trajectory reason about the whole line may say.
RECORD_DETAILS = ("invalid JSON", "invalid UTF-8", "expected", "unrecognised record", "empty")


# ------------------------------------------------------------------------------------------- runs


def fuzz_catalog(tmp: Path, seed: int, n_lines: int, seeds: list[bytes]) -> Tally:
    rng = random.Random(seed)
    tally = Tally()
    lines = [
        mutate_line(rng, rng.choice(seeds)) if rng.random() < 0.7 else rng.choice(seeds)
        for _ in range(n_lines)
    ]
    path = tmp / f"catalog-{seed}.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    check_catalog(path, tally)
    tally.records = sum(1 for line in lines if line.strip())  # blank lines are not records
    for i in range(4):  # whole-file encodings on small catalogs
        data, _ = encode_file(rng, b"\n".join(rng.choice(lines) for _ in range(20)) + b"\n")
        small = tmp / f"catalog-{seed}-{i}.jsonl"
        small.write_bytes(data)
        check_catalog(small, Tally())
    return tally


def fuzz_problem_files(
    tmp: Path, seed: int, n_files: int, records: list[dict[str, Any]], per_file: int = 6
) -> Tally:
    rng = random.Random(seed)
    tally = Tally()
    for i in range(n_files):
        chosen = [rng.choice(records) for _ in range(per_file)]
        chosen = [mutate_value(rng, r) if rng.random() < 0.6 else r for r in chosen]
        shape = rng.choice(["oro", "sb", "wrapped"])
        if shape == "oro":
            data = json.dumps(chosen, indent=2, ensure_ascii=False).encode("utf-8", "surrogatepass")
        elif shape == "wrapped":
            data = json.dumps({"problems": chosen}).encode("utf-8", "surrogatepass")
        else:
            lines = [dumps(r) for r in chosen]
            lines = [mutate_bytes(rng, line) if rng.random() < 0.3 else line for line in lines]
            data = b"\n".join(lines) + b"\n"
        data, _ = encode_file(rng, data)
        path = tmp / f"suite-{seed}-{i}.{'jsonl' if shape == 'sb' else 'json'}"
        path.write_bytes(data)
        check_suite(path, tally)
    return tally


def fuzz_trajectory_files(tmp: Path, seed: int, n_files: int, seeds: list[bytes], per_file: int = 8) -> Tally:
    rng = random.Random(seed)
    tally = Tally()
    for i in range(n_files):
        lines = [rng.choice(seeds) for _ in range(per_file)]
        lines = [mutate_line(rng, line) if rng.random() < 0.6 else line for line in lines]
        path = tmp / f"traj-{seed}-{i}.jsonl"
        data, _ = encode_file(rng, b"\n".join(lines) + b"\n")
        path.write_bytes(data)
        errors = tally.file_errors
        check_trajectories(path, tally)
        if tally.file_errors == errors:
            tally.records += sum(1 for line in data.split(b"\n") if line.strip())
    return tally
