"""Runs hand the corpus typed episodes; corpus ingest is the mapping Episode → CorpusRecord (issue 50)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from shoparena.arena.episodes import envelope_log_episodes, file_episodes
from shoparena.arena.layout import ArenaRun, open_episode_run
from shoparena.corpus.ingest import ingest_run_dir
from shoparena.records.corpus import CorpusRecord, Quarantined
from shoparena.records.episode import Episode, ScoringInputs
from shoparena.runs.layout import EnvelopeLogRun
from shoparena.suites.bench import BenchCache

CORPUS = Path(__file__).resolve().parents[2] / "src" / "shoparena" / "corpus"


def _shoparena_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("shoparena."):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("shoparena."))
    return found


@pytest.mark.parametrize("path", sorted(CORPUS.glob("ingest*.py")), ids=lambda p: p.name)
def test_ingest_is_a_small_mapping(path: Path):
    """≤ 350 lines, ≤ 8 shoparena modules besides records and jsonl, and no run directory read itself."""
    assert len(path.read_text().splitlines()) <= 350
    lower = ("shoparena.records", "shoparena.jsonl")
    others = {m for m in _shoparena_imports(path) if not m.startswith(lower)}
    assert len(others) <= 8, sorted(others)
    tree = ast.parse(path.read_text())
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    assert not names & {"ArenaRun", "open_run", "iter_raw_lines", "iter_jsonl", "read_yaml_record"}


def test_structural_evidence_is_the_arenas():
    assert not (CORPUS / "structure.py").exists()
    evidence = _shoparena_imports(CORPUS.parent / "arena" / "evidence.py")
    assert evidence and not any(m.startswith("shoparena.corpus") for m in evidence)


def test_an_arena_run_hands_out_episodes_with_their_evidence(firehose_dir: Path):
    run = ArenaRun.open(firehose_dir / "race-000")
    items = list(run.read_episodes())
    episodes = [e for e in items if isinstance(e, Episode)]
    assert episodes and len(items) == sum(len(run.envelopes(a)) for a in run.agents())
    for episode in episodes:
        assert episode.origin.source_format == "arena_run" and episode.origin.agent in run.agents()
        assert episode.origin.race_id and episode.origin.run_id == f"{run.run_id}/{episode.origin.agent}"
        assert episode.trusted_log is not None or episode.log_problem
        assert episode.miner is not None and episode.miner == run.miner_truth(episode.origin.agent)
        assert episode.verdict == run.verdicts(episode.origin.agent).get(episode.problem_id)
        assert episode.trajectory.problem_id == episode.problem_id
    inputs = run.scoring_inputs()
    assert isinstance(inputs, ScoringInputs) and inputs.suite == run.config().suite


def test_an_eval_run_hands_out_episodes_read_through_its_own_handle(shop_world, tmp_path: Path):
    from shoparena.eval.config import EvalConfig
    from shoparena.eval.layout import EvalRun
    from shoparena.eval.run import run_eval

    out = tmp_path / "ev"
    run_eval(EvalConfig(policy="planner", suite=shop_world.mixed, index=shop_world.index, out=out))
    run = EvalRun.open(out)
    episodes = list(run.read_episodes())
    assert episodes and all(isinstance(e, Episode) for e in episodes)
    assert [e.origin.run_id for e in episodes] == [f"{run.run_id}/eval"] * len(episodes)
    # The runs layer's handle (what the corpus gets below eval) reads the same episodes and scoring inputs.
    generic = EnvelopeLogRun.open(out)
    assert list(envelope_log_episodes(generic)) == episodes
    assert generic.scoring_inputs() == run.scoring_inputs()
    assert run.scoring_inputs() == ScoringInputs(
        suite=str(run.config().suite), index=str(run.config().index), similarity="lexical"
    )
    # A --from file of the same envelopes: the same trajectories, another run id.
    from_file = list(file_episodes(run.envelope_log, "file-x"))
    assert [e.trajectory for e in from_file] == [e.trajectory for e in episodes]


def test_a_file_line_that_is_no_episode_is_quarantined_naming_it(tmp_path: Path):
    path = tmp_path / "in.jsonl"
    path.write_text('not json\n{"problem_id": 3}\n')
    items = list(file_episodes(path, "file-in"))
    assert [type(i) for i in items] == [Quarantined, Quarantined]
    assert items[0].line == 1 and items[0].reason.startswith("invalid JSON")
    assert items[1].line == 2 and items[1].field and items[1].reason


def test_ingest_opens_a_run_directory_once(firehose_dir: Path, monkeypatch: pytest.MonkeyPatch):
    import shoparena.runs.layout as layout
    import shoparena.runs.manifest as manifest

    reads: list[Path] = []
    original = manifest.read_manifest_data

    def counted(run_dir, *args, **kwargs):
        reads.append(Path(run_dir))
        return original(run_dir, *args, **kwargs)

    monkeypatch.setattr(layout, "read_manifest_data", counted)
    monkeypatch.setattr(manifest, "read_manifest_data", counted)
    race = firehose_dir / "race-000"
    records: list[CorpusRecord | Quarantined] = []
    ingest_run_dir(race, records.append, BenchCache())
    assert [r for r in reads if r == race] == [race] and records  # (the index has a manifest too)
    notes: list[str] = []
    assert isinstance(open_episode_run(race, notes), ArenaRun) and not notes
