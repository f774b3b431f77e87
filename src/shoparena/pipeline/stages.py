"""The pipeline's stages: catalog → index → bank → partitions → reference / firehose → judge → corpus → SFT →
evaluation of base and student. Each function takes a :class:`StageContext` and returns the outputs
recorded in the manifest (paths relative to the run directory where possible, plus small summaries).

The stages orchestrate; the work is the library's (the firehose ``arena.firehose``, the corpus
``corpus.build``, training ``train.policy.train_policy``, evaluation ``eval.policy_eval.evaluate_policy``),
imported when the stage runs. A third-party module of an optional extra that is not installed raises
:class:`StageUnavailable` naming the extra (:func:`extra_needed`). The report is the command's
(:func:`shoparena.pipeline.run.run_pipeline` is handed the renderer).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from shoparena.formats.profiles import profile_hash
from shoparena.pipeline.dag import Stage, StageContext, StageUnavailable
from shoparena.pipeline.layout import BANK_NAME
from shoparena.pipeline.outputs import (
    BankOutput,
    CatalogOutput,
    CorpusOutput,
    EvalOutput,
    FirehoseOutput,
    IndexOutput,
    JudgedAgent,
    JudgeOutput,
    ModelOutput,
    PairedVerdicts,
    PartitionsOutput,
    PoolOutput,
    RaceSummary,
    ReferenceOutput,
    ReferenceScore,
    ScoreBlock,
    StudentEvalOutput,
    TrainOutput,
)
from shoparena.runs.files import RunFileError


def as_jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return value


@contextmanager
def extra_needed(extra: str) -> Iterator[None]:
    """A stage's imports that the optional ``extra`` provides: a third-party module missing from this
    environment makes the stage unavailable, naming the extra to install (a missing shoparena module is a
    broken checkout: raised as is)."""
    try:
        yield
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] == "shoparena":
            raise
        raise StageUnavailable(
            f"needs the {extra!r} extra ({exc.name} is not installed): pip install 'shoparena[{extra}]'"
        ) from None


def catalog_stage(ctx: StageContext) -> CatalogOutput:
    from shoparena.catalog.synth import SynthConfig, synthesize_catalog

    section = ctx.config.catalog
    path = ctx.dir / "documents.jsonl.gz"
    cfg = SynthConfig(products=section.products, seed=section.seed, workers=section.workers)
    summary = synthesize_catalog(cfg, path, progress=True)
    return CatalogOutput(path=str(path), summary=as_jsonable(summary))


def index_stage(ctx: StageContext) -> IndexOutput:
    from shoparena.search import build_index

    catalog = ctx.input(CatalogOutput).path
    stats = build_index(catalog, ctx.dir, k1=ctx.config.index.k1, b=ctx.config.index.b, progress=True)
    return IndexOutput(path=str(ctx.dir), stats=as_jsonable(stats))


def bank_stage(ctx: StageContext) -> BankOutput:
    from shoparena.suites.options import SynthOptions
    from shoparena.suites.synth import synthesize_bank

    options = SynthOptions(n=ctx.config.bank.problems, seed=ctx.config.bank.seed)
    path = ctx.dir / BANK_NAME
    report = synthesize_bank(ctx.input(IndexOutput).path, path, options)
    ctx.console.print(
        f"kept {report.kept} of {report.generated} generated; by intent {report.kept_by_intent}"
    )
    return BankOutput(path=str(path), report=as_jsonable(report))


def partitions_stage(ctx: StageContext) -> PartitionsOutput:
    from shoparena.pipeline.checks import partition_params
    from shoparena.suites.clusters import load_problem_files, shop_lookup_for
    from shoparena.suites.partition import partition_bank, summary_rows

    section = ctx.config.bank
    problems, inputs = load_problem_files([Path(ctx.input(BankOutput).path)])
    shop_of, links = shop_lookup_for(problems, index_dir=ctx.input(IndexOutput).path)
    params = partition_params(section)
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
        name: PoolOutput(path=str(ctx.dir / pool.files["full"].path), problems=pool.problems, kind=pool.kind)
        for name, pool in manifest.pools.items()
    }
    return PartitionsOutput(path=str(ctx.dir), pools=pools, public=manifest.public_versions)


def reference_stage(ctx: StageContext) -> ReferenceOutput:
    """The rule-based planner (the teacher) on the held-out partition, through the chosen executor, scored."""
    from rich.progress import Progress

    from shoparena.arena.executor import EpisodeTask, get_executor, run_episode_tasks
    from shoparena.formats.io import read_trajectories
    from shoparena.runs.envelopes import envelope_log_path
    from shoparena.scoring.bench import BOTH_PROFILES, ScoringBench
    from shoparena.search import SearchIndex
    from shoparena.suites.loaders import load_suite

    problems, _ = load_suite(ctx.input(PartitionsOutput).heldout_path)
    index_dir = ctx.input(IndexOutput).path
    tasks = [
        EpisodeTask(
            problem_json=p.model_dump_json(),
            index_dir=index_dir,
            agent=ctx.config.reference.agent,
            run_id=f"{ctx.run.path.name}-reference",
            suite_path=ctx.input(BankOutput).path,
        )
        for p in problems
    ]
    # Keyed by stage hash: an interrupted stage appends to its own file, a changed input starts a fresh one.
    out_path = envelope_log_path(ctx.dir / ctx.stage_hash)
    executor = get_executor(ctx.config.executor, ctx.config.workers, ctx.config.ray_address)
    with Progress(console=ctx.console) as bar:
        task = bar.add_task(f"episodes ({executor.name})", total=len(tasks))
        counts = run_episode_tasks(executor, tasks, out_path, on_result=lambda _: bar.advance(task))
    bench = ScoringBench(problems, SearchIndex.open(index_dir), ctx.config.reference.similarity)
    trajectories = list(read_trajectories(out_path))
    scores: dict[str, ReferenceScore] = {}
    for scoring_profile in BOTH_PROFILES:
        agg = bench.score_run(trajectories, scoring_profile, problems).aggregate
        scores[scoring_profile] = ReferenceScore(
            asr=agg.success_rate,
            n=agg.denominator,
            successes=agg.successful_problems,
            per_category={
                name: ScoreBlock(asr=rep.success_rate, n=rep.denominator, successes=rep.successful_problems)
                for name, rep in agg.per_category.items()
            },
        )
    ctx.console.print(f"reference {ctx.config.reference.agent}: strict ASR {scores['strict'].asr:.3f}")
    return ReferenceOutput(path=str(out_path), executor=executor.name, counts=counts, scores=scores)


def firehose_stage(ctx: StageContext) -> FirehoseOutput:
    """Races over the public suites with the miner population; each race judged, ranked and weighted."""
    with extra_needed("serve"):  # the trusted proxy is a FastAPI app under uvicorn
        from shoparena.arena.firehose import FirehoseConfig, run_firehose

    section = ctx.config.firehose
    pools = ctx.input(PartitionsOutput).pools
    raced = firehose_pools(ctx)
    suites = [Path(pools[name].path) for name in raced]
    config = FirehoseConfig.model_validate(
        {
            **section.options.written(),
            "suites": suites,
            "index": Path(ctx.input(IndexOutput).path),
            "out": ctx.dir / ctx.stage_hash,
            "races": section.races,
            "problems_per_race": section.problems_per_race,
            "seed": section.seed,
            # None: sandboxes and parallel races from the machine (arena.firehose.machine_defaults), unless
            # options.parallel_races names them; neither is in the stage hash nor changes a race's outcomes.
            "workers": ctx.config.workers,
            "timeout_s": section.timeout_s,
            # Not in the stage hash: switching executor resumes the same race directories.
            "executor": ctx.config.executor,
            "ray_address": ctx.config.ray_address,
        }
    )
    race_dirs = run_firehose(config, progress=lambda text: ctx.console.print(text), restart="changed")
    # The firehose rotates its suites: race r draws from suite r mod P.
    races = [
        race_summary(d).model_copy(update={"suite": raced[i % len(raced)]}) for i, d in enumerate(race_dirs)
    ]
    trajectories = sum(r.trajectories for r in races)
    ctx.console.print(f"{len(races)} races, {trajectories} trajectories")
    return FirehoseOutput(
        path=str(config.out),
        race_dirs=[str(d) for d in race_dirs],
        races=races,
        trajectories=trajectories,
    )


def firehose_pools(ctx: StageContext) -> list[str]:
    """The partition pools the firehose races: the public suites, then ``firehose.extra_pools``."""
    extra = ctx.config.firehose.extra_pools
    closed = sorted(set(extra) & {"heldout", "hidden"})
    partitions = ctx.input(PartitionsOutput)
    missing = sorted(set(extra) - set(partitions.pools))
    if closed or missing:
        bad = closed or missing
        raise ValueError(f"firehose.extra_pools: {bad} cannot be raced (held-out, hidden or unknown pools)")
    return [*partitions.public, *extra]


def race_summary(race_dir: Path) -> RaceSummary:
    """Race id, suite, winner, trajectories and the weight per miner of one firehose race directory."""
    from shoparena.arena.layout import ArenaRun
    from shoparena.arena.run_judging import why_no_winner
    from shoparena.runs.layout import open_run

    run = open_run(race_dir, ArenaRun)
    race_doc, weights = run.race(), run.weights()
    if race_doc is None or weights is None:
        raise RunFileError(f"{race_dir}: the race has not finished (no {run.race_path.name} or weights)")
    race = race_doc.race
    uid_to_hotkey = {uid: key for key, uid in weights.hotkey_to_uid.items()}
    burn = weights.config.burn_uid
    uid_to_hotkey.setdefault(burn, f"burn (uid {burn})")
    pairs = zip(weights.uids, weights.weights, strict=False)
    per_miner = {uid_to_hotkey.get(uid, f"uid {uid}"): w for uid, w in pairs if w}
    total = sum(per_miner.values()) or 1
    trajectories = sum(len(run.envelopes(agent)) for agent in run.agent_folders())
    return RaceSummary(
        race_id=race.race_id,
        status=race.status.value,
        suite=run.race_suite_path.name,
        winner=weights.top_hotkey or "",
        trajectories=trajectories,
        weights={k: round(v / total, 4) for k, v in sorted(per_miner.items())},
        reason="" if weights.top_hotkey else why_no_winner(race_dir),
    )


def judge_stage(ctx: StageContext) -> JudgeOutput:
    """Per race and miner: judged trajectories and reasoning quality. ``llm`` re-judges with the backend."""
    from shoparena.arena.run_judging import judge_run, load_incentives

    section = ctx.config.judge
    agents: list[JudgedAgent] = []
    for race_dir in ctx.input(FirehoseOutput).race_dirs:
        if section.judge == "rubric":
            report = load_incentives(race_dir) or judge_run(race_dir)
        else:
            report = judge_run(race_dir, section.judge, section.backend)
        agents += [
            JudgedAgent(
                race=Path(race_dir).name,
                agent=a.agent,
                judged=a.judged,
                reasoning_quality=a.reasoning_quality,
                final_judge=a.final("judge"),
            )
            for a in report.agents
        ]
    return JudgeOutput(judge=section.judge, agents=agents)


def corpus_stage(ctx: StageContext) -> CorpusOutput:
    """The firehose's race directories through ingest, filter, gates, recovery, split and the three views."""
    with extra_needed("corpus"):
        from shoparena.corpus import CorpusConfig, build_corpus

    section = ctx.config.corpus
    config = CorpusConfig.model_validate(
        {
            **section.options.written(),
            "run_dirs": [Path(d) for d in ctx.input(FirehoseOutput).race_dirs],
            "out": ctx.dir / ctx.stage_hash,
            "recover": section.recover,
            "render_profile": section.render_profile,
        }
    )
    # The directory is keyed by the stage hash; a leftover of other inputs (a judge re-run) starts over.
    report = build_corpus(
        config, progress=lambda message: ctx.console.print(f"corpus: {message}"), restart="changed"
    )
    funnel = report.funnel
    ctx.console.print(f"corpus: {funnel.input} in, {funnel.kept} kept, views {funnel.views}")
    return CorpusOutput(path=str(config.out), funnel=funnel)


