"""Render profiles: the compact profile's text, its handles, and the round trip corpus view ↔ eval prompt."""

from __future__ import annotations

import json
import re

import pytest

from shoparena.agents.planner import PlannerAgent
from shoparena.env.environment import ShopEnv
from shoparena.env.episodes import run_episode
from shoparena.eval.chat_agent import NATIVE_SYSTEM_PROMPT, ChatAgent
from shoparena.formats.native import trajectory_to_chat
from shoparena.formats.profiles import (
    COMPACT_TOP,
    LINE_CHARS,
    HandleTable,
    RenderProfileError,
    check_profile,
    compact_arguments,
    compact_request,
    handle_table,
    listed_handles,
    read_render_stamp,
    render_chat,
    resolve_arguments,
    search_cursor,
    write_render_stamp,
)
from shoparena.records.problem import Intent, Problem, RewardItem
from shoparena.records.trajectory import Trajectory

DECISIVE = {"view_per_item": 0, "max_shops": 1, "extra_rounds": 0, "search_forms": 1, "top_k": 5}
VERBATIM = {**DECISIVE, "verbatim": True}


def _episode(hand, problem, **options):
    env = ShopEnv(hand.index)
    traj = run_episode(PlannerAgent(**options), problem, hand.index, env=env)
    tools = [s.to_openai() for s in env.tool_schemas()]
    return traj, tools


def test_upstream_profile_is_the_canonical_chat(hand, product_problem):
    traj, tools = _episode(hand, product_problem)
    chat = trajectory_to_chat(traj, tools, system_prompt=NATIVE_SYSTEM_PROMPT)
    messages, shown = render_chat(chat, tools, "upstream")
    assert messages == chat and shown == tools


def test_compact_profile_shows_handles_lines_and_no_schemas(hand, product_problem):
    traj, tools = _episode(hand, product_problem, **DECISIVE)
    chat = trajectory_to_chat(traj, tools, system_prompt=NATIVE_SYSTEM_PROMPT)
    messages, shown = render_chat(chat, tools, "compact")
    assert shown is None  # the tools are named in the system turn instead
    assert messages[0]["role"] == "system" and "find_product(q" in messages[0]["content"]
    assert messages[1] == {"role": "user", "content": f"U1 | {product_problem.query}"}
    search = next(m for m in messages if m["role"] == "tool")
    lines = search["content"].splitlines()
    assert 1 <= len(lines) <= COMPACT_TOP
    assert lines[0].startswith("P1.1 S1 | ")  # the first search's first line
    text = json.dumps(messages)
    for product in hand.index.find_product(q=product_problem.query, page=1)[:3]:
        assert product.product_id not in text  # ids never reach the student
    final = [m for m in messages if m["role"] == "assistant"][-1]
    calls = {c["function"]["name"]: json.loads(c["function"]["arguments"]) for c in final["tool_calls"]}
    assert calls["recommend_product"]["product_ids"].startswith("P")
    first = next(m for m in messages if m["role"] == "assistant")
    assert "page" not in json.loads(first["tool_calls"][0]["function"]["arguments"])  # default left out


def test_handles_resolve_back_to_ids_and_defaults():
    table = HandleTable()
    assert table.listed(["101", "205"]) == ["P1.1", "P1.2"]
    # A second search names its lines P2.<line>; a product listed again gets the new line's handle too.
    assert table.listed(["205", "333"]) == ["P2.1", "P2.2"]
    assert table.resolve("P1.2") == table.resolve("P2.1") == "205"
    assert table.handle("P", "205") == "P1.2"  # a product is written with its first handle
    assert table.handle("P", "999") == "P0.1"  # named before any search listed it
    assert [table.handle("S", shop) for shop in ("9", "8", "9")] == ["S1", "S2", "S1"]
    compact = compact_arguments("recommend_product", {"product_ids": "205,101"}, table)
    assert compact_arguments("find_product", {"q": "shoes"}, table) == {"q": "shoes"}  # no request yet
    assert compact == {"product_ids": "P1.2,P1.1"}
    assert resolve_arguments("recommend_product", compact, table) == {"product_ids": "205,101"}
    assert resolve_arguments("recommend_product", {"product_ids": "P2.2,P1.1"}, table) == {
        "product_ids": "333,101"
    }
    assert resolve_arguments("find_product", {"q": "x", "shop_id": "S1"}, table) == {
        "q": "x",
        "shop_id": "9",
        "page": 1,
    }
    # Unknown handles and raw ids pass through unchanged (the tool then answers as upstream does).
    assert resolve_arguments("view_product_information", {"product_ids": "P9,777"}, table) == {
        "product_ids": "P9,777"
    }


