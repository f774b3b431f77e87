"""The prefix cache changes what is computed, never what is generated: greedy episodes of the tiny Qwen3 are
the same with and without it (one episode at a time and batched), while far fewer prompt tokens are
computed; a turn whose prompt rewrites an earlier one is a counted miss and still decodes the same."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """The tiny Qwen3 with its weights drawn again at std 0.1: at the fixture's own std 0.02 its greedy text
    is only newlines (an empty step, so every episode ends at its first turn); at 0.1 the text varies, the
    episodes run to their step cap, and every turn's prompt extends the previous one."""
    from transformers import AutoModelForCausalLM

    from shoparena.models.tiny import build_tiny_qwen3

    folder = build_tiny_qwen3(tmp_path_factory.mktemp("tiny") / "tiny-qwen3")
    model = AutoModelForCausalLM.from_pretrained(folder)
    torch.manual_seed(0)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "norm" not in name:
                param.normal_(0.0, 0.1)
    model.save_pretrained(folder)
    return folder


def _actions(run_dir) -> dict[str, list]:
    """Every episode's steps as the policy wrote them (content and tool calls), by problem."""
    out = {}
    for line in (run_dir / "output.jsonl").read_text().splitlines():
        envelope = json.loads(line)
        out[envelope["problem_id"]] = [
            json.dumps(s["completion"], sort_keys=True)
            for s in envelope["dialogue"]
        ]
    return out


def _records(run_dir) -> list[dict]:
    return [json.loads(x) for x in (run_dir / "episodes.jsonl").read_text().splitlines() if x.strip()]


@pytest.mark.parametrize(("concurrency", "profile"), [(1, "upstream"), (3, "upstream"), (3, "compact")])
def test_greedy_episodes_are_identical_with_and_without_the_cache(
    make_config, tiny_model, concurrency, profile
) -> None:
    from shoparena.eval.run import run_eval

    common = dict(
        limit=3, max_steps=4, max_tokens=12, concurrency=concurrency, threads=1, render_profile=profile
    )
    cached = make_config(f"hf:{tiny_model}", out="cached", **common)
    whole = make_config(f"hf:{tiny_model}", out="whole", prefix_cache=False, **common)
    with_cache, without = run_eval(cached).dump(), run_eval(whole).dump()

    actions = _actions(cached.out)
    assert len(actions) == 3 and all(len(steps) >= 3 for steps in actions.values())  # multi-turn episodes
    assert actions == _actions(whole.out)
    rows, baseline = _records(cached.out), _records(whole.out)
    # Without the cache every prompt token is computed; with it, each turn computes only what it adds.
    assert all(r["prefilled_tokens"] == r["prompt_tokens"] for r in baseline)
    assert all(r["prefilled_tokens"] < r["prompt_tokens"] for r in rows)
    assert all(r["prefix_misses"] == 0 for r in rows + baseline)
    totals, base_totals = with_cache["prefix_cache"], without["prefix_cache"]
    assert totals["enabled"] and not base_totals["enabled"]
    assert totals["prompt_tokens"] == base_totals["prompt_tokens"] == sum(r["prompt_tokens"] for r in rows)
    assert totals["prefilled_tokens"] == sum(r["prefilled_tokens"] for r in rows)
    assert base_totals["reuse_factor"] == 1.0 and totals["reuse_factor"] >= 2.0
    assert with_cache["policy"]["prefix_cache"] is True and without["policy"]["prefix_cache"] is False


def _turns(backend, session: str, rewrite_at: int | None = None, turns: int = 4) -> list:
    """A scripted conversation: every turn appends the reply and a tool result; at ``rewrite_at`` the first
    user message is edited (a template that rewrites history), so the prompt no longer extends the last."""
    from shoparena.llm.types import ChatRequest

    messages = [
        {"role": "system", "content": "You are a shopping agent. Find the product and recommend it."},
        {"role": "user", "content": "cheap red running shoes with free shipping"},
    ]
    replies = []
    for turn in range(turns):
        if turn == rewrite_at:
            messages[1] = {"role": "user", "content": "cheap blue running shoes with free shipping"}
        request = ChatRequest(messages=list(messages), max_tokens=6, temperature=0.0, session=session)
        reply = backend.complete(request)
        replies.append((reply.content, reply.usage))
        messages += [
            {"role": "assistant", "content": reply.content or "ok"},
            {"role": "user", "content": f"observation {turn}: 3 products found, cheapest 12.5"},
        ]
    return replies


