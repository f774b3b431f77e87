"""``shoparena corpus build|report``: thin wrappers over :mod:`shoparena.corpus`."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

corpus_app = typer.Typer(
    help="Trajectory corpus: filter, gates, recovery, leak-guarded split, views.", no_args_is_help=True
)
console = Console()


@corpus_app.command("build")
def build(
    run_dirs: list[Path] | None = typer.Argument(None, help="Arena run directories (e.g. firehose races)."),
    from_files: list[Path] = typer.Option(
        [], "--from", exists=True, dir_okay=False, help="Envelope / rollout / SN15 chat-row JSONL (repeat)."
    ),
    problems: list[Path] = typer.Option(
        [],
        "--problems",
        exists=True,
        dir_okay=False,
        help="Suites with ground truth for --from trajectories (repeat).",
    ),
    index: Path | None = typer.Option(
        None, exists=True, file_okay=False, help="Index to score --from input."
    ),
    out: Path = typer.Option(..., help="Corpus directory (re-running resumes it)."),
    config_file: Path | None = typer.Option(
        None,
        "--config",
        exists=True,
        dir_okay=False,
        help="corpus.yaml with filter / gates / split settings.",
    ),
    restart: bool = typer.Option(
        False, "--restart", help="Start OUT over (clears its corpus outputs) instead of resuming it."
    ),
    # Not field_option: importing CorpusConfig here would import datasketch and scipy for every command.
    render_profile: str | None = typer.Option(
        None,
        "--render-profile",
        help="Render profile of the views: compact (CorpusConfig's default, as the pipeline renders them) | "
        "upstream (ShoppingBench's full tool results, for large-context models).",
    ),
    workers: int | None = typer.Option(
        None,
        min=1,
        help="Processes ingesting inputs at once, one input each (CorpusConfig.workers; default: one per "
        "usable CPU, within memory).",
    ),
) -> None:
    """Build (or resume) a corpus directory and print its funnel.

    A build over other inputs or settings than OUT's is refused (exit 2) unless --restart.
    """
    from pydantic import ValidationError

    from shoparena.corpus import CorpusConfig, build_corpus
    from shoparena.corpus.report import report_table
    from shoparena.runs.files import RunFileError, load_yaml, validation_detail

    base = (load_yaml(config_file, what="corpus config") if config_file else None) or {}
    if not isinstance(base, dict):
        kind = type(base).__name__
        raise RunFileError(f"{config_file}: not a corpus config: expected a mapping, got {kind}")
    base.update(out=out)
    if run_dirs:
        base["run_dirs"] = list(run_dirs)
    if from_files:
        base["files"] = list(from_files)
    if problems:
        base["problems"] = list(problems)
    if index is not None:
        base["index"] = index
    if workers is not None:
        base["workers"] = workers
    if render_profile is not None:
        base["render_profile"] = render_profile
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
