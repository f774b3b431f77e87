"""The one run-directory manifest: typed round trip, atomic writes, empty or torn manifests, kinds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shoparena.runs.manifest import (
    ArenaAgentRef,
    ArenaManifest,
    EpisodesManifest,
    FileRef,
    ManifestError,
    RunManifest,
    StageRecord,
    load_or_new,
    new_run_id,
    read_manifest,
    write_manifest,
)


def test_typed_round_trip_of_every_common_shape(tmp_path: Path) -> None:
    suite = tmp_path / "suite.json"
    suite.write_text("[]")
    arena = ArenaManifest(
        inputs={"suite": FileRef.of(suite)},
        suite_problems=3,
        agents={"a": ArenaAgentRef.of(suite, name="agents/a.py")},
        isolation={"backend": "bwrap", "mechanisms": ["net-namespace(proxy-only)"]},
        notes=["n"],
    )
    write_manifest(arena, tmp_path / "arena")
    back = read_manifest(tmp_path / "arena", ArenaManifest)
    assert back == arena and back.kind == "arena" and back.agents["a"].path == "agents/a.py"
    assert back.inputs["suite"].sha256 == "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"
    # Subclasses are readable as the common header too (what the corpus needs: kind, run id, inputs).
    header = read_manifest(tmp_path / "arena")
    assert type(header) is RunManifest and header.run_id == arena.run_id and header.inputs == arena.inputs
    episodes = EpisodesManifest(agent="planner", suite_size=2, suite_hash="ab")
    episodes.stages["episodes"] = StageRecord(name="episodes", config_hash="c", completed_at=1.0, seconds=0.5)
    write_manifest(episodes, tmp_path / "ep")
    assert read_manifest(tmp_path / "ep", EpisodesManifest) == episodes
    assert not list((tmp_path / "ep").glob("*.tmp"))  # the temporary file was renamed, not left behind


def test_run_ids_are_fresh_hex() -> None:
    ids = {new_run_id() for _ in range(100)}
    assert len(ids) == 100 and all(len(i) == 12 and int(i, 16) >= 0 for i in ids)


@pytest.mark.parametrize(
    ("content", "words"),
    [(b"", "empty manifest"), (b" \n", "empty manifest"), (b'{"kind": "episodes", "run_', "torn or corrupt")],
)
def test_empty_or_torn_manifest_is_a_clear_error(tmp_path: Path, content: bytes, words: str) -> None:
    (tmp_path / "manifest.json").write_bytes(content)
    with pytest.raises(ManifestError, match=words) as info:
        read_manifest(tmp_path, EpisodesManifest)
    assert str(tmp_path / "manifest.json") in str(info.value)


def test_a_wrong_field_names_the_field(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text(json.dumps({"kind": "episodes", "suite_size": "many"}))
    with pytest.raises(ManifestError, match="not a EpisodesManifest: suite_size"):
        read_manifest(tmp_path, EpisodesManifest)
    with pytest.raises(ManifestError, match="no manifest"):
        read_manifest(tmp_path / "absent")


def test_load_or_new_resumes_rebuilds_a_torn_one_and_refuses_another_kind(tmp_path: Path) -> None:
    first = load_or_new(tmp_path, EpisodesManifest, kind="episodes")
    write_manifest(first, tmp_path)
    assert load_or_new(tmp_path, EpisodesManifest, kind="episodes").run_id == first.run_id  # resume
    (tmp_path / "manifest.json").write_bytes(b"")
    rebuilt = load_or_new(tmp_path, EpisodesManifest, kind="episodes")
    assert isinstance(rebuilt, EpisodesManifest) and rebuilt.run_id != first.run_id
    write_manifest(ArenaManifest(), tmp_path)
    with pytest.raises(ManifestError, match="belongs to a 'arena' run"):
        load_or_new(tmp_path, EpisodesManifest, kind="episodes")
