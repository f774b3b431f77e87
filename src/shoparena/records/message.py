"""Chat-side records: tool schemas and native chat rows (the SN15 SFT corpus shape).

Messages themselves stay plain OpenAI-style dicts (``{"role", "content", "tool_calls"?, "tool_call_id"?}``),
the shape every chat backend and chat template accepts; :mod:`shoparena.formats.native` converts them to
and from :class:`~shoparena.records.trajectory.Trajectory`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ToolSchema(BaseModel):
    """One tool as the model sees it: name, description and a JSON-schema ``parameters`` object."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})

    @classmethod
    def from_any(cls, obj: Any) -> ToolSchema:
        """Build from a flat ``{type, name, description, parameters}`` dict (SN15 corpus), a nested OpenAI
        ``{type: "function", function: {...}}`` dict, a ``ToolSchema``, or any object with those attributes.

        Raises:
            ValueError: naming the missing or mistyped field.
        """
        if isinstance(obj, ToolSchema):
            return obj
        if isinstance(obj, dict):
            body = obj.get("function") if isinstance(obj.get("function"), dict) else obj
            name = body.get("name")
            if not isinstance(name, str) or not name:
                raise ValueError(f"ToolSchema.name: expected a non-empty string, got {name!r}")
            description = body.get("description", "")
            parameters = body.get("parameters", {"type": "object", "properties": {}})
        else:
            name = getattr(obj, "name", None)
            if not isinstance(name, str) or not name:
                raise ValueError(f"ToolSchema.name: expected a non-empty string, got {name!r}")
            description = getattr(obj, "description", "")
            parameters = getattr(obj, "parameters", {"type": "object", "properties": {}})
        if not isinstance(description, str):
            raise ValueError(f"ToolSchema.description of {name!r}: expected a string")
        if not isinstance(parameters, dict):
            raise ValueError(f"ToolSchema.parameters of {name!r}: expected an object")
        return cls(name=name, description=description, parameters=parameters)

    def to_flat(self) -> dict[str, Any]:
        """The SN15 corpus shape ``{type, name, description, parameters}``."""
        return {
            "type": "function",
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
        }

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI request shape ``{type: "function", function: {name, description, parameters}}``."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def property_type(self, key: str) -> Any:
        """The declared JSON type of parameter ``key`` (e.g. ``"array"``), or None when undeclared."""
        props = self.parameters.get("properties")
        if isinstance(props, dict) and isinstance(props.get(key), dict):
            return props[key].get("type")
        return None


class ChatRow(BaseModel):
    """One native chat row ``{id, messages, tools, source}`` as stored in the SN15 SFT corpus.

    No ``schema_version`` here: the record mirrors an external row shape and dumps back to it unchanged.
    """

    model_config = ConfigDict(extra="forbid")

    id: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = Field(default_factory=list, description="Tool schemas as stored (flat).")
    source: dict[str, Any] = Field(default_factory=dict, description="Provenance (dataset, revision, row).")

    def tool_schemas(self) -> list[ToolSchema]:
        """The row's tools parsed into :class:`ToolSchema` records."""
        return [ToolSchema.from_any(tool) for tool in self.tools]


__all__ = ["ChatRow", "ToolSchema"]
