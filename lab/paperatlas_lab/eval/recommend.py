"""`paperatlas eval recommend acm-cr|simulated|groups DATA_PATH`: every recommender side by side.

* acm-cr: each of the 50 ACM-CR citing papers is a reader whose library is its
  in-corpus references; half are hidden (5 seeds), the rest given as likes, and a
  fixed 10,000-paper pool (every in-corpus reference plus a seeded random fill) is
  ranked. nDCG@10, recall@100, MRR. Tuning readers: even positions in
  citations.jsonl; reported readers: odd positions (both also shown pooled).
* simulated: readers of the ICLR 2024 papers with hidden interests drawn at random
  over the human-assigned primary areas (independent of any recommender); they like,
  skip or mark "not interested" with noise. precision@10 after 0/5/10/20 events.
  Triage rows: pairs picked by triage.next_pair (the product's own selection) or at
  random, answered by SimReader.answer: a forced choice, or (the "'neither' allowed"
  rows, as the web UI allows) "neither" when no paper of the pair is in a liked area. Tuning readers: seeds 0-29 (triage settings
  were also checked on seeds 0-99 and 150-249); reported readers: seeds 100-149.
* groups: 3-5 simulated readers; Nash welfare vs sum of Borda scores; min and mean
  member satisfaction.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from paperatlas.embed.base import DEFAULT_EMBEDDER
from paperatlas.recommend import RECOMMENDERS, Corpus, Signals
from paperatlas.recommend.base import rank
from paperatlas.recommend.svm import SvmRecommender

ACM_POOL_SIZE = 10_000
ACM_POOL_SEED = 0
ACM_SEEDS = (0, 1, 2, 3, 4)
SVM_KEYWORDS = "svm+keywords"  # diagnostic row: the svm baseline on the library's text (keywords in)
Progress = Callable[[str], None]


# -- data ------------------------------------------------------------------------------------
@dataclass
class AcmReader:
    """One citing paper of ACM-CR: its in-corpus references are one reader's library."""

    doi: str
    title: str
    refs: list[str]


def load_acm_readers(data_path: str | Path) -> list[AcmReader]:
    rows = [json.loads(line) for line in open(Path(data_path) / "citations.jsonl", encoding="utf-8")]
    return [AcmReader(r["paper_doi"], r["title"], list(dict.fromkeys(r["cited_in_collection"]))) for r in rows]


def acm_pool(data_path: str | Path, size: int = ACM_POOL_SIZE, seed: int = ACM_POOL_SEED) -> list[dict[str, Any]]:
    """The fixed candidate pool: every in-corpus reference of the 50 citing papers plus a
    seeded random fill from the rest of the corpus, as ingestable records (same for every run)."""
    readers = load_acm_readers(data_path)
    refs = sorted({d for r in readers for d in r.refs})
    with gzip.open(Path(data_path) / "corpus.jsonl.gz", "rt", encoding="utf-8") as f:
        corpus = {}
        for line in f:
            d = json.loads(line)
            corpus[d["_id"]] = d
    refs = [d for d in refs if d in corpus]
    rest = sorted(set(corpus) - set(refs))
    rng = np.random.default_rng(seed)
    fill = [rest[i] for i in sorted(rng.choice(len(rest), size=max(0, size - len(refs)), replace=False))]
    out = []
    for doi in refs + fill:
        d = corpus[doi]
        # generic record shape (not BEIR) so keywords, venue and year survive the ingest
        out.append(
            {
                "id": doi,
                "title": d.get("title", ""),
                "abstract": d.get("text", ""),
                "keywords": d.get("keywords", ""),
                "venue": d.get("venue", ""),
                "year": d.get("year", ""),
            }
        )
    return out


