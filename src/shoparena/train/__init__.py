"""Post-training on corpus views with TRL: SFT, per-step teacher-grounded Dr. GRPO (offline and online in
``ShopEnv``) and KTO. Entry point :func:`shoparena.train.runner.train`; CLI ``shoparena train``.

Importing this package does not import torch or TRL (the ``train`` extra); the trainer modules do.
"""

from shoparena.train.config import ConfigError, TrainConfig, load_config, preset_names

__all__ = ["ConfigError", "TrainConfig", "load_config", "preset_names"]