def model_stage(ctx: StageContext) -> ModelOutput:
    """The student's starting point as a local folder: ``student-word`` is built over this run's catalogue
    and training-side suites (never the held-out or hidden pools); other names resolve as
    :func:`base_model_path` does."""
    section = ctx.config.model
    served = bool(ctx.config.eval.server)
    if section.base != "student-word" or served:
        with extra_needed("train"):
            from shoparena.train.policy import base_model_path

            return ModelOutput(path=base_model_path(section.base, served=served))
    with extra_needed("train"):
        from shoparena.train.models import build_pipeline_student

    bank = Path(ctx.input(BankOutput).path)
    path = build_pipeline_student(
        ctx.dir / ctx.stage_hash,
        catalog=ctx.input(CatalogOutput).path,
        suites=ctx.input(PartitionsOutput).training_side_paths(),
        knowledge=[bank.with_name(bank.name + ".knowledge.jsonl")],
        seed=section.seed,
        layers=section.layers,
        hidden=section.hidden,
        pretrain_steps=section.pretrain_steps,
        pretrain_items=section.pretrain_items,
        threads=section.threads,
        progress=lambda line: ctx.console.print(f"model: {line}"),
    )
    ctx.console.print(f"student-word: {path}")
    return ModelOutput(path=str(path))


