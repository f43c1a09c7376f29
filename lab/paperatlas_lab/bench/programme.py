"""`paperatlas bench agenda` and `paperatlas bench walk`: the programme room's numbers.

Both build a programme feed in the virtual site's shape (the field names of the recorded NeurIPS
2025 records, tests/data/programme) over real papers of the venue data, because no whole recorded
feed is at hand: the papers, abstracts and forum ids are real; the sessions and poster numbers are
laid out here (said in every output).
"""

from __future__ import annotations

import gzip
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np


def _venue_rows(path: str | Path, venues: tuple[str, ...] = ("NeurIPS",)) -> list[dict[str, Any]]:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
        rows = [json.loads(line) for line in fh if line.strip()]
    return [r for r in rows if r.get("venue") in venues]


def make_feed(
    papers: list[dict[str, Any]],
    sessions: int,
    numbering: list[int] | None = None,
    session_of: list[int] | None = None,
    day0: str = "2023-12-12",
) -> dict[str, Any]:
    """A virtual-site feed: one poster event per paper in `sessions` poster sessions (two a day,
    10:45-12:45 and 17:00-19:00 at -06:00, as NeurIPS 2023 in New Orleans), numbered in the hall by
    `numbering`, plus an oral event for each paper whose status is Oral (15 minutes, 4 parallel rooms)."""
    from datetime import date, timedelta

    start = date.fromisoformat(day0)
    events: list[dict[str, Any]] = []
    per = [0] * sessions
    orals = 0
    for i, p in enumerate(papers):
        s = session_of[i] if session_of else i % sessions
        day = start + timedelta(days=s // 2)
        hours = ("10:45:00", "12:45:00") if s % 2 == 0 else ("17:00:00", "19:00:00")
        per[s] += 1
        number = numbering[i] if numbering else per[s]
        forum = p.get("openreview_id") or ""
        base = {
            "uid": f"u{i}",
            "name": p["title"],
            "abstract": p.get("abstract", ""),
            "authors": [{"id": k, "fullname": a, "institution": ""} for k, a in enumerate(p.get("authors") or [])],
            "topic": None,
            "keywords": p.get("keywords") or [],
            "paper_url": f"https://openreview.net/forum?id={forum}" if forum else None,
        }
        events.append(
            {
                **base,
                "id": 100000 + i,
                "decision": f"Accept ({str(p.get('status') or 'poster').lower()})",
                "session": f"Poster Session {s + 1}",
                "eventtype": "Poster",
                "room_name": "Great Hall & Hall B1+B2",
                "virtualsite_url": f"/virtual/2023/poster/{100000 + i}",
                "starttime": f"{day}T{hours[0]}-06:00",
                "endtime": f"{day}T{hours[1]}-06:00",
                "poster_position": f"#{number}",
            }
        )
        if str(p.get("status")).lower() == "oral":
            slot = orals // 4
            t0 = 8 * 60 + 15 * (slot % 6)
            oday = start + timedelta(days=(slot // 6) % 3)
            events.append(
                {
                    **base,
                    "id": 200000 + i,
                    "decision": "Accept (oral)",
                    "eventtype": "Oral",
                    "session": f"Oral {orals % 4 + 1}{chr(65 + slot // 6 % 26)}",
                    "room_name": f"Room R0{orals % 4 + 2}",
                    "virtualsite_url": f"/virtual/2023/oral/{200000 + i}",
                    "starttime": f"{oday}T{t0 // 60:02d}:{t0 % 60:02d}:00-06:00",
                    "endtime": f"{oday}T{(t0 + 15) // 60:02d}:{(t0 + 15) % 60:02d}:00-06:00",
                }
            )
            orals += 1
    return {"count": len(events), "next": None, "previous": None, "results": events}


def _median_ms(f: Any, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return round(1000 * statistics.median(times), 2)


def bench_agenda(
    venue_file: str | Path, events: int = 5000, likes: int = 100, repeats: int = 5, seed: int = 0
) -> dict[str, Any]:
    """Agenda build time on a programme of `events` events (NeurIPS 2023 + ICML 2024 papers laid
    out in 10 poster sessions), beside loading the reader's liked papers (the baseline) in the same run."""
    from paperatlas.library import Library

    rows = _venue_rows(venue_file, ("NeurIPS", "ICML"))
    rng = random.Random(seed)
    papers: list[dict[str, Any]] = []
    n_events = 0
    for r in rows:
        if n_events >= events:
            break
        papers.append(r)
        n_events += 2 if str(r.get("status")).lower() == "oral" else 1
    feed = make_feed(papers, 10)
    feed["results"] = feed["results"][:events]
    with tempfile.TemporaryDirectory(prefix="paperatlas-bench-") as tmp:
        listing = Path(tmp) / "papers.jsonl"
        listing.write_text("".join(json.dumps(p) + "\n" for p in papers), encoding="utf-8")
        saved = Path(tmp) / "bench-2023-orals-posters.json"
        saved.write_text(json.dumps(feed), encoding="utf-8")
        with Library(os.path.join(tmp, "lib.db"), embedder="hashing") as lib:
            lib.ingest([listing])
            lib.embed()
            t = time.perf_counter()
            report = lib.programme.ingest_feed(saved)
            read_s = time.perf_counter() - t
            ids = [p.id for p in lib.papers()]
            liked = rng.sample(ids, likes)
            lib.readers.set_feedback("bench", liked, "like")
            for pid in liked[:20]:
                lib.readers.tag("bench", [pid], "must-see")
            out: dict[str, Any] = {
                "events": len(feed["results"]),
                "papers": len(ids),
                "likes": likes,
                "repeats": repeats,
                "layout": "real papers (venue data), sessions and poster numbers laid out by the bench",
                "read_feed_s": round(read_s, 2),
                "read_notes": report.notes[:2],
                "baseline_liked_ms": _median_ms(lambda: lib.readers.liked("bench"), repeats),
                "agenda_ms": _median_ms(lambda: lib.programme.agenda("bench", recommended=0), repeats),
                "agenda_with_recommended_ms": _median_ms(
                    lambda: lib.programme.agenda("bench", recommended=20), repeats
                ),
                "ics_ms": _median_ms(lambda: lib.programme.ics("bench", recommended=0), repeats),
            }
            a = lib.programme.agenda("bench", recommended=20)
            out["agenda_items"], out["agenda_sessions"], out["clashes"] = len(a.items), len(a.sessions), len(a.clashes)
            out["agenda_over_baseline"] = round(out["agenda_ms"] / max(out["baseline_liked_ms"], 1e-6), 1)
    return out


def _kmeans_order(vecs: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Cluster labels (a few Lloyd steps): posters of one topic stand together, as halls are laid out."""
    centres = vecs[rng.choice(len(vecs), k, replace=False)]
    for _ in range(10):
        labels = np.argmax(vecs @ centres.T, axis=1)
        for c in range(k):
            members = vecs[labels == c]
            if len(members):
                m = members.mean(axis=0)
                centres[c] = m / (np.linalg.norm(m) or 1.0)
    return labels


def bench_walk(
    db: str | Path,
    sessions: int = 6,
    readers: int = 30,
    budgets: tuple[int, ...] = (30, 60, 90),
    per_poster: float = 5.0,
    speeds: tuple[float, ...] = (1.0, 3.0),
    seed: int = 0,
) -> dict[str, Any]:
    """The walk planner against top-k and score order: interest collected per minute of budget.

    `db`: an embedded library of one venue's papers (e.g. NeurIPS 2023 from the venue data). Each
    simulated reader likes a paper and its 9 nearest neighbours outside the session walked (so the
    walk is judged on papers the reader did not pick); interest is `Programme.interest` (their
    recommendation scores, the session's median 0, its best 1). Two hall layouts: poster numbers
    at random, and grouped by topic (clusters of the embeddings)."""
    from paperatlas.library import Library
    from paperatlas.programme.walk import METHODS, Poster

    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {
        "sessions": sessions,
        "readers": readers,
        "per_poster": per_poster,
        "layout": "real papers and embeddings; sessions and poster numbers laid out by the bench",
        "results": [],
    }
    with tempfile.TemporaryDirectory(prefix="paperatlas-bench-") as tmp:
        path = os.path.join(tmp, "lib.db")
        with Library(str(db)) as src:
            src.store.copy_to(path)
        with Library(path) as lib:
            vec_of = lib.vectors()
            papers = [p for p in lib.papers() if p.id in vec_of]
            ids = [p.id for p in papers]
            vecs = np.stack([vec_of[i] for i in ids]).astype(np.float32)
            session_of = rng.integers(0, sessions, len(ids))
            rows = [
                {
                    "title": p.title,
                    "abstract": p.abstract,
                    "authors": p.authors,
                    "status": p.status,
                    "openreview_id": p.extra.get("openreview_id") or p.id.rsplit("/", 1)[-1],
                }
                for p in papers
            ]
            out["papers"] = len(ids)
            for layout in ("random", "topic"):
                numbering = [0] * len(ids)
                labels = _kmeans_order(vecs, 40, rng) if layout == "topic" else rng.integers(0, 1, len(ids))
                for s in range(sessions):
                    members = [i for i in range(len(ids)) if session_of[i] == s]
                    keys = {i: (int(labels[i]), float(rng.random())) for i in members}
                    for n, i in enumerate(sorted(members, key=lambda i: keys[i]), start=1):
                        numbering[i] = n
                saved = Path(tmp) / f"{layout}-2023-orals-posters.json"
                saved.write_text(json.dumps(make_feed(rows, sessions, numbering, [int(x) for x in session_of])))
                lib.programme.ingest_feed(saved)
                sids = [s.session_id for s in lib.programme.sessions(f"{layout} 2023", type="poster")]
                scores: dict[tuple[float, int, str], list[float]] = {}
                stops: dict[tuple[float, int, str], list[int]] = {}
                for r in range(readers):
                    s = r % sessions
                    sid = sids[s]
                    outside = np.flatnonzero(session_of != s)
                    first = int(rng.choice(outside))
                    near = outside[np.argsort(-(vecs[outside] @ vecs[first]))[:10]]
                    name = f"reader{r}-{layout}"
                    lib.readers.set_feedback(name, [ids[i] for i in near], "like")
                    # the Library path first: it also brings the reader's profile up to date
                    check = lib.programme.walk(sid, name, budgets[-1], per_poster, speeds[0])
                    _info, evs = lib.programme.session(sid)
                    interest = lib.programme.interest(name, [e.paper_id for e in evs])
                    posters = [
                        Poster(e.paper_id, e.poster_number or 0, interest.get(e.paper_id, (0.0, False))[0]) for e in evs
                    ]
                    for speed in speeds:
                        for minutes in budgets:
                            for m, f in METHODS.items():
                                w = f(posters, minutes, per_poster, speed)
                                scores.setdefault((speed, minutes, m), []).append(w.per_minute)
                                stops.setdefault((speed, minutes, m), []).append(len(w.stops))
                    direct = METHODS["plan"](posters, budgets[-1], per_poster, speeds[0])
                    # the scores carry float32 noise (~1e-6) from call to call, which can tip a near tie:
                    # counted, not hidden
                    if abs(check.interest - direct.interest) > 1e-3 * max(1.0, direct.interest):
                        out["library_path_disagreements"] = out.get("library_path_disagreements", 0) + 1
                for speed in speeds:
                    for minutes in budgets:
                        row: dict[str, Any] = {"layout": layout, "walk_min_per_100": speed, "minutes": minutes}
                        for m in METHODS:
                            row[m] = round(statistics.mean(scores[(speed, minutes, m)]), 4)
                            row[m + "_stops"] = round(statistics.mean(stops[(speed, minutes, m)]), 1)
                        row["plan_over_topk"] = round(row["plan"] / max(row["topk"], 1e-9), 3)
                        row["plan_over_score_order"] = round(row["plan"] / max(row["score_order"], 1e-9), 3)
                        out["results"].append(row)
    return out


def bench_walk_site(
    calendar: str | Path,
    readers: int = 30,
    likes: int = 5,
    budgets: tuple[int, ...] = (20, 30, 55),
    per_poster: float = 5.0,
    speeds: tuple[float, ...] = (1.0, 3.0),
    seed: int = 0,
    embedder: str | None = None,
) -> dict[str, Any]:
    """The walk planner against top-k and score order on a real programme: the poster sessions of
    a Mini-Conf site's calendar (e.g. PLDI 2021, tests/data/programme/pldi-2021), with their own
    poster numbers. Each simulated reader likes a paper outside the session walked and its
    `likes - 1` nearest neighbours there; interest is `Programme.interest`. Repeated sessions
    (" (mirror)") hold the same posters and are left out."""
    from paperatlas.library import Library
    from paperatlas.programme.walk import METHODS, Poster

    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {
        "programme": str(calendar),
        "readers": readers,
        "likes": likes,
        "per_poster": per_poster,
        "layout": "the real programme: its sessions, papers and poster numbers",
        "results": [],
    }
    with tempfile.TemporaryDirectory(prefix="paperatlas-bench-") as tmp:
        with Library(os.path.join(tmp, "lib.db"), **({"embedder": embedder} if embedder else {})) as lib:
            report = lib.programme.ingest_feed(calendar)
            lib.embed()
            out["read_notes"] = report.notes[:1]
            vec_of = lib.vectors()
            sessions = [s for s in lib.programme.sessions(type="poster") if not s.session.endswith("(mirror)")]
            members = {s.session_id: lib.programme.session(s.session_id)[1] for s in sessions}
            ids = sorted(vec_of)
            vecs = np.stack([vec_of[i] for i in ids]).astype(np.float32)
            out["papers"], out["sessions"] = len(ids), len(sessions)
            out["posters_per_session"] = [len(members[s.session_id]) for s in sessions]
            scores: dict[tuple[float, int, str], list[float]] = {}
            stops: dict[tuple[float, int, str], list[int]] = {}
            for r in range(readers):
                sid = sessions[r % len(sessions)].session_id
                evs = members[sid]
                inside = {e.paper_id for e in evs}
                outside = np.array([k for k, pid in enumerate(ids) if pid not in inside])
                first = int(rng.choice(outside))
                near = outside[np.argsort(-(vecs[outside] @ vecs[first]))[:likes]]
                name = f"reader{r}"
                lib.readers.set_feedback(name, [ids[k] for k in near], "like")
                lib.programme.walk(sid, name, budgets[-1], per_poster, speeds[0])  # brings the profile up to date
                interest = lib.programme.interest(name, [e.paper_id for e in evs])
                posters = [
                    Poster(e.paper_id, e.poster_number or 0, interest.get(e.paper_id, (0.0, False))[0]) for e in evs
                ]
                for speed in speeds:
                    for minutes in budgets:
                        for m, f in METHODS.items():
                            w = f(posters, minutes, per_poster, speed)
                            scores.setdefault((speed, minutes, m), []).append(w.per_minute)
                            stops.setdefault((speed, minutes, m), []).append(len(w.stops))
            for speed in speeds:
                for minutes in budgets:
                    row: dict[str, Any] = {"walk_min_per_100": speed, "minutes": minutes}
                    for m in METHODS:
                        row[m] = round(statistics.mean(scores[(speed, minutes, m)]), 4)
                        row[m + "_stops"] = round(statistics.mean(stops[(speed, minutes, m)]), 1)
                    row["plan_over_topk"] = round(row["plan"] / max(row["topk"], 1e-9), 3)
                    row["plan_over_score_order"] = round(row["plan"] / max(row["score_order"], 1e-9), 3)
                    out["results"].append(row)
    return out