def library_from_records(
    records: Sequence[dict[str, Any]], embedder: str, workdir: str, progress: Progress | None = None
) -> Any:
    """A throw-away Library of these records, embedded through the shared vector cache."""
    from paperatlas.library import Library

    path = os.path.join(workdir, "pool.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    lib = Library(os.path.join(workdir, "pool.db"), embedder=embedder)
    lib.ingest([path], skip_bad=True)
    if embedder != "none":
        t = time.time()
        n = lib.embed()
        if progress and n:
            progress(f"embedded {n} papers with {lib.embedder.id} in {time.time() - t:.0f}s")
    return lib


# -- metrics ---------------------------------------------------------------------------------
def ndcg_at(ranked: Sequence[int], relevant: set[int], k: int = 10) -> float:
    dcg = sum(1.0 / math.log2(i + 2) for i, r in enumerate(ranked[:k]) if r in relevant)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, len(relevant))))
    return dcg / ideal if ideal else 0.0


def recall_at(ranked: Sequence[int], relevant: set[int], k: int = 100) -> float:
    return len(set(ranked[:k]) & relevant) / len(relevant) if relevant else 0.0


def reciprocal_rank(scores: np.ndarray, relevant: set[int], exclude: np.ndarray) -> float:
    """1 / rank of the best relevant paper over the whole pool (excluded rows skipped)."""
    if not relevant:
        return 0.0
    s = scores.astype(np.float64, copy=True)
    s[exclude] = -np.inf
    best = max(s[list(relevant)])
    return 1.0 / (1 + int((s > best).sum()))


def _mean(xs: Sequence[float]) -> float:
    return float(np.mean(xs)) if len(xs) else 0.0


# -- acm-cr ----------------------------------------------------------------------------------
def acm_splits(
    readers: Sequence[AcmReader],
    corpus: Corpus,
    seeds: Sequence[int] = ACM_SEEDS,
    resolve: Callable[[str], str | None] | None = None,
) -> list[dict[str, Any]]:
    """(reader, seed) tasks: half the references hidden (seeded), the rest liked."""
    tasks = []
    for ri, r in enumerate(readers):
        refs = [resolve(d) if resolve else d for d in r.refs]
        refs = list(dict.fromkeys(d for d in refs if d is not None and d in corpus.pos))
        if len(refs) < 2:
            continue
        for seed in seeds:
            rng = np.random.default_rng(1000 * seed + ri)
            perm = [refs[i] for i in rng.permutation(len(refs))]
            n_hidden = len(refs) // 2
            tasks.append(
                {
                    "reader": ri,
                    "seed": seed,
                    "split": "tune" if ri % 2 == 0 else "test",
                    "hidden": perm[:n_hidden],
                    "likes": perm[n_hidden:],
                }
            )
    return tasks


def evaluate_acm(
    corpus: Corpus, tasks: Sequence[dict[str, Any]], recommenders: dict[str, Any], progress: Progress | None = None
) -> dict[str, dict[str, dict[str, float]]]:
    """{split: {recommender: {metric: mean}}} for split in tune / test / all."""
    per: dict[str, dict[str, list[dict[str, float]]]] = {}
    n = len(corpus)
    for name, rec in recommenders.items():
        t0 = time.time()
        for task in tasks:
            likes = corpus.rows(task["likes"])
            hidden = set(corpus.rows(task["hidden"]).tolist())
            scored = rec.fit(corpus, Signals(likes=task["likes"]))
            excl = np.zeros(n, dtype=bool)
            excl[likes] = True
            top = rank(scored, 100, exclude=excl)
            m = {
                "ndcg@10": ndcg_at(top, hidden, 10),
                "recall@100": recall_at(top, hidden, 100),
                "mrr": reciprocal_rank(scored.scores, hidden, excl),
            }
            for split in (task["split"], "all"):
                per.setdefault(split, {}).setdefault(name, []).append(m)
        if progress:
            progress(f"{name}: {len(tasks)} reader-seeds in {time.time() - t0:.1f}s")
    return {
        split: {name: {k: round(_mean([m[k] for m in ms]), 4) for k in ms[0]} for name, ms in recs.items()}
        for split, recs in per.items()
    }


