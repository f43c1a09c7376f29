"""Read a conference's programme from the virtual-site feed that NeurIPS, ICML, ICLR (and MLSys,
ECCV, ...) publish at `/static/virtual/data/{conf}-{year}-orals-posters.json`.

The feed is `{"count": N, "results": [event, ...]}`; each event names its paper (`name`,
`abstract`, `authors` with their `institution`, `paper_url` = the OpenReview forum), its
presentation (`eventtype`, `decision`), its `session`, `room_name`, `poster_position` and its
times with an offset ("2025-12-05T16:30:00-08:00"). Parsing is pure: it returns events and notes
about what could not be used, and never touches a library.
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from ..errors import PaperatlasError

# presentation types, lowercase, as `extra.presentation` stores them
TYPES = ("oral", "spotlight", "poster", "highlight")
MAX_EVENTS = 200_000  # NeurIPS 2025 had 5,990; a feed 30x that is not a programme
_FORUM = re.compile(r"openreview\.net/(?:forum|pdf)\?(?:.*&)?id=([A-Za-z0-9_\-]+)")
_NUMBER = re.compile(r"(\d+)")


class FeedError(PaperatlasError):
    """The feed as a whole cannot be read (nothing from it was stored)."""


@dataclass
class FeedAuthor:
    name: str
    institution: str = ""


@dataclass
class FeedEvent:
    """One event of the feed: a paper presented once (a paper may have several: poster + oral)."""

    event_id: str
    name: str
    type: str  # oral | spotlight | poster | highlight | ... (lowercase; "" when the feed does not say)
    session: str = ""
    start: datetime | None = None  # aware (the feed's offset), or None when the feed gives no usable time
    end: datetime | None = None
    room: str = ""
    poster_position: str = ""
    forum: str = ""  # the OpenReview forum id from paper_url
    paper_url: str = ""
    url: str = ""  # the event's page on the virtual site
    abstract: str = ""
    authors: list[FeedAuthor] = field(default_factory=list)
    topic: str = ""
    keywords: list[str] = field(default_factory=list)
    decision: str = ""
    # the paper's own id in a feed that names its papers apart from its events (Mini-Conf's UID)
    paper_key: str = ""

    @property
    def timezone(self) -> str:
        """The conference's offset as the feed wrote it ("-08:00"), '' without a time."""
        return offset_text(self.start) if self.start else ""

    @property
    def poster_number(self) -> int | None:
        return poster_number(self.poster_position)


@dataclass
class Feed:
    """A parsed feed: its events and what the reader should know about the rest."""

    events: list[FeedEvent]
    declared: int | None = None  # the feed's own `count`
    notes: list[str] = field(default_factory=list)
    conf: str = ""  # the conference, when the feed itself says (Mini-Conf's `event` column)


def offset_text(dt: datetime) -> str:
    off = dt.utcoffset() or timedelta(0)
    sign = "-" if off < timedelta(0) else "+"
    minutes = abs(int(off.total_seconds())) // 60
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def poster_number(position: str) -> int | None:
    """The number in a poster position ("#2504" -> 2504, "A-12" -> 12), None when there is none."""
    m = _NUMBER.search(position or "")
    return int(m.group(1)) if m else None


def forum_id(url: str) -> str:
    m = _FORUM.search(url or "")
    return m.group(1) if m else ""


def event_type(ev: dict[str, Any]) -> str:
    """oral / spotlight / poster ... from `eventtype`, else from `decision` ("Accept (spotlight)")."""
    for raw in (ev.get("eventtype"), ev.get("decision"), ev.get("event_type")):
        text = str(raw or "").lower()
        for t in TYPES:
            if t in text:
                return t
    return str(ev.get("eventtype") or "").strip().lower()


def _text(v: Any) -> str:
    if v is None:
        return ""
    return " ".join(html.unescape(str(v)).split())


def parse_time(value: Any, tz_name: str = "") -> tuple[datetime | None, str]:
    """An ISO time with its offset -> (aware datetime, ''), or (None, why it cannot be used).

    A time without an offset is placed in `tz_name` (an IANA name such as America/Los_Angeles)
    when the feed names one; otherwise it is not guessed."""
    text = str(value or "").strip()
    if not text:
        return None, "with no time"
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None, "with a time that is not ISO 8601"
    if dt.tzinfo is None:
        if not tz_name:
            return None, "with a time without an offset"
        try:
            from zoneinfo import ZoneInfo

            dt = dt.replace(tzinfo=ZoneInfo(tz_name))
        except (KeyError, ValueError, OSError):  # ZoneInfoNotFoundError is a KeyError
            return None, f"in the unknown timezone {tz_name!r}"
    return dt, ""


