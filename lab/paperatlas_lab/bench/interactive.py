"""`paperatlas bench interactive`: every interactive command and page, cold and warm, at 8k and 100k
papers, beside a keyword search measured in the same run.

* 8k is the real library given with --db (the venue papers, embedded with the packaged model).
* 100k is that library plus perturbed copies of its papers (the output says so): each copy has its own
  id, its title words shuffled and ~15% of its abstract words swapped for words of another paper; its
  vector is the original's plus a little noise (renormalised), not a re-embedding. The copies join the
  real papers, so the programme, the likes and the paper opened are the same at both sizes.
* Reader state is made here, the same every run: the reader `me` likes 30 papers (three groups of
  neighbours), dislikes 5 and tags 5; a NeurIPS 2023 programme (the venue's real papers laid out in 10
  poster sessions, bench/programme.py's feed) links the papers to events; the topics are built. At
  100k the copies take their originals' topics and map places (jittered) instead of a rebuild.
* Each size's library is copied once per code version (this checkout; with --baseline-src, another
  version's too) and its search indexes built (timed). The ops then run in the order of OPS: a derived
  cache that several ops use (the recommendation features, ...) is built by the first that needs it.
* Each command runs as a user runs it: a fresh `paperatlas` process per call (interpreter start
  included: see `--version`). Cold is the first call; warm the next --repeats calls (p50, p95).
* Each page is served by the app that `paperatlas serve` builds, in a fresh process per page, after its
  start-up warm-up (timed apart): cold is that server's first request of the page, warm the --repeats
  requests after it; a keyword search follows in the same process (`kw p50`).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import numpy as np

from paperatlas import settings as paperatlas_settings

READER = "me"
FEED = "neurips-2023-orals-posters.json"
STATE_VERSION = "1"  # bump when prepare() makes different state: kept libraries are rebuilt


# -- the libraries -----------------------------------------------------------------------------------
def _grow(
    lib: Any, n: int, seed: int = 0, batch: int = 20_000, log: Callable[[str], None] = print
) -> list[tuple[str, str]]:
    """Add perturbed copies of the library's own papers until it holds `n` (see the module doc);
    returns (copy id, original id) of each."""
    from .search import perturbed
    from paperatlas.store.vector_cache import text_hash

    model = lib.embedder.id
    ids, mat = lib.store.load_vectors(model)
    papers = lib.store.get_papers(ids)
    base = [papers[i] for i in ids if i in papers]
    vecs = mat[[k for k, i in enumerate(ids) if i in papers]]
    words = [w for p in base[:2000] for w in p.abstract.split()]
    rng = np.random.default_rng(seed)
    prng = random.Random(seed)
    have = lib.count()
    done = 0
    made: list[tuple[str, str]] = []
    while have + done < n:
        m = min(batch, n - have - done)
        a = rng.integers(0, len(base), m)
        g = rng.standard_normal((m, vecs.shape[1])).astype(np.float32) * (0.15 / np.sqrt(vecs.shape[1]))
        x = vecs[a] + g
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        rows, vrows = [], []
        for j in range(m):
            p = base[a[j]]
            pid = f"copy{done + j:07d}"
            q = perturbed(p, pid, prng, words, authors=p.authors, keywords=p.keywords)
            h = text_hash(q.text)
            rows.append((q, h, pid, None))
            vrows.append((pid, h, x[j]))
            made.append((pid, p.id))
        lib.store.write_batch(rows, [], [], [])
        lib.store.put_vectors(model, vrows)
        done += m
        log(f"  {have + done} papers")
    return made


def _likes(lib: Any, seed: int = 0) -> list[str]:
    """30 liked papers: three NeurIPS papers and, for each, its 9 nearest real neighbours (a reader
    with three interests, as the recommender's profile expects)."""
    vec_of = lib.vectors()
    real = [p.id for p in lib.papers(venue="NeurIPS") if p.id in vec_of and not p.id.startswith("copy")]
    rng = random.Random(seed)
    ids = sorted(real)
    mat = np.stack([vec_of[i] for i in ids])
    out: dict[str, None] = {}
    for first in rng.sample(ids, 3):
        sims = mat @ vec_of[first]
        for k in np.argsort(-sims)[:10]:
            out.setdefault(ids[int(k)], None)
    return list(out)[:30]


def _replicate_topics(lib: Any, made: list[tuple[str, str]], seed: int = 0) -> None:
    """Give each copy its original's topics, at its original's place on the map plus a little jitter,
    instead of rebuilding the topics (over 5 minutes at 100k papers on an idle machine: bench topics
    measures that); topic sizes and phrase counts grow with the copies."""
    st = lib.store.topics
    meta = st.topics_meta() or {}
    placed = st.paper_topics()
    rows = st.list_topics()
    rng = np.random.default_rng(seed)
    papers = [(pid, v["coarse"], v["fine"], v["x"], v["y"], v["phrases"]) for pid, v in placed.items()]
    grow: dict[tuple[str, int], int] = {}
    for pid, orig in made:
        v = placed.get(orig)
        if v is None:
            continue
        dx, dy = rng.normal(0, 0.002, 2)
        papers.append((pid, v["coarse"], v["fine"], round(v["x"] + dx, 5), round(v["y"] + dy, 5), v["phrases"]))
        for level in ("coarse", "fine"):
            grow[(level, v[level])] = grow.get((level, v[level]), 0) + 1
    topics = [
        (
            r["level"],
            r["topic"],
            r["parent"],
            r["size"] + grow.get((r["level"], r["topic"]), 0),
            r["label"],
            r["phrases"],
            r["central"],
            r["x"],
            r["y"],
        )
        for r in rows
    ]
    phrases = {ph for p in papers for ph in p[5]} | {ph for r in rows for ph in r["phrases"]}
    scale = len(papers) / max(1, len(placed))
    dfs = [(ph, int(round(df * scale))) for ph, df in st.phrase_dfs(sorted(phrases)).items()]
    meta = {**meta, "data_version": list(lib.store.data_version()), "replicated": len(made)}
    st.replace_topics(topics, papers, dfs, meta)


def prepare(src: Path, workdir: Path, size: str, log: Callable[[str], None] = print) -> Path:
    """A library of `size` papers ("8k": `src` itself) with the benchmark's reader state, kept in
    `workdir` and reused while `src` and STATE_VERSION are unchanged. Returns its path."""
    from ..bench.programme import make_feed
    from ..bench.search import parse_size
    from paperatlas.library import Library

    n = parse_size(size)
    key = f"{STATE_VERSION}:{src.resolve()}:{src.stat().st_size}:{int(src.stat().st_mtime)}:{n}"
    path = workdir / f"interactive-{size.lower()}.db"
    stamp = path.with_name(path.name + ".key")
    if path.exists() and stamp.exists() and stamp.read_text() == key:
        return path
    workdir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    for f in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        f.unlink(missing_ok=True)
    shutil.rmtree(Path(f"{tmp}.index"), ignore_errors=True)
    if n:  # a larger size grows the prepared real library: the same programme, reader and topics
        base = prepare(src, workdir, "8k", log)
        log(f"{size}: copying {base} ...")
        shutil.copyfile(base, tmp)
        with Library(tmp) as lib:
            log(f"{size}: adding perturbed copies up to {n} papers ...")
            made = _grow(lib, n, log=log)
            log(f"{size}: the copies take their originals' topics ...")
            _replicate_topics(lib, made)
    else:
        log(f"{size}: copying {src} ...")
        with Library(src) as s:
            s.store.copy_to(tmp)
        with Library(tmp) as lib:
            log(f"{size}: programme, reader state ...")
            real = lib.papers(venue="NeurIPS")
            rows = [
                {
                    "title": p.title,
                    "abstract": p.abstract,
                    "authors": p.authors,
                    "status": p.status,
                    "keywords": p.keywords,
                    "openreview_id": p.extra.get("openreview_id") or p.id.rsplit("/", 1)[-1],
                }
                for p in real
            ]
            with tempfile.TemporaryDirectory(prefix="paperatlas-bench-") as d:
                feed = Path(d) / FEED
                feed.write_text(json.dumps(make_feed(rows, 10)), encoding="utf-8")
                lib.programme.ingest_feed(feed)
            liked = _likes(lib)
            lib.readers.set_feedback(READER, liked, "like")
            others = sorted(p.id for p in real if p.id not in set(liked))
            rng = random.Random(1)
            lib.readers.set_feedback(READER, rng.sample(others, 5), "dislike")
            for pid in liked[:5]:
                lib.readers.tag(READER, [pid], "must-see")
            log(f"{size}: building topics ...")
            t = time.perf_counter()
            lib.topics.build(seed=0)
            log(f"{size}: topics built in {time.perf_counter() - t:.0f} s")
    for f in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        f.unlink(missing_ok=True)
    shutil.rmtree(Path(f"{path}.index"), ignore_errors=True)
    os.replace(tmp, path)
    # derived caches built while preparing are dropped: a cold call starts without them
    shutil.rmtree(Path(f"{tmp}.index"), ignore_errors=True)
    stamp.write_text(key)
    return path


# -- what is measured -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Op:
    name: str
    surface: str  # "cli" (a `paperatlas` process) or "web" (a GET request to the app)
    target: str  # the command line after `paperatlas --db DB`, or the path; {pid} {sid} {author} filled in
    kind: str = ""  # "baseline": the keyword search (and start-up) the others are read against


Q = "diffusion models"
OPS: list[Op] = [
    Op("start-up", "cli", "--version", "baseline"),
    Op("keyword search", "cli", f"search --mode keyword '{Q}' --json", "baseline"),
    Op("search", "cli", f"search '{Q}' --json"),
    Op("show", "cli", "show {pid} --json"),
    Op("similar", "cli", "similar {pid} --json"),
    Op("recommend", "cli", "recommend --json"),
    Op("profile", "cli", "profile --json"),
    Op("digest", "cli", "digest"),
    Op("agenda", "cli", "agenda --json"),
    Op("people", "cli", "people --json"),
    Op("programme", "cli", "programme --json"),
    Op("session", "cli", "session {sid} --json"),
    Op("walk", "cli", "walk {sid} --json"),
    Op("report", "cli", "report --json"),
    Op("topics", "cli", "topics --json"),
    Op("map", "cli", "map --out {tmp}/map.html"),
    Op("list", "cli", "list --json"),
    Op("list by citations", "cli", "list --sort citations --json"),
    Op("stats", "cli", "stats --json"),
    Op("fulltext status", "cli", "fulltext status --json"),
    Op("keyword search", "web", f"/search.json?q={Q}&mode=keyword", "baseline"),
    Op("healthz", "web", "/healthz", "baseline"),
    Op("home", "web", "/"),
    Op("search", "web", f"/search?q={Q}"),
    Op("search.json", "web", f"/search.json?q={Q}"),
    Op("paper", "web", "/paper/{pid}"),
    Op("paper.json", "web", "/paper/{pid}.json"),
    Op("author", "web", "/author/{author}"),
    Op("browse", "web", "/browse"),
    Op("saved", "web", "/saved"),
    Op("foryou (recommend)", "web", "/foryou"),
    Op("foryou.json", "web", "/foryou.json"),
    Op("profile", "web", "/profile"),
    Op("triage", "web", "/triage"),
    Op("group", "web", "/group?readers=me"),
    Op("digest", "web", "/digest"),
    Op("programme", "web", "/programme"),
    Op("session (+walk)", "web", "/session/{sid}"),
    Op("session.json", "web", "/session/{sid}.json"),
    Op("agenda", "web", "/agenda"),
    Op("agenda.json", "web", "/agenda.json"),
    Op("agenda.ics", "web", "/feeds/agenda/me.ics?key={agenda_key}"),
    Op("reader feed", "web", "/feeds/reader/me.atom?key={feed_key}"),
    Op("report", "web", "/report"),
    Op("report.json", "web", "/report.json"),
    Op("report export", "web", "/report/export"),
    Op("map", "web", "/map"),
    Op("map.json", "web", "/map.json"),
    Op("stats", "web", "/stats"),
    Op("cheatsheet", "web", "/cheatsheet"),
    Op("ask (form)", "web", "/ask"),
    Op("full-text search", "web", f"/search/body?q={Q}"),
    Op("api docs", "web", "/docs"),
    Op("openapi.json", "web", "/openapi.json"),
]

# GET routes left out, and why (tests/test_bench_interactive.py checks that every GET route of the app
# is either an op or here, so a new page is timed or said not to be)
NOT_TIMED = {
    "/signin": "a static form",
    "/saved/export": "a download of the saved list (export is measured by its own bench)",
    "/feeds/search/{search_id:int}.atom": "the reader has no saved search in this state",
    "/tldr": "asks a language model",
    "/map/assets/{name}": "a static file",
    "/report/{name}": "a static file",
    "/programme-sw.js": "a static file",
    "/paper/{paper_id:path}/read": "no paper has a full text in this state",
    "/paper/{paper_id:path}.pdf": "no paper has a full text in this state",
}


def _places(db: Path) -> dict[str, str]:
    """The paper, session and author the ops open: the reader's first liked paper, the first poster
    session, that paper's first author."""
    from paperatlas.library import Library

    from urllib.parse import quote

    from paperatlas.web.auth import feed_key

    with Library(db) as lib:
        pid = sorted(p.id for p in lib.readers.liked(READER))[0]
        p = lib.get(pid)
        sid = next(s.session_id for s in lib.programme.sessions(type="poster"))
        r = lib.readers.get(READER)
        keys = {"agenda_key": feed_key(lib, "agenda", r), "feed_key": feed_key(lib, "reader", r)}
    return {"pid": pid, "sid": sid, "author": quote(p.authors[0] if p.authors else "x"), **keys}


def _env(src: str | None) -> dict[str, str]:
    env = paperatlas_settings.environment()
    env.pop("PAPERATLAS_DB", None)
    if src:
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else float("nan")


def _summary(times: list[float], ok: bool, note: str = "") -> dict[str, Any]:
    warm = times[1:]
    return {
        "cold_s": round(times[0], 3),
        "warm_p50_s": round(_pct(warm, 50), 3) if warm else None,
        "warm_p95_s": round(_pct(warm, 95), 3) if warm else None,
        "ok": ok,
        "note": note,
    }


def run_cli(db: Path, op: Op, places: dict[str, str], repeats: int, src: str | None) -> dict[str, Any]:
    """Wall seconds of `paperatlas --db DB ...` in fresh processes: the first call, then `repeats`."""
    import shlex

    with tempfile.TemporaryDirectory(prefix="paperatlas-bench-") as tmp:
        argv = shlex.split(op.target.format(**places, tmp=tmp))
        cmd = [sys.executable, "-m", "paperatlas", "--db", str(db), *argv]
        times, ok, note = [], True, ""
        for _ in range(1 + repeats):
            t = time.perf_counter()
            out = subprocess.run(cmd, capture_output=True, text=True, env=_env(src), check=False)
            times.append(time.perf_counter() - t)
            if out.returncode not in (0, 4, 5):
                ok, note = False, f"exit {out.returncode}: {(out.stderr or out.stdout).strip()[-200:]}"
    return _summary(times, ok, note)


_WEB_CHILD = r"""
import json, sys, threading, time
args = json.loads(sys.argv[1])
t0 = time.perf_counter()
from paperatlas.library import Library
from paperatlas.web.app import create_app, warm, request_once
lib = Library(args["db"])
app = create_app(lib, owner_signin=True)
warm(lib)
t1 = time.perf_counter()
for th in threading.enumerate():
    if th.name.startswith("warm-"):
        th.join()
t2 = time.perf_counter()
def timed(path):
    s = time.perf_counter()
    status, _, body = request_once(app, path)
    return time.perf_counter() - s, status, len(body)
times, statuses = [], set()
for _ in range(1 + args["repeats"]):
    dt, status, size = timed(args["path"])
    times.append(dt)
    statuses.add(status)
kw = [timed(args["keyword"])[0] for _ in range(args["repeats"])]
print(json.dumps({"times": times, "statuses": sorted(statuses), "bytes": size, "keyword": kw,
                  "start_s": t1 - t0, "background_warm_s": t2 - t1}))
"""


def run_web(db: Path, op: Op, places: dict[str, str], repeats: int, src: str | None) -> dict[str, Any]:
    """The app as `paperatlas serve` builds it, in a fresh process: its first request of the page,
    then `repeats` more; a keyword search after them, in the same process."""
    path = op.target.format(**places).replace(" ", "%20")
    keyword = f"/search.json?q={Q.replace(' ', '%20')}&mode=keyword&per_page=10"
    arg = json.dumps({"db": str(db), "path": path, "repeats": repeats, "keyword": keyword})
    out = subprocess.run(
        [sys.executable, "-c", _WEB_CHILD, arg], capture_output=True, text=True, env=_env(src), check=False
    )
    if out.returncode != 0:
        return {**_summary([float("nan")], False, out.stderr.strip()[-300:]), "keyword_p50_s": None}
    r = json.loads(out.stdout.strip().splitlines()[-1])
    bad = [s for s in r["statuses"] if s >= 400]
    res = _summary(r["times"], not bad, f"HTTP {r['statuses']}" if bad else "")
    res.update(
        status=r["statuses"],
        bytes=r["bytes"],
        keyword_p50_s=round(statistics.median(r["keyword"]), 3),
        start_s=round(r["start_s"], 2),
        background_warm_s=round(r["background_warm_s"], 2),
    )
    return res


# -- the whole benchmark ----------------------------------------------------------------------------
def _fresh_copy(src: Path, dst: Path) -> Path:
    """A byte copy of a prepared (checkpointed, closed) library, without its derived-index folder."""
    for f in (dst, Path(f"{dst}-wal"), Path(f"{dst}-shm")):
        f.unlink(missing_ok=True)
    shutil.rmtree(Path(f"{dst}.index"), ignore_errors=True)
    shutil.copyfile(src, dst)
    return dst


def bench_interactive(
    src: Path,
    sizes: list[str],
    workdir: Path,
    repeats: int = 5,
    only: list[str] | None = None,
    surfaces: tuple[str, ...] = ("cli", "web"),
    baseline_src: str | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Every op of OPS (those named in `only`, when given) at each size; with `baseline_src` (a source
    tree of another version, e.g. `git archive main`), each op runs under that code first and then under
    this one, on fresh copies of the same library, one after the other."""
    versions: list[tuple[str, str | None]] = [("candidate", None)]
    if baseline_src:
        versions.insert(0, ("baseline", str(Path(baseline_src).resolve())))
    ops = [o for o in OPS if o.surface in surfaces and (not only or o.name in only or o.kind == "baseline")]
    out: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "load_avg_at_start": [round(x, 1) for x in os.getloadavg()],
        "repeats": repeats,
        "versions": {name: s or "this checkout" for name, s in versions},
        "sizes": [],
    }
    for size in sizes:
        lib_path = prepare(src, workdir, size, log=log)
        places = _places(lib_path)
        # one copy per version: the search indexes are built first (timed), the derived caches that
        # only some ops use (recommendation features, ...) by the first op that needs them
        copies, index_build = {}, {}
        for name, code in versions:
            copies[name] = _fresh_copy(lib_path, workdir / f"run-{size.lower()}-{name}.db")
            t = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "paperatlas", "--db", str(copies[name]), "search", "warm up"],
                capture_output=True,
                env=_env(code),
                check=False,
            )
            index_build[name] = round(time.perf_counter() - t, 2)
        log(f"{size}: search indexes built in {index_build}")
        rows = []
        for op in ops:
            row: dict[str, Any] = {"surface": op.surface, "op": op.name, "target": op.target.format(**places, tmp="…")}
            for name, code in versions:
                run = run_cli if op.surface == "cli" else run_web
                row[name] = run(copies[name], op, places, repeats, code)
            log(f"{size} {op.surface} {op.name}: " + json.dumps({v: row[v] for v, _ in versions}))
            rows.append(row)
        with _lib(lib_path) as lib:
            papers = lib.count()
        out["sizes"].append(
            {
                "size": size,
                "papers": papers,
                "data": "real"
                if papers < 10_000
                else "the real papers plus perturbed copies (vectors: the originals plus noise, not re-embedded)",
                "places": places,
                "index_build_s": index_build,
                "rows": rows,
            }
        )
    out["load_avg_at_end"] = [round(x, 1) for x in os.getloadavg()]
    return out


def _lib(path: Path) -> Any:
    from paperatlas.library import Library

    return Library(path)


def _cell(r: dict[str, Any] | None) -> str:
    if r is None:
        return f"{'':>22}"
    if not r["ok"]:
        return f"{'FAILED':>22}"
    p50 = r["warm_p50_s"]
    p95 = r["warm_p95_s"]
    return f"{r['cold_s']:>7.2f} {p50 if p50 is not None else float('nan'):>6.2f} {p95 if p95 is not None else float('nan'):>7.2f}"


def table(res: dict[str, Any]) -> str:
    """The results as text: per size, one line per op, seconds cold / warm p50 / warm p95."""
    names = list(res["versions"])
    lines = [
        f"{res['cpus']} CPUs, load average {res['load_avg_at_start']} -> {res['load_avg_at_end']}; "
        f"seconds; warm = {res['repeats']} repeats after the cold call; "
        + "; ".join(f"{n}: {s}" for n, s in res["versions"].items()),
        "cli: a fresh `paperatlas` process per call (start-up included: see `--version`); web: the served app, "
        "a fresh server process per page (its start and background warm-up not counted)",
    ]
    for s in res["sizes"]:
        lines.append("")
        lines.append(f"{s['size']}: {s['papers']} papers ({s['data']}); search indexes built in {s['index_build_s']} s")
        head = f"{'':4} {'op':<20}" + "".join(f" {n + ' cold  p50    p95':>22}" for n in names)
        if "baseline" in names:
            head += f" {'p50 x':>6}"
        head += f" {'kw p50':>7}"
        lines.append(head)
        for row in s["rows"]:
            line = f"{row['surface']:4} {row['op']:<20}" + "".join(" " + _cell(row.get(n)) for n in names)
            if "baseline" in names:
                b, c = row["baseline"].get("warm_p50_s"), row["candidate"].get("warm_p50_s")
                line += (
                    f" {b / c:>6.1f}" if b and c and row["baseline"]["ok"] and row["candidate"]["ok"] else f" {'':>6}"
                )
            kw = row[names[-1]].get("keyword_p50_s")
            line += f" {kw:>7.3f}" if kw is not None else f" {'':>7}"
            bad = [f"{n}: {row[n]['note']}" for n in names if row[n].get("note")]
            if bad:
                line += "  " + "; ".join(bad)
            lines.append(line)
    return "\n".join(lines)


@click.command("interactive")
@click.option(
    "--db",
    "db_path",
    envvar=paperatlas_settings.env("db"),
    required=True,
    metavar="PATH",
    type=click.Path(exists=True, dir_okay=False),
    help="An embedded library of the venue papers (read only: the benchmark works on copies).",
)
@click.option("--sizes", default="8k,100k", show_default=True, help="8k: the library itself; 100k: grown with copies.")
@click.option(
    "--repeats", type=click.IntRange(1, 50), default=5, show_default=True, help="Warm calls after the cold one."
)
@click.option(
    "--only", default="", metavar="OPS", help="Comma-separated op names (see the table), e.g. recommend,agenda."
)
@click.option("--surface", type=click.Choice(["cli", "web", "both"]), default="both", show_default=True)
@click.option(
    "--baseline-src",
    type=click.Path(exists=True, file_okay=False),
    help="A source tree of another version (e.g. `git archive main | tar -x -C DIR`): each op runs under it "
    "too, just before this checkout, for a before/after table from one run.",
)
@click.option(
    "--workdir",
    default=os.path.join(tempfile.gettempdir(), "paperatlas-bench-interactive"),
    show_default=True,
    help="Where the prepared libraries are kept between runs.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def bench_interactive_cmd(
    db_path: str,
    sizes: str,
    repeats: int,
    only: str,
    surface: str,
    baseline_src: str | None,
    workdir: str,
    as_json: bool,
) -> None:
    """Seconds of every interactive command and page, cold and warm (p50, p95), at 8k and 100k papers,
    beside a keyword search measured in the same run.

    Example:

        flock /work/heavy.lock nice -n 10 paperatlas bench interactive --db venue.db --baseline-src /tmp/main-src
    """
    from .search import parse_size

    wanted = [s.strip() for s in sizes.split(",") if s.strip()]
    for s in wanted:
        try:
            parse_size(s)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--sizes") from None
    names = [x.strip() for x in only.split(",") if x.strip()]
    unknown = [x for x in names if x not in {o.name for o in OPS}]
    if unknown:
        raise click.BadParameter(
            f"no op {unknown[0]!r}: use {', '.join(sorted({o.name for o in OPS}))}", param_hint="--only"
        )
    res = bench_interactive(
        Path(db_path),
        wanted,
        Path(workdir),
        repeats,
        names or None,
        ("cli", "web") if surface == "both" else (surface,),
        baseline_src,
        log=lambda m: click.echo(m, err=True),
    )
    click.echo(json.dumps(res, indent=2) if as_json else table(res))
