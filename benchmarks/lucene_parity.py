"""Compare a shoparena index with upstream's Lucene on the same catalog: tokens, scores, rankings, windows.

Usage (Lucene's side comes from ``tests/search/lucene_oracle.py`` and ``anchor_lucene/side_by_side.py``,
run with an interpreter that has ``pyserini==0.22.1``)::

    python tests/search/lucene_oracle.py --index LU_IDX - Q.jsonl LU_RAW.json --k 100
    python benchmarks/lucene_parity.py --index SA_IDX --lucene LU_RAW.json \
        [--windows LU.jsonl --queries Q.jsonl]

Prints, as JSON: both engines' token total and docCount, how many (query, document) scores are
bit-identical / within 1e-6 relative / missing, how many top-k rankings are equal (ties: product_id
ascending), and with ``--windows`` how many 50-survivor windows equal Lucene's (as ordered lists, as sets).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from shoparena.search import SearchIndex


def score_parity(index: SearchIndex, lucene: dict) -> dict:
    pairs = exact = within = missing = rankings = 0
    worst = 0.0
    for entry in lucene["queries"]:
        docs, scores = index.search(entry["q"], k=len(index))
        by_doc = dict(zip(docs.tolist(), scores.tolist(), strict=True))
        for pid, score in entry["scores"].items():
            pairs += 1
            ours = by_doc.get(index.doc_index(pid))
            if ours is None:
                missing += 1
                continue
            rel = abs(ours - score) / score
            worst = max(worst, rel)
            exact += ours == score
            within += rel <= 1e-6
        k = len(entry["order"])
        top = [index.product_dict(int(d))["product_id"] for d in docs[:k]]
        rankings += top == entry["order"]
    stats = index.manifest.stats
    return {
        "lucene_tokens": lucene["sumTotalTermFreq"],
        "tokens": stats.total_tokens,
        "lucene_doc_count": lucene["docCount"],
        "doc_count": stats.docs_with_terms,
        "queries": len(lucene["queries"]),
        "pairs": pairs,
        "bit_identical": exact,
        "within_1e-6": within,
        "missing": missing,
        "worst_relative_difference": worst,
        "equal_rankings": rankings,
    }


def window_parity(index_dir: Path, windows: Path, queries: Path) -> dict:
    lucene: dict[str, dict[int, list[str]]] = {}
    for line in windows.read_text().splitlines():
        row = json.loads(line)
        lucene.setdefault(row["engine"], {})[row["qid"]] = row["surv"]
    by_qid = {}
    for line in queries.read_text(encoding="utf-8").split("\n"):
        if line.strip():
            q = json.loads(line)
            by_qid[q["qid"]] = q
    out = {}
    for engine, retrieve_k in (("lucene-oro", 10_000), ("lucene-sb", 100_000)):
        if engine not in lucene:
            continue
        index = SearchIndex.open(index_dir, retrieve_k=retrieve_k)
        same_list = same_set = 0
        for qid, survivors in lucene[engine].items():
            q = by_qid[qid]
            window = index.find_window(q["q"], q["shop_id"], q["price"], None, q["service"])
            ours = [index.product_dict(int(i))["product_id"] for i in window]
            same_list += ours == survivors
            same_set += set(ours) == set(survivors)
        out[engine] = {"queries": len(lucene[engine]), "same_ordered_list": same_list, "same_set": same_set}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--lucene", type=Path, required=True, help="output of tests/search/lucene_oracle.py")
    ap.add_argument("--windows", type=Path, help="side_by_side.py lucene output (per-query survivors)")
    ap.add_argument("--queries", type=Path, help="the query file the windows were made with")
    args = ap.parse_args()
    result = score_parity(SearchIndex.open(args.index), json.loads(args.lucene.read_text(encoding="utf-8")))
    if args.windows and args.queries:
        result["windows"] = window_parity(args.index, args.windows, args.queries)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
