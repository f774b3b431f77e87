"""Read and write problem suites in the two upstream formats (environment spec §6).

* ShoppingBench test files: JSONL, one problem per line. Records are split on ``\\n`` only: upstream files
  hold raw U+0085, which ``str.splitlines`` would treat as a line break.
* ORO suites: one JSON array of problems with ``category``, ``difficulty``, ``title`` and optionally
  ``reward_title_embeddings``.

Every record ends up kept or quarantined with the reason naming the record (file, line or index, query prefix)
and the field, and :class:`SuiteLoadSummary` counts add up (``read == kept + quarantined``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import ValidationError

from shoparena.catalog.io import json_error_reason
from shoparena.jsonl import LineWriter, open_binary, read_bytes
from shoparena.records.problem import (
    CATEGORY_OF_INTENT,
    Intent,
    Problem,
    ProblemSource,
    RewardItem,
    Voucher,
    problem_id_for_query,
)

SuiteFormat = Literal["sb_jsonl", "oro_json"]

#: Top-level keys a problem record may carry (SB and ORO together); anything else is rejected by name.
_KNOWN_KEYS = frozenset(
    {
        "problem_id",
        "query",
        "Knowledge_Attribute",
        "reward",
        "voucher",
        "category",
        "difficulty",
        "title",
        "reward_title_embeddings",
        # Written by `shoparena corpus build` (problems.json): the leak-guarded side and cluster; not parsed.
        "split",
        "cluster_id",
    }
)
_ORO_INTENTS = {"product": Intent.PRODUCT, "shop": Intent.SHOP, "voucher": Intent.VOUCHER, "web": Intent.WEB}
_QUERY_PREFIX = 60


class SuiteLoadError(ValueError):
    """A suite file (or, in strict mode, one record) that cannot be read; names the record and field."""


class ProblemRecordError(ValueError):
    """One bad record: carries the offending field path."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


@dataclass(slots=True)
class QuarantinedProblem:
    """A record that could not be read, with where it was and why."""

    path: str
    line: int | None
    index: int | None
    query_prefix: str
    field: str
    reason: str

    @property
    def where(self) -> str:
        pos = f"line {self.line}" if self.line is not None else f"index {self.index}"
        return f"{self.path}:{pos}"

    def describe(self) -> str:
        query = f" (query {self.query_prefix!r})" if self.query_prefix else ""
        return f"{self.where}{query}: field {self.field or '<record>'}: {self.reason}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "index": self.index,
            "query_prefix": self.query_prefix,
            "field": self.field,
            "reason": self.reason,
        }


@dataclass(slots=True)
class SuiteLoadSummary:
    """Accounting of one suite read: ``read == kept + quarantined`` always holds."""

    path: str
    format: str = ""
    read: int = 0
    kept: int = 0
    quarantined: int = 0
    by_category: dict[str, int] = field(default_factory=dict)
    by_intent: dict[str, int] = field(default_factory=dict)
    by_difficulty: dict[str, int] = field(default_factory=dict)
    problems_quarantined: list[QuarantinedProblem] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "format": self.format,
            "read": self.read,
            "kept": self.kept,
            "quarantined": self.quarantined,
            "by_category": dict(self.by_category),
            "by_intent": dict(self.by_intent),
            "by_difficulty": dict(self.by_difficulty),
            "problems_quarantined": [q.as_dict() for q in self.problems_quarantined],
        }


# ---------------------------------------------------------------------------------------------- parsing


def _loc(err: dict[str, Any], prefix: str = "") -> str:
    parts = [str(p) for p in err["loc"]]
    return ".".join([prefix, *parts] if prefix else parts)


def _first_error(exc: ValidationError, prefix: str = "") -> ProblemRecordError:
    errors = exc.errors()
    first = errors[0]
    message = first["msg"]
    if len(errors) > 1:
        message += f" (+{len(errors) - 1} more)"
    loc = _loc(first, prefix)
    if not loc:  # a whole-record rule: name the field the rule is about
        loc = next((key for word, key in _RULE_FIELDS if word in message), prefix)
    return ProblemRecordError(loc, message.removeprefix("Value error, "))


#: Record-level rules of :class:`Problem` and :class:`Voucher`, by a word of their message, and the field.
_RULE_FIELDS = (
    ("Knowledge_Attribute", "Knowledge_Attribute"),
    ("voucher", "voucher"),
    ("reward", "reward"),
    ("GT product", "reward"),
    ("face_value", "voucher.face_value"),
    ("discount and cap", "voucher.discount"),
)