def sft_stage(ctx: StageContext) -> TrainOutput:
    """SFT of the student on the corpus's ``sft`` view with TRL (``shoparena.train``)."""
    from shoparena.train.policy import train_policy

    section = ctx.config.sft
    with extra_needed("train"):
        trained = train_policy(
            method="sft",
            preset=section.preset,
            model=ctx.input(ModelOutput).path,
            corpus=ctx.input(CorpusOutput).path,
            select=section.select,
            trainer=section.trainer,
            out=ctx.dir / ctx.stage_hash,
            threads=section.threads,
            say=lambda line: ctx.console.print(line, highlight=False),
        )
    return TrainOutput(**trained.model_dump())


def _evaluate_held_out(ctx: StageContext, model: str, **extra: Any) -> Any:
    """``evaluate_policy`` of ``model`` on the held-out partition, in this stage's directory (both evaluation
    stages; ``extra``: the leak audit's corpus, the render profile)."""
    from shoparena.eval.policy_eval import evaluate_policy

    with extra_needed("train"):  # hf: policies run under transformers and torch
        return evaluate_policy(
            ctx.config.eval,
            model=model,
            suite=ctx.input(PartitionsOutput).heldout_path,
            index=ctx.input(IndexOutput).path,
            out=ctx.dir / ctx.stage_hash,
            console=ctx.console,
            executor=ctx.config.executor,
            ray_address=ctx.config.ray_address,
            **extra,
        )


