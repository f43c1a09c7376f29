"""Which PDF library reads research papers best: each candidate library's lines go through the same
structuring (paperatlas.fulltext.reader), scored against the GROBID/S2ORC parse of the same paper.

    .venv/bin/python benchmarks/fulltext_extract.py [--repeat N]

Per library and paper: paragraph recall (share of the reference paragraphs' word trigrams found in
the extracted body), section recall (reference section names found among extracted headings),
reference recall (reference-list titles matched by an extracted entry's parsed title) and pages/s.
A library that is not installed is listed as such. The corpus: tests/data/pdfs (README.md there).
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

from paperatlas.fulltext.reader import BACKENDS, FulltextError, read_pdf

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "pdfs"


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def trigrams(text: str) -> set[tuple[str, ...]]:
    w = words(text)
    return {tuple(w[i : i + 3]) for i in range(len(w) - 2)}


def score(doc, ref: dict) -> dict[str, float]:
    body = " ".join(p for s in doc.sections for p in s.paragraphs) + " " + " ".join(c.text for c in doc.captions)
    got = trigrams(body)
    recalls = [len(t & got) / len(t) for t in (trigrams(p["text"]) for p in ref["body_text"]) if t]
    para = sum(recalls) / len(recalls)
    heads = {" ".join(words(s.heading)) for s in doc.sections}
    want = {" ".join(words(p["section"])) for p in ref["body_text"] if p["section"]}
    sect = sum(1 for w in want if any(w == h or (w and w in h) for h in heads)) / max(len(want), 1)
    titles = [set(words(r.title)) for r in doc.references]
    raws = [" ".join(words(r.raw)) for r in doc.references]

    def matched(t: str) -> bool:
        tw = set(words(t))
        return bool(tw) and any(len(tw & g) / len(tw | g) >= 0.8 for g in titles if g)

    bib = [t for t in ref["bib_titles"] if t]
    refs = sum(1 for t in bib if matched(t)) / max(len(bib), 1)
    raw_hit = sum(1 for t in bib if any(" ".join(words(t)) in r for r in raws)) / max(len(bib), 1)
    return {"paragraphs": para, "sections": sect, "references": refs, "ref_raw": raw_hit}


def embed_speed() -> None:
    """Texts/s of the default embedder on the corpus's passages, beside the same number of
    abstract-length texts in the same run: what embedding every passage by meaning would cost."""
    from paperatlas.embed.base import DEFAULT_EMBEDDER, EMBEDDERS

    emb = EMBEDDERS.create(DEFAULT_EMBEDDER)
    passages = [
        p for pdf in sorted(CORPUS.glob("*.pdf")) for s in read_pdf(pdf.read_bytes()).sections for p in s.paragraphs
    ]
    refs = [json.loads(f.read_text()) for f in sorted((CORPUS / "reference").glob("*.json"))]
    abstracts = [" ".join(p["text"] for p in r["body_text"][:2]) for r in refs] * (len(passages) // 2 + 1)
    abstracts = abstracts[: len(passages)]
    emb.embed(passages[:8])  # load the model once, outside the timing
    for name, texts in (("abstract-length texts (baseline)", abstracts), ("passages", passages)):
        t0 = time.perf_counter()
        emb.embed(texts)
        secs = time.perf_counter() - t0
        chars = sum(len(t) for t in texts) / len(texts)
        print(f"embed {DEFAULT_EMBEDDER}: {len(texts)} {name}, {chars:.0f} chars each: {len(texts) / secs:.1f} texts/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="reads per file for the speed figure")
    ap.add_argument("--embed", action="store_true", help="also time embedding the passages, against abstracts")
    args = ap.parse_args()
    if args.embed:
        embed_speed()
    papers = sorted(p for p in CORPUS.glob("*.pdf") if (CORPUS / "reference" / f"{p.stem}.json").exists())
    print(f"corpus: {len(papers)} papers with a reference parse in {CORPUS}")
    print(f"{'library':<11} {'paper':<20} {'paragr.':>8} {'sections':>8} {'refs':>6} {'refs(raw)':>9} {'pages/s':>8}")
    for name in BACKENDS:
        totals: list[dict[str, float]] = []
        pages_all, secs_all = 0, 0.0
        for pdf in papers:
            ref = json.loads((CORPUS / "reference" / f"{pdf.stem}.json").read_text())
            data = pdf.read_bytes()
            try:
                t0 = time.perf_counter()
                for _ in range(args.repeat):
                    doc = read_pdf(data, backend=name, time_budget_s=600)
                secs = (time.perf_counter() - t0) / args.repeat
            except ImportError:
                print(f"{name:<11} not installed")
                break
            except FulltextError as e:
                print(f"{name:<11} {pdf.stem:<20} failed: {e}")
                continue
            s = score(doc, ref)
            totals.append(s)
            pages_all += doc.pages
            secs_all += secs
            print(
                f"{name:<11} {pdf.stem[:20]:<20} {s['paragraphs']:>8.3f} {s['sections']:>8.3f}"
                f" {s['references']:>6.3f} {s['ref_raw']:>9.3f} {doc.pages / secs:>8.1f}"
            )
        if totals:
            m = {k: sum(t[k] for t in totals) / len(totals) for k in totals[0]}
            print(
                f"{name:<11} {'MEAN':<20} {m['paragraphs']:>8.3f} {m['sections']:>8.3f}"
                f" {m['references']:>6.3f} {m['ref_raw']:>9.3f} {pages_all / secs_all:>8.1f}"
            )


if __name__ == "__main__":
    main()
