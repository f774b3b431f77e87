"""Reprint the lexical title-similarity calibration table (docs/scoring.md) from the shared-data suites.

usage: python benchmarks/similarity_calibration.py [DATA_DIR]   (default: /work/shared/data)
"""

from __future__ import annotations

import sys
from pathlib import Path

from shoparena.scoring.calibration import build_pairs, calibrate
from shoparena.scoring.similarity import LexicalSimilarity
from shoparena.suites.loaders import titles_from_suites


def main() -> None:
    data = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data")
    paths = sorted(data.glob("shoppingbench/*.jsonl")) + sorted(data.glob("oro/problem_suite_*.json"))
    titles = titles_from_suites(paths)
    positives, negatives, edits = build_pairs(titles)
    lex = LexicalSimilarity()
    res = calibrate(lex.version, lex.similarity, positives, negatives)
    edit_scores = [lex.similarity(a, b) for a, b in edits]
    print(
        f"backend {res.backend}: titles {len(titles)}  positives {res.n_pos}  sibling negatives {res.n_neg}"
        f"  edit negatives {len(edits)}  AUC(pos vs siblings) {res.auc:.4f}"
    )
    for key, t in res.thresholds.items():
        tpr, tnr = res.rates[key]
        edit_tnr = sum(s < t for s in edit_scores) / len(edit_scores)
        print(
            f"{key:14s} threshold {t:.2f}  accept-positives {tpr:.3f}  reject-siblings {tnr:.3f}"
            f"  reject-edits {edit_tnr:.3f}"
        )


if __name__ == "__main__":
    main()
