"""The shopping environment: typed tools, per-episode sessions and :class:`ShopEnv`."""

from shoparena.env.environment import (
    DEFAULT_MAX_STEPS,
    Observation,
    ShopEnv,
    StepResult,
    TerminationReason,
    to_parsed_step,
)
from shoparena.env.knowledge import KnowledgeBase, KnowledgePage, pages_from_catalog, read_pages
from shoparena.env.session import ShopSession
from shoparena.env.shop_tools import (
    OroHelperTools,
    ShopTools,
    normalise_find_params,
)
from shoparena.env.toolkit import BoundTool, Param, ToolError, ToolKind, ToolKit, ToolOutcome, tool

__all__ = [
    "DEFAULT_MAX_STEPS",
    "BoundTool",
    "KnowledgeBase",
    "KnowledgePage",
    "Observation",
    "OroHelperTools",
    "Param",
    "ShopEnv",
    "ShopSession",
    "ShopTools",
    "StepResult",
    "TerminationReason",
    "ToolError",
    "ToolKind",
    "ToolKit",
    "ToolOutcome",
    "normalise_find_params",
    "pages_from_catalog",
    "read_pages",
    "to_parsed_step",
    "tool",
]
