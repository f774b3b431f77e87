"""ORO's pinned u16 weight vector (v1.0.79 ``weight_distribution``/``weight_setter`` semantics).

Pure and deterministic: the same race, hotkey map and configuration give a byte-identical vector, which Yuma
consensus (kappa 0.5) needs. Steps: finishers -> ORO ranking -> K = floor(N/2) taper for ranks 2..K ->
pinned top/burn pair -> map hotkeys to UIDs, dropping deregistered ones and recomputing the pinned pair from
the surviving tail (K stays based on the full N). :class:`WeightConfig`'s defaults are ORO's rules for the
edge cases too (no finishers, a tail finisher on the burn UID, a hotkey listed twice, the 5-race scan
window); its other values keep shoparena's earlier choices (docs/arena.md, "ORO parity").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shoparena.arena.race_rules import Race, RaceStatus
from shoparena.records.race import DuplicateHotkeys, WeightConfig, WeightsDocument, WeightVector

U16_MAX = 65535


@dataclass(frozen=True, slots=True)
class Finisher:
    """A ranked race finisher."""

    hotkey: str
    agent_version_id: str
    race_score: float
    race_rank: int | None = None


def finishers(race: Race) -> list[Finisher]:
    """Qualifiers with a hotkey and a non-null race score (0.0 counts)."""
    return [
        Finisher(q.hotkey, q.agent_version_id, q.race_score, q.race_rank)
        for q in race.qualifiers
        if q.hotkey and q.race_score is not None
    ]


def rank_finishers(items: Sequence[Finisher], rank_by: str = "race_score") -> list[Finisher]:
    """ORO order: race_score descending, then agent_version_id ascending (string comparison).

    With ``rank_by="race_rank"`` published ranks come first (missing ranks last), then the ORO order.
    """
    if rank_by == "race_rank":
        return sorted(
            items, key=lambda f: (f.race_rank is None, f.race_rank or 0, -f.race_score, f.agent_version_id)
        )
    return sorted(items, key=lambda f: (-f.race_score, f.agent_version_id))


def tail_weights(n_finishers: int) -> list[int]:
    """u16 weights for ranks 2..K with K = floor(N/2): K-1 down to 1 (empty when K < 2)."""
    k = n_finishers // 2
    return [k + 1 - rank for rank in range(2, k + 1)]


def pinned_weights(tail_sum: int, t_top: float = 0.25, t_burn: float = 0.75) -> tuple[int, int]:
    """The pinned ``(top, burn)`` u16 pair for a tail sum T.

    If t_burn >= t_top: burn = 65535, top = round(t_top * (65535 + T) / t_burn).
    Otherwise: top = 65535, burn = round(t_burn * 65535 / t_top) - T (negative is an error).

    >>> pinned_weights(0), pinned_weights(3), pinned_weights(1225)
    ((21845, 65535), (21846, 65535), (22253, 65535))
    """
    if tail_sum < 0:
        raise ValueError("pinned_weights: tail_sum must be >= 0")
    if t_top < 0 or t_burn < 0 or abs(t_top + t_burn - 1.0) > 1e-9:
        raise ValueError("pinned_weights: t_top and t_burn must be >= 0 and sum to 1")
    if t_burn >= t_top:
        total = (U16_MAX + tail_sum) / t_burn
        return round(t_top * total), U16_MAX
    total = U16_MAX / t_top
    burn = round(t_burn * total) - tail_sum
    if burn < 0:
        raise ValueError(f"pinned_weights: tail sum {tail_sum} exceeds the burn budget (t_burn={t_burn})")
    return U16_MAX, burn


def compute_weights(
    race: Race,
    hotkey_to_uid: Mapping[str, int],
    *,
    n_uids: int | None = None,
    config: WeightConfig | None = None,
) -> WeightVector | None:
    """The weight vector for one completed race, or None when a validator would submit nothing.

    Args:
        race: A RACE_COMPLETE race.
        hotkey_to_uid: Registered hotkeys (the metagraph); finishers missing here are deregistered.
        n_uids: Vector length; defaults to one past the largest UID (burn UID included).
        config: Shares, burn UID, ranking and the edge-case rules (ORO's by default).

    Returns:
        None for a race without finishers under ``no_finishers="skip"`` (ORO: the chain keeps the last
        weights); otherwise the vector.

    Raises:
        ValueError: The race is not RACE_COMPLETE, or a UID is outside ``n_uids``.
    """
    cfg = config or WeightConfig()
    if race.status is not RaceStatus.RACE_COMPLETE:
        raise ValueError(f"Race.status is {race.status.value}; weights come only from RACE_COMPLETE races")
    size = n_uids if n_uids is not None else max([cfg.burn_uid, *hotkey_to_uid.values()]) + 1
    if size <= cfg.burn_uid or any(uid < 0 or uid >= size for uid in hotkey_to_uid.values()):
        raise ValueError(f"compute_weights: n_uids={size} does not cover every UID and the burn UID")
    ranked = rank_finishers(finishers(race), cfg.rank_by)
    if not ranked and cfg.no_finishers == "skip":
        return None
    weights = [0] * size
    if len(ranked) // 2 == 0:
        weights[cfg.burn_uid] = U16_MAX
        return WeightVector(race_id=race.race_id, uids=list(range(size)), weights=weights, burn=U16_MAX)
    top_hotkey = ranked[0].hotkey
    # Tail: ranks 2..K keep their full-N taper even when others deregistered.
    tail_sum = 0
    for hotkey, weight in _tail_entries(ranked, top_hotkey, cfg.duplicate_hotkeys):
        uid = hotkey_to_uid.get(hotkey)
        if uid is not None:
            weights[uid] += weight
            tail_sum += weight
    top, burn = pinned_weights(tail_sum, cfg.t_top, cfg.t_burn)
    if cfg.tail_on_burn_uid == "overwrite":
        weights[cfg.burn_uid] = burn  # ORO assigns the burn slot last; its tail weight still counted in T
    else:
        weights[cfg.burn_uid] += burn
    top_uid = hotkey_to_uid.get(top_hotkey)
    if top_uid is not None:
        weights[top_uid] += top  # added, not overwritten, when the top sits on the burn UID (as ORO)
    return WeightVector(
        race_id=race.race_id,
        uids=list(range(size)),
        weights=weights,
        top_hotkey=top_hotkey if top_uid is not None else None,
        top=top if top_uid is not None else 0,
        burn=burn,
        tail_sum=tail_sum,
    )


def _tail_entries(
    ranked: Sequence[Finisher], top_hotkey: str, duplicates: DuplicateHotkeys
) -> list[tuple[str, int]]:
    """(hotkey, weight) for ranks 2..K.

    ``once`` keeps ORO's hotkey map: a later listing replaces an earlier one (so a hotkey listed twice in
    the tail keeps its lower-ranked weight) and the top's hotkey keeps only the top share. ``add`` keeps
    every listing.
    """
    tail = ranked[1 : len(ranked) // 2]
    entries = [(f.hotkey, w) for f, w in zip(tail, tail_weights(len(ranked)), strict=True)]
    if duplicates == "add":
        return entries
    once = dict(entries)
    once.pop(top_hotkey, None)
    return list(once.items())


def latest_complete_race(history: Sequence[Race], scan_window: int | None = None) -> Race | None:
    """The first RACE_COMPLETE race among the ``scan_window`` newest of a newest-first history, or None."""
    scanned = history if scan_window is None else history[:scan_window]
    return next((race for race in scanned if race.status is RaceStatus.RACE_COMPLETE), None)


def weights_for_tick(
    history: Sequence[Race],
    hotkey_to_uid: Mapping[str, int],
    *,
    n_uids: int | None = None,
    config: WeightConfig | None = None,
) -> WeightVector | None:
    """One weight-setting tick: None (skip) when no completed race is in the scan window, or when the
    first completed race has no finishers and ``no_finishers`` is ``skip`` (ORO does not look further)."""
    cfg = config or WeightConfig()
    race = latest_complete_race(history, cfg.scan_window)
    if race is None:
        return None
    return compute_weights(race, hotkey_to_uid, n_uids=n_uids, config=cfg)


NO_COMPLETE_RACE = "no RACE_COMPLETE race: validators skip the tick"
NO_FINISHERS = (
    "RACE_COMPLETE without finishers: ORO's validator submits nothing; the chain keeps the last weights"
)


def weights_document(
    race: Race, weights: WeightVector | None, uid_map: dict[str, int], config: WeightConfig
) -> bytes:
    """Canonical ``weights.json`` bytes (sorted keys, no timestamps): identical inputs, identical bytes."""
    fields: dict[str, Any] = {
        "race_id": race.race_id,
        "status": race.status,
        "hotkey_to_uid": dict(sorted(uid_map.items())),
        "config": config,
    }
    if weights is None:
        fields["skipped"] = True
        complete = race.status is RaceStatus.RACE_COMPLETE
        fields["skip_reason"] = NO_FINISHERS if complete else NO_COMPLETE_RACE
    else:
        fields.update({name: getattr(weights, name) for name in type(weights).model_fields})
    return WeightsDocument(**fields).to_bytes()


__all__ = [
    "NO_COMPLETE_RACE",
    "NO_FINISHERS",
    "U16_MAX",
    "Finisher",
    "WeightConfig",
    "WeightVector",
    "compute_weights",
    "finishers",
    "latest_complete_race",
    "pinned_weights",
    "rank_finishers",
    "tail_weights",
    "weights_document",
    "weights_for_tick",
]
