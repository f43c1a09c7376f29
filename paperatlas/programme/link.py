"""A feed's events meet the library: each links to a paper (by OpenReview forum id, then by
normalised title); events whose paper is not there bring it in; the linked papers learn where
and how they are presented (`extra.presentation`, `room`, `poster_position`, `session`,
`affiliations`), and what changed since the last read is recorded.

Two steps, because the papers an event brings in go through the ingest pipeline in between:
`plan()` decides (and yields the rows of the new papers), `commit()` writes the events, the
papers' fields and the changes in one transaction once those papers exist.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..ingest.clean import clean_text
from ..ingest.normalize import title_key
from ..models import Paper
from .feed import Feed, FeedEvent, slug, to_utc

# a paper with several events shows the most prominent one as its presentation
_RANK = {"oral": 0, "spotlight": 1, "highlight": 2, "poster": 3}
# the fields a re-read compares: a change to one of them is a move or a re-timing
_MOVE = ("session", "room", "poster_position")
_TIME = ("start_at", "end_at")


@dataclass
class FeedPlan:
    """What one read of a feed will do."""

    feed: str  # "neurips 2025"
    venue: str
    year: int
    events: list[FeedEvent]
    linked: dict[str, str] = field(default_factory=dict)  # event id -> paper id already in the library
    by_forum: int = 0
    by_title: int = 0
    rows: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # the new papers' rows
    row_of: dict[str, str] = field(default_factory=dict)  # event id -> the row id of its new paper
    notes: list[str] = field(default_factory=list)


def paper_group(ev: FeedEvent) -> str:
    """Events of the same paper share this: the feed's paper key, else the forum id, else the normalised title."""
    if ev.paper_key:
        return "key:" + ev.paper_key
    return "forum:" + ev.forum if ev.forum else "title:" + (title_key(clean_text(ev.name)) or ev.name.lower())


def plan(store: Any, feed_name: str, venue: str, year: int, parsed: Feed) -> FeedPlan:
    p = FeedPlan(feed_name, venue, year, parsed.events, notes=list(parsed.notes))
    forums = store.programme.forum_links()
    keys = {ev.event_id: title_key(clean_text(ev.name)) for ev in parsed.events}
    titles = store.title_matches(list(keys.values()))
    rows: dict[str, dict[str, Any]] = {}
    for ev in parsed.events:
        pid = forums.get(ev.forum) if ev.forum else None
        if pid:
            p.by_forum += 1
        else:
            same = [m for m in titles.get(keys[ev.event_id], []) if not m[1] or m[1].lower() == venue.lower()]
            if len(same) == 1:
                pid = same[0][0]
                p.by_title += 1
        if pid:
            p.linked[ev.event_id] = pid
            continue
        group = paper_group(ev)
        row = rows.get(group)
        if row is None:
            rid = ev.forum or (
                f"{slug(venue)}{year}/{ev.paper_key}" if ev.paper_key else f"{slug(venue)}{year}/event-{ev.event_id}"
            )
            row = rows[group] = {
                "id": rid,
                "title": ev.name,
                "abstract": ev.abstract,
                "authors": [a.name for a in ev.authors],
                "venue": venue,
                "year": year,
                "status": ev.type.capitalize(),
                "keywords": ev.keywords,
                "url": ev.paper_url or ev.url,
                "openreview_id": ev.forum,
            }
        elif _RANK.get(ev.type, 9) < _RANK.get(str(row["status"]).lower(), 9):
            row["status"] = ev.type.capitalize()
        p.row_of[ev.event_id] = row["id"]
    p.rows = [(f"event {r['id']}", r) for r in rows.values()]
    return p


def event_row(feed: str, ev: FeedEvent, paper_id: str) -> dict[str, Any]:
    start = ev.start.isoformat() if ev.start else ""
    end = ev.end.isoformat() if ev.end else ""
    session_id = (
        slug(f"{feed} {ev.session}") if ev.session else (slug(f"{feed} {ev.type} {start[:16]}") if start else "")
    )
    return {
        "feed": feed,
        "event_id": ev.event_id,
        "paper_id": paper_id,
        "name": ev.name,
        "type": ev.type,
        "session": ev.session,
        "session_id": session_id,
        "start_at": start,
        "end_at": end,
        "start_utc": to_utc(ev.start).strftime("%Y-%m-%dT%H:%M:%SZ") if ev.start else "",
        "end_utc": to_utc(ev.end).strftime("%Y-%m-%dT%H:%M:%SZ") if ev.end else "",
        "room": ev.room,
        "poster_position": ev.poster_position,
        "poster_number": ev.poster_number,
        "url": ev.url,
        "paper_url": ev.paper_url,
        "authors": [{"name": a.name, "institution": a.institution} for a in ev.authors],
        "withdrawn": False,
    }


