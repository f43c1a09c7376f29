"""The conference programme: events, sessions, a reader's agenda (and its .ics), the poster walk.

`lib.programme` is a `Programme`; the events come from `paperatlas fetch virtual CONF YEAR`
(sources/virtual.py) and live in the store (store/programme.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..contrib import Filter
from ..errors import NotFound, PaperatlasError
from ..i18n import N_, gettext
from ..models import IngestReport
from .groups import Person, Split, people, split
from .models import Agenda, AgendaItem, AgendaSession, Clash, Event, SessionInfo, event_parts
from .walk import METHODS, Poster, Walk

if TYPE_CHECKING:  # the capability sees the library through its core protocol only
    from ..core import LibraryCore
    from ..ingest.pipeline import PreviewFile
    from ..readers import Readers
    from ..recommend import Recommend

__all__ = ["Agenda", "AgendaItem", "AgendaSession", "Clash", "Event", "Programme", "SessionInfo", "Walk"]

FEED_NAME = re.compile(r"^([a-z][a-z0-9]*)-(\d{4})-orals-posters\.json$", re.IGNORECASE)
RECOMMENDED = 20  # strongly recommended papers an agenda takes (besides the liked and tagged ones)
_ORALS = ("oral", "spotlight", "highlight")


def reader_tz(name: str | None) -> tzinfo | None:
    """The reader's timezone by IANA name; a clear error for an unknown one."""
    if not name:
        return None
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(name)
    except (KeyError, ValueError, OSError):
        raise PaperatlasError(
            gettext("unknown timezone {tz!r}", tz=name),
            gettext("give an IANA name such as Asia/Shanghai or America/Los_Angeles"),
        ) from None


def _local(iso: str, tz: tzinfo | None) -> str:
    if not iso or tz is None:
        return iso
    return datetime.fromisoformat(iso).astimezone(tz).isoformat()


def _overlap(a: Event, b_start: str, b_end: str) -> bool:
    return bool(a.start_utc and b_start) and a.start_utc < b_end and b_start < a.end_utc


