"""Ask upstream's Lucene (Pyserini 0.22.1, Lucene 9.5) for the facts the parity tests compare against.

Run with an interpreter that has ``pyserini==0.22.1`` and Java 11+:

    python tests/search/lucene_oracle.py CATALOG.jsonl QUERIES.json OUT.json [--k 60]
    python tests/search/lucene_oracle.py --index LUCENE_INDEX - QUERIES.jsonl OUT.json --k 100

``QUERIES`` is ``{"queries": [...], "texts": [...]}`` or a query file of ``anchor_lucene`` (JSON lines with
``q``); ``--index`` reuses an index built by ``pyserini.index.lucene`` instead of indexing the catalog.

It indexes the catalog as upstream does (``JsonCollection``, default English analyzer), then writes the
index statistics (``docCount``, ``sumTotalTermFreq``), each text's analyzer tokens, and per query the
raw BM25 scores of the top ``k`` (``IndexSearcher`` with ``BM25Similarity(0.9, 0.4)``: Pyserini's own
hit scores are rounded to 4 decimals by Anserini's tie adjuster, so they cannot show float32 parity) and
Pyserini's hit order (score, then ``id`` ascending). Also used to regenerate
``tests/search/data/lucene_parity.json``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SPECIAL = re.compile(r'[+\-&|!(){}\[\]^"~*?:\\/]')


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("catalog")
    ap.add_argument("queries", help="JSON: {'queries': [...], 'texts': [...]}")
    ap.add_argument("out")
    ap.add_argument("--k", type=int, default=60)
    ap.add_argument("--index", help="an existing Lucene index (the catalog argument is then ignored)")
    args = ap.parse_args()
    if args.queries.endswith(".jsonl"):
        lines = Path(args.queries).read_text(encoding="utf-8").split("\n")
        spec = {"queries": [json.loads(line)["q"] for line in lines if line.strip()]}
    else:
        spec = json.loads(Path(args.queries).read_text(encoding="utf-8"))
    if args.index:
        Path(args.out).write_text(json.dumps(query_index(args.index, spec, args.k), ensure_ascii=False))
        return
    tmp = Path(tempfile.mkdtemp(prefix="lucene_oracle_"))
    try:
        (tmp / "coll").mkdir()
        shutil.copy(args.catalog, tmp / "coll" / "documents.jsonl")
        subprocess.run(
            [sys.executable, "-m", "pyserini.index.lucene", "--collection", "JsonCollection", "--input",
             str(tmp / "coll"), "--index", str(tmp / "idx"), "--generator", "DefaultLuceneDocumentGenerator",
             "--threads", "1", "--storeRaw"],
            check=True, capture_output=True,
        )  # fmt: skip
        result = query_index(str(tmp / "idx"), spec, args.k)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    Path(args.out).write_text(json.dumps(result, ensure_ascii=False, indent=0))


def query_index(index: str, spec: dict, k: int) -> dict:
    from pyserini.analysis import Analyzer, get_lucene_analyzer
    from pyserini.search.lucene import LuceneSearcher

    # Only after Pyserini's imports: they configure the JVM's classpath before jnius starts it.
    jnius = importlib.import_module("jnius")
    autoclass, cast = jnius.autoclass, jnius.cast

    searcher = LuceneSearcher(index)
    searcher.set_bm25(0.9, 0.4)
    reader = autoclass("org.apache.lucene.index.DirectoryReader").open(
        autoclass("org.apache.lucene.store.FSDirectory").open(autoclass("java.io.File")(index).toPath())
    )
    as_reader = cast("org.apache.lucene.index.IndexReader", reader)
    raw = autoclass("org.apache.lucene.search.IndexSearcher")(as_reader)
    raw.setSimilarity(autoclass("org.apache.lucene.search.similarities.BM25Similarity")(0.9, 0.4))
    analyzer = autoclass("io.anserini.analysis.DefaultEnglishAnalyzer").newDefaultInstance()
    generator = autoclass("io.anserini.search.query.BagOfWordsQueryGenerator")()
    out: dict = {
        "lucene": "pyserini 0.22.1 / Lucene 9.5.0, DefaultEnglishAnalyzer, BM25Similarity(0.9, 0.4)",
        "docCount": reader.getDocCount("contents"),
        "sumTotalTermFreq": reader.getSumTotalTermFreq("contents"),
        "tokens": {},
        "queries": [],
    }
    py_analyzer = Analyzer(get_lucene_analyzer())
    for text in spec.get("texts", []):
        out["tokens"][text] = py_analyzer.analyze(text)
    for q in spec["queries"]:
        text = SPECIAL.sub(" ", q).strip()
        top = raw.search(generator.buildQuery("contents", analyzer, text), k)
        scores = {reader.document(sd.doc).get("id"): sd.score for sd in top.scoreDocs}
        order = [h.docid for h in searcher.search(text, k=k)]
        out["queries"].append({"q": q, "scores": scores, "order": order})
    return out


if __name__ == "__main__":
    main()
