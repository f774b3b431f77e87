"""One proxy-log entry (arena spec §5.3): a line of ``proxy/<agent>/<problem>.jsonl`` or of ``proxy_calls``.

The trusted proxy (:mod:`shoparena.arena.proxy`) writes these entries, one per request, and the sandbox-side
``RequestLog`` of :mod:`shoparena.agent_sdk.logs` writes the same shape (that package is stdlib only, so a
test holds its lines to this model). Readers: richness, the corpus filter, the judge's trusted block, the
envelope bucketing and the runner's inference counts.

**One rule for ``kind``**: a missing ``kind`` is a ``summary`` (upstream's logs and older files omit it);
any other value, ``attempt`` included, is not, and every reader keeps summaries only
(:attr:`ProxyLogEntry.is_summary`, :func:`is_summary` for raw objects).

Two ways in. Our writers build a validated entry (strict types, no unknown fields), so a wrong field fails
where it is written. Agent-written entries (``extra_info.proxy_calls`` of an envelope, foreign files) come
through :func:`proxy_entries`, which never raises on their content: a value that is not a JSON object is
skipped, and a field of the wrong type or an unknown field is dropped, so it reads as absent.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from shoparena.records.unicode import json_text

SUMMARY = "summary"
ATTEMPT = "attempt"


class ProofKind(StrEnum):
    """How the proxy knows a catalogue dispatch was model-emitted (logged as ``proof``)."""

    NONCE_VALID = "nonce_valid"
    MATCHED_EMITTED = "matched_emitted"
    UNMATCHED = "unmatched"


class ParsedCall(BaseModel):
    """One tool call the proxy parsed out of a model reply (``parsed_tool_calls``)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    id: str
    name: str
    arguments: str = Field(description="The raw arguments string whose SHA-256 a nonce signs.")


class ProxyLogEntry(BaseModel):
    """A §5.3 ``summary`` entry (one finished call) or an ``attempt`` entry (one HTTP try).

    No ``schema_version``: the entry mirrors upstream's shape and is embedded, as written, in envelopes.
    """

    model_config = ConfigDict(extra="forbid", strict=True, validate_assignment=True)

    kind: str = Field(default=SUMMARY, description="'summary' or 'attempt'; missing means 'summary'.")
    method: str | None = None
    path: str = Field(default="", description="e.g. /search/find_product, /inference/chat/completions.")
    timestamp: int | float | None = Field(default=None, description="Epoch ms when the call finished.")
    duration_ms: float | None = None
    status_code: int | None = None
    params: dict[str, Any] | None = Field(default=None, description="GET query parameters, as sent.")
    json_data: dict[str, Any] | None = Field(
        default=None, description="POST body; inference bodies without `messages`."
    )
    response: Any = Field(default=None, description="The parsed response when its JSON is ≤ 2000 chars.")
    response_truncated: bool | None = None
    response_length: int | None = None
    result_product_ids: list[str | int] | None = Field(
        default=None, description="All ids of a truncated find_product list response."
    )
    nonce_status: str | None = Field(default=None, description="Nonce check of a catalogue dispatch.")
    # The trusted proxy's own fields (arena spec design choices).
    proof: ProofKind | None = Field(default=None, strict=False, description="Proof of a catalogue dispatch.")
    problem_id: str | None = None
    model: str | None = Field(default=None, description="Model served (inference).")
    requested_model: str | None = Field(default=None, description="Model asked for, when it was replaced.")
    usage: dict[str, Any] | None = Field(default=None, description="Token usage, kept when truncating.")
    parsed_tool_names: list[str] | None = Field(
        default=None, description="Tool names the reply requested, in order (kept when truncating)."
    )
    parsed_tool_calls: list[ParsedCall] | None = None
    error: Any = Field(default=None, description="The error body of a non-200 answer.")
    # Attempt entries (agent_sdk RequestLog).
    attempt: int | None = Field(default=None, description="0-based HTTP try of an attempt entry.")
    error_class: str | None = None

    @field_validator("parsed_tool_names", mode="before")
    @classmethod
    def _names_only(cls, value: Any) -> Any:
        # Names that are not strings are dropped one by one (an agent-written log may hold anything).
        return [name for name in value if isinstance(name, str)] if isinstance(value, list) else value

    @property
    def is_summary(self) -> bool:
        """A summary entry (the only kind any reader counts)."""
        return self.kind == SUMMARY

    def to_dict(self) -> dict[str, Any]:
        """The entry as written: ``kind`` and every field that was set, in §5.3 order."""
        return {"kind": self.kind, **self.model_dump(exclude_unset=True, exclude={"kind"})}

    def to_line(self) -> str:
        """One JSONL line (no newline); non-JSON values in ``response`` are written as strings, and a lone
        surrogate a miner's request carried as its escape (the trusted log keeps every line)."""
        return json_text(self.to_dict(), default=str)


def is_summary(value: Mapping[str, Any]) -> bool:
    """The ``kind`` rule on a raw object: missing → summary, anything but ``"summary"`` → not."""
    return value.get("kind", SUMMARY) == SUMMARY


def proxy_entry(value: Any) -> ProxyLogEntry | None:
    """One entry from any value, never raising: None for a non-object; bad or unknown fields dropped."""
    if isinstance(value, ProxyLogEntry):
        return value
    if not isinstance(value, Mapping):
        return None
    data = {str(k): v for k, v in value.items()}
    if "kind" in data and not isinstance(data["kind"], str):
        data["kind"] = json.dumps(data["kind"], default=str)  # present but not a string: not a summary
    try:
        return ProxyLogEntry.model_validate(data)
    except ValidationError as exc:
        bad = {str(err["loc"][0]) for err in exc.errors() if err["loc"]}
    try:
        return ProxyLogEntry.model_validate({k: v for k, v in data.items() if k not in bad})
    except ValidationError:  # pragma: no cover - every remaining field validated on its own
        return None


def proxy_entries(values: Iterable[Any] | None) -> list[ProxyLogEntry]:
    """Entries from raw objects (see :func:`proxy_entry`); values that are not objects are skipped."""
    out: list[ProxyLogEntry] = []
    for value in values or ():
        entry = proxy_entry(value)
        if entry is not None:
            out.append(entry)
    return out


__all__ = [
    "ATTEMPT",
    "SUMMARY",
    "ParsedCall",
    "ProofKind",
    "ProxyLogEntry",
    "is_summary",
    "proxy_entries",
    "proxy_entry",
]
