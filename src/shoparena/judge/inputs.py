"""Build the judge's input: a TRUSTED block from the proxy's log and an UNTRUSTED block from the trajectory.

The trusted block is computed only from the ``trusted_proxy_calls`` argument (§5.3 summary entries written by
the proxy). Nothing the agent wrote, in particular a step's own ``proxy_calls``, ever reaches it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from shoparena.judge.records import (
    CallKind,
    Candidate,
    JudgeInput,
    JudgeStep,
    JudgeToolLine,
    ResultFacts,
    TrustedCall,
    TrustedSummary,
)
from shoparena.records.proxy_log import ProxyLogEntry, proxy_entries
from shoparena.records.trajectory import Trajectory

MAX_THINK_CHARS = 1000
MAX_RESULT_CHARS = 300
MAX_PARAM_CHARS = 200
MAX_CALLS_SHOWN = 30
MAX_IDS_SHOWN = 20

TRUSTED_OPEN = "<<<TRUSTED_PROXY_LOG>>>"
TRUSTED_CLOSE = "<<<END_TRUSTED_PROXY_LOG>>>"
UNTRUSTED_OPEN = "<<<UNTRUSTED_TRAJECTORY>>>"
UNTRUSTED_CLOSE = "<<<END_UNTRUSTED_TRAJECTORY>>>"

# Values too generic to count as a cited datum when they appear in thinking.
_GENERIC_VALUES = {"yes", "no", "none", "n/a", "true", "false", "null", "other", "unknown", "default", "all"}
# Keys whose string values are prose, not citable data.
_PROSE_KEYS = {"description", "short_description", "contents", "content", "message", "detail"}
_WORD_RE = re.compile(r"[a-z0-9]+")
_STOPWORDS = {
    "with", "and", "for", "the", "from", "this", "that", "your", "into", "pack", "pcs", "piece", "pieces",
    "set", "new", "size", "color", "colour", "free", "high", "quality", "best", "sale", "original",
}


def _neutralise(text: str) -> str:
    """Break block markers in text we did not write, so it cannot open or close a block."""
    return text.replace("<<<", "< < <").replace(">>>", "> > >")


def _cut(text: str, limit: int) -> tuple[str, bool]:
    return (text, False) if len(text) <= limit else (text[:limit] + "...[truncated]", True)


def classify_path(path: str) -> CallKind:
    """Which kind of proxy call a path is."""
    if "/find_product" in path:
        return CallKind.SEARCH
    if "/view_product" in path:
        return CallKind.VIEW
    if path.startswith("/inference") or "/inference/" in path:
        return CallKind.INFERENCE
    return CallKind.OTHER


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return int(value)
    return None


def _ids_in_response(response: Any) -> list[str]:
    """product_id values of a search/view response (a list of products, one product, or a wrapper dict)."""
    items: list[Any] = []
    if isinstance(response, list):
        items = response
    elif isinstance(response, dict):
        items = [response]
        items += [v for value in response.values() if isinstance(value, list) for v in value]
    return [str(item["product_id"]) for item in items if isinstance(item, dict) and item.get("product_id")]


def trusted_call(entry: ProxyLogEntry) -> TrustedCall:
    """Reduce one §5.3 summary entry to the judge's call line."""
    path = entry.path or "?"
    kind = classify_path(path)
    params_text = ""
    if entry.params:
        params_text, _ = _cut(json.dumps(entry.params, ensure_ascii=False, default=str), MAX_PARAM_CHARS)
    json_data = entry.json_data or {}
    response = entry.response
    model = json_data.get("model") or entry.model
    if model is None and isinstance(response, dict):
        model = response.get("model")
    tokens: int | None = None
    if kind is CallKind.INFERENCE:
        # Proxy-side logs keep `usage` even when the response is truncated (our §5.3 design choice).
        usage = entry.usage
        if usage is None and isinstance(response, dict):
            usage = response.get("usage")
        if isinstance(usage, dict):
            tokens = _as_int(usage.get("completion_tokens"))
    ids: list[str] = []
    if kind in (CallKind.SEARCH, CallKind.VIEW):
        listed = entry.result_product_ids
        ids = [str(i) for i in listed] if listed is not None else _ids_in_response(response)
        if not ids and kind is CallKind.VIEW and entry.params is not None:
            raw = entry.params.get("product_ids") or entry.params.get("product_id") or ""
            ids = [part.strip() for part in str(raw).replace("+", ",").split(",") if part.strip()]
    ids = list(dict.fromkeys(ids))
    return TrustedCall(
        kind=kind,
        method=entry.method or "?",
        path=path,
        params=params_text,
        model=str(model) if model else None,
        completion_tokens=tokens,
        status_code=entry.status_code,
        duration_ms=entry.duration_ms or 0.0,
        timestamp=entry.timestamp,
        product_ids=ids[:MAX_IDS_SHOWN],
        more_product_ids=max(0, len(ids) - MAX_IDS_SHOWN),
    )


