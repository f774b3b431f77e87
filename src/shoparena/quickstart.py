"""The main job on the embedded default (``make run``): the whole pipeline, small, offline, resumable.

Stages: synthesise a catalog, index it, show example searches, and (as components land) build a suite, run the
reference agent over it and score the trajectories with both profiles. Each stage records its config hash in
the run's manifest, so re-running the same command resumes.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from rich.console import Console
from rich.table import Table

from shoparena.runs import RunDir

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
        record = run.complete("catalog", synth_cfg.model_dump(), started, {"path": str(catalog_path),
                                                                              "summary": _as_dict(synth)})
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

    run.write_summary(summary)
    console.print(f"[green]run directory: {run.path}")
    return summary


def example_queries(index: Any, count: int, seed: int) -> list[dict[str, str]]:
    """Queries a shopper might type: 3-4 words of sampled product titles, with a filter each."""
    import random

    rng = random.Random(seed)
    queries = []
    for i in range(count):
        product = index.product_dict(rng.randrange(len(index)))
        title = product["title"]
        words = [w for w in title.split() if w.isalpha()]
        queries.append({"q": " ".join(words[-4:] or title.split()[:4]),
                        **EXAMPLE_FILTERS[i % len(EXAMPLE_FILTERS)]})
    return queries


def _as_dict(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if hasattr(value, "__dataclass_fields__"):
        from dataclasses import asdict

        return asdict(value)
    return value