def eval_base_stage(ctx: StageContext) -> EvalOutput:
    """The untrained student on the held-out partition (greedy + k samples)."""
    evaluated = _evaluate_held_out(
        ctx, ctx.input(ModelOutput).path, render_profile=ctx.config.corpus.render_profile
    )
    return EvalOutput(**evaluated.model_dump())


def eval_student_stage(ctx: StageContext) -> StudentEvalOutput:
    """The SFT student on the held-out partition, leak-audited against the corpus it was trained on, then
    compared with the base problem by problem (paired difference and McNemar's exact test, greedy)."""
    from shoparena.eval.compare import compare_runs, compare_to_shortcut

    evaluated = _evaluate_held_out(
        ctx,
        ctx.input(TrainOutput).final,
        train_corpus=ctx.input(CorpusOutput).path,
        # After training, the model's render stamp is the one source of its render profile (eval run
        # reads it); a served model has no folder to stamp, so it is evaluated under the corpus's profile.
        render_profile=ctx.config.corpus.render_profile if ctx.config.eval.server else None,
    )

    outputs = StudentEvalOutput(**evaluated.model_dump())
    against = {
        "base": compare_runs(ctx.input(EvalOutput).path, outputs.path),
        "shortcut": compare_to_shortcut(outputs.path),
    }
    for name, comparison in against.items():
        block = comparison.profiles["strict"]
        if block.greedy is not None and block.greedy_asr is not None:
            g, d = block.greedy, block.greedy_asr
            ctx.console.print(
                f"student vs {name} (strict, greedy, {block.problems} held-out problems): "
                f"{g.b_only + g.both} vs {g.a_only + g.both}, difference {d.diff:+.3f} "
                f"[{d.ci_low:+.3f}, {d.ci_high:+.3f}], McNemar exact p = {g.p_value:.2g}"
            )
            setattr(outputs, f"vs_{name}", PairedVerdicts(greedy=g, greedy_asr=d))
    return outputs


