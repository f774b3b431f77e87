"""guided_choice (vLLM's structured-output knob): TransformersBackend picks the best-scored choice; the
OpenAI-compatible backend forwards the field to the server untouched."""

from __future__ import annotations

import importlib.util
import json

import pytest
from fake_openai_server import Action, FakeServer, completion

from shoparena.judge.records import SCORE_BINS
from shoparena.llm import BackendError, ChatRequest, OpenAICompatibleBackend

MISSING = [n for n in ("torch", "transformers", "tokenizers") if importlib.util.find_spec(n) is None]
needs_torch = pytest.mark.skipif(bool(MISSING), reason=f"{', '.join(MISSING)} not installed (train extra)")

MESSAGES = [
    {"role": "system", "content": "You grade shopping agents."},
    {"role": "user", "content": "The agent searched for running shoes and compared two of them."},
]
BIN_REPLIES = [json.dumps({"reasoning_quality": b, "explanation": "guided"}) for b in SCORE_BINS]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory):
    """(backend, model, tokenizer) over a tiny random Qwen3, loaded once for this module."""
    if MISSING:
        pytest.skip("torch/transformers not installed")
    from shoparena.llm.transformers_backend import TransformersBackend
    from shoparena.models.tiny import build_tiny_qwen3

    folder = build_tiny_qwen3(tmp_path_factory.mktemp("guided") / "tiny-qwen3", seed=0)
    backend = TransformersBackend(folder, device="cpu")
    model, tokenizer = backend._load()
    return backend, model, tokenizer


def _reference_logprob(model, tokenizer, messages: list[dict], choice: str) -> float:
    """Sum of log-probs of choice + EOS after the prompt, from one uncached forward pass over everything."""
    import torch

    prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    target = [*tokenizer(choice, add_special_tokens=False)["input_ids"], tokenizer.eos_token_id]
    ids = torch.tensor([prompt_ids + target])
    with torch.no_grad():
        logprobs = torch.log_softmax(model(input_ids=ids).logits[0].float(), dim=-1)
    start = len(prompt_ids)
    return sum(float(logprobs[start - 1 + i, tok]) for i, tok in enumerate(target))


@needs_torch
def test_pick_is_a_choice_and_matches_an_independent_scoring(tiny) -> None:
    backend, model, tokenizer = tiny
    choices = [*BIN_REPLIES, "no", "nothing to add here at all"]
    response = backend.complete(ChatRequest(messages=MESSAGES, extra_body={"guided_choice": choices}))
    assert response.content in choices
    reference = [_reference_logprob(model, tokenizer, MESSAGES, c) for c in choices]
    # The cached scoring equals a full uncached pass, choice by choice, so the argmax is the same.
    assert response.raw["guided_choice_logprobs"] == pytest.approx(reference, abs=1e-3)
    assert response.content == choices[max(range(len(choices)), key=lambda i: (reference[i], -i))]
    prompt = tokenizer.apply_chat_template(MESSAGES, tokenize=False, add_generation_prompt=True)
    assert response.usage.prompt_tokens == len(tokenizer(prompt, add_special_tokens=False)["input_ids"])
    assert response.usage.completion_tokens == len(
        tokenizer(response.content, add_special_tokens=False)["input_ids"]
    )
    assert response.finish_reason == "stop"


@needs_torch
def test_a_choice_made_overwhelmingly_likely_is_chosen(tiny) -> None:
    """Boost, at every position, a token only the target bin reply contains: that reply must win, each bin."""
    backend, model, tokenizer = tiny
    tokenised = [tokenizer(c, add_special_tokens=False)["input_ids"] for c in BIN_REPLIES]
    # Equal lengths, so the boost (which lowers every other token's log-prob everywhere) favours no length.
    assert len({len(ids) for ids in tokenised}) == 1
    request = ChatRequest(messages=MESSAGES, extra_body={"guided_choice": BIN_REPLIES})
    for target, ids in enumerate(tokenised):
        others = {tok for j, other in enumerate(tokenised) if j != target for tok in other}
        boost = next(tok for tok in ids if tok not in others)

        def hook(_module, _inputs, output, boost=boost):
            output[..., boost] += 100.0
            return output

        handle = model.get_output_embeddings().register_forward_hook(hook)
        try:
            response = backend.complete(request)
        finally:
            handle.remove()
        assert response.content == BIN_REPLIES[target]


@needs_torch
def test_prefix_choices_and_repeatability(tiny) -> None:
    backend, model, tokenizer = tiny
    choices = ["ship", "shipping", "ship it"]
    request = ChatRequest(messages=MESSAGES, extra_body={"guided_choice": choices})
    first = backend.complete(request)
    assert backend.complete(request).raw == first.raw  # the shared cache is restored between calls
    reference = [_reference_logprob(model, tokenizer, MESSAGES, c) for c in choices]
    assert first.raw["guided_choice_logprobs"] == pytest.approx(reference, abs=1e-3)


@needs_torch
@pytest.mark.parametrize("bad", [[], "0.1", [""], ["ok", 3]])
def test_bad_guided_choice_is_rejected_by_name(tiny, bad) -> None:
    backend, _, _ = tiny
    with pytest.raises(BackendError, match=r"extra_body\['guided_choice'\]"):
        backend.complete(ChatRequest(messages=MESSAGES, extra_body={"guided_choice": bad}))


def test_openai_backend_forwards_guided_choice(server: FakeServer) -> None:
    server.reset(Action(json=completion(BIN_REPLIES[2])))
    backend = OpenAICompatibleBackend(server.base_url, "sk-test", "judge-model", max_retries=0)
    response = backend.complete(ChatRequest(
        messages=MESSAGES, max_tokens=64,
        extra_body={"guided_choice": BIN_REPLIES, "chat_template_kwargs": {"enable_thinking": False}},
    ))
    assert response.content == BIN_REPLIES[2]
    body = server.received[0]
    assert body["guided_choice"] == BIN_REPLIES
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["model"] == "judge-model"