def test_round_trip_corpus_view_equals_eval_prompt_and_env_replays_handles(hand, product_problem):
    """The same state renders to the same text for training (corpus view) and evaluation (ChatAgent), and a
    compact policy that sends the rendered handles replays the teacher's episode exactly."""
    traj, tools = _episode(hand, product_problem, **DECISIVE)
    chat = trajectory_to_chat(traj, tools, system_prompt="any miner's own system prompt")
    view, _ = render_chat(chat, tools, "compact")
    assistant_at = [i for i, m in enumerate(view) if m["role"] == "assistant"]

    env = ShopEnv(hand.index, render_profile="compact")
    obs = env.reset(product_problem)
    agent = ChatAgent(backend=None, render_profile="compact")  # no backend needed to render
    for k, i in enumerate(assistant_at):
        prompt = agent.messages(obs)
        assert prompt == view[:i], f"turn {k + 1}: eval prompt differs from the corpus view"
        obs = env.step({"role": "assistant", "content": "", "tool_calls": view[i]["tool_calls"]}).observation
    replay = env.trajectory()
    original = [(c.name, c.parameters, c.result) for s in traj.steps for c in s.tool_calls]
    replayed = [(c.name, c.parameters, c.result) for s in replay.steps for c in s.tool_calls]
    assert replayed == original  # real ids recorded, results identical


SHOP_REQUEST = "Find one shop that sells all of these:\n - running socks ankle\n - running shoes breathable"


def test_request_lines_are_handles_that_resolve_to_the_line_text():
    table = HandleTable()
    table.set_request(SHOP_REQUEST)
    assert compact_request(SHOP_REQUEST).splitlines() == [
        "U1 | Find one shop that sells all of these:",
        "U2 | - running socks ankle",
        "U3 | - running shoes breathable",
    ]
    # A search for a line as written (bullet dropped) is the line's handle; other text stays free text.
    assert compact_arguments("find_product", {"q": "running shoes breathable"}, table) == {"q": "U3"}
    assert compact_arguments("web_search", {"q": "running socks ankle"}, table) == {"q": "U2"}
    assert compact_arguments("find_product", {"q": "running shoes"}, table) == {"q": "running shoes"}
    resolved = resolve_arguments("find_product", {"q": "U2", "shop_id": "S1"}, table)
    assert resolved["q"] == "running socks ankle"
    assert resolve_arguments("find_product", {"q": "U9"}, table)["q"] == "U9"  # no such line: as written
    # An inline list is laid out one item per line; an item's handle stands for it without its marker and
    # closing ";"/".", and a closing sentence after the last item is a line of its own.
    inline = "Find one shop with these: (1) running socks ankle; (2) nike shoes. They must share a shop."
    table.set_request(inline)
    assert compact_request(inline).splitlines() == [
        "U1 | Find one shop with these:",
        "U2 | (1) running socks ankle;",
        "U3 | (2) nike shoes.",
        "U4 | They must share a shop.",
    ]
    assert table.lines[1:3] == ["running socks ankle", "nike shoes."]
    ordinal = "Help me pick: First, some socks. Second, a bottle."
    table.set_request(ordinal)
    assert table.lines == ["Help me pick:", "some socks", "a bottle"]
    assert compact_arguments("find_product", {"q": "a bottle"}, table) == {"q": "U3"}
    # A handle stands for the line's first LINE_CHARS characters, the length a search query is cut at.
    long = "x" * (LINE_CHARS + 50)
    table.set_request(long)
    assert compact_arguments("find_product", {"q": long[:LINE_CHARS]}, table) == {"q": "U1"}
    assert resolve_arguments("find_product", {"q": "U1"}, table)["q"] == long[:LINE_CHARS]


