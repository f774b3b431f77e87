"""Build pydantic records from values the scorer computed itself, without re-validating them.

Validation dominated scoring time (a verdict re-validates every slot and every check dataclass). The values
passed here are produced by the scorer with the declared types, so the record is assembled directly: the
field dict is written in declaration order (so dumps and equality match a validated instance) and missing
fields take their defaults. Callers must pass only declared fields with values of the declared types.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

_MISSING = object()
_PLANS: dict[type[BaseModel], tuple[tuple[str, ...], list[tuple[str, Any, Any]]]] = {}


def _plan(cls: type[BaseModel]) -> tuple[tuple[str, ...], list[tuple[str, Any, Any]]]:
    plan = _PLANS.get(cls)
    if plan is None:
        fields = cls.model_fields
        plan = (
            tuple(fields),
            [(name, info.default_factory, info.default) for name, info in fields.items()],
        )
        _PLANS[cls] = plan
    return plan


def trusted(cls: type[M], values: dict[str, Any]) -> M:
    """An instance of ``cls`` holding ``values`` (already of the declared types), defaults for the rest.

    When ``values`` names every field in declaration order it becomes the instance's field dict as is (the
    caller hands it over); otherwise the fields are copied in order, with defaults for the missing ones.

    Raises:
        TypeError: when ``values`` names a field ``cls`` does not declare (a programming error).
    """
    names, plan = _plan(cls)
    if tuple(values) == names:
        data = values
    else:
        data = {}
        given = 0
        for name, factory, default in plan:
            value = values.get(name, _MISSING)
            if value is _MISSING:
                value = factory() if factory is not None else default  # type: ignore[call-arg]
            else:
                given += 1
            data[name] = value
        if given != len(values):
            raise TypeError(f"{cls.__name__}: unknown fields {sorted(set(values) - set(data))}")
    obj = cls.__new__(cls)
    object.__setattr__(obj, "__dict__", data)
    object.__setattr__(obj, "__pydantic_fields_set__", set(values))
    object.__setattr__(obj, "__pydantic_extra__", None)
    object.__setattr__(obj, "__pydantic_private__", None)
    return obj
