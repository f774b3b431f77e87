"""A ChatML chat template that renders tools (Hermes/Qwen tag conventions) and marks assistant turns for
assistant-only loss.

Format (the facts other tools rely on):

* turns are ``<|im_start|>{role}\\n{content}<|im_end|>\\n``;
* when ``tools`` are given, the system turn lists each tool schema as one JSON line inside
  ``<tools>…</tools>`` and asks for calls as ``<tool_call>\\n{"name": …, "arguments": {…}}\\n</tool_call>``;
* assistant tool calls are rendered back in that same form (one block per call, after any text), so a
  model trained on these renderings emits what :func:`shoparena.llm.transformers_backend.parse_generated_text`
  parses;
* consecutive ``tool`` messages become one ``user`` turn of ``<tool_response>…</tool_response>`` blocks;
* everything the assistant produces, its closing ``<|im_end|>`` included, sits between
  ``{% generation %}`` and ``{% endgeneration %}``, which transformers turns into the assistant mask that
  TRL's ``assistant_only_loss`` needs;
* with ``thinking=True`` an assistant ``reasoning_content`` is rendered as ``<think>\\n…\\n</think>\\n\\n``
  before the content, and ``enable_thinking=False`` adds an empty think block to the generation prompt (the
  Qwen3 convention for turning reasoning off).
"""

from __future__ import annotations

from typing import Any, ClassVar

# Bump when the rendered text changes: builders record it, and a folder with an older version is rebuilt.
TEMPLATE_VERSION = 1

_CONTENT_MACRO = r"""
{%- macro render_content(content) -%}
  {%- if content is string -%}{{- content -}}
  {%- elif content is mapping -%}{{- content | tojson -}}
  {%- elif content is iterable -%}
    {%- for part in content -%}{%- if part.text is defined -%}{{- part.text -}}{%- endif -%}{%- endfor -%}
  {%- endif -%}
{%- endmacro -%}
"""

_SYSTEM = r"""
{%- if messages and messages[0].role == 'system' -%}
  {%- set system_text = render_content(messages[0].content) -%}
  {%- set loop_messages = messages[1:] -%}
{%- else -%}
  {%- set system_text = DEFAULT_SYSTEM -%}
  {%- set loop_messages = messages -%}
{%- endif -%}
{%- if tools -%}
  {{- '<|im_start|>system\n' -}}
  {%- if system_text -%}{{- system_text + '\n\n' -}}{%- endif -%}
  {{- '# Tools\n\nThese functions are available, one JSON schema per line inside '
      '<tools></tools>:\n<tools>\n' -}}
  {%- for tool in tools -%}{{- tool | tojson -}}{{- '\n' -}}{%- endfor -%}
  {{- '</tools>\n\nTo call functions, reply with one JSON object per call, each inside '
      '<tool_call></tool_call> tags:\n<tool_call>\n{"name": <function-name>, "arguments": '
      '<arguments-json-object>}\n</tool_call><|im_end|>\n' -}}
{%- elif system_text -%}
  {{- '<|im_start|>system\n' + system_text + '<|im_end|>\n' -}}
{%- endif -%}
"""

_ASSISTANT_THINK = r"""
      {%- if message.reasoning_content is defined and message.reasoning_content -%}
        {{- '<think>\n' + message.reasoning_content.strip() + '\n</think>\n\n' -}}
      {%- endif -%}
"""

_MESSAGES_HEAD = r"""
{%- for message in loop_messages -%}
  {%- if message.role == 'assistant' -%}
    {{- '<|im_start|>assistant\n' -}}
    {%- generation -%}
"""

_MESSAGES_TAIL = r"""
      {%- set text = render_content(message.content) if message.content is defined else '' -%}
      {{- text -}}
      {%- if message.tool_calls is defined and message.tool_calls -%}
        {%- for call in message.tool_calls -%}
          {%- set fn = call.function if call.function is defined else call -%}
          {%- if text or not loop.first -%}{{- '\n' -}}{%- endif -%}
          {{- '<tool_call>\n{"name": ' + (fn.name | tojson) + ', "arguments": ' -}}
          {%- if fn.arguments is string -%}{{- fn.arguments -}}
          {%- elif fn.arguments is defined -%}{{- fn.arguments | tojson -}}
          {%- else -%}{{- '{}' -}}{%- endif -%}
          {{- '}\n</tool_call>' -}}
        {%- endfor -%}
      {%- endif -%}
      {{- '<|im_end|>' -}}
    {%- endgeneration -%}
    {{- '\n' -}}
  {%- elif message.role == 'tool' -%}
    {%- if loop.first or loop_messages[loop.index0 - 1].role != 'tool' -%}
      {{- '<|im_start|>user' -}}
    {%- endif -%}
    {{- '\n<tool_response>\n' + render_content(message.content) + '\n</tool_response>' -}}
    {%- if loop.last or loop_messages[loop.index0 + 1].role != 'tool' -%}{{- '<|im_end|>\n' -}}{%- endif -%}
  {%- else -%}
    {{- '<|im_start|>' + message.role + '\n' + render_content(message.content) + '<|im_end|>\n' -}}
  {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
  {{- '<|im_start|>assistant\n' -}}
"""

_NO_THINK_PROMPT = r"""
  {%- if enable_thinking is defined and enable_thinking is false -%}
    {{- '<think>\n\n</think>\n\n' -}}
  {%- endif -%}
"""

_END = r"""
{%- endif -%}
"""


