"""The two scoring profiles (environment spec §8.1): ``shoppingbench`` (SB) and ``strict`` (ORO)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

#: The roles a well-formed step may contain (SB ``OUTPUT_ROLES``).
OUTPUT_ROLES: tuple[str, ...] = ("think", "tool_call", "response")
NO_THINK_ROLES: tuple[str, ...] = ("tool_call",)


class ScoringProfileName(StrEnum):
    """The scoring profiles by name (a ``str``: verdicts and reports store the plain value). Not a render
    profile (:class:`shoparena.formats.profiles.RenderProfile`): parameters say which they mean,
    ``scoring_profile`` or ``render_profile``."""

    SHOPPINGBENCH = "shoppingbench"
    STRICT = "strict"


@dataclass(frozen=True, slots=True)
class ScoringProfile:
    """Every behaviour that differs between the upstream scorers, as data."""

    name: str
    threshold_key: str  # key into a similarity backend's thresholds for title hits
    gt_short_circuit: bool  # SB: a GT id returns rule 1 with empty counters at once
    absent_field_score: float  # field score when a field has no units
    zero_units_rule: float  # rule when nothing is countable (SB divides by zero; never occurs)
    strip_dedup_ids: bool  # strict: split, strip, drop empty, de-dup keeping order
    hit_requires_rule: bool  # strict: only slots with rule > 0 count for shop/budget
    denominator: Literal["suite", "present"]
    timestamp_penalty: float  # step format multiplier when extra_info.timestamp is not a positive number
    format_includes_results: bool  # ORO renders each call's result into the tool_call list

    def parse_ids(self, raw: str) -> list[str]:
        """Split a ``recommend_product`` argument into ids under this profile.

        >>> STRICT.parse_ids(" 1, 2,,1 ")
        ['1', '2']
        >>> SHOPPINGBENCH.parse_ids(" 1, 2,,1 ")
        [' 1', ' 2', '', '1 ']
        """
        parts = raw.split(",")
        if not self.strip_dedup_ids:
            return parts
        return list(dict.fromkeys(p.strip() for p in parts if p.strip()))


SHOPPINGBENCH = ScoringProfile(
    name=ScoringProfileName.SHOPPINGBENCH.value,
    threshold_key=ScoringProfileName.SHOPPINGBENCH.value,
    gt_short_circuit=True,
    absent_field_score=1.0,
    zero_units_rule=0.0,
    strip_dedup_ids=False,
    hit_requires_rule=False,
    denominator="present",
    timestamp_penalty=1.0,
    format_includes_results=False,
)

STRICT = ScoringProfile(
    name=ScoringProfileName.STRICT.value,
    threshold_key=ScoringProfileName.STRICT.value,
    gt_short_circuit=False,
    absent_field_score=0.0,
    zero_units_rule=0.0,
    strip_dedup_ids=True,
    hit_requires_rule=True,
    denominator="suite",
    timestamp_penalty=0.5,
    format_includes_results=True,
)

PROFILES: dict[str, ScoringProfile] = {
    SHOPPINGBENCH.name: SHOPPINGBENCH,
    STRICT.name: STRICT,
    "production-strict": STRICT,
}


def get_profile(scoring_profile: str | ScoringProfile) -> ScoringProfile:
    """Resolve a profile by name (``shoppingbench``, ``strict`` or its alias ``production-strict``)."""
    if isinstance(scoring_profile, ScoringProfile):
        return scoring_profile
    try:
        return PROFILES[scoring_profile]
    except KeyError:
        raise ValueError(
            f"unknown scoring profile {scoring_profile!r} (shoppingbench, strict, production-strict)"
        ) from None
