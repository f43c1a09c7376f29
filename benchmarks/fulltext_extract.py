"""Which PDF library reads research papers best: each candidate library's lines go through the same
structuring (paperatlas.fulltext.reader), scored against the GROBID/S2ORC parse of the same paper.

    .venv/bin/python benchmarks/fulltext_extract.py [--repeat N] [--baseline READER.py] [--embed]

Per library and paper with a reference parse: paragraph recall (share of the reference paragraphs'
word trigrams found in the extracted body), section recall (reference section names found among
extracted headings), reference recall (reference-list titles matched by an extracted entry's parsed
title), caption recall (the "Figure N" / "Table N" the reference text mentions, found among the
extracted captions' labels) and pages/s. Then, per library over every PDF of the corpus (with a
reference or not): how many were read, why the others were not, and what was found per paper.
`--baseline` reads the corpus a second time with another copy of reader.py (e.g. main's:
`git show main:paperatlas/fulltext/reader.py > /tmp/reader_main.py`) as the row "pdfium@baseline",
so a change to the structuring is measured against what it replaces in the same run.
A library that is not installed is listed as such. The corpus: tests/data/pdfs and
benchmarks/data/pdfs (README.md in each).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

from paperatlas.fulltext import reader as current

ROOT = Path(__file__).resolve().parent.parent
CORPORA = [ROOT / "tests" / "data" / "pdfs", ROOT / "benchmarks" / "data" / "pdfs"]
METRICS = ("paragraphs", "sections", "references", "ref_raw", "captions")


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def trigrams(text: str) -> set[tuple[str, ...]]:
    w = words(text)
    return {tuple(w[i : i + 3]) for i in range(len(w) - 2)}


_LABEL = re.compile(r"\b(Figure|Fig\.|Table)\s+(\d{1,2})\b")


def score(doc: Any, ref: dict) -> dict[str, float]:
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
    mentioned = {
        ("table" if k.lower().startswith("tab") else "figure", int(n))
        for p in ref["body_text"]
        for k, n in _LABEL.findall(p["text"])
    }
    have = {(c.kind, int(m.group(0))) for c in doc.captions if (m := re.search(r"\d+", c.label))}
    caps = len(mentioned & have) / len(mentioned) if mentioned else 1.0
    return {"paragraphs": para, "sections": sect, "references": refs, "ref_raw": raw_hit, "captions": caps}


def corpus() -> list[tuple[Path, dict | None]]:
    out = []
    for folder in CORPORA:
        for pdf in sorted(folder.glob("*.pdf")):
            ref_file = folder / "reference" / f"{pdf.stem}.json"
            out.append((pdf, json.loads(ref_file.read_text()) if ref_file.exists() else None))
    return out


def load_reader(path: Path) -> ModuleType:
    """Another copy of reader.py, imported beside the current one (its relative imports still work)."""
    spec = importlib.util.spec_from_file_location("paperatlas.fulltext._reader_baseline", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def embed_speed() -> None:
    """Texts/s of the default embedder on the corpus's passages, beside the same number of
    abstract-length texts in the same run: what embedding every passage by meaning would cost."""
    from paperatlas.embed.base import DEFAULT_EMBEDDER, EMBEDDERS

    emb = EMBEDDERS.create(DEFAULT_EMBEDDER)
    refs = [r for _, r in corpus() if r]
    passages = [
        p for pdf, r in corpus() if r for s in current.read_pdf(pdf.read_bytes()).sections for p in s.paragraphs
    ]
    abstracts = [" ".join(p["text"] for p in r["body_text"][:2]) for r in refs] * (len(passages) // 2 + 1)
    abstracts = abstracts[: len(passages)]
    emb.embed(passages[:8])  # load the model once, outside the timing
    for name, texts in (("abstract-length texts (baseline)", abstracts), ("passages", passages)):
        t0 = time.perf_counter()
        emb.embed(texts)
        secs = time.perf_counter() - t0
        chars = sum(len(t) for t in texts) / len(texts)
        print(f"embed {DEFAULT_EMBEDDER}: {len(texts)} {name}, {chars:.0f} chars each: {len(texts) / secs:.1f} texts/s")


def run(label: str, mod: ModuleType, backend: str, papers: list[tuple[Path, dict | None]], repeat: int) -> dict:
    """Read every PDF with one library; the scores of those with a reference, the counts of all."""
    rows: list[tuple[str, dict[str, float]]] = []
    failed: Counter[str] = Counter()
    found: Counter[str] = Counter()
    pages_all, secs_all, read = 0, 0.0, 0
    for pdf, ref in papers:
        data = pdf.read_bytes()
        try:
            t0 = time.perf_counter()
            for _ in range(repeat):
                doc = mod.read_pdf(data, backend=backend, time_budget_s=600)
            secs = (time.perf_counter() - t0) / repeat
        except ImportError:
            print(f"{label:<15} not installed")
            return {}
        except mod.FulltextError as e:
            failed[e.reason] += 1
            if ref:
                print(f"{label:<15} {pdf.stem[:20]:<20} failed: {e}")
            continue
        read += 1
        pages_all += doc.pages
        secs_all += secs
        found["sections"] += len(doc.sections)
        found["captions"] += len(doc.captions)
        found["references"] += len(doc.references)
        found["passages"] += sum(len(s.paragraphs) for s in doc.sections)
        if ref:
            s = score(doc, ref)
            rows.append((pdf.stem, s))
            print(
                f"{label:<15} {pdf.stem[:20]:<20} {s['paragraphs']:>8.3f} {s['sections']:>8.3f}"
                f" {s['references']:>6.3f} {s['ref_raw']:>9.3f} {s['captions']:>8.3f} {doc.pages / secs:>8.1f}"
            )
    if rows:
        m = {k: sum(s[k] for _, s in rows) / len(rows) for k in METRICS}
        print(
            f"{label:<15} {'MEAN':<20} {m['paragraphs']:>8.3f} {m['sections']:>8.3f}"
            f" {m['references']:>6.3f} {m['ref_raw']:>9.3f} {m['captions']:>8.3f} {pages_all / max(secs_all, 1e-9):>8.1f}"
        )
    return {"rows": rows, "failed": failed, "found": found, "read": read, "pages": pages_all, "secs": secs_all}


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="reads per file for the speed figure")
    ap.add_argument("--embed", action="store_true", help="also time embedding the passages, against abstracts")
    ap.add_argument("--baseline", type=Path, help="another reader.py, measured as pdfium@baseline in the same run")
    ap.add_argument("--only", action="append", help="measure only these libraries (repeatable)")
    args = ap.parse_args()
    if args.embed:
        embed_speed()
    papers = corpus()
    n_ref = sum(1 for _, r in papers if r)
    print(f"corpus: {len(papers)} PDFs, {n_ref} with a reference parse, in {', '.join(str(c) for c in CORPORA)}")
    print(
        f"{'library':<15} {'paper':<20} {'paragr.':>8} {'sections':>8} {'refs':>6} {'refs(raw)':>9}"
        f" {'captions':>8} {'pages/s':>8}"
    )
    runs: list[tuple[str, ModuleType, str]] = []
    if args.baseline:
        runs.append(("pdfium@baseline", load_reader(args.baseline), "pdfium"))
    runs += [(name, current, name) for name in current.BACKENDS if not args.only or name in args.only]
    results = {label: run(label, mod, backend, papers, args.repeat) for label, mod, backend in runs}
    print(f"\nevery PDF of the corpus ({len(papers)}), per library")
    print(
        f"{'library':<15} {'read':>5} {'failed (why)':<28} {'sect/pdf':>8} {'caps/pdf':>8} {'refs/pdf':>8} {'pages/s':>8}"
    )
    for label, r in results.items():
        if not r:
            continue
        why = ", ".join(f"{k} {v}" for k, v in sorted(r["failed"].items())) or "-"
        n = max(r["read"], 1)
        print(
            f"{label:<15} {r['read']:>5} {why:<28} {r['found']['sections'] / n:>8.1f} {r['found']['captions'] / n:>8.1f}"
            f" {r['found']['references'] / n:>8.1f} {r['pages'] / max(r['secs'], 1e-9):>8.1f}"
        )
    print("\nworst paper per measure")
    for label, r in results.items():
        if not r or not r["rows"]:
            continue
        worst = [
            f"{k} {min(r['rows'], key=lambda x: x[1][k])[1][k]:.3f} ({min(r['rows'], key=lambda x: x[1][k])[0][:14]})"
            for k in METRICS
        ]
        print(f"{label:<15} " + "; ".join(worst))


if __name__ == "__main__":
    main()
