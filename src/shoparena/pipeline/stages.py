"""The pipeline's stages: catalog → index → bank → partitions → reference / firehose → judge → corpus → SFT →
evaluation of base and student → report. Each function takes a :class:`StageContext` and returns the outputs
recorded in the manifest (paths relative to the run directory where possible, plus small summaries).

Stages owned by other packages (corpus, train, eval) are called through their library entry points, looked up
when the stage runs; a missing one raises :class:`StageUnavailable` naming the module and its issue.
"""

from __future__ import annotations

import importlib
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from shoparena.pipeline.dag import Stage, StageContext, StageUnavailable


def as_jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return value


def entry_point(module: str, attr: str, issue: int) -> Any:
    """``module.attr`` or StageUnavailable saying what is missing."""
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise StageUnavailable(f"{module} is not on this checkout (issue {issue}): {exc}") from None
    fn = getattr(mod, attr, None)
    if fn is None:
        raise StageUnavailable(f"{module}.{attr} is not on this checkout (issue {issue})")
    return fn


def catalog_stage(ctx: StageContext) -> dict[str, Any]:
    from shoparena.catalog.synth import SynthConfig, synthesize_catalog

    section = ctx.config.catalog
    path = ctx.dir / "documents.jsonl.gz"
    cfg = SynthConfig(products=section.products, seed=section.seed, workers=section.workers)
    summary = synthesize_catalog(cfg, path, progress=True)
    return {"path": str(path), "summary": as_jsonable(summary)}


def index_stage(ctx: StageContext) -> dict[str, Any]:
    from shoparena.search import build_index

    stats = build_index(
        ctx.inputs["catalog"]["path"], ctx.dir, k1=ctx.config.index.k1, b=ctx.config.index.b, progress=True
    )
    return {"path": str(ctx.dir), "stats": as_jsonable(stats)}


def bank_stage(ctx: StageContext) -> dict[str, Any]:
    from shoparena.suites.synth import SynthOptions, synthesize_bank

    options = SynthOptions(n=ctx.config.bank.problems, seed=ctx.config.bank.seed)
    path = ctx.dir / "bank.json"
    report = synthesize_bank(ctx.inputs["index"]["path"], path, options)
    ctx.console.print(f"kept {report.kept} of {report.generated} generated; by intent {report.kept_by_intent}")
    return {"path": str(path), "report": as_jsonable(report)}


def partitions_stage(ctx: StageContext) -> dict[str, Any]:
    from shoparena.suites.clusters import load_problem_files, shop_lookup_for
    from shoparena.suites.partition import PartitionParams, partition_bank, summary_rows

    section = ctx.config.bank
    problems, inputs = load_problem_files([Path(ctx.inputs["bank"]["path"])])
    shop_of, links = shop_lookup_for(problems, index_dir=ctx.inputs["index"]["path"])
    params = PartitionParams(
        seed=section.seed,
        public_size=section.public_size,
        public_versions=section.public_versions,
        reserve=section.reserve,
        heldout=section.heldout,
        hidden=section.hidden,
    )
    manifest = partition_bank(
        problems, ctx.dir, params=params, shop_of=shop_of, shop_links=links, bank_files=inputs
    )
    for row in summary_rows(manifest):
        ctx.console.print("  ".join(row), highlight=False)
    heldout = manifest.pools.get("heldout")
    if heldout is None or heldout.problems == 0:
        raise ValueError(
            f"partitions: the held-out pool is empty ({manifest.bank_problems} problems in the bank, "
            f"public {section.public_size} x {section.public_versions}, reserve {section.reserve}): "
            "raise bank.problems or lower the other pool sizes"
        )
    pools = {
        name: {"path": str(ctx.dir / pool.files["full"].path), "problems": pool.problems, "kind": pool.kind}
        for name, pool in manifest.pools.items()
    }
    return {"path": str(ctx.dir), "pools": pools, "public": manifest.public_versions}


def _heldout(ctx: StageContext) -> str:
    return ctx.inputs["partitions"]["pools"]["heldout"]["path"]