@contextmanager
def acm_setup(
    data_path: str | Path,
    embedder: str = "minilm",
    progress: Progress | None = None,
    seeds: Sequence[int] = ACM_SEEDS,
    pool_size: int = ACM_POOL_SIZE,
) -> Iterator[tuple[Corpus, list[dict[str, Any]]]]:
    """The pool's throw-away library as a recommender corpus, and the readers' hide-half tasks over it."""
    readers = load_acm_readers(data_path)
    pool = acm_pool(data_path, pool_size)
    with tempfile.TemporaryDirectory(prefix="paperatlas-acm-") as tmp:
        lib = library_from_records(pool, embedder, tmp, progress)
        try:
            corpus = lib.recommend.corpus()
            yield corpus, acm_splits(readers, corpus, seeds, lambda d: lib.store.resolve_id(d))
        finally:
            lib.close()


def run_acm(
    data_path: str | Path,
    embedder: str = "minilm",
    recommenders: dict[str, Any] | None = None,
    progress: Progress | None = None,
    seeds: Sequence[int] = ACM_SEEDS,
    pool_size: int = ACM_POOL_SIZE,
) -> dict[str, Any]:
    with acm_setup(data_path, embedder, progress, seeds, pool_size) as (corpus, tasks):
        recs = recommenders or {name: RECOMMENDERS.create(name) for name in RECOMMENDERS.names()}
        if recommenders is None and corpus.svm_space is not None:
            # a diagnostic row: the svm baseline given the same keywords `default` reads
            recs[SVM_KEYWORDS] = SvmRecommender(library_text=True)
        results = evaluate_acm(corpus, tasks, recs, progress)
        pool = len(corpus)
    return {
        "dataset": "acm-cr",
        "pool": pool,
        "readers": len({t["reader"] for t in tasks}),
        "seeds": list(seeds),
        "embedder": embedder,
        "tune_readers": "even positions in citations.jsonl",
        "test_readers": "odd positions",
        "results": results,
    }


# -- simulated readers -----------------------------------------------------------------------
SIM_VENUE = "ICLR"
SIM_MIN_AREA = 40
SIM_SKIP_AREAS = ("general machine learning",)  # a catch-all, not an interest
SIM_EVENTS = (0, 5, 10, 20)
SIM_TUNE_SEEDS = tuple(range(0, 30))
SIM_TEST_SEEDS = tuple(range(100, 150))
# response probabilities: (like, not interested) for a paper of a liked / disliked / other area
RESPONSES = {1: (0.85, 0.0), -1: (0.0, 0.6), 0: (0.05, 0.15)}
CHOICE_ACCURACY = 0.85  # the reader picks the better paper of a pair this often


def load_venue_papers(path: str | Path, venue: str = SIM_VENUE) -> list[dict[str, Any]]:
    out = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if d.get("venue") == venue and d.get("primary_area"):
                out.append(d)
    return out


@dataclass
class SimReader:
    """A simulated reader: a hidden utility per paper (+1 liked area, -1 disliked area, 0 other)."""

    seed: int
    liked_areas: list[str]
    disliked_areas: list[str]
    utility: np.ndarray  # (n,) over corpus rows

    def respond(self, row: int, rng: np.random.Generator) -> str:
        p_like, p_dis = RESPONSES[int(self.utility[row])]
        u = rng.random()
        return "like" if u < p_like else ("dislike" if u < p_like + p_dis else "skip")

    def choose(self, a: int, b: int, rng: np.random.Generator) -> tuple[int, int]:
        ua, ub = self.utility[a], self.utility[b]
        if ua == ub:
            return (a, b) if rng.random() < 0.5 else (b, a)
        better, worse = (a, b) if ua > ub else (b, a)
        return (better, worse) if rng.random() < CHOICE_ACCURACY else (worse, better)

    def answer(self, a: int, b: int, rng: np.random.Generator, neither: bool = False) -> list[tuple[int, int]]:
        """The answer to "A or B?" as (winner, loser) rows. With `neither` allowed, a reader who
        wants neither paper (no liked area in the pair) says so as often as they pick right;
        -1 is then the neutral winner over both (triage.NEITHER)."""
        if neither and self.utility[a] <= 0 and self.utility[b] <= 0 and rng.random() < CHOICE_ACCURACY:
            return [(-1, a), (-1, b)]
        return [self.choose(a, b, rng)]