def _extra_for(paper: Paper, events: Sequence[FeedEvent]) -> dict[str, Any]:
    """The paper's `extra` with what its events say about where and how it is presented."""
    x = dict(paper.extra)
    main = min(events, key=lambda e: _RANK.get(e.type, 9))
    if main.type:
        x["presentation"] = main.type
    place = next((e for e in events if e.type == "poster" and e.poster_position), None) or main
    for key, value in (("room", place.room), ("poster_position", place.poster_position), ("session", place.session)):
        if value:
            x[key] = value
    authors = main.authors or next((e.authors for e in events if e.authors), [])
    if any(a.institution for a in authors):
        known = {str(a.get("author")): a for a in x.get("affiliations") or [] if isinstance(a, dict)}
        # what an earlier source knew (a country, several institutions) stays; the feed's institution wins
        x["affiliations"] = [
            {
                **known.get(a.name, {}),
                "author": a.name,
                "institution": a.institution or str(known.get(a.name, {}).get("institution") or ""),
                "country": str(known.get(a.name, {}).get("country") or ""),
            }
            for a in authors
        ]
    return x


def commit(store: Any, p: FeedPlan, state: tuple[str, str] | None = None) -> dict[str, Any]:
    """Write the events of plan `p` (after its new papers were ingested); returns the counts."""
    paper_of: dict[str, str] = dict(p.linked)
    for eid, rid in p.row_of.items():
        real = store.resolve_id(rid)
        if real:
            paper_of[eid] = real
    rows = [event_row(p.feed, ev, paper_of.get(ev.event_id, "")) for ev in p.events]
    before = {e["event_id"]: e for e in store.programme.programme_events(p.feed)}
    first_read = not before
    changes: list[dict[str, Any]] = []
    for r in rows:
        old = before.get(r["event_id"])
        if old is None:
            if not first_read:
                changes.append(
                    {"event_id": r["event_id"], "paper_id": r["paper_id"], "kind": "added", "after": _where_when(r)}
                )
            continue
        if old["withdrawn"]:
            changes.append(
                {"event_id": r["event_id"], "paper_id": r["paper_id"], "kind": "restored", "after": _where_when(r)}
            )
            continue
        for kind, keys in (("moved", _MOVE), ("retimed", _TIME)):
            if any((old.get(k) or "") != (r.get(k) or "") for k in keys):
                changes.append(
                    {
                        "event_id": r["event_id"],
                        "paper_id": r["paper_id"],
                        "kind": kind,
                        "before": _where_when(old),
                        "after": _where_when(r),
                    }
                )
    listed = {r["event_id"] for r in rows}
    gone = [eid for eid, e in before.items() if eid not in listed and not e["withdrawn"]]
    for eid in gone:
        changes.append(
            {
                "event_id": eid,
                "paper_id": before[eid]["paper_id"],
                "kind": "withdrawn",
                "before": _where_when(before[eid]),
            }
        )
    by_paper: dict[str, list[FeedEvent]] = {}
    for ev in p.events:
        pid = paper_of.get(ev.event_id)
        if pid:
            by_paper.setdefault(pid, []).append(ev)
    papers = store.get_papers(list(by_paper))
    extras = []
    for pid, evs in by_paper.items():
        paper = papers.get(pid)
        if paper is None:
            continue
        x = _extra_for(paper, evs)
        if x != paper.extra:
            paper.extra = x
            extras.append((pid, x, paper.content_hash()))
    store.programme.write_programme(p.feed, rows, gone, extras, changes, state)
    unlinked = sum(1 for r in rows if not r["paper_id"])
    return {
        "events": len(rows),
        "linked_by_forum": p.by_forum,
        "linked_by_title": p.by_title,
        "brought_in": len(rows) - p.by_forum - p.by_title - unlinked,
        "unlinked": unlinked,
        "papers_updated": len(extras),
        "changes": _count(changes),
        "withdrawn": len(gone),
        "readers_touched": _readers_touched(store, {c["paper_id"] for c in changes if c["kind"] != "added"}),
    }


def _readers_touched(store: Any, changed: set[str]) -> list[str]:
    """The readers whose agenda (liked or tagged papers) a change touches."""
    if not changed:
        return []
    ids = {rid for rid, pid, kind in store.readers.iter_feedback_all() if kind == "like" and pid in changed}
    names = []
    for r in store.readers.list_readers():
        if r.id in ids or set(store.readers.tags(r.id)) & changed:
            names.append(r.name)
    return names


def _where_when(e: dict[str, Any]) -> dict[str, Any]:
    return {k: e.get(k) or "" for k in ("session", "room", "poster_position", "start_at", "end_at")}


def _count(changes: list[dict[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for ch in changes:
        out[ch["kind"]] = out.get(ch["kind"], 0) + 1
    return out


def summary(counts: dict[str, Any]) -> str:
    """One line for the fetch report: what the programme read did."""
    parts = [f"{counts['events']} events: {counts['linked_by_forum']} linked by forum id"]
    if counts["linked_by_title"]:
        parts.append(f"{counts['linked_by_title']} by title")
    if counts["brought_in"]:
        parts.append(f"{counts['brought_in']} brought their paper in")
    if counts["unlinked"]:
        parts.append(f"{counts['unlinked']} name no paper (kept as events)")
    line = ", ".join(parts)
    if counts["changes"]:
        line += "; changed since the last read: " + ", ".join(f"{n} {k}" for k, n in sorted(counts["changes"].items()))
        if counts["readers_touched"]:
            line += " (on the agenda of " + ", ".join(counts["readers_touched"]) + ")"
    return line