class Programme:
    """A conference's programme, as this library holds it."""

    def __init__(self, lib: LibraryCore, readers: Readers, recommend: Recommend) -> None:
        self.lib = lib
        self._readers = readers
        self._recommender = recommend

    @property
    def store(self) -> Any:
        return self.lib.store

    # -- a saved feed given to `ingest` (the library's file-reader hook) ----------------------
    @staticmethod
    def claims_file(path: str | Path, format: str | None) -> bool:
        """A conference's programme feed is events, not a paper list: this room reads it (unless the
        user named a list format for the files)."""
        return format is None and is_feed_file(path)

    @staticmethod
    def preview_file(path: str | Path) -> PreviewFile:
        from ..ingest.pipeline import PreviewFile  # the ingest pipeline loads only when files are read

        # a feed holds events, which an ingest links to papers: nothing to list here
        return PreviewFile(str(path), "programme feed", "a programme feed (its events are linked to papers on ingest)")

    def ingest_files(self, paths: Sequence[str | Path], skip_bad: bool = False) -> IngestReport:
        # a feed is read whole or not at all: skip_bad has nothing to skip in it
        report = IngestReport()
        for p in paths:
            report.add(self.ingest_feed(p))
        return report

    # -- reading a saved feed ---------------------------------------------------------------
    def ingest_feed(
        self, path: str | Path, conf: str | None = None, year: int | None = None, site: str = ""
    ) -> IngestReport:
        """Read a saved programme as `fetch virtual` reads the live one: events linked to papers,
        missing papers brought in, changes recorded. Either a virtual-site feed file
        (`neurips-2025-orals-posters.json`) or a Mini-Conf site's `calendar_papers.csv` (with the
        `papers.csv` and `track_*.csv` beside it; miniconf.py).

        `conf` and `year` come from the file name (the feed) or the files (Mini-Conf) unless given;
        `site` makes the events' page paths absolute (e.g. https://neurips.cc)."""
        from .miniconf import is_calendar, read_sitedata

        p = Path(path)
        if is_calendar(p):
            feed, found_conf, found_year = read_sitedata(p)
            conf, year = (conf or found_conf).lower(), year or found_year
        else:
            feed, conf, year = self._read_feed(p, conf, year)
        if not conf or not year:
            raise PaperatlasError(
                gettext("cannot tell the conference and year of {file}", file=str(p)),
                gettext("name the file CONF-YEAR-orals-posters.json (as the virtual site does)"),
            )
        if not feed.events:
            raise PaperatlasError(
                gettext("{file} lists no events", file=str(p)),
                gettext("check that it is the virtual site's orals-posters feed"),
            )
        for ev in feed.events:
            if ev.url.startswith("/") and site:
                ev.url = site.rstrip("/") + ev.url
        return self._store_feed(str(p), conf, year, feed)

    @staticmethod
    def _read_feed(p: Path, conf: str | None, year: int | None) -> tuple[Any, str, int | None]:
        from .feed import parse_feed

        m = FEED_NAME.match(p.name)
        conf = (conf or (m.group(1) if m else "")).lower()
        year = year or (int(m.group(2)) if m else None)
        if not conf or not year:
            raise PaperatlasError(
                gettext("cannot tell the conference and year of {file}", file=str(p)),
                gettext("name the file CONF-YEAR-orals-posters.json (as the virtual site does)"),
            )
        try:
            data = p.read_bytes()
        except OSError as e:
            raise PaperatlasError(f"cannot read {p}: {e.strerror}", "check the path") from None
        return parse_feed(data, str(p)), conf, year

    def _store_feed(self, where: str, conf: str, year: int, feed: Any) -> IngestReport:
        from ..ingest.formats import VENUE_SPELLING, Format
        from ..ingest.pipeline import Records
        from .link import commit, plan, summary

        venue = VENUE_SPELLING.get(conf, conf.upper())
        # the events are planned from the stored papers: plan, papers and events are one write
        with self.lib.writing():
            fp = plan(self.store, f"{conf} {year}", venue, year, feed)
            papers = Records(where, "virtual", Format.JSON, fp.rows, {"venue": venue, "year": year})
            report = self.lib.add_papers(papers, skip_bad=True)
            counts = commit(self.store, fp)
        report.notes += [f"programme {conf} {year}: {summary(counts)}", *fp.notes]
        return report

    # -- events and sessions ------------------------------------------------------------
    def events_for(self, paper_id: str) -> list[Event]:
        """A paper's events in time order (none when no programme lists it)."""
        return [Event.from_row(r) for r in self.store.programme.events_for_papers([paper_id]).get(paper_id, [])]

    def events_for_many(self, paper_ids: Sequence[str]) -> dict[str, list[Event]]:
        return {
            pid: [Event.from_row(r) for r in rows]
            for pid, rows in self.store.programme.events_for_papers(paper_ids).items()
        }

    def attach(self, hits: Sequence[Any]) -> None:
        """Give each Hit its paper's events (`Hit.events`, the `Event.to_dict()` shape): what search
        results, related lists and recommendations show of when and where a paper is presented."""
        if not hits:
            return
        found = self.store.programme.events_for_papers([h.paper.id for h in hits])
        for h in hits:
            h.events = [Event.from_row(r).to_dict() for r in found.get(h.paper.id, [])]

    def places(self, paper_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
        """paper id -> its events (`Event.to_dict()`), for the papers of `paper_ids` that have any."""
        return {pid: [e.to_dict() for e in evs] for pid, evs in self.events_for_many(paper_ids).items() if evs}

    def map_places(self, paper_ids: Sequence[str]) -> dict[str, list[list[str]]]:
        """paper id -> [[type, session, when, place], ...] (programme.models.event_parts), for the
        map's point details: what the map shows of when and where a paper is presented."""
        return {pid: [list(event_parts(e)) for e in evs] for pid, evs in self.places(paper_ids).items()}

    def version(self) -> tuple[int, int]:
        """Changes whenever a read of a feed changed the programme: a key for caches of what it says."""
        return self.store.programme.programme_version()

    @staticmethod
    def filters() -> list[Filter]:
        """session, day and room: where papers are presented; one event must meet all three."""

        def keep_all(lib: Any, values: dict[str, Any]) -> set[str] | None:
            return lib.programme.filter_ids(**values)

        return [
            Filter(
                "session",
                str,
                'only papers presented in this session: its id, or its name or words of it ("Poster Session 6")',
                "programme",
                lambda lib, v: lib.programme.filter_ids(session=v),
                metavar="NAME|ID",
                keep_all=keep_all,
                example="Poster Session 6",
            ),
            Filter(
                "day",
                str,
                "only papers presented on this day (the conference's local date)",
                "programme",
                lambda lib, v: lib.programme.filter_ids(day=v),
                pattern=r"^\d{4}-\d{2}-\d{2}$",
                format="date",
                metavar="YYYY-MM-DD",
                keep_all=keep_all,
                example="2025-12-05",
                mismatch=N_("{day!r} is not a day"),
                fix=N_("give the day as YYYY-MM-DD, e.g. 2025-12-05"),
            ),
            Filter(
                "room",
                str,
                'only papers presented in this room ("Hall C")',
                "programme",
                lambda lib, v: lib.programme.filter_ids(room=v),
                metavar="NAME",
                keep_all=keep_all,
                example="Hall C",
            ),
        ]

    def decorate(self, hits: Sequence[Any]) -> None:
        """Search results, related lists and recommendations show when and where a paper is presented."""
        self.attach(hits)

    def explain_empty(self, values: dict[str, Any]) -> str:
        """Why the session / day / room filters kept nothing, with the fix ("" when they are not why)."""
        where = {k: values[k] for k in ("session", "day", "room") if values.get(k)}
        if not where or self.filter_ids(**where):
            return ""
        if not self.feeds():
            return "this library holds no programme: `paperatlas fetch virtual CONF YEAR` brings one in"
        return "no paper is presented there: `paperatlas programme` lists the sessions, days and rooms"

    def filter_ids(
        self, session: str | None = None, day: str | None = None, room: str | None = None
    ) -> set[str] | None:
        """The papers with an event in that session (its id, or its name or words of it: "Poster
        Session 6" finds both cities' sixth poster session, "Oral Session 1" not "Oral Session 17"),
        on that local day (YYYY-MM-DD, the conference's own date) and in that room (words of its
        name: "Hall C" finds "Exhibit Hall C,D,E"); None when no such filter is given. A filter is
        met by one event: a paper with a poster on Friday and an oral on Saturday is on both days."""
        session, day, room = (x.strip() if x else "" for x in (session, day, room))
        if not (session or day or room):
            return None
        if day and not DAY.match(day):
            raise PaperatlasError(
                gettext("{day!r} is not a day", day=day), gettext("give the day as YYYY-MM-DD, e.g. 2025-12-05")
            )
        in_session = _words(session)
        in_room = _words(room)
        out: set[str] = set()
        for r in self.store.programme.programme_events(None, include_withdrawn=False):
            if not r["paper_id"]:
                continue
            if session and r["session_id"] != session and not in_session.search(r["session"] or ""):
                continue
            if day and (r["start_at"] or "")[:10] != day:
                continue
            if room and not in_room.search(r["room"] or ""):
                continue
            out.add(r["paper_id"])
        return out

    def feeds(self) -> list[str]:
        return self.store.programme.programme_feeds()

    def sessions(
        self, feed: str | None = None, day: str | None = None, type: str | None = None, tz: str | None = None
    ) -> list[SessionInfo]:
        """Every session in time order (optionally of one feed, one local day, one type)."""
        zone = reader_tz(tz)
        groups: dict[str, list[dict[str, Any]]] = {}
        for r in self.store.programme.programme_events(feed, include_withdrawn=False):
            if r["session_id"]:
                groups.setdefault(r["session_id"], []).append(r)
        out = []
        for sid, rows in groups.items():
            info = self._info(sid, rows, zone)
            if day and info.day != day:
                continue
            if type and type.lower() not in info.type.split("/"):
                continue
            out.append(info)
        out.sort(key=lambda s: (s.start == "", _utc_key(s.start), s.session))
        return out

    @staticmethod
    def _info(sid: str, rows: list[dict[str, Any]], zone: tzinfo | None) -> SessionInfo:
        timed = [r for r in rows if r["start_utc"]]
        first = min(timed, key=lambda r: r["start_utc"]) if timed else rows[0]
        last = max(timed, key=lambda r: r["end_utc"]) if timed else rows[0]
        types = sorted({r["type"] for r in rows if r["type"]})
        start, end = _local(first["start_at"], zone), _local(last["end_at"], zone)
        return SessionInfo(
            sid,
            rows[0]["session"],
            rows[0]["feed"],
            "/".join(types),
            start,
            end,
            sorted({r["room"] for r in rows if r["room"]}),
            len(rows),
            start[:10],
        )

    def session(self, session_id: str) -> tuple[SessionInfo, list[Event]]:
        """A session and its events in poster-number order. Raises NotFound."""
        rows = self.store.programme.session_events(session_id)
        if not rows:
            raise NotFound(
                gettext("no session {id!r} in the programme", id=session_id),
                gettext("`paperatlas programme` lists the sessions"),
            )
        return self._info(session_id, rows, None), [Event.from_row(r) for r in rows]

    # -- the reader's agenda ------------------------------------------------------------
    def candidates(
        self, reader: str | None, recommended: int = RECOMMENDED
    ) -> dict[str, tuple[list[str], float, bool]]:
        """paper id -> (why, score, must-see) for the reader's liked, tagged and strongly
        recommended papers that the programme lists."""
        r = self._readers.get(reader)
        out: dict[str, tuple[list[str], float, bool]] = {}
        for f in self.store.readers.feedback(r.id, "like"):
            out[f.paper_id] = (["liked"], 1.0, True)
        for pid, tags in self.store.readers.tags(r.id).items():
            why, score, _ = out.get(pid, ([], 1.0, True))
            out[pid] = ([*why, "tagged: " + ", ".join(tags)], score, True)
        if recommended > 0 and out:
            for pid, score, why in self._recommend(r.name, recommended, set(out)):
                out[pid] = (["recommended: " + (why or "close to what you liked")], score, False)
        return out

    def _scored(self, reader: str) -> tuple[dict[str, float], Any]:
        """The reader's recommendation score of every paper, and a function explaining some of them
        (paper ids -> reasons); ({}, None) before the library has vectors to score with."""
        try:
            corpus, scored, _ = self._recommender.scored_for(self._readers.get(reader))
        except PaperatlasError:
            return {}, None
        if not len(corpus.ids):
            return {}, None
        scores = {pid: float(v) for pid, v in zip(corpus.ids, scored.scores)}

        def explain(ids: Sequence[str]) -> list[str]:
            return list(scored.explain(corpus.rows(list(ids))))

        return scores, explain

    def _recommend(self, reader: str, limit: int, exclude: set[str]) -> list[tuple[str, float, str]]:
        """(paper id, score, why) of the reader's top recommendations among the programme's papers."""
        listed = {
            r["paper_id"] for r in self.store.programme.programme_events(None, include_withdrawn=False) if r["paper_id"]
        }
        scores, explain = self._scored(reader)
        if not listed or not scores or explain is None:
            return []
        r = self._readers.get(reader)
        judged = {f.paper_id for f in self.store.readers.feedback(r.id)}
        top = sorted((pid for pid in listed - exclude - judged if pid in scores), key=lambda pid: -scores[pid])[:limit]
        return [(pid, scores[pid], why) for pid, why in zip(top, explain(top))]

    def agenda(
        self,
        reader: str | None = None,
        tz: str | None = None,
        day: str | None = None,
        session: str | None = None,
        type: str | None = None,
        recommended: int = RECOMMENDED,
    ) -> Agenda:
        """The reader's liked, tagged and strongly recommended papers laid out day -> session ->
        poster number, each with why it is there, and the clashes between starred orals and with
        the poster sessions planned.

        Example:
            >>> lib.programme.agenda("me").to_dict()["sessions"][0]["papers"]  # doctest: +SKIP
            ['7HVADbW8fh', '1tzlbKySxX']
        """
        zone = reader_tz(tz)
        name = self._readers.get(reader).name
        chosen = self.candidates(name, recommended)
        events = self.store.programme.events_for_papers(list(chosen))
        papers = self.store.get_papers(list(chosen))
        by_session: dict[str, list[AgendaItem]] = {}
        rows_of: dict[str, list[dict[str, Any]]] = {}
        untimed: list[dict[str, Any]] = []
        for pid, (why, score, must) in chosen.items():
            paper = papers.get(pid)
            if paper is None:
                continue
            evs = events.get(pid, [])
            if not evs:
                x = paper.extra
                if x.get("room") or x.get("poster_position") or x.get("session"):
                    untimed.append(
                        {
                            "paper_id": pid,
                            "title": paper.title,
                            "room": str(x.get("room") or ""),
                            "poster_position": str(x.get("poster_position") or ""),
                            "session": str(x.get("session") or ""),
                            "type": str(x.get("presentation") or ""),
                            "why": why,
                        }
                    )
                continue
            for r in evs:
                e = Event.from_row(r)
                if type and e.type != type.lower():
                    continue
                if session and session not in (e.session_id, e.session):
                    continue
                if not e.timed:
                    untimed.append(
                        {
                            "paper_id": pid,
                            "title": paper.title,
                            "room": e.room,
                            "poster_position": e.poster_position,
                            "session": e.session,
                            "type": e.type,
                            "why": why,
                        }
                    )
                    continue
                e.start, e.end = _local(e.start, zone), _local(e.end, zone)
                by_session.setdefault(e.session_id, []).append(AgendaItem(pid, paper.title, e, why, score, must))
                rows_of.setdefault(e.session_id, []).append(r)
        sessions = []
        for sid, items in by_session.items():
            info = self._info(sid, rows_of[sid], zone)
            if day and info.day != day:
                continue
            items.sort(
                key=lambda i: (
                    i.event.poster_number is None,
                    i.event.poster_number or 0,
                    i.event.start_utc,
                    i.event.event_id,
                )
            )
            sessions.append(AgendaSession(info, items))
        sessions.sort(key=lambda s: (_utc_key(s.info.start), s.info.session))
        agenda = Agenda(name, sessions, clashes(sessions), untimed, tz or "")
        if not chosen:
            agenda.notes.append(gettext("like or tag papers of the programme to fill your agenda"))
        return agenda

    def ics(self, reader: str | None = None, base_url: str = "", **filters: Any) -> str:
        """The agenda as an RFC 5545 calendar (see programme/ics.py)."""
        from .ics import to_ics

        return to_ics(self.agenda(reader, **filters), self.store.programme.event_change_counts(), base_url)

    def interest(self, reader: str | None, paper_ids: Sequence[str]) -> dict[str, tuple[float, bool]]:
        """paper id -> (interest in [0, 1], must-see) for the reader: must-sees are the liked and tagged
        papers; interest is the recommender's score scaled so the session's median is 0 and its best 1."""
        r = self._readers.get(reader)
        must = {f.paper_id for f in self.store.readers.feedback(r.id, "like")} | set(self.store.readers.tags(r.id))
        wanted = set(paper_ids)
        every, _ = self._scored(r.name)
        scores = {pid: every[pid] for pid in wanted if pid in every}
        out: dict[str, tuple[float, bool]] = {}
        if scores and must:
            ranked = sorted(scores.values())
            median, top = ranked[len(ranked) // 2], ranked[-1]
            span = top - median
            for pid, s in scores.items():
                out[pid] = (max(0.0, (s - median) / span) if span > 0 else 0.0, pid in must)
        for pid in wanted & must:
            out[pid] = (1.0, True)
        return out

    def walk(
        self,
        session_id: str,
        reader: str | None = None,
        minutes: float = 90,
        per_poster: float = 5,
        walk_per_100: float = 1.0,
        done: Sequence[str] = (),
        skipped: Sequence[str] = (),
        method: str = "plan",
    ) -> Walk:
        """The poster walk through one session for a time budget (see programme/walk.py): the
        posters worth the most interest for the time, in number order, must-sees first. `done` and
        `skipped` posters are left out and the walk continues from the last of them."""
        if method not in METHODS:
            raise PaperatlasError(
                gettext("unknown walk method {m!r}", m=method), gettext("use one of {names}", names=", ".join(METHODS))
            )
        if not 0 < minutes <= 24 * 60 or not 0 < per_poster <= 240 or not 0 <= walk_per_100 <= 120:
            raise PaperatlasError(
                gettext("a walk needs 0 < minutes <= 1440 and 0 < minutes per poster <= 240"),
                gettext("e.g. --minutes 90 --per-poster 5"),
            )
        _info, events = self.session(session_id)
        interest = self.interest(reader, [e.paper_id for e in events if e.paper_id])
        gone = set(done) | set(skipped)
        posters, at = [], None
        for k, e in enumerate(events):
            number = e.poster_number if e.poster_number is not None else k
            if e.paper_id in gone:
                if e.paper_id in (list(done) + list(skipped))[-1:]:
                    at = number
                continue
            v, must = interest.get(e.paper_id, (0.0, False))
            posters.append(Poster(e.paper_id, number, v, must, e.name, e.poster_position))
        w = METHODS[method](posters, minutes, per_poster, walk_per_100, at)
        w.session_id, w.done, w.skipped = session_id, list(done), list(skipped)
        return w

    def split(
        self,
        session_id: str,
        readers: Sequence[str],
        minutes: float = 90,
        per_poster: float = 5,
        walk_per_100: float = 1.0,
    ) -> Split:
        """Share a session's posters out among a reading group: the posters most relevant to the group,
        no poster twice, drafted in turns so each member gets what they care most about (groups.py)."""
        if len(set(readers)) < 2:
            raise PaperatlasError(
                gettext("a group needs two readers or more"), gettext("name them, e.g. --readers ana,bo")
            )
        _info, events = self.session(session_id)
        numbers = {
            e.paper_id: (e.poster_number if e.poster_number is not None else k, e.name, e.poster_position)
            for k, e in enumerate(events)
            if e.paper_id
        }
        interest = {
            self._readers.get(name, create=False).name: self.interest(name, list(numbers))
            for name in dict.fromkeys(readers)
        }
        return split(session_id, numbers, interest, minutes, per_poster, walk_per_100)

    def people(self, reader: str | None = None, limit: int = 30, **filters: Any) -> list[Person]:
        """The authors of the papers on the reader's agenda (must-sees first), each with where and
        when they present."""
        agenda = self.agenda(reader, **filters)
        items = sorted(agenda.items, key=lambda i: (not i.must_see, -i.score))
        return people([(i.paper_id, i.title, i.score + (1.0 if i.must_see else 0.0), i.event) for i in items], limit)

    def change_hits(self, reader: str | None, since: str = "", limit: int = 20) -> list[Any]:
        """The changes touching the reader's agenda as Hits (the paper, and what changed as the
        reason), newest first: what the digest and its Atom feed show before the recommendations."""
        from ..models import Hit

        found = list(reversed(self.changes(reader, since)))[:limit]
        papers = self.store.get_papers([c["paper_id"] for c in found])
        return [
            Hit(papers[c["paper_id"]], 0.0, {"programme": k + 1}, reason=describe(c))
            for k, c in enumerate(found)
            if c["paper_id"] in papers
        ]

    def digest_news(self, reader: str, since: str = "") -> tuple[list[Any], dict[str, str]]:
        """What a digest shows first: the changes to the reader's agenda (Hits), and when each happened."""
        return self.change_hits(reader, since), {c["paper_id"]: c["at"] for c in self.changes(reader, since)}

    def changes(self, reader: str | None = None, since: str = "") -> list[dict[str, Any]]:
        """Moved, re-timed and withdrawn events since `since` (ISO), of the papers on the reader's
        agenda when a reader is given."""
        ids = list(self.candidates(reader, 0)) if reader else None
        return self.store.programme.programme_changes(since, ids)


DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _words(text: str) -> re.Pattern[str]:
    """Matches `text` as whole words, case-insensitively (spaces match any run of spaces)."""
    body = r"\s+".join(re.escape(w) for w in text.split())
    return re.compile(rf"(?<!\w){body}(?!\w)", re.IGNORECASE)


def _utc_key(iso: str) -> str:
    if not iso:
        return "9999"
    from datetime import timezone

    return datetime.fromisoformat(iso).astimezone(timezone.utc).isoformat()


def clashes(sessions: Sequence[AgendaSession]) -> list[Clash]:
    """Starred orals (liked or tagged) that overlap each other, or overlap a poster session that
    holds something of the agenda."""
    orals = [i for s in sessions for i in s.items if i.must_see and i.event.type in _ORALS]
    out: list[Clash] = []
    for k, a in enumerate(orals):
        for b in orals[k + 1 :]:
            if a.paper_id != b.paper_id and _overlap(a.event, b.event.start_utc, b.event.end_utc):
                out.append(Clash("orals", a, b))
    posters = [s for s in sessions if any(i.event.type == "poster" for i in s.items)]
    for a in orals:
        for s in posters:
            span = [i.event for i in s.items if i.event.type == "poster"]
            lo, hi = min(e.start_utc for e in span), max(e.end_utc for e in span)
            if a.event.session_id != s.info.session_id and _overlap(a.event, lo, hi):
                out.append(Clash("oral-poster", a, s))
    return out


def is_feed_file(path: str | Path) -> bool:
    """A saved programme: a virtual-site feed (named CONF-YEAR-orals-posters.json, or a JSON object
    whose `results` are events: they carry `eventtype` or `poster_position`), or a Mini-Conf
    `calendar_papers.csv`."""
    from .miniconf import is_calendar

    p = Path(path)
    if FEED_NAME.match(p.name) or is_calendar(p):
        return True
    if p.suffix.lower() != ".json":
        return False
    try:
        with p.open("rb") as fh:
            head = fh.read(4096).decode("utf-8", "ignore")
    except OSError:
        return False
    return '"results"' in head and ('"eventtype"' in head or '"poster_position"' in head)


def describe(change: dict[str, Any]) -> str:
    """A programme change in words: "moved: Hall A #2504 -> Hall B #2600"."""

    def where(d: dict[str, Any]) -> str:
        return " ".join(
            x for x in (str(d.get("session") or ""), str(d.get("room") or ""), str(d.get("poster_position") or "")) if x
        )

    def when(d: dict[str, Any]) -> str:
        return str(d.get("start_at") or "")[:16].replace("T", " ")

    b, a = change.get("before") or {}, change.get("after") or {}
    kind = change["kind"]
    if kind == "moved":
        return gettext("programme change: moved from {old} to {new}", old=where(b), new=where(a))
    if kind == "retimed":
        return gettext("programme change: re-timed from {old} to {new}", old=when(b), new=when(a))
    if kind == "withdrawn":
        return gettext("programme change: withdrawn from {old}", old=where(b))
    return gettext("programme change: now at {new}, {time}", new=where(a), time=when(a))
