"""The README is written for a user: no commit hashes, issue numbers or files a clone lacks, and it links
every guide in docs/; the docs cite no file outside the repository."""

from __future__ import annotations

import re

from world import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
GUIDES = sorted(p.name for p in (REPO / "docs").glob("*.md"))


def test_the_readme_links_every_guide():
    missing = [name for name in GUIDES if f"(docs/{name})" not in README]
    assert missing == []


def test_the_readme_has_no_commit_hash_issue_number_or_outside_file():
    assert re.findall(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b", README) == []
    assert re.findall(r"(?i)\bissues? \d+|#\d+\b", README) == []
    assert "../shared" not in README and "spec §" not in README


def test_the_docs_cite_no_file_a_clone_lacks():
    cited = {
        name: re.findall(r"\.\./shared|shared/specs|\bspec §", (REPO / "docs" / name).read_text("utf-8"))
        for name in GUIDES
    }
    assert {name: found for name, found in cited.items() if found} == {}
