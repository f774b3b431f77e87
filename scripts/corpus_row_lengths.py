"""Token lengths of a corpus's published ``sft`` rows under each render profile (docs/corpus.md, max_length).

    python scripts/corpus_row_lengths.py CORPUS_DIR

Each kept record is rendered under the profile, cut into ``sft_kept`` rows, given to the tiny Qwen3
tokenizer's chat template with its tools, and counted.
"""

import json
import sys
from pathlib import Path

from shoparena.corpus.export import rendered_record
from shoparena.corpus.views import sft_kept_rows
from shoparena.models.tiny import train_tiny_tokenizer
from shoparena.train.data import clean_messages, parse_tools, sft_messages


def main(corpus: Path) -> None:
    tokenizer = train_tiny_tokenizer()
    text = (corpus / "records.jsonl").read_text(encoding="utf-8")
    records = [json.loads(line) for line in text.split("\n") if line.strip()]  # U+0085 may sit in text
    for profile in ("compact", "upstream"):
        lengths, chars = [], []
        for record in records:
            if record["split"] not in ("train", "eval"):
                continue
            if not any(m["role"] == "assistant" for m in record["messages"]):
                continue
            rendered = record if profile == "upstream" else rendered_record(record, profile)
            for row in sft_kept_rows(rendered):
                chat = tokenizer.apply_chat_template(
                    clean_messages(sft_messages(row)), tools=parse_tools(row["tools"]), tokenize=False
                )
                chars.append(len(chat))
                lengths.append(len(tokenizer(chat, add_special_tokens=False)["input_ids"]))
        lengths.sort()
        if not lengths:
            print(profile, "no kept rows")
            continue

        def q(p: float) -> int:
            return lengths[min(len(lengths) - 1, int(p * len(lengths)))]

        print(f"{profile}: {len(lengths)} rows, tokens p50 {q(0.5)} p95 {q(0.95)} max {lengths[-1]}, "
              f"characters max {max(chars)}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
