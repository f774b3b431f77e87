"""Typed tools: a :class:`ToolKit` base class, the :func:`tool` decorator and schema derivation.

A tool is a method with type hints and a Google docstring. Its JSON schema is derived from both (via
``docstring_parser`` and ``pydantic.create_model``), never written by hand. Schema-only constraints
(enums, integer ranges) are declared with :func:`Param`: they appear in the schema the model sees but are
not enforced at run time, because the upstream server silently ignores out-of-range values (a page of 7
gives ``[]``, an unknown sort keeps relevance order) and we reproduce that.

Per-session arguments (``session`` by default) are injected by the environment and never appear in the
schema. A :class:`ToolError` raised by a tool becomes a message the model sees; any other exception is an
infrastructure error that ends the episode.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Annotated, Any, ClassVar, get_type_hints

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo

from shoparena.records.message import ToolSchema

_TOOL_ATTR = "__shoparena_tool__"


class ToolKind(StrEnum):
    """What a tool does to the episode: read state, act on the user's behalf, or end the episode."""

    READ = "read"
    ACTION = "action"
    TERMINAL = "terminal"


class ToolError(Exception):
    """An expected tool failure; its message is returned to the model as the tool result."""


def Param(
    *,
    enum: list[Any] | None = None,
    minimum: float | None = None,
    maximum: float | None = None,
    schema: dict[str, Any] | None = None,
) -> FieldInfo:
    """Schema-only constraints for a tool parameter, used inside ``Annotated[...]``.

    Args:
        enum: Allowed values shown to the model.
        minimum: Inclusive lower bound shown to the model.
        maximum: Inclusive upper bound shown to the model.
        schema: A property schema that replaces the derived one (the docstring description is kept).
    """
    extra: dict[str, Any] = {}
    if enum is not None:
        extra["enum"] = list(enum)
    if minimum is not None:
        extra["minimum"] = minimum
    if maximum is not None:
        extra["maximum"] = maximum
    if schema is not None:
        extra["__replace__"] = dict(schema)
    return Field(json_schema_extra=extra or None)


@dataclass(frozen=True, slots=True)
class ToolOptions:
    """What :func:`tool` records on a method."""

    kind: ToolKind
    name: str | None = None
    hidden: tuple[str, ...] = ()
    missing_defaults: Mapping[str, Any] = field(default_factory=dict)