def _parse_reward_item(raw: object, prefix: str) -> RewardItem:
    if not isinstance(raw, dict):
        raise ProblemRecordError(prefix, f"expected an object, got {type(raw).__name__}")
    try:
        return RewardItem.model_validate(raw)
    except ValidationError as exc:
        raise _first_error(exc, prefix) from None


def _parse_web_product(raw: dict[str, Any]) -> RewardItem:
    pid, title = raw.get("product_id"), raw.get("title")
    if not isinstance(pid, str) or not pid:
        raise ProblemRecordError("reward.product_id", "the web GT product needs a string product_id")
    if not isinstance(title, str):
        raise ProblemRecordError("reward.title", "the web GT product's title must be a string")
    return RewardItem(product_id=pid, title=[title])


def _detect_intent(record: dict[str, Any], oro: bool) -> Intent:
    if oro:
        # ORO lower-cases the category and treats anything unknown as a product task.
        return _ORO_INTENTS.get(str(record.get("category", "")).lower(), Intent.PRODUCT)
    if "voucher" in record:
        return Intent.VOUCHER
    if "Knowledge_Attribute" in record:
        return Intent.WEB
    return Intent.SHOP if isinstance(record.get("reward"), list) else Intent.PRODUCT


def parse_problem(record: object, source: ProblemSource) -> Problem:
    """Turn one upstream record (SB or ORO) into a :class:`Problem`.

    Raises:
        ProblemRecordError: naming the offending field.
    """
    if not isinstance(record, dict):
        raise ProblemRecordError("", f"expected a JSON object, got {type(record).__name__}")
    unknown = sorted(set(record) - _KNOWN_KEYS)
    if unknown:
        key = unknown[0]
        raise ProblemRecordError(key if key.strip() else repr(key), f"unknown key {key!r}")
    query = record.get("query")
    if not isinstance(query, str) or not query.strip():
        got = "missing" if query is None else f"{type(query).__name__} {str(query)[:40]!r}"
        raise ProblemRecordError(
            "query", f"missing or not a non-empty string: {got}" if query is not None else "missing"
        )
    oro = "category" in record
    intent = _detect_intent(record, oro)

    raw_reward = record.get("reward")
    web_product: dict[str, Any] | None = None
    if raw_reward is None:
        raise ProblemRecordError("reward", "missing")
    if intent is Intent.WEB:
        if not isinstance(raw_reward, dict):
            raise ProblemRecordError("reward", "a web problem's reward must be the full GT product object")
        reward = [_parse_web_product(raw_reward)]
        shape: Literal["dict", "list", "product"] = "product"
        web_product = raw_reward
    elif isinstance(raw_reward, dict):
        reward, shape = [_parse_reward_item(raw_reward, "reward")], "dict"
    elif isinstance(raw_reward, list):
        if not raw_reward:
            raise ProblemRecordError("reward", "empty list")
        reward = [_parse_reward_item(item, f"reward.{i}") for i, item in enumerate(raw_reward)]
        shape = "list"
    else:
        raise ProblemRecordError("reward", f"expected an object or a list, got {type(raw_reward).__name__}")

    voucher = None
    if "voucher" in record:
        raw_voucher = record["voucher"]
        if not isinstance(raw_voucher, dict):
            raise ProblemRecordError("voucher", "expected an object")
        try:
            voucher = Voucher.model_validate(raw_voucher)
        except ValidationError as exc:
            raise _first_error(exc, "voucher") from None
    if intent is Intent.VOUCHER and voucher is None:
        raise ProblemRecordError("voucher", "missing for a Voucher problem")
    if intent is not Intent.VOUCHER and voucher is not None:
        raise ProblemRecordError("voucher", f"present on a {intent.value} problem")

    pid = record.get("problem_id")
    if pid is not None and (not isinstance(pid, str | int) or isinstance(pid, bool) or str(pid) == ""):
        kind = "an empty string" if pid == "" else f"{type(pid).__name__} {pid!r}"
        raise ProblemRecordError("problem_id", f"must be a non-empty string or an integer, got {kind}")
    source = source.model_copy(update={"problem_id_given": pid is not None, "reward_shape": shape})
    fields: dict[str, Any] = {
        "problem_id": str(pid) if pid is not None else problem_id_for_query(query),
        "query": query,
        "intent": intent,
        "category": record.get("category"),
        "difficulty": record.get("difficulty"),
        "title": record.get("title"),
        "reward": reward,
        "voucher": voucher,
        "knowledge_attribute": record.get("Knowledge_Attribute"),
        "web_product": web_product,
        "reward_title_embeddings": record.get("reward_title_embeddings"),
        "source": source,
    }
    try:
        return Problem.model_validate(fields)
    except ValidationError as exc:
        raise _first_error(exc) from None


