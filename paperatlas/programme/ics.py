"""An agenda as an RFC 5545 calendar: one VEVENT per item, times in UTC (the instant is exact
whatever the offset was), LOCATION = room + poster position, a UID that stays the same for the same
event so a re-export updates the calendar instead of duplicating it, and a SEQUENCE that grows
each time the programme moved or re-timed the event.

Every value comes from a feed that anyone can write, so one writer makes the file: the `icalendar`
package escapes and folds each property value (a line break in a session name stays inside its
DESCRIPTION, never starts an ATTENDEE or a VALARM), URLs pass `safe_url` (no `javascript:`), UIDs
are made of safe characters only."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timezone

from icalendar import Calendar
from icalendar import Event as VEvent
from icalendar import vText

from ..safety import safe_url, strip_controls
from .models import Agenda

PRODID = "-//paperatlas//conference agenda//EN"
_UNSAFE_UID = re.compile(r"[^A-Za-z0-9._~:@-]+")


def _clean(text: str) -> str:
    """A value without control characters; line breaks are kept (the writer escapes them as \\n)."""
    return strip_controls(text or "")


def _utc(iso: str) -> datetime:
    return datetime.fromisoformat(iso).astimezone(timezone.utc)


def uid(feed: str, event_id: str) -> str:
    """`neurips-2025-119718@paperatlas`: a run of anything but letters, digits and . _ ~ : @ - becomes one `-`,
    so the same event always gets the same UID and no UID carries a line break or a `;`."""
    return f"{_UNSAFE_UID.sub('-', feed).strip('-')}-{_UNSAFE_UID.sub('-', event_id).strip('-')}@paperatlas"


def to_ics(
    agenda: Agenda,
    sequences: Mapping[tuple[str, str], int] | None = None,
    base_url: str = "",
    now: datetime | None = None,
) -> str:
    """The agenda's timed items as a VCALENDAR (CRLF line ends)."""
    stamp = (now or datetime.now(timezone.utc)).astimezone(timezone.utc).replace(microsecond=0)
    cal = Calendar()
    cal.add("prodid", PRODID)
    cal.add("version", "2.0")
    cal.add("calscale", "GREGORIAN")
    cal.add("method", "PUBLISH")
    # an X- property has no declared type, so icalendar would write it raw: it is given as TEXT to be escaped
    cal.add("x-wr-calname", vText(_clean("paperatlas agenda: " + agenda.reader)))
    for item in agenda.items:
        e = item.event
        if not e.start:
            continue
        where = ", ".join(x for x in (e.room, e.poster_position) if x)
        kind = e.type.capitalize() if e.type else "Event"
        label = f"[{kind}{' ' + e.poster_position if e.poster_position else ''}] "
        desc = "\n".join(x for x in (e.session, "; ".join(item.why), e.name) if x)
        page = e.url if e.url.startswith("http") else (base_url.rstrip("/") + e.url if e.url and base_url else "")
        url = safe_url(page) or safe_url(e.paper_url)
        ev = VEvent()
        ev.add("uid", uid(e.feed, e.event_id))
        ev.add("dtstamp", stamp)
        ev.add("sequence", int((sequences or {}).get((e.feed, e.event_id), 0)))
        start = _utc(e.start)
        ev.add("dtstart", start)
        ev.add("dtend", max(_utc(e.end), start) if e.end else start)
        ev.add("summary", _clean(label + item.title))
        if where:
            ev.add("location", _clean(where))
        if url:
            ev.add("url", url)
        if desc:
            ev.add("description", _clean(desc))
        ev.add("categories", [_clean(kind)])
        cal.add_component(ev)
    return cal.to_ical().decode("utf-8")