def chatml_tools_template(*, default_system: str = "", thinking: bool = False) -> str:
    """Build the Jinja chat template described in the module docstring.

    Args:
        default_system: System text used when the conversation has no system message ("" for none).
        thinking: Render ``reasoning_content`` as ``<think>`` blocks and honour ``enable_thinking=False``.

    Returns:
        The template source, for ``tokenizer.chat_template``.
    """
    default = "{%- set DEFAULT_SYSTEM = " + _jinja_string(default_system) + " -%}"
    parts = [default, _CONTENT_MACRO, _SYSTEM, _MESSAGES_HEAD]
    if thinking:
        parts.append(_ASSISTANT_THINK)
    parts.append(_MESSAGES_TAIL)
    if thinking:
        parts.append(_NO_THINK_PROMPT)
    parts.append(_END)
    return "".join(part.strip() for part in parts) + "\n"


def _jinja_string(text: str) -> str:
    """Quote ``text`` as a Jinja string literal."""
    escaped = text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
    return f"'{escaped}'"


#: The names ``getattr`` finds on a plain dict (its methods): for these Jinja's ``obj.name`` is the method.
_DICT_ATTRIBUTES = frozenset(dir(dict))


def _compile(template: str, sandboxed: bool = True) -> Any:
    """``template`` compiled as transformers compiles chat templates (``render_jinja_template``): a sandboxed
    environment with ``trim_blocks``/``lstrip_blocks``, loop controls, a ``tojson`` that keeps non-ASCII and
    escapes no HTML, ``raise_exception``, and ``{% generation %}`` blocks rendered as their body.

    ``sandboxed=False``: a plain environment with the same settings, for a template this package writes. The
    sandbox only refuses unsafe attribute access and mutation, so a template it renders renders to the same
    text without it, in two thirds of the time (a check per attribute read); a dict's keys are read without
    Jinja's failed attribute lookup first (:class:`_PlainEnvironment`), a quarter off what is left."""
    import json

    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class _Generation(jinja2.ext.Extension):
        tags: ClassVar[set[str]] = {"generation"}

        def parse(self, parser: jinja2.parser.Parser) -> jinja2.nodes.Node:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

        def _body(self, caller: jinja2.runtime.Macro) -> str:
            return caller()

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None,
               sort_keys: bool = False) -> str:  # fmt: skip
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)  # fmt: skip

    class _PlainEnvironment(jinja2.Environment):
        """Jinja's attribute lookup (``message.role``) with a plain dict's key read first: Jinja tries the
        attribute, which a dict lacks unless the name is one of its methods, and catches the error before
        reading the key. The same value for every name, without raising and catching an error per read."""

        def getattr(self, obj: Any, attribute: str) -> Any:
            if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
                if attribute in obj:
                    return obj[attribute]
                return self.undefined(obj=obj, name=attribute)
            return super().getattr(obj, attribute)

    environment = ImmutableSandboxedEnvironment if sandboxed else _PlainEnvironment
    env = environment(trim_blocks=True, lstrip_blocks=True, extensions=[_Generation, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env.from_string(template)


#: Names a message's reasoning may come under; transformers copies the first one found to ``thinking`` and
#: ``reasoning_content`` before rendering (``_alias_reasoning_fields``).
_REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")


class ChatTemplateTokenizer:
    """A ``tokenizers.Tokenizer`` with a chat template, for what the corpus build asks of a transformers fast
    tokenizer: ``apply_chat_template(messages, tools=..., tokenize=False)`` and ``tok(text,
    add_special_tokens=False)["input_ids"]``, with the same text and ids (plain JSON messages, no
    ``sanitize_control_tokens``: ``tests/models/test_chat_template_tokenizer.py``) and without importing
    transformers (most of a second per process).

    Args:
        backend: The ``tokenizers.Tokenizer``.
        chat_template: Jinja source of the template.
        special_tokens: What transformers passes the template besides the messages (its
            ``special_tokens_map``: ``eos_token``, ``pad_token``...).
        sandboxed: Render in Jinja's immutable sandbox, as transformers does (False only for a template
            this package wrote: the same text, faster).
    """

    name_or_path = ""

    def __init__(
        self, backend: object, chat_template: str, special_tokens: dict[str, str], *, sandboxed: bool = True
    ) -> None:
        self.backend = backend
        self.chat_template = chat_template
        self.special_tokens = dict(special_tokens)
        self._compiled = _compile(chat_template, sandboxed)

    def apply_chat_template(
        self,
        messages: list[dict],
        tools: list[dict] | None = None,
        *,
        tokenize: bool = False,
        add_generation_prompt: bool = False,
        **kwargs: object,
    ) -> str:
        if tokenize:
            raise ValueError("ChatTemplateTokenizer renders text only (tokenize=False)")
        if not messages:
            raise ValueError("Cannot apply chat template to an empty conversation.")
        chat = []
        for message in messages:  # transformers drops None values, then aliases the reasoning fields
            message = {key: value for key, value in message.items() if value is not None}
            reasoning = next((message[k] for k in _REASONING_FIELDS if message.get(k) is not None), None)
            if reasoning is not None:
                message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
            chat.append(message)
        return self._compiled.render(
            messages=chat,
            tools=tools,
            documents=None,
            add_generation_prompt=add_generation_prompt,
            **{**self.special_tokens, **kwargs},
        )

    def __call__(self, text: str, add_special_tokens: bool = True) -> dict[str, list[int]]:
        encoding = self.backend.encode(text, add_special_tokens=add_special_tokens)  # type: ignore[attr-defined]
        return {"input_ids": list(encoding.ids)}