# ---------------------------------------------------------------------------------------------- reading


_BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)
#: The wrapper key of ``{"problems": [...]}`` suites.
_WRAPPER_KEY = "problems"


def _as_utf8(path: Path, data: bytes) -> bytes:
    """The file's bytes as UTF-8: byte-order marks (UTF-8/16/32) are honoured and dropped.

    Raises:
        SuiteLoadError: NUL bytes without a byte-order mark (UTF-16/32 that cannot be told apart safely).
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(encoding).encode("utf-8")
            except UnicodeDecodeError as exc:
                raise SuiteLoadError(
                    f"{path}: not valid {encoding} after its byte-order mark: {exc}"
                ) from None
    if b"\x00" in data[:4096]:
        raise SuiteLoadError(
            f"{path}: holds NUL bytes (UTF-16/32 without a byte-order mark?); save it as UTF-8 JSON or JSONL"
        )
    return data


def _whole_document(path: Path, data: bytes) -> object | None:
    """The file parsed as one JSON document, or None when it is not one (e.g. JSONL)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


def _raw_records(path: Path) -> tuple[SuiteFormat, Iterator[tuple[int | None, int | None, object]]]:
    data = _as_utf8(path, read_bytes(path))  # a damaged .gz raises JsonlReadError (CLI exit 3)
    head = data.lstrip()[:1]
    if head == b"[":
        try:
            array = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise SuiteLoadError(f"{path}: not valid JSON: {json_error_reason(data, exc)}") from None
        return "oro_json", ((None, i, rec) for i, rec in enumerate(array))
    if head == b"{":
        doc = _whole_document(path, data)
        if isinstance(doc, dict) and _WRAPPER_KEY in doc:
            wrapped = doc[_WRAPPER_KEY]
            if not isinstance(wrapped, list):
                raise SuiteLoadError(f"{path}: '{_WRAPPER_KEY}' must be a list of problems")
            return "oro_json", ((None, i, rec) for i, rec in enumerate(wrapped))
        if isinstance(doc, dict) and not _KNOWN_KEYS & set(doc):
            keys = ", ".join(list(doc)[:6])
            raise SuiteLoadError(
                f"{path}: one JSON object with keys {keys}; expected a problem array, "
                f'{{"{_WRAPPER_KEY}": [...]}} or JSONL'
            )
        if isinstance(doc, dict):  # one problem, maybe pretty-printed over several lines
            return "sb_jsonl", iter([(1, None, doc)])

    def lines() -> Iterator[tuple[int | None, int | None, object]]:
        # Split on b"\n" only: raw U+0085 inside queries must not start a new record.
        for line_no, raw in enumerate(data.split(b"\n"), start=1):
            if not raw.strip():
                continue
            try:
                yield line_no, None, orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                yield line_no, None, ProblemRecordError("", json_error_reason(raw, exc))

    return "sb_jsonl", lines()


def iter_suite(
    path: str | Path, *, summary: SuiteLoadSummary | None = None, strict: bool = False
) -> Iterator[Problem]:
    """Stream the problems of a suite file (format auto-detected), quarantining bad records in ``summary``.

    Raises:
        SuiteLoadError: in ``strict`` mode on the first bad record, or when the file itself is unreadable.
        JsonlReadError: a damaged gzip file (names the file).
    """
    path = Path(path)
    summary = summary if summary is not None else SuiteLoadSummary(path=str(path))
    fmt, records = _raw_records(path)
    summary.format = fmt
    seen: dict[str, str] = {}
    for line_no, index, record in records:
        summary.read += 1
        source = ProblemSource(path=str(path), format=fmt, line=line_no, index=index)
        query = record.get("query") if isinstance(record, dict) else None
        prefix = query[:_QUERY_PREFIX] if isinstance(query, str) else ""
        try:
            if isinstance(record, ProblemRecordError):
                raise record
            problem = parse_problem(record, source)
            if problem.problem_id in seen:
                raise ProblemRecordError(
                    "problem_id" if problem.source.problem_id_given else "query",
                    f"duplicate problem {problem.problem_id} (first at {seen[problem.problem_id]})",
                )
        except ProblemRecordError as exc:
            bad = QuarantinedProblem(str(path), line_no, index, prefix, exc.field, exc.message)
            summary.quarantined += 1
            summary.problems_quarantined.append(bad)
            if strict:
                raise SuiteLoadError(bad.describe()) from None
            continue
        seen[problem.problem_id] = source.describe()
        summary.kept += 1
        _count(summary.by_category, problem.category_label)
        _count(summary.by_intent, problem.intent.value)
        _count(summary.by_difficulty, problem.difficulty or "-")
        yield problem


