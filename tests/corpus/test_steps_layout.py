"""The ``steps`` view no longer repeats its prompt (issue 21): each row names how many of its record's ``sft``
messages precede it. The logical rows, and what GRPO prepares from them, equal those of the older layout."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from corpus_helpers import view_record

from sandbox_marks import needs_bwrap
from shoparena.corpus.export import export_views, rendered_record
from shoparena.corpus.views import _arguments, _common, _message, sft_rows, step_prompt, step_rows
from shoparena.train.config import ConfigError, DataSection
from shoparena.train.data import DataReport, prepare_grpo_offline, prepare_grpo_online, step_prompts


def _older_step_rows(r: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The steps rows as they were written before (the prompt repeated in every row)."""
    common = _common(r)
    messages = [_message(m) for m in r["messages"]]
    step = 0
    for i, m in enumerate(messages):
        if m["role"] != "assistant":
            continue
        action = [{"name": c["function"]["name"], "arguments": _arguments(c)} for c in m["tool_calls"]]
        yield {
            **common,
            "step_idx": step,
            "prompt": messages[:i],
            "completion": [m],
            "teacher_action": orjson.dumps(action).decode(),
        }
        step += 1


def _logical(row: dict[str, Any], sft: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in row.items() if k != "prompt_messages"}
    out["prompt"] = step_prompt(row, sft)
    return out


@pytest.mark.parametrize("profile", ["upstream", "compact"])
def test_rows_with_their_prompt_rebuilt_equal_the_older_rows(profile: str) -> None:
    checked = 0
    for i in range(12):
        record = view_record(i, i % 6)
        if profile != "upstream":
            record = rendered_record(record, profile)
        (sft,) = sft_rows(record)
        new = [_logical(row, sft) for row in step_rows(record)]
        assert new == list(_older_step_rows(record))
        checked += len(new)
    assert checked == 12 + sum(i % 6 for i in range(12))


def test_a_row_paired_with_another_records_conversation_is_refused() -> None:
    (sft,) = sft_rows(view_record(1, 2))
    row = next(step_rows(view_record(2, 2)))
    with pytest.raises(ValueError, match="r:p2:0"):
        step_prompt(row, sft)


class _TextTokenizer:
    """Renders a chat as JSON text: enough to compare what GRPO preparation builds from two layouts."""

    def apply_chat_template(
        self, messages, *, tools=None, chat_template=None, tokenize, add_generation_prompt
    ):
        return json.dumps([messages, tools, add_generation_prompt], sort_keys=True)


def _older_layout(records: list[dict[str, Any]], split: str) -> Any:
    import datasets

    rows = [row for r in records if r["split"] == split for row in _older_step_rows(r)]
    return datasets.Dataset.from_list(rows)


def _check_grpo_preparation(corpus: Path, records: list[dict[str, Any]]) -> int:
    import datasets

    steps = datasets.load_from_disk(str(corpus / "views" / "steps"))
    prepared = 0
    for split in ("train", "eval"):
        rows = steps[split]
        if len(rows) == 0:
            continue
        data = DataSection(corpus=str(corpus), split=split)
        older = _older_layout(records, split)
        assert step_prompts(data, older) is None  # rows with their own prompt keep it
        new = prepare_grpo_offline(
            rows, _TextTokenizer(), DataReport("steps", split, "x"), prompts=step_prompts(data, rows)
        )
        old = prepare_grpo_offline(older, _TextTokenizer(), DataReport("steps", split, "x"))
        assert new.to_list() == old.to_list()
        online = prepare_grpo_online(rows, DataReport("steps", split, "x"), prompts=step_prompts(data, rows))
        assert online.to_list() == prepare_grpo_online(older, DataReport("steps", split, "x")).to_list()
        prepared += len(new)
    return prepared


def test_grpo_rows_from_the_new_layout_equal_those_of_the_older(tmp_path: Path) -> None:
    records = [view_record(i, i % 6) for i in range(12)]
    for k, r in enumerate(records):
        r["split"] = "eval" if k % 4 == 0 else "train"
    export_views(lambda: records, tmp_path / "views")
    assert _check_grpo_preparation(tmp_path, records) == 12 + sum(i % 6 for i in range(12))


def test_a_steps_row_without_its_conversation_is_a_config_error(tmp_path: Path) -> None:
    import datasets

    export_views(lambda: [view_record(i, 2) for i in range(3)], tmp_path / "views")
    rows = datasets.load_from_disk(str(tmp_path / "views" / "steps"))["train"]
    sft = tmp_path / "views" / "sft" / "train"
    datasets.load_from_disk(str(sft)).select([0, 2]).save_to_disk(str(tmp_path / "two"))
    shutil.rmtree(sft)
    shutil.copytree(tmp_path / "two", sft)  # the sft view without record r:p1:0
    with pytest.raises(ConfigError, match=r"record 'r:p1:0' has no conversation in view 'sft'"):
        list(step_prompts(DataSection(corpus=str(tmp_path), split="train"), rows))


@needs_bwrap
def test_a_real_corpus_steps_view_rebuilds_the_older_rows(corpus_dir: Path) -> None:
    records = [json.loads(line) for line in (corpus_dir / "records.jsonl").read_text().splitlines()]
    assert _check_grpo_preparation(corpus_dir, records) > 0


def test_preparing_rows_without_prompts_and_no_prompts_given_says_so(tmp_path: Path) -> None:
    import datasets

    export_views(lambda: [view_record(1, 2)], tmp_path / "views")
    rows = datasets.load_from_disk(str(tmp_path / "views" / "steps"))["train"]
    with pytest.raises(ValueError, match="pass prompts=step_prompts"):
        prepare_grpo_offline(rows, _TextTokenizer(), DataReport("steps", "train", "x"))
    with pytest.raises(ValueError, match="pass prompts=step_prompts"):
        prepare_grpo_online(rows, DataReport("steps", "train", "x"))
