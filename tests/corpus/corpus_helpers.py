"""Shared data for the corpus tests (a module of its own: ``conftest`` names clash across test folders)."""

from __future__ import annotations

from pathlib import Path

SN15_ROWS = Path("/work/shared/data/oro/sft_corpus_prefix_examples.jsonl")
