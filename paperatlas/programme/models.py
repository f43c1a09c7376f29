"""The shapes of the programme room; each has the one `to_dict()` that the CLI `--json`, the web
`.json` twins and the MCP tools all print."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass
class Event:
    """One presentation of a paper: when (the conference's local time, its offset kept), where."""

    event_id: str
    feed: str
    paper_id: str
    name: str
    type: str
    session: str
    session_id: str
    start: str  # ISO 8601 with offset ("2025-12-05T16:30:00-08:00"); '' when the feed gives no time
    end: str
    room: str = ""
    poster_position: str = ""
    poster_number: int | None = None
    url: str = ""
    paper_url: str = ""
    start_utc: str = ""
    end_utc: str = ""
    authors: list[dict[str, str]] = field(default_factory=list)

    @classmethod
    def from_row(cls, r: dict[str, Any]) -> Event:
        return cls(
            r["event_id"],
            r["feed"],
            r["paper_id"],
            r["name"],
            r["type"],
            r["session"],
            r["session_id"],
            r["start_at"],
            r["end_at"],
            r["room"],
            r["poster_position"],
            r["poster_number"],
            r["url"],
            r["paper_url"],
            r["start_utc"],
            r["end_utc"],
            list(r.get("authors") or []),
        )

    @property
    def timezone(self) -> str:
        """The offset of the conference's local time ("-08:00"), '' without a time."""
        return self.start[19:] if len(self.start) > 19 else ""

    @property
    def timed(self) -> bool:
        return bool(self.start_utc)

    def start_dt(self) -> datetime | None:
        return datetime.fromisoformat(self.start) if self.start else None

    def end_dt(self) -> datetime | None:
        return datetime.fromisoformat(self.end) if self.end else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "start": self.start,
            "end": self.end,
            "timezone": self.timezone,
            "day": self.start[:10],
            "room": self.room,
            "poster_position": self.poster_position,
            "type": self.type,
            "event_id": self.event_id,
            "session_id": self.session_id,
            "feed": self.feed,
            "url": self.url,
        }


def event_parts(e: dict[str, Any]) -> tuple[str, str, str, str]:
    """(type, session, when, place) of an event (`Event.to_dict()`), the time in the conference's
    local time: ("poster", "San Diego Poster Session 6", "2025-12-05 16:30–19:30 (UTC-08:00)",
    "Exhibit Hall C,D,E #2504")."""
    start, end = str(e.get("start") or ""), str(e.get("end") or "")
    when = ""
    if start:
        when = f"{start[:10]} {start[11:16]}"
        if end:
            when += "–" + (end[11:16] if end[:10] == start[:10] else f"{end[:10]} {end[11:16]}")
        if e.get("timezone"):
            when += f" (UTC{e['timezone']})"
    place = " ".join(x for x in (str(e.get("room") or ""), str(e.get("poster_position") or "")) if x)
    return str(e.get("type") or ""), str(e.get("session") or ""), when, place


def event_text(e: dict[str, Any], type_label: Any = str) -> str:
    """An event in one line: "Poster · San Diego Poster Session 6 · 2025-12-05 16:30–19:30 (UTC-08:00)
    · Exhibit Hall C,D,E #2504". `type_label` words the type (the web passes its translation)."""
    kind, session, when, place = event_parts(e)
    return " · ".join(x for x in (type_label(kind).capitalize() if kind else "", session, when, place) if x)


@dataclass
class SessionInfo:
    """A session of the programme: its events share a name (and so a hall and a time)."""

    session_id: str
    session: str
    feed: str
    type: str
    start: str
    end: str
    rooms: list[str]
    events: int
    day: str = ""  # the local date (YYYY-MM-DD) it starts on

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "session": self.session,
            "feed": self.feed,
            "type": self.type,
            "start": self.start,
            "end": self.end,
            "timezone": self.start[19:] if len(self.start) > 19 else "",
            "day": self.day,
            "rooms": self.rooms,
            "events": self.events,
        }


@dataclass
class AgendaItem:
    """A paper on a reader's agenda at one of its events, and why it is there."""

    paper_id: str
    title: str
    event: Event
    why: list[str]
    score: float = 0.0
    must_see: bool = False  # liked or tagged (recommendations are not)

    def to_dict(self) -> dict[str, Any]:
        e = self.event
        return {
            "paper_id": self.paper_id,
            "title": self.title,
            "type": e.type,
            "poster_position": e.poster_position,
            "start": e.start,
            "end": e.end,
            "room": e.room,
            "event_id": e.event_id,
            "url": e.url,
            "why": self.why,
            "must_see": self.must_see,
            "score": round(self.score, 4),
        }


@dataclass
class AgendaSession:
    info: SessionInfo
    items: list[AgendaItem]

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.info.to_dict(),
            "papers": [i.paper_id for i in self.items],
            "items": [i.to_dict() for i in self.items],
        }


@dataclass
class Clash:
    """Two things on the agenda at once: two starred orals, or a starred oral and a planned poster session."""

    kind: str  # "orals" | "oral-poster"
    a: AgendaItem
    b: AgendaItem | AgendaSession

    def to_dict(self) -> dict[str, Any]:
        def side(x: AgendaItem | AgendaSession) -> dict[str, Any]:
            if isinstance(x, AgendaItem):
                return {
                    "paper_id": x.paper_id,
                    "title": x.title,
                    "event_id": x.event.event_id,
                    "session": x.event.session,
                    "start": x.event.start,
                    "end": x.event.end,
                }
            return {
                "session_id": x.info.session_id,
                "session": x.info.session,
                "start": x.info.start,
                "end": x.info.end,
                "papers": [i.paper_id for i in x.items],
            }

        return {"kind": self.kind, "a": side(self.a), "b": side(self.b)}


@dataclass
class Agenda:
    """A reader's conference: sessions in time order, each with its papers in poster-number order,
    the clashes, and the papers whose place is known but not their time."""

    reader: str
    sessions: list[AgendaSession]
    clashes: list[Clash] = field(default_factory=list)
    unscheduled: list[dict[str, Any]] = field(default_factory=list)
    timezone: str = ""  # the reader's timezone when asked for (times are then shown in it)
    notes: list[str] = field(default_factory=list)

    @property
    def items(self) -> list[AgendaItem]:
        return [i for s in self.sessions for i in s.items]

    def days(self) -> list[tuple[str, list[AgendaSession]]]:
        out: dict[str, list[AgendaSession]] = {}
        for s in self.sessions:
            out.setdefault(s.info.day, []).append(s)
        return list(out.items())

    def to_dict(self) -> dict[str, Any]:
        return {
            "reader": self.reader,
            "timezone": self.timezone,
            "sessions": [s.to_dict() for s in self.sessions],
            "clashes": [c.to_dict() for c in self.clashes],
            "unscheduled": self.unscheduled,
            "counts": {
                "sessions": len(self.sessions),
                "items": len(self.items),
                "clashes": len(self.clashes),
                "unscheduled": len(self.unscheduled),
            },
            "notes": self.notes,
        }
