"""The standing attack on the language-model layer, as figures: per hostile endpoint mode
(tests/hostile_llm.py) the status a real server (uvicorn on loopback) answers, the seconds it took, the
bytes the library stored; then the cross-site and anonymous requests (model calls they caused) and the
flood (threads and model connections still open after clients leave).

    .venv/bin/python benchmarks/llm/hostile.py [--huge-mib 60] [--trickle-every 2] [--flood 20]

The baseline: the same script with `--old-api` (asks by GET, as the code before these checks did, and
gives up on a request after `--client-timeout` seconds) and PYTHONPATH pointing at a checkout of that
code; run both in one session to compare.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from hostile_llm import MODES, HostileEndpoint, WebServer  # noqa: E402

from paperatlas import Library  # noqa: E402

PAPERS = [
    {
        "id": "p-lora",
        "title": "Low-rank adapters for cheap fine-tuning",
        "abstract": "Fine-tuning large models is expensive [2]. We propose low-rank adapters that train 0.1% of "
        "the weights. They match full fine-tuning on GLUE.",
        "authors": ["Ada Lovelace"],
    },
    {
        "id": "p-graph",
        "title": "Signed graph link prediction with copulas",
        "abstract": "Gaussian copula models capture edge dependency in signed graphs.",
        "authors": ["Grace Hopper"],
    },
    {
        "id": "p-rl",
        "title": "Reinforcement learning for reasoning in language models",
        "abstract": "Policy optimisation improves chain of thought reasoning of large language models.",
        "authors": ["Alan Turing"],
    },
]


def stored_bytes(lib: Library) -> int:
    total = 0
    for task in ("tldr", "ask", "faq", "translate_query"):
        for lang in ("en", "zh"):
            for batch in lib.store.llm.iter_generated(task, lang):
                total += sum(len(r["text"].encode()) for r in batch)
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--huge-mib", type=int, default=60)
    ap.add_argument("--trickle-every", type=float, default=2.0)
    ap.add_argument("--flood", type=int, default=20)
    ap.add_argument("--deadline", type=float, default=20.0, help="PAPERATLAS_LLM_DEADLINE for the run")
    ap.add_argument("--old-api", action="store_true", help="ask by GET /ask (the code before asking was a POST)")
    ap.add_argument("--client-timeout", type=float, default=60.0, help="seconds a request is waited for")
    args = ap.parse_args()
    os.environ["PAPERATLAS_LLM_DEADLINE"] = str(args.deadline)
    for k in ("PAPERATLAS_LLM_MODEL", "PAPERATLAS_LLM_API_KEY", "PAPERATLAS_LLM_MAX_TOKENS"):
        os.environ.pop(k, None)
    tmp = Path(tempfile.mkdtemp(prefix="hostile-"))
    f = tmp / "papers.jsonl"
    f.write_text("".join(json.dumps(p) + "\n" for p in PAPERS), encoding="utf-8")

    import paperatlas

    print(f"code: {Path(paperatlas.__file__).parent}; asks by {'GET' if args.old_api else 'POST'}")
    print(f"deadline {args.deadline:.0f} s; huge {args.huge_mib} MiB; trickle 1 byte / {args.trickle_every} s")
    ask_method = "GET" if args.old_api else "POST"
    print(f"{'mode':<18} {'request':<22} {'status':>6} {'seconds':>8} {'stored B':>9}  answer")
    for mode in MODES:
        lib = Library(tmp / f"{mode}.db", embedder="hashing")
        lib.ingest([f])
        lib.embed()
        ep = HostileEndpoint(mode).start()
        ep.size = args.huge_mib * 1024 * 1024
        ep.every = args.trickle_every
        lib.llm.configure(ep.url)
        srv = WebServer(lib)
        for what, path, form in (
            ("TL;DR", "/generate", {"id": "p-lora", "task": "tldr", "lang": "en"}),
            ("TL;DR streamed", "/generate", {"id": "p-rl", "task": "tldr", "lang": "en", "stream": "1"}),
            ("ask", "/ask.json" if args.old_api else "/ask", {"q": "How can fine-tuning be made cheap?"}),
        ):
            started = time.monotonic()
            method = ask_method if path.startswith("/ask") else "POST"
            try:
                status, body = srv.post(path, form, timeout=args.client_timeout, method=method)
            except TimeoutError:
                status, body = 0, b"(no answer: the client gave up)"
            took = time.monotonic() - started
            text = body.decode("utf-8", "replace")
            if status == 0:
                shown = body.decode()
            elif "stream" in form:  # the closing event says how it ended
                last = [ln for ln in text.splitlines() if ln.startswith("data: ")][-1:]
                d = json.loads(last[0][6:]) if last else {}
                status = d.get("status", status)
                shown = (d.get("error") or d.get("text") or "")[:60]
            else:
                try:
                    d = json.loads(text)
                except ValueError:
                    d = {}
                shown = (d.get("error") or d.get("text") or d.get("answer") or "")[:60]
                if d.get("dropped_citations"):
                    shown += f"  (dropped {d['dropped_citations']})"
            print(f"{mode:<18} {what:<22} {status:>6} {took:>8.2f} {stored_bytes(lib):>9}  {shown!r}")
        srv.stop()
        ep.stop()
        lib.close()

    # cross-site and anonymous: what they make the model do
    lib = Library(tmp / "cross.db", embedder="hashing")
    lib.ingest([f])
    lib.embed()
    ep = HostileEndpoint("ok").start()
    lib.llm.configure(ep.url)
    srv = WebServer(lib)
    tries = [
        (
            f"{ask_method} /ask, Origin: evil",
            lambda: srv.post("/ask", {"q": "graphs"}, {"Origin": "http://evil.example"}, method=ask_method),
        ),
        (
            f"{ask_method} /ask, Sec-Fetch-Site: cross-site",
            lambda: srv.post("/ask", {"q": "graphs"}, {"Sec-Fetch-Site": "cross-site"}, method=ask_method),
        ),
    ]
    print()
    print(f"{'cross-site request':<44} {'status':>6} {'model calls':>11}")
    for what, call in tries:
        before = ep.requests
        status, _ = call()
        print(f"{what:<44} {status:>6} {ep.requests - before:>11}")
    for what, q in (
        ("GET /ask?q= (an <img> on another site)", "/ask?q=graphs"),
        ("GET /search.json?q=图神经网络 cross-site x20", ""),
    ):
        before = ep.requests
        status = 0
        for _ in range(1 if q else 20):
            c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
            path = q or "/search.json?q=" + "%E5%9B%BE%E7%A5%9E%E7%BB%8F%E7%BD%91%E7%BB%9C"
            c.request("GET", path, headers={"Sec-Fetch-Site": "cross-site"})
            r = c.getresponse()
            r.read()
            status = r.status
            c.close()
        print(f"{what:<44} {status:>6} {ep.requests - before:>11}")
    srv.stop()
    ep.stop()
    lib.close()

    # the flood: clients that leave
    print()
    print(
        f"{'flood (' + str(args.flood) + ' clients leave after 1 s)':<44} {'model calls':>11} {'still open 3 s later':>20} {'llm threads':>11}"
    )
    for what, mode, form in (
        ("streamed asks, endless endpoint", "endless", {"q": "graphs", "stream": "1"}),
        ("non-streamed asks, trickling endpoint", "trickle", {"q": "graphs"}),
    ):
        lib = Library(tmp / f"flood-{mode}.db", embedder="hashing")
        lib.ingest([f])
        lib.embed()
        ep = HostileEndpoint(mode).start()
        lib.llm.configure(ep.url)
        srv = WebServer(lib)
        base_threads = threading.active_count()
        ts = [threading.Thread(target=srv.abandon, args=("/ask", form, 1.0, ask_method)) for _ in range(args.flood)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        time.sleep(3)
        llm_threads = sum(1 for t in threading.enumerate() if t.name in ("llm-stream", "llm-watch"))
        print(f"{what:<44} {ep.requests:>11} {ep.open:>20} {llm_threads:>11}")
        del base_threads
        srv.stop()
        ep.stop()
        lib.close()


if __name__ == "__main__":
    main()
