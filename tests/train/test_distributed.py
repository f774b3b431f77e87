"""Training under a launcher: two CPU processes (torchrun, gloo) train the tiny model as one run with one
writer, resume after a kill, refuse another process count, and match a one-process run of the same global
batch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shoparena.train.config import load_config

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src"

#: Relative tolerance of the two-process run's losses and weights against the one-process run's (same
#: global batch): the same rows, summed in another order (gradient all-reduce vs one batch), float32
#: rounding only: measured 1.2e-7 on CPU. GPU kernels reduce in their own orders: a looser bound.
LOSS_RTOL = {"cpu": 1e-4, "cuda": 1e-3}


ACCELERATE_FSDP = HERE.parents[1] / "src" / "shoparena" / "train" / "accelerate" / "fsdp.yaml"


def _free_port() -> str:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return str(sock.getsockname()[1])


def launch(
    args: list[str],
    writes: Path,
    *,
    launcher: str = "torchrun",
    device: str = "cpu",
    kill_after: int | None = None,
    rank_1_set: str | None = None,
) -> subprocess.CompletedProcess:
    """Two processes of ``launched_train.py <args>``: ``torchrun --standalone`` (a free port) or
    ``accelerate launch`` with the shipped FSDP config; CPU processes hide the GPUs."""
    writes.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
        "WRITES_LOG": str(writes),
        "OMP_NUM_THREADS": "1",
        "TRL_EXPERIMENTAL_SILENCE": "1",
    }
    if device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    env.pop("KILL_AFTER_STEP", None)
    if kill_after is not None:
        env["KILL_AFTER_STEP"] = str(kill_after)
    if rank_1_set is not None:
        env["RANK_1_SET"] = rank_1_set
    if launcher == "torchrun":
        command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    else:  # what docs/training.md gives for FSDP (no --cpu: that flag always starts one process)
        command = [sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(ACCELERATE_FSDP)]
        command += ["--num_processes", "2", "--mixed_precision", "no", "--main_process_port", _free_port()]
    return subprocess.run(
        [*command, str(HERE / "launched_train.py"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def _logs(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "logs.jsonl").read_text().splitlines()]


def _files(run: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in run.rglob("*") if p.is_file() and p.name != "run.lock"}


def check_two_processes(tiny_path, corpus, tmp_path, *, launcher: str, device: str) -> None:
    """Two processes train one run: killed after step 3, refused to one process, resumed by two; the same
    losses, tokens and weights as one process with the same global batch; one writer; the final model
    generates."""
    import torch
    from safetensors.torch import load_file

    from shoparena.llm.factory import backend_from_spec
    from shoparena.llm.types import ChatRequest
    from shoparena.runs.identity import RunDirError
    from shoparena.train.runner import train

    # 8 rows (kept+failed), 2 per process x 2 processes: two steps per epoch, so the data order matters.
    sets = [f"data.corpus={corpus}", "data.select=kept+failed", "sft.max_steps=4", "sft.save_steps=2"]
    if device == "cuda":
        sets.append("sft.use_cpu=false")
    run = tmp_path / "two"
    cli = ["train", "sft", "--config", "tiny", *(a for s in sets for a in ("--set", s)), "--out", str(run)]

    killed = launch(
        [*cli, "--quiet"], tmp_path / "writes-killed", launcher=launcher, device=device, kill_after=3
    )
    assert killed.returncode != 0, killed.stderr[-2000:]
    assert (run / "checkpoints" / "checkpoint-2").is_dir() and not (run / "final").exists()
    assert "train: 2 processes (" in killed.stderr
    if device == "cpu":
        assert "gloo on cpu" in killed.stderr and "DDP (full weights in every process)" in killed.stderr
    if launcher == "accelerate-fsdp":
        fsdp_note = "FSDP config is not applied" if device == "cpu" else "FSDP (weights sharded)"
        assert fsdp_note in killed.stderr

    # One process may not resume what two trained: said, and nothing of the run changes.
    before = _files(run)
    with pytest.raises(RunDirError, match=r"checkpoint-2 was trained by 2 process\(es\).*launch 2"):
        train(load_config("tiny", "sft", sets), run, progress=False)
    assert _files(run) == before

    resumed = launch([*cli, "--quiet"], tmp_path / "writes-resumed", launcher=launcher, device=device)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "sft: 4 steps on 2 process(es)" in resumed.stdout
    # One writer: only the main process ever called a function that writes the run directory.
    for writes in ("writes-killed", "writes-resumed"):
        assert sorted(p.name for p in (tmp_path / writes).iterdir()) == ["rank-0.txt"]
    assert {"claim_run_dir", "write_manifest", "write_render_stamp", "append_line"} <= set(
        (tmp_path / "writes-resumed" / "rank-0.txt").read_text().split()
    )

    summary = json.loads((run / "summary.json").read_text())
    assert summary["resumed_from"].endswith("checkpoint-2") and summary["global_step"] == 4
    assert summary["processes"] == 2 and summary["global_batch"] == 4
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["processes"] == 2 and manifest["stages"]["train"]["outputs"]["global_step"] == 4

    # The same global batch in one process: the same rows, the same losses, the same weights.
    one = train(
        load_config("tiny", "sft", [*sets, "sft.per_device_train_batch_size=4"]),
        tmp_path / "one",
        progress=False,
    )
    assert one["processes"] == 1 and one["global_batch"] == 4
    two_logs = [r for r in _logs(run) if "loss" in r]
    one_logs = [r for r in _logs(tmp_path / "one") if "loss" in r]
    assert [r["step"] for r in two_logs] == [1, 2, 3, 4]  # each step once, across the kill
    for a, b in zip(two_logs, one_logs, strict=True):
        assert a["loss"] == pytest.approx(b["loss"], rel=LOSS_RTOL[device])
        if a["step"] <= 2:  # TRL counts num_tokens from 0 again in a resumed session
            assert a["num_tokens"] == b["num_tokens"]  # the tokens of both processes, gathered
    # Rows seen: epoch x rows = 2 processes x 2 rows x 4 steps (one process of batch 2 would see half).
    assert two_logs[-1]["epoch"] * summary["data"]["used"] == 2 * 2 * 4
    after_two, after_one = (
        load_file(str(run / "final" / "model.safetensors")),
        load_file(str(tmp_path / "one" / "final" / "model.safetensors")),
    )
    assert set(after_two) == set(after_one)
    for name, weight in after_two.items():
        torch.testing.assert_close(weight, after_one[name], rtol=LOSS_RTOL[device], atol=1e-5)
    assert not torch.equal(
        after_two["model.embed_tokens.weight"],
        load_file(f"{tiny_path}/model.safetensors")["model.embed_tokens.weight"],
    )

    # The final model loads and generates as the eval's hf: policy.
    backend = backend_from_spec(f"hf:{run / 'final'}", device=device)
    reply = backend.complete(ChatRequest(messages=[{"role": "user", "content": "shoes"}], max_tokens=4))
    assert reply.usage.completion_tokens >= 1


def test_two_cpu_processes_train_one_run_like_one_process(tiny_path, corpus, tmp_path) -> None:
    """``torchrun --nproc_per_node 2`` on CPU (gloo): the acceptance check of issue 36."""
    check_two_processes(tiny_path, corpus, tmp_path, launcher="torchrun", device="cpu")


@pytest.mark.slow
def test_the_fsdp_config_on_cpu_processes_trains_ddp(tiny_path, corpus, tmp_path) -> None:
    """``accelerate launch --config_file accelerate/fsdp.yaml`` on CPU: accelerate applies FSDP on GPUs only,
    so two CPU processes train with DDP, and ``train`` says so."""
    check_two_processes(tiny_path, corpus, tmp_path, launcher="accelerate-fsdp", device="cpu")


@pytest.mark.slow
def test_processes_that_read_other_data_stop_before_training(corpus, tmp_path) -> None:
    """Process 1 prepares other rows (as from another corpus file at the same path on another node): every
    process stops, the main one says why in one line, before any step."""
    run = tmp_path / "run"
    sets = [f"data.corpus={corpus}", "data.select=kept+failed", "data.max_rows=6", "sft.max_steps=2"]
    cli = ["train", "sft", "--config", "tiny", *(a for s in sets for a in ("--set", s)), "--out", str(run)]
    result = launch(cli, tmp_path / "writes", rank_1_set="data.max_rows=5")
    assert result.returncode != 0
    assert "the prepared data (hash, rows) differs between processes: process(es) [1]" in result.stderr
    assert result.stderr.count("error: the prepared data") == 1  # said once, by the main process
    assert not (run / "checkpoints").exists() and not (run / "final").exists()


@pytest.mark.slow
def test_a_second_launch_into_a_busy_out_says_so_once_and_every_process_exits_2(corpus, tmp_path) -> None:
    """Issue 52, finding 6: the main process refused a busy --out in one line, but the others raised
    MainProcessError with a traceback (RunLockedError was not passed on as a refusal)."""
    from shoparena.runs.identity import RunLock

    run = tmp_path / "run"
    sets = [f"data.corpus={corpus}", "sft.max_steps=2"]
    cli = ["train", "sft", "--config", "tiny", *(a for s in sets for a in ("--set", s)), "--out", str(run)]
    with RunLock(run):  # another launch training into --out
        result = launch(cli, tmp_path / "writes")
    assert result.returncode != 0  # torchrun's own status (1) when any process fails
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "is in use by another run" in errors[0], result.stderr
    # Each process exits 2 (a refusal; torchrun may stop the slower one first), none prints a traceback of
    # its own (torchrun then reports them).
    assert "exitcode  : 2" in result.stderr and "exitcode  : 1 " not in result.stderr, result.stderr
    assert "[rank" not in result.stderr and "MainProcessError" not in result.stderr
    assert sorted(p.name for p in run.iterdir()) == ["run.lock"]


def _gpus() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


@pytest.mark.gpu
@pytest.mark.parametrize("launcher", ["torchrun", "accelerate-fsdp"])
def test_two_gpu_processes_train_one_run_like_one_process(tiny_path, corpus, tmp_path, launcher) -> None:
    """The same check on two GPUs (NCCL; FSDP2 shards for real): scripts/gpu_check.sh."""
    if _gpus() < 2:
        pytest.skip(f"two processes need two GPUs (NCCL puts one process on each); found {_gpus()}")
    check_two_processes(tiny_path, corpus, tmp_path, launcher=launcher, device="cuda")


def test_a_launch_the_trainer_cannot_join_is_refused(corpus, tmp_path, monkeypatch) -> None:
    """Two launched processes that would each train alone (no GPU, no use_cpu): said, before any write."""
    from shoparena.train.config import ConfigError
    from shoparena.train.runner import train

    monkeypatch.setenv("WORLD_SIZE", "2")
    cfg = load_config("tiny", "sft", [f"data.corpus={corpus}", "sft.use_cpu=false", "sft.max_steps=1"])
    with pytest.raises(ConfigError, match=r"started 2 processes but the trainer joins 1.*use_cpu"):
        train(cfg, tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()


def test_one_process_says_so_and_how_to_get_more(corpus, tmp_path, monkeypatch) -> None:
    """accelerate's one-process launcher (what --cpu picks) is named, with the launch that gives several."""
    from shoparena.train.distributed import processes_of
    from shoparena.train.trl_configs import build_trl_config

    cfg = load_config("tiny", "sft", [f"data.corpus={corpus}"])
    plain = processes_of(build_trl_config(cfg, str(tmp_path)))
    assert plain.describe(2, 1).startswith("train: 1 process (cpu); global batch 2 = 2 per process")
    assert "torchrun" not in plain.describe(2, 1)
    monkeypatch.setenv("ACCELERATE_USE_CPU", "True")
    line = processes_of(build_trl_config(cfg, str(tmp_path))).describe(2, 3)
    assert "global batch 6" in line and "torchrun --nproc_per_node N" in line
