"""Solvability and quality checks of problems, and the planner's difficulty card.

Every generated problem must pass, else it is rejected with the reason:

* **solvable**: recommending the GT ids succeeds under the ``strict`` profile with the ``exact`` title
  backend, *and* every GT slot really meets its constraints (strict forces rule 1 for a GT id, so the
  per-slot counters are compared too). Web problems: the answer occurs in the GT title or description.
* **query**: the query never contains a whole reward title; a voucher query ends with the exact appendix of
  spec §6.3; a web query does not give the answer away.
* **discriminative**: a search over what the query reveals is not enough. For at least one slot, either the
  first hit of a search for the slot's name words is not the GT, or a near-miss sibling (a non-GT hit whose
  title shares most words with the GT title) violates one of the slot's constraints.
* **unique**: no two problems have the same normalised query.
* **shortcut** (hard banks only): the no-LLM ``shortcut`` miner's answer (the first hit of a search for the
  whole query, recommended as is) does not solve the problem under ``strict``.

:func:`run_planner` plays the rule-based ``planner`` agent on a bank and :func:`difficulty_card` tabulates
its ASR per intent and difficulty.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from shoparena.records.catalog import Product
from shoparena.records.problem import Intent, Problem, RewardItem
from shoparena.records.trajectory import Step, ToolCall, Trajectory
from shoparena.records.verdict import Verdict
from shoparena.scoring.bench import ScoringBench
from shoparena.scoring.lookup import ProductLookup
from shoparena.scoring.profiles import get_profile
from shoparena.scoring.rules import score_slot
from shoparena.scoring.similarity import ExactSimilarity, TitleSimilarity
from shoparena.suites.clusters import normalize_query
from shoparena.suites.queries import title_words, voucher_appendix

if TYPE_CHECKING:
    from shoparena.search import SearchEngine

_STRICT = get_profile("strict")


def recommend_trajectory(problem: Problem, product_ids: Sequence[str]) -> Trajectory:
    """A one-step trajectory that recommends ``product_ids`` and terminates (for scoring checks)."""
    calls = [
        ToolCall(name="recommend_product", parameters={"product_ids": ",".join(product_ids)}),
        ToolCall(name="terminate", parameters={"status": "success"}),
    ]
    return Trajectory(
        problem_id=problem.problem_id, query=problem.query, steps=[Step(index=1, tool_calls=calls)]
    )


def shortcut_trajectory(problem: Problem, engine: SearchEngine) -> Trajectory:
    """What the built-in ``shortcut`` miner does, in process: search the whole query (page 1), recommend the
    first hit and terminate (``failure`` when there is no hit)."""
    hits = list(engine.find_product(q=problem.query, page=1) or [])
    first = next((str(h.product_id) for h in hits if getattr(h, "product_id", None)), "")
    search = ToolCall(
        name="find_product",
        parameters={"q": problem.query, "page": 1},
        result=[h.model_dump(mode="json") if hasattr(h, "model_dump") else h for h in hits],
        has_result=True,
    )
    final = []
    if first:
        final.append(ToolCall(name="recommend_product", parameters={"product_ids": first}))
    final.append(ToolCall(name="terminate", parameters={"status": "success" if first else "failure"}))
    return Trajectory(
        problem_id=problem.problem_id,
        query=problem.query,
        agent_id="shortcut",
        steps=[Step(index=1, tool_calls=[search]), Step(index=2, tool_calls=final)],
        meta={"policy": "shortcut (in process)"},
    )


def shortcut_reasons(
    problem: Problem, engine: SearchEngine, lookup: ProductLookup, similarity: TitleSimilarity | None = None
) -> list[str]:
    """[] unless the shortcut miner's answer solves the problem under ``strict`` (then the problem is easy).

    The title backend defaults to ``lexical``, the one offline evaluations score with, so a hard bank's
    shortcut floor in ``eval run`` is 0 under that backend.
    """
    bench = ScoringBench([problem], lookup, similarity or "lexical")
    verdict = bench.verdict(problem, shortcut_trajectory(problem, engine), _STRICT)
    return ["shortcut: the first hit of the full query solves it"] if verdict.success else []


def gt_reasons(problem: Problem, lookup: ProductLookup) -> list[str]:
    """Why the GT does not solve ``problem`` under strict scoring with exact titles ([] when it does)."""
    reasons: list[str] = []
    missing = [pid for pid in problem.gt_ids if lookup.get_product(pid) is None]
    if missing:
        return [f"solvable: GT product(s) {missing} not in the catalog"]
    bench = ScoringBench([problem], lookup, ExactSimilarity())
    verdict = bench.verdict(problem, recommend_trajectory(problem, problem.gt_ids), _STRICT)
    if not verdict.success:
        failed = [f"{c.name}: {c.detail}" for c in verdict.checks if c.required and not c.passed]
        reasons.append("solvable: GT recommendation fails under strict: " + "; ".join(failed[:3]))
    for slot in verdict.slots:
        short = {
            f: slot.units[f] - slot.hits.get(f, 0) for f in slot.units if slot.units[f] > slot.hits.get(f, 0)
        }
        if short:
            reasons.append(f"solvable: slot {slot.slot} GT misses constraint units {short}")
    if problem.intent is Intent.WEB:
        product = lookup.get_product(problem.gt_ids[0])
        answer = str(problem.knowledge_attribute).lower()
        if (
            product is not None
            and answer not in product.title.lower()
            and answer not in product.description.lower()
        ):
            reasons.append("solvable: Knowledge_Attribute not in the GT title or description")
    return reasons


def query_reasons(problem: Problem) -> list[str]:
    """Query-level quality problems ([] when fine)."""
    reasons: list[str] = []
    low = problem.query.lower()
    for i, item in enumerate(problem.reward):
        if any(t and t.lower() in low for t in item.title):
            reasons.append(f"query: contains the whole title of slot {i}")
    if problem.voucher is not None and not problem.query.endswith(voucher_appendix(problem.voucher)):
        reasons.append("query: voucher appendix differs from the exact upstream wording")
    if problem.intent is Intent.WEB and str(problem.knowledge_attribute).lower() in low:
        reasons.append("query: states the Knowledge_Attribute answer")
    return reasons


def _shares_title(a: str, b: str, min_jaccard: float = 0.5) -> bool:
    wa, wb = set(title_words(a)), set(title_words(b))
    return bool(wa | wb) and len(wa & wb) >= min_jaccard * len(wa | wb)


def violated_units(product: Product, item: RewardItem) -> int:
    """Non-title constraint units of ``item`` that ``product`` misses (its title treated as a hit)."""
    slot, _ = score_slot(
        product,
        item,
        slot=0,
        recommended_id=product.product_id,
        scoring_profile=_STRICT,
        title_sims=[1.0] * len(item.title),
        threshold=1.0,
    )
    return sum(slot.units[f] - slot.hits.get(f, 0) for f in slot.units if f != "title")


def _slot_discriminative(
    item: RewardItem, name: str, engine: SearchEngine, lookup: ProductLookup, answer: str | None
) -> bool:
    first = engine.find_product(q=name, page=1) if name else []
    if not first or first[0].product_id != item.product_id:
        return True
    hits = list(first) + list(engine.find_product(q=item.title[0], page=1) if item.title else [])
    gt_title = item.title[0] if item.title else ""
    for hit in hits:
        if hit.product_id == item.product_id or not _shares_title(hit.title, gt_title):
            continue
        product = lookup.get_product(hit.product_id)
        if product is None:
            continue
        if answer is not None:
            if answer not in product.title.lower() and answer not in product.description.lower():
                return True
        elif violated_units(product, item) >= 1:
            return True
    return False


def discriminative_reasons(
    problem: Problem, engine: SearchEngine, lookup: ProductLookup, names: Sequence[str] | None = None
) -> list[str]:
    """[] when a search over the query's name words is not enough for at least one slot.

    Args:
        problem: The problem.
        engine: A search engine with ``find_product`` (e.g. :class:`~shoparena.search.SearchIndex`).
        lookup: Full products by id.
        names: The name words the query uses per slot; default the first four title words.
    """
    answer = str(problem.knowledge_attribute).lower() if problem.intent is Intent.WEB else None
    for i, item in enumerate(problem.reward):
        name = names[i] if names is not None and i < len(names) else " ".join(title_words(item.title[0])[:4])
        if _slot_discriminative(item, name, engine, lookup, answer):
            return []
    return ["discriminative: every slot's first name-word hit is the GT and no near-miss sibling exists"]


@dataclass(slots=True)
class CheckOutcome:
    """The verdict of the checks on one problem."""

    problem_id: str
    intent: str
    ok: bool
    reasons: list[str] = field(default_factory=list)


@dataclass(slots=True)
class CheckReport:
    """Kept and rejected problems; ``checked == kept + rejected`` always holds."""

    checked: int = 0
    kept: int = 0
    rejected: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    rejected_examples: list[CheckOutcome] = field(default_factory=list)

    def add(self, outcome: CheckOutcome, *, keep_examples: int = 20) -> None:
        self.checked += 1
        if outcome.ok:
            self.kept += 1
            return
        self.rejected += 1
        for reason in outcome.reasons:
            kind = reason.split(":", 1)[0]
            self.reasons[kind] = self.reasons.get(kind, 0) + 1
        if len(self.rejected_examples) < keep_examples:
            self.rejected_examples.append(outcome)

    def as_dict(self) -> dict[str, Any]:
        return {
            "checked": self.checked,
            "kept": self.kept,
            "rejected": self.rejected,
            "reasons": dict(sorted(self.reasons.items())),
            "rejected_examples": [
                {"problem_id": o.problem_id, "intent": o.intent, "reasons": o.reasons}
                for o in self.rejected_examples
            ],
        }


class ProblemChecker:
    """Runs every check on problems one at a time, remembering queries for the uniqueness check.

    Args:
        engine: Search engine for the discriminative check (None skips that check).
        lookup: Full products by id (default: ``engine`` itself).
        discriminative: Run the discriminative check.
        shortcut: Also reject problems the ``shortcut`` miner solves (hard banks; needs ``engine``).
    """

    def __init__(
        self,
        engine: SearchEngine | None,
        lookup: ProductLookup | None = None,
        *,
        discriminative: bool = True,
        shortcut: bool = False,
    ):
        if lookup is None and engine is None:
            raise ValueError("ProblemChecker needs an engine or a lookup")
        self.engine = engine
        self.lookup: ProductLookup = lookup if lookup is not None else engine
        self.discriminative = discriminative and engine is not None
        self.shortcut = shortcut and engine is not None
        self._seen: dict[str, str] = {}
        self.report = CheckReport()

    def check(self, problem: Problem, names: Sequence[str] | None = None) -> CheckOutcome:
        """Check one problem and record the outcome in :attr:`report`."""
        reasons = []
        key = normalize_query(problem.query)
        if key in self._seen:
            reasons.append(f"unique: duplicate of problem {self._seen[key]}")
        reasons += query_reasons(problem)
        reasons += gt_reasons(problem, self.lookup)
        if not reasons and self.discriminative:
            reasons += discriminative_reasons(problem, self.engine, self.lookup, names)
        if not reasons and self.shortcut:
            reasons += shortcut_reasons(problem, self.engine, self.lookup)
        if not reasons:
            self._seen[key] = problem.problem_id
        outcome = CheckOutcome(problem.problem_id, problem.intent.value, not reasons, reasons)
        self.report.add(outcome)
        return outcome


def check_problems(
    problems: Iterable[Problem],
    engine: SearchEngine | None,
    *,
    lookup: ProductLookup | None = None,
    names: Mapping[str, Sequence[str]] | None = None,
    discriminative: bool = True,
) -> tuple[list[Problem], CheckReport]:
    """Check a bank; returns the kept problems (in order) and the report."""
    checker = ProblemChecker(engine, lookup, discriminative=discriminative)
    kept = [p for p in problems if checker.check(p, (names or {}).get(p.problem_id)).ok]
    return kept, checker.report


# --------------------------------------------------------------------------------------------- planner card


def run_planner(
    problems: Sequence[Problem],
    engine: SearchEngine,
    *,
    knowledge: Any | None = None,
    similarity: TitleSimilarity | None = None,
    scoring_profile: str = "strict",
    max_steps: int = 30,
) -> list[Verdict]:
    """Play the rule-based ``planner`` agent on every problem and score each episode.

    Args:
        problems: The bank.
        engine: The search engine over the catalog the problems were drawn from (or planted into).
        knowledge: :class:`~shoparena.env.knowledge.KnowledgeBase` behind ``web_search`` (web problems).
        similarity: Title backend (default ``exact``: only the GT title counts).
        scoring_profile: Scoring profile.
        max_steps: Step cap per episode.

    Returns:
        One verdict per problem, in order.
    """
    from shoparena.agents.planner import PlannerAgent
    from shoparena.env.episodes import run_episode

    bench = ScoringBench(problems, engine, similarity or ExactSimilarity())
    agent = PlannerAgent()
    verdicts = []
    for problem in problems:
        trajectory = run_episode(
            agent, problem, engine, run_id="difficulty-card", max_steps=max_steps, knowledge=knowledge
        )
        verdicts.append(bench.verdict(problem, trajectory, scoring_profile))
    return verdicts


def difficulty_card(
    problems: Sequence[Problem], verdicts: Sequence[Verdict]
) -> dict[str, dict[str, list[int]]]:
    """``{intent: {difficulty: [successes, problems]}}`` including an ``all`` row per intent."""
    card: dict[str, dict[str, list[int]]] = {}
    for problem, verdict in zip(problems, verdicts, strict=True):
        row = card.setdefault(problem.intent.value, {})
        for key in (problem.difficulty or "-", "all"):
            cell = row.setdefault(key, [0, 0])
            cell[0] += int(verdict.success)
            cell[1] += 1
    return card


def render_card_markdown(card: Mapping[str, Mapping[str, Sequence[int]]]) -> str:
    """The difficulty card as a Markdown table (ASR with counts)."""
    columns = ("easy", "medium", "hard", "all")
    lines = ["| intent | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for intent in ("product", "shop", "voucher", "web"):
        if intent not in card:
            continue
        cells = []
        for col in columns:
            s, n = card[intent].get(col, (0, 0))
            cells.append(f"{s / n:.1%} ({s}/{n})" if n else "-")
        lines.append(f"| {intent} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


__all__ = [
    "CheckOutcome",
    "CheckReport",
    "ProblemChecker",
    "check_problems",
    "difficulty_card",
    "discriminative_reasons",
    "gt_reasons",
    "query_reasons",
    "recommend_trajectory",
    "render_card_markdown",
    "run_planner",
    "shortcut_reasons",
    "shortcut_trajectory",
    "violated_units",
]
