"""Fixtures: the tiny Qwen3 (built once) and a fixture corpus over the hand catalog."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("trl")


@pytest.fixture(scope="session", autouse=True)
def _model_cache(tmp_path_factory: pytest.TempPathFactory):
    """Build model folders into a per-session cache, never the user's."""
    import os

    cache = tmp_path_factory.mktemp("xdg")
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    yield cache
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old


@pytest.fixture(scope="session")
def tiny_path(_model_cache) -> str:
    from shoparena.train.models import resolve_model

    return resolve_model("tiny")


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory, hand) -> Path:
    from corpus_fixture import write_fixture_corpus

    from shoparena.records.problem import Intent, Problem, RewardItem

    problems = [
        Problem(
            problem_id=f"p{i}",
            query=q,
            intent=Intent.PRODUCT,
            category="Product",
            reward=[RewardItem(product_id="101", title=["Nike Running Shoes Breathable"])],
        )
        for i, q in enumerate(["running shoes from nike", "nike shoes with free shipping"])
    ]
    return write_fixture_corpus(tmp_path_factory.mktemp("corpus"), hand.index, problems)


@pytest.fixture(scope="session")
def primed_tiny_path(tmp_path_factory: pytest.TempPathFactory, tiny_path, corpus) -> str:
    """The tiny model after a short SFT on the corpus's steps (see ``priming.py``), built once per session."""
    from priming import prime_tiny

    return str(prime_tiny(tiny_path, corpus, tmp_path_factory.mktemp("primed-tiny")))
