"""``shoparena catalog ...``: synthesise, validate and index catalogs in the upstream format."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

from shoparena.cli._guards import refuse_output_over_input
from shoparena.runs.output import jsonl_with_keys

catalog_app = typer.Typer(help="Catalogs in the upstream documents.jsonl[.gz] format.", no_args_is_help=True)
console = Console(stderr=True)


@catalog_app.command("validate")
def validate(
    path: Path = typer.Argument(..., exists=True, dir_okay=False, help="documents.jsonl or .jsonl.gz"),
    quarantine: Path | None = typer.Option(None, help="Write bad lines here (JSONL: line_no, reason, raw)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Stream-validate a catalog: counts read / kept / quarantined, with reasons."""
    from shoparena.catalog.io import LoadSummary, iter_products
    from shoparena.jsonl import LineWriter

    refuse_output_over_input(
        quarantine, path, option="--quarantine", own=jsonl_with_keys("line_no", "reason", "raw")
    )
    summary = LoadSummary(path=str(path))
    # A temporary name renamed when complete: a failed read leaves an existing file as it was.
    qfh = LineWriter(quarantine) if quarantine else None
    try:
        sink = (lambda q: qfh.write(q.to_json())) if qfh else None
        for _ in iter_products(path, summary=summary, quarantine=sink):
            pass
    except BaseException:
        if qfh:
            qfh.discard()
        raise
    if qfh:
        qfh.close()
    if as_json:
        typer.echo(json.dumps(summary.as_dict()))
    else:
        console.print(
            f"read {summary.read}  kept {summary.kept}  quarantined {summary.quarantined}  {summary.reasons}"
        )
    if summary.quarantined:
        raise typer.Exit(code=1)


# --- further catalog commands (synth, index, plant) are added below this line ---


@catalog_app.command("synth")
def synth(
    products: int = typer.Option(..., "--products", "-n", min=0, help="Number of products."),
    seed: int = typer.Option(0, help="Seed; the same seed writes a byte-identical file."),
    out: Path = typer.Option(..., "--out", "-o", dir_okay=False, help="documents.jsonl or .jsonl.gz"),
    workers: int | None = typer.Option(
        None, min=1, help="Generator processes (default: one per CPU; the output never depends on it)."
    ),
    chunk_size: int = typer.Option(5000, min=1, help="Products per seeded chunk."),
    shops: int | None = typer.Option(None, min=1, help="Shop table size (default products // 16)."),
    stats: bool = typer.Option(False, "--stats", help="Print texture statistics (JSON) after writing."),
) -> None:
    """Write a deterministic synthetic catalog in the upstream format, with a progress bar."""
    from shoparena.catalog.synth import SynthConfig, synth_stats, synthesize_catalog

    refuse_output_over_input(out)
    config = SynthConfig(products=products, seed=seed, workers=workers, chunk_size=chunk_size, shops=shops)
    summary = synthesize_catalog(config, out, progress=True)
    console.print(
        f"wrote {summary.products} products to {summary.path} ({summary.bytes_written} bytes) "
        f"in {summary.seconds:.1f}s ({summary.products_per_second:.0f}/s, {summary.workers} workers)"
    )
    if stats:
        typer.echo(synth_stats(out).model_dump_json())


@catalog_app.command("index")
def index(
    path: Path = typer.Argument(..., exists=True, dir_okay=False, help="documents.jsonl or .jsonl.gz"),
    out: Path = typer.Option(..., "--out", file_okay=False, help="Index directory to write."),
    k1: float = typer.Option(0.9, help="BM25 k1 (Pyserini default)."),
    b: float = typer.Option(0.4, help="BM25 b (Pyserini default)."),
    as_json: bool = typer.Option(False, "--json", help="Print the build statistics as JSON."),
) -> None:
    """Build the BM25 search index of a catalog (bad and duplicate lines go to OUT/quarantine.jsonl)."""
    from shoparena.search.index import IndexBuildError, build_index

    refuse_output_over_input(out, path, folder=True)
    try:
        stats = build_index(path, out, k1=k1, b=b, progress=not as_json)
    except IndexBuildError as exc:
        raise typer.BadParameter(str(exc), param_hint="--out") from None
    if as_json:
        typer.echo(stats.model_dump_json())
    else:
        console.print(
            f"indexed {stats.docs:,} products ({stats.quarantined:,} quarantined) into {out}: "
            f"{stats.terms:,} terms, {stats.postings:,} postings, {stats.index_bytes / 1e6:.1f} MB "
            f"in {stats.build_seconds:.1f}s"
        )


@catalog_app.command("plant")
def plant(
    suite: list[Path] = typer.Option(
        ..., "--suite", exists=True, dir_okay=False, help="Upstream problem file (SB/ORO); repeat."
    ),
    catalog: Path = typer.Option(..., "--catalog", exists=True, dir_okay=False, help="Input catalog."),
    out: Path = typer.Option(..., "--out", "-o", dir_okay=False, help="Output catalog (.jsonl[.gz])."),
    distractors: int = typer.Option(2, "--distractors", min=0, help="Near-miss distractors per slot."),
    seed: int = typer.Option(0, help="Seed of voucher price splits and violation order."),
    as_json: bool = typer.Option(False, "--json", help="Print the plant report as JSON."),
) -> None:
    """Plant upstream problems: input catalog + GT products + distractors violating one constraint each."""
    from shoparena.suites.planting import plant_catalog

    refuse_output_over_input(out, catalog, *suite)
    report = plant_catalog(suite, catalog, out, distractors=distractors, seed=seed)
    if as_json:
        typer.echo(json.dumps(report.as_dict()))
    else:
        console.print(
            f"planted {report.planted_problems}/{report.problems} problems into {out}: "
            f"{report.gt_products} GT products, {report.distractors} distractors {report.violations}, "
            f"{report.already_in_catalog} GT already in the catalog, {report.catalog_lines} lines copied"
        )
        for line in report.failed:
            console.print(f"[red]not planted[/red] {line}", highlight=False)
    if report.failed:
        raise typer.Exit(code=1)


def register(app: typer.Typer) -> None:
    app.add_typer(catalog_app, name="catalog")
