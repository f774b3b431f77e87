"""The synthetic-data baseline (ShoppingBench's rejection sampling → SFT): the reference planner's own
episodes on the corpus's training problems, kept where the strict scorer says they succeed, rendered like
the corpus.

Nothing here is a parallel path: the episodes are an ``eval run`` of the planner (``shoparena.eval``), and the
corpus is ``corpus build`` over that run directory (ingest, the strict success gate, the leak-guarded split,
the views under the corpus's render profile), so training reads it through the same selection, rendering and
chat-template drift guard as the firehose corpus. The one difference is
``filter.trusted_teacher``: a planner in this process has no proxy log to prove its turns model-authored, and
needs none, so the structural checks are skipped and every assistant turn is trained.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: The synthetic corpus's gates: no judge (an eval run has no verdicts; the teacher's reasoning is code), the
#: strict scorer decides (rejection sampling), and every problem stays on the train side (the problems are
#: already the firehose corpus's train split).
SYNTHETIC_CORPUS_OPTIONS: dict[str, Any] = {
    "filter": {"trusted_teacher": True},
    "gates": {"judge_bar": None, "success_profile": "strict"},
    "split": {"eval_fraction": 0.0},
    "recover": False,
}


def corpus_train_suite(corpus: str | Path, out: str | Path, limit: int | None = None) -> Path:
    """The corpus's TRAIN problems (``problems.json``, at most ``limit``) as a suite file at ``out``: the
    problems a student trained on this corpus has seen.

    Raises:
        ValueError: the corpus has no train problem.
    """
    from shoparena.corpus.layout import CorpusRun

    path = CorpusRun.at(corpus).problems_path
    problems = json.loads(path.read_text(encoding="utf-8"))
    train = [
        {k: v for k, v in p.items() if k not in {"split", "cluster_id"}}
        for p in problems
        if p.get("split") == "train"
    ]
    if not train:
        raise ValueError(f"{path}: no problem of the train split")
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(train[:limit] if limit else train, indent=1), encoding="utf-8")
    return target


def synthetic_corpus(
    *,
    suite: str | Path,
    index: str | Path,
    out: str | Path,
    render_profile: str,
    agent: str = "planner",
    max_steps: int = 30,
    similarity: str = "lexical",
    tokenizer: str | None = None,
) -> dict[str, Any]:
    """Play ``agent`` (an ``eval run`` policy spec; the reference planner by default) once per problem of
    ``suite``, greedy, and build a corpus of its episodes in ``out/corpus`` under ``render_profile`` (the
    firehose corpus's), kept where it succeeds under the strict scorer. Resumable: both steps are run
    directories that a re-run continues or returns.

    Returns:
        ``path`` (the corpus), ``episodes`` (the eval run), ``funnel`` (the corpus report's) and ``kept``.
    """
    from shoparena.corpus import CorpusConfig, build_corpus
    from shoparena.eval.config import EvalConfig
    from shoparena.eval.run import run_eval

    root = Path(out)
    episodes = root / "episodes"
    config = EvalConfig(
        policy=agent,
        suite=Path(suite),
        index=Path(index),
        out=episodes,
        samples=1,
        temperature=0.0,
        max_steps=max_steps,
        similarity=similarity,
        progress=False,
    )
    run_eval(config, restart="changed")
    corpus = CorpusConfig.model_validate(
        {
            **SYNTHETIC_CORPUS_OPTIONS,
            "run_dirs": [episodes],
            "out": root / "corpus",
            "render_profile": render_profile,
            "tokenizer": tokenizer,
        }
    )
    report = build_corpus(corpus, restart="changed")
    return {
        "path": str(corpus.out),
        "episodes": str(episodes),
        "funnel": report.funnel.model_dump(mode="json"),
        "kept": report.funnel.kept,
    }


__all__ = ["SYNTHETIC_CORPUS_OPTIONS", "corpus_train_suite", "synthetic_corpus"]
