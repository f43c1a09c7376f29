"""What `ask` gets to read: the abstract alone, or the best passages of the body, on questions whose
answer lies in the body of the two corpus papers (tests/data/pdfs/questions.json), in one run.

    .venv/bin/python benchmarks/fulltext_ask.py

Evidence recall: the share of questions where the text sent to the model holds the answer's phrase:
the abstract (what `ask` sent before), or the top k passages `ask --paper` retrieves (k = 1, 2, 6);
and, over both papers at once (`ask` without --paper), whether the first passage is from the right
paper and holds the answer, with its page. Retrieval only: the model's answers need a model server.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from paperatlas import Library
from paperatlas.fulltext.reader import read_pdf

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "pdfs"


def main() -> None:
    qs = json.loads((CORPUS / "questions.json").read_text())["questions"]
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        docs = {}
        for pdf in sorted(CORPUS.glob("*.pdf")):
            docs[pdf.stem] = read_pdf(pdf.read_bytes())
            rows.append({"id": pdf.stem, "title": docs[pdf.stem].title, "abstract": docs[pdf.stem].abstract})
        f = Path(tmp) / "papers.jsonl"
        f.write_text("".join(json.dumps(r) + "\n" for r in rows))
        lib = Library(Path(tmp) / "lib.db", embedder="hashing")
        lib.ingest([f])
        for pdf in sorted(CORPUS.glob("*.pdf")):
            assert lib.fulltext.add(pdf.stem, pdf).ok
        ks = (1, 2, 6)
        hit_abs = 0
        hit_k = dict.fromkeys(ks, 0)
        hit_any = 0
        sent = 0
        print(f"{'question':<72} {'abstract':>8} {'@1':>3} {'@2':>3} {'@6':>3}  both papers: top passage")
        for q in qs:
            ev = q["evidence"]
            in_abs = ev in lib.get(q["paper"]).abstract.lower()
            hit_abs += in_abs
            got = lib.fulltext.retrieve(q["q"], [q["paper"]], per_paper=6, limit=6)
            sent += in_abs or any(ev in x.text.lower() for x in got)  # ask --paper: the abstract and 6 passages
            marks = []
            for k in ks:
                ok = any(ev in x.text.lower() for x in got[:k])
                hit_k[k] += ok
                marks.append("y" if ok else "-")
            top = lib.fulltext.retrieve(q["q"], [r["id"] for r in rows], per_paper=1, limit=2)
            best = max(top, key=lambda x: x.score) if top else None
            right = best is not None and best.id == q["paper"] and ev in best.text.lower()
            hit_any += right
            where = f"{best.id} p.{best.page}" if best else "-"
            print(
                f"{q['q'][:72]:<72} {'y' if in_abs else '-':>8} {marks[0]:>3} {marks[1]:>3} {marks[2]:>3}"
                f"  {where} {'(right)' if right else ''}"
            )
        n = len(qs)
        print(
            f"evidence recall over {n} questions: abstract {hit_abs / n:.2f}; body passages @1 {hit_k[1] / n:.2f}, "
            f"@2 {hit_k[2] / n:.2f}, @6 {hit_k[6] / n:.2f}; both papers, top passage right paper and answer "
            f"{hit_any / n:.2f}; what ask --paper sends (abstract + 6 passages) {sent / n:.2f}"
        )
        lib.close()


if __name__ == "__main__":
    main()