def test_verbatim_teacher_searches_render_as_line_handles_and_replay_exactly(hand):
    """A teacher that searches each listed item as written is rendered with line handles, and a compact
    policy sending those handles replays its episode exactly (same queries, same results)."""
    problem = Problem(
        problem_id="s1",
        query=SHOP_REQUEST,
        intent=Intent.SHOP,
        category="Shop",
        reward=[
            RewardItem(product_id="102", title=["Running Socks Ankle"]),
            RewardItem(product_id="101", title=["Nike Running Shoes Breathable"]),
        ],
    )
    traj, tools = _episode(hand, problem, **VERBATIM)
    view, _ = render_chat(trajectory_to_chat(traj, tools), tools, "compact")
    searched = [
        json.loads(c["function"]["arguments"])["q"]
        for m in view
        if m["role"] == "assistant"
        for c in m["tool_calls"]
        if c["function"]["name"] == "find_product"
    ]
    assert searched and set(searched) <= {"U2", "U3"}
    env = ShopEnv(hand.index, render_profile="compact")
    env.reset(problem)
    for m in view:
        if m["role"] == "assistant":
            env.step({"role": "assistant", "content": "", "tool_calls": m["tool_calls"]})
    original = [(c.name, c.parameters, c.result) for s in traj.steps for c in s.tool_calls]
    replay = env.trajectory()
    assert [(c.name, c.parameters, c.result) for s in replay.steps for c in s.tool_calls] == original


def _two_item_shop(problem_id: str, request: str) -> Problem:
    reward = [RewardItem(product_id="102", title=["x"]), RewardItem(product_id="101", title=["y"])]
    return Problem(problem_id=problem_id, query=request, intent=Intent.SHOP, category="Shop", reward=reward)


def _searched(view: list[dict]) -> list[tuple[str, str]]:
    """(q as shown, the result's last line) of each search in a compact view, in order."""
    calls = {c["id"]: c for m in view if m["role"] == "assistant" for c in m["tool_calls"]}
    return [
        (json.loads(calls[m["tool_call_id"]]["function"]["arguments"])["q"], m["content"].splitlines()[-1])
        for m in view
        if m["role"] == "tool" and calls[m["tool_call_id"]]["function"]["name"] == "find_product"
    ]


def test_a_search_of_a_request_line_ends_with_the_next_line_as_shown(hand):
    """The cursor copies the line after the searched one (marker and first words), ``none`` after the last; a
    free-text search has none; the same text whether the call holds the line or the handle a policy wrote."""
    request = "Find a shop with these: (1) running socks ankle long; (2) nike shoes. They must share a shop."
    problem = _two_item_shop("s2", request)
    traj, tools = _episode(hand, problem, **VERBATIM)
    view, _ = render_chat(trajectory_to_chat(traj, tools), tools, "compact")
    assert _searched(view) and dict(_searched(view)) == {
        "U2": "next line: U3 | (2) nike shoes.",
        "U3": "next line: U4 | They must share a",
    }
    table = HandleTable()
    table.set_request(request)
    assert search_cursor("running socks ankle long", table) == search_cursor("U2", table)
    assert search_cursor("They must share a shop.", table) == "next line: none"
    assert search_cursor("U9", table) == search_cursor("running socks", table) == ""
    assert search_cursor(None, table) == ""
    free = DECISIVE | {"verbatim": False}
    traj, tools = _episode(hand, problem, **free)
    view, _ = render_chat(trajectory_to_chat(traj, tools), tools, "compact")
    free_text = [last for q, last in _searched(view) if not q.startswith("U")]
    assert free_text and not any(last.startswith("next line") for last in free_text)


def test_the_rollout_env_shows_the_cursor_the_corpus_view_shows(hand):
    """Online GRPO's tool messages (``ShopRolloutEnv``) carry the same cursor as the rendered episode."""
    from shoparena.train.online import ShopRolloutEnv

    problem = _two_item_shop("s1", SHOP_REQUEST)
    env = ShopRolloutEnv(hand.index, {"s1": problem}, max_steps=6, render_profile="compact")
    env.reset(problem_id="s1")
    shown = [env.find_product(q="U2"), env.find_product(q="U3", shop_id="S1")]
    assert shown[0].endswith("\nnext line: U3 | - running shoes breathable")
    assert shown[1].endswith("\nnext line: none")
    history = Trajectory(query=SHOP_REQUEST, steps=list(env._env.session.steps))
    view, _ = render_chat(trajectory_to_chat(history), None, "compact")
    assert [m["content"] for m in view if m["role"] == "tool"] == shown


