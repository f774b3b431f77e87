"""Reasoning judges (ORO's four-gate rubric): inputs, LLM and mechanical judges, coefficient, calibration."""

from shoparena.judge.calibration import (
    CalibrationReport,
    calibrate,
    calibration_markdown,
    to_bin,
)
from shoparena.judge.coefficient import (
    ArenaScore,
    combine_scores,
    judge_counts,
    judge_final_score,
    quality_scores,
    reasoning_coefficient,
    reasoning_quality,
    richness_final_score,
)
from shoparena.judge.inputs import build_judge_input, extract_result_facts, summarise_proxy_calls
from shoparena.judge.llm_judge import (
    GUIDED_REPLIES,
    FailureAccounting,
    Judge,
    JudgeRunStats,
    LLMJudge,
    LLMJudgeConfig,
    run_failed,
)
from shoparena.judge.parse import ParsedReply, parse_judge_reply
from shoparena.judge.prompt import JUDGE_SYSTEM_PROMPT
from shoparena.judge.records import (
    SCORE_BINS,
    JudgeAttempt,
    JudgeInput,
    JudgeStatus,
    JudgeStep,
    JudgeVerdict,
    TrustedCall,
    TrustedSummary,
)
from shoparena.judge.rubric import RubricConfig, RubricJudge

__all__ = [
    "GUIDED_REPLIES",
    "JUDGE_SYSTEM_PROMPT",
    "SCORE_BINS",
    "ArenaScore",
    "CalibrationReport",
    "FailureAccounting",
    "Judge",
    "JudgeAttempt",
    "JudgeInput",
    "JudgeRunStats",
    "JudgeStatus",
    "JudgeStep",
    "JudgeVerdict",
    "LLMJudge",
    "LLMJudgeConfig",
    "ParsedReply",
    "RubricConfig",
    "RubricJudge",
    "TrustedCall",
    "TrustedSummary",
    "build_judge_input",
    "calibrate",
    "calibration_markdown",
    "combine_scores",
    "extract_result_facts",
    "judge_counts",
    "judge_final_score",
    "parse_judge_reply",
    "quality_scores",
    "reasoning_coefficient",
    "reasoning_quality",
    "richness_final_score",
    "run_failed",
    "summarise_proxy_calls",
    "to_bin",
]
