"""The corpus views: one :class:`ViewSpec` per view (its columns, its row builder, the training method that
consumes it), the one table that ``corpus build`` writes from and ``train`` reads by.

Adding a view is one entry in :data:`VIEWS` (``tests/corpus/test_views.py`` checks the table against the
train methods). Importing this module imports neither ``datasets`` nor pyarrow.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

SPLITS = ("train", "eval")
COMMON = (
    "record_id", "run_id", "problem_id", "split", "cluster_id", "category", "difficulty", "tools", "outcome",
    "origin", "miner_kind",
)  # fmt: skip

Row = dict[str, Any]


@dataclass(frozen=True)
class ViewSpec:
    """One corpus view.

    Attributes:
        name: the folder and file stem under ``CORPUS/views/``.
        columns: the view's own columns as ``datasets`` feature types, given the feature of one chat
            message (the common columns are added to every view).
        rows: the view's rows of one record dict (``records.jsonl``); none for a record it has no use for.
        method: the training method (``train.methods.METHODS``) that reads this view by default.
    """

    name: str
    columns: Callable[[dict[str, Any]], dict[str, Any]]
    rows: Callable[[dict[str, Any]], Iterator[Row]]
    method: str


def _message(m: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": m["role"],
        "content": m.get("content"),
        "tool_calls": m.get("tool_calls") or [],
        "tool_call_id": m.get("tool_call_id"),
        "name": m.get("name"),
        "trainable": bool(m.get("trainable")),
    }


def _common(r: dict[str, Any]) -> Row:
    row = {key: r[key] for key in COMMON}
    row["rollout_idx"] = r["rollout_idx"]
    row["labels"] = orjson.dumps(r["labels"], option=orjson.OPT_SORT_KEYS).decode()
    row["provenance"] = orjson.dumps(r["provenance"], option=orjson.OPT_SORT_KEYS).decode()
    return row


def sft_rows(r: dict[str, Any]) -> Iterator[Row]:
    yield {**_common(r), "messages": [_message(m) for m in r["messages"]]}


def _arguments(call: dict[str, Any]) -> Any:
    """A call's arguments as a JSON value (the teacher_action column nests them); raw text if not JSON."""
    raw = call["function"]["arguments"]
    try:
        return orjson.loads(raw) if isinstance(raw, str) else raw
    except orjson.JSONDecodeError:
        return raw


def step_rows(r: dict[str, Any]) -> Iterator[Row]:
    """One row per assistant turn. The prompt is not repeated at every step (it made this view most of the
    corpus's bytes): ``prompt_messages`` says how many of the conversation's messages precede the turn, and
    the prompt is the ``sft`` row's ``messages[:prompt_messages]`` (same record, same split;
    :func:`step_prompt` and ``train.data.step_prompts`` rebuild it)."""
    common = _common(r)
    step = 0
    for i, raw in enumerate(r["messages"]):
        if raw["role"] != "assistant":
            continue
        m = _message(raw)
        action = [{"name": c["function"]["name"], "arguments": _arguments(c)} for c in m["tool_calls"]]
        yield {
            **common,
            "step_idx": step,
            "prompt_messages": i,
            "completion": [m],
            "teacher_action": orjson.dumps(action).decode(),
        }
        step += 1


def step_prompt(step_row: dict[str, Any], sft_row: dict[str, Any]) -> list[dict[str, Any]]:
    """The prompt of a ``steps`` row, from its record's ``sft`` row (a row of the older layout keeps its own).

    Raises:
        ValueError: the rows are of different records.
    """
    if "prompt" in step_row:
        return step_row["prompt"]
    if step_row["record_id"] != sft_row["record_id"]:
        raise ValueError(
            f"steps row of {step_row['record_id']!r} paired with the sft row of {sft_row['record_id']!r}"
        )
    return sft_row["messages"][: step_row["prompt_messages"]]