def test_handle_table_from_history_matches_render(hand, product_problem):
    traj, tools = _episode(hand, product_problem, **DECISIVE)
    chat = trajectory_to_chat(traj, tools)
    table = handle_table(chat)
    messages, _ = render_chat(chat, tools, "compact")
    first_line = next(m for m in messages if m["role"] == "tool")["content"].splitlines()[0]
    assert table.resolve("P1.1") == traj.steps[0].tool_calls[0].result[0]["product_id"]
    assert first_line.startswith("P1.1 ")
    assert handle_table(trajectory_to_chat(Trajectory(query="q"))).handles == {}


def test_unknown_profile_and_stamp(tmp_path):
    with pytest.raises(RenderProfileError, match="known: upstream, compact"):
        check_profile("tiny")
    with pytest.raises(RenderProfileError):
        render_chat([], None, "verbose")
    assert read_render_stamp(tmp_path) is None
    stamp = write_render_stamp(tmp_path, "compact", "{{ messages }}")
    assert read_render_stamp(tmp_path) == stamp and stamp.template_hash
    (tmp_path / "shoparena-render.json").write_text("[]", encoding="utf-8")
    with pytest.raises(RenderProfileError, match=r"shoparena-render\.json"):
        read_render_stamp(tmp_path)


def test_listed_lines_are_the_handles_of_the_marked_items():
    from shoparena.formats.profiles import listed_lines

    voucher = SHOP_REQUEST + "\nMy budget is 900, with a voucher:\n1. It applies to all products."
    assert listed_lines(SHOP_REQUEST) == ["U2", "U3"]
    assert listed_lines(voucher) == ["U2", "U3"]  # numbered voucher rules are not items
    inline = "Find one shop with these: (1) running socks ankle; (2) nike shoes. They must share a shop."
    assert listed_lines(inline) == ["U2", "U3"]  # the head is U1, the closing sentence U4
    assert listed_lines("I want running socks.\nBlue ones.") == ["U1"]  # nothing listed: one item


def test_an_item_list_the_policy_wrote_shows_as_handles_and_nothing_else_does():
    """A planning turn's words (the items still to search, as the request writes them, or as handles) show
    as ``items: U3,U4``; free reasoning, or a list naming a line the request lacks, shows nothing."""
    table = HandleTable()
    table.set_request(SHOP_REQUEST)
    socks, shoes = table.lines[1], table.lines[2]
    assert listed_handles(f"{socks}\n{shoes}", table) == ["U2", "U3"]
    assert listed_handles("items: U2,U3", table) == listed_handles("U2, U3", table) == ["U2", "U3"]
    assert listed_handles("Searching 2 item(s) with their price and service filters.", table) == []
    assert listed_handles(f"{socks}\nand then the shoes", table) == []  # all or nothing
    assert listed_handles("items: U2,U9", table) == [] and listed_handles("items:", table) == []

    call = {"id": "c1", "type": "function", "function": {"name": "find_product", "arguments": {"q": socks}}}
    chat = [
        {"role": "user", "content": SHOP_REQUEST},
        {"role": "assistant", "content": "", "reasoning_content": f"{socks}\n{shoes}", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "[]"},
        {"role": "assistant", "content": "I will look at shoes now.", "tool_calls": [{**call, "id": "c2"}]},
        {"role": "tool", "tool_call_id": "c2", "content": "[]"},
        {"role": "assistant", "content": "items: U3", "tool_calls": [{**call, "id": "c3"}]},
    ]
    shown = [m["content"] for m in render_chat(chat, None, "compact")[0] if m["role"] == "assistant"]
    assert shown == ["items: U2,U3", "", "items: U3"]


