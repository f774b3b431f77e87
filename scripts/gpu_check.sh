#!/usr/bin/env bash
# Device check of the qwen3-4b training preset on one CUDA GPU (H100/H200): a few SFT and offline Dr. GRPO
# steps on a corpus slice; prints tokens/s and peak memory. Budget: 8 minutes (enforced).
# Optional: QWEN3_4B=/path/to/Qwen3-4B (else a random-init model of the same shape), CORPUS=/path/to/corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" TRL_EXPERIMENTAL_SILENCE=1
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
timeout 480 python scripts/gpu_check.py
