"""Trajectory corpus: arena firehose → canonical records → structural filter → gates → recovery → leak-guarded
split → HF ``datasets`` views (see docs/corpus.md and the corpus contract).

The names below load on first use, so that ``train`` can read the view table (:mod:`.views`) without
importing the whole build (ingest, the arena, the judge).
"""

from __future__ import annotations

from typing import Any

__all__ = ["CorpusConfig", "FilterConfig", "GateConfig", "SplitConfig", "build_corpus"]


def __getattr__(name: str) -> Any:
    if name == "build_corpus":
        from shoparena.corpus.build import build_corpus

        return build_corpus
    if name in __all__:
        from shoparena.corpus import config

        return getattr(config, name)
    raise AttributeError(f"module 'shoparena.corpus' has no attribute {name!r}")
