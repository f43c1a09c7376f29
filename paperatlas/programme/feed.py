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

from ..errors import IngestError, PaperatlasError
from ..ingest.formats import limit
from ..models import BadRecord
from ..safety import safe_url, strip_controls

# presentation types, lowercase, as `extra.presentation` stores them
TYPES = ("oral", "spotlight", "poster", "highlight")
MAX_EVENTS = 200_000  # NeurIPS 2025 had 5,990; a feed 30x that is not a programme
_FORUM = re.compile(r"openreview\.net/(?:forum|pdf)\?(?:.*&)?id=([A-Za-z0-9_\-]+)")
# at most 9 digits: a poster number is a hall's count, and int() of thousands of digits is refused by Python
_NUMBER = re.compile(r"(?<!\d)(\d{1,9})(?!\d)")
_SURROGATE = re.compile(r"[\ud800-\udfff]")

# A feed is written by whoever runs the site (or whoever sits between it and us), so its records get the
# bounds of a paper list's (ingest/formats.py check_row) and a few of their own: the ids become paper ids
# and calendar UIDs, the times become UTC instants, the positions become numbers.
SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@+~#=-]*$")  # a paper key: it becomes part of a paper id
MAX_ID = 200  # an event, session or paper id
MAX_NAME = 2_000  # a title (real ones are under 300 characters)
MAX_SHORT = 1_000  # a session, room, decision, topic, author, institution, keyword
MAX_POSITION = 64  # a poster position ("Exhibit Hall C,D,E #2504")
MAX_AUTHORS = 5_000  # the longest real author lists have a few thousand names
MAX_KEYWORDS = 500
YEARS = (1900, 2200)  # a programme's times outside these years are a broken or hostile feed


class FeedError(PaperatlasError):
    """The feed as a whole cannot be read (nothing from it was stored)."""


class FeedRecordError(IngestError):
    """One record of a feed is out of bounds; nothing from the feed was stored (exit 3, as a list's)."""

    def __init__(self, where: str, record: str, message: str, fix: str) -> None:
        super().__init__([BadRecord(where, record, message, fix)])


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
    return int(m.group(1)) if m else None  # 9 digits at most (_NUMBER): never a huge int


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


def clean(v: str) -> str:
    """`v` without control characters (ESC, NUL, C1 ...) and with lone surrogates replaced, as a list's fields."""
    v = strip_controls(v)
    return _SURROGATE.sub("\ufffd", v) if _SURROGATE.search(v) else v


def _text(v: Any) -> str:
    if v is None:
        return ""
    return " ".join(clean(html.unescape(str(v))).split())


class Bounds:
    """The checks on one record of a feed: each refusal names the file, the record and the fix."""

    def __init__(self, where: str, record: str) -> None:
        self.where, self.record = where, record

    def fail(self, message: str, fix: str = "") -> FeedRecordError:
        return FeedRecordError(
            self.where, self.record, message, fix or "correct or remove this record of the feed and read it again"
        )

    def text(self, name: str, v: Any, cap: int = MAX_SHORT) -> str:
        """One line of text: markup entities decoded, controls removed, whitespace collapsed, length bounded."""
        if isinstance(v, (dict, list)):
            raise self.fail(f"`{name}` is a {type(v).__name__}, not text")
        t = _text(v)
        if len(t) > cap:
            raise self.fail(f"`{name}` is longer than {cap:,} characters ({len(t):,})")
        return t

    def long_text(self, name: str, v: Any) -> str:
        """An abstract: line breaks kept, controls removed, bounded as a list's field."""
        if isinstance(v, (dict, list)):
            raise self.fail(f"`{name}` is a {type(v).__name__}, not text")
        t = clean(str(v or "")).strip()
        cap = limit("PAPERATLAS_MAX_FIELD_CHARS")
        if len(t) > cap:
            raise self.fail(
                f"`{name}` is longer than {cap:,} characters",
                "check the record; raise the limit with PAPERATLAS_MAX_FIELD_CHARS=N if it is really that long",
            )
        return t

    def ident(self, name: str, v: Any, strict: bool = False) -> str:
        """An id: at most MAX_ID characters, no control characters or line breaks (`strict`: only
        letters, digits and . _ : / @ + ~ # = -, since it becomes part of a paper id)."""
        if isinstance(v, (dict, list, float)) or isinstance(v, bool):
            raise self.fail(f"`{name}` is a {type(v).__name__}, not an id")
        t = str(v if v is not None else "").strip()
        bad = strip_controls(t) != t or any(c in t for c in "\r\n\t\u2028\u2029") or _SURROGATE.search(t)
        if bad or len(t) > MAX_ID or (strict and t and not SAFE_ID.match(t)):
            what = "letters, digits and . _ : / @ + ~ # = -" if strict else "printable characters on one line"
            raise self.fail(
                f"`{name}` {t[:40]!r}{'...' if len(t) > 40 else ''} is not an id: {what}, at most {MAX_ID}",
                "an id names a record; fix this one in the feed",
            )
        return t

    def items(self, name: str, v: Any, cap: int) -> list[Any]:
        if v is None or v == "":
            return []
        if not isinstance(v, list):
            raise self.fail(f"`{name}` is a {type(v).__name__}, not a list", f"`{name}` holds a list (or is absent)")
        if len(v) > cap:
            raise self.fail(f"`{name}` holds {len(v):,} entries, more than {cap:,}")
        return v

    def position(self, v: Any) -> str:
        t = self.text("poster_position", v, MAX_POSITION)
        if re.search(r"\d{10}", t):
            raise self.fail(f"`poster_position` {t[:20]!r}... holds a number of more than 9 digits")
        return t

    def time(self, name: str, dt: datetime | None) -> datetime | None:
        if dt is not None and not YEARS[0] <= dt.year <= YEARS[1]:
            raise self.fail(
                f"`{name}` is in the year {dt.year}, outside {YEARS[0]}-{YEARS[1]}",
                "a programme's times are this century's: fix the time in the feed",
            )
        return dt


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


