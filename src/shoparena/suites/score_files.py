"""``shoparena score``'s library side: a trajectory file scored against a suite over an index (or a catalog).

The command only parses options and prints; :func:`score_file` opens the suite, the trajectories and the
product lookup, decides the format roles and runs one :class:`~shoparena.scoring.bench.ScoringBench`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shoparena.catalog.io import LoadSummary, QuarantinedLine
from shoparena.scoring.bench import ScoringBench
from shoparena.scoring.lookup import ProductLookup
from shoparena.scoring.profiles import NO_THINK_ROLES, OUTPUT_ROLES, ScoringProfile, get_profile
from shoparena.scoring.scorer import RunScore
from shoparena.suites.loaders import SuiteLoadSummary


class ScoreInputError(ValueError):
    """The suite cannot be read or holds no readable problem (one line naming the file)."""


@dataclass
class ScoredFile:
    """A scored trajectory file with what was read and what could not be."""

    result: RunScore
    suite_summary: SuiteLoadSummary
    trajectory_summary: LoadSummary
    unreadable: list[QuarantinedLine] = field(default_factory=list)

    def json_payload(self) -> dict[str, Any]:
        """``score --json``: the aggregate with the unmatched, duplicate, missing and unread counts."""
        payload = self.result.aggregate.model_dump(mode="json")
        payload["unmatched_trajectories"] = len(self.result.unmatched)
        payload["duplicate_trajectories"] = self.result.duplicates
        payload["missing_trajectories"] = self.result.missing
        payload["trajectory_lines"] = self.trajectory_summary.as_dict()
        summary = self.suite_summary
        payload["suite_records"] = {
            "read": summary.read,
            "kept": summary.kept,
            "quarantined": summary.quarantined,
        }
        return payload


def ablation_react_rule(trajectories: Path, scoring_profile: ScoringProfile) -> bool:
    """The default format roles' rule (no ``think`` role): upstream ShoppingBench's ReAct-ablation rollouts,
    recognised by ``ablation_react`` in the file name under the ``shoppingbench`` profile. An explicit
    ``no_think`` overrides it; it is never applied silently elsewhere."""
    return scoring_profile.name == "shoppingbench" and "ablation_react" in trajectories.name


def open_lookup(index: Path) -> ProductLookup:
    """A search index directory, or (for small fixtures) a catalog JSONL file read into memory."""
    if index.is_dir():
        from shoparena.search import SearchIndex

        return SearchIndex.open(index)
    from shoparena.catalog.io import iter_products
    from shoparena.scoring.lookup import DictLookup

    return DictLookup(line.product for line in iter_products(index))


def score_file(
    suite: Path,
    trajectories: Path,
    index: Path,
    *,
    scoring_profile: str | ScoringProfile = "strict",
    similarity: Any = "lexical",
    threshold: float | None = None,
    no_think: bool | None = None,
) -> ScoredFile:
    """Score ``trajectories`` (ORO envelopes or SB rollouts) against ``suite`` under ``scoring_profile``.

    ``no_think``: format roles without ``think``; None applies :func:`ablation_react_rule`. ``similarity``: a
    backend or its name.

    Raises:
        ValueError: an unknown profile; :class:`ScoreInputError`: no readable suite;
        :class:`~shoparena.jsonl.JsonlReadError`: byte-level damage in the trajectory file.
    """
    from shoparena.formats.io import read_trajectories
    from shoparena.suites.loaders import SuiteLoadError, load_suite

    profile = get_profile(scoring_profile)
    try:
        problems, suite_summary = load_suite(suite)
    except SuiteLoadError as exc:
        raise ScoreInputError(f"cannot read the suite: {exc}") from None
    if not problems:
        read, quarantined = suite_summary.read, suite_summary.quarantined
        raise ScoreInputError(f"{suite}: no readable problems (read {read}, quarantined {quarantined})")
    if no_think is None:
        no_think = ablation_react_rule(trajectories, profile)
    traj_summary = LoadSummary(path=str(trajectories))
    unreadable: list[QuarantinedLine] = []
    runs = list(read_trajectories(trajectories, summary=traj_summary, quarantine=unreadable.append))
    result = ScoringBench(problems, open_lookup(index), similarity).score_run(
        runs,
        profile,
        problems,
        title_threshold=threshold,
        format_roles=NO_THINK_ROLES if no_think else OUTPUT_ROLES,
    )
    return ScoredFile(result, suite_summary, traj_summary, unreadable)


__all__ = ["ScoreInputError", "ScoredFile", "ablation_react_rule", "open_lookup", "score_file"]