def summarise_proxy_calls(entries: Iterable[ProxyLogEntry | Mapping[str, Any]]) -> TrustedSummary:
    """Counts and up to 30 call lines from proxy summary entries (``attempt`` entries are skipped)."""
    calls: list[TrustedCall] = []
    all_ids: set[str] = set()
    for entry in proxy_entries(entries):
        if not entry.is_summary:
            continue
        call = trusted_call(entry)
        calls.append(call)
        if entry.result_product_ids is not None:  # the full list, not only the 20 shown
            all_ids.update(str(i) for i in entry.result_product_ids)
        all_ids.update(call.product_ids)
    inference = [c for c in calls if c.kind is CallKind.INFERENCE]
    tokens = [c.completion_tokens or 0 for c in inference]
    return TrustedSummary(
        searches=sum(c.kind is CallKind.SEARCH for c in calls),
        views=sum(c.kind is CallKind.VIEW for c in calls),
        inference_calls=len(inference),
        completion_tokens=sum(tokens),
        max_completion_tokens=max(tokens, default=0),
        failures=sum(c.status_code is not None and c.status_code >= 400 for c in calls),
        total_seconds=round(sum(c.duration_ms for c in calls) / 1000, 3),
        calls=calls[:MAX_CALLS_SHOWN],
        more_calls=max(0, len(calls) - MAX_CALLS_SHOWN),
        all_product_ids=sorted(all_ids),
    )


