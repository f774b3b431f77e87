"""Evaluation: any policy on a held-out suite; greedy ASR, pass@1, pass@k, pass^k with intervals.

Import the submodules you need (``hf:`` pulls in torch lazily): :mod:`shoparena.eval.run` (``run_eval``),
:mod:`shoparena.eval.compare`, :mod:`shoparena.eval.metrics`, :mod:`shoparena.eval.policies`,
:mod:`shoparena.eval.batching` and :mod:`shoparena.eval.server` (the CPU serving engine).
"""
