"""`ask` with a small local model, its prompt sized to the model against unsized, in one run.

    flock /work/heavy.lock nice -n 10 .venv/bin/python benchmarks/ask_sizing.py \
        --db /work/cache/venue8k.db --llm-url http://127.0.0.1:8080/v1

A small model (under 4B parameters by its name) is given at most 3 abstracts of 500 characters
(`llm.capability.ASK_PASSAGES["small"]`); before that it got what every model gets, up to 10 of 900
characters (`--limit`, 5 by default). Both are asked here of the same library (a copy of `--db`; the
shared 8,088-paper NeurIPS 2023 / ICLR 2024 / ICML 2024 library holds every paper the questions name)
and the same model: the held-out questions of benchmarks/llm/ask_questions.jsonl (`--split`), and the
case a newcomer met in the first hour — with `--limit 2` a diffusion-sampling question was answered "Not in these
papers." although the second abstract says "we improve sampling speed by 2-4x" (at character 1,099 of
a 1,350-character abstract: past both budgets).

The sized budget is asked twice: its sources cut from the front (as before) and cut by the question
(`llm.capability.TRIM_BY_QUESTION`: the sentences sharing most of the question's words). Rule, written
before the first run of it: cutting by the question stays on if, on these questions, it cites the
answer's paper at least as often as the front cut and says "Not in these papers." on answerable
questions no more often (unanswerable ones: still refused).

Scored per budget: the answer's paper retrieved and cited, "Not in these papers." on answerable and
unanswerable questions, characters of the prompt's sources, seconds per question (median).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from paperatlas import Library
from paperatlas.llm import capability

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT / "benchmarks" / "llm" / "ask_questions.jsonl"
# the first-hour case: ParaDiGMS (neurips2023/bpzwUfX1UP) comes second in the shared library
CASE = {
    "q": "How can sampling from diffusion models be sped up?",
    "answers": ["neurips2023/bpzwUfX1UP"],
    "split": "first hour",
    "limit": 2,
    "fact": "2-4x",
}


def ask_all(lib: Library, qs: list[dict[str, Any]], limit: int, label: str) -> list[dict[str, Any]]:
    out = []
    for q in qs:
        t = time.monotonic()
        try:
            a = lib.llm.ask(q["q"], q.get("limit", limit))
            row = {
                "answer": a.answer,
                "cited": a.cited,
                "retrieved": [x["id"] for x in a.retrieved],
                "not_found": a.not_found,
                # a refusal quotes the sentences read that share most of the question's words
                "quoted": [c["id"] for c in a.closest],
                "quoted_text": " ".join(c["text"] for c in a.closest),
                "source_chars": sum(len(p["text"]) for p in a.passages),
                "cached": a.cached,
                "error": "",
            }
        except Exception as e:  # noqa: BLE001 - a failed answer is a figure too
            row = {"answer": "", "cited": [], "retrieved": [], "not_found": False, "source_chars": 0, "quoted": []}
            row["quoted_text"] = ""
            row.update(cached=False, error=str(e))
        row.update(q=q["q"], answers=q["answers"], split=q["split"], s=round(time.monotonic() - t, 1))
        if q.get("fact"):
            row["fact"] = q["fact"] in row["answer"]
            row["fact_quoted"] = q["fact"] in row["quoted_text"]
        out.append(row)
        print(f"  [{label}] {json.dumps(row, ensure_ascii=False)[:600]}", file=sys.stderr, flush=True)
    return out


def summary(rows: list[dict[str, Any]]) -> str:
    ans = [r for r in rows if r["answers"]]
    una = [r for r in rows if not r["answers"]]
    ret = sum(bool(set(r["answers"]) & set(r["retrieved"])) for r in ans)
    cit = sum(bool(set(r["answers"]) & set(r["cited"])) for r in ans)
    refused = [r for r in ans if r["not_found"]]
    quoted = sum(bool(set(r["answers"]) & set(r.get("quoted", []))) for r in refused)
    return (
        f"paper retrieved {ret}/{len(ans)}, cited {cit}/{len(ans)}; 'not in these papers' "
        f"{sum(r['not_found'] for r in ans)}/{len(ans)} answerable, {sum(r['not_found'] for r in una)}/{len(una)} "
        f"unanswerable; refusals quoting the answer's paper {quoted}/{len(refused)}; sources {statistics.median(r['source_chars'] for r in rows):.0f} chars, "
        f"{statistics.median(r['s'] for r in rows):.1f} s/question (median); errors "
        f"{sum(bool(r['error']) for r in rows)}, cached {sum(r['cached'] for r in rows)}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, help="a library holding the questions' papers (copied, never written)")
    ap.add_argument("--llm-url", required=True)
    ap.add_argument("--split", default="test", choices=["test", "train", "all"])
    ap.add_argument("--limit", type=int, default=5)
    ap.add_argument("--out", help="write every answer as JSON here")
    ap.add_argument("--arms", default="sized,by-question,unsized", help="which budgets to ask (comma-separated)")
    args = ap.parse_args()
    qs = [json.loads(x) for x in QUESTIONS.read_text(encoding="utf-8").splitlines() if x.strip()]
    qs = [q for q in qs if args.split == "all" or q["split"] == args.split] + [CASE]
    sized = dict(capability.ASK_PASSAGES)
    results: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "lib.db"
        shutil.copy(args.db, db)
        with Library(db) as lib:
            lib.llm.configure(args.llm_url)
            model = lib.llm.client().model()
            lib.llm.configure(args.llm_url, model)  # named: no other model's stored answer is taken
            print(f"model {model}: sized budget {capability.passage_budget(model, args.limit)}", file=sys.stderr)
            arms = (
                ("sized", sized["small"], False),
                ("by-question", sized["small"], True),
                ("unsized", sized["large"], False),
            )
            for label, budget, by_question in arms:
                if label not in args.arms.split(","):
                    continue
                capability.ASK_PASSAGES["small"] = budget  # the model is small: this is what it gets
                capability.TRIM_BY_QUESTION = by_question
                results[label] = ask_all(lib, qs, args.limit, label)
            capability.ASK_PASSAGES.update(sized)
            capability.TRIM_BY_QUESTION = True
    print(f"ask with {model}, {len(qs)} questions ({args.split} split and the first-hour case), --limit {args.limit}:")
    for label, rows in results.items():
        budget = sized["large" if label == "unsized" else "small"]
        print(f"  {label:<8} (at most {budget[0]} sources of {budget[1]} chars): {summary(rows)}")
    for label, rows in results.items():
        case = rows[-1]
        print(
            f"  the first-hour case, {label}: retrieved {case['retrieved']}, cited {case['cited']}, "
            f"not found {case['not_found']}, states '2-4x' {case.get('fact')}, quotes it {case.get('fact_quoted')}: "
            f"{case['answer'][:300]!r} quoted {case['quoted_text'][:300]!r}"
        )
    if args.out:
        Path(args.out).write_text(json.dumps(results, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
