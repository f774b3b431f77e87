"""Corpus diversity, measured: is an arena's corpus more diverse than one teacher's?

Each trajectory is reduced to :class:`Features` (its request, its tool calls, the products its tool results
showed and the ones it recommended), from a corpus record's messages or from a ``records.Trajectory``
(through the native chat rendering, so both read the same way). Per group (miner kind, source agent, a
single teacher), :func:`measure` reports:

* ``query_distinct_2``: distinct request word bigrams / all request bigrams (``query_bigrams``: distinct);
* ``search_distinct_2``: the same over the agent's own ``find_product`` queries;
* ``call_distinct_3``: distinct 3-grams of tool-call tokens (a token is the tool name and its argument
  names, e.g. ``find_product(page,q,service)``) / all such 3-grams;
* ``tool_seq_entropy``: Shannon entropy (bits) of the distribution of whole tool-name sequences;
* coverage: distinct ``categories`` (problem category), ``shops`` and ``price_bands`` of the recommended
  products, and distinct ``attributes`` (attribute names) of the products the agent viewed;
* ``near_duplicate_rate``: share of trajectories with an earlier near-duplicate (MinHash, Jaccard ≥
  :data:`NEAR_DUPLICATE_JACCARD` over word 3-shingles of the tool calls with their arguments).

Ratios depend on size, so compare groups of equal size: :func:`equal_size` subsamples (seeded), and
:func:`teacher_features` plays one teacher on the same problems as a corpus, one episode per record.
"""

from __future__ import annotations

import functools
import json
import math
import random
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from datasketch import MinHash, MinHashLSH

from shoparena.corpus.minhash import ShingleSigner

if TYPE_CHECKING:
    from shoparena.search import SearchEngine

#: Price band edges (PHP): [0, 100), [100, 300), ... [10000, inf).
PRICE_BANDS: tuple[float, ...] = (100, 300, 1000, 3000, 10000)
NEAR_DUPLICATE_JACCARD = 0.8
_PERMUTATIONS = 64

#: Columns of the diversity table, in order, with their headers.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("trajectories", "n"),
    ("query_distinct_2", "query d-2"),
    ("search_distinct_2", "search d-2"),
    ("call_distinct_3", "call d-3"),
    ("tool_seq_entropy", "seq H (bits)"),
    ("categories", "categories"),
    ("shops", "shops"),
    ("attributes", "attributes"),
    ("price_bands", "price bands"),
    ("near_duplicate_rate", "near-dup"),
)


@dataclass(slots=True)
class Features:
    """What diversity reads of one trajectory."""

    group: str
    query: str
    category: str
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    #: What the tool results told of the recommended and the viewed products (the later result wins a field).
    products: dict[str, dict[str, Any]] = field(default_factory=dict)
    viewed: set[str] = field(default_factory=set)
    recommended: list[str] = field(default_factory=list)
    #: The MinHash of the tool-call shingles, computed once (a record is measured in up to four groups).
    signature: Any = None
    grams: Any = None  # the n-grams measure() counts, computed once (see _grams)
    bands: dict[float, tuple[bytes, ...]] = field(default_factory=dict)  # LSH band values (_band_keys)


#: What a tool result lists: each product's id and the fields the measure reads (see :func:`_products`).
_Listed = tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]

#: The characters a JSON text can start with after its white space (``json.loads``'s NaN and Infinity too).
_JSON_STARTS = frozenset('{["-0123456789tfnNI')


