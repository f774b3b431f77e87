"""The full pipeline's tiny config: every real stage in minutes on 2 cores (the slow pipeline tests)."""

TINY = {
    "catalog": {"products": 800, "workers": 1},
    "bank": {"problems": 60, "public_size": 8, "public_versions": 1, "reserve": 4, "heldout": 6, "hidden": 2},
    "firehose": {"races": 1, "problems_per_race": 4},
    "model": {"layers": 1, "hidden": 64, "pretrain_steps": 4},
    "sft": {"trainer": {"max_steps": 2}},
    "eval": {"samples": 2, "max_tokens": 32, "max_steps": 2, "limit": 3},
    "workers": 1,
}