WEB_REQUEST = "Can you find some apricot scented candles from the brand whose mascot is a turtle named Inday?"
WEB_PAGES = {
    "observation": [
        {"url": "u/claza", "title": "Claza", "content": "Brand: Claza. Mascot: a turtle named Inday."},
        {"url": "u/zeio", "title": "Zeio candle", "content": "Zeio Scented Candle. Brand: zeio. size: 26cm."},
        {"url": "u/none", "title": "A page", "content": "A page that names no brand."},
    ],
    "success": True,
}


def test_a_web_search_for_a_pages_brand_and_a_request_line_is_the_pair_of_handles():
    call = {"q": f"Claza {WEB_REQUEST}"}
    messages = [
        {"role": "user", "content": WEB_REQUEST},
        {"role": "assistant", "tool_calls": [_call("w", "web_search", {"q": WEB_REQUEST})]},
        {"role": "tool", "tool_call_id": "w", "content": json.dumps(WEB_PAGES)},
        {"role": "assistant", "tool_calls": [_call("f", "find_product", call)]},
    ]
    view, _ = render_chat(messages, None, "compact")
    assert view[3]["content"].splitlines()[0] == "W1 Brand: Claza. Mascot: a turtle named Inday."
    assert json.loads(view[4]["tool_calls"][0]["function"]["arguments"]) == {"q": "W1 U1"}
    table = handle_table(messages[:3])
    assert table.pages == ["Claza", "zeio", ""]
    # Each handle pair resolves to the brand its page names and the line: the call the teacher made.
    assert resolve_arguments("find_product", {"q": "W1 U1"}, table)["q"] == call["q"]
    assert resolve_arguments("find_product", {"q": "W2 U1"}, table)["q"] == f"zeio {WEB_REQUEST}"
    # A page naming no brand, or a page or line not shown, resolves to nothing: the text goes as written.
    for text in ("W3 U1", "W4 U1", "W1 U2"):
        assert resolve_arguments("find_product", {"q": text}, table)["q"] == text
    other = f"Clazo {WEB_REQUEST}"  # no page names this brand: free text
    assert compact_arguments("find_product", {"q": other}, table)["q"] == other


def _call(call_id: str, name: str, arguments: dict) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def test_a_web_episode_round_trips_through_the_page_handles(synth):
    """The regular teacher's web episode (the brand page's brand, then the request) renders as ``W<k> U1``,
    the evaluation prompt is the corpus view, and the handles replay the teacher's calls exactly."""
    from shoparena.arena.firehose import REGULAR_OPTIONS
    from shoparena.env.knowledge import KnowledgeBase, KnowledgePage, pages_from_catalog
    from shoparena.suites.options import SynthOptions
    from shoparena.suites.synth import synthesize_problems

    products = list(synth.index.iter_products())
    result = synthesize_problems(
        products, SynthOptions(n=2, seed=5, intents=(Intent.WEB,)), engine=synth.index
    )
    pages = pages_from_catalog(products) + [KnowledgePage(**page) for page in result.pages]
    knowledge = KnowledgeBase(pages)
    searched = []
    for problem in result.problems:
        env = ShopEnv(synth.index, knowledge=knowledge)
        traj = run_episode(PlannerAgent(**REGULAR_OPTIONS), problem, synth.index, env=env)
        tools = [s.to_openai() for s in env.tool_schemas()]
        view, _ = render_chat(
            trajectory_to_chat(traj, tools, system_prompt="a miner's prompt"), tools, "compact"
        )
        replay_env = ShopEnv(synth.index, knowledge=knowledge, render_profile="compact")
        obs = replay_env.reset(problem)
        agent = ChatAgent(backend=None, render_profile="compact")
        for i in [i for i, m in enumerate(view) if m["role"] == "assistant"]:
            assert agent.messages(obs) == view[:i]
            for call in view[i]["tool_calls"]:
                if call["function"]["name"] == "find_product":
                    searched.append(json.loads(call["function"]["arguments"])["q"])
            step = {"role": "assistant", "content": "", "tool_calls": view[i]["tool_calls"]}
            obs = replay_env.step(step).observation
        replay = replay_env.trajectory()
        assert [(c.name, c.parameters) for s in replay.steps for c in s.tool_calls] == [
            (c.name, c.parameters) for s in traj.steps for c in s.tool_calls
        ]
    assert searched and all(re.fullmatch(r"W\d U1", q) for q in searched), searched
