"""The rule-based ``planner`` agent behind the chat protocol: a baseline, **not a language model**.

:class:`PlannerBackend` is a :class:`~shoparena.llm.types.ChatBackend`. Each ``complete()`` reads the
conversation (the request in the first user message, then every assistant turn's tool calls and the tool
results that answered them), replays it through a fresh :class:`shoparena.agents.planner.PlannerAgent`
(whose API is step-based on observations, so the history is fed back one step at a time) and returns the
planner's next tool calls, as native ``tool_calls`` (``mode="native"``) or as a tagged
``<think>…</think><tool_call>[…]</tool_call>`` content string (``mode="xml"``). The reply is labelled: its
model name is ``shoparena/planner-rule-based`` and ``raw["note"]`` says it is a rule-based baseline.

With it, ``shoparena arena run --agents agentic --backend planner`` runs offline end to end: the proxy mints
nonces for the planner's calls exactly as for a real model's, so the ``agentic`` miner's dispatches are
``valid``. Usage counts are estimates (word and punctuation pieces), since there is no tokenizer.

Conversation conventions (those of the built-in ``agentic`` miner): the first user message may start with
``Shopping request (category: Shop, difficulty: hard):`` followed by the query; otherwise the whole message
is the query. Native calls are answered by ``tool`` messages (matched by ``tool_call_id``, else in order);
``<tool_call>`` text is answered by the next user message's ``<tool_response>{"name", "content"}`` blocks.

Stateless tagged agents (ShoppingBench's rollout, ORO's reference miner) send one user message holding the
whole history (``# Dialogue Records History``, ``<user>/<think>/<tool_call>/<obs>/<response>``): that history
is parsed (:mod:`shoparena.formats.tagged_history`), never re-read as the request, and the reply is always the
tagged text in ``content`` (``<think>…</think>`` and ``<tool_call>[…]</tool_call>``), whatever the mode,
because such agents read their calls only from there.
"""

from __future__ import annotations

import functools
import json
import re
import uuid
from typing import Any, Literal

from shoparena.formats.scan import first_tag_body, loads_bounded, tag_bodies
from shoparena.formats.tool_blocks import block_call, tool_call_blocks
from shoparena.llm.types import ChatRequest, ChatResponse, Usage

MODEL_NAME = "shoparena/planner-rule-based"
NOTE = (
    "rule-based baseline: replies come from shoparena's deterministic planner agent, not from a language "
    "model; usage counts are estimates"
)
DEFAULT_TOOLS = ("find_product", "view_product_information", "recommend_product", "terminate")

_HEADER_RE = re.compile(
    r"^\s*Shopping request \(category:\s*(?P<cat>[^,)]*)(?:,[^)]*)?\):\s*\n(?P<query>.*)\Z", re.DOTALL
)
_PIECE_RE = re.compile(r"\w+|[^\w\s]")


@functools.lru_cache(maxsize=8192)
def estimate_tokens(text: str) -> int:
    """A tokenizer-free token estimate: words plus punctuation marks (close to BPE counts for JSON).
    Cached: every call re-counts the whole conversation, whose earlier turns it has counted before."""
    return len(_PIECE_RE.findall(text))


def _maybe_json(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return loads_bounded(text)
    except ValueError:
        return text


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):  # OpenAI content parts
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def parse_request_text(text: str) -> tuple[str, str | None]:
    """``(query, category)`` from the opening user message (category None when the header is absent)."""
    match = _HEADER_RE.match(text)
    if match:
        return match.group("query").strip(), match.group("cat").strip() or None
    return text.strip(), None


def _xml_calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = []
    for block in tool_call_blocks(text):
        for item in block.items or ():
            call = block_call(item)
            if call is not None:
                args = _maybe_json(call[1])
                calls.append((call[0], args if isinstance(args, dict) else {}))
    return calls


