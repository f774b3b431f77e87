"""Local Hugging Face model as a chat backend (CPU or GPU), for small agents and offline judging.

``torch`` and ``transformers`` are optional extras: they are imported only when the model is first used, so
the core package (and its tests) install and run without them.
"""

from __future__ import annotations

import inspect
import re
import threading
from pathlib import Path
from typing import Any

from shoparena.formats.tool_blocks import strip_tool_call_blocks, tool_call_blocks
from shoparena.llm.openai_compat import normalise_tool_call
from shoparena.llm.types import BackendError, ChatRequest, ChatResponse, Usage

_THINK_RE = re.compile(r"<think>(.*?)(?:</think>|$)", re.DOTALL)


def parse_generated_text(text: str, *, parse_tools: bool, split_reasoning: bool) -> ChatResponse:
    """Split raw generated text into content, reasoning and tool calls (Hermes/Qwen tag conventions).

    Args:
        text: Decoded new tokens.
        parse_tools: Extract ``<tool_call>`` blocks (JSON object or array of ``{name, arguments|parameters}``)
            into OpenAI tool calls and remove them from the content. Off when the request offered no tools,
            so agents with their own tagged protocol get the text verbatim.
        split_reasoning: Move a leading ``<think>…</think>`` block to ``reasoning_content``.

    Returns:
        A ChatResponse without usage/model (the caller fills them in).
    """
    content = text
    reasoning = ""
    if split_reasoning:
        # Some chat templates open <think> in the prompt, so the output may hold only the closing tag.
        if "</think>" in content and "<think>" not in content:
            reasoning, _, content = content.partition("</think>")
        else:
            match = _THINK_RE.search(content)
            if match:
                reasoning = match.group(1)
                content = content[: match.start()] + content[match.end():]
    calls: list[dict[str, Any]] = []
    if parse_tools:
        blocks = tool_call_blocks(content, unclosed_tail=True)
        for block in blocks:
            calls.extend(
                normalise_tool_call(item, len(calls) + i)
                for i, item in enumerate(block.items or ())  # a malformed block gives no call
                if isinstance(item, dict) and item.get("name")
            )
        if calls:  # without a call, malformed blocks stay in the content so the caller can see them
            content = strip_tool_call_blocks(content, blocks)
    return ChatResponse(
        content=content.strip(),
        reasoning_content=reasoning.strip(),
        tool_calls=calls,
        finish_reason="tool_calls" if calls else "stop",
    )


class _StopOnGeneratedText:
    """Stop once a stop string appears in the generated text.

    generate()'s own ``stop_strings`` also matches across the prompt boundary (a prompt ending in "\\n" plus
    one generated "\\n" satisfies the stop "\\n\\n"), unlike OpenAI-compatible servers, which match only
    the completion. Only a recent window of new tokens is decoded: a stop of L characters spans at most 4L
    byte tokens, and it is checked at every step, so it is caught the step it completes.
    """

    def __init__(self, tokenizer: Any, stops: list[str], prompt_len: int) -> None:
        self.tokenizer = tokenizer
        self.stops = [stop for stop in stops if stop]
        self.prompt_len = prompt_len
        self.window = 4 * max((len(stop) for stop in self.stops), default=0) + 4

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        tail = input_ids[0, self.prompt_len:][-self.window:]
        text = self.tokenizer.decode(tail, skip_special_tokens=False)
        hit = any(stop in text for stop in self.stops)
        return torch.full((input_ids.shape[0],), hit, dtype=torch.bool, device=input_ids.device)


class _StopWhenCancelled:
    """Stop generating once the caller's cancel event is set (it gave up on this reply)."""

    def __init__(self, cancel: threading.Event) -> None:
        self.cancel = cancel

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        hit = self.cancel.is_set()
        return torch.full((input_ids.shape[0],), hit, dtype=torch.bool, device=input_ids.device)