def _sft_section(config: Any) -> dict[str, Any]:
    """The SFT stage's hashed section: its knobs and the preset's resolved content (editing the preset
    re-runs the stage)."""
    try:
        from shoparena.train.config import ConfigError, resolved_preset
    except ImportError:  # the train extra is missing: the stage reports itself unavailable when it runs
        return {"sft": config.sft}
    try:
        preset = resolved_preset(config.sft.preset)
    except ConfigError as exc:
        preset = {"error": str(exc)}
    return {"sft": config.sft, "preset": preset}


def _profile(config: Any) -> dict[str, str]:
    """The render profile a stage's output depends on: its name and the hash of its fixed text, so editing
    the profile re-renders the corpus and re-runs what reads it (never stale views)."""
    name = config.corpus.render_profile
    return {"name": name, "hash": profile_hash(name)}


def pipeline_stages() -> list[Stage]:
    """The DAG of ``shoparena pipeline run``."""
    return [
        Stage("catalog", (), lambda c: c.catalog, catalog_stage, "synthetic catalog", output=CatalogOutput),
        Stage("index", ("catalog",), lambda c: c.index, index_stage, "BM25 index", output=IndexOutput),
        Stage(
            "bank",
            ("index",),
            lambda c: c.bank,
            bank_stage,
            "problem bank (four intents, checked)",
            output=BankOutput,
        ),
        Stage(
            "partitions",
            ("bank", "index"),
            lambda c: c.bank,
            partitions_stage,
            "public / held-out / hidden",
            output=PartitionsOutput,
            version=1,  # 1: every pool file carries the bank's web pages as its sidecar
        ),
        Stage(
            "reference",
            ("partitions", "index", "bank"),
            lambda c: c.reference,
            reference_stage,
            "reference planner on the held-out partition",
            output=ReferenceOutput,
        ),
        Stage(
            "firehose",
            ("partitions", "index"),
            lambda c: c.firehose,
            firehose_stage,
            "arena firehose",
            output=FirehoseOutput,
        ),
        Stage("judge", ("firehose",), lambda c: c.judge, judge_stage, "judge", output=JudgeOutput),
        Stage(
            "corpus",
            ("firehose", "judge", "partitions"),
            lambda c: {"corpus": c.corpus, "profile": _profile(c)},
            corpus_stage,
            "corpus",
            output=CorpusOutput,
        ),
        Stage(
            "model",
            ("catalog", "bank", "partitions"),
            # The word vocabulary includes the profile's fixed text: a changed profile rebuilds it.
            lambda c: {"model": c.model, "served": bool(c.eval.server), "profile": _profile(c)},
            model_stage,
            "the student's base model",
            output=ModelOutput,
        ),
        Stage("sft", ("corpus", "model"), _sft_section, sft_stage, "SFT of the student", output=TrainOutput),
        Stage(
            "eval_base",
            ("partitions", "index", "model"),
            lambda c: {"eval": c.eval, "profile": _profile(c)},
            eval_base_stage,
            "evaluation: base model, held-out",
            output=EvalOutput,
        ),
        Stage(
            "eval_student",
            ("sft", "corpus", "partitions", "index", "eval_base"),
            lambda c: {"eval": c.eval, "profile": _profile(c)},
            eval_student_stage,
            "evaluation: student, held-out",
            output=StudentEvalOutput,
        ),
    ]