class _Turn:
    """One assistant turn of the history: its calls and the results that answered them."""

    def __init__(self, calls: list[tuple[str, str, dict[str, Any]]], native: bool) -> None:
        self.calls = calls  # (call id, name, parameters)
        self.native = native
        self.results: list[Any] = [None] * len(calls)
        self.answered: list[bool] = [False] * len(calls)


def read_history(messages: list[dict[str, Any]]) -> tuple[str, str | None, list[_Turn]]:
    """Split a conversation into the request and the assistant turns with their tool results."""
    query, category = "", None
    turns: list[_Turn] = []
    seen_request = False
    for message in messages:
        role = message.get("role")
        text = _message_text(message)
        if role == "user" and not seen_request:
            query, category = parse_request_text(text)
            seen_request = True
        elif role == "assistant":
            native = []
            for i, call in enumerate(message.get("tool_calls") or []):
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict) and isinstance(function.get("name"), str):
                    args = _maybe_json(function.get("arguments", "{}"))
                    native.append((str(call.get("id") or i), function["name"], args if isinstance(args, dict)
                                   else {}))
            if native:
                turns.append(_Turn(native, native=True))
            else:
                xml = [(f"xml_{i}", name, args) for i, (name, args) in enumerate(_xml_calls(text))]
                turns.append(_Turn(xml, native=False))
        elif role == "tool" and turns:
            turn = turns[-1]
            call_id = str(message.get("tool_call_id") or "")
            index = next((i for i, c in enumerate(turn.calls) if c[0] == call_id and not turn.answered[i]),
                         None)
            if index is None:  # no id match: the first unanswered call
                index = next((i for i, done in enumerate(turn.answered) if not done), None)
            if index is not None:
                turn.results[index] = _maybe_json(text)
                turn.answered[index] = True
        elif role == "user" and turns and not turns[-1].native:
            turn = turns[-1]
            blocks = [_maybe_json(b.strip()) for b in tag_bodies(text, "tool_response")]
            for block in blocks:
                index = next((i for i, done in enumerate(turn.answered) if not done), None)
                if index is None:
                    break
                content = block.get("content", block.get("result")) if isinstance(block, dict) else block
                turn.results[index] = _maybe_json(content)
                turn.answered[index] = True
    return query, category, turns


def read_request(messages: list[dict[str, Any]]) -> tuple[str, str | None, list[_Turn], bool]:
    """``(query, category, turns, stateless_tagged)``: a history message if the last user turn is one."""
    from shoparena.formats.tagged_history import is_history_message, parse_history_message

    last_user = next((m for m in reversed(messages) if m.get("role") == "user"), None)
    text = _message_text(last_user) if last_user else ""
    if not is_history_message(text):
        return (*read_history(messages), False)
    query, steps = parse_history_message(text)
    turns = []
    for step in steps:
        turn = _Turn([(c.tool_call_id, c.name, c.parameters) for c in step.tool_calls], native=False)
        turn.results = [c.result for c in step.tool_calls]
        turn.answered = [c.has_result for c in step.tool_calls]
        turns.append(turn)
    query, category = parse_request_text(query)
    return query, category, turns, True