def test_a_prompt_that_rewrites_history_is_a_counted_miss_and_decodes_the_same(tiny_model) -> None:
    from shoparena.eval.batching import BatchedTransformersBackend

    cached = BatchedTransformersBackend(tiny_model, prefix_cache=True, threads=1)
    whole = BatchedTransformersBackend(tiny_model, prefix_cache=False, threads=1)
    try:
        got = _turns(cached, "episode-a", rewrite_at=2)
        want = _turns(whole, "episode-a", rewrite_at=2)
        assert [text for text, _ in got] == [text for text, _ in want]
        assert [u.prefix_miss for _, u in got] == [False, False, True, False]
        assert all(u.prefilled_tokens == u.prompt_tokens for _, u in want)
        # Turn 1 reuses all of turn 0 but (at most) its generation prompt; the rewritten turn 2 is computed
        # again from the edited message on (the system turn before it still reused), more than it added;
        # turn 3 extends turn 2 again.
        usage = [u for _, u in got]
        reused = [u.prompt_tokens - u.prefilled_tokens for u in usage]
        assert reused[1] >= usage[0].prompt_tokens - 8 and reused[3] >= usage[2].prompt_tokens - 8
        assert 0 < reused[2] < usage[1].prompt_tokens - 8
        assert usage[2].prefilled_tokens > usage[2].prompt_tokens - usage[1].prompt_tokens
        assert cached.generator.stats.prefix_misses == 1
        assert len(cached.generator.store) == 1
        cached.release("episode-a")  # the episode ended: its cache is dropped
        assert len(cached.generator.store) == 0
    finally:
        cached.close()
        whole.close()


def test_episodes_of_different_lengths_share_a_batch_and_keep_their_own_caches(tiny_model) -> None:
    # Three conversations at once, started at different turns: their rows share decode batches while each
    # reuses only its own earlier turns.
    import threading

    from shoparena.eval.batching import BatchedTransformersBackend

    def play(backend, turns_of: dict[str, int]) -> dict[str, list]:
        out: dict[str, list] = {}

        def one(session: str) -> None:
            out[session] = _turns(backend, session, turns=turns_of[session])

        threads = [threading.Thread(target=one, args=(s,)) for s in turns_of]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return out

    lengths = {"a": 4, "b": 2, "c": 3}
    cached = BatchedTransformersBackend(tiny_model, prefix_cache=True, threads=1, max_batch=8)
    try:
        got = play(cached, lengths)
        stats = cached.generator.stats
        assert stats.max_batch_seen >= 2 and stats.prefix_misses == 0
        assert stats.prefilled_tokens < stats.prompt_tokens / 2
    finally:
        cached.close()
    whole = BatchedTransformersBackend(tiny_model, prefix_cache=False, threads=1)
    try:
        # The same conversation (all three are the same script) one at a time, nothing reused.
        want = _turns(whole, "solo", turns=4)
    finally:
        whole.close()
    for session, replies in got.items():
        assert [t for t, _ in replies] == [t for t, _ in want[: lengths[session]]]


def test_the_store_keeps_the_latest_sessions_and_nothing_when_disabled() -> None:
    from shoparena.eval.prefix_cache import KVEntry, PrefixStore

    def entry(tokens: list[int]) -> KVEntry:
        states = torch.zeros((1, 1, len(tokens), 2))
        return KVEntry(tuple(tokens), ((states, states),), len(tokens))

    store = PrefixStore(min_prefix=2, max_sessions=2)
    for name in ("a", "b", "c"):
        store.remember(name, entry([1, 2, 3, 4]))
    assert len(store) == 2 and store.match([1, 2, 3, 4, 5], "a").length == 0  # "a", oldest, was dropped
    found = store.match([1, 2, 3, 4, 5], "c")
    assert (found.length, found.miss) == (4, False)
    assert store.match([1, 2, 9, 4, 5], "c").miss and store.match([1, 2, 3], "c").miss  # rewritten, cut
    off = PrefixStore(enabled=False)
    off.remember("a", entry([1, 2, 3]))
    assert len(off) == 0 and off.match([1, 2, 3, 4], "a").length == 0
    with pytest.raises(ValueError, match="max_sessions"):
        PrefixStore(max_sessions=0)