def _loads(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    if text.lstrip(" \t\n\r")[:1] not in _JSON_STARTS:  # a plain-text result: no parser would read it
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # NaN, 65-bit integers, lone surrogates: the stdlib parser's reading
        pass
    try:
        return json.loads(text)
    except ValueError:
        return None


def features_from_messages(
    messages: Sequence[dict[str, Any]], *, group: str, query: str, category: str
) -> Features:
    """Features of an OpenAI-style conversation (corpus record messages, or a rendered trajectory)."""
    out = Features(group=group, query=query, category=category)
    names: dict[str, str] = {}
    results: list[_Listed] = []  # what each tool result lists (read for the products kept below)
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                name = str(function.get("name") or "")
                params = _loads(function.get("arguments"))
                params = params if isinstance(params, dict) else {}
                out.calls.append((name, params))
                names[str(call.get("id"))] = name
                if name == "recommend_product":
                    ids = params.get("product_ids")
                    ids = ids if isinstance(ids, list) else str(ids or "").split(",")
                    out.recommended = [str(i).strip() for i in ids if str(i).strip()]
        elif role == "tool":
            content = message.get("content")
            items = _result_products(content) if isinstance(content, str) else _products(content)
            results.append(items)
            if items and names.get(str(message.get("tool_call_id"))) == "view_product_information":
                out.viewed.update(pid for pid, _ in items)
    # Only the recommended and the viewed products are read (shops, price bands, attributes): the others'
    # fields are not copied (a search result lists tens of products).
    wanted = out.viewed.union(out.recommended)
    for items in results:
        for pid, fields in items:
            if pid in wanted:
                kept = out.products.setdefault(pid, {})
                for key, value in fields:
                    kept[key] = list(value) if key == "attributes" else value
    return out


def _products(result: Any) -> _Listed:
    """What a tool result tells of each product it lists, in order: its id and the fields the measure
    reads (``shop_id``, ``price`` when set, the sorted attribute names)."""
    result = _loads(result)
    out = []
    for item in result if isinstance(result, list) else []:
        if isinstance(item, dict) and item.get("product_id") is not None:
            fields = [(key, item[key]) for key in ("shop_id", "price") if item.get(key) is not None]
            if isinstance(item.get("attributes"), dict):
                fields.append(("attributes", tuple(sorted(str(k) for k in item["attributes"]))))
            out.append((str(item["product_id"]), tuple(fields)))
    return tuple(out)


#: By the tool message's text: a firehose repeats two thirds of its tool results (miners search alike).
_result_products = functools.lru_cache(maxsize=1024)(_products)


def features_from_record(record: dict[str, Any], group: str) -> Features:
    """Features of a corpus record (``CorpusRecord.model_dump(mode="json")``)."""
    return features_from_messages(
        record.get("messages") or [],
        group=group,
        query=record.get("query", ""),
        category=record.get("category", ""),
    )


def features_from_trajectory(trajectory: Any, problem: Any, group: str) -> Features:
    """Features of a ``records.Trajectory`` on its problem (rendered as native chat first)."""
    from shoparena.formats.native import trajectory_to_chat

    messages = trajectory_to_chat(trajectory, system_prompt=None)
    return features_from_messages(messages, group=group, query=problem.query, category=problem.category_label)


_ASCII_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> list[str]:
    """Runs of alphanumeric characters, each lowercased by itself."""
    if text.isascii():  # the same words, without a Python step per character
        return _ASCII_WORD.findall(text.lower())
    return "".join(c.lower() if c.isalnum() else " " for c in text).split()


def _ngrams(tokens: Sequence[Any], n: int) -> list[tuple[Any, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def _entropy(counts: Counter[Any]) -> float:
    total = sum(counts.values())
    if not total:
        return 0.0
    return round(abs(-sum(c / total * math.log2(c / total) for c in counts.values())), 4)


def price_band(price: Any) -> str | None:
    """The band of a price (``"<100"``, ``"100-300"``, ..., ``">=10000"``), None when not a number."""
    try:
        value = float(price)
    except (TypeError, ValueError):
        return None
    low = 0.0
    for edge in PRICE_BANDS:
        if value < edge:
            return f"{low:g}-{edge:g}" if low else f"<{edge:g}"
        low = edge
    return f">={PRICE_BANDS[-1]:g}"


def _call_token(name: str, params: dict[str, Any]) -> str:
    return f"{name}({','.join(sorted(params))})"


def _call_text(f: Features) -> str:
    """``f``'s tool calls with their arguments, as the text its shingles are cut from."""
    return " ".join(f"{name} {json.dumps(params, sort_keys=True, default=str)}" for name, params in f.calls)


def _shingles(f: Features) -> set[str]:
    return _text_shingles(_call_text(f))


def _text_shingles(text: str) -> set[str]:
    words = _words(text)
    return {" ".join(g) for g in _ngrams(words, 3)} or set(words)


_SIGNER: list[ShingleSigner] = []
#: Signatures by call text: the miners of a firehose repeat whole call sequences (a deterministic search
#: loop, the shortcut), so most texts were signed before. At most this many (then it starts over).
_SIGNATURE_MEMO: dict[str, MinHash] = {}
_SIGNATURE_MEMO_SIZE = 50_000


def _signature(f: Features) -> MinHash:
    """``f``'s MinHash, computed on first use (each distinct call text signed once, and every shingle hashed
    once, per process: :class:`shoparena.corpus.minhash.ShingleSigner`). Signatures are shared: read only."""
    if f.signature is None:
        text = _call_text(f)
        signature = _SIGNATURE_MEMO.get(text)
        if signature is None:
            if not _SIGNER:
                _SIGNER.append(ShingleSigner(_PERMUTATIONS, seed=1))
            if len(_SIGNATURE_MEMO) >= _SIGNATURE_MEMO_SIZE:
                _SIGNATURE_MEMO.clear()
            signature = _SIGNATURE_MEMO[text] = _SIGNER[0](_text_shingles(text))
        f.signature = signature
    return f.signature


@functools.cache
def _band_ranges(threshold: float) -> tuple[tuple[int, int], ...]:
    """The (start, end) permutation ranges of the bands ``MinHashLSH(threshold, num_perm)`` would use."""
    return tuple(MinHashLSH(threshold=threshold, num_perm=_PERMUTATIONS).hashranges)


def _band_keys(f: Features, threshold: float) -> tuple[bytes, ...]:
    """``f``'s signature cut into the LSH bands, each as its bytes (computed once per threshold)."""
    keys = f.bands.get(threshold)
    if keys is None:
        values = _signature(f).hashvalues
        keys = f.bands[threshold] = tuple(values[a:b].tobytes() for a, b in _band_ranges(threshold))
    return keys


class _NearDuplicates:
    """Trajectories seen so far, query then insert in order: the near-duplicate count. The answer of a
    ``datasketch.MinHashLSH`` (same threshold and bands): an earlier trajectory is a candidate when one band
    of its signature equals this one's, so a set of band values per band is the whole index."""

    def __init__(self, threshold: float = NEAR_DUPLICATE_JACCARD) -> None:
        self.threshold = threshold
        self.seen: list[set[bytes]] = [set() for _ in _band_ranges(threshold)]
        self.n = self.duplicates = 0

    def add(self, item: Features) -> None:
        keys = _band_keys(item, self.threshold)
        if any(key in seen for key, seen in zip(keys, self.seen, strict=True)):
            self.duplicates += 1
        for key, seen in zip(keys, self.seen, strict=True):
            seen.add(key)
        self.n += 1

    def rate(self) -> float | None:
        return round(self.duplicates / self.n, 4) if self.n else None


def near_duplicate_rate(items: Sequence[Features], threshold: float = NEAR_DUPLICATE_JACCARD) -> float | None:
    """Share of trajectories that have an earlier near-duplicate (MinHash LSH over tool-call shingles)."""
    found = _NearDuplicates(threshold)
    for item in items:
        found.add(item)
    return found.rate()


@functools.lru_cache(maxsize=4096)
def _bigrams(text: str) -> tuple[str, ...]:
    """``text``'s word bigrams, each as one string (words hold no space, so distinct pairs stay distinct: a
    group keeps every distinct one, and a string costs a third of a tuple of two). Remembered by text: the
    miners of a problem share its request, and search alike."""
    return tuple(" ".join(g) for g in _ngrams(_words(text), 2))


def _grams(f: Features) -> tuple[Sequence[Any], ...]:
    """``f``'s request bigrams, search bigrams and tool-call 3-grams, computed on first use."""
    if f.grams is None:
        searches = [str(p.get("q", "")) for name, p in f.calls if name == "find_product"]
        f.grams = (
            _bigrams(f.query),
            [g for q in searches for g in _bigrams(q)],
            _ngrams([_call_token(n, p) for n, p in f.calls], 3),
        )
    return f.grams


class _Group:
    """The diversity row of one group, counted one trajectory at a time: the distinct n-grams, sequences,
    coverage sets and the near-duplicate index are kept, not the trajectories (memory stays flat)."""

    def __init__(self) -> None:
        self.n = 0
        self.grams: list[tuple[set[Any], list[int]]] = [(set(), [0]) for _ in range(3)]
        self.sequences: Counter[tuple[str, ...]] = Counter()
        self.categories: set[str] = set()
        self.shops: set[str] = set()
        self.bands: set[str] = set()
        self.attributes: set[str] = set()
        self.near = _NearDuplicates()

    def add(self, f: Features) -> None:
        self.n += 1
        for (seen, total), grams in zip(self.grams, _grams(f), strict=True):
            seen.update(grams)
            total[0] += len(grams)
        self.sequences[tuple(name for name, _ in f.calls)] += 1
        if f.category:
            self.categories.add(f.category)
        for pid in f.recommended:
            product = f.products.get(pid, {})
            if product.get("shop_id") is not None:
                self.shops.add(str(product["shop_id"]))
            band = price_band(product.get("price"))
            if band is not None:
                self.bands.add(band)
        for pid in f.viewed:
            self.attributes.update(f.products.get(pid, {}).get("attributes", ()))
        self.near.add(f)

    def _distinct(self, kind: int) -> tuple[int, float | None]:
        seen, (total,) = self.grams[kind]
        return (len(seen), round(len(seen) / total, 4)) if total else (0, None)

    def row(self) -> dict[str, Any]:
        q_distinct, q_ratio = self._distinct(0)
        s_distinct, s_ratio = self._distinct(1)
        _, c_ratio = self._distinct(2)
        return {
            "trajectories": self.n,
            "query_bigrams": q_distinct,
            "query_distinct_2": q_ratio,
            "search_bigrams": s_distinct,
            "search_distinct_2": s_ratio,
            "call_distinct_3": c_ratio,
            "tool_seq_entropy": _entropy(self.sequences),
            "categories": len(self.categories),
            "shops": len(self.shops),
            "attributes": len(self.attributes),
            "price_bands": len(self.bands),
            "near_duplicate_rate": self.near.rate(),
        }


def measure(items: Sequence[Features]) -> dict[str, Any]:
    """The diversity row of one group (see the module docstring)."""
    group = _Group()
    for f in items:
        group.add(f)
    return group.row()


def equal_size(items: Sequence[Features], n: int, seed: int = 0) -> list[Features]:
    """``n`` items drawn without replacement (seeded; all of them, in order, when there are at most ``n``)."""
    if len(items) <= n:
        return list(items)
    picked = sorted(random.Random(seed).sample(range(len(items)), n))
    return [items[i] for i in picked]


class DiversityBuilder:
    """Diversity per group for ``report.json``, fed with record dicts as the corpus build writes them.

    Groups over the input records (origin ``agentic``): ``kept`` (the funnel's kept), ``kept / miner_kind=K``,
    ``kept / agent=A`` (the source miner) and ``all / miner_kind=K`` whatever the outcome; recovered
    sub-task records that were kept form ``recovered (kept)``.
    """

    def __init__(self) -> None:
        self.groups: dict[str, _Group] = defaultdict(_Group)

    def add(self, record: dict[str, Any]) -> None:
        kind = record.get("miner_kind") or record.get("teacher") or "-"
        agent = (record.get("provenance") or {}).get("agent") or "-"
        features = features_from_record(record, "")
        kept = record.get("outcome") == "kept"
        if record.get("origin") == "recovered":
            keys = ["recovered (kept)"] if kept else []
        else:
            keys = [f"all / miner_kind={kind}"]
            if kept:
                keys += ["kept", f"kept / miner_kind={kind}", f"kept / agent={agent}"]
        for key in keys:
            self.groups[key].add(features)

    def build(self) -> dict[str, dict[str, Any]]:
        return {key: group.row() for key, group in sorted(self.groups.items())}


def teacher_features(
    records: Sequence[dict[str, Any]],
    problems: dict[str, Any],
    engine: SearchEngine,
    *,
    agent: Any = None,
    max_steps: int = 30,
    knowledge: Any = None,
    group: str = "single teacher",
) -> list[Features]:
    """One teacher's corpus of equal size from the same bank: the teacher (default the rule-based planner)
    plays each record's problem once, in record order (a problem that recurs recurs here too)."""
    from shoparena.agents import get_agent
    from shoparena.env.episodes import run_episode

    teacher = agent if agent is not None else get_agent("planner")
    cache: dict[str, Any] = {}
    out = []
    for record in records:
        pid = record["problem_id"]
        if pid not in problems:
            raise KeyError(
                f"diversity: problem {pid!r} of record {record.get('record_id')!r} is not in the bank"
            )
        if pid not in cache:  # a deterministic teacher gives the same episode again
            cache[pid] = run_episode(teacher, problems[pid], engine, max_steps=max_steps, knowledge=knowledge)
        out.append(features_from_trajectory(cache[pid], problems[pid], group))
    return out


def read_records(corpus_dir: Path) -> list[dict[str, Any]]:
    """The corpus's ``records.jsonl``, each line validated as a :class:`CorpusRecord` (a bad one is an error
    naming the file and line)."""
    from pydantic import ValidationError

    from shoparena.corpus.layout import CorpusRun
    from shoparena.jsonl import iter_raw_lines
    from shoparena.records.corpus import CorpusRecord

    path = CorpusRun.at(corpus_dir).records_path
    if not path.is_file():
        raise FileNotFoundError(f"{corpus_dir}: no {path.name} (run `shoparena corpus build` first)")
    out = []
    for line_no, line in iter_raw_lines(path):
        try:
            out.append(CorpusRecord.model_validate_json(line).model_dump(mode="json"))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first["loc"])
            raise ValueError(f"{path}:{line_no}: CorpusRecord.{where}: {first['msg']}") from None
    return out


def corpus_diversity(
    corpus_dir: str | Path,
    *,
    suite: str | Path | None = None,
    index: str | Path | None = None,
    max_steps: int = 30,
    seed: int = 0,
) -> dict[str, Any]:
    """Diversity of a built corpus per group and, given the bank (``suite``) and ``index``, against a
    single-teacher corpus of equal size: the planner plays the problems of the kept records.

    Returns:
        ``{"groups": {group: row}, "comparison": {"arena (kept)": row, "single teacher (planner)": row} or
        None, "teacher_problems": n}``.
    """
    records = read_records(Path(corpus_dir))
    builder = DiversityBuilder()
    for record in records:
        builder.add(record)
    doc: dict[str, Any] = {"groups": builder.build(), "comparison": None}
    if suite is None or index is None:
        return doc
    from shoparena.env.episodes import suite_knowledge
    from shoparena.search import SearchIndex
    from shoparena.suites.loaders import load_suite

    problems, _ = load_suite(suite)
    engine = SearchIndex.open(index)
    kept = [r for r in records if r["outcome"] == "kept" and r["origin"] == "agentic"]
    by_id = {p.problem_id: p for p in problems}
    knowledge = suite_knowledge(engine, suite)
    arena = [features_from_record(r, "arena") for r in kept]
    teacher = teacher_features(kept, by_id, engine, max_steps=max_steps, knowledge=knowledge)
    doc["comparison"] = {
        "arena (kept)": measure(equal_size(arena, len(teacher), seed)),
        "single teacher (planner)": measure(teacher),
    }
    doc["teacher_problems"] = len({r["problem_id"] for r in kept})
    return doc


def diversity_table(rows: dict[str, dict[str, Any]], title: str = "corpus diversity") -> Any:
    """A Rich table of diversity rows (one per group)."""
    from rich.table import Table

    table = Table(title=title)
    table.add_column("group")
    for _, header in COLUMNS:
        table.add_column(header, justify="right")
    for group, row in rows.items():
        table.add_row(group, *("-" if row.get(key) is None else str(row[key]) for key, _ in COLUMNS))
    return table


def diversity_markdown(rows: dict[str, dict[str, Any]]) -> list[str]:
    """The diversity rows as a Markdown table (lines)."""
    lines = ["| group | " + " | ".join(h for _, h in COLUMNS) + " |", "|---" * (len(COLUMNS) + 1) + "|"]
    for group, row in rows.items():
        cells = ["-" if row.get(key) is None else str(row[key]) for key, _ in COLUMNS]
        lines.append(f"| {group} | " + " | ".join(cells) + " |")
    return lines


__all__ = [
    "COLUMNS",
    "NEAR_DUPLICATE_JACCARD",
    "PRICE_BANDS",
    "DiversityBuilder",
    "Features",
    "corpus_diversity",
    "diversity_markdown",
    "diversity_table",
    "equal_size",
    "features_from_messages",
    "features_from_record",
    "features_from_trajectory",
    "measure",
    "near_duplicate_rate",
    "price_band",
    "read_records",
    "teacher_features",
]
