"""One command for the whole pipeline: a stage DAG over one resumable run directory (see ``run_pipeline``)."""

from shoparena.pipeline.config import PipelineConfig, PipelineConfigError, load_pipeline_config
from shoparena.pipeline.dag import Stage, StageContext, StageUnavailable, run_dag
from shoparena.pipeline.run import PipelineIncompleteError, ReportRenderer, dry_run, run_pipeline
from shoparena.pipeline.stages import pipeline_stages

__all__ = [
    "PipelineConfig",
    "PipelineConfigError",
    "PipelineIncompleteError",
    "ReportRenderer",
    "Stage",
    "StageContext",
    "StageUnavailable",
    "dry_run",
    "load_pipeline_config",
    "pipeline_stages",
    "run_dag",
    "run_pipeline",
]
