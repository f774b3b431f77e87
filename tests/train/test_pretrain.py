"""Copy pretraining: prompt = a text as a user turn, completion = the same text; a short run saves a model."""

from __future__ import annotations


def test_copy_pairs_repeat_the_user_turn(tiny_path) -> None:
    from transformers import AutoTokenizer

    from shoparena.train.pretrain import copy_pairs

    tok = AutoTokenizer.from_pretrained(tiny_path)
    pairs = copy_pairs([["red shoes", "blue bag"], ["I want a lamp"]], tok, rows=20, seed=1)
    assert len(pairs) == 20
    for pair in pairs:
        assert pair["prompt"].endswith("<|im_start|>assistant\n")
        assert f"<|im_start|>user\n{pair['completion']}<|im_end|>" in pair["prompt"]
    assert {p["completion"] for p in pairs} == {"red shoes", "blue bag", "I want a lamp"}
    assert copy_pairs([["x"], ["y"]], tok, rows=5, seed=1) == copy_pairs([["x"], ["y"]], tok, rows=5, seed=1)


def test_copy_pretrain_trains_and_saves_a_loadable_folder(tiny_path, tmp_path) -> None:
    from transformers import AutoModelForCausalLM

    from shoparena.train.pretrain import copy_pretrain

    texts = [["nike running shoes breathable", "stainless water bottle"], ["running socks ankle"]]
    report = copy_pretrain(tiny_path, texts, tmp_path / "out", steps=6, batch_size=4, progress=False)
    assert report["steps"] == 6 and report["tokens"] > 0
    assert AutoModelForCausalLM.from_pretrained(tmp_path / "out") is not None
    assert not (tmp_path / "out.tmp").exists()
