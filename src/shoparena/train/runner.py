"""One training run = one run directory (``RUN/``):

* ``identity.json`` (:mod:`shoparena.runs.identity`: the config and the content of the corpus, model folder,
  index and suite; a run of anything else into this directory is refused unless ``restart``);
* ``config.yaml`` (the resolved :class:`TrainConfig`), ``manifest.json`` (typed :mod:`shoparena.runs`
  manifest: code version, git sha, the ``data`` stage with the data hash and row counts, the ``train`` stage);
* ``checkpoints/`` (TRL/transformers checkpoints; a re-run resumes from the last one);
* ``logs.jsonl`` (every TRL log line once, in step order: loss, rewards, learning rate ...; a resumed run
  first drops the lines logged after its checkpoint, which it logs again);
* ``final/`` (a plain transformers folder with tokenizer and tools chat template: ``hf:RUN/final``);
* ``summary.json``.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shoparena.formats.profiles import template_hash, write_render_stamp
from shoparena.jsonl import append_line, read_jsonl_dicts, write_jsonl
from shoparena.runs import RunDir
from shoparena.runs.identity import Restart, RunDirError, RunIdentity
from shoparena.train.checkpoints import last_whole_checkpoint
from shoparena.train.config import ConfigError, TrainConfig
from shoparena.train.data import corpus_render_profile
from shoparena.train.distributed import (
    Processes,
    check_same_everywhere,
    from_main,
    global_batch,
    processes_of,
)
from shoparena.train.layout import OWN_OUTPUTS, TrainManifest, TrainRun


def _input_paths(cfg: TrainConfig) -> dict[str, str | None]:
    """The inputs read by path: the corpus, a model folder (a preset or hub name is config), index, suite."""
    model = cfg.model if Path(cfg.model).expanduser().exists() else None
    return {"corpus": cfg.data.corpus, "model": model, "env.index": cfg.env.index, "env.suite": cfg.env.suite}


def train_identity(cfg: TrainConfig) -> RunIdentity:
    """The run's identity: every setting, with the input paths replaced by their content."""
    inputs = _input_paths(cfg)
    settings = cfg.model_dump(mode="json")
    settings["data"].pop("corpus", None)
    settings["env"].pop("index", None)
    settings["env"].pop("suite", None)
    if inputs["model"] is not None:
        settings.pop("model")
    return RunIdentity.of(f"train-{cfg.method}", settings, inputs)


class TrainRunDir(RunDir):
    """A :class:`RunDir` whose manifest is a :class:`TrainManifest` (method and model filled in)."""

    manifest_model = TrainManifest
    manifest: TrainManifest

    def __init__(self, path: str | Path, *, kind: str, config: TrainConfig, restart: Restart = False) -> None:
        super().__init__(
            path,
            kind=kind,
            config=config,
            identity=train_identity(config),
            own=OWN_OUTPUTS,
            input_paths=list(_input_paths(config).values()),
            restart=restart,
        )
        self.manifest.method, self.manifest.model = config.method, config.model
        self._save_manifest()

    def record_processes(self, count: int, batch: int) -> None:
        """Record how many processes train (and their global batch): a resume must use as many."""
        self.manifest.processes, self.manifest.global_batch = count, batch
        self._save_manifest()