def _count(counter: dict[str, int], key: str) -> None:
    counter[key] = counter.get(key, 0) + 1


def load_suite(path: str | Path, *, strict: bool = False) -> tuple[list[Problem], SuiteLoadSummary]:
    """Read a whole suite (ShoppingBench JSONL or ORO JSON array, auto-detected).

    Args:
        path: The suite file (``.gz`` accepted).
        strict: Raise on the first bad record instead of quarantining it.

    Returns:
        The kept problems in file order and the load summary.
    """
    summary = SuiteLoadSummary(path=str(path))
    problems = list(iter_suite(path, summary=summary, strict=strict))
    return problems, summary


# ---------------------------------------------------------------------------------------------- writing


def _reward_json(problem: Problem) -> Any:
    shape = problem.source.reward_shape
    if shape is None:  # built in code: use the upstream shape of the intent
        shape = {Intent.PRODUCT: "dict", Intent.WEB: "product"}.get(problem.intent, "list")
    if shape == "product" and problem.web_product is not None:
        return problem.web_product
    items = [item.to_json_dict() for item in problem.reward]
    return items[0] if shape == "dict" and len(items) == 1 else items


def sb_record(problem: Problem) -> dict[str, Any]:
    """The ShoppingBench test-file record of a problem (upstream key order)."""
    record: dict[str, Any] = {"query": problem.query}
    if problem.intent is Intent.WEB:
        record["Knowledge_Attribute"] = problem.knowledge_attribute
    record["reward"] = _reward_json(problem)
    if problem.voucher is not None:
        record["voucher"] = problem.voucher.model_dump(mode="json")
    return record


def oro_record(problem: Problem, *, public: bool = False) -> dict[str, Any]:
    """The ORO suite record; ``public`` strips reward, voucher and embeddings (adds problem_id)."""
    if public:
        return problem.public_view()
    record: dict[str, Any] = {}
    if problem.source.problem_id_given:
        record["problem_id"] = problem.problem_id
    record["query"] = problem.query
    record["reward"] = _reward_json(problem)
    if problem.voucher is not None:
        record["voucher"] = problem.voucher.model_dump(mode="json")
    if problem.intent is Intent.WEB:
        record["Knowledge_Attribute"] = problem.knowledge_attribute
    record["category"] = problem.category or CATEGORY_OF_INTENT[problem.intent]
    if problem.difficulty is not None:
        record["difficulty"] = problem.difficulty
    if problem.title is not None:
        record["title"] = problem.title
    if problem.reward_title_embeddings is not None:
        record["reward_title_embeddings"] = problem.reward_title_embeddings
    return record


def write_sb_jsonl(problems: Iterable[Problem], path: str | Path) -> int:
    """Write a ShoppingBench test file (``json.dumps(ensure_ascii=False)`` per line, as upstream).

    Returns:
        The number of problems written.
    """
    with LineWriter(path) as fh:
        for problem in problems:
            fh.write_json(sb_record(problem))
    return fh.count


def write_oro_suite(problems: Iterable[Problem], path: str | Path, *, public: bool = False) -> int:
    """Write an ORO suite JSON array (indent 2, ASCII-escaped, as upstream).

    Args:
        problems: The problems to write.
        path: Output file.
        public: Write the agent-visible variant (no reward, voucher or reward_title_embeddings).

    Returns:
        The number of problems written.
    """
    records = [oro_record(p, public=public) for p in problems]
    with open_binary(path, "wb") as fh:
        fh.write(json.dumps(records, indent=2).encode("utf-8"))
    return len(records)


def titles_from_suites(paths: Iterable[str | Path]) -> list[str]:
    """Distinct reward titles of the given suite files, in first-seen order."""
    titles: dict[str, None] = {}
    for path in paths:
        problems, _ = load_suite(path)
        for problem in problems:
            for item in problem.reward:
                for title in item.title:
                    titles.setdefault(title, None)
    return list(titles)
