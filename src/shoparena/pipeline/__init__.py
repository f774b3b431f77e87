"""One command for the whole pipeline: a stage DAG over one resumable run directory (see ``run_pipeline``)."""

from shoparena.pipeline.config import PipelineConfig, PipelineConfigError, load_pipeline_config
from shoparena.pipeline.dag import Stage, StageContext, StageUnavailable, run_dag
from shoparena.pipeline.run import PipelineIncompleteError, dry_run, run_pipeline

__all__ = [
    "PipelineConfig",
    "PipelineConfigError",
    "PipelineIncompleteError",
    "Stage",
    "StageContext",
    "StageUnavailable",
    "dry_run",
    "load_pipeline_config",
    "run_dag",
    "run_pipeline",
]
