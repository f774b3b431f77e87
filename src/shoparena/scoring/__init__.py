"""Scorers compatible with ShoppingBench (``shoppingbench``) and ORO (``strict``), with explained verdicts."""

from shoparena.scoring.aggregate import AggregateReport, compute_aggregate
from shoparena.scoring.format_reward import (
    format_reward,
    length_reward,
    render_step,
    step_format,
    trajectory_format,
)
from shoparena.scoring.lookup import DictLookup, ProductLookup, plant_products, planted_product
from shoparena.scoring.profiles import PROFILES, SHOPPINGBENCH, STRICT, ScoringProfile, get_profile
from shoparena.scoring.rules import score_slot
from shoparena.scoring.scorer import RunScore, match_trajectories, score_run, score_trajectory
from shoparena.scoring.similarity import (
    EmbeddingSimilarity,
    ExactSimilarity,
    LexicalSimilarity,
    TitleSimilarity,
    get_similarity,
)

__all__ = [
    "PROFILES",
    "SHOPPINGBENCH",
    "STRICT",
    "AggregateReport",
    "DictLookup",
    "EmbeddingSimilarity",
    "ExactSimilarity",
    "LexicalSimilarity",
    "ProductLookup",
    "RunScore",
    "ScoringProfile",
    "TitleSimilarity",
    "compute_aggregate",
    "format_reward",
    "get_profile",
    "get_similarity",
    "length_reward",
    "match_trajectories",
    "plant_products",
    "planted_product",
    "render_step",
    "score_run",
    "score_slot",
    "score_trajectory",
    "step_format",
    "trajectory_format",
]