def _callbacks(run: Path, progress: bool) -> list[Any]:
    from transformers import TrainerCallback

    class JsonlLogs(TrainerCallback):
        """Append every log dict (with its step) to ``RUN/logs.jsonl``."""

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and state.is_world_process_zero:
                line = json.dumps({"step": state.global_step, **logs}, default=float)
                append_line(TrainRun.at(run).logs_path, line, fsync=False)

    class RichProgress(TrainerCallback):
        """A Rich progress bar over optimizer steps, showing the last loss/reward."""

        def __init__(self) -> None:
            self.bar: Any = None
            self.task: Any = None

        def on_train_begin(self, args, state, control, **kwargs):
            if not state.is_world_process_zero:
                return
            from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

            self.bar = Progress(
                TextColumn("train"),
                BarColumn(),
                TextColumn("{task.completed}/{task.total}"),
                TimeRemainingColumn(),
                TextColumn("{task.fields[info]}"),
                transient=False,
            )
            self.bar.start()
            self.task = self.bar.add_task(
                "train", total=state.max_steps, completed=state.global_step, info=""
            )

        def on_step_end(self, args, state, control, **kwargs):
            if self.bar is not None:
                self.bar.update(self.task, completed=state.global_step)

        def on_log(self, args, state, control, logs=None, **kwargs):
            if self.bar is not None and logs:
                shown = {k: v for k, v in logs.items() if k in ("loss", "reward", "kl", "grad_norm")}
                self.bar.update(self.task, info=" ".join(f"{k}={v:.4g}" for k, v in shown.items()))

        def on_train_end(self, args, state, control, **kwargs):
            if self.bar is not None:
                self.bar.stop()

    return [JsonlLogs(), RichProgress()] if progress else [JsonlLogs()]


def _peft_config(cfg: TrainConfig) -> Any:
    if cfg.lora is None:
        return None
    from peft import LoraConfig

    return LoraConfig(
        r=cfg.lora.r,
        lora_alpha=cfg.lora.alpha,
        lora_dropout=cfg.lora.dropout,
        target_modules=cfg.lora.target_modules,
        task_type="CAUSAL_LM",
    )


def _save_final(trainer: Any, tokenizer: Any, final: Path, render_profile: str, procs: Processes) -> None:
    """Merge any LoRA adapter and save a plain transformers folder (atomic: temp sibling, then rename) with
    its render stamp (profile and chat-template hash, read back by ``eval run``). Every process calls this:
    sharded weights (FSDP, ZeRO-3) are gathered by all of them; the main process alone writes."""
    import shutil

    accelerator = trainer.accelerator
    plugin = getattr(accelerator.state, "deepspeed_plugin", None)
    sharded = getattr(trainer, "is_fsdp_enabled", False) or getattr(plugin, "zero_stage", 0) == 3
    state_dict = accelerator.get_state_dict(trainer.model) if sharded else None
    if not procs.is_main:
        return
    model = accelerator.unwrap_model(trainer.model)
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    tmp = final.with_name(final.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp, state_dict=state_dict)
    tokenizer.save_pretrained(tmp)
    write_render_stamp(tmp, render_profile, tokenizer.chat_template)
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)


def _peak_memory_gb() -> float | None:
    """Peak CUDA memory of this process (None on CPU)."""
    import torch

    if not torch.cuda.is_available():
        return None
    return round(torch.cuda.max_memory_allocated() / 2**30, 2)


def _tokens_per_s(root: Path, seconds: float, after: int = 0) -> float | None:
    """Trained tokens per second of this session (the log lines after step ``after``), from TRL's
    ``num_tokens`` log field."""
    path = TrainRun.at(root).logs_path
    if not path.exists() or seconds <= 0:
        return None
    rows = [row for row in read_jsonl_dicts(path) if isinstance(row.get("step"), int) and row["step"] > after]
    counts = [row["num_tokens"] for row in rows if row.get("num_tokens") is not None]
    return round((counts[-1] - (counts[0] if len(counts) > 1 else 0)) / seconds, 1) if counts else None


def _checkpoint_step(checkpoint: str | None) -> int:
    return int(Path(checkpoint).name.rpartition("-")[2]) if checkpoint else 0


def _trim_logs(root: Path, step: int) -> list[dict[str, Any]]:
    """Keep the log lines up to ``step`` (the checkpoint resumed from; 0: a fresh start) and return them: the
    steps after it are trained, and logged, again."""
    path = TrainRun.at(root).logs_path
    if not path.exists():
        return []
    rows = read_jsonl_dicts(path)
    kept = [row for row in rows if isinstance(row.get("step"), int) and row["step"] <= step]
    if len(kept) != len(rows):
        tmp = path.with_name(path.name + ".tmp")
        write_jsonl(tmp, kept)
        tmp.replace(path)
    return kept


