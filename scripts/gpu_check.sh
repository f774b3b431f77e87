#!/usr/bin/env bash
# Device checks on CUDA GPUs (H100/H200). Budget: 8 + 10 minutes (enforced).
#  1. The qwen3-4b training preset on one GPU: a few SFT and offline Dr. GRPO steps on a corpus slice; prints
#     tokens/s and peak memory. Optional: QWEN3_4B=/path/to/Qwen3-4B (else a random-init model of the same
#     shape), CORPUS=/path/to/corpus.
#  2. Several processes: the two-process check of the default suite (tests/train/test_distributed.py: killed,
#     refused to another process count, resumed, one writer, losses and weights equal to one process with the
#     same global batch, the final model generates) on two GPUs, with torchrun (NCCL, DDP) and with
#     accelerate/fsdp.yaml (FSDP2 sharding for real). Skipped, and said, with fewer than two GPUs.
#  3. `scripts/gpu_check.sh paper` (on its own, ≤ 8 minutes): a few steps of the `paper` pipeline preset
#     (scripts/gpu_paper_check.py: every stage up to SFT on a small world, the qwen3-4b SFT preset).
# `scripts/gpu_check.sh processes` runs the second check only.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" TRL_EXPERIMENTAL_SILENCE=1
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
if [ "${1:-all}" = paper ]; then
  exec timeout 480 python scripts/gpu_paper_check.py
fi
if [ "${1:-all}" != processes ]; then
  timeout 480 python scripts/gpu_check.py
fi
timeout 600 python -m pytest -m gpu tests/train/test_distributed.py -q -rs -p no:cacheprovider