def span(start: datetime | None, end: datetime | None) -> tuple[datetime | None, datetime | None]:
    """(start, end) as instants, the end never before the start.

    A local time without an offset that a daylight-saving change skips (02:30 on a spring-forward night)
    or repeats (01:30 on a fall-back night) is read as RFC 5545 (3.3.5) reads it: with the offset in force
    before the change (zoneinfo's fold=0). A skipped start can then be the same instant as its end (02:30
    CST is 03:30 CDT); such an event keeps its length on the wall clock instead of shrinking to nothing.
    Without an end, or with one before the start, the event is a point in time, not a guessed length."""
    if start is None:
        return None, None
    if end is None:
        return start, start
    if to_utc(end) <= to_utc(start) and start.tzinfo is end.tzinfo:
        wall = end.replace(tzinfo=None) - start.replace(tzinfo=None)
        if wall > timedelta(0):
            end = (to_utc(start) + wall).astimezone(start.tzinfo)
    return start, end if to_utc(end) >= to_utc(start) else start


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
        raw_id = ev.get("id") if ev.get("id") is not None else ev.get("uid")
        b = Bounds(where, f"event {i + 1}" + (f" (id {str(raw_id)[:40]!r})" if raw_id is not None else ""))
        eid = b.ident("id", raw_id, strict=True)  # it may become part of a paper id (event-ID)
        name = b.text("name", ev.get("name") or ev.get("title"), MAX_NAME)
        if not eid or not name:
            unnamed += 1
            continue
        if eid in seen:
            dupes += 1
            continue
        seen.add(eid)
        zone = b.text("timezone", ev.get("timezone") or tz_name, 100)
        start, why = parse_time(b.text("starttime", ev.get("starttime"), 100), zone)
        end, _ = parse_time(b.text("endtime", ev.get("endtime"), 100), zone)
        start, end = span(b.time("starttime", start), b.time("endtime", end))
        if start is None:
            why_untimed[why] = why_untimed.get(why, 0) + 1
        authors = []
        for a in b.items("authors", ev.get("authors"), MAX_AUTHORS):
            if not isinstance(a, dict):
                raise b.fail(f"an entry of `authors` is a {type(a).__name__}, not an object with `fullname`")
            who = b.text("authors.fullname", a.get("fullname") or a.get("name"))
            if who:
                authors.append(FeedAuthor(who, b.text("authors.institution", a.get("institution"))))
        keywords = []
        for k in b.items("keywords", ev.get("keywords"), MAX_KEYWORDS):
            if not isinstance(k, str):
                raise b.fail(f"an entry of `keywords` is a {type(k).__name__}, not text")
            if b.text("keywords", k):
                keywords.append(b.text("keywords", k))
        paper_url = b.text("paper_url", ev.get("paper_url"), 2_000)
        url = b.text("virtualsite_url", ev.get("virtualsite_url"), 2_000)
        feed.events.append(
            FeedEvent(
                event_id=eid,
                name=name,
                type=b.text("eventtype", event_type(ev), 100),
                session=b.text("session", ev.get("session")),
                start=start,
                end=end,
                room=b.text("room_name", ev.get("room_name")),
                poster_position=b.position(ev.get("poster_position")),
                forum=forum_id(paper_url),
                # a page of the site is a path or an http(s) URL; a paper's link only the latter
                paper_url=safe_url(paper_url),
                url=url if url.startswith("/") and not url.startswith("//") else safe_url(url),
                abstract=b.long_text("abstract", ev.get("abstract")),
                authors=authors,
                topic=b.text("topic", ev.get("topic")),
                keywords=keywords,
                decision=b.text("decision", ev.get("decision")),
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
