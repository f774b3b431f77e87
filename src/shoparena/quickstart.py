"""The main job on the embedded default (``make run``): the whole pipeline, small, offline, resumable.

Stages: synthesise a catalog, index it, show example searches, synthesise a checked problem bank of all
four intents, run the rule-based reference agent over it and score the trajectories with both profiles. Each
stage records its config hash in the run's manifest, so re-running the same command resumes.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from rich.console import Console
from rich.table import Table

from shoparena.runs import RunDir
from shoparena.runs.rundir import config_hash

#: Filters shown with the example searches; the query words come from sampled catalog titles.
EXAMPLE_FILTERS: tuple[dict[str, str], ...] = (
    {},
    {"price": "100-2000", "sort": "priceasc"},
    {"service": "COD"},
)


class QuickstartConfig(BaseModel):
    """Knobs of the embedded default run."""

    model_config = ConfigDict(extra="forbid")

    products: int = Field(default=5000, ge=100, description="Synthetic catalog size.")
    seed: int = 42
    workers: int = Field(default=2, ge=1)
    example_searches: int = Field(default=3, ge=0, description="Example searches built from catalog titles.")
    problems: int = Field(
        default=120, ge=4, description="Synthesised problems (split over the four intents)."
    )
    episode_workers: int = Field(default=2, ge=1, description="Threads running the reference agent.")
    similarity: str = Field(default="lexical", description="Title backend for scoring (exact | lexical).")


def _print_hits(console: Console, query: dict[str, str], hits: list[Any]) -> None:
    table = Table(title=f"find_product {query}", show_lines=False)
    for col in ("product_id", "shop_id", "title", "price", "service", "sold"):
        table.add_column(col, overflow="fold", max_width=60 if col == "title" else None)
    for hit in hits[:5]:
        row = (hit.product_id, hit.shop_id, hit.title, f"{hit.price:.2f}", ",".join(hit.service))
        table.add_row(*row, str(hit.sold_count))
    console.print(table)


def run_quickstart(config: QuickstartConfig, out_dir: str | Path, *, console: Console | None = None) -> dict:
    """Run (or resume) the embedded default pipeline in ``out_dir`` and return its summary."""
    from shoparena.catalog.synth import SynthConfig, synthesize_catalog
    from shoparena.search import SearchIndex, build_index

    console = console or Console()
    run = RunDir(out_dir, kind="quickstart", config=config)
    summary: dict[str, Any] = {"run_dir": str(run.path)}

    catalog_path = run.path / "catalog" / "documents.jsonl.gz"
    synth_cfg = SynthConfig(products=config.products, seed=config.seed, workers=config.workers)
    record = run.done("catalog", synth_cfg.model_dump())
    if record is None or not catalog_path.exists():
        console.rule("[bold]1. synthetic catalog")
        started = time.time()
        synth = synthesize_catalog(synth_cfg, catalog_path, progress=True)
        record = run.complete(
            "catalog",
            synth_cfg.model_dump(),
            started,
            {"path": str(catalog_path), "summary": _as_dict(synth)},
        )
    else:
        console.print(f"[dim]catalog: resumed ({catalog_path})")
    summary["catalog"] = record.outputs

    index_dir = run.path / "index"
    index_cfg = {"catalog": record.config_hash, "k1": 0.9, "b": 0.4}
    record = run.done("index", index_cfg)
    if record is None or not (index_dir / "manifest.json").exists():
        console.rule("[bold]2. BM25 index")
        started = time.time()
        stats = build_index(catalog_path, index_dir, progress=True)
        record = run.complete("index", index_cfg, started, {"path": str(index_dir), "stats": _as_dict(stats)})
    else:
        console.print(f"[dim]index: resumed ({index_dir})")
    summary["index"] = record.outputs

    console.rule("[bold]3. example searches")
    index = SearchIndex.open(index_dir)
    searches = []
    for query in example_queries(index, config.example_searches, config.seed):
        hits = index.find_product(**query)
        _print_hits(console, query, hits)
        searches.append({"query": query, "hits": len(hits), "top": hits[0].product_id if hits else None})
    summary["searches"] = searches

    summary.update(_suite_episodes_scores(run, config, index, record.config_hash, console))
    run.write_summary(summary)
    console.print(f"[green]run directory: {run.path}")
    return summary


def _suite_episodes_scores(
    run: RunDir, config: QuickstartConfig, index: Any, index_hash: str, console: Console
) -> dict[str, Any]:
    """Stages 4-6: synthesise a checked suite, run the reference agent over it, score both profiles."""
    from shoparena.agents import get_agent
    from shoparena.env.episodes import run_episodes, suite_knowledge
    from shoparena.formats.io import read_trajectories
    from shoparena.scoring import get_similarity, score_run
    from shoparena.scoring.report import print_run_score
    from shoparena.suites.loaders import load_suite
    from shoparena.suites.options import SynthOptions
    from shoparena.suites.synth import synthesize_bank

    out: dict[str, Any] = {}
    suite_path = run.path / "suite" / "bank.json"
    options = SynthOptions(n=config.problems, seed=config.seed)
    suite_cfg = {"index": index_hash, **options.model_dump(mode="json")}
    record = run.done("suite", suite_cfg)
    if record is None or not suite_path.exists():
        console.rule("[bold]4. problem bank (all four intents, solvability-checked)")
        started = time.time()
        report = synthesize_bank(run.path / "index", suite_path, options)
        record = run.complete(
            "suite", suite_cfg, started, {"path": str(suite_path), "report": _as_dict(report)}
        )
        console.print(
            f"kept {report.kept} of {report.generated} generated; by intent {report.kept_by_intent}"
        )
    else:
        console.print(f"[dim]suite: resumed ({suite_path})")
    out["suite"] = record.outputs
    problems, _ = load_suite(suite_path)

    episodes_cfg = {"suite": record.config_hash, "agent": "planner"}
    # Keyed by config: an interrupted stage appends to its own file, a changed suite starts a fresh one.
    episodes_path = run.path / "episodes" / config_hash(episodes_cfg) / "output.jsonl"
    record = run.done("episodes", episodes_cfg)
    if record is None:
        console.rule("[bold]5. episodes: the rule-based planner on the bank")
        started = time.time()
        # output.jsonl is appended per problem, so an interrupted stage resumes where it stopped.
        result = run_episodes(
            get_agent("planner"),
            problems,
            index,
            episodes_path,
            workers=config.episode_workers,
            run_id=run.path.name,
            knowledge=suite_knowledge(index, suite_path),
        )
        record = run.complete(
            "episodes", episodes_cfg, started, {"path": str(episodes_path), "summary": _as_dict(result)}
        )
    else:
        console.print(f"[dim]episodes: resumed ({episodes_path})")
    out["episodes"] = record.outputs

    console.rule("[bold]6. scores (both profiles)")
    similarity = get_similarity(config.similarity)
    trajectories = list(read_trajectories(episodes_path))
    scores = {}
    for profile in ("strict", "shoppingbench"):
        result = score_run(problems, trajectories, index, profile=profile, similarity=similarity)
        verdicts_path = run.path / "scores" / f"verdicts.{profile}.jsonl"
        verdicts_path.parent.mkdir(parents=True, exist_ok=True)
        verdicts_path.write_text(
            "".join(v.model_dump_json() + "\n" for v in result.verdicts), encoding="utf-8"
        )
        print_run_score(console, result)
        agg = result.aggregate
        scores[profile] = {
            "success_rate": agg.success_rate,
            "ground_truth_rate": agg.ground_truth_rate,
            "format_score": agg.format_score,
            "field_matching": agg.field_matching,
            "per_category": {name: rep.success_rate for name, rep in agg.per_category.items()},
            "verdicts": str(verdicts_path),
        }
    out["scores"] = scores
    return out


def example_queries(index: Any, count: int, seed: int) -> list[dict[str, str]]:
    """Queries a shopper might type: 3-4 words of sampled product titles, with a filter each."""
    import random

    rng = random.Random(seed)
    queries = []
    for i in range(count):
        product = index.product_dict(rng.randrange(len(index)))
        title = product["title"]
        words = [w for w in title.split() if w.isalpha()]
        queries.append(
            {"q": " ".join(words[-4:] or title.split()[:4]), **EXAMPLE_FILTERS[i % len(EXAMPLE_FILTERS)]}
        )
    return queries


def _as_dict(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if hasattr(value, "__dataclass_fields__"):
        from dataclasses import asdict

        return asdict(value)
    return value