def _run_loss(before: list[dict[str, Any]], session_loss: float, session_steps: int) -> float:
    """The mean training loss of the whole run: the logged losses up to the checkpoint (each the mean over
    its logging interval) with this session's mean over its own steps."""
    total, last = 0.0, 0
    for row in before:
        if isinstance(row.get("loss"), int | float) and row["step"] > last:
            total += row["loss"] * (row["step"] - last)
            last = row["step"]
    steps = last + session_steps
    return (total + session_loss * session_steps) / steps if steps else session_loss


@dataclass
class _Start:
    """What the main process decided about the run directory, handed to every process."""

    summary: dict[str, Any] | None = None  # a finished run: its summary, nothing to train
    last: str | None = None  # the checkpoint to resume from
    note: str | None = None  # one line: the torn checkpoints passed over to reach it
    logged: list[dict[str, Any]] = field(default_factory=list)  # the log lines up to it


def train(
    cfg: TrainConfig,
    out_dir: str | Path,
    *,
    progress: bool = True,
    restart: Restart = False,
    say: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run (or resume) training ``cfg`` in ``out_dir``; returns the summary (also ``RUN/summary.json``).

    A finished run with the same config is not redone; an interrupted one resumes from its last checkpoint.
    Under a multi-process launcher every process calls this; only the main one claims and writes ``out_dir``
    (:mod:`shoparena.train.distributed`), and every process returns the same summary.

    Args:
        say: Called once, on the main process, with a line saying how many processes train and the global
            batch they make.

    Raises:
        RunDirError: ``out_dir`` holds another kind of run, or a run of another config, corpus or model
            (unless ``restart``: its outputs are cleared first), or is, holds or lies in an input, or its last
            checkpoint was trained by another number of processes.
    """
    from shoparena.train.trl_configs import build_trl_config

    root = Path(out_dir)
    # A bad trainer field is refused here, before any write.
    args = build_trl_config(cfg, str(TrainRun.at(root).checkpoints_dir))
    procs = processes_of(args)
    if procs.sharded and cfg.lora is not None:
        raise ConfigError(
            "lora: a LoRA adapter cannot be merged from FSDP shards here; launch LoRA runs with "
            "accelerate/zero2.yaml or torchrun (DDP), or train without lora under FSDP"
        )
    batch = (args.per_device_train_batch_size, args.gradient_accumulation_steps)
    if say is not None and procs.is_main:
        say(procs.describe(*batch))
    run: TrainRunDir | None = None

    def claim() -> _Start:
        nonlocal run
        run = TrainRunDir(root, kind=f"train-{cfg.method}", config=cfg, restart=restart)
        try:
            return _decide(cfg, run, procs, global_batch(*batch, procs.count))
        except BaseException:
            run.close()
            raise

    start = from_main(procs, claim)
    if start.note is not None and say is not None and procs.is_main:
        say(start.note)
    if start.summary is not None:
        if run is not None:
            run.close()
        return start.summary
    try:
        return _train(cfg, args, run, root, procs, start, progress, say)
    finally:
        if run is not None:
            run.close()


def _decide(cfg: TrainConfig, run: TrainRunDir, procs: Processes, batch: int) -> _Start:
    """On the main process, under the claim: return a finished run's summary, or the checkpoint to resume
    from (refusing one trained by another number of processes), and record this run's processes."""
    root = run.path
    layout = TrainRun.at(root)
    done = run.done("train", cfg.model_dump(mode="json"))
    if done is not None and layout.final_dir.is_dir():
        return _Start(summary=json.loads(layout.summary_path.read_text(encoding="utf-8")))
    whole, torn = last_whole_checkpoint(layout.checkpoints_dir)
    last = str(whole) if whole is not None else None
    note = None
    if torn:  # torn by a kill while written: set aside (its step is trained and saved again)
        for folder, _ in torn:
            aside = folder.with_name(f"torn-{folder.name}")  # a name transformers neither resumes nor rotates
            if aside.exists():
                shutil.rmtree(aside)
            folder.rename(aside)
        passed = "; ".join(f"{folder.name} ({why})" for folder, why in torn)
        note = f"resuming from {whole.name if whole else 'the start'}: set aside torn {passed} as torn-*"
    before = run.manifest.processes
    if last is not None and before != procs.count:
        raise RunDirError(
            f"--out {root}: {Path(last).name} was trained by {before} process(es) (global batch "
            f"{run.manifest.global_batch or '?'}); resuming it with {procs.count} would change the global "
            f"batch and the data order: launch {before} process(es) again, or pass --restart to start over"
        )
    run.record_processes(procs.count, batch)
    return _Start(last=last, note=note, logged=_trim_logs(root, _checkpoint_step(last)))


def _train(
    cfg: TrainConfig,
    args: Any,
    run: TrainRunDir | None,
    root: Path,
    procs: Processes,
    start: _Start,
    progress: bool,
    say: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every process: prepare the data (the same on each, checked), train, save; the main one (``run``
    given) writes the manifest, the final model and the summary, which every process returns."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from shoparena.train import methods
    from shoparena.train.data import select_rows
    from shoparena.train.models import prepare_tokenizer, resolve_model
    from shoparena.train.trl_configs import weights_dtype

    layout = TrainRun.at(root)
    final = layout.final_dir
    config_payload = cfg.model_dump(mode="json")
    started = time.time()
    with args.distributed_state.local_main_process_first():  # one process per node builds a named model
        model_path = resolve_model(cfg.model)
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    prepare_tokenizer(tokenizer)
    rows, report = select_rows(cfg)
    render_profile = corpus_render_profile(cfg)
    dataset = methods.prepare(cfg, args, rows, tokenizer, report)
    check_same_everywhere(procs, "the prepared data (hash, rows)", (report.data_hash, len(dataset)))
    if say is not None and procs.is_main:
        say(report.describe())
    if run is not None:
        run.manifest.data_hash, run.manifest.rows_used = report.data_hash, report.used
        run.manifest.render_profile = render_profile
        run.manifest.template_hash = template_hash(tokenizer.chat_template)
        run.complete(
            "data",
            {"data": config_payload["data"], "trainer": config_payload["trainer"]},
            started,
            report.as_dict(),
        )

    model = AutoModelForCausalLM.from_pretrained(model_path, dtype=weights_dtype(args))
    trainer = methods.build_trainer(cfg, args, model, tokenizer, dataset, _peft_config(cfg))
    for callback in _callbacks(root, progress):
        trainer.add_callback(callback)
    last = start.last
    resumed_at = _checkpoint_step(last)
    t0 = time.time()
    output = trainer.train(resume_from_checkpoint=last)
    seconds = time.time() - t0
    session_steps = trainer.state.global_step - resumed_at
    _save_final(trainer, tokenizer, final, render_profile, procs)

    def finish() -> dict[str, Any]:
        assert run is not None  # the main process
        summary = {
            "peak_memory_gb": _peak_memory_gb(),
            "tokens_per_s": _tokens_per_s(root, seconds, resumed_at),
            "method": cfg.method,
            "model": cfg.model,
            "model_path": model_path,
            "resumed_from": last,
            "global_step": trainer.state.global_step,
            "processes": procs.count,
            "global_batch": run.manifest.global_batch,
            "train_loss": _run_loss(start.logged, output.training_loss, session_steps)
            if last
            else output.training_loss,
            "train_seconds": round(seconds, 3),
            "metrics": output.metrics,
            "data": report.as_dict(),
            "final": str(final),
        }
        run.manifest.final = str(final)
        run.complete(
            "train", config_payload, started, {"final": str(final), "global_step": trainer.state.global_step}
        )
        run.write_summary(summary)
        return summary

    return from_main(procs, finish)