def make_reader(seed: int, areas: np.ndarray, eligible: Sequence[str]) -> SimReader:
    """Interests drawn at random over the human-assigned areas, independently of any recommender."""
    rng = np.random.default_rng(seed + 7919)
    pick = list(rng.permutation(len(eligible)))
    n_like = 1 + int(rng.random() < 0.5)
    liked = [eligible[i] for i in pick[:n_like]]
    disliked = [eligible[i] for i in pick[n_like : n_like + 2]]
    u = np.zeros(len(areas), dtype=np.int64)
    u[np.isin(areas, liked)] = 1
    u[np.isin(areas, disliked)] = -1
    return SimReader(seed, liked, disliked, u)


def precision_at(scored: Any, relevant: np.ndarray, exclude: np.ndarray, k: int = 10) -> float:
    top = rank(scored, k, exclude=exclude)
    return float(np.mean([relevant[i] for i in top])) if top else 0.0


def _stream(reader: SimReader, n: int, events: int, seed: int) -> list[tuple[int, str]]:
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)[:events]
    return [(int(i), reader.respond(int(i), rng)) for i in order]


Answer = tuple[int, int, list[tuple[int, int]]]  # the pair shown, and its (winner, loser) rows


def _choice_ids(corpus: Corpus, answers: Sequence[Answer]) -> list[tuple[str, str]]:
    from paperatlas.recommend.triage import NEITHER

    return [(NEITHER if w < 0 else corpus.ids[w], corpus.ids[lo]) for _, _, rows in answers for w, lo in rows]


def _triage_choices(
    corpus: Corpus, reader: SimReader, events: int, seed: int, strategy: str, neither: bool = False
) -> list[Answer]:
    """The reader's answers to `events` pairs: chosen by triage.next_pair (the product's own
    selection, given the answers so far) or drawn at random ("pairs"); `neither`: the reader
    may answer "neither" (SimReader.answer)."""
    from paperatlas.recommend import triage

    rng = np.random.default_rng(seed)
    n = len(corpus)
    shown = np.zeros(n, dtype=bool)
    answers: list[Answer] = []
    for _ in range(events):
        if strategy == "bandit":
            pair = triage.next_pair(corpus, Signals(choices=_choice_ids(corpus, answers)), ~shown, rng)
            if pair is None:
                break
            a, b = pair
        else:
            a, b = (int(i) for i in rng.choice(np.flatnonzero(~shown), 2, replace=False))
        shown[[a, b]] = True
        answers.append((a, b, reader.answer(a, b, rng, neither)))
    return answers


def simulated_variants() -> dict[str, dict[str, Any]]:
    """Rows of the simulated table: recommender x event source x negatives."""
    return {
        "svm": {"rec": "svm", "events": "random", "negatives": True},
        "default": {"rec": "default", "events": "random", "negatives": True},
        "default (no negatives)": {"rec": "default", "events": "random", "negatives": False},
        "default + triage (dueling bandit)": {"rec": "default", "events": "bandit", "negatives": True},
        "default + triage (random pairs)": {"rec": "default", "events": "pairs", "negatives": True},
        "default + triage, 'neither' allowed (dueling bandit)": {
            "rec": "default",
            "events": "bandit+neither",
            "negatives": True,
        },
        "default + triage, 'neither' allowed (random pairs)": {
            "rec": "default",
            "events": "pairs+neither",
            "negatives": True,
        },
        "default + written preferences": {"rec": "default", "events": "random", "negatives": True, "pref": True},
    }