def test_an_openai_policy_records_what_the_server_says_it_computed(make_config, tiny_model) -> None:
    # `eval serve` reports cached_tokens (its shared prefix; an HTTP request names no episode), and the
    # openai: policy records prompt minus cached as prefilled_tokens.
    from shoparena.eval.batching import BatchedTransformersBackend
    from shoparena.eval.run import run_eval
    from shoparena.eval.server import LoopbackServer, create_app

    backend = BatchedTransformersBackend(tiny_model, threads=1)
    try:
        with LoopbackServer(create_app(backend, "tiny")) as server:
            config = make_config(f"openai:{server.base_url}#tiny", limit=2, max_steps=2, max_tokens=6)
            summary = run_eval(config).dump()
    finally:
        backend.close()
    rows = _records(config.out)
    assert len(rows) == 2 and all(r["calls"] == 2 for r in rows)
    assert all(r["prefilled_tokens"] is not None for r in rows)
    assert sum(r["prefilled_tokens"] for r in rows) < sum(r["prompt_tokens"] for r in rows)
    assert summary["prefix_cache"]["prefilled_tokens"] == backend.generator.stats.prefilled_tokens


def test_the_in_place_cache_gives_the_states_and_logits_of_a_dynamic_cache(tiny_model) -> None:
    # Two prompts of different lengths prefilled into their windows of one buffer (the shorter after its
    # left padding), then decoded together in place past the buffer's capacity (it doubles): every step's
    # logits and the final states match each prompt run alone through transformers' own DynamicCache.
    from transformers import AutoModelForCausalLM, DynamicCache

    from shoparena.eval.prefix_cache import KVBuffers, cache_layers, slot_cache

    model = AutoModelForCausalLM.from_pretrained(tiny_model).eval()
    layers = model.config.num_hidden_layers
    prompts = [[5, 9, 13, 2, 7, 11, 3], [8, 4, 6]]
    steps = [[12, 1, 14, 10, 2], [3, 3, 9, 5, 7]]
    width = max(map(len, prompts))
    pads = [width - len(p) for p in prompts]
    buffers = KVBuffers(2, width + 2, pads)  # room for 2 decoded tokens: the rest forces a doubling
    want_logits, want_states = [], []
    with torch.no_grad():
        for row, prompt in enumerate(prompts):
            window = slot_cache(buffers, layers, slice(row, row + 1), pads[row])
            model(input_ids=torch.tensor([prompt]), cache=window, use_cache=True)
            reference = DynamicCache()
            model(input_ids=torch.tensor([prompt]), cache=reference, use_cache=True)
            logits = []
            for i, token in enumerate(steps[row]):
                out = model(
                    input_ids=torch.tensor([[token]]),
                    position_ids=torch.tensor([[len(prompt) + i]]),
                    cache=reference,
                    use_cache=True,
                )
                logits.append(out.logits[0, -1])
            want_logits.append(torch.stack(logits))
            want_states.append(cache_layers(reference))
        cache = slot_cache(buffers, layers, slice(0, 2), filled=width)
        mask = torch.ones((2, width + len(steps[0])), dtype=torch.long)
        for row, pad in enumerate(pads):
            mask[row, :pad] = 0
        got = []
        for i in range(len(steps[0])):
            out = model(
                input_ids=torch.tensor([[steps[0][i]], [steps[1][i]]]),
                attention_mask=mask[:, : width + i + 1],
                position_ids=torch.tensor([[len(prompts[0]) + i], [len(prompts[1]) + i]]),
                cache=cache,
                use_cache=True,
            )
            got.append(out.logits[:, -1])
    assert buffers.keys[0].shape[-2] >= width + len(steps[0]) > width + 2  # it grew
    got_logits = torch.stack(got, dim=1)
    for row, pad in enumerate(pads):
        torch.testing.assert_close(got_logits[row], want_logits[row], rtol=1e-4, atol=1e-4)
        for (k, v), (want_k, want_v) in zip(cache_layers(cache), want_states[row], strict=True):
            torch.testing.assert_close(k[row : row + 1, :, pad:], want_k, rtol=1e-4, atol=1e-4)
            torch.testing.assert_close(v[row : row + 1, :, pad:], want_v, rtol=1e-4, atol=1e-4)
            assert not k[row, :, :pad].any()  # left padding stays zero (finite under the mask)


