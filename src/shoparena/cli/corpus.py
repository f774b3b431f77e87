"""``shoparena corpus build|report``: thin wrappers over :mod:`shoparena.corpus`."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

from shoparena.cli._options import field_argument, field_option
from shoparena.corpus.config import CorpusConfig

corpus_app = typer.Typer(
    help="Trajectory corpus: filter, gates, recovery, leak-guarded split, views.", no_args_is_help=True
)
console = Console()
C = CorpusConfig


#: Options whose parameter name is not the CorpusConfig field they set.
FIELD_OF_OPTION = {"from_files": "files"}
#: Options of ``corpus build`` that are no CorpusConfig field.
NOT_FIELDS = ("ctx", "config_file", "restart")


@corpus_app.command("build")
def build(
    ctx: typer.Context,
    run_dirs: list[Path] = field_argument(C, "run_dirs", show_default=False),
    from_files: list[Path] = field_option(
        C, "files", "--from", more="Repeat per file.", exists=True, dir_okay=False, show_default=False
    ),
    problems: list[Path] = field_option(
        C, "problems", "--problems", more="Repeat per suite.", exists=True, dir_okay=False, show_default=False
    ),
    index: Path | None = field_option(C, "index", "--index", exists=True, file_okay=False),
    out: Path = field_option(C, "out", "--out"),
    config_file: Path | None = typer.Option(
        None,
        "--config",
        exists=True,
        dir_okay=False,
        help="corpus.yaml with filter / gates / split settings (the options given here override it).",
    ),
    restart: bool = typer.Option(
        False, "--restart", help="Start OUT over (clears its corpus outputs) instead of resuming it."
    ),
    render_profile: str = field_option(C, "render_profile", "--render-profile"),
    workers: int | None = field_option(C, "workers", "--workers", min=1),
) -> None:
    """Build (or resume) a corpus directory and print its funnel.

    A build over other inputs or settings than OUT's is refused (exit 2) unless --restart.
    """
    options = dict(locals())  # every option by parameter name, before any other local exists
    from pydantic import ValidationError

    from shoparena.corpus import build_corpus
    from shoparena.corpus.report import report_table
    from shoparena.runs.files import RunFileError, load_yaml, validation_detail

    base = (load_yaml(config_file, what="corpus config") if config_file else None) or {}
    if not isinstance(base, dict):
        kind = type(base).__name__
        raise RunFileError(f"{config_file}: not a corpus config: expected a mapping, got {kind}")
    # An option given on the command line overrides --config; one left at its default (the field's) does not.
    # (The source is compared by name: typer's ParameterSource is its own copy of click's.)
    defaulted = ("DEFAULT", "DEFAULT_MAP")
    given = [name for name in options if name not in NOT_FIELDS and _source(ctx, name) not in defaulted]
    base.update({FIELD_OF_OPTION.get(name, name): options[name] for name in given})
    try:
        config = CorpusConfig.model_validate(base)
    except ValidationError as err:
        where = config_file or "corpus build"
        raise RunFileError(f"{where}: not a corpus config: {validation_detail(err)}") from None
    if not config.run_dirs and not config.files:
        raise typer.BadParameter("give run directories and/or --from files", param_hint="RUN_DIRS")
    from shoparena.arena.layout import ArenaRun

    for run_dir in config.run_dirs:
        run = ArenaRun.at(run_dir)
        if not run.has_config():
            raise typer.BadParameter(f"{run_dir}: not an arena run directory (no {run.config_path.name})")
    with console.status("building corpus") as status:
        report = build_corpus(config, progress=lambda msg: status.update(msg), restart=restart)
    console.print(report_table(report))


def _source(ctx: typer.Context, name: str) -> str | None:
    source = ctx.get_parameter_source(name)
    return None if source is None else source.name


@corpus_app.command("report")
def report(
    corpus_dir: Path = typer.Argument(..., exists=True, file_okay=False),
    suite: Path | None = typer.Option(
        None, "--suite", exists=True, dir_okay=False, help="The bank: adds a single teacher of equal size."
    ),
    index: Path | None = typer.Option(None, "--index", exists=True, file_okay=False, help="Its index."),
    max_steps: int = typer.Option(30, "--max-steps", min=1, help="The teacher's step cap."),
) -> None:
    """Print the funnel and the diversity of a built corpus (with --suite/--index: against one teacher,
    written to CORPUS_DIR/diversity.json)."""
    from shoparena.corpus.diversity import corpus_diversity, diversity_table
    from shoparena.corpus.layout import CorpusRun
    from shoparena.corpus.report import report_table

    corpus = CorpusRun.at(corpus_dir)
    if not corpus.report_path.exists():
        raise typer.BadParameter(
            f"{corpus_dir}: no {corpus.report_path.name} (run `shoparena corpus build` first)"
        )
    if (suite is None) != (index is None):
        raise typer.BadParameter("give both --suite and --index (or neither)")
    data = corpus.report()
    console.print(report_table(data))
    quality = data.filter_quality
    if quality:
        console.print(
            f"filter quality vs harness truth: precision {quality['precision']}, "
            f"recall {quality['recall']}, forger trajectories kept {quality['forger_trajectories_kept']}"
        )
    try:
        diversity = corpus_diversity(corpus_dir, suite=suite, index=index, max_steps=max_steps)
    except (FileNotFoundError, ValueError, KeyError) as exc:
        typer.echo(f"error: {exc}".replace("error: '", "error: ").rstrip("'"), err=True)
        raise typer.Exit(code=2) from None
    console.print(diversity_table(diversity["groups"]))
    if diversity["comparison"] is not None:
        title = f"arena vs one teacher, equal size, {diversity['teacher_problems']} problems of the bank"
        console.print(diversity_table(diversity["comparison"], title=title))
        corpus.diversity_path.write_text(json.dumps(diversity, indent=2), encoding="utf-8")


@corpus_app.command("publish")
def publish(
    corpus_dir: Path = typer.Argument(..., exists=True, file_okay=False),
    repo_id: str = typer.Option(..., "--repo-id", help="Hub dataset repository, ORG/NAME."),
    out: Path | None = typer.Option(
        None, "--out", file_okay=False, help="Staging folder (CORPUS_DIR/publish)."
    ),
    prepare_only: bool = typer.Option(False, "--prepare-only", help="Stage the folder, upload nothing."),
    public: bool = typer.Option(False, "--public", help="Create the repository public (default private)."),
    endpoint: str | None = typer.Option(
        None, "--endpoint", help="Hub address (default the Hugging Face Hub)."
    ),
) -> None:
    """Stage the corpus for the Hub (card with metadata, Parquet views, reports) and upload it."""
    from shoparena.corpus.card import PublishError, prepare_publish
    from shoparena.corpus.card import publish as upload

    try:
        folder = prepare_publish(corpus_dir, out or corpus_dir / "publish")
        typer.echo(f"prepared {folder}")
        if not prepare_only:
            typer.echo(
                f"published {repo_id}: {upload(folder, repo_id, private=not public, endpoint=endpoint)}"
            )
    except PublishError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None


def register(app: typer.Typer) -> None:
    app.add_typer(corpus_app, name="corpus")