def canonical_number(value: float) -> str:
    """'389' for 389.0, '12.5' for 12.50: the form prices are matched in."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _words(text: str) -> list[str]:
    return _WORD_RE.findall(text.lower())


def extract_result_facts(result: Any) -> ResultFacts:
    """Collect citable data from a full tool result (ids, prices, option/brand values, titles)."""
    product_ids: dict[str, None] = {}
    other_ids: dict[str, None] = {}
    prices: dict[str, None] = {}
    values: dict[str, None] = {}
    title_words: dict[str, None] = {}
    candidates: list[Candidate] = []

    def walk(obj: Any, key: str | None) -> None:
        lk = (key or "").lower()
        if isinstance(obj, dict):
            if obj.get("product_id") or obj.get("title"):
                candidates.append(Candidate(product_id=str(obj.get("product_id") or ""),
                                            title=str(obj.get("title") or "")))
            for k, v in obj.items():
                walk(v, str(k))
        elif isinstance(obj, list):
            for v in obj:
                walk(v, key)
        elif isinstance(obj, bool) or obj is None:
            return
        elif isinstance(obj, int | float):
            if "price" in lk:
                prices[canonical_number(obj)] = None
            elif lk == "product_id":
                product_ids[str(obj)] = None
            elif lk.endswith("id"):
                other_ids[str(obj)] = None
        elif isinstance(obj, str):
            text = obj.strip()
            if key is None:
                try:
                    walk(json.loads(text), "")
                except ValueError:
                    for token in re.findall(r"\b\d{6,}\b", text):
                        product_ids[token] = None
                return
            if lk in ("product_id", "product_ids"):
                for part in re.split(r"[,\s]+", text):
                    if part:
                        product_ids[part] = None
            elif lk.endswith("id"):
                other_ids[text.lower()] = None
            elif "title" in lk or lk == "name":
                for word in _words(text):
                    if len(word) >= 4 and word not in _STOPWORDS and not word.isdigit():
                        title_words[word] = None
            elif "price" in lk:
                for number in re.findall(r"\d+(?:\.\d+)?", text):
                    prices[canonical_number(float(number))] = None
            elif lk not in _PROSE_KEYS and 3 <= len(text) <= 40 and text.lower() not in _GENERIC_VALUES:
                values[text.lower()] = None

    walk(result, None)
    return ResultFacts(
        product_ids=list(product_ids),
        other_ids=list(other_ids),
        prices=list(prices),
        values=list(values),
        title_words=list(title_words),
        candidates=candidates,
    )


def _result_text(call_result: Any, has_result: bool) -> str:
    if call_result is None and not has_result:
        return "(no result)"
    if isinstance(call_result, str):
        return call_result
    return json.dumps(call_result, ensure_ascii=False, default=str)


def build_judge_input(
    query: str, trusted_proxy_calls: Iterable[ProxyLogEntry | Mapping[str, Any]], trajectory: Trajectory
) -> JudgeInput:
    """Assemble a judge input.

    Args:
        query: The shopper's request (from the problem, not from agent-written text).
        trusted_proxy_calls: §5.3 summary entries from the proxy's own log for this episode.
        trajectory: The agent's trajectory; only thinking and tool calls/results are read. Its steps'
            ``proxy_calls`` are agent-writable and deliberately ignored.
    """
    steps: list[JudgeStep] = []
    for step in trajectory.steps:
        think, truncated = _cut(step.think.strip(), MAX_THINK_CHARS)
        tools = []
        for call in step.tool_calls:
            result, _ = _cut(_result_text(call.result, call.has_result), MAX_RESULT_CHARS)
            tools.append(JudgeToolLine(
                name=call.name,
                arguments=json.dumps(call.parameters, ensure_ascii=False, default=str),
                result=result,
                has_result=call.has_result or call.result is not None,
                facts=extract_result_facts(call.result) if call.result is not None else ResultFacts(),
            ))
        steps.append(JudgeStep(index=step.index, think=think, think_truncated=truncated, tools=tools))
    return JudgeInput(query=query, trusted=summarise_proxy_calls(trusted_proxy_calls), steps=steps)


def _call_line(number: int, call: TrustedCall) -> str:
    parts = [f"  {number}. {call.method} {call.path}"]
    if call.params:
        parts.append(_neutralise(call.params))
    if call.model:
        parts.append(f"model={_neutralise(call.model)}")
    if call.completion_tokens is not None:
        parts.append(f"completion_tokens={call.completion_tokens}")
    status = call.status_code if call.status_code is not None else "none"
    line = " ".join(parts) + f" -> status {status} ({call.duration_ms:.0f} ms)"
    if call.product_ids:
        more = f" (+{call.more_product_ids} more)" if call.more_product_ids else ""
        line += f"\n     returned product ids: {_neutralise(','.join(call.product_ids))}{more}"
    return line


def render_trusted(summary: TrustedSummary) -> str:
    """The TRUSTED block."""
    lines = [
        TRUSTED_OPEN,
        "Recorded by the arena's proxy; the agent cannot write or change this block.",
        f"Totals: {summary.searches} searches, {summary.views} product views, "
        f"{summary.inference_calls} inference calls ({summary.completion_tokens} completion tokens), "
        f"{summary.failures} failed calls, {summary.total_seconds:.1f} s in calls",
    ]
    if summary.calls:
        lines.append("Calls in order:")
        lines += [_call_line(i, call) for i, call in enumerate(summary.calls, start=1)]
        if summary.more_calls:
            lines.append(f"  ...and {summary.more_calls} more calls")
    else:
        lines.append("No proxy calls were recorded.")
    if summary.inference_calls == 0:
        lines.append("WARNING: zero inference calls were recorded, so no text in the trajectory "
                     "was produced by a language model.")
    lines.append(TRUSTED_CLOSE)
    return "\n".join(lines)


def render_untrusted(steps: list[JudgeStep]) -> str:
    """The UNTRUSTED block."""
    lines = [UNTRUSTED_OPEN]
    for step in steps:
        lines.append(f"[step {step.index}]")
        if step.think:
            lines.append(f"THINK: {_neutralise(step.think)}")
        for tool in step.tools:
            lines.append(f"CALL: {_neutralise(tool.name)} {_neutralise(tool.arguments)}")
            lines.append(f"RESULT: {_neutralise(tool.result)}")
    if not steps:
        lines.append("(the trajectory has no steps)")
    lines.append(UNTRUSTED_CLOSE)
    return "\n".join(lines)


def render_judge_input(judge_input: JudgeInput) -> str:
    """Query, trusted block and untrusted block, as one user message."""
    return "\n\n".join([
        f"QUERY: {_neutralise(judge_input.query)}",
        render_trusted(judge_input.trusted),
        render_untrusted(judge_input.steps),
    ])