def kto_rows(r: dict[str, Any]) -> Iterator[Row]:
    """Trajectory-level KTO: desirable = kept; undesirable = a structurally agentic (or recovered) trajectory
    that failed the judge bar or success. Other rejects carry no preference signal and give no row."""
    agentic = r["origin"] == "recovered" or r["structural_label"] == "agentic"
    if not agentic or r["outcome"] not in ("kept", "judge_below_bar", "not_successful"):
        return
    messages = [_message(m) for m in r["messages"]]
    first = next(i for i, m in enumerate(messages) if m["role"] == "assistant")
    yield {
        **_common(r),
        "prompt": messages[:first],
        "completion": messages[first:],
        "label": r["outcome"] == "kept",
        "granularity": "trajectory",
    }


#: ``data.select`` of the corpus contract: which rows a training run reads (``kept`` is the default).
SELECTIONS = ("kept", "kept+recovered", "kept+failed", "raw")
#: Deprecated selection names and what they mean now (``unfiltered`` was never the unfiltered firehose: the
#: trainable flags kept every unproven turn out of the loss, so it trained the kept rows plus the failures).
SELECTION_ALIASES = {"unfiltered": "kept+failed"}
#: Selections that train every assistant turn whoever emitted it (the ``trainable`` flags ignored): what a
#: consumer of raw subnet logs, who has no such flags, trains on.
EVERY_TURN_SELECTIONS = frozenset({"raw"})


def canonical_selection(select: str) -> str:
    """``select`` with a deprecated alias replaced by its current name.

    Raises:
        ValueError: not a selection (the message lists them).
    """
    select = SELECTION_ALIASES.get(select, select)
    if select not in SELECTIONS:
        known = ", ".join([*SELECTIONS, *(f"{a} (= {n}, deprecated)" for a, n in SELECTION_ALIASES.items())])
        raise ValueError(f"unknown data.select {select!r}; known: {known}")
    return select


def normalize_selection(value: object) -> object:
    """A deprecated ``data.select`` name replaced by its current one, with a warning saying so."""
    if isinstance(value, str) and value in SELECTION_ALIASES:
        new = canonical_selection(value)
        warnings.warn(
            f"data.select {value!r} is deprecated: it is {new!r} (the kept rows plus the failures, trainable "
            f"flags respected), not the raw firehose; use {new!r}, or 'raw' for every turn of every envelope",
            FutureWarning,
            stacklevel=2,
        )
        return new
    return value


def is_selected(row: dict[str, Any], select: str) -> bool:
    """``data.select`` of the corpus contract:

    - ``kept``: kept trajectories of agentic origin (the default of ``shoparena train`` and of the published
      dataset);
    - ``kept+recovered``: adds the kept recovery copies;
    - ``kept+failed`` (formerly ``unfiltered``): every row of the view, trainable flags respected, so in
      effect the kept rows plus the failures whose turns are proven model-authored;
    - ``raw``: every row that came from the firehose as it was (every origin but ``recovered``, shoparena's
      own rewrite), forged and rejected envelopes included; the trainer ignores the trainable flags
      (:data:`EVERY_TURN_SELECTIONS`).
    """
    select = canonical_selection(select)
    if select == "kept+failed":
        return True
    if select == "raw":
        return row["origin"] != "recovered"
    if select == "kept+recovered":
        return row["outcome"] == "kept"
    return row["outcome"] == "kept" and row["origin"] == "agentic"


def trainable_blocks(messages: list[dict[str, Any]]) -> Iterator[tuple[int, int]]:
    """``(start, end)`` message ranges, each a prompt-completion split a stock trainer gets right.

    A block starts at a trainable assistant turn and ends after the last trainable assistant turn before the
    next non-trainable one (or the conversation's end). With ``prompt = messages[:start]`` and ``completion =
    messages[start:end]``, TRL's loss (completion mask AND assistant mask) covers exactly the block's
    assistant turns, all trainable; a non-trainable turn is only ever context (in a later block's prompt).
    One block (the whole conversation after the request) when every assistant turn is trainable."""
    start = last = None
    for i, m in enumerate(messages):
        if m["role"] != "assistant":
            continue
        if m.get("trainable"):
            start = i if start is None else start
            last = i
        elif start is not None:
            yield start, last + 1
            start = last = None
    if start is not None:
        yield start, last + 1


