"""Trajectory corpus: arena firehose → canonical records → structural filter → gates → recovery → leak-guarded
split → HF ``datasets`` views (see docs/corpus.md and the corpus contract)."""

from shoparena.corpus.build import build_corpus
from shoparena.corpus.config import CorpusConfig, FilterConfig, GateConfig, SplitConfig

__all__ = ["CorpusConfig", "FilterConfig", "GateConfig", "SplitConfig", "build_corpus"]
