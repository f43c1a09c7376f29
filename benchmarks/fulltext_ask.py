"""What `ask` gets to read: the abstract alone, or the best passages of the body, on questions whose
answer lies in the body of the two corpus papers (tests/data/pdfs/questions.json), in one run.

    .venv/bin/python benchmarks/fulltext_ask.py                       # retrieval only
    flock /work/heavy.lock nice -n 10 .venv/bin/python benchmarks/fulltext_ask.py \
        --llm-url http://127.0.0.1:8080/v1 --fixture                  # and the answers of two models

Evidence recall: the share of questions where the text sent to the model holds the answer's phrase:
the abstract (what `ask` sent before), or the top k passages `ask --paper` retrieves (k = 1, 2, 6);
and, over both papers at once (`ask` without --paper), whether the first passage is from the right
paper and holds the answer, with its page.

Answers (with `--llm-url`, a running endpoint such as the 1.5B Qwen model `make llm` fetches, and/or
`--fixture`, the Gemma 270M protocol fixture of the tests, started here, its replies capped at 120 tokens): each question asked over both
papers (`ask QUESTION --limit 2`) of a library holding their bodies and of one holding their abstracts
only, the same model and the same run. Scored: the right paper cited; a page cited whose passage holds
the answer's phrase; the answer stating the fact (the question's `answer` pattern, written with the
questions before any model ran); "Not in these papers."; a refusal whose quoted closest sentences
(`Answer.closest`) hold the fact ("quoted"); seconds per question.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from paperatlas import Library
from paperatlas.fulltext.reader import read_pdf

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "pdfs"
CACHE = Path(os.environ.get("PAPERATLAS_CACHE") or Path.home() / ".cache" / "paperatlas")
FIXTURE = CACHE / "models" / "gemma-3-270m-q4_k_m.gguf"
_CITE = re.compile(r"\[([^\[\]]+?) p\.(\d+)\]")


def start_fixture(threads: int) -> tuple[subprocess.Popen[bytes], str]:
    """The Gemma 270M fixture under llama.cpp's server on a free loopback port (the alpaca layout, as
    the tests run it: under its own template the base model ends every turn at once)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    py = ROOT / ".venv-llm" / "bin" / "python"
    proc = subprocess.Popen(
        [str(py), "-m", "llama_cpp.server", "--model", str(FIXTURE), "--model_alias", "gemma-3-270m",
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--n_threads", str(threads),
         "--chat_format", "alpaca", "--verbose", "False"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"
    for _ in range(600):
        try:
            with urllib.request.urlopen(url + "/models", timeout=2):
                return proc, url
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the fixture server did not start: run .ci/install-llm")


def evidence_pages(lib: Library, paper: str, ev: str) -> set[int]:
    """Pages of the paper's passages that hold the answer's phrase."""
    return {
        int(par["page"])
        for s in lib.fulltext.show(paper).sections
        for par in s["paragraphs"]
        if ev in par["text"].lower()
    }


def answers(
    lib: Library, url: str, model: str, qs: list[dict[str, Any]], pages: list[set[int]]
) -> list[dict[str, Any]]:
    # the model named: a stored answer of another model to the same sources is never taken for its own
    lib.llm.configure(url, model)
    out = []
    for q, pg in zip(qs, pages):
        t = time.monotonic()
        try:
            a = lib.llm.ask(q["q"], 2)
            text, cited, nf, err, cached = a.answer, a.cited, a.not_found, "", a.cached
            quoted = " ".join(c["text"] for c in a.closest)
        except Exception as e:  # noqa: BLE001 - a failed answer is a figure too
            text, cited, nf, err, cached, quoted = "", [], False, str(e)[:200], False, ""
        cites = {(m.group(1), int(m.group(2))) for m in _CITE.finditer(text)}
        out.append(
            {
                "paper": q["paper"] in cited,
                "page": any(pid == q["paper"] and p in pg for pid, p in cites),
                "fact": bool(re.search(q["answer"], text, re.IGNORECASE)),
                "not_found": nf,
                # a refusal's quoted sentences (closest_sentences) hold the fact
                "quoted": nf and bool(re.search(q["answer"], quoted, re.IGNORECASE)),
                "cached": cached,
                "s": time.monotonic() - t,
                "text": text,
                "error": err,
            }
        )
        print(f"    {q['q'][:60]:<60} {json.dumps(out[-1], ensure_ascii=False)[:400]}", file=sys.stderr, flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llm-url", action="append", default=[], help="a running endpoint (repeatable)")
    ap.add_argument("--fixture", action="store_true", help="also the Gemma 270M protocol fixture, started here")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", help="write every answer as JSON here")
    ap.add_argument(
        "--corpus",
        type=Path,
        default=CORPUS,
        help="a folder of PDFs with its questions.json (benchmarks/data/pdfs: 23 papers, 22 questions)",
    )
    ap.add_argument("--split", help="only the questions of this split (test, dev)")
    ap.add_argument("--embed", action="store_true", help="the packaged model: search and passages by meaning too")
    args = ap.parse_args()
    corpus = args.corpus
    qs = json.loads((corpus / "questions.json").read_text())["questions"]
    qs = [q for q in qs if not args.split or q.get("split") == args.split]
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        docs = {}
        for pdf in sorted(corpus.glob("*.pdf")):
            docs[pdf.stem] = read_pdf(pdf.read_bytes())
            rows.append({"id": pdf.stem, "title": docs[pdf.stem].title, "abstract": docs[pdf.stem].abstract})
        f = Path(tmp) / "papers.jsonl"
        f.write_text("".join(json.dumps(r) + "\n" for r in rows))
        # --embed: what a user gets (the packaged model; papers and passages by keyword and meaning);
        # else passages by keyword, as docs/fulltext.md's first table measured them (the hashing
        # embedder would fuse its own token vectors in)
        emb = {} if args.embed else {"embedder": "hashing"}
        lib = Library(Path(tmp) / "lib.db", **emb)
        lib.ingest([f])
        for pdf in sorted(corpus.glob("*.pdf")):
            assert lib.fulltext.add(pdf.stem, pdf, embed=args.embed).ok
        # the same papers, abstracts only: what `ask` read before the full text
        bare = Library(Path(tmp) / "bare.db", **emb)
        bare.ingest([f])
        if args.embed:
            lib.embed()
            bare.embed()
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
        endpoints = [(u, u) for u in args.llm_url]
        # the fixture is a base model that writes to its token cap whatever it is asked: a lower cap for
        # it keeps the run short and changes nothing it is there to show (requests, citations, checks)
        fixture_cap = "120"
        fixture = None
        if args.fixture:
            fixture, furl = start_fixture(args.threads)
            endpoints.append(("gemma-3-270m fixture", furl))
        pages = [evidence_pages(lib, q["paper"], q["evidence"]) for q in qs]
        results: dict[str, Any] = {}
        try:
            for label, url in endpoints:
                if label.endswith("fixture"):
                    os.environ["PAPERATLAS_LLM_MAX_TOKENS"] = fixture_cap
                lib.llm.configure(url)
                model = lib.llm.client().model()
                for name, which in (("body", lib), ("abstract", bare)):
                    print(f"  {model} ({label}), {name}:", file=sys.stderr, flush=True)
                    results[f"{model}|{name}"] = answers(which, url, model, qs, pages)
        finally:
            if fixture is not None:
                fixture.terminate()
                fixture.wait(10)
        if results:
            print(
                f"\nask over both papers (--limit 2), {n} questions: {'model':<28} {'reads':<9} {'paper':>6} "
                f"{'page':>5} {'fact':>5} {'not found':>10} {'quoted':>7} {'s/question':>11}"
            )
            for key, res in results.items():
                model, name = key.split("|")
                print(
                    f"{'':<51}{model:<28} {name:<9} {sum(r['paper'] for r in res):>4}/{n} "
                    f"{sum(r['page'] for r in res):>3}/{n} {sum(r['fact'] for r in res):>3}/{n} "
                    f"{sum(r['not_found'] for r in res):>8}/{n} {sum(r['quoted'] for r in res):>5}/{n} "
                    f"{statistics.median(r['s'] for r in res):>11.1f}"
                    f"{'' if not any(r['cached'] or r['error'] for r in res) else ' (cached or failed: see --out)'}"
                )
        if args.out:
            Path(args.out).write_text(json.dumps(results, ensure_ascii=False, indent=1))
        lib.close()
        bare.close()


if __name__ == "__main__":
    main()