def evaluate_simulated(
    corpus: Corpus,
    areas: np.ndarray,
    seeds: Sequence[int],
    events: Sequence[int] = SIM_EVENTS,
    recommenders: dict[str, Any] | None = None,
    progress: Progress | None = None,
) -> dict[str, dict[str, float]]:
    """{variant: {"p@10 after k": mean}} over the readers `seeds`."""
    counts = _area_counts(areas)
    eligible = sorted(
        a for a, c in counts.items() if c >= SIM_MIN_AREA and not any(a.startswith(s) for s in SIM_SKIP_AREAS)
    )
    recs = recommenders or {name: RECOMMENDERS.create(name) for name in RECOMMENDERS.names()}
    no_neg = RECOMMENDERS.create("default", use_negatives=False)
    out: dict[str, dict[str, list[float]]] = {}
    n, kmax = len(corpus), max(events)
    for seed in seeds:
        reader = make_reader(seed, areas, eligible)
        relevant = reader.utility == 1
        stream = _stream(reader, n, kmax, seed)
        trials = {
            f"{strategy}{'+neither' if nei else ''}": _triage_choices(corpus, reader, kmax, seed, strategy, nei)
            for strategy in ("bandit", "pairs")
            for nei in (False, True)
        }
        pref = ", ".join([f"more {a}" for a in reader.liked_areas] + [f"fewer {a}" for a in reader.disliked_areas])
        for name, v in simulated_variants().items():
            rec = no_neg if (v["rec"] == "default" and not v["negatives"]) else recs[v["rec"]]
            for k in events:
                excl = np.zeros(n, dtype=bool)
                if v["events"] == "random":
                    ev = stream[:k]
                    excl[[i for i, _ in ev]] = True
                    sig = Signals(
                        likes=[corpus.ids[i] for i, r in ev if r == "like"],
                        dislikes=[corpus.ids[i] for i, r in ev if r == "dislike"] if v["negatives"] else [],
                        preferences=pref if v.get("pref") else "",
                    )
                else:
                    ans = trials[v["events"]][:k]  # k answers (clicks)
                    for a, b, _ in ans:
                        excl[[a, b]] = True
                    sig = Signals(choices=_choice_ids(corpus, ans))
                p = precision_at(rec.fit(corpus, sig), relevant, excl)
                out.setdefault(name, {}).setdefault(f"p@10 after {k}", []).append(p)
        if progress and (seed - seeds[0]) % 10 == 9:
            progress(f"simulated reader {seed} done")
    return {name: {k: round(_mean(v), 4) for k, v in m.items()} for name, m in out.items()}


def _area_counts(xs: Any) -> dict[str, int]:
    from collections import Counter

    return dict(Counter(xs.tolist() if hasattr(xs, "tolist") else xs))


def sim_corpus(
    papers_path: str | Path, embedder: str, workdir: str, progress: Progress | None = None
) -> tuple[Any, Corpus, np.ndarray]:
    """(library, corpus, primary area per corpus row) of the ICLR 2024 papers."""
    papers = load_venue_papers(papers_path)
    recs = [
        {
            "id": d["id"],
            "title": d["title"],
            "abstract": d["abstract"],
            "authors": d.get("authors", []),
            "keywords": d.get("keywords", []),
            "venue": d["venue"],
            "year": d["year"],
            "status": d.get("status", ""),
            "url": d.get("url", ""),
        }
        for d in papers
    ]
    lib = library_from_records(recs, embedder, workdir, progress)
    corpus = lib.recommend.corpus()
    area_of = {d["id"]: d["primary_area"] for d in papers}
    areas = np.array([area_of.get(pid, "") for pid in corpus.ids], dtype=object)
    return lib, corpus, areas


