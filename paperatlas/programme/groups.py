"""A reading group at a poster session, and the people a reader should meet.

`split`: the session's posters most relevant to the group (the sum of the members' interest) are
shared out by a snake draft (each member in turn takes the poster they care most about among those
left, the order reversing every round), so nobody covers a poster twice and no member is left with
only the others' leftovers; each member's share is then walked in hall order within their time.

`people`: the authors of the papers on a reader's agenda, each with where and when they present.
Pure functions over plain values; the Programme gathers them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .walk import Poster, Walk, plan


@dataclass
class Share:
    reader: str
    walk: Walk
    interest: float  # the member's own interest in what they were given

    def to_dict(self) -> dict[str, Any]:
        return {"reader": self.reader, "interest": round(self.interest, 4), **self.walk.to_dict()}


@dataclass
class Split:
    session_id: str
    shares: list[Share] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        covered = [s.poster.paper_id for sh in self.shares for s in sh.walk.stops]
        return {
            "session_id": self.session_id,
            "members": [s.to_dict() for s in self.shares],
            "covered": len(covered),
            "overlap": len(covered) - len(set(covered)),
        }


def split(
    session_id: str,
    numbers: Mapping[str, tuple[int, str, str]],
    interest: Mapping[str, Mapping[str, tuple[float, bool]]],
    minutes: float,
    per_poster: float,
    walk_per_100: float,
) -> Split:
    """`numbers`: paper id -> (poster number, title, position); `interest`: member -> paper id ->
    (interest, must-see)."""
    members = list(interest)
    k = max(0, int((minutes + 1e-9) // per_poster))

    def value(m: str, pid: str) -> float:
        v, must = interest[m].get(pid, (0.0, False))
        return v + (1.0 if must else 0.0)

    group = sorted(numbers, key=lambda pid: (-sum(value(m, pid) for m in members), numbers[pid][0]))
    pool = [pid for pid in group[: k * len(members)] if any(value(m, pid) > 0 for m in members)]
    taken: dict[str, list[str]] = {m: [] for m in members}
    order = list(members)
    while pool and any(len(v) < k for v in taken.values()):
        for m in order:
            if not pool or len(taken[m]) >= k:
                continue
            best = max(pool, key=lambda pid: (value(m, pid), -numbers[pid][0]))
            taken[m].append(best)
            pool.remove(best)
        order.reverse()
    out = Split(session_id)
    for m in members:
        posters = [
            Poster(
                pid,
                numbers[pid][0],
                interest[m].get(pid, (0.0, False))[0],
                interest[m].get(pid, (0.0, False))[1],
                numbers[pid][1],
                numbers[pid][2],
            )
            for pid in taken[m]
        ]
        for p in posters:  # what the group gave a member is theirs to see, however little they care
            p.interest = max(p.interest, 1e-6)
        w = plan(posters, minutes, per_poster, walk_per_100)
        w.session_id = session_id
        out.shares.append(Share(m, w, sum(s.poster.interest for s in w.stops)))
    return out


@dataclass
class Person:
    name: str
    institution: str
    papers: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {"author": self.name, "institution": self.institution, "papers": self.papers}


def people(items: Sequence[tuple[str, str, float, Any]], limit: int = 30) -> list[Person]:
    """`items`: (paper id, title, score, Event) of the agenda, best first -> authors to meet, those with
    the most (and best) agenda papers first, each with where and when they present."""
    found: dict[str, Person] = {}
    best: dict[str, float] = {}
    for pid, title, score, e in items:
        for a in e.authors:
            name = " ".join(str(a.get("name") or "").split())
            if not name:
                continue
            p = found.setdefault(name, Person(name, str(a.get("institution") or ""), []))
            if any(x["paper_id"] == pid and x["event_id"] == e.event_id for x in p.papers):
                continue
            p.papers.append(
                {
                    "paper_id": pid,
                    "title": title,
                    "type": e.type,
                    "session": e.session,
                    "start": e.start,
                    "room": e.room,
                    "poster_position": e.poster_position,
                    "event_id": e.event_id,
                }
            )
            best[name] = max(best.get(name, 0.0), score)
    ranked = sorted(found.values(), key=lambda p: (-len({x["paper_id"] for x in p.papers}), -best[p.name], p.name))
    for p in ranked:
        p.papers.sort(key=lambda x: x["start"])
    return ranked[:limit]
