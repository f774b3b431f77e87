"""Shared data for the corpus tests (a module of its own: ``conftest`` names clash across test folders)."""

from __future__ import annotations

from world import SHARED_DATA

SN15_ROWS = SHARED_DATA / "oro" / "sft_corpus_prefix_examples.jsonl"
