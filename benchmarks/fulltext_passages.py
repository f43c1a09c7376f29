"""Passages of the body by keyword alone against keyword and meaning fused (hybrid), in one run: the
evidence recall of what `ask --paper` reads, the embedding rate of passages, and the time of
`search --in body` before (keyword) and after (hybrid).

    flock /work/heavy.lock nice -n 10 .venv/bin/python benchmarks/fulltext_passages.py [--copies 100]

The library: the two corpus papers (tests/data/pdfs) with their bodies, embedded by the library's
default model (the packaged ONNX MiniLM), through a fresh vector cache so every passage is really
embedded. Question sets: tests/data/pdfs/questions.json (10, written before the keyword search was
measured) and benchmarks/data/fulltext_questions_heldout.json (16, written in a reader's words before
this script first ran). Evidence recall@k: one of the paper's top k passages holds the answer's phrase
(`retrieve(question, [paper])`, what `ask --paper` sends: k = 6 there, 2 per paper in `ask`).

For the timing of `search --in body`, the library also holds `--copies` more papers, each carrying the
body of one of the two (their passages stored as read, and embedded: the vectors come from the cache
this run filled), so the search runs over thousands of passages, not 165.

The adoption rule, written before the first run:
  hybrid is adopted for `ask`'s retrieval and `search --in body` if, on every question set, its
  recall@2 is not lower than keyword's, and over all sets it finds the evidence in the top 2 for at
  least one question keyword alone misses; and no set loses more than one question at @1 or @6.
  Its search time is reported, not a condition: the body search is a fraction of the papers' search.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from paperatlas import Library
from paperatlas.fulltext.capability import section_rows
from paperatlas.fulltext.reader import read_pdf
from paperatlas.store.vector_cache import VectorCache

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "pdfs"
SETS = {
    "questions.json": CORPUS / "questions.json",
    "heldout": ROOT / "benchmarks" / "data" / "fulltext_questions_heldout.json",
}
KS = (1, 2, 6)
MODES = ("keyword", "hybrid")


def recall(lib: Library, qs: list[dict], mode: str) -> tuple[dict[int, int], list[str]]:
    hit = dict.fromkeys(KS, 0)
    marks = []
    for q in qs:
        got = lib.fulltext.retrieve(q["q"], [q["paper"]], per_paper=6, limit=6, mode=mode)
        row = ""
        for k in KS:
            ok = any(q["evidence"] in x.text.lower() for x in got[:k])
            hit[k] += ok
            row += "y" if ok else "-"
        marks.append(row)
    return hit, marks


def both_papers(lib: Library, qs: list[dict], mode: str, ids: list[str]) -> int:
    """Over both papers at once: the best passage is the right paper's and holds the answer."""
    right = 0
    for q in qs:
        got = lib.fulltext.search(q["q"], limit=1, paper_ids=ids, mode=mode)
        right += bool(got) and got[0].id == q["paper"] and q["evidence"] in got[0].text.lower()
    return right