def tool(
    kind: ToolKind = ToolKind.READ,
    *,
    name: str | None = None,
    hidden: tuple[str, ...] = (),
    missing_defaults: Mapping[str, Any] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a :class:`ToolKit` method as a tool.

    Args:
        kind: READ, ACTION or TERMINAL (a TERMINAL call ends the episode).
        name: Tool name; defaults to the method name.
        hidden: Extra parameter names injected by the environment (besides the kit's ``hidden_args``).
        missing_defaults: Values used when a *required* parameter is missing; the call still runs but is
            flagged as a schema violation (upstream ``terminate`` without ``status``).
    """

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        setattr(fn, _TOOL_ATTR, ToolOptions(kind, name, tuple(hidden), dict(missing_defaults or {})))
        return fn

    return mark


@dataclass(slots=True)
class ToolOutcome:
    """The result of one tool call.

    Attributes:
        result: The JSON value the model sees (the tool's return, or ``"Error: ..."`` for a ToolError).
        error: The ToolError message, None on success.
        infra_error: Description of an unexpected exception, None otherwise (``result`` is then None).
        violations: Schema violations tolerated while running the call (e.g. a defaulted required parameter).
    """

    result: Any = None
    error: str | None = None
    infra_error: str | None = None
    violations: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None and self.infra_error is None


def _clean_schema(node: Any) -> Any:
    """Strip pydantic noise (titles), collapse ``X | None`` to ``X`` and apply :func:`Param` overrides."""
    if isinstance(node, list):
        return [_clean_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _clean_schema(v) for k, v in node.items() if k != "title"}
    any_of = out.get("anyOf")
    if isinstance(any_of, list):
        non_null = [s for s in any_of if s != {"type": "null"}]
        if len(non_null) == 1 and len(non_null) < len(any_of):
            rest = {k: v for k, v in out.items() if k != "anyOf"}
            out = {**non_null[0], **rest}
    if out.get("default", 0) is None:
        out.pop("default")
    replace = out.pop("__replace__", None)
    if isinstance(replace, dict):
        description = out.get("description")
        out = dict(replace)
        if description and "description" not in out:
            out["description"] = description
    return out


def to_json_value(value: Any) -> Any:
    """A tool return converted to plain JSON values (pydantic models dumped, tuples listed)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): to_json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json_value(v) for v in value]
    if isinstance(value, Enum):
        return value.value
    return value


class BoundTool:
    """One tool of a toolkit instance: its schema, its argument model and the bound method."""

    def __init__(self, owner: ToolKit, fn: Callable[..., Any], options: ToolOptions) -> None:
        self.fn = fn
        self.kind = options.kind
        self.name = options.name or fn.__name__
        self.missing_defaults = dict(options.missing_defaults)
        doc = docstring_parser.parse(inspect.getdoc(fn) or "")
        # A summary wrapped over several lines is parsed as short + long description: re-join it.
        sep = "\n\n" if doc.blank_after_short_description else " "
        self.description = sep.join(p for p in (doc.short_description, doc.long_description) if p)
        arg_docs = {p.arg_name: " ".join((p.description or "").split()) for p in doc.params}
        hidden = set(owner.hidden_args) | set(options.hidden)
        try:
            hints = get_type_hints(fn, include_extras=True)
        except NameError as exc:  # hidden parameters may be annotated with names only imported for typing
            raise TypeError(f"tool {self.name!r}: cannot resolve its type hints ({exc})") from exc
        sig = inspect.signature(fn)
        fields: dict[str, Any] = {}
        self.hidden: list[str] = []
        self.required: list[str] = []
        for pname, param in sig.parameters.items():
            if pname == "self":
                continue
            if pname in hidden:
                self.hidden.append(pname)
                continue
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise TypeError(f"tool {self.name!r}: *args/**kwargs parameters cannot be described")
            if pname not in arg_docs:
                raise TypeError(f"tool {self.name!r}: parameter {pname!r} has no Args: docstring entry")
            annotation = hints.get(pname, Any)
            info = Field(description=arg_docs[pname])
            if param.default is inspect.Parameter.empty:
                self.required.append(pname)
                fields[pname] = (Annotated[annotation, info], ...)
            else:
                fields[pname] = (Annotated[annotation, info], param.default)
        self.args_model: type[BaseModel] = create_model(
            f"{self.name}_args", __config__=ConfigDict(extra="ignore"), **fields
        )
        raw = self.args_model.model_json_schema()
        params = _clean_schema(raw)
        properties = params.get("properties", {})
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if self.required:
            schema["required"] = list(self.required)
        self.schema = ToolSchema(name=self.name, description=self.description, parameters=schema)

    def __repr__(self) -> str:
        return f"BoundTool({self.name!r}, kind={self.kind.value})"

    def run(self, parameters: Mapping[str, Any], injected: Mapping[str, Any] | None = None) -> ToolOutcome:
        """Validate ``parameters`` (types only; unknown keys ignored) and call the tool.

        Never raises: ToolErrors and validation problems become an error result, anything else an infra error.
        """
        violations: list[str] = []
        args = dict(parameters)
        for key in self.required:
            if key not in args:
                if key in self.missing_defaults:
                    args[key] = self.missing_defaults[key]
                    used = self.missing_defaults[key]
                    violations.append(f"{self.name}: required parameter {key!r} missing; used {used!r}")
                else:
                    msg = f"{self.name}: missing required parameter {key!r}"
                    return ToolOutcome(result=f"Error: {msg}", error=msg, violations=violations)
        try:
            validated = self.args_model.model_validate(args)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"])
            msg = f"{self.name}: invalid parameter {loc!r}: {first['msg']}"
            return ToolOutcome(result=f"Error: {msg}", error=msg, violations=violations)
        kwargs = {k: getattr(validated, k) for k in self.args_model.model_fields}
        for key in self.hidden:
            if injected is None or key not in injected:
                raise TypeError(f"tool {self.name!r} needs the injected argument {key!r}")
            kwargs[key] = injected[key]
        try:
            value = self.fn(**kwargs)
        except ToolError as exc:
            return ToolOutcome(result=f"Error: {exc}", error=str(exc), violations=violations)
        except Exception as exc:  # an infrastructure failure: reported, never shown as a model mistake
            return ToolOutcome(infra_error=f"{type(exc).__name__}: {exc}", violations=violations)
        return ToolOutcome(result=to_json_value(value), violations=violations)


class ToolKit:
    """Base class of tool containers: subclasses define methods decorated with :func:`tool`.

    Tools are listed in definition order (base classes first). Methods whose names start with ``_`` are never
    tools. Parameters named in :attr:`hidden_args` are injected per session and hidden from the schema.
    """

    hidden_args: ClassVar[tuple[str, ...]] = ("session",)

    def tools(self) -> list[BoundTool]:
        """Every tool of this kit, in definition order."""
        cached = self.__dict__.get("_bound_tools")
        if cached is not None:
            return cached
        seen: dict[str, BoundTool] = {}
        for klass in reversed(type(self).__mro__):
            for attr, value in vars(klass).items():
                options = getattr(value, _TOOL_ATTR, None)
                if options is None or attr.startswith("_"):
                    continue
                bound = BoundTool(self, getattr(self, attr), options)
                seen.pop(bound.name, None)  # an override moves to its subclass position
                seen[bound.name] = bound
        out = list(seen.values())
        self.__dict__["_bound_tools"] = out
        return out

    def tool_schemas(self) -> list[ToolSchema]:
        """Schemas of every tool, in definition order."""
        return [t.schema for t in self.tools()]

    def get_tool(self, name: str) -> BoundTool | None:
        """The tool called ``name``, or None."""
        return next((t for t in self.tools() if t.name == name), None)


__all__ = [
    "BoundTool",
    "Param",
    "ToolError",
    "ToolKind",
    "ToolKit",
    "ToolOptions",
    "ToolOutcome",
    "to_json_value",
    "tool",
]
