"""A whole paper into Chinese with a real model: time and tokens per page, what the checker kept,
how many passages were refused and why (`paperatlas translate ID --full`, the same code path).

    flock /work/heavy.lock nice -n 10 .venv/bin/python benchmarks/translate_full.py \
        --llm-url http://127.0.0.1:8080/v1 --max-requests 6

The paper is a real PDF of tests/data/pdfs (N18-3011 by default, 8 pages), read into a fresh library.
A small CPU model takes minutes a passage, so `--max-requests` caps the passages sent (the glossary
and the headings of finished sections are asked besides); per-page figures are scaled from the
characters translated to the paper's characters per page.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from paperatlas import Library
from paperatlas.fulltext.reader import read_pdf

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "pdfs"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llm-url", required=True)
    ap.add_argument("--paper", default="N18-3011")
    ap.add_argument("--max-requests", type=int, default=6)
    ap.add_argument("--out", help="write the translation's JSON and every request here")
    args = ap.parse_args()
    pdf = CORPUS / f"{args.paper}.pdf"
    doc = read_pdf(pdf.read_bytes())
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "p.jsonl"
        f.write_text(json.dumps({"id": args.paper, "title": doc.title, "abstract": doc.abstract}) + "\n")
        with Library(Path(tmp) / "lib.db", embedder="hashing") as lib:
            lib.ingest([f])
            added = lib.fulltext.add(args.paper, pdf)
            assert added.ok, added
            lib.llm.configure(args.llm_url)
            client = lib.llm.client()
            model = client.model()
            calls: list[dict[str, Any]] = []
            chat = client.chat

            def counted(messages: Any, max_tokens: int, **kw: Any) -> Any:
                c = chat(messages, max_tokens, **kw)
                sent = messages[-1]["content"] if messages else ""
                head, _, body = messages[1]["content"].partition("Reply with the translation only.\n\n")
                kind = "glossary" if not body else ("heading" if "(a section heading)" in head else "passage")
                calls.append(
                    {
                        "prompt_tokens": c.prompt_tokens,
                        "completion_tokens": c.completion_tokens,
                        "seconds": round(c.seconds, 1),
                        "finish": c.finish_reason,
                        "retry": len(messages) > 2,
                        "kind": kind,
                        "chars": len(body) if len(messages) <= 2 else 0,
                        "sent": sent[-200:],
                        "reply": c.text[:200],
                    }
                )
                print(f"  {json.dumps(calls[-1], ensure_ascii=False)[:300]}", file=sys.stderr, flush=True)
                return c

            client.chat = counted  # type: ignore[method-assign]
            est = lib.translator.estimate([args.paper])
            t = time.monotonic()
            tr = lib.translator.translate(args.paper, "zh", max_chunks=args.max_requests)
            wall = time.monotonic() - t
    secs = [s for s in tr.sections if s.done]
    chars_done = sum(len(s.source) for s in secs)
    chars_all = sum(len(s.source) for s in tr.sections)
    per_page_chars = chars_all / max(1, added.pages)
    tokens = sum(c["prompt_tokens"] + c["completion_tokens"] for c in calls)
    refused = [s for s in tr.sections if s.note and s.note != "not translated yet"]
    ck = tr.check
    chunks_sent = tr.spent_chunks
    print(f"{args.paper}: {added.pages} pages, {len(tr.sections)} sections, {chars_all} characters "
          f"({per_page_chars:.0f} a page); estimate before: {json.dumps(est.to_dict())}")  # fmt: skip
    print(f"model {model}: {len(calls)} requests ({sum(c['retry'] for c in calls)} firmer retries) in {wall:.0f} s, "
          f"{tokens} tokens; {chunks_sent} passages sent, {len(secs)} sections finished ({chars_done} characters)")  # fmt: skip
    sent_chars = sum(c["chars"] for c in calls if c["kind"] == "passage")
    if sent_chars:
        # every request counts (glossary, headings, retries): what a reader waits for, per page
        print(f"per page (at {per_page_chars:.0f} characters, from {sent_chars} characters of passages sent): "
              f"{wall / sent_chars * per_page_chars:.0f} s, {tokens / sent_chars * per_page_chars:.0f} tokens")  # fmt: skip
    print(f"checker over the finished sections: spans {ck.spans_kept}/{ck.spans}, numbers {ck.numbers_kept}/"
          f"{ck.numbers}, glossary terms {ck.terms_consistent}/{ck.terms}; glossary {len(tr.glossary)} terms")  # fmt: skip
    print(f"sections kept in English with a note: {len(refused)}")
    for s in refused:
        print(f"  {s.heading!r}: {s.note}")
    for s in secs[:2]:
        print(f"\n## {s.heading_text} ({s.heading})\n{s.text[:600]}")
    if args.out:
        Path(args.out).write_text(
            json.dumps({"translation": tr.to_dict(), "calls": calls, "wall_s": wall}, ensure_ascii=False, indent=1)
        )


if __name__ == "__main__":
    main()