class PlannerBackend:
    """The rule-based planner as a chat backend (labelled ``shoparena/planner-rule-based``).

    Args:
        mode: ``native`` returns OpenAI ``tool_calls`` (thinking in ``reasoning_content``); ``xml`` returns
            the planner's tagged text as ``content`` (thinking in ``<think>``, calls in ``<tool_call>``).
        planner_options: Keyword arguments for :class:`~shoparena.agents.planner.PlannerAgent`.
    """

    name = "planner"
    model_name = MODEL_NAME

    def __init__(self, mode: Literal["native", "xml"] = "native", **planner_options: Any) -> None:
        if mode not in ("native", "xml"):
            raise ValueError(f"PlannerBackend.mode must be 'native' or 'xml', got {mode!r}")
        self.mode = mode
        self.planner_options = planner_options

    def __repr__(self) -> str:
        return f"PlannerBackend(mode={self.mode!r})"

    def next_completion(self, request: ChatRequest) -> tuple[str, bool]:
        """The planner's next tagged completion for the conversation, and whether the replay diverged."""
        text, diverged, _ = self._next(request)
        return text, diverged

    def _next(self, request: ChatRequest) -> tuple[str, bool, bool]:
        """(next tagged completion, replay diverged, request was a stateless tagged history).

        ``diverged`` is True when a recorded assistant turn's calls differ from what the planner would have
        emitted there (the history came from someone else); the replay still feeds the recorded results.
        """
        from shoparena.agents.planner import PlannerAgent
        from shoparena.env.environment import Observation
        from shoparena.formats.native import read_tool_schemas
        from shoparena.records.trajectory import Step, ToolCall

        query, category, turns, tagged = read_request(request.messages)
        schemas = read_tool_schemas(request.tools) if request.tools else read_tool_schemas(
            [{"name": n} for n in DEFAULT_TOOLS])
        agent = PlannerAgent(**self.planner_options)
        episode = f"replay-{uuid.uuid4().hex}"
        problem = {"query": query, "category": category}
        steps: list[Step] = []
        diverged = False

        def observe() -> str:
            obs = Observation(episode_id=episode, problem=problem, query=query, step_index=len(steps) + 1,
                              steps=list(steps), tools=schemas, system_prompt="")
            return str(agent.act(obs, schemas) or "")

        try:
            text = observe()
            for index, turn in enumerate(turns, start=1):
                if not text or '"name": "terminate"' in text:
                    return "", diverged, tagged  # the plan already ended; later turns are not the planner's
                expected = [(name, params) for name, params in _xml_calls(text)]
                recorded = [(name, params) for _, name, params in turn.calls]
                diverged = diverged or expected != recorded
                steps.append(Step(index=index, tool_calls=[
                    ToolCall(name=name, parameters=params, result=result, has_result=answered)
                    for (_, name, params), result, answered in zip(
                        turn.calls, turn.results, turn.answered, strict=True)
                ]))
                text = observe()
        finally:
            agent.close(episode)
        return text, diverged, tagged

    def complete(self, request: ChatRequest) -> ChatResponse:
        """The planner's next step for ``request``'s conversation."""
        text, diverged, tagged = self._next(request)
        think_body = first_tag_body(text, "think", min_body=0)
        think = think_body.strip() if think_body is not None else ""
        calls = _xml_calls(text)
        prompt_tokens = sum(estimate_tokens(_message_text(m)) for m in request.messages)
        raw = {"note": NOTE, "diverged": diverged, "mode": "xml" if tagged else self.mode}
        if not text:
            done = "The plan is complete; nothing further to do."
            return ChatResponse(content=done, usage=Usage(prompt_tokens=prompt_tokens,
                                completion_tokens=estimate_tokens(done)), model=MODEL_NAME,
                                finish_reason="stop", raw=raw)
        if self.mode == "xml" or tagged:
            return ChatResponse(content=text, usage=Usage(prompt_tokens=prompt_tokens,
                                completion_tokens=estimate_tokens(text)), model=MODEL_NAME,
                                finish_reason="stop", raw=raw)
        step_no = sum(m.get("role") == "assistant" for m in request.messages) + 1
        tool_calls = [
            {
                "id": f"call_{step_no}_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(params, ensure_ascii=False)},
            }
            for i, (name, params) in enumerate(calls)
        ]
        generated = think + "".join(c["function"]["name"] + c["function"]["arguments"] for c in tool_calls)
        return ChatResponse(
            content="",
            reasoning_content=think,
            tool_calls=tool_calls,
            usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=estimate_tokens(generated)),
            model=MODEL_NAME,
            finish_reason="tool_calls" if tool_calls else "stop",
            raw=raw,
        )


__all__ = [
    "MODEL_NAME",
    "NOTE",
    "PlannerBackend",
    "estimate_tokens",
    "parse_request_text",
    "read_history",
    "read_request",
]
