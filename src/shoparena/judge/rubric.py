"""A mechanical, offline version of the four-gate rubric (no model calls).

It computes the same gates as the LLM judge from the same :class:`JudgeInput`, with string heuristics that are
documented in ``docs/judge.md``. It is a cheap baseline, a second opinion for calibration, and the judge for
tests; it does not understand language, so it can be fooled by an agent that pastes data into its thinking.
"""

from __future__ import annotations

import functools
import re

from pydantic import BaseModel, ConfigDict, Field

from shoparena.judge.records import (
    SCORE_BINS,
    CallKind,
    Candidate,
    JudgeInput,
    JudgeStatus,
    JudgeVerdict,
    ResultFacts,
)
from shoparena.records.tools import FIND_PRODUCT, VIEW_PRODUCT

TOOL_CALL_KINDS = {FIND_PRODUCT: CallKind.SEARCH, VIEW_PRODUCT: CallKind.VIEW}
COMPARATIVE_WORDS = (
    "better", "best", "cheaper", "cheapest", "lower", "lowest", "higher", "highest", "more", "less", "fewer",
    "prefer", "prefers", "preferred", "rather", "instead", "whereas", "while", "but", "than", "vs", "versus",
    "over", "wins", "beats", "closest", "closer", "only", "unlike", "compared", "lacks", "missing",
    "exceeds", "outside", "within", "matches", "doesn't", "does not", "not",
)
_COMPARATIVE_RE = re.compile(
    r"(?<![a-z])(?:" + "|".join(re.escape(w) for w in COMPARATIVE_WORDS) + r")(?![a-z])"
)
_TOKEN_RE = re.compile(r"[a-z0-9]+")


class RubricConfig(BaseModel):
    """Thresholds of the mechanical rubric."""

    model_config = ConfigDict(extra="forbid")

    min_completion_tokens: int = Field(default=30, ge=0, description="G1: tokens of one inference call.")
    min_candidates: int = Field(default=2, ge=2, description="G4: candidates one step must name.")
    verify_against_proxy: bool = Field(
        default=True,
        description="Product ids count only if the proxy log returned them, and find/view results count "
        "only if the proxy log shows such a call succeeding (defeats fabricated tool results).",
    )


# Cached: a race judges thousands of answers against the same ids and prices, and re's own cache (512
# patterns) thrashes on that many distinct tokens.
@functools.lru_cache(maxsize=16384)
def _word_pattern(token: str) -> re.Pattern[str]:
    return re.compile(r"(?<![a-z0-9])" + re.escape(token) + r"(?![a-z0-9])")


@functools.lru_cache(maxsize=16384)
def _price_pattern(price: str) -> re.Pattern[str]:
    whole, _, frac = price.partition(".")
    digits = f"{int(whole):,}" if whole.isdigit() else whole
    body = f"(?:{re.escape(whole)}|{re.escape(digits)})"
    tail = rf"\.{re.escape(frac)}0*" if frac else r"(?:\.0+)?"
    return re.compile(r"(?<![\d.,])" + body + tail + r"(?![\d])")


def _mentioned(text: str, token: str, *, price: bool = False) -> bool:
    if not token:
        return False
    pattern = _price_pattern(token) if price else _word_pattern(token)
    return pattern.search(text) is not None


class _Pool:
    """Facts from the tool results seen so far, filtered by what the proxy log can vouch for."""

    def __init__(self, trusted_ids: set[str], verify: bool, catalogue_ok: set[CallKind]) -> None:
        self.trusted_ids = trusted_ids
        self.verify = verify
        self.catalogue_ok = catalogue_ok
        self.product_ids: dict[str, None] = {}
        self.other_ids: dict[str, None] = {}
        self.prices: dict[str, None] = {}
        self.values: dict[str, None] = {}
        self.title_words: dict[str, None] = {}
        self.candidates: list[Candidate] = []

    def add(self, tool_name: str, facts: ResultFacts) -> None:
        kind = TOOL_CALL_KINDS.get(tool_name)
        if self.verify and kind is not None and kind not in self.catalogue_ok:
            return  # the agent claims a catalogue result the proxy never served
        for pid in facts.product_ids:
            if not self.verify or pid.lower() in self.trusted_ids:
                self.product_ids[pid.lower()] = None
        self.other_ids.update(dict.fromkeys(facts.other_ids))
        self.prices.update(dict.fromkeys(facts.prices))
        self.values.update(dict.fromkeys(facts.values))
        self.title_words.update(dict.fromkeys(facts.title_words))
        self.candidates += [
            c for c in facts.candidates
            if not self.verify or not c.product_id or c.product_id.lower() in self.trusted_ids
        ]

    def __bool__(self) -> bool:
        return bool(self.product_ids or self.other_ids or self.prices or self.values or self.title_words)

    def data_cited(self, think: str, query: str) -> list[str]:
        """Ids, prices and attribute values from results that the thinking cites (and the query lacks)."""
        cited = [t for t in (*self.product_ids, *self.other_ids, *self.values)
                 if _mentioned(think, t) and not _mentioned(query, t)]
        cited += [p for p in self.prices
                  if _mentioned(think, p, price=True) and not _mentioned(query, p, price=True)]
        return cited

    def result_words(self, think: str, query: str) -> list[str]:
        return [w for w in self.title_words if _mentioned(think, w) and not _mentioned(query, w)]

    def candidates_named(self, think: str) -> list[str]:
        """Distinct candidates the thinking names, by id or by a 3-word run unique to one title."""
        keyed: dict[str, Candidate] = {}
        for candidate in self.candidates:
            keyed.setdefault(candidate.product_id or candidate.title.lower(), candidate)
        grams: dict[str, set[tuple[str, ...]]] = {}
        for key, candidate in keyed.items():
            tokens = _TOKEN_RE.findall(candidate.title.lower())
            grams[key] = {tuple(tokens[i:i + 3]) for i in range(len(tokens) - 2)}
        think_tokens = _TOKEN_RE.findall(think)
        think_grams = {tuple(think_tokens[i:i + 3]) for i in range(len(think_tokens) - 2)}
        named = []
        for key, candidate in keyed.items():
            if candidate.product_id and _mentioned(think, candidate.product_id.lower()):
                named.append(key)
                continue
            others = set().union(*(g for k, g in grams.items() if k != key)) if len(grams) > 1 else set()
            if (grams[key] - others) & think_grams:
                named.append(key)
        return named