def run_simulated(
    papers_path: str | Path,
    embedder: str = "minilm",
    split: str = "test",
    recommenders: dict[str, Any] | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    seeds = SIM_TEST_SEEDS if split == "test" else SIM_TUNE_SEEDS
    with tempfile.TemporaryDirectory(prefix="paperatlas-sim-") as tmp:
        lib, corpus, areas = sim_corpus(papers_path, embedder, tmp, progress)
        try:
            results = evaluate_simulated(corpus, areas, seeds, recommenders=recommenders, progress=progress)
        finally:
            lib.close()
    return {
        "dataset": "simulated",
        "papers": len(corpus),
        "readers": len(seeds),
        "split": split,
        "seeds": [seeds[0], seeds[-1]],
        "embedder": embedder,
        "topics": "ICLR 2024 primary areas (human-assigned), >= 40 papers, catch-all excluded",
        "responses": {
            "liked area": "like 0.85",
            "disliked area": "not interested 0.6",
            "other": "like 0.05 / not interested 0.15",
        },
        "results": results,
    }


# -- groups ----------------------------------------------------------------------------------
GROUP_EVENTS = 20
GROUP_N = 10


def evaluate_groups(
    corpus: Corpus,
    areas: np.ndarray,
    seeds: Sequence[int],
    n: int = GROUP_N,
    depth: int = 100,
    progress: Progress | None = None,
) -> dict[str, dict[str, float]]:
    """Nash vs sum over groups of 3-5 simulated readers, each after 20 random-order events.
    Satisfaction of a member = fraction of the group list in their liked areas."""
    from paperatlas.recommend import groups

    counts = _area_counts(areas)
    eligible = sorted(
        a for a, c in counts.items() if c >= SIM_MIN_AREA and not any(a.startswith(s) for s in SIM_SKIP_AREAS)
    )
    rec = RECOMMENDERS.create("default")
    res: dict[str, dict[str, list[float]]] = {}
    nrows = len(corpus)
    for g in seeds:
        rng = np.random.default_rng(50_000 + g)
        size = int(rng.integers(3, 6))
        members = [make_reader(10_000 * (g + 1) + m, areas, eligible) for m in range(size)]
        pts = []
        for mem in members:
            ev = _stream(mem, nrows, GROUP_EVENTS, mem.seed)
            sig = Signals(
                likes=[corpus.ids[i] for i, r in ev if r == "like"],
                dislikes=[corpus.ids[i] for i, r in ev if r == "dislike"],
            )
            excl = np.zeros(nrows, dtype=bool)
            excl[[i for i, _ in ev]] = True
            pts.append(groups.borda(rec.fit(corpus, sig).scores, excl, depth))
        points = np.stack(pts)
        for method in groups.METHODS:
            chosen = groups.select(points, n, method)
            sat = [float(np.mean(mem.utility[chosen] == 1)) for mem in members]
            borda_sat = [s["satisfaction"] for s in groups.member_stats(points, chosen)]
            r = res.setdefault(method, {})
            r.setdefault("min satisfaction", []).append(min(sat))
            r.setdefault("mean satisfaction", []).append(float(np.mean(sat)))
            r.setdefault("min Borda share of own best", []).append(min(borda_sat))
            r.setdefault("members with no relevant paper", []).append(float(sum(s == 0 for s in sat)) / size)
    return {m: {k: round(_mean(v), 4) for k, v in d.items()} for m, d in res.items()}


def run_groups(
    papers_path: str | Path, embedder: str = "minilm", split: str = "test", progress: Progress | None = None
) -> dict[str, Any]:
    seeds = SIM_TEST_SEEDS if split == "test" else SIM_TUNE_SEEDS
    with tempfile.TemporaryDirectory(prefix="paperatlas-groups-") as tmp:
        lib, corpus, areas = sim_corpus(papers_path, embedder, tmp, progress)
        try:
            results = evaluate_groups(corpus, areas, seeds, progress=progress)
        finally:
            lib.close()
    return {
        "dataset": "groups",
        "papers": len(corpus),
        "groups": len(seeds),
        "split": split,
        "group_size": "3-5",
        "list_length": GROUP_N,
        "events_per_member": GROUP_EVENTS,
        "embedder": embedder,
        "satisfaction": "fraction of the list in the member's hidden liked areas",
        "results": results,
    }


# -- command ---------------------------------------------------------------------------------
def _table(title: str, rows: dict[str, dict[str, float]]) -> str:
    cols = list(next(iter(rows.values())).keys()) if rows else []
    width = max([len(r) for r in rows] + [12])
    lines = [title, " " * width + "  " + "  ".join(f"{c:>12}" for c in cols)]
    for name, m in rows.items():
        lines.append(f"{name:<{width}}  " + "  ".join(f"{m[c]:>12.4f}" for c in cols))
    return "\n".join(lines)


def format_report(rep: dict[str, Any]) -> str:
    ds = rep["dataset"]
    if ds == "acm-cr":
        res = rep["results"]
        out = [
            f"ACM-CR: {rep['readers']} readers x {len(rep['seeds'])} seeds, pool {rep['pool']} papers, "
            f"embedder {rep['embedder']}"
        ]
        for split in ("test", "tune", "all"):
            if split in res:
                out.append("")
                out.append(_table(f"[{split}]", res[split]))
        if "test" in res and "svm" in res["test"] and "default" in res["test"]:
            s, d = res["test"]["svm"]["ndcg@10"], res["test"]["default"]["ndcg@10"]
            out.append(f"\ndefault / svm nDCG@10 on test readers: {d / s:.2f}x" if s else "")
            if SVM_KEYWORDS in res["test"]:
                k = res["test"][SVM_KEYWORDS]["ndcg@10"]
                out.append(
                    f"({SVM_KEYWORDS}: the svm baseline on the library's text, authors' keywords included, "
                    f"not arxiv-sanity's; default / it: {d / k:.2f}x)"
                    if k
                    else ""
                )
        return "\n".join(out)
    if ds == "simulated":
        return (
            f"Simulated readers ({rep['split']}: {rep['readers']} readers, seeds {rep['seeds'][0]}-"
            f"{rep['seeds'][1]}) over {rep['papers']} ICLR 2024 papers, embedder {rep['embedder']}\n"
            + _table("precision@10 after N feedback events", rep["results"])
        )
    return (
        f"Reading groups ({rep['split']}: {rep['groups']} groups of 3-5, {rep['list_length']} papers, "
        f"{rep['events_per_member']} events per member)\n" + _table("Nash welfare vs sum of scores", rep["results"])
    )


def _recommend_cmd() -> Any:
    import click

    @click.command("recommend")
    @click.argument("task", type=click.Choice(["acm-cr", "simulated", "groups"]))
    @click.argument("data_path", type=click.Path(exists=True))
    @click.option(
        "--embedder",
        default=DEFAULT_EMBEDDER,
        show_default=True,
        help="Embedding model (vectors come from $PAPERATLAS_VECTOR_CACHE when already computed).",
    )
    @click.option(
        "--split",
        type=click.Choice(["test", "tune"]),
        default="test",
        show_default=True,
        help="simulated/groups: report readers (seeds 100-149) or tuning readers (0-29).",
    )
    @click.option("--seeds", default="0,1,2,3,4", show_default=True, help="acm-cr: hide-half seeds.")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON: each recommender's metrics.")
    def recommend_cmd(task: str, data_path: str, embedder: str, split: str, seeds: str, as_json: bool) -> None:
        """Every recommender side by side: ACM-CR reader libraries, simulated readers, reading groups.

        DATA_PATH: the acm_cr folder, or the venue papers file for simulated / groups.

        Example:

            paperatlas eval recommend acm-cr ../shared/data/acm_cr
        """

        def progress(msg: str) -> None:
            click.echo(msg, err=True)

        t = time.time()
        if task == "acm-cr":
            path = Path(data_path)
            rep = run_acm(path, embedder, progress=progress, seeds=[int(s) for s in seeds.split(",") if s.strip()])
        elif task == "simulated":
            rep = run_simulated(_venue_file(data_path), embedder, split, progress=progress)
        else:
            rep = run_groups(_venue_file(data_path), embedder, split, progress=progress)
        rep["seconds"] = round(time.time() - t, 1)
        if as_json:
            res = rep["results"]
            flat = res.get("test", res) if task == "acm-cr" else res
            click.echo(
                json.dumps(
                    {
                        **flat,
                        "_meta": {k: v for k, v in rep.items() if k != "results"},
                        **({"_splits": res} if task == "acm-cr" else {}),
                    },
                    indent=2,
                )
            )
        else:
            click.echo(format_report(rep))

    return recommend_cmd


def _venue_file(path: str) -> Path:
    p = Path(path)
    return p / "papers.jsonl.gz" if p.is_dir() else p


recommend_cmd = _recommend_cmd()
