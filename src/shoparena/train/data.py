"""Corpus views → training rows: selection (``data.select``), the data hash, and per-method preparation.

Reads ``CORPUS/views/<view>/`` (``DatasetDict.save_to_disk``) or, failing that,
``views/<view>-<split>.parquet``
(corpus contract). Every selected row ends up used or dropped with a reason; :class:`DataReport` carries the
counts that the run's manifest records.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from shoparena.corpus.layout import CorpusRun
from shoparena.corpus.views import EVERY_TURN_SELECTIONS, is_selected, step_prompt
from shoparena.formats.profiles import DEFAULT_PROFILE
from shoparena.runs.files import RunFileError
from shoparena.train.config import ConfigError, DataSection, TrainConfig

_MESSAGE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")


@dataclass
class DataReport:
    """Counts of what happened to the rows of the view (they add up: ``rows = selected + not_selected``).

    ``skipped`` (``raw`` only): envelopes of the firehose that never became a row of any view, by reason
    (:meth:`CorpusRun.unrendered_envelopes`), so ``selected`` over both splits + ``skipped`` = the firehose's
    envelopes. ``derived``: settings computed from the data at train time (KTO's class weights)."""

    view: str
    split: str
    select: str
    rows: int = 0
    selected: int = 0
    not_selected: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    used: int = 0
    repeated: int = 0
    data_hash: str = ""
    skipped: dict[str, int] = field(default_factory=dict)
    derived: dict[str, Any] = field(default_factory=dict)
    #: SFT rows cut to ``max_length`` (trained on their first tokens only; ``data.overlong: drop`` leaves
    #: them out instead, counted in ``dropped['too_long']``).
    truncated: int = 0
    max_length: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def describe(self) -> str:
        """One line on what became of the view's rows: used, truncated, dropped, not selected."""
        parts = [f"data: {self.used} of {self.rows} {self.view}/{self.split} rows used"]
        if self.truncated:
            parts.append(
                f"{self.truncated} truncated to max_length {self.max_length} tokens (their tokens past it "
                "are not trained; raise trainer.max_length or set data.overlong: drop)"
            )
        dropped = {reason: n for reason, n in self.dropped.items() if n}
        if dropped:
            parts.append("dropped " + ", ".join(f"{n} {reason}" for reason, n in sorted(dropped.items())))
        not_selected = sum(self.not_selected.values())
        if not_selected:
            parts.append(f"{not_selected} not selected by data.select {self.select}")
        return "; ".join(parts)


def load_view(data: DataSection, view: str) -> Any:
    """The ``datasets.Dataset`` of ``view``/``split`` in the corpus directory."""
    import datasets

    if not data.corpus:
        raise ConfigError(
            "data.corpus: no corpus directory given (set it in the config or --set data.corpus=DIR)"
        )
    corpus = CorpusRun.at(data.corpus)
    root = corpus.path
    saved = corpus.view_dataset_dir(view)
    parquet = corpus.view_file(view, data.split, "parquet")
    if saved.is_dir():
        # One split only: datasets cannot load a split saved with no rows (IndexError), so an empty eval
        # split would make the train split unloadable too.
        splits = sorted(p.name for p in saved.iterdir() if (p / "dataset_info.json").is_file())
        if data.split not in splits:
            raise ConfigError(f"{saved}: no split {data.split!r} (has {', '.join(splits)})")
        try:
            return datasets.load_from_disk(str(saved / data.split))
        except IndexError:
            raise ConfigError(f"{saved}: view {view!r} split {data.split!r} is empty (0 rows)") from None
        except (ValueError, OSError, TypeError, KeyError) as exc:
            # A truncated .arrow file (pyarrow's ArrowInvalid is a ValueError), a torn dataset_info.json
            # or state.json (JSONDecodeError): one line naming the split, never a traceback.
            reason = " ".join(str(exc).split())[:200] or type(exc).__name__
            raise ConfigError(
                f"{saved / data.split}: view {view!r} split {data.split!r} is damaged "
                f"({type(exc).__name__}: {reason}); rebuild the corpus views"
            ) from None
    if parquet.is_file():
        try:
            return datasets.Dataset.from_parquet(str(parquet))
        except ValueError as exc:  # datasets reads a file with no row groups as "no data"
            raise ConfigError(f"{parquet}: empty or unreadable ({exc})") from None
    if not root.is_dir():
        raise ConfigError(f"data.corpus: {root} does not exist (a `shoparena corpus build` directory)")
    raise ConfigError(f"data.corpus: {root} has no view {view!r} ({saved} or {parquet})")


def select_rows(cfg: TrainConfig) -> tuple[Any, DataReport]:
    """Load the configured view and keep the selected rows in record-id order (``data.max_rows`` applied
    last: the first N, or a seeded uniform sample of N with ``data.sample_seed``)."""
    dataset = load_view(cfg.data, cfg.view)
    report = DataReport(view=cfg.view, split=cfg.data.split, select=cfg.data.select, rows=len(dataset))
    if len(dataset) == 0:  # nothing to train on: say so here, not as an IndexError inside the trainer
        raise ConfigError(f"{cfg.data.corpus}: view {cfg.view!r} split {cfg.data.split!r} is empty (0 rows)")
    for column in ("outcome", "origin", "record_id"):
        if column not in dataset.column_names:
            raise ConfigError(
                f"{cfg.data.corpus}: view {cfg.view!r} has no column {column!r} (corpus contract)"
            )
    keep = [is_selected(r, cfg.data.select) for r in dataset.select_columns(["outcome", "origin"])]
    reasons = Counter(
        f"{o}/{g}" for o, g, k in zip(dataset["outcome"], dataset["origin"], keep, strict=True) if not k
    )
    report.not_selected = dict(reasons)
    # Rows in record-id order, whatever order the view lists them in: a view follows the firehose's finishing
    # order (sandboxes finish in a load-dependent order), and SFT's seeded shuffle of another order is another
    # run (docs/fidelity.md: two clean-clone `make run`s, same rows, 16 vs 14/48).
    ids = dataset["record_id"]
    selected = dataset.select(sorted((i for i, k in enumerate(keep) if k), key=lambda i: ids[i]))
    if len(selected) == 0:
        raise ConfigError(
            f"{cfg.data.corpus}: data.select {cfg.data.select!r} keeps 0 of the {len(dataset)} rows of view "
            f"{cfg.view!r} split {cfg.data.split!r} (not selected: {dict(reasons)})"
        )
    if cfg.data.max_rows is not None and len(selected) > cfg.data.max_rows:
        report.dropped["max_rows"] = len(selected) - cfg.data.max_rows
        picked = range(cfg.data.max_rows)
        if cfg.data.sample_seed is not None:  # an equal-budget arm: a fair sample, not the file's head
            rng = random.Random(cfg.data.sample_seed)
            picked = sorted(rng.sample(range(len(selected)), cfg.data.max_rows))
        selected = selected.select(picked)
    report.selected = sum(keep)
    if cfg.data.select in EVERY_TURN_SELECTIONS:  # what a naive consumer could not read at all, counted
        try:
            report.skipped = CorpusRun.at(cfg.data.corpus or "").unrendered_envelopes()
        except RunFileError as exc:
            raise ConfigError(str(exc)) from None
    report.data_hash = hashlib.sha256(
        json.dumps(
            {"view": cfg.view, "ids": list(selected["record_id"]), "fp": dataset._fingerprint}
        ).encode()
    ).hexdigest()[:16]
    return selected, report


def corpus_render_profile(cfg: TrainConfig) -> str:
    """The render profile the corpus views were built with (its report; ``upstream`` for older corpora).

    Raises:
        ConfigError: ``data.render_profile`` names another profile.
    """
    corpus = CorpusRun.at(cfg.data.corpus or "")
    try:
        profile = corpus.render_profile(DEFAULT_PROFILE)
    except RunFileError as exc:
        raise ConfigError(f"{corpus.report_path}: unreadable corpus report ({exc})") from None
    wanted = cfg.data.render_profile
    if wanted is not None and wanted != profile:
        raise ConfigError(
            f"data.render_profile: the corpus {cfg.data.corpus} was rendered under {profile!r}, "
            f"not {wanted!r}"
        )
    return profile


def clean_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Contract messages → chat-template messages (Arrow's null padding removed, ``trainable`` kept aside)."""
    out = []
    for message in messages:
        clean = {k: message[k] for k in _MESSAGE_KEYS if message.get(k) is not None}
        clean.setdefault("content", "")
        if not clean.get("tool_calls"):
            clean.pop("tool_calls", None)
        out.append(clean)
    return out


def parse_tools(tools: Any) -> list[dict[str, Any]] | None:
    """The ``tools`` column (a JSON string of OpenAI function schemas) as a list, None when empty."""
    if tools is None or tools == "":
        return None
    parsed = json.loads(tools) if isinstance(tools, str) else tools
    return list(parsed) or None


def trainable_flags(messages: list[dict[str, Any]]) -> list[bool]:
    """One flag per assistant message: its ``trainable`` field (assistant turns default to trainable)."""
    return [m.get("trainable") is not False for m in messages if m.get("role") == "assistant"]


def render_sft_record(
    tokenizer: Any,
    messages: list[dict[str, Any]],
    tools: Any,
    *,
    chat_template: str | None = None,
    every_turn: bool = False,
) -> dict[str, list[int]]:
    """Tokenise one conversation with its tools; ``assistant_masks`` is 1 exactly on the tokens of trainable
    assistant turns (the template's ``{% generation %}`` spans, one per assistant message, in order), or
    with ``every_turn`` (the ``raw`` selection) on every assistant turn, whatever its ``trainable`` flag.

    Raises:
        ValueError: the template's assistant spans do not match the assistant messages one to one.
    """
    rendered = tokenizer.apply_chat_template(
        clean_messages(messages),
        tools=parse_tools(tools),
        chat_template=chat_template,
        tokenize=True,
        return_dict=True,
        return_assistant_tokens_mask=True,
    )
    ids = list(rendered["input_ids"])
    mask = list(rendered["assistant_masks"])
    spans: list[tuple[int, int]] = []
    for i, bit in enumerate(mask):
        if bit and (i == 0 or not mask[i - 1]):
            spans.append((i, i + 1))
        elif bit:
            spans[-1] = (spans[-1][0], i + 1)
    flags = trainable_flags(messages)
    if every_turn:
        flags = [True] * len(flags)
    if len(spans) != len(flags):
        raise ValueError(
            f"chat template marks {len(spans)} assistant spans for {len(flags)} assistant messages"
        )
    for (start, end), trainable in zip(spans, flags, strict=True):
        if not trainable:
            mask[start:end] = [0] * (end - start)
    check_template_drift(tokenizer, messages, tools, ids, mask, chat_template=chat_template)
    return {"input_ids": ids, "assistant_masks": mask}


class TemplateDriftError(ValueError):
    """A conversation whose rendering at some assistant turn is not what the policy would be prompted with."""


def check_template_drift(
    tokenizer: Any,
    messages: list[dict[str, Any]],
    tools: Any,
    ids: list[int],
    mask: list[int],
    *,
    chat_template: str | None = None,
) -> None:
    """The chat-template drift guard, for one rendered conversation (``ids``, loss ``mask``).

    For every assistant turn, the token ids of the prompt the policy gets at that turn (the messages before
    it, with the generation prompt) must be a prefix of the whole conversation's ids, and so must the ids of
    the conversation through that turn; and the mask may only cover tokens between the two (the turn itself),
    so it never covers a system, user or tool token. A template that re-renders earlier turns differently once
    later turns exist (dropped reasoning, moved tool blocks) teaches the student a text it never sees.

    Raises:
        TemplateDriftError: naming the assistant turn and what broke.
    """
    clean = clean_messages(messages)
    turns = [i for i, m in enumerate(clean) if m["role"] == "assistant"]
    texts: list[str] = []
    for i in turns:
        for head, gen in ((clean[:i], True), (clean[: i + 1], False)):
            texts.append(
                tokenizer.apply_chat_template(
                    head,
                    tools=parse_tools(tools),
                    chat_template=chat_template,
                    tokenize=False,
                    add_generation_prompt=gen,
                )
            )
    encoded = tokenizer(texts, add_special_tokens=False)["input_ids"] if texts else []
    allowed = [0] * len(ids)
    for k, i in enumerate(turns):
        prompt, through = encoded[2 * k], encoded[2 * k + 1]
        for what, part in (("prompt", prompt), ("conversation through it", through)):
            if list(part) != ids[: len(part)]:
                raise TemplateDriftError(
                    f"assistant turn {k + 1} (message {i}): the {what} does not render as a prefix of the "
                    "whole conversation (chat template drift)"
                )
        allowed[len(prompt) : len(through)] = [1] * (len(through) - len(prompt))
    stray = [j for j, (m, a) in enumerate(zip(mask, allowed, strict=True)) if m and not a]
    if stray:
        raise TemplateDriftError(
            f"the loss mask covers {len(stray)} token(s) outside the assistant turns (first at token "
            f"{stray[0]}): a system, user or tool token would be trained"
        )


def sft_messages(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The conversation of an SFT row: ``messages``, or a prompt-completion row's (``sft_kept`` view)
    prompt + completion with the prompt's turns never trained (they are context: an earlier block trained
    them or they were not the model's)."""
    if "messages" in row:
        return row["messages"]
    return [*({**m, "trainable": False} for m in row["prompt"]), *row["completion"]]


def prepare_sft(
    dataset: Any,
    tokenizer: Any,
    report: DataReport,
    *,
    max_length: int | None,
    template=None,
    overlong: str = "truncate",
    repeat: dict[str, int] | None = None,
    every_turn: bool = False,
):
    """Pre-tokenised SFT rows (``input_ids``, ``assistant_masks``), each through the drift guard
    (:func:`check_template_drift`); rows over ``max_length`` are truncated, or with ``overlong="drop"`` left
    out (``dropped['too_long']``); rows with no trainable token left are dropped
    (``dropped['no_trainable_tokens']``). ``repeat`` (``data.repeat``): a kept row of a named category
    appears that many times (``used`` counts distinct rows, ``repeated`` the rows trained per epoch).
    ``every_turn`` (the ``raw`` selection): every assistant turn is trained, ``trainable`` flags ignored."""
    import datasets

    rows = []
    report.max_length = max_length
    for row in dataset:
        try:
            enc = render_sft_record(
                tokenizer, sft_messages(row), row.get("tools"), chat_template=template, every_turn=every_turn
            )
        except (ValueError, TypeError) as exc:  # bad tools JSON, a template error, mismatched spans, drift
            where = f"{report.view} view, record {row.get('record_id')!r}"
            raise ConfigError(f"{where}: messages/tools: {exc}") from exc
        if max_length is not None and len(enc["input_ids"]) > max_length and overlong == "drop":
            report.dropped["too_long"] = report.dropped.get("too_long", 0) + 1
            continue
        if max_length is not None and len(enc["input_ids"]) > max_length:
            report.truncated += 1
            enc = {k: v[:max_length] for k, v in enc.items()}
        if not any(enc["assistant_masks"]):
            report.dropped["no_trainable_tokens"] = report.dropped.get("no_trainable_tokens", 0) + 1
            continue
        rows += [enc] * (repeat or {}).get(str(row.get("category")), 1)
        report.used += 1
    report.repeated = len(rows)
    if not rows:
        raise ConfigError(
            f"data: no SFT row keeps a trainable token (dropped: {report.dropped}); "
            "raise sft.max_length or check the selection"
        )
    return datasets.Dataset.from_list(rows)


def _has_think(message: dict[str, Any]) -> bool:
    return "<think>" in (message.get("content") or "") or bool(message.get("reasoning_content"))


def step_prompts(data: DataSection, rows: Any) -> Iterator[list[dict[str, Any]]] | None:
    """The prompt of each ``steps`` row, in row order: its record's ``sft`` conversation (same corpus and
    split) cut at the row's ``prompt_messages``, decoded once per record. None when the rows carry their own
    ``prompt`` column (corpora built before the steps view stopped repeating it).

    Raises:
        ConfigError: (when iterated) a row's record has no row in the ``sft`` view.
    """
    if "prompt" in rows.column_names:
        return None
    sft = load_view(data, "sft")
    where = {record_id: i for i, record_id in enumerate(sft["record_id"])}

    def prompts() -> Iterator[list[dict[str, Any]]]:
        current, conversation = None, {}
        for record_id, n in zip(rows["record_id"], rows["prompt_messages"], strict=True):
            if record_id != current:
                if record_id not in where:
                    raise ConfigError(
                        f"{data.corpus}: steps row of record {record_id!r} has no conversation in view 'sft' "
                        f"split {data.split!r} (corpus contract)"
                    )
                current, conversation = record_id, sft[where[record_id]]
            yield step_prompt({"record_id": record_id, "prompt_messages": n}, conversation)

    return prompts()


def _given_prompts(dataset: Any, prompts: Iterable[list[dict[str, Any]]] | None) -> Iterator[Any] | None:
    if prompts is None and "prompt" not in dataset.column_names:
        raise ValueError("steps rows without a prompt column: pass prompts=step_prompts(data, rows)")
    return None if prompts is None else iter(prompts)


def prepare_grpo_offline(
    dataset: Any,
    tokenizer: Any,
    report: DataReport,
    *,
    template=None,
    max_prompt_tokens: int | None = None,
    prompts: Iterable[list[dict[str, Any]]] | None = None,
):
    """Per-step prompts rendered to text with their tools (ShoppingBench offline mode), plus the teacher's
    action for the reward. ``prompts`` (:func:`step_prompts`): the rows' prompts, when the rows hold none.

    Prompts longer than ``max_prompt_tokens`` are dropped (``dropped['prompt_too_long']``): a late step of a
    long trajectory can exceed the model's context, where its positions mean nothing and the generation and
    backward pass cost the most (one 37 k-token step took 350 s of a 2-step tiny run).
    """
    import datasets

    rows = []
    given = _given_prompts(dataset, prompts)
    for row in dataset:
        prompt = tokenizer.apply_chat_template(
            clean_messages(row["prompt"] if given is None else next(given)),
            tools=parse_tools(row.get("tools")),
            chat_template=template,
            tokenize=False,
            add_generation_prompt=True,
        )
        if max_prompt_tokens is not None:
            length = len(tokenizer(prompt, add_special_tokens=False)["input_ids"])
            if length > max_prompt_tokens:
                report.dropped["prompt_too_long"] = report.dropped.get("prompt_too_long", 0) + 1
                continue
        teacher = row["completion"][0] if row["completion"] else {}
        rows.append(
            {"prompt": prompt, "teacher_action": row["teacher_action"], "teacher_thinks": _has_think(teacher)}
        )
    report.used = len(rows)
    if not rows:
        raise ConfigError(
            f"data: every GRPO step prompt is longer than {max_prompt_tokens} tokens "
            f"(dropped: {report.dropped}); raise grpo.max_prompt_tokens"
        )
    return datasets.Dataset.from_list(rows)


def prepare_grpo_online(
    dataset: Any, report: DataReport, *, prompts: Iterable[list[dict[str, Any]]] | None = None
):
    """One row per trajectory: its opening state (system + user) and the teacher's whole action list.
    ``prompts`` (:func:`step_prompts`): the rows' prompts, when the rows hold none."""
    import datasets

    actions: dict[str, dict[int, Any]] = {}
    openings: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
    given = _given_prompts(dataset, prompts)
    for row in dataset:
        actions.setdefault(row["record_id"], {})[row["step_idx"]] = json.loads(row["teacher_action"])
        opening = row["prompt"] if given is None else next(given)
        if row["step_idx"] == 0:
            openings[row["record_id"]] = (row, opening)
    rows = []
    for record_id, (row, opening) in openings.items():
        steps = actions[record_id]
        prompt = [m for m in clean_messages(opening) if m["role"] in ("system", "user")]
        rows.append(
            {
                "prompt": prompt,
                "problem_id": row["problem_id"],
                "teacher_actions": json.dumps([steps[i] for i in sorted(steps)]),
            }
        )
    report.dropped["not_step_0"] = len(dataset) - len(rows)
    report.used = len(rows)
    return datasets.Dataset.from_list(rows)


def prepare_kto(dataset: Any, report: DataReport, *, granularity: str):
    """KTO rows of one label granularity: prompt, completion, label, tools.

    ``trajectory``: the view's trajectory rows (completion = every turn after the first user message).
    ``step``: the view's step rows; when it has none, each trajectory row is split at its assistant turns
    (prompt = everything before the turn, completion = the turn, the trajectory's label on every step).
    """
    import datasets

    rows = []
    matching = [r for r in dataset if r["granularity"] == granularity]
    report.dropped["other_granularity"] = len(dataset) - len(matching)
    if not matching and granularity == "step":
        report.dropped["other_granularity"] = 0
        for row in dataset:
            if row["granularity"] != "trajectory":
                continue
            prompt, completion = clean_messages(row["prompt"]), clean_messages(row["completion"])
            for k, message in enumerate(completion):
                if message["role"] == "assistant":
                    rows.append(
                        {
                            "prompt": prompt + completion[:k],
                            "completion": [message],
                            "label": bool(row["label"]),
                            "tools": row.get("tools") or "[]",
                        }
                    )
    else:
        rows = [
            {
                "prompt": clean_messages(r["prompt"]),
                "completion": clean_messages(r["completion"]),
                "label": bool(r["label"]),
                "tools": r.get("tools") or "[]",
            }
            for r in matching
        ]
    report.used = len(rows)
    if not rows:
        raise ConfigError(f"data: no KTO rows of granularity {granularity!r} after selection")
    return datasets.Dataset.from_list(rows)


#: The ratio ``desirable_weight * n_desirable / (undesirable_weight * n_undesirable)`` KTO's weights aim at:
#: the middle of the range TRL's ``KTOConfig`` recommends, [1, 4/3] (Eq. 8 of the KTO paper), so TRL's own
#: check (bounds rounded to 2 decimals, 1.33 for 4/3) never sits on an edge.
KTO_TARGET_RATIO = 7 / 6
KTO_RECOMMENDED = (1.0, 4 / 3)


def kto_class_weights(n_desirable: int, n_undesirable: int) -> tuple[float, float]:
    """``(desirable_weight, undesirable_weight)`` for a KTO dataset of this balance: the majority class is
    weighed down (the minority keeps 1), so no loss is scaled up and the step size of the SFT recipe holds,
    and the weighted ratio is :data:`KTO_TARGET_RATIO`. ``(1, 1)`` when a class is empty (nothing to balance).
    """
    if n_desirable <= 0 or n_undesirable <= 0:
        return 1.0, 1.0
    if n_desirable <= n_undesirable:
        return 1.0, n_desirable / (KTO_TARGET_RATIO * n_undesirable)
    return KTO_TARGET_RATIO * n_undesirable / n_desirable, 1.0


def kto_balance(labels: list[bool], args: Any, given: dict[str, Any], report: DataReport) -> dict[str, Any]:
    """Set ``args``'s KTO class weights from the rows' balance unless the config gives either weight
    (``given``: the ``kto`` section), and record what was used in ``report.derived['kto']`` (the run summary).
    """
    n_desirable = sum(1 for label in labels if label)
    n_undesirable = len(labels) - n_desirable
    if "desirable_weight" in given or "undesirable_weight" in given:
        source = "config"
    else:
        source = "balance" if n_desirable and n_undesirable else "default (one label only)"
        args.desirable_weight, args.undesirable_weight = kto_class_weights(n_desirable, n_undesirable)
    dw, uw = float(args.desirable_weight), float(args.undesirable_weight)
    ratio = dw * n_desirable / (uw * n_undesirable) if n_undesirable and uw else None
    low, high = KTO_RECOMMENDED
    report.derived["kto"] = {
        "desirable": n_desirable,
        "undesirable": n_undesirable,
        "desirable_weight": round(dw, 6),
        "undesirable_weight": round(uw, 6),
        "weighted_ratio": None if ratio is None else round(ratio, 4),
        "in_trl_range": ratio is not None and low <= ratio <= high,
        "source": source,
    }
    return report.derived["kto"]
