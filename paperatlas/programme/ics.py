"""An agenda as an RFC 5545 calendar: one VEVENT per item, times in UTC (the instant is exact
whatever the offset was), LOCATION = room + poster position, a UID that stays the same for the same
event so a re-export updates the calendar instead of duplicating it, and a SEQUENCE that grows
each time the programme moved or re-timed the event."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone

from .models import Agenda

PRODID = "-//paperatlas//conference agenda//EN"


def escape(text: str) -> str:
    """TEXT value escaping (RFC 5545 3.3.11)."""
    return (
        text.replace("\\", "\\\\")
        .replace(";", "\\;")
        .replace(",", "\\,")
        .replace("\r\n", "\\n")
        .replace("\n", "\\n")
        .replace("\r", "\\n")
    )


def fold(line: str) -> str:
    """Lines longer than 75 octets continue on the next line after a space (RFC 5545 3.1),
    never splitting a UTF-8 character."""
    out: list[str] = []
    cur, size = "", 0
    for ch in line:
        n = len(ch.encode("utf-8"))
        if size + n > (75 if not out else 74):
            out.append(cur)
            cur, size = "", 0
        cur += ch
        size += n
    out.append(cur)
    return "\r\n ".join(out)


def _utc(iso: str) -> str:
    return datetime.fromisoformat(iso).astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def uid(feed: str, event_id: str) -> str:
    return f"{feed.replace(' ', '-')}-{event_id}@paperatlas"


def to_ics(
    agenda: Agenda,
    sequences: Mapping[tuple[str, str], int] | None = None,
    base_url: str = "",
    now: datetime | None = None,
) -> str:
    """The agenda's timed items as a VCALENDAR (CRLF line ends)."""
    stamp = (now or datetime.now(timezone.utc)).astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    lines = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        f"PRODID:{PRODID}",
        "CALSCALE:GREGORIAN",
        "METHOD:PUBLISH",
        f"X-WR-CALNAME:{escape('paperatlas agenda: ' + agenda.reader)}",
    ]
    for item in agenda.items:
        e = item.event
        if not e.start:
            continue
        where = ", ".join(x for x in (e.room, e.poster_position) if x)
        kind = e.type.capitalize() if e.type else "Event"
        label = f"[{kind}{' ' + e.poster_position if e.poster_position else ''}] "
        desc = "\n".join(x for x in (e.session, "; ".join(item.why), e.name) if x)
        url = e.url if e.url.startswith("http") else (base_url.rstrip("/") + e.url if e.url and base_url else "")
        url = url or e.paper_url
        lines += [
            "BEGIN:VEVENT",
            f"UID:{uid(e.feed, e.event_id)}",
            f"DTSTAMP:{stamp}",
            f"SEQUENCE:{(sequences or {}).get((e.feed, e.event_id), 0)}",
            f"DTSTART:{_utc(e.start)}",
            f"DTEND:{_utc(e.end or e.start)}",
            f"SUMMARY:{escape(label + item.title)}",
        ]
        if where:
            lines.append(f"LOCATION:{escape(where)}")
        if url:
            lines.append(f"URL:{url}")
        if desc:
            lines.append(f"DESCRIPTION:{escape(desc)}")
        lines.append(f"CATEGORIES:{escape(kind)}")
        lines.append("END:VEVENT")
    lines.append("END:VCALENDAR")
    return "".join(fold(line) + "\r\n" for line in lines)
