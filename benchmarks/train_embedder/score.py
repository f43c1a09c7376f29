"""Score embedders side by side on the train/test splits (run with the product venv):

    PAPERATLAS_VECTOR_CACHE=... .venv/bin/python benchmarks/train_embedder/score.py \
        --embedders minilm,NAME --paraphrases benchmarks/data/paraphrase_8k.jsonl --workdir DIR

SciFact train and test nDCG@10 (keyword / semantic / hybrid) through `paperatlas eval beir`'s
own code, and the paraphrase set's MRR@10 per split over the venue library (venue papers +
the examples), one library per embedder kept in --workdir. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = Path("/work/shared/data")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--embedders", default="minilm", help="registered embedder names, comma-separated")
    ap.add_argument("--paraphrases", default="")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--parts", default="scifact,paraphrase")
    ap.add_argument("--venue", default="", help="venue papers JSONL (default: all of them plus the examples)")
    a = ap.parse_args()
    from paperatlas_lab.eval.beir import eval_beir, eval_paraphrases, load_paraphrases
    from paperatlas.library import Library

    out: dict = {}
    for name in a.embedders.split(","):
        r: dict = {}
        if "scifact" in a.parts:
            for split in ("train", "test"):
                t = time.time()
                r[f"scifact_{split}"] = eval_beir(DATA / "scifact", split=split, embedder=name)
                print(f"{name} scifact {split} {time.time() - t:.0f}s", file=sys.stderr, flush=True)
        if "paraphrase" in a.parts and a.paraphrases:
            Path(a.workdir).mkdir(parents=True, exist_ok=True)
            tag = Path(a.venue).stem if a.venue else "venue"
            lib = Library(Path(a.workdir) / f"{tag}-{name}.db", embedder=name)
            files = (
                [a.venue]
                if a.venue
                else [DATA / "ml_venue_papers" / "papers.jsonl.gz", *sorted((REPO / "examples").glob("*.txt"))]
            )
            lib.ingest(files)
            t = time.time()
            n = lib.embed()
            r["venue_embed"] = {"papers": n, "seconds": round(time.time() - t, 1)}
            rows = [json.loads(x) for x in open(a.paraphrases, encoding="utf-8") if x.strip()]
            pairs = load_paraphrases(a.paraphrases, lib)
            for split in ("train", "test"):
                sel = [p for p, row in zip(pairs, rows) if row.get("split") == split]
                res = eval_paraphrases(lib, sel)
                res.pop("_queries", None)
                r[f"paraphrase_{split}"] = {"queries": len(sel), **res}
        out[name] = r
        print(json.dumps({name: r}), file=sys.stderr, flush=True)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
