"""Problem suites: loaders and writers for ShoppingBench test files and ORO suite JSON."""

from shoparena.suites.loaders import (
    ProblemRecordError,
    QuarantinedProblem,
    SuiteLoadError,
    SuiteLoadSummary,
    iter_suite,
    load_suite,
    oro_record,
    parse_problem,
    sb_record,
    write_oro_suite,
    write_sb_jsonl,
)

__all__ = [
    "ProblemRecordError",
    "QuarantinedProblem",
    "SuiteLoadError",
    "SuiteLoadSummary",
    "iter_suite",
    "load_suite",
    "oro_record",
    "parse_problem",
    "sb_record",
    "write_oro_suite",
    "write_sb_jsonl",
]
