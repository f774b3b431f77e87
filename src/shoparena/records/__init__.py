"""Pydantic v2 records: the one currency from catalog to eval report. No I/O lives here."""

from shoparena.records.catalog import (
    SERVICES,
    IndexLine,
    Product,
    ProductHit,
    ProductView,
    build_contents,
)

__all__ = [
    "SERVICES",
    "IndexLine",
    "Product",
    "ProductHit",
    "ProductView",
    "build_contents",
]

# Problems and verdicts (scoring).
from shoparena.records.problem import (
    Intent,
    Problem,
    ProblemSource,
    RewardItem,
    Voucher,
    problem_id_for_query,
)
from shoparena.records.verdict import Check, SlotVerdict, Verdict, VerdictStatus

__all__ += [
    "Check",
    "Intent",
    "Problem",
    "ProblemSource",
    "RewardItem",
    "SlotVerdict",
    "Verdict",
    "VerdictStatus",
    "Voucher",
    "problem_id_for_query",
]

# Trajectories and chat-side records (formats).
from shoparena.records.message import ChatRow, ToolSchema  # noqa: E402
from shoparena.records.trajectory import (  # noqa: E402
    EpisodeStatus,
    Step,
    ToolCall,
    Trajectory,
    TrajectoryError,
)

__all__ += [
    "ChatRow",
    "EpisodeStatus",
    "Step",
    "ToolCall",
    "ToolSchema",
    "Trajectory",
    "TrajectoryError",
]