class RubricJudge:
    """Offline judge: G1 from the trusted log, G2-G4 from thinking versus earlier tool results.

    Args:
        config: Thresholds.
        name: Judge name stamped on verdicts.
    """

    def __init__(self, config: RubricConfig | None = None, *, name: str = "rubric") -> None:
        self.config = config or RubricConfig()
        self.name = name

    def judge(self, judge_input: JudgeInput, *, problem_id: str | None = None) -> JudgeVerdict:
        """Grade one trajectory (always status ``ok``)."""
        cfg = self.config
        trusted = judge_input.trusted
        query = judge_input.query.lower()
        evidence: dict[str, object] = {"max_completion_tokens": trusted.max_completion_tokens}
        gates = {"G1": trusted.max_completion_tokens >= cfg.min_completion_tokens}

        catalogue_ok = {kind for kind, count in ((CallKind.SEARCH, trusted.searches),
                                                 (CallKind.VIEW, trusted.views)) if count}
        pool = _Pool({i.lower() for i in trusted.all_product_ids}, cfg.verify_against_proxy, catalogue_ok)
        g2_hits: list[tuple[int, list[str]]] = []
        g3_hits: list[tuple[int, list[str]]] = []
        g4_hits: list[tuple[int, list[str], list[str]]] = []
        for step in judge_input.steps:
            think = step.think.lower()
            if think and pool:
                data = pool.data_cited(think, query)
                words = pool.result_words(think, query)
                if data or words:
                    g2_hits.append((step.index, data + words))
                if data:
                    g3_hits.append((step.index, data))
                    named = pool.candidates_named(think)
                    comparatives = sorted(set(_COMPARATIVE_RE.findall(think)))
                    if len(named) >= cfg.min_candidates and comparatives:
                        g4_hits.append((step.index, named, comparatives))
            for tool in step.tools:
                if tool.has_result:
                    pool.add(tool.name, tool.facts)
        gates["G2"] = bool(g2_hits)
        gates["G3"] = bool(g3_hits)
        gates["G4"] = bool(g4_hits)
        if g2_hits:
            evidence["G2"] = {"step": g2_hits[0][0], "matched": g2_hits[0][1][:10]}
        if g3_hits:
            evidence["G3"] = {"step": g3_hits[0][0], "matched": g3_hits[0][1][:10]}
        if g4_hits:
            evidence["G4"] = {"step": g4_hits[0][0], "candidates": g4_hits[0][1][:10],
                              "comparatives": g4_hits[0][2]}
        score, explanation = self._score(gates, evidence, cfg)
        return JudgeVerdict(problem_id=problem_id, judge=self.name, status=JudgeStatus.OK, score=score,
                            explanation=explanation, gates=gates, evidence=evidence)

    @staticmethod
    def _score(gates: dict[str, bool], evidence: dict[str, object], cfg: RubricConfig) -> tuple[float, str]:
        reasons = {
            "G1": f"no inference call with >= {cfg.min_completion_tokens} completion tokens "
                  f"(largest {evidence['max_completion_tokens']})",
            "G2": "no thinking step mentions anything from earlier tool results",
            "G3": "the thinking cites no id, price or attribute value from the results",
            "G4": f"no step names {cfg.min_candidates}+ candidates with a data-backed preference",
        }
        for number, gate in enumerate(("G1", "G2", "G3", "G4")):
            if not gates[gate]:
                return SCORE_BINS[number], f"Gate {number + 1} failed: {reasons[gate]}."
        g4 = evidence["G4"]
        assert isinstance(g4, dict)
        return SCORE_BINS[4], (f"All gates passed: step {g4['step']} compares "
                               f"{', '.join(g4['candidates'][:3])}.")
