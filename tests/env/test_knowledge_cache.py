"""suite_knowledge builds the knowledge base once per engine and page files, and notices a changed file."""

from __future__ import annotations

import json
import os
from pathlib import Path

from shoparena.env.episodes import suite_knowledge
from shoparena.env.knowledge import knowledge_path_for


class _Engine:
    """The one thing suite_knowledge reads from an engine: its products (none here: pages come from files)."""

    def iter_products(self):
        return iter(())


def _page(url: str, title: str) -> str:
    return json.dumps({"url": url, "title": title, "content": f"{title} content"}) + "\n"


def test_same_engine_and_files_reuse_one_knowledge_base(tmp_path: Path) -> None:
    suite = tmp_path / "bank.json"
    knowledge_path_for(suite).write_text(_page("https://kb/a", "alpha brand"), encoding="utf-8")
    engine = _Engine()
    first = suite_knowledge(engine, suite)
    assert first is not None and len(first) == 1
    assert suite_knowledge(engine, suite) is first
    assert suite_knowledge(_Engine(), suite) is not first  # another engine: another catalogue


def test_a_changed_sidecar_or_extra_file_is_read_again(tmp_path: Path) -> None:
    suite = tmp_path / "bank.json"
    sidecar = knowledge_path_for(suite)
    sidecar.write_text(_page("https://kb/a", "alpha brand"), encoding="utf-8")
    engine = _Engine()
    first = suite_knowledge(engine, suite)
    sidecar.write_text(
        _page("https://kb/a", "alpha brand") + _page("https://kb/b", "beta brand"), encoding="utf-8"
    )
    os.utime(sidecar, ns=(1, 1))  # a new stamp even on a coarse clock
    second = suite_knowledge(engine, suite)
    assert second is not first and len(second) == 2
    extra = tmp_path / "extra.jsonl"
    extra.write_text(_page("https://kb/c", "gamma brand"), encoding="utf-8")
    third = suite_knowledge(engine, suite, [extra])
    assert third is not second and len(third) == 3
    assert [p.title for p in third.search("gamma")] == ["gamma brand"]


def test_suites_without_a_sidecar_share_the_catalogue_pages(tmp_path: Path) -> None:
    engine = _Engine()
    extra = tmp_path / "extra.jsonl"
    extra.write_text(_page("https://kb/c", "gamma brand"), encoding="utf-8")
    first = suite_knowledge(engine, tmp_path / "race-000" / "suite.json", [extra])
    assert suite_knowledge(engine, tmp_path / "race-001" / "suite.json", [extra]) is first
