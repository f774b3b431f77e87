"""Config layering shared by every run directory's config: the one deep merge (presets < files < overrides).

The training configs (``extends:`` chains, trainer sections) and the pipeline config (preset < YAML file)
both layer with :func:`deep_merge`, so a nested section is overridden key by key the same way everywhere.

:func:`config_fields` is how a config holds another config model's fields: the pipeline's sections hold
``FirehoseConfig``'s, ``CorpusConfig``'s and ``EvalConfig``'s, typed and validated when the pipeline config
loads, handed to the callee as typed values.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr, create_model, model_serializer, model_validator
from pydantic.fields import FieldInfo


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` laid on ``base``: mappings on both sides merge key by key, anything else from ``over`` wins.

    The result shares nothing with its inputs (values are deep-copied), so editing it never changes a
    preset or a parent config.

    >>> deep_merge({"a": {"x": 1, "y": 2}, "b": 1}, {"a": {"y": 3}, "b": [4]})
    {'a': {'x': 1, 'y': 3}, 'b': [4]}
    """
    out = copy.deepcopy(dict(base))
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


class ConfigFields(BaseModel):
    """Some fields of another config model (:func:`config_fields` makes the class), each validated with that
    model's type and constraints; an unknown key is refused.

    Only the keys written count: :meth:`written` hands them to the callee, typed, and the callee's own
    defaults fill the rest. The model dumps as it was written (``{"concurrency": 64}`` stays that mapping,
    ``600`` stays an int), so a stage hash over it is the one of the same mapping before it was typed.
    """

    model_config = ConfigDict(extra="forbid")

    _as_written: dict[str, Any] = PrivateAttr(default_factory=dict)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_as_written(cls, data: Any, handler: Any) -> Any:
        made = handler(data)
        if isinstance(data, ConfigFields):
            made._as_written = copy.deepcopy(data._as_written)
        elif isinstance(data, Mapping):
            made._as_written = copy.deepcopy(dict(data))
        return made

    @model_serializer(mode="plain")
    def _dump_as_written(self) -> dict[str, Any]:
        return copy.deepcopy(self._as_written)

    def written(self) -> dict[str, Any]:
        """The fields the config wrote, as typed values (the callee's defaults fill the others)."""
        return {name: getattr(self, name) for name in self._as_written}

    def __contains__(self, name: str) -> bool:
        return name in self._as_written


def config_fields(
    model: type[BaseModel], *, exclude: Iterable[str] = (), name: str | None = None, doc: str | None = None
) -> type[ConfigFields]:
    """A :class:`ConfigFields` class with ``model``'s fields but ``exclude`` (the ones the caller fills in
    itself), each with its type, constraints, default and description."""
    skip = set(exclude)
    unknown = sorted(skip - set(model.model_fields))
    if unknown:
        raise ValueError(f"{model.__name__} has no fields {unknown}")
    fields: dict[str, Any] = {
        key: (info.annotation, FieldInfo.merge_field_infos(info))
        for key, info in model.model_fields.items()
        if key not in skip
    }
    made = create_model(name or f"{model.__name__}Fields", __base__=ConfigFields, **fields)
    made.__doc__ = doc or f"Fields of ``{model.__name__}`` (but {', '.join(sorted(skip)) or 'none'})."
    return made


__all__ = ["ConfigFields", "config_fields", "deep_merge"]
