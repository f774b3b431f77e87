"""The batched generator decodes exactly what ``model.generate`` decodes (greedy), one prompt at a time and
in one batch, while prefilling a shared prompt prefix only once."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")


def test_batched_greedy_matches_generate_and_reuses_the_prefix(tmp_path) -> None:
    from shoparena.eval.batching import BatchedGenerator, GenerationJob, load_model
    from shoparena.models.tiny import build_tiny_qwen3

    model, tokenizer = load_model(build_tiny_qwen3(tmp_path / "tiny"))
    base = tokenizer("find me cheap red running shoes with free shipping and compare them")["input_ids"] * 6
    prompts = [[*base, 5, 6, 7], [*base, 8], [*base, *range(500, 530)], [*base[:40], 11, 12, 13]]

    def reference(prompt: list[int]) -> list[int]:
        ids = torch.tensor([prompt])
        out = model.generate(
            input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=10, do_sample=False
        )
        return out[0, len(prompt) :].tolist()

    expected = [reference(p) for p in prompts]
    generator = BatchedGenerator(model, tokenizer, max_batch=8, min_prefix=16)
    try:
        one_by_one = [generator.submit(GenerationJob(p, 10)).result(timeout=60)[0] for p in prompts]
        futures = [generator.submit(GenerationJob(p, 10)) for p in prompts]
        together = [f.result(timeout=60)[0] for f in futures]
    finally:
        generator.close()
    assert one_by_one == expected and together == expected
    stats = generator.stats
    assert stats.max_batch_seen >= 2 and stats.prefix_hits >= 3
    assert stats.prefilled_tokens < 0.75 * stats.prompt_tokens  # shared prefixes were prefilled once


def test_backend_runs_with_its_intra_op_threads_and_restores_them_on_close(tmp_path) -> None:
    # One intra-op thread is what keeps decoding fast on a shared CPU (see shoparena.eval.batching).
    from shoparena.eval.batching import BatchedTransformersBackend
    from shoparena.llm.types import ChatRequest
    from shoparena.models.tiny import build_tiny_qwen3

    before = torch.get_num_threads()
    wanted = 1 if before != 1 else 2
    backend = BatchedTransformersBackend(build_tiny_qwen3(tmp_path / "tiny"), threads=wanted)
    try:
        assert torch.get_num_threads() == wanted
        reply = backend.complete(ChatRequest(messages=[{"role": "user", "content": "hi"}], max_tokens=4))
        assert reply.usage.completion_tokens >= 1
    finally:
        backend.close()
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="threads"):
        BatchedTransformersBackend(tmp_path / "tiny", threads=0)


def test_a_request_being_rendered_joins_the_running_gather() -> None:
    # Static batching admits nobody once a batch runs: a prompt still being rendered is waited for.
    import threading
    import time

    from shoparena.eval.batching import GenerationJob, QueuedGenerator

    class Recorder(QueuedGenerator):
        def __init__(self, arrival_s: float) -> None:
            super().__init__(max_batch=8, gather_s=0.01, name="recorder", arrival_s=arrival_s)
            self.sizes: list[int] = []
            self._thread.start()

        def _generate(self, batch):
            self.sizes.append(len(batch))
            return [([1], "x") for _ in batch]

    for arrival_s, expected in ((1.0, [2]), (0.0, [1, 1])):
        generator = Recorder(arrival_s)
        late: list = []

        def render_then_submit(generator=generator, late=late) -> None:
            with generator.arriving():
                time.sleep(0.2)  # rendering a long prompt
                late.append(generator.submit(GenerationJob([2], 1)))

        with generator.arriving():
            thread = threading.Thread(target=render_then_submit)
            thread.start()
            time.sleep(0.05)
            first = generator.submit(GenerationJob([1], 1))
        thread.join()
        assert first.result(timeout=5) == ([1], "x") and late[0].result(timeout=5) == ([1], "x")
        generator.close()
        assert generator.sizes == expected