def slug(text: str) -> str:
    s = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", "-", s).strip("-")


def parse_feed(body: bytes | str, where: str = "the feed") -> Feed:
    """The events of a feed body. Raises FeedError when the body is not such a feed at all;
    events that cannot be used are left out with a note that says how many and why."""
    try:
        data = json.loads(body.decode("utf-8") if isinstance(body, bytes) else body)
    except UnicodeDecodeError as e:
        raise FeedError(
            f"{where} is not UTF-8 (byte {e.start})",
            "fetch it again; if it persists, check --base-url points at the virtual site",
        ) from None
    except json.JSONDecodeError as e:
        raise FeedError(
            f"{where} is not valid JSON ({e.msg} at line {e.lineno}, column {e.colno}): it may have been cut off",
            "fetch it again (a re-run starts over)",
        ) from None
    if isinstance(data, list):
        results, declared = data, None
    elif isinstance(data, dict) and isinstance(data.get("results"), list):
        results, declared = data["results"], data.get("count")
    else:
        raise FeedError(
            f"{where} is not a virtual-site programme: no `results` list",
            'expected {"count": N, "results": [event, ...]} as /static/virtual/data/'
            "{conf}-{year}-orals-posters.json serves it",
        )
    if len(results) > MAX_EVENTS:
        raise FeedError(
            f"{where} holds {len(results):,} events, more than the {MAX_EVENTS:,} a programme may have",
            "check the URL: this is not one conference's feed",
        )
    tz_name = str(data.get("timezone") or "") if isinstance(data, dict) else ""
    feed = Feed([], declared if isinstance(declared, int) else None)
    why_untimed: dict[str, int] = {}
    unnamed = 0
    seen: set[str] = set()
    dupes = 0
    for i, ev in enumerate(results):
        if not isinstance(ev, dict):
            unnamed += 1
            continue
        eid = _text(ev.get("id") if ev.get("id") is not None else ev.get("uid"))
        name = _text(ev.get("name") or ev.get("title"))
        if not eid or not name:
            unnamed += 1
            continue
        if eid in seen:
            dupes += 1
            continue
        seen.add(eid)
        start, why = parse_time(ev.get("starttime"), str(ev.get("timezone") or tz_name))
        end, _ = parse_time(ev.get("endtime"), str(ev.get("timezone") or tz_name))
        if start is None:
            why_untimed[why] = why_untimed.get(why, 0) + 1
            end = None
        elif end is None or end < start:
            end = start  # a start without a usable end: a point in time rather than a guessed length
        authors = [
            FeedAuthor(_text(a.get("fullname") or a.get("name")), _text(a.get("institution")))
            for a in (ev.get("authors") or [])
            if isinstance(a, dict) and (a.get("fullname") or a.get("name"))
        ]
        url = _text(ev.get("virtualsite_url"))
        feed.events.append(
            FeedEvent(
                event_id=eid,
                name=name,
                type=event_type(ev),
                session=_text(ev.get("session")),
                start=start,
                end=end,
                room=_text(ev.get("room_name")),
                poster_position=_text(ev.get("poster_position")),
                forum=forum_id(str(ev.get("paper_url") or "")),
                paper_url=_text(ev.get("paper_url")),
                url=url,
                abstract=str(ev.get("abstract") or "").strip(),
                authors=authors,
                topic=_text(ev.get("topic")),
                keywords=[_text(k) for k in (ev.get("keywords") or []) if _text(k)],
                decision=_text(ev.get("decision")),
            )
        )
    if unnamed:
        feed.notes.append(f"{unnamed} event{'s' if unnamed != 1 else ''} name no paper (no id or no title): left out")
    if dupes:
        feed.notes.append(f"{dupes} event{'s' if dupes != 1 else ''} repeat an event id already read: left out")
    untimed = sum(why_untimed.values())
    if untimed:
        reasons = ", ".join(f"{n} {w}" for w, n in sorted(why_untimed.items()))
        feed.notes.append(
            f"{untimed} event{'s' if untimed != 1 else ''} kept without a time ({reasons}):"
            " they show their room and poster but stay off the calendar"
        )
    return feed


def to_utc(dt: datetime) -> datetime:
    return dt.astimezone(timezone.utc)
