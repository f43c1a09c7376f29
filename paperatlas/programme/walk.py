"""The poster walk: for one session and a time budget, which posters to visit and in what order.

Posters with adjacent numbers stand next to each other, so a walk goes through the hall in number
order and its cost is the time at the posters plus the distance walked: `per_poster` minutes at each
poster and `walk_per_100` minutes per 100 poster numbers walked. The planner chooses the posters
that give the most interest for the time (must-sees, i.e. liked or tagged papers, before anything
else), by trying every stretch of the hall [lo, hi] and keeping the best posters inside it that the
time left after walking that stretch allows. Two baselines for comparison (bench walk):

- `topk`: the best posters by interest, as many as the budget holds without walking, then visited
  in number order until the time runs out;
- `score_order`: visit posters best first, walking back and forth, until the time runs out.

All three are pure functions of (posters, budget); nothing here touches a library.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

MUST_SEE = 1000.0  # a must-see outweighs any number of ordinary posters (interest is at most 1 each)
MAX_CANDIDATES = 400  # the walk considers the most interesting posters of a session, not all 1,000+


@dataclass
class Poster:
    paper_id: str
    number: int  # the poster number; the hall's order
    interest: float  # >= 0; 0 = nothing for this reader
    must_see: bool = False
    title: str = ""
    position: str = ""  # as written ("#2504")

    @property
    def weight(self) -> float:
        return self.interest + (MUST_SEE if self.must_see else 0.0)


@dataclass
class Stop:
    poster: Poster
    arrive: float  # minutes after the start of the walk

    def to_dict(self) -> dict[str, Any]:
        p = self.poster
        return {
            "paper_id": p.paper_id,
            "title": p.title,
            "poster_position": p.position,
            "number": p.number,
            "interest": round(p.interest, 4),
            "must_see": p.must_see,
            "arrive_min": round(self.arrive, 1),
        }


@dataclass
class Walk:
    """A planned walk: its stops in visiting order and what it collects."""

    method: str
    minutes: float
    per_poster: float
    walk_per_100: float
    stops: list[Stop] = field(default_factory=list)
    missed_must_see: list[Poster] = field(default_factory=list)
    session_id: str = ""
    done: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def used(self) -> float:
        return self.stops[-1].arrive + self.per_poster if self.stops else 0.0

    @property
    def interest(self) -> float:
        return sum(s.poster.interest for s in self.stops)

    @property
    def per_minute(self) -> float:
        return self.interest / self.minutes if self.minutes > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "method": self.method,
            "minutes": self.minutes,
            "per_poster": self.per_poster,
            "walk_per_100": self.walk_per_100,
            "stops": [s.to_dict() for s in self.stops],
            "used_min": round(self.used, 1),
            "interest": round(self.interest, 4),
            "interest_per_min": round(self.per_minute, 4),
            "must_see_visited": sum(1 for s in self.stops if s.poster.must_see),
            "missed_must_see": [p.paper_id for p in self.missed_must_see],
            "done": self.done,
            "skipped": self.skipped,
        }


def _schedule(
    order: Sequence[Poster], minutes: float, per_poster: float, walk_per_100: float, start: int | None
) -> list[Stop]:
    """Visit `order` one after another from `start` (None: at the first poster) until time runs out."""
    stops: list[Stop] = []
    t = 0.0
    here = start if start is not None else (order[0].number if order else 0)
    for p in order:
        arrive = t + abs(p.number - here) * walk_per_100 / 100.0
        if arrive + per_poster > minutes + 1e-9:
            break
        stops.append(Stop(p, arrive))
        t, here = arrive + per_poster, p.number
    return stops


def _walk(
    method: str, posters: Sequence[Poster], minutes: float, per_poster: float, walk_per_100: float, stops: list[Stop]
) -> Walk:
    seen = {s.poster.paper_id for s in stops}
    return Walk(
        method, minutes, per_poster, walk_per_100, stops, [p for p in posters if p.must_see and p.paper_id not in seen]
    )


def plan(
    posters: Sequence[Poster],
    minutes: float,
    per_poster: float = 5.0,
    walk_per_100: float = 1.0,
    start: int | None = None,
) -> Walk:
    """The walk that collects the most interest within `minutes` (must-sees first), in number order.

    `start`: the poster number the walker stands at (a re-plan after some posters); None: they
    enter the hall wherever the walk begins."""
    if minutes <= 0 or per_poster <= 0:
        return Walk("plan", minutes, per_poster, walk_per_100)
    pool = sorted((p for p in posters if p.weight > 0), key=lambda p: -p.weight)[:MAX_CANDIDATES]
    pool.sort(key=lambda p: (p.number, -p.weight))
    best: tuple[float, int, int, int] = (0.0, 0, -1, 0)  # (weight, lo, hi, k)
    rate = walk_per_100 / 100.0
    for i, lo in enumerate(pool):
        entry = abs(lo.number - start) * rate if start is not None else 0.0
        weights: list[float] = []  # the window's weights, ascending
        for j in range(i, len(pool)):
            hi = pool[j]
            left = minutes - entry - (hi.number - lo.number) * rate
            k = int((left + 1e-9) // per_poster)
            if k <= 0:
                break
            bisect.insort(weights, hi.weight)
            total = sum(weights[-k:])
            if total > best[0] + 1e-12:
                best = (total, i, j, k)
    if best[2] < 0:
        return _walk("plan", posters, minutes, per_poster, walk_per_100, [])
    _, i, j, k = best
    window = pool[i : j + 1]
    chosen = sorted(sorted(window, key=lambda p: -p.weight)[:k], key=lambda p: p.number)
    stops = _schedule(chosen, minutes, per_poster, walk_per_100, start)
    return _walk("plan", posters, minutes, per_poster, walk_per_100, stops)


def topk(
    posters: Sequence[Poster],
    minutes: float,
    per_poster: float = 5.0,
    walk_per_100: float = 1.0,
    start: int | None = None,
) -> Walk:
    """Baseline: the top posters by interest that fit without walking, visited in number order."""
    k = int((minutes + 1e-9) // per_poster) if per_poster > 0 else 0
    chosen = sorted(sorted((p for p in posters if p.weight > 0), key=lambda p: -p.weight)[:k], key=lambda p: p.number)
    return _walk(
        "topk", posters, minutes, per_poster, walk_per_100, _schedule(chosen, minutes, per_poster, walk_per_100, start)
    )


def score_order(
    posters: Sequence[Poster],
    minutes: float,
    per_poster: float = 5.0,
    walk_per_100: float = 1.0,
    start: int | None = None,
) -> Walk:
    """Baseline: best first, walking back and forth, until the time runs out."""
    order = sorted((p for p in posters if p.weight > 0), key=lambda p: -p.weight)
    return _walk(
        "score_order",
        posters,
        minutes,
        per_poster,
        walk_per_100,
        _schedule(order, minutes, per_poster, walk_per_100, start),
    )


METHODS = {"plan": plan, "topk": topk, "score_order": score_order}