def sft_kept_rows(r: dict[str, Any]) -> Iterator[Row]:
    """The published default (``sft`` config of the card): the rows ``shoparena train`` selects by default,
    in TRL's conversational prompt-completion form, one row per :func:`trainable_blocks` block, so a stock
    ``SFTTrainer(assistant_only_loss=True)`` learns from the trainable turns of kept trajectories only."""
    if not is_selected(r, "kept"):
        return
    messages = [_message(m) for m in r["messages"]]
    common = _common(r)
    # A column named "labels" is a trainer's loss targets: TRL would take the record's labels JSON for them.
    common["record_labels"] = common.pop("labels")
    # TRL json-decodes a string ``tools``: "no tools" (the compact profile names them in its system turn)
    # must be JSON too.
    common["tools"] = common["tools"] or "[]"
    for block, (start, end) in enumerate(trainable_blocks(messages)):
        yield {**common, "block_idx": block, "prompt": messages[:start], "completion": messages[start:end]}


def _value(dtype: str) -> Any:
    from datasets import Value

    return Value(dtype)


VIEWS: dict[str, ViewSpec] = {
    spec.name: spec
    for spec in (
        ViewSpec("sft", lambda message: {"messages": [message]}, sft_rows, method="sft"),
        ViewSpec(
            "steps",
            lambda message: {
                "step_idx": _value("int64"),
                "prompt_messages": _value("int64"),
                "completion": [message],
                "teacher_action": _value("string"),
            },
            step_rows,
            method="grpo",
        ),
        ViewSpec(
            "sft_kept",
            lambda message: {
                "block_idx": _value("int64"),
                "record_labels": _value("string"),
                "prompt": [message],
                "completion": [message],
            },
            sft_kept_rows,
            method="sft",
        ),
        ViewSpec(
            "kto",
            lambda message: {
                "prompt": [message],
                "completion": [message],
                "label": _value("bool"),
                "granularity": _value("string"),
            },
            kto_rows,
            method="kto",
        ),
    )
}


def view_spec(name: str) -> ViewSpec:
    """The spec of view ``name``.

    Raises:
        KeyError: no such view (the message lists the known ones).
    """
    try:
        return VIEWS[name]
    except KeyError:
        raise KeyError(f"unknown corpus view {name!r}; known: {', '.join(VIEWS)}") from None


def method_views() -> dict[str, str]:
    """Training method → the view it reads by default (the first view that names it)."""
    out: dict[str, str] = {}
    for spec in VIEWS.values():
        out.setdefault(spec.method, spec.name)
    return out


def features(view: str) -> Any:
    """The ``datasets.Features`` of ``view``: the common columns and the view's own."""
    from datasets import Features, Value

    call = {
        "id": Value("string"),
        "type": Value("string"),
        "function": {"name": Value("string"), "arguments": Value("string")},
    }
    message = {
        "role": Value("string"),
        "content": Value("string"),
        "tool_calls": [call],
        "tool_call_id": Value("string"),
        "name": Value("string"),
        "trainable": Value("bool"),
    }
    common = {name: Value("string") for name in (*COMMON, "labels", "provenance")}
    common["rollout_idx"] = Value("int64")
    own = view_spec(view).columns(message)
    if "record_labels" in own:  # the view renames the common column (sft_kept_rows)
        del common["labels"]
    return Features({**common, **own})


__all__ = [
    "COMMON",
    "EVERY_TURN_SELECTIONS",
    "SELECTIONS",
    "SELECTION_ALIASES",
    "SPLITS",
    "VIEWS",
    "ViewSpec",
    "canonical_selection",
    "features",
    "is_selected",
    "kto_rows",
    "method_views",
    "normalize_selection",
    "sft_kept_rows",
    "sft_rows",
    "step_prompt",
    "step_rows",
    "trainable_blocks",
    "view_spec",
]
