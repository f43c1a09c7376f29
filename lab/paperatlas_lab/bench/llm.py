"""`paperatlas bench llm`: what the language-model layer is worth with a real instruction model.

On a small sample of held-out ICLR 2024 papers (the test split of `eval tldr`): the model's TL;DR
against the authors' (ROUGE), beside the extractive one on the same papers; Chinese TL;DRs and
translations as samples; seconds per paper; the cost of a cached against an uncached request. Then
`ask` on the question set (benchmarks/llm/ask_questions.jsonl, written from the venue data, with a
held-out test part): every cited id among the retrieved, the right paper retrieved and cited,
"not in these papers" for the questions the papers cannot answer.

It starts llama.cpp's server itself (`--server-python`, `--model`) unless given `--llm-url`."""

from __future__ import annotations

import gzip
import json
import os
import random
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import click

from .. import REPO
from paperatlas import settings
from ..eval.tldr import default_venue_file, split_of
from paperatlas.llm.extractive import extractive_tldr, rouge

CACHE = Path(settings.raw("cache") or Path.home() / ".cache" / "paperatlas")
QWEN = CACHE / "models" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
QUESTIONS = REPO / "benchmarks" / "llm" / "ask_questions.jsonl"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(python: str, model: str, threads: int) -> tuple[subprocess.Popen[bytes], str, float]:
    """(process, API base, seconds to load) of llama.cpp's server on a free loopback port."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}/v1"
    started = time.monotonic()
    proc = subprocess.Popen(
        [
            python,
            "-m",
            "llama_cpp.server",
            "--model",
            model,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "4096",
            "--n_threads",
            str(threads),
            "--verbose",
            "False",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while time.monotonic() - started < 300:
        if proc.poll() is not None:
            raise click.ClickException(
                f"the llama.cpp server exited with {proc.returncode}\n"
                "Fix: run .ci/install-llm --qwen, or pass --llm-url"
            )
        try:
            with urllib.request.urlopen(url + "/models", timeout=2):
                return proc, url, time.monotonic() - started
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise click.ClickException("the llama.cpp server did not answer within 300 s")


def _records(path: str) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def run(
    venue: str, url: str, papers: int, split: str, distractors: int, limit: int, seed: int, max_questions: int = 0
) -> dict[str, Any]:
    from paperatlas.library import Library

    recs = _records(venue)
    by_id = {r["id"]: r for r in recs}
    rng = random.Random(seed)
    held_out = [r for r in recs if r.get("tldr") and split_of(r["id"]) == "test"]
    sample = rng.sample(held_out, min(papers, len(held_out)))
    questions = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    questions = [q for q in questions if split == "all" or q["split"] == split]
    if max_questions and len(questions) > max_questions:  # keep one the papers cannot answer
        unanswerable = [q for q in questions if not q["answers"]][:1]
        questions = [q for q in questions if q["answers"]][: max_questions - len(unanswerable)] + unanswerable
    wanted = {r["id"] for r in sample} | {a for q in questions for a in q["answers"]}
    others = [r for r in recs if r["id"] not in wanted]
    chosen = [by_id[i] for i in sorted(wanted) if i in by_id] + rng.sample(others, min(distractors, len(others)))
    out: dict[str, Any] = {"model_url": url, "papers": [], "questions": []}
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "papers.jsonl"
        f.write_text("".join(json.dumps(r) + "\n" for r in chosen), encoding="utf-8")
        with Library(Path(tmp) / "bench.db") as lib:
            lib.ingest([f])
            t0 = time.monotonic()
            lib.embed()
            out["library"] = {
                "papers": lib.count(),
                "embed_s": round(time.monotonic() - t0, 1),
                "embedder": lib.embedder.id,
            }
            lib.llm.configure(url)
            out["model"] = lib.llm.client().model()
            for r in sample:
                row: dict[str, Any] = {"id": r["id"], "title": r["title"], "authors_tldr": r["tldr"]}
                t = time.monotonic()
                en = lib.llm.tldr(r["id"], "en")
                row["tldr_en"], row["tldr_en_s"] = en.text, round(time.monotonic() - t, 2)
                t = time.monotonic()
                again = lib.llm.tldr(r["id"], "en")
                row["cached_s"], row["cached"] = round(time.monotonic() - t, 4), again.cached
                t = time.monotonic()
                row["tldr_zh"] = lib.llm.tldr(r["id"], "zh").text
                row["tldr_zh_s"] = round(time.monotonic() - t, 2)
                t = time.monotonic()
                tr = lib.llm.translate(r["id"], "zh")
                row["title_zh"], row["abstract_zh"] = tr.title, tr.abstract
                row["translate_s"] = round(time.monotonic() - t, 2)
                row["extractive"] = extractive_tldr(r["abstract"])
                row["rouge_llm"] = rouge(en.text, r["tldr"])
                row["rouge_extractive"] = rouge(row["extractive"], r["tldr"])
                out["papers"].append(row)
                click.echo(
                    f"  {r['id']}: tldr {row['tldr_en_s']} s, zh {row['tldr_zh_s']} s, "
                    f"translate {row['translate_s']} s\n    {json.dumps(row, ensure_ascii=False)}",
                    err=True,
                )
            for q in questions:
                t = time.monotonic()
                a = lib.llm.ask(q["q"], limit)
                retrieved = [x["id"] for x in a.retrieved]
                out["questions"].append(
                    {
                        "q": q["q"],
                        "split": q["split"],
                        "answers": q["answers"],
                        "answer": a.answer,
                        "cited": a.cited,
                        "retrieved": retrieved,
                        "not_found": a.not_found,
                        "dropped": a.dropped,
                        "seconds": round(time.monotonic() - t, 2),
                    }
                )
                click.echo(
                    f"  ask ({round(time.monotonic() - t, 1)} s): {json.dumps(out['questions'][-1], ensure_ascii=False)}",
                    err=True,
                )
    return out


def summarise(res: dict[str, Any]) -> dict[str, Any]:
    ps, qs = res["papers"], res["questions"]

    def avg(xs: list[float]) -> float | None:
        return round(statistics.mean(xs), 4) if xs else None

    s: dict[str, Any] = {
        "model": res.get("model"),
        "papers": len(ps),
        "rougeL_llm": avg([p["rouge_llm"]["rougeL"] for p in ps]),
        "rougeL_extractive": avg([p["rouge_extractive"]["rougeL"] for p in ps]),
        "rouge1_llm": avg([p["rouge_llm"]["rouge1"] for p in ps]),
        "rouge1_extractive": avg([p["rouge_extractive"]["rouge1"] for p in ps]),
        "tldr_s_per_paper": avg([p["tldr_en_s"] for p in ps]),
        "tldr_zh_s_per_paper": avg([p["tldr_zh_s"] for p in ps]),
        "translate_s_per_paper": avg([p["translate_s"] for p in ps]),
        "cached_request_s": avg([p["cached_s"] for p in ps]),
    }
    answerable = [q for q in qs if q["answers"]]
    unanswerable = [q for q in qs if not q["answers"]]
    s["ask"] = {
        "questions": len(qs),
        "cited_among_retrieved": sum(set(q["cited"]) <= set(q["retrieved"]) for q in qs),
        "dropped_citations": sum(q["dropped"] for q in qs),
        "answer_paper_retrieved": sum(bool(set(q["answers"]) & set(q["retrieved"])) for q in answerable),
        "answer_paper_cited": sum(bool(set(q["answers"]) & set(q["cited"])) for q in answerable),
        "answerable": len(answerable),
        "said_not_found_when_unanswerable": sum(q["not_found"] for q in unanswerable),
        "unanswerable": len(unanswerable),
        "said_not_found_when_answerable": sum(q["not_found"] for q in answerable),
        "seconds_per_question": avg([q["seconds"] for q in qs]),
    }
    return s


@click.command("llm")
@click.option("--llm-url", default=None, envvar=settings.env("llm_url"), help="Use this running endpoint.")
@click.option(
    "--server-python",
    default=str(REPO / ".venv-llm" / "bin" / "python"),
    show_default=True,
    help="The python with llama_cpp.server (started on loopback when --llm-url is not given).",
)
@click.option("--model", default=str(QWEN), show_default=True, help="The GGUF model the server runs.")
@click.option("--threads", type=int, default=os.cpu_count() or 2, show_default=True)
@click.option("--venue", default=None, help="Venue records (default: the shared ml_venue_papers).")
@click.option("--papers", type=int, default=3, show_default=True, help="Held-out papers for TL;DR and translation.")
@click.option("--questions", "split", type=click.Choice(["test", "train", "all"]), default="test", show_default=True)
@click.option(
    "--distractors",
    type=int,
    default=300,
    show_default=True,
    help="Other venue papers in the library the questions are asked of.",
)
@click.option("--limit", type=int, default=5, show_default=True, help="Abstracts each answer may use.")
@click.option("--max-questions", type=int, default=0, help="At most this many questions (0: all of the split).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", "out_path", default=None, help="Write every answer and sample as JSON here.")
def bench_llm_cmd(
    llm_url: str | None,
    server_python: str,
    model: str,
    threads: int,
    venue: str | None,
    papers: int,
    split: str,
    distractors: int,
    limit: int,
    max_questions: int,
    seed: int,
    out_path: str | None,
) -> None:
    """TL;DR, translation and `ask` with a real model: ROUGE beside the extractive TL;DR, seconds per
    paper, cached vs uncached cost, and `ask` faithfulness on the held-out questions.

    Example:

        make bench-llm   # .ci/install-llm --qwen, then: nice -n 19 paperatlas bench llm
    """
    venue = venue or default_venue_file()
    if not venue:
        raise click.ClickException("no venue data found\nFix: pass --venue ml_venue_papers/papers.jsonl.gz")
    proc = None
    load_s = None
    if not llm_url:
        if not Path(server_python).exists() or not Path(model).exists():
            raise click.ClickException(
                f"no server ({server_python}) or model ({model})\nFix: run .ci/install-llm --qwen, or pass --llm-url"
            )
        proc, llm_url, load_s = start_server(server_python, model, threads)
    try:
        started = time.monotonic()
        res = run(venue, llm_url, papers, split, distractors, limit, seed, max_questions)
        res["seconds"] = round(time.monotonic() - started, 1)
        res["server_load_s"] = round(load_s, 2) if load_s is not None else None
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(10)
    s = summarise(res)
    res["summary"] = s
    if out_path:
        Path(out_path).write_text(json.dumps(res, ensure_ascii=False, indent=2), encoding="utf-8")
    click.echo(
        f"model {s['model']} ({Path(model).name if proc else llm_url}), {threads} threads, "
        f"server load {res['server_load_s']} s, whole run {res['seconds']} s"
    )
    click.echo(
        f"TL;DR on {s['papers']} held-out ICLR 2024 papers: ROUGE-L model {s['rougeL_llm']} vs extractive "
        f"{s['rougeL_extractive']} (ROUGE-1 {s['rouge1_llm']} vs {s['rouge1_extractive']})"
    )
    click.echo(
        f"seconds per paper: TL;DR en {s['tldr_s_per_paper']}, zh {s['tldr_zh_s_per_paper']}, translation "
        f"(title + abstract) {s['translate_s_per_paper']}; a cached request {s['cached_request_s']} s"
    )
    a = s["ask"]
    click.echo(
        f"ask ({split} questions: {a['questions']}): cited ids among the retrieved {a['cited_among_retrieved']}/"
        f"{a['questions']}, dropped citations {a['dropped_citations']}; answer paper retrieved "
        f"{a['answer_paper_retrieved']}/{a['answerable']}, cited {a['answer_paper_cited']}/{a['answerable']}; "
        f"'not in these papers' {a['said_not_found_when_unanswerable']}/{a['unanswerable']} unanswerable, "
        f"{a['said_not_found_when_answerable']}/{a['answerable']} answerable; {a['seconds_per_question']} s each"
    )
    for p in res["papers"]:
        click.echo(
            f"\n{p['id']}  {p['title']}\n  zh title: {p['title_zh']}\n  TL;DR: {p['tldr_en']}\n"
            f"  TL;DR zh: {p['tldr_zh']}\n  authors: {p['authors_tldr']}"
        )
