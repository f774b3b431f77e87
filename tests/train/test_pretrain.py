"""Copy pretraining: prompt = a text as a user turn, completion = the same text; a short run saves a model."""

from __future__ import annotations


def test_copy_pairs_repeat_the_user_turn(tiny_path) -> None:
    from transformers import AutoTokenizer

    from shoparena.train.pretrain import copy_pairs

    tok = AutoTokenizer.from_pretrained(tiny_path)
    pairs = copy_pairs([["red shoes", "blue bag"], ["I want a lamp"]], tok, rows=20, seed=1, frame="plain")
    assert len(pairs) == 20
    for pair in pairs:
        assert pair["prompt"].endswith("<|im_start|>assistant\n")
        assert f"<|im_start|>user\n{pair['completion']}<|im_end|>" in pair["prompt"]
    assert {p["completion"] for p in pairs} == {"red shoes", "blue bag", "I want a lamp"}
    framed = copy_pairs([['say "hi"']], tok, rows=1, seed=1)
    assert framed[0]["completion"] == '{"text": "say \\"hi\\""}'  # JSON-escaped, as in tool arguments
    assert copy_pairs([["x"], ["y"]], tok, rows=5, seed=1) == copy_pairs([["x"], ["y"]], tok, rows=5, seed=1)


def test_copy_pretrain_trains_and_saves_a_loadable_folder(tiny_path, tmp_path) -> None:
    from transformers import AutoModelForCausalLM

    from shoparena.train.pretrain import copy_pretrain

    texts = [["nike running shoes breathable", "stainless water bottle"], ["running socks ankle"]]
    seen = []
    report = copy_pretrain(
        tiny_path,
        texts,
        tmp_path / "out",
        steps=6,
        batch_size=2,
        seq_len=64,
        progress=lambda *a: seen.append(a),
    )
    assert report["steps"] == 6 and report["tokens"] > 0 and 0.0 <= report["copy_accuracy"] <= 1.0
    assert seen and seen[0][0] == 1 and seen[-1][0] == 6
    assert AutoModelForCausalLM.from_pretrained(tmp_path / "out") is not None
    assert not (tmp_path / "out.tmp").exists()


def test_packed_batch_labels_only_the_replies(tiny_path) -> None:
    from transformers import AutoTokenizer

    from shoparena.train.pretrain import copy_pairs, packed_batch

    tok = AutoTokenizer.from_pretrained(tiny_path)
    pairs = copy_pairs([["red shoes"], ["blue bag"]], tok, rows=4, seed=0, frame="plain")
    ids, labels = packed_batch(pairs, tok, seq_len=1000)
    assert len(ids) == len(labels)
    labelled = tok.decode([t for t, lab in zip(ids, labels, strict=True) if lab != -100])
    assert labelled.replace("<|im_end|>\n", "|") == "|".join(p["completion"] for p in pairs) + "|"
    assert len(packed_batch(pairs, tok, seq_len=10)[0]) == 10


def test_item_pairs_list_the_handles_of_the_requests_items(tiny_path) -> None:
    import json

    from transformers import AutoTokenizer

    from shoparena.train.pretrain import item_pairs

    tok = AutoTokenizer.from_pretrained(tiny_path)
    shop = "Find one shop that sells all of these:\n- running socks ankle\n- running shoes breathable"
    pairs = item_pairs([shop, "I want a lamp"], tok, rows=12, seed=0)
    replies = {json.loads(p["completion"])["items"] for p in pairs}
    assert replies == {"U2,U3", "U1"}
    shown = next(p["prompt"] for p in pairs if "socks" in p["prompt"])
    assert "U2 | - running socks ankle" in shown and shown.endswith("<|im_start|>assistant\n")
