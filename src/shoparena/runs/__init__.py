"""Run directories: every run writes resolved config, manifest, records and summary, and resumes."""

from shoparena.runs.rundir import RunDir, StageRecord

__all__ = ["RunDir", "StageRecord"]