def test_kv_buffers_reject_impossible_shapes() -> None:
    from shoparena.eval.prefix_cache import KVBuffers

    with pytest.raises(ValueError, match="rows >= 1"):
        KVBuffers(0, 4)
    with pytest.raises(ValueError, match="pads"):
        KVBuffers(2, 4, [0])


def test_draft_tokens_guess_what_followed_the_latest_earlier_occurrence() -> None:
    from shoparena.eval.batching import draft_tokens

    text = [1, 2, 3, 4, 5, 9, 2, 3, 7, 8, 1, 2, 3]
    assert draft_tokens(text, 2) == [4, 5]  # the 3-gram "1 2 3" first (though "2 3" is also at 6)
    assert draft_tokens([*text[:-2], 9, 2, 3], 2) == [7, 8]  # "9 2 3": the latest of its two places
    assert draft_tokens([5, 6, 7, 1, 2, 5, 6], 3) == [7, 1, 2]  # only the 2-gram "5 6" matches
    assert draft_tokens([1, 2, 3, 4], 3) == [] and draft_tokens(text, 0) == []


def test_lookahead_changes_how_many_steps_decode_takes_never_the_tokens(tiny_model, monkeypatch) -> None:
    # An oracle drafter guesses each row's true continuation (taken from a lookahead-0 run), wrong at every
    # third guess: right guesses are kept, wrong ones masked out. Replies, the next turns (which reuse the
    # stored cache with those holes taken out) and the store's states match decoding one token a step.
    import threading

    import shoparena.eval.batching as batching
    from shoparena.eval.batching import BatchedTransformersBackend

    plain = BatchedTransformersBackend(tiny_model, threads=1, max_batch=4)
    plain.generator.lookahead = 0
    try:
        want = {s: _turns(plain, s, turns=3) for s in ("a", "b")}
    finally:
        plain.close()
    truth = {}
    for replies in want.values():
        for text, _ in replies:
            truth[text] = plain.tokenizer(text, add_special_tokens=False)["input_ids"]

    def oracle(text: list[int], limit: int, ngrams: tuple[int, ...] = (3, 2)) -> list[int]:
        for reply in truth.values():
            for done in range(len(reply)):
                if done and text[-done:] == reply[:done] and len(reply) > done:
                    guess = list(reply[done : done + limit])
                    if len(guess) >= 3:
                        guess[2] = (guess[2] + 1) % 100
                    return guess
        return []

    monkeypatch.setattr(batching, "draft_tokens", oracle)
    ahead = BatchedTransformersBackend(tiny_model, threads=1, max_batch=4)
    got: dict[str, list] = {}
    try:
        threads = [
            threading.Thread(target=lambda s=s: got.update({s: _turns(ahead, s, turns=3)})) for s in want
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stats = ahead.generator.stats
    finally:
        ahead.close()
    assert {s: [t for t, _ in r] for s, r in got.items()} == {s: [t for t, _ in r] for s, r in want.items()}
    assert stats.accepted_tokens > 0 and stats.drafted_tokens > stats.accepted_tokens  # kept and rejected
    assert stats.prefix_misses == 0
    # The later turns reused the stored turns as much as without lookahead (the holes were taken out; the
    # first turns differ only in which episode computed the shared prefix first).
    for session in want:
        assert [u.prefilled_tokens for _, u in got[session][1:]] == [
            u.prefilled_tokens for _, u in want[session][1:]
        ]