def p50(fn, queries: list[str], rounds: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(rounds):
        for q in queries:
            t0 = time.perf_counter()
            fn(q)
            times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--copies", type=int, default=100, help="papers carrying a copy of a body, for the timing")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--corpus",
        type=Path,
        help="another folder of PDFs with its questions.json instead (benchmarks/data/pdfs: 23 papers, 22 "
        "questions written before any retrieval ran on them; a fresh set for the rule above)",
    )
    args = ap.parse_args()
    corpus = args.corpus or CORPUS
    paths = {corpus.name + "/questions.json": corpus / "questions.json"} if args.corpus else SETS
    sets = {name: json.loads(path.read_text())["questions"] for name, path in paths.items()}
    with tempfile.TemporaryDirectory() as tmp:
        docs = {pdf.stem: read_pdf(pdf.read_bytes()) for pdf in sorted(corpus.glob("*.pdf"))}
        rows = [{"id": k, "title": d.title, "abstract": d.abstract} for k, d in docs.items()]
        rows += [
            {"id": f"copy{i}", "title": f"{docs[k].title} (copy {i})", "abstract": docs[k].abstract}
            for i, k in zip(range(args.copies), [*docs] * args.copies)
        ]
        f = Path(tmp) / "papers.jsonl"
        f.write_text("".join(json.dumps(r) + "\n" for r in rows))
        lib = Library(Path(tmp) / "lib.db", vector_cache=VectorCache(Path(tmp) / "cache.db"))
        lib.ingest([f])
        for pdf in sorted(corpus.glob("*.pdf")):
            assert lib.fulltext.add(pdf.stem, pdf, embed=False).ok
        ids = sorted(docs)
        print(f"library: {lib.count()} papers; model {lib.embedder.id}")

        # recall, keyword alone (nothing is embedded yet: what every paper gets before `fulltext embed`)
        results: dict[str, dict[str, tuple[dict[int, int], list[str]]]] = {n: {} for n in sets}
        for n, qs in sets.items():
            results[n]["keyword"] = recall(lib, qs, "hybrid")  # no vectors: hybrid falls back to keyword
            assert results[n]["keyword"] == recall(lib, qs, "keyword")
        both = {n: {"keyword": both_papers(lib, qs, "keyword", ids)} for n, qs in sets.items()}

        # the embedding rate of passages (every text really embedded: a fresh cache), and of
        # abstract-length texts in the same run for scale
        lib.embedder.embed(["warm up"])
        t0 = time.perf_counter()
        rep = lib.fulltext.embed(ids)
        secs = time.perf_counter() - t0
        chars = [len(r.text) for pid in ids for r in lib.store.fulltext.passages_of(pid)]
        abstracts = [d.abstract for d in docs.values()] * 8
        t1 = time.perf_counter()
        lib.embedder.embed(abstracts)
        abs_secs = time.perf_counter() - t1
        print(
            f"embedding: {rep.passages} passages (median {statistics.median(chars):.0f} characters) in {secs:.1f} s"
            f" = {rep.passages / secs:.1f} passages/s; abstracts {len(abstracts) / abs_secs:.1f}/s (same run)"
        )

        for n, qs in sets.items():
            results[n]["hybrid"] = recall(lib, qs, "hybrid")
            both[n]["hybrid"] = both_papers(lib, qs, "hybrid", ids)

        print()
        print(f"{'set':<16} {'mode':<8} {'n':>3} {'@1':>6} {'@2':>6} {'@6':>6} {'both papers @1':>15}")
        for n, qs in sets.items():
            for m in MODES:
                hit, _ = results[n][m]
                print(
                    f"{n:<16} {m:<8} {len(qs):>3} "
                    + " ".join(f"{hit[k] / len(qs):>6.2f}" for k in KS)
                    + f" {both[n][m] / len(qs):>15.2f}"
                )
        print()
        print("per question (keyword | hybrid; @1 @2 @6):")
        for n, qs in sets.items():
            for q, a, b in zip(qs, results[n]["keyword"][1], results[n]["hybrid"][1]):
                flag = "  <- changed" if a != b else ""
                print(f"  {q['q'][:78]:<78} {a} | {b}{flag}")

        # the adoption rule (see the docstring: written before the first run)
        keeps = all(results[n]["hybrid"][0][2] >= results[n]["keyword"][0][2] for n in sets)
        gains = any(
            a[1] == "-" and b[1] == "y" for n in sets for a, b in zip(results[n]["keyword"][1], results[n]["hybrid"][1])
        )
        small_loss = all(results[n]["keyword"][0][k] - results[n]["hybrid"][0][k] <= 1 for n in sets for k in (1, 6))
        print()
        print(
            f"adoption rule: recall@2 never lower {keeps}; a question gained at @2 {gains}; "
            f"at most one lost at @1/@6 per set {small_loss} -> hybrid "
            + ("ADOPTED" if keeps and gains and small_loss else "NOT adopted")
        )

        # `search --in body` over many passages: the copies carry the two bodies, embedded from the cache
        for i in range(args.copies):
            k = ids[i % len(ids)]
            d = docs[k]
            lib.store.fulltext.put_document(f"copy{i}", {"state": "read", "pages": d.pages}, section_rows(d), [], [])
        lib.fulltext.embed()
        counts = lib.fulltext.vectors.counts()
        queries = [q["q"] for qs in sets.values() for q in qs]
        lib.fulltext.hits(queries[0], mode="hybrid")  # loads the passage index once
        kw = p50(lambda q: lib.fulltext.hits(q, mode="keyword"), queries, args.rounds)
        hy = p50(lambda q: lib.fulltext.hits(q, mode="hybrid"), queries, args.rounds)

        def cold(q: str) -> None:  # the query embedded anew each time (the search's LRU emptied)
            lib.engine.indexes._qcache.clear()
            lib.fulltext.hits(q, mode="hybrid")

        hc = p50(cold, queries, args.rounds)
        print()
        print(
            f"`search --in body` over {counts['passages']} passages ({counts['embedded']} embedded), {len(queries)} questions x {args.rounds}:"
        )
        print(f"  keyword (before): p50 {kw[0]:.2f} ms, p95 {kw[1]:.2f} ms")
        print(f"  hybrid  (after), query vector cached: p50 {hy[0]:.2f} ms, p95 {hy[1]:.2f} ms")
        print(f"  hybrid  (after), query embedded each time: p50 {hc[0]:.2f} ms, p95 {hc[1]:.2f} ms")
        lib.close()


if __name__ == "__main__":
    main()