class TransformersBackend:
    """Generate with a local HF causal LM using its tokenizer's chat template (tools passed to the template).

    Args:
        model_dir: Local model folder (config, weights, tokenizer with a chat template).
        device: ``"cuda"``, ``"cpu"`` ...; None picks CUDA when available.
        default_max_tokens: New-token cap when the request gives none.
        split_reasoning: Move ``<think>`` blocks to ``reasoning_content`` (like a server reasoning parser).
        model: A preloaded model (skips loading; tests use fakes).
        tokenizer: A preloaded tokenizer (skips loading).
    """

    def __init__(
        self,
        model_dir: str | Path,
        *,
        device: str | None = None,
        default_max_tokens: int = 1024,
        split_reasoning: bool = False,
        model: Any = None,
        tokenizer: Any = None,
    ) -> None:
        self.model_dir = Path(model_dir)
        self.device = device
        self.default_max_tokens = default_max_tokens
        self.split_reasoning = split_reasoning
        self._model = model
        self._tokenizer = tokenizer
        self._lock = threading.Lock()  # generate() on one model is not thread-safe
        # Loading has its own lock: concurrent first calls must not race (a half-loaded model has meta
        # tensors), and a load must not wait behind a generation.
        self._load_lock = threading.Lock()

    @property
    def model_name(self) -> str:
        """The name replies carry: the model folder's name."""
        return self.model_dir.name

    def load(self) -> None:
        """Load the model and tokenizer now (once, thread-safe); the arena calls it before serving.

        A one-token generation follows, so the first real call does not also pay torch's warm-up.

        Raises:
            BackendError: Not a directory, the optional extras are missing, or the weights do not load.
        """
        self._load()
        self.complete(ChatRequest(messages=[{"role": "user", "content": "hi"}], max_tokens=1))

    def __repr__(self) -> str:
        return f"TransformersBackend(model_dir={str(self.model_dir)!r})"

    def close(self) -> None:
        """Wait for a running generation, then drop the model.

        Called when a run ends, so no generation thread is still inside torch while the interpreter shuts
        down (that aborted runs with ``terminate called without an active exception``).
        """
        with self._load_lock, self._lock:
            self._model = None
            self._tokenizer = None
        import gc

        gc.collect()

    def _load(self) -> tuple[Any, Any]:
        if self._model is not None and self._tokenizer is not None:
            return self._model, self._tokenizer
        with self._load_lock:
            if self._model is None or self._tokenizer is None:
                self._model, self._tokenizer = self._load_from_disk()
        return self._model, self._tokenizer

    def _load_from_disk(self) -> tuple[Any, Any]:
        if not self.model_dir.is_dir():
            raise BackendError(f"TransformersBackend.model_dir {self.model_dir} is not a directory")
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:  # the optional `train` extra is missing
            raise BackendError(
                "TransformersBackend needs torch and transformers (pip install 'shoparena[train]')"
            ) from exc
        device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
        try:
            tokenizer = AutoTokenizer.from_pretrained(self.model_dir)
            model = AutoModelForCausalLM.from_pretrained(self.model_dir, dtype="auto").to(device)
        except Exception as exc:  # corrupt or incomplete weights: one clear error, not a 502 per call
            raise BackendError(f"TransformersBackend: cannot load {self.model_dir}: {exc}") from exc
        model.eval()
        return model, tokenizer

    def complete(self, request: ChatRequest, *, cancel: threading.Event | None = None) -> ChatResponse:
        """Render the chat template, generate, and parse the new tokens.

        ``cancel`` (set by the arena proxy when the caller gave up) stops generation at the next token.

        With ``extra_body["guided_choice"]`` (vLLM's structured-output knob) nothing is generated: the reply
        is the choice the model scores highest (see :meth:`_guided_choice`).

        Raises:
            BackendError: ``guided_choice`` is not a non-empty list of non-empty strings.
        """
        choices = _guided_choices(request.extra_body)
        model, tokenizer = self._load()
        # Same knob as vLLM/SGLang (e.g. {"enable_thinking": False}), so one request works on every backend.
        template_kwargs: dict[str, Any] = dict(request.extra_body.get("chat_template_kwargs") or {})
        if request.tools:
            template_kwargs["tools"] = request.tools
        prompt = tokenizer.apply_chat_template(
            request.messages, tokenize=False, add_generation_prompt=True, **template_kwargs
        )
        # Tokenise the rendered text ourselves: apply_chat_template's tensor return type differs by version.
        inputs = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
        prompt_len = int(inputs["input_ids"].shape[-1])
        if choices is not None:
            return self._guided_choice(request, inputs, choices)
        max_new = request.max_tokens or self.default_max_tokens
        gen_kwargs: dict[str, Any] = {"max_new_tokens": max_new}
        temperature = request.temperature or 0.0
        if temperature > 0:
            gen_kwargs.update(do_sample=True, temperature=temperature)
        else:
            gen_kwargs["do_sample"] = False
        criteria: list[Any] = []
        if request.stop:
            criteria.append(_StopOnGeneratedText(tokenizer, request.stop, prompt_len))
        if cancel is not None:
            criteria.append(_StopWhenCancelled(cancel))
        if criteria:
            gen_kwargs["stopping_criteria"] = criteria
        if getattr(tokenizer, "pad_token_id", None) is None:
            gen_kwargs["pad_token_id"] = getattr(tokenizer, "eos_token_id", None)
        with self._lock:
            if cancel is not None and cancel.is_set():  # given up while queued behind another generation
                raise BackendError("generation cancelled before it started", retryable=True)
            output = model.generate(**inputs.to(model.device), **gen_kwargs)
        new_tokens = output[0][prompt_len:]
        text = tokenizer.decode(new_tokens, skip_special_tokens=True)
        for stop in request.stop or []:
            # generate() stops after the stop string; OpenAI servers exclude it, so we cut it off.
            if stop in text:
                text = text[: text.index(stop)]
        parsed = parse_generated_text(
            text, parse_tools=bool(request.tools), split_reasoning=self.split_reasoning
        )
        n_new = len(new_tokens)
        return parsed.model_copy(
            update={
                "usage": Usage(prompt_tokens=prompt_len, completion_tokens=n_new),
                "model": request.model or self.model_dir.name,
                "finish_reason": "length" if n_new >= max_new else parsed.finish_reason,
                "raw": {"text": text},
            }
        )

    def _guided_choice(self, request: ChatRequest, inputs: Any, choices: list[str]) -> ChatResponse:
        """Return the choice with the highest total log-probability as a continuation of the prompt.

        Each choice is scored as its own tokens followed by the tokenizer's EOS token (the end of the
        assistant turn), summed, not length-normalised: this ranks whole replies by their probability, like
        constrained greedy decoding would for choices that differ in one place, and the EOS term stops a
        choice that is a prefix of another from winning merely by being shorter. The prompt runs once; its
        KV cache is reused (cropped back after each choice) for one short pass per choice. Ties go to the
        earlier choice; sampling settings are ignored (the pick is deterministic). Choices are tokenised on
        their own, so the prompt should end where a reply starts (the chat template's generation prompt does).
        """
        import torch

        model, tokenizer = self._load()
        eos_id = getattr(tokenizer, "eos_token_id", None)
        prompt_ids = inputs["input_ids"].to(model.device)
        prompt_len = int(prompt_ids.shape[-1])
        scores: list[float] = []
        lengths: list[int] = []
        # transformers 5.x renamed past_key_values to cache (the old name is deprecated); accept both.
        cache_kw = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
        with self._lock, torch.no_grad():
            out = model(input_ids=prompt_ids, use_cache=True)
            cache = getattr(out, cache_kw)
            first = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
            for choice in choices:
                ids = list(tokenizer(choice, add_special_tokens=False)["input_ids"])
                lengths.append(len(ids))
                scored = ids + ([int(eos_id)] if eos_id is not None else [])
                total = float(first[scored[0]])
                if len(scored) > 1:
                    step = torch.tensor([scored[:-1]], device=model.device)
                    logits = model(input_ids=step, use_cache=True, **{cache_kw: cache}).logits[0].float()
                    # The cache grew in place: drop this choice's tokens (negative = how many to remove).
                    cache.crop(-(len(scored) - 1))
                    logprobs = torch.log_softmax(logits, dim=-1)
                    targets = torch.tensor(scored[1:], device=model.device)
                    total += float(logprobs.gather(1, targets[:, None]).sum())
                scores.append(total)
        best = max(range(len(choices)), key=lambda i: (scores[i], -i))
        return ChatResponse(
            content=choices[best],
            usage=Usage(prompt_tokens=prompt_len, completion_tokens=lengths[best]),
            model=request.model or self.model_dir.name,
            finish_reason="stop",
            raw={"text": choices[best], "guided_choice_logprobs": scores},
        )


def _guided_choices(extra_body: dict[str, Any]) -> list[str] | None:
    """``extra_body["guided_choice"]`` checked (None when absent)."""
    if "guided_choice" not in extra_body or extra_body["guided_choice"] is None:
        return None
    choices = extra_body["guided_choice"]
    if (not isinstance(choices, list) or not choices
            or not all(isinstance(c, str) and c for c in choices)):
        raise BackendError(
            "ChatRequest.extra_body['guided_choice'] must be a non-empty list of non-empty strings"
        )
    return choices