def reference_stage(ctx: StageContext) -> dict[str, Any]:
    """The rule-based planner (the teacher) on the held-out partition, through the chosen executor, scored."""
    from rich.progress import Progress

    from shoparena.arena.executor import EpisodeTask, get_executor, run_episode_tasks
    from shoparena.formats.io import read_trajectories
    from shoparena.scoring import get_similarity, score_run
    from shoparena.search import SearchIndex
    from shoparena.suites.loaders import load_suite

    problems, _ = load_suite(_heldout(ctx))
    index_dir = ctx.inputs["index"]["path"]
    tasks = [
        EpisodeTask(
            problem_json=p.model_dump_json(),
            index_dir=index_dir,
            agent=ctx.config.reference.agent,
            run_id=f"{ctx.run.path.name}-reference",
            suite_path=ctx.inputs["bank"]["path"],
        )
        for p in problems
    ]
    # Keyed by stage hash: an interrupted stage appends to its own file, a changed input starts a fresh one.
    out_path = ctx.dir / ctx.stage_hash / "output.jsonl"
    executor = get_executor(ctx.config.executor, ctx.config.workers, ctx.config.ray_address)
    with Progress(console=ctx.console) as bar:
        task = bar.add_task(f"episodes ({executor.name})", total=len(tasks))
        counts = run_episode_tasks(executor, tasks, out_path, on_result=lambda _: bar.advance(task))
    index = SearchIndex.open(index_dir)
    similarity = get_similarity(ctx.config.reference.similarity)
    trajectories = list(read_trajectories(out_path))
    scores: dict[str, Any] = {}
    for profile in ("strict", "shoppingbench"):
        agg = score_run(problems, trajectories, index, profile=profile, similarity=similarity).aggregate
        scores[profile] = {
            "asr": agg.success_rate,
            "n": agg.denominator,
            "successes": agg.successful_problems,
            "per_category": {
                name: {"asr": rep.success_rate, "n": rep.denominator, "successes": rep.successful_problems}
                for name, rep in agg.per_category.items()
            },
        }
    ctx.console.print(f"reference {ctx.config.reference.agent}: strict ASR {scores['strict']['asr']:.3f}")
    return {"path": str(out_path), "executor": executor.name, "counts": counts, "scores": scores}


def firehose_stage(ctx: StageContext) -> dict[str, Any]:
    build = entry_point("shoparena.corpus.firehose", "run_firehose", 11)
    return as_jsonable(build(ctx))  # wired when issue 11 lands


def judge_stage(ctx: StageContext) -> dict[str, Any]:
    judge = entry_point("shoparena.corpus.judging", "judge_firehose", 11)
    return as_jsonable(judge(ctx))  # wired when issue 11 lands


def corpus_stage(ctx: StageContext) -> dict[str, Any]:
    build = entry_point("shoparena.corpus", "build_corpus", 11)
    return as_jsonable(build(ctx))  # wired when issue 11 lands


def sft_stage(ctx: StageContext) -> dict[str, Any]:
    train = entry_point("shoparena.train", "run_sft", 12)
    return as_jsonable(train(ctx))  # wired when issue 12 lands


def eval_base_stage(ctx: StageContext) -> dict[str, Any]:
    evaluate = entry_point("shoparena.eval", "run_eval", 13)
    return as_jsonable(evaluate(ctx))  # wired when issue 13 lands


def eval_student_stage(ctx: StageContext) -> dict[str, Any]:
    evaluate = entry_point("shoparena.eval", "run_eval", 13)
    return as_jsonable(evaluate(ctx))  # wired when issue 13 lands


def pipeline_stages() -> list[Stage]:
    """The DAG of ``shoparena pipeline run``."""
    return [
        Stage("catalog", (), lambda c: c.catalog, catalog_stage, "synthetic catalog"),
        Stage("index", ("catalog",), lambda c: c.index, index_stage, "BM25 index"),
        Stage("bank", ("index",), lambda c: c.bank, bank_stage, "problem bank (four intents, checked)"),
        Stage("partitions", ("bank", "index"), lambda c: c.bank, partitions_stage, "public / held-out / hidden"),
        Stage(
            "reference",
            ("partitions", "index", "bank"),
            lambda c: c.reference,
            reference_stage,
            "reference planner on the held-out partition",
        ),
        Stage("firehose", ("partitions", "index"), lambda c: c.firehose, firehose_stage, "arena firehose"),
        Stage("judge", ("firehose",), lambda c: c.judge, judge_stage, "judge"),
        Stage("corpus", ("judge", "partitions"), lambda c: c.corpus, corpus_stage, "corpus"),
        Stage("sft", ("corpus",), lambda c: {"model": c.model, "sft": c.sft}, sft_stage, "SFT of the student"),
        Stage(
            "eval_base",
            ("partitions", "index"),
            lambda c: {"model": c.model, "eval": c.eval},
            eval_base_stage,
            "evaluation: base model, held-out",
        ),
        Stage(
            "eval_student",
            ("sft", "partitions", "index"),
            lambda c: c.eval,
            eval_student_stage,
            "evaluation: student, held-out",
        ),
    ]
