"""Fixtures: the tiny Qwen3 folder, built once per session (skips cleanly without the train extra)."""

from __future__ import annotations

from pathlib import Path

import pytest
from models_support import MISSING, SKIP_REASON


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny Qwen3 built with seed 0 (read-only for tests: copy it before changing anything)."""
    if MISSING:
        pytest.skip(SKIP_REASON)
    from shoparena.models.tiny import build_tiny_qwen3

    return build_tiny_qwen3(tmp_path_factory.mktemp("models") / "tiny-qwen3", seed=0)


@pytest.fixture(scope="session")
def tiny_tokenizer(tiny_dir: Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_dir)


@pytest.fixture(scope="session")
def tiny_backend(tiny_dir: Path):
    """One backend (model loaded once) shared by the generation tests."""
    from shoparena.llm.transformers_backend import TransformersBackend

    return TransformersBackend(tiny_dir, device="cpu")
