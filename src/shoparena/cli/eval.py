"""``shoparena eval run|compare|serve``: evaluate any policy on a suite, compare two runs, serve a model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from shoparena.cli._options import field_default, field_option
from shoparena.eval.config import EvalConfig
from shoparena.records.actors import ActorRole, describe, usage_line

eval_app = typer.Typer(
    help="Evaluate policies on held-out suites (pass@k with intervals), compare runs, serve a model.",
    no_args_is_help=True,
)
console = Console(stderr=True, width=160)
POLICY = ActorRole.POLICY


@eval_app.command("run")
def run(
    policy: str = typer.Option(..., "--policy", help=f"{usage_line(POLICY)}. {describe(POLICY)}."),
    suite: Path = typer.Option(..., "--suite", exists=True, dir_okay=False, help="Suite file."),
    index: Path = typer.Option(..., "--index", exists=True, file_okay=False, help="Search index directory."),
    out: Path = typer.Option(..., "--out", file_okay=False, help="Run directory (re-run resumes)."),
    samples: int = field_option(EvalConfig, "samples", "--samples", min=1),
    temperature: float = field_option(EvalConfig, "temperature", "--temperature", min=0.0),
    top_p: float = field_option(EvalConfig, "top_p", "--top-p"),
    max_tokens: int = field_option(EvalConfig, "max_tokens", "--max-tokens", min=1),
    max_steps: int = field_option(EvalConfig, "max_steps", "--max-steps", min=1),
    seed: int = field_option(EvalConfig, "seed", "--seed"),
    fmt: str = field_option(EvalConfig, "format", "--format"),
    thinking: bool = field_option(EvalConfig, "thinking", "--thinking/--no-thinking"),
    concurrency: int = field_option(EvalConfig, "concurrency", "--concurrency", min=1),
    limit: int | None = field_option(EvalConfig, "limit", "--limit", min=1),
    kb: list[Path] = typer.Option(
        [], "--kb", exists=True, dir_okay=False, help="Extra web_search pages, JSONL (repeatable)."
    ),
    train_corpus: Path | None = field_option(
        EvalConfig, "train_corpus", "--train-corpus", exists=True, file_okay=False
    ),
    allow_leak: bool = field_option(EvalConfig, "allow_leak", "--allow-leak"),
    similarity: str = field_option(EvalConfig, "similarity", "--similarity"),
    miner_backend: str | None = field_option(EvalConfig, "miner_backend", "--miner-backend"),
    episode_timeout: float = field_option(EvalConfig, "episode_timeout_s", "--episode-timeout"),
    request_timeout: float = field_option(EvalConfig, "request_timeout_s", "--request-timeout"),
    request_retries: int = field_option(EvalConfig, "request_retries", "--request-retries", min=0),
    retry_backoff: float = field_option(EvalConfig, "retry_backoff_s", "--retry-backoff", min=0.0),
    max_batch: int = field_option(EvalConfig, "max_batch", "--max-batch", min=1),
    threads: int | None = field_option(EvalConfig, "threads", "--threads", min=1),
    engine: str = field_option(EvalConfig, "engine", "--engine"),
    prefix_cache: bool = field_option(EvalConfig, "prefix_cache", "--prefix-cache/--no-prefix-cache"),
    progress: bool = field_option(EvalConfig, "progress", "--progress/--no-progress"),
    render_profile: str | None = field_option(EvalConfig, "render_profile", "--render-profile"),
    allow_profile_mismatch: bool = field_option(
        EvalConfig, "allow_profile_mismatch", "--allow-profile-mismatch"
    ),
    executor: str = field_option(EvalConfig, "executor", "--executor"),
    ray_address: str | None = field_option(EvalConfig, "ray_address", "--ray-address"),
    as_json: bool = typer.Option(False, "--json", help="Print summary.json to stdout."),
    restart: bool = typer.Option(
        False, "--restart", help="Start --out over (clears its episodes) instead of resuming it."
    ),
) -> None:
    """Evaluate a policy: n episodes per problem, both scoring profiles, intervals, shortcut floor.

    Exit codes: 1 the suite leaks into --train-corpus, or every episode failed for infrastructure (no
    model server, or one that answers 5xx, garbage or nothing in time: a re-run retries them), or not one
    model call returned a completion; 2 bad input or a different run in --out (without --restart).
    """
    options = dict(locals())  # every option by parameter name, before any other local exists
    from pydantic import ValidationError

    from shoparena.arena.executor import ExecutorUnavailableError
    from shoparena.eval.config import EvalConfigError
    from shoparena.eval.leak import LeakError
    from shoparena.eval.run import run_eval
    from shoparena.runs.infra import InfraStopError

    try:
        config = eval_config_from_options(options)
    except ValidationError as exc:
        first = exc.errors()[0]
        typer.echo(f"error: {'.'.join(map(str, first['loc']))}: {first['msg']}", err=True)
        raise typer.Exit(code=2) from None
    try:
        summary = run_eval(config, restart=restart)
    except (LeakError, InfraStopError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=1) from None
    except (EvalConfigError, ValueError, ExecutorUnavailableError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    data = summary.dump()
    print_summary(data)
    if as_json:
        typer.echo(json.dumps(data))


#: Options whose parameter name is not the EvalConfig field they set.
FIELD_OF_OPTION = {
    "fmt": "format",
    "episode_timeout": "episode_timeout_s",
    "request_timeout": "request_timeout_s",
    "retry_backoff": "retry_backoff_s",
}
#: Options of ``eval run`` that are no EvalConfig field.
NOT_FIELDS = ("as_json", "restart")


def eval_config_from_options(options: dict[str, Any]) -> EvalConfig:
    """The :class:`EvalConfig` of ``eval run``'s options (those that are not config fields are left out).

    Raises:
        ValidationError: an option value the config refuses.
    """
    fields = {FIELD_OF_OPTION.get(name, name): value for name, value in options.items()}
    return EvalConfig(**{name: value for name, value in fields.items() if name in EvalConfig.model_fields})


def _fmt(est: dict[str, Any] | None) -> str:
    if not est:
        return "-"
    return f"{100 * est['value']:.1f} [{100 * est['ci_low']:.0f},{100 * est['ci_high']:.0f}]"


def print_summary(data: dict[str, Any]) -> None:
    """The Rich summary table of a run (stderr)."""
    suite, dec = data["suite"], data["decoding"]
    k_max = str(dec["n"])
    title = (
        f"{data['policy'].get('name')} on {Path(suite['path']).name} ({suite['problems']} problems, "
        f"partition {suite['partition']}, {data['label']}) - {dec['mode']} T={dec['temperature']} "
        f"top_p={dec['top_p']} n={dec['n']} seed={dec['seed']} {dec['format']}"
    )
    # One sample per problem: pass@k and pass^k are pass@1, so they get no columns of their own (two columns
    # headed "pass@1 %" read as two different numbers).
    over_k = k_max != "1"
    headers = ["profile", "group", "greedy ASR % [95 % Wilson]", "pass@1 % [95 % bootstrap]"]
    headers += [f"pass@{k_max} %", f"pass^{k_max} %"] if over_k else []
    table = Table(*headers, "format", "steps", "tokens", "shortcut % [95 % Wilson]", title=title)
    for profile, groups in data["profiles"].items():
        floor = data.get("shortcut_floor", {}).get(profile, {})
        for group, m in groups.items():
            at_k = [_fmt(m["pass@k"].get(k_max)), _fmt(m["pass^k"].get(k_max))] if over_k else []
            table.add_row(
                profile,
                group,
                _fmt(m.get("greedy_asr")),
                _fmt(m["pass@1"]),
                *at_k,
                f"{m['format_score']['value']:.2f}",
                f"{m['mean_steps']:.1f}",
                f"{m['mean_tokens']:.0f}",
                _fmt(floor.get(group)),
            )
    console.print(table)
    ep = data["episodes"]
    console.print(
        f"episodes {ep['finished']}/{ep['expected']} {ep['by_status']}; suite sha256 {suite['sha256'][:16]}; "
        f"title backend {data['scoring'].get('title_backend')}; {data['throughput']}",
        highlight=False,
    )
    cache = data.get("prefix_cache") or {}
    if cache.get("prompt_tokens"):
        computed = cache.get("prefilled_tokens")
        console.print(
            f"prompt tokens {cache['prompt_tokens']}, computed "
            f"{computed if computed is not None else 'not reported'} "
            f"(prefix cache {'on' if cache.get('enabled') else 'off'}, {cache.get('misses', 0)} miss(es))",
            highlight=False,
        )
    for note in data.get("notes", []):
        console.print(f"[yellow]note[/yellow] {note}", highlight=False)


@eval_app.command("compare")
def compare(
    run_a: Path = typer.Argument(..., exists=True, file_okay=False, help="Baseline run directory."),
    run_b: Path = typer.Argument(..., exists=True, file_okay=False, help="Candidate run directory."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
) -> None:
    """Paired per-problem comparison (B − A): bootstrap CI of pass@1, McNemar exact p of greedy success.

    Exit code 2 when the runs are on different suites or scored differently.
    """
    from shoparena.eval.compare import CompareError, compare_runs
    from shoparena.eval.config import EvalConfigError

    try:
        result = compare_runs(run_a, run_b)
    except (CompareError, EvalConfigError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    if as_json:
        typer.echo(result.model_dump_json())
        return
    table = Table(
        "profile",
        "A pass@1",
        "B pass@1",
        "B−A [95% CI]",
        "greedy A/B-only",
        "McNemar p",
        title=f"{run_b} vs {run_a} ({next(iter(result.profiles.values())).problems} problems)",
    )
    for profile, row in result.profiles.items():
        d = row.pass_at_1
        greedy = row.greedy
        table.add_row(
            profile,
            f"{100 * d.a:.1f}",
            f"{100 * d.b:.1f}",
            f"{100 * d.diff:+.1f} [{100 * d.ci_low:+.1f}, {100 * d.ci_high:+.1f}]",
            f"{greedy.a_only}/{greedy.b_only}" if greedy else "-",
            f"{greedy.p_value:.3g}" if greedy else "-",
        )
    Console().print(table)


@eval_app.command("serve")
def serve(
    spec: str = typer.Argument(..., help="hf:DIR (batched transformers) or planner."),
    port: int = typer.Option(8000, "--port", min=0, max=65535, help="Port on 127.0.0.1."),
    host: str = typer.Option("127.0.0.1", "--host", help="Bind address."),
    max_batch: int = typer.Option(
        field_default(EvalConfig, "max_batch"), "--max-batch", min=1, help="Sequences per batch."
    ),
    name: str | None = typer.Option(None, "--name", help="Model name the server reports."),
    threads: int | None = typer.Option(
        field_default(EvalConfig, "threads"), "--threads", min=1, help="Engine CPU threads."
    ),
    engine: str = typer.Option(
        field_default(EvalConfig, "engine"),
        "--engine",
        help="hf: transformers | ctranslate2 | ctranslate2-int8.",
    ),
) -> None:
    """Serve a model over an OpenAI-compatible API that batches concurrent requests (the CPU engine).

    The engine (``--engine``) runs in this process: a CTranslate2 model is converted on first use (cached)
    and released when the server stops.
    """
    import uvicorn

    from shoparena.eval.server import create_app
    from shoparena.llm.types import BackendError
    from shoparena.runs.ports import check_port_free

    check_port_free(host, port)  # in use: one line, exit 2 (uvicorn's own exit is 3), before loading a model

    if spec == "planner":
        from shoparena.llm.planner_backend import PlannerBackend

        backend: Any = PlannerBackend()
        model_name = name or "planner"
    elif spec.startswith(("hf:", "transformers:")):
        from shoparena.eval.ct2_engine import ENGINES
        from shoparena.eval.policies import hf_backend

        if engine not in ENGINES:
            typer.echo(f"error: --engine must be one of {', '.join(ENGINES)}, got {engine!r}", err=True)
            raise typer.Exit(code=2)
        folder = Path(spec.split(":", 1)[1])
        try:
            backend = hf_backend(folder, engine=engine, max_batch=max_batch, threads=threads)
        except BackendError as exc:
            typer.echo(f"error: {spec}: {exc}", err=True)
            raise typer.Exit(code=2) from None
        model_name = name or folder.name
    else:
        typer.echo(f"error: serve expects hf:DIR or planner, got {spec!r}", err=True)
        raise typer.Exit(code=2)
    console.print(f"serving {model_name} on http://{host}:{port}/v1 ({engine}, batch up to {max_batch})")
    try:
        uvicorn.run(create_app(backend, model_name), host=host, port=port, log_level="warning")
    finally:
        closer = getattr(backend, "close", None)
        if closer is not None:
            closer()


def register(app: typer.Typer) -> None:
    app.add_typer(eval_app, name="eval")
