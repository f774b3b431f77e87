"""Local Hugging Face model as a chat backend (CPU or GPU), for small agents and offline judging.

``torch`` and ``transformers`` are optional extras: they are imported only when the model is first used, so
the core package (and its tests) install and run without them.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

from shoparena.llm.openai_compat import normalise_tool_call
from shoparena.llm.types import BackendError, ChatRequest, ChatResponse, Usage

_THINK_RE = re.compile(r"<think>(.*?)(?:</think>|$)", re.DOTALL)
_TOOL_CALL_RE = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)


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
        for block in _TOOL_CALL_RE.findall(content):
            try:
                decoded = json.loads(block.strip())
            except ValueError:
                continue  # keep malformed blocks in the content so the caller can see them
            items = decoded if isinstance(decoded, list) else [decoded]
            calls.extend(
                normalise_tool_call(item, len(calls) + i)
                for i, item in enumerate(items)
                if isinstance(item, dict) and item.get("name")
            )
        if calls:
            content = _TOOL_CALL_RE.sub("", content)
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

    def __repr__(self) -> str:
        return f"TransformersBackend(model_dir={str(self.model_dir)!r})"

    def _load(self) -> tuple[Any, Any]:
        if self._model is not None and self._tokenizer is not None:
            return self._model, self._tokenizer
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
        self._tokenizer = AutoTokenizer.from_pretrained(self.model_dir)
        self._model = AutoModelForCausalLM.from_pretrained(self.model_dir, dtype="auto").to(device)
        self._model.eval()
        return self._model, self._tokenizer

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Render the chat template, generate, and parse the new tokens."""
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
        max_new = request.max_tokens or self.default_max_tokens
        gen_kwargs: dict[str, Any] = {"max_new_tokens": max_new}
        temperature = request.temperature or 0.0
        if temperature > 0:
            gen_kwargs.update(do_sample=True, temperature=temperature)
        else:
            gen_kwargs["do_sample"] = False
        if request.stop:
            gen_kwargs["stopping_criteria"] = [_StopOnGeneratedText(tokenizer, request.stop, prompt_len)]
        if getattr(tokenizer, "pad_token_id", None) is None:
            gen_kwargs["pad_token_id"] = getattr(tokenizer, "eos_token_id", None)
        with self._lock:
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
