"""``shoparena suite ...``: problem suites (ShoppingBench test JSONL and ORO suite JSON)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Table

from shoparena.cli._guards import refuse_output_over_input
from shoparena.cli._options import FORCE_ALIAS, field_default, field_option, restart_option, restart_or_force
from shoparena.runs.output import text_with, write_text_atomic
from shoparena.suites.options import INTENT_NAMES, SynthOptions

if TYPE_CHECKING:
    from shoparena.suites.partition import PartitionParams, PoolShortfall

suite_app = typer.Typer(
    help="Problem suites: validate, synthesise, leak clusters, partitions, rotation, audit.",
    no_args_is_help=True,
)
console = Console()
#: The CLI spelling of each intent (the first of its names: ``knowledge`` for web, as upstream).
_INTENT_FLAG = {intent: name for name, intent in reversed(INTENT_NAMES.items())}


@suite_app.command("validate")
def validate(
    path: Path = typer.Argument(..., exists=True, dir_okay=False, help="SB test .jsonl or ORO suite .json"),
    as_json: bool = typer.Option(False, "--json", help="Print the load summary as JSON."),
) -> None:
    """Read a suite: counts by category, intent and difficulty, and every record it could not read, with why.

    Exits 1 when any record was quarantined.
    """
    from shoparena.suites.loaders import SuiteLoadError, SuiteLoadSummary, iter_suite

    summary = SuiteLoadSummary(path=str(path))
    try:
        for _ in iter_suite(path, summary=summary):
            pass
    except SuiteLoadError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    if as_json:
        typer.echo(json.dumps(summary.as_dict(), ensure_ascii=False))
    else:
        console.print(
            f"[bold]{path}[/bold] ({summary.format}): read {summary.read}  kept {summary.kept}  "
            f"quarantined {summary.quarantined}"
        )
        table = Table("group", "value", "problems")
        for group, counts in (
            ("category", summary.by_category),
            ("intent", summary.by_intent),
            ("difficulty", summary.by_difficulty),
        ):
            for key, n in sorted(counts.items()):
                table.add_row(group, key, str(n))
        console.print(table)
        for bad in summary.problems_quarantined:
            console.print(f"[red]quarantined[/red] {bad.describe()}", markup=True, highlight=False)
    if summary.quarantined:
        raise typer.Exit(code=1)


# --- further suite commands are added below this line ---


@suite_app.command("synth")
def synth(
    index: Path = typer.Option(..., "--index", exists=True, file_okay=False, help="Index directory."),
    out: Path = typer.Option(..., "--out", "-o", dir_okay=False, help="Bank file to write."),
    n: int = field_option(SynthOptions, "n", "--n", min=1),
    seed: int = field_option(SynthOptions, "seed", "--seed"),
    intents: str = field_option(
        SynthOptions,
        "intents",
        "--intents",
        default=",".join(_INTENT_FLAG[i] for i in field_default(SynthOptions, "intents")),
        help="Comma list of intents (product, shop, voucher, knowledge).",
    ),
    fmt: str = typer.Option("oro", "--format", help="oro (suite JSON) or sb (test JSONL)."),
    rewriter: str | None = typer.Option(None, "--rewriter", help="OpenAI-compatible base URL (rewrites)."),
    rewriter_model: str | None = typer.Option(None, "--rewriter-model", help="Model name for --rewriter."),
    allow_less_than: bool = field_option(SynthOptions, "allow_less_than", "--allow-less-than"),
    hard: bool = field_option(SynthOptions, "hard", "--hard"),
    as_json: bool = typer.Option(False, "--json", help="Print the synthesis report as JSON."),
) -> None:
    """Synthesise a checked problem bank (upstream recipe, template queries, ORO labels) over an index.

    Web (knowledge) problems need their knowledge pages: written next to the bank as OUT.knowledge.jsonl.
    """
    from shoparena.env.knowledge import knowledge_path_for
    from shoparena.suites.options import parse_intents
    from shoparena.suites.queries import LLMRewriter
    from shoparena.suites.synth import synthesize_bank

    try:
        chosen = parse_intents(intents)
        options = SynthOptions(n=n, seed=seed, intents=chosen, allow_less_than=allow_less_than, hard=hard)
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    if fmt not in ("oro", "sb"):
        typer.echo(f"error: --format must be oro or sb, got {fmt!r}", err=True)
        raise typer.Exit(code=2)
    refuse_output_over_input(out, index)
    refuse_output_over_input(knowledge_path_for(out), index, option="--out (its knowledge pages)")
    rw = LLMRewriter.from_url(rewriter, model=rewriter_model) if rewriter else None
    report = synthesize_bank(index, out, options, fmt=fmt, rewriter=rw)
    if as_json:
        typer.echo(report.model_dump_json())
        return
    console.print(
        f"[bold]{out}[/bold]: kept {report.kept} of {report.generated} generated "
        f"({report.rejected} rejected: {report.rejected_by_reason}) in {report.seconds:.1f}s; "
        f"by intent {report.kept_by_intent}"
    )
    for intent, row in report.kept_by_difficulty.items():
        console.print(f"  {intent}: {dict(sorted(row.items()))}")
    if report.knowledge_pages:
        console.print(f"  knowledge pages: {report.knowledge_pages} -> {knowledge_path_for(out)}")
    if report.shortfall:
        console.print(f"[yellow]shortfall[/yellow] {report.shortfall}")


@suite_app.command("cluster")
def cluster(
    files: list[Path] = typer.Argument(..., exists=True, dir_okay=False, help="Suite files (SB / ORO)."),
    out: Path = typer.Option(..., "--out", "-o", dir_okay=False, help="clusters.json to write."),
    index: Path | None = typer.Option(
        None, "--index", exists=True, file_okay=False, help="Search index: shop ids of GT products."
    ),
    catalog: Path | None = typer.Option(
        None, "--catalog", exists=True, dir_okay=False, help="Catalog file for shop ids (without --index)."
    ),
    threshold: float | None = typer.Option(None, "--threshold", help="Near-duplicate Jaccard (default 0.6)."),
    as_json: bool = typer.Option(False, "--json", help="Print the cluster statistics as JSON."),
) -> None:
    """Leak clusters: link problems sharing a GT product, a shop (with --index) or a near-duplicate query."""
    from shoparena.suites.clusters import (
        NEAR_DUP_THRESHOLD,
        build_clusters,
        load_problem_files,
        shop_lookup_for,
    )

    refuse_output_over_input(out, *files, index, catalog, own=text_with(b'"stats"', within=1 << 20))
    problems, inputs = load_problem_files(files)
    shop_of, links = shop_lookup_for(problems, index_dir=index, catalog=catalog)
    report = build_clusters(
        problems,
        shop_of=shop_of,
        shop_links=links,
        threshold=NEAR_DUP_THRESHOLD if threshold is None else threshold,
        inputs=inputs,
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, report.model_dump_json(indent=1))
    if as_json:
        typer.echo(json.dumps({"stats": report.stats.model_dump(), "notes": report.notes, "out": str(out)}))
        return
    st = report.stats
    console.print(
        f"[bold]{out}[/bold]: {st.problems} problems in {st.clusters} clusters "
        f"({st.singletons} singletons, largest {st.largest}); edges {st.edges_by_reason}; "
        f"shop links: {report.shop_links}"
    )
    for note in report.notes:
        console.print(f"[yellow]note[/yellow] {note}", highlight=False)


@suite_app.command("partition")
def partition(
    bank: list[Path] = typer.Option(..., "--bank", exists=True, dir_okay=False, help="Bank file(s)."),
    out: Path = typer.Option(..., "--out", "-o", file_okay=False, help="Directory for pools + manifest."),
    public_size: int = typer.Option(30, "--public-size", min=1, help="Problems per public version."),
    public_versions: int = typer.Option(1, "--public-versions", min=0, help="Public versions now (v1..vK)."),
    reserve: int | None = typer.Option(
        None, "--reserve", min=0, help="Problems kept for `rotate` (default public-size x versions)."
    ),
    hidden: int = typer.Option(0, "--hidden", min=0, help="Hidden race bank size."),
    heldout: int | None = typer.Option(None, "--heldout", min=0, help="Held-out size (default 15 %)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the cluster order."),
    index: Path | None = typer.Option(
        None, "--index", exists=True, file_okay=False, help="Search index: shop ids of GT products."
    ),
    catalog: Path | None = typer.Option(
        None, "--catalog", exists=True, dir_okay=False, help="Catalog file for shop ids (without --index)."
    ),
    restart: bool = restart_option("Start OUT over (its partition and rotation history are replaced)."),
    force: bool = FORCE_ALIAS,
    as_json: bool = typer.Option(False, "--json", help="Print the manifest as JSON."),
) -> None:
    """Assign whole leak clusters to public suites, reserve, held-out, hidden and train pools."""
    from shoparena.runs.manifest import MANIFEST_NAME
    from shoparena.suites.clusters import load_problem_files, shop_lookup_for
    from shoparena.suites.partition import PartitionParams, partition_bank, size_shortfalls, summary_rows

    refuse_output_over_input(out, *bank, index, catalog, folder=True)
    if (out / MANIFEST_NAME).exists() and not restart_or_force(restart, force):
        lost = "its rotation history would be lost"
        typer.echo(f"error: {out / MANIFEST_NAME} exists ({lost}): pass --restart", err=True)
        raise typer.Exit(code=2)
    problems, inputs = load_problem_files(bank)
    shop_of, links = shop_lookup_for(problems, index_dir=index, catalog=catalog)
    params = PartitionParams(
        seed=seed,
        public_size=public_size,
        public_versions=public_versions,
        reserve=reserve,
        hidden=hidden,
        heldout=heldout,
    )
    bank_size = len({p.problem_id for p in problems})
    short = size_shortfalls(bank_size, params)
    _refuse_an_empty_heldout(short, params, bank_size)
    manifest = partition_bank(
        problems, out, params=params, shop_of=shop_of, shop_links=links, bank_files=inputs
    )
    for pool in manifest.pools.values():
        if pool.shortfall:
            why = next((s.line() for s in short if s.pool == pool.name), "whole leak clusters did not fit")
            got = f"{pool.problems} of {pool.requested}"
            typer.echo(f"warning: pool {pool.name} got {got} problems ({why})", err=True)
    if as_json:
        typer.echo(manifest.model_dump_json())
        return
    title = f"{out}: {manifest.bank_problems} problems, seed {seed}"
    _print_pools(manifest.clusters.notes, summary_rows(manifest), title)


def _refuse_an_empty_heldout(short: list[PoolShortfall], params: PartitionParams, bank_size: int) -> None:
    """Exit 2, naming the sizes, when the pools filled before the held-out one leave it no problem."""
    heldout = next((s for s in short if s.pool == "heldout"), None)
    if heldout is None or heldout.available > 0:
        return
    public = params.public_size * params.public_versions
    reserve = params.reserve if params.reserve is not None else public
    typer.echo(
        f"error: the held-out pool would be empty ({heldout.requested} requested): the bank has {bank_size} "
        f"problems and the public suites and reserve are filled first (public {params.public_size} x "
        f"{params.public_versions} + reserve {reserve} = {public + reserve}); lower --public-size and "
        "--reserve (e.g. --public-size 2 --reserve 0), or give a larger bank",
        err=True,
    )
    raise typer.Exit(code=2)


def _print_pools(notes: list[str], rows: list[list[str]], title: str) -> None:
    table = Table("pool", "problems/requested", "clusters", "by category", "by difficulty", title=title)
    for row in rows:
        table.add_row(*row)
    console.print(table)
    for note in notes:
        console.print(f"[yellow]note[/yellow] {note}", highlight=False)


@suite_app.command("rotate")
def rotate(
    directory: Path = typer.Option(..., "--dir", exists=True, file_okay=False, help="A partition directory."),
    as_json: bool = typer.Option(False, "--json", help="Print the updated manifest as JSON."),
) -> None:
    """Draw the next public version from the reserve (whole clusters, no reuse). Exits 1 when exhausted."""
    from shoparena.suites.partition import PartitionError, ReserveExhaustedError, rotate_public, summary_rows

    try:
        manifest = rotate_public(directory)
    except ReserveExhaustedError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=1) from None
    except PartitionError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    if as_json:
        typer.echo(manifest.model_dump_json())
        return
    latest = manifest.public_versions[-1]
    _print_pools(manifest.clusters.notes, summary_rows(manifest), f"{directory}: new {latest}")


@suite_app.command("audit")
def audit(
    a: Path = typer.Argument(..., exists=True, dir_okay=False, help="First problem or corpus file."),
    b: Path = typer.Argument(..., exists=True, dir_okay=False, help="Second problem or corpus file."),
    as_json: bool = typer.Option(False, "--json", help="Print the full report as JSON."),
    index: Path | None = typer.Option(
        None, "--index", exists=True, file_okay=False, help="Search index: shop ids of GT products."
    ),
    catalog: Path | None = typer.Option(
        None, "--catalog", exists=True, dir_okay=False, help="Catalog file for shop ids (without --index)."
    ),
    threshold: float | None = typer.Option(None, "--threshold", help="Near-duplicate Jaccard (default 0.6)."),
    limit: int = typer.Option(10, "--limit", min=0, help="Findings shown per kind (text output)."),
) -> None:
    """Leaks between two files: query overlaps, near-duplicates, shared GT/shops, straddling clusters.

    Exits 1 when any leak cluster straddles the two files, 2 when a file cannot be read.
    """
    from shoparena.suites.audit import AuditInputError, audit_files, describe_findings
    from shoparena.suites.clusters import NEAR_DUP_THRESHOLD

    try:
        report = audit_files(
            a,
            b,
            threshold=NEAR_DUP_THRESHOLD if threshold is None else threshold,
            index_dir=index,
            catalog=catalog,
        )
    except AuditInputError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    if as_json:
        typer.echo(report.model_dump_json())
    else:
        verdict = "[red]LEAK[/red]" if report.leak else "[green]clean[/green]"
        console.print(
            f"{verdict} A={a} ({report.a.format}, {report.a.items} items) "
            f"B={b} ({report.b.format}, {report.b.items} items)",
            highlight=False,
        )
        console.print(f"counts: {report.counts.model_dump()}", highlight=False)
        for line in describe_findings(report, limit):
            console.print(line, markup=False, highlight=False)
    if report.leak:
        raise typer.Exit(code=1)


def register(app: typer.Typer) -> None:
    app.add_typer(suite_app, name="suite")
