"""Score trajectories against problems under a profile (environment spec §8), with explained verdicts."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from shoparena.records.catalog import Product
from shoparena.records.problem import Intent, Problem
from shoparena.records.trajectory import EpisodeStatus, Trajectory
from shoparena.records.verdict import FIELDS, Check, SlotVerdict, Verdict, VerdictStatus
from shoparena.scoring._trusted import trusted
from shoparena.scoring.aggregate import AggregateReport, compute_aggregate
from shoparena.scoring.format_reward import StepChecks, length_reward, trajectory_format
from shoparena.scoring.lookup import ProductLookup
from shoparena.scoring.profiles import OUTPUT_ROLES, ScoringProfile, get_profile
from shoparena.scoring.rules import score_slot
from shoparena.scoring.similarity import TitleSimilarity

logger = logging.getLogger(__name__)

_FAILED_STATUS = {
    EpisodeStatus.FAILED: VerdictStatus.FAILED_RUN,
    EpisodeStatus.TIMED_OUT: VerdictStatus.TIMED_OUT,
}


def _base_verdict(
    problem: Problem,
    trajectory: Trajectory | None,
    scoring_profile: ScoringProfile,
    similarity: TitleSimilarity,
    threshold: float,
) -> dict[str, Any]:
    # Keys in Verdict's declaration order, so _finish can adopt the dict without copying it.
    return {
        "schema_version": 1,
        "problem_id": problem.problem_id,
        "run_id": trajectory.run_id if trajectory else "",
        "rollout_idx": trajectory.rollout_idx if trajectory else 0,
        "profile": scoring_profile.name,
        "intent": problem.intent.value,
        "category": problem.category_label,
        "status": VerdictStatus.SCORED,
        "success": False,
        "rule": 0.0,
        "gt": 0.0,
        "product": 0.0,
        "field_scores": dict.fromkeys(FIELDS, 0.0),
        "shop": 0.0 if problem.intent is Intent.SHOP else None,
        "budget": 0.0 if problem.intent is Intent.VOUCHER else None,
        "web_kw": 0.0 if problem.intent is Intent.WEB else None,
        "web_title": 0.0 if problem.intent is Intent.WEB else None,
        "format_score": 0.0,
        "length_reward": 0.0,
        "slots": [],
        "checks": [],
        "title_backend": f"{similarity.name}:{similarity.version}",
        "title_threshold": None if threshold is None else float(threshold),
        "title_comparable": bool(similarity.comparable),
        "recommended_ids": [],
        "recommended_raw": None,
        "notes": [],
    }


def _finish(fields: dict[str, Any]) -> Verdict:
    # Every value was computed here with Verdict's declared types: assemble without re-validating.
    return trusted(Verdict, fields)


def score_trajectory(
    problem: Problem,
    trajectory: Trajectory | None,
    lookup: ProductLookup,
    *,
    scoring_profile: str | ScoringProfile,
    similarity: TitleSimilarity,
    title_threshold: float | None = None,
    format_roles: Sequence[str] = OUTPUT_ROLES,
    slot_memo: SlotMemo | None = None,
    step_checks: StepChecks | None = None,
) -> Verdict:
    """Score one trajectory (or a missing one) on one problem.

    Reads the LAST ``recommend_product`` call; a non-string ``product_ids`` is no recommendation; ids map to
    reward slots by position (extras ignored, missing slots score 0).

    Args:
        problem: The problem with its hidden constraints.
        trajectory: The episode, or None when the run has no trajectory for this problem.
        lookup: Resolves product ids to full products.
        scoring_profile: ``shoppingbench`` or ``strict`` (alias ``production-strict``).
        similarity: The title backend; chosen explicitly, never skipped.
        title_threshold: Override the backend's threshold for this profile.
        format_roles: Roles for the format grammar (no-think runs: ``["tool_call"]``).
        slot_memo: Slot verdicts already computed with this ``lookup`` and ``similarity`` (a bench's own).
        step_checks: Format checks of this trajectory's steps shared with its other profile's scoring.

    Returns:
        The explained verdict.
    """
    prof = get_profile(scoring_profile)
    is_web = problem.intent is Intent.WEB
    threshold = (
        title_threshold
        if title_threshold is not None
        else similarity.threshold("web" if is_web else prof.threshold_key)
    )
    verdict = _base_verdict(problem, trajectory, prof, similarity, threshold)
    notes: list[str] = verdict["notes"]
    if not verdict["title_comparable"]:
        notes.append(f"title backend {similarity.name} is not the reference model: scores non-comparable")
    if trajectory is None:
        verdict["status"] = VerdictStatus.MISSING
        notes.append("no trajectory for this problem: counted as a failure")
        return _finish(verdict)
    if trajectory.status is not EpisodeStatus.SUCCESS:
        if prof.denominator == "suite":
            verdict["status"] = _FAILED_STATUS[trajectory.status]
            notes.append(f"run status {trajectory.status.value}: recorded as 0 without scoring")
            return _finish(verdict)
        notes.append(f"run status {trajectory.status.value}: scored from its steps anyway")

    verdict["format_score"] = trajectory_format(
        trajectory, prof, roles=format_roles, raw_content=is_web, checks=step_checks
    )
    verdict["length_reward"] = length_reward(trajectory)

    call = trajectory.last_recommendation()
    ids: list[str] = []
    if call is None:
        notes.append("no recommend_product call")
    else:
        raw = call.parameters.get("product_ids", "")
        if isinstance(raw, str):
            verdict["recommended_raw"] = raw
            ids = prof.parse_ids(raw)
        else:
            notes.append(f"product_ids is a {type(raw).__name__}, not a string: no recommendation")
    verdict["recommended_ids"] = ids

    if is_web:
        _score_web(verdict, problem, ids, lookup, similarity, threshold)
    else:
        _score_slots(verdict, problem, ids, lookup, prof, similarity, threshold, slot_memo)
    return _finish(verdict)


def _slot_verdicts(
    problem: Problem,
    ids: list[str],
    lookup: ProductLookup,
    prof: ScoringProfile,
    similarity: TitleSimilarity,
    threshold: float,
) -> tuple[list[SlotVerdict], list[Check]]:
    """One verdict per reward slot (the id in that position, looked up and scored), with the checks."""
    products: list[Product | None] = []
    for i in range(len(problem.reward)):
        rid = ids[i] if i < len(ids) else None
        products.append(lookup.get_product(rid) if rid is not None else None)

    # One batched similarity call per problem, only for found non-GT products (GT needs no embedding).
    pairs: list[tuple[str, str]] = []
    spans: dict[int, tuple[int, int]] = {}
    for i, (product, item) in enumerate(zip(products, problem.reward, strict=True)):
        if product is not None and product.product_id != item.product_id:
            spans[i] = (len(pairs), len(pairs) + len(item.title))
            pairs.extend((product.title, t) for t in item.title)
    sims = similarity.batch(pairs, reference_vectors=problem.reward_title_embeddings) if pairs else []

    checks: list[Check] = []
    slots: list[SlotVerdict] = []
    for i, (product, item) in enumerate(zip(products, problem.reward, strict=True)):
        rid = ids[i] if i < len(ids) else None
        if product is None:
            detail = "no id in this position" if rid is None else f"id {rid!r} not in the catalog"
            checks.append(
                Check(
                    name="found",
                    field="product_ids",
                    slot=i,
                    expected=item.product_id,
                    actual=rid,
                    passed=False,
                    detail=detail,
                )
            )
            slots.append(
                trusted(
                    SlotVerdict,
                    {
                        "slot": i,
                        "gt_product_id": item.product_id,
                        "recommended_id": rid,
                        "field_scores": dict.fromkeys(FIELDS, 0.0),
                    },
                )
            )
            continue
        span = spans.get(i)
        slot, slot_checks = score_slot(
            product,
            item,
            slot=i,
            recommended_id=rid or "",
            scoring_profile=prof,
            title_sims=sims[span[0] : span[1]] if span else None,
            threshold=threshold,
        )
        slots.append(slot)
        checks.extend(slot_checks)
    return slots, checks


class SlotMemo:
    """Slot verdicts by the key the scorer forms (problem, the ids in its slots, profile, threshold), for one
    lookup and similarity: the miners of a firehose recommend alike (two thirds of its (problem, ids)
    repeat), and a slot's verdict is a function of these alone. Holds at most ``size`` entries (the oldest
    go first); an entry answers only for the same problem, lookup and similarity objects it was computed
    with."""

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._items: dict[tuple[Any, ...], tuple[Any, ...]] = {}

    def get(
        self,
        key: tuple[Any, ...],
        owners: tuple[Any, ...],
        compute: Callable[[], tuple[list[SlotVerdict], list[Check]]],
    ) -> tuple[list[SlotVerdict], list[Check]]:
        """The slot verdicts of ``key`` computed for the objects ``owners`` (``compute`` when not held), as
        new lists: callers extend them."""
        item = self._items.get(key)
        if item is None or any(held is not owner for held, owner in zip(item[0], owners, strict=True)):
            item = (owners, *compute())
            if len(self._items) >= self._size:
                # Another thread may change the dict meanwhile: then that one evicts.
                with contextlib.suppress(KeyError, RuntimeError, StopIteration):
                    del self._items[next(iter(self._items))]
            self._items[key] = item
        return list(item[1]), list(item[2])


def _score_slots(
    verdict: dict[str, Any],
    problem: Problem,
    ids: list[str],
    lookup: ProductLookup,
    prof: ScoringProfile,
    similarity: TitleSimilarity,
    threshold: float,
    memo: SlotMemo | None = None,
) -> None:
    n = len(problem.reward)
    compute = lambda: _slot_verdicts(problem, ids, lookup, prof, similarity, threshold)  # noqa: E731
    if memo is None:
        slots, checks = compute()
    else:
        key = (id(problem), tuple(ids[:n]), prof.name, threshold)
        slots, checks = memo.get(key, (problem, lookup, similarity), compute)
    rule = sum(s.rule for s in slots) / n
    verdict["slots"] = slots
    verdict["product"] = sum(s.found for s in slots) / n
    verdict["gt"] = sum(s.gt for s in slots) / n
    verdict["rule"] = rule
    verdict["field_scores"] = {f: sum(s.field_scores.get(f, 0.0) for s in slots) / n for f in FIELDS}

    hit_slots = [s for s in slots if s.found and s.counts_as_hit]
    all_hit = len(hit_slots) == n
    shops = {s.shop_id for s in hit_slots}
    hit_rule = "rule > 0" if prof.hit_requires_rule else "found"
    if problem.intent is Intent.SHOP:
        shop = 1.0 if all_hit and len(shops) == 1 else 0.0
        verdict["shop"] = shop
        detail = (
            f"{len(hit_slots)}/{n} slots hit ({hit_rule})"
            if not all_hit
            else f"all slots hit; shops {sorted(s or '' for s in shops)}"
        )
        checks.append(
            Check(
                name="shop",
                field="shop_id",
                expected="one shop for all slots",
                actual=sorted(s or "" for s in shops),
                passed=shop >= 1,
                detail=detail,
            )
        )
        verdict["success"] = rule >= 1 and shop >= 1
    elif problem.intent is Intent.VOUCHER:
        assert problem.voucher is not None
        budget, detail, total = _budget(problem, hit_slots, all_hit, len(shops), hit_rule, n)
        verdict["budget"] = budget
        checks.append(
            Check(
                name="budget",
                field="voucher",
                expected=problem.voucher.budget,
                actual=total,
                passed=budget >= 1,
                detail=detail,
            )
        )
        verdict["success"] = rule >= 1 and budget >= 1
    else:
        verdict["success"] = rule >= 1
    checks.append(
        Check(
            name="rule",
            field="constraints",
            expected=1.0,
            actual=round(rule, 6),
            passed=rule >= 1,
            detail=f"mean rule over {n} slot(s)",
        )
    )
    verdict["checks"] = checks


def _budget(
    problem: Problem, hit_slots: list[SlotVerdict], all_hit: bool, n_shops: int, hit_rule: str, n: int
) -> tuple[float, str, float | None]:
    """The §8.3 budget arithmetic: (budget score, explanation, total price)."""
    v = problem.voucher
    assert v is not None
    if not all_hit:
        return 0.0, f"{len(hit_slots)}/{n} slots hit ({hit_rule}): budget not checked", None
    total = sum(float(s.price or 0.0) for s in hit_slots)
    if total <= v.budget:
        return 1.0, f"total {total:g} <= budget {v.budget}: no voucher needed", total
    if v.voucher_type == "shop" and n_shops != 1:
        return (
            0.0,
            f"total {total:g} > budget {v.budget} and a shop voucher needs one shop ({n_shops})",
            total,
        )
    if total < v.threshold:
        return 0.0, f"total {total:g} > budget {v.budget} but below the threshold {v.threshold}", total
    if v.discount_type == "fixed":
        after = total - float(v.face_value or 0)
        how = f"{total:g} - {v.face_value}"
    else:
        pct, cut = total * (1 - float(v.discount or 0)), total - float(v.cap or 0)
        after = max(pct, cut)
        how = f"max({pct:g}, {cut:g})"
    ok = after <= v.budget
    return float(ok), f"after voucher {how} = {after:g} {'<=' if ok else '>'} budget {v.budget}", total


def _score_web(
    verdict: dict[str, Any],
    problem: Problem,
    ids: list[str],
    lookup: ProductLookup,
    similarity: TitleSimilarity,
    threshold: float,
) -> None:
    item = problem.reward[0]
    first = ids[0] if ids else ""
    gt = bool(first) and item.product_id in first  # SB: the GT id as a substring of the first id
    product = lookup.get_product(first) if first else None
    kw = title_hit = 0.0
    answer = str(problem.knowledge_attribute)
    checks = [
        Check(
            name="gt_id",
            field="product_id",
            slot=0,
            expected=item.product_id,
            actual=first or None,
            passed=gt,
            required=False,
            detail="GT id contained in the first id" if gt else "not the GT",
        )
    ]
    if product is None:
        checks.append(
            Check(
                name="found",
                field="product_ids",
                slot=0,
                expected=item.product_id,
                actual=first or None,
                passed=False,
                detail="first id not in the catalog",
            )
        )
    elif product.product_id == item.product_id:
        kw = title_hit = 1.0
        checks.append(
            Check(
                name="web_kw",
                field="Knowledge_Attribute",
                slot=0,
                expected=answer,
                actual=None,
                passed=True,
                detail="GT product",
            )
        )
        checks.append(
            Check(
                name="web_title",
                field="title",
                slot=0,
                expected=item.title[0],
                actual=product.title,
                passed=True,
                detail="GT product",
            )
        )
    else:
        needle = answer.lower()
        kw = float(needle in product.title.lower() or needle in product.description.lower())
        sim = similarity.batch(
            [(product.title, item.title[0])], reference_vectors=problem.reward_title_embeddings
        )[0]
        title_hit = float(sim >= threshold)
        checks.append(
            Check(
                name="web_kw",
                field="Knowledge_Attribute",
                slot=0,
                expected=answer,
                actual=product.title,
                passed=bool(kw),
                detail=f"answer {'found' if kw else 'not found'} in title or description",
            )
        )
        checks.append(
            Check(
                name="web_title",
                field="title",
                slot=0,
                expected=item.title[0],
                actual=product.title,
                passed=bool(title_hit),
                detail=f"similarity {sim:.3f} {'>=' if title_hit else '<'} {threshold}",
            )
        )
    verdict["gt"] = float(gt)
    verdict["product"] = float(product is not None)
    verdict["web_kw"], verdict["web_title"] = kw, title_hit
    verdict["rule"] = (kw + title_hit) / 2
    verdict["success"] = verdict["rule"] >= 1
    verdict["checks"] = checks


@dataclass(slots=True)
class RunScore:
    """The result of scoring a run: one verdict per suite problem, the aggregate and matching accounting."""

    verdicts: list[Verdict]
    aggregate: AggregateReport
    unmatched: list[Trajectory] = field(default_factory=list)
    duplicates: int = 0
    missing: int = 0


def match_trajectories(
    problems: Sequence[Problem], trajectories: Iterable[Trajectory]
) -> tuple[dict[str, Trajectory], list[Trajectory], int]:
    """Map problem_id -> trajectory, by problem_id first, else by exact query text.

    A later trajectory for the same problem replaces the earlier one (as upstream) and is counted.

    Returns:
        (matched, unmatched trajectories, number of duplicates replaced)
    """
    by_id = {p.problem_id: p for p in problems}
    by_query = {p.query: p for p in problems}
    matched: dict[str, Trajectory] = {}
    unmatched: list[Trajectory] = []
    duplicates = 0
    for traj in trajectories:
        problem = by_id.get(traj.problem_id or "") or by_query.get(traj.query)
        if problem is None:
            unmatched.append(traj)
            continue
        if problem.problem_id in matched:
            duplicates += 1
            logger.warning("duplicate trajectory for problem %s: the later one wins", problem.problem_id)
        matched[problem.problem_id] = traj
    return matched, unmatched, duplicates


def score_run(
    problems: Sequence[Problem],
    trajectories: Iterable[Trajectory],
    lookup: ProductLookup,
    *,
    scoring_profile: str | ScoringProfile,
    similarity: TitleSimilarity,
    title_threshold: float | None = None,
    format_roles: Sequence[str] = OUTPUT_ROLES,
) -> RunScore:
    """Score every problem of a suite against a run's trajectories and aggregate under the profile."""
    prof = get_profile(scoring_profile)
    matched, unmatched, duplicates = match_trajectories(problems, trajectories)
    verdicts = [
        score_trajectory(
            p,
            matched.get(p.problem_id),
            lookup,
            scoring_profile=prof,
            similarity=similarity,
            title_threshold=title_threshold,
            format_roles=format_roles,
        )
        for p in problems
    ]
    aggregate = compute_aggregate(verdicts, scoring_profile=prof, suite_size=len(problems))
    return RunScore(
        verdicts=verdicts,
        aggregate=aggregate,
        unmatched=unmatched,
        duplicates=duplicates,
        missing=len(problems) - len(matched),
    )
