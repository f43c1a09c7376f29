"""Read a conference's programme from a Mini-Conf site's `sitedata/` (the static virtual-conference
site that ICLR 2020, ACL 2020, PLDI 2021 ... ran on).

Three CSV files make the programme:
- `calendar_papers.csv` (`session,start,end,paperUID,posterNumber`): one row per presentation of a
  paper; poster rows often leave the times to their session;
- `track_*.csv` (`UID,title,start,end,trackUID,gather,...,category`): each session's title, its
  times and where it happens (the video track, or the Gather hall of a poster session); lines that
  start with `#` are the organisers' day headings;
- `papers.csv` (`UID,title,authors,abstract,keywords,DOI`, authors `|`-separated): the papers.

Parsing is pure, as for the virtual-site feed (feed.py): it returns the same `Feed` of events with
notes about what could not be used, and never touches a library.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from pathlib import Path
from ..safety import safe_url
from .feed import MAX_AUTHORS, MAX_KEYWORDS, MAX_NAME, Bounds, Feed, FeedAuthor, FeedError, FeedEvent, parse_time, span

CALENDAR_COLUMNS = ("session", "start", "end", "paperUID")
MAX_ROWS = 200_000  # as for the virtual-site feed: more than that is not one conference's programme
_CONF = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
_SIGNATURE = re.compile(r"^\ufeff?session,start,end,paperuid\b", re.IGNORECASE)


def is_calendar(path: str | Path) -> bool:
    """A Mini-Conf `calendar_papers.csv`: a CSV whose header starts `session,start,end,paperUID`."""
    p = Path(path)
    if p.suffix.lower() != ".csv" or not p.is_file():
        return False
    try:
        with p.open("rb") as fh:
            head = fh.read(200).decode("utf-8", "ignore")
    except OSError:
        return False
    return bool(_SIGNATURE.match(head))


def sitedata_rows(data: bytes, where: str, required: tuple[str, ...]) -> list[dict[str, str]]:
    """The rows of a sitedata file: the CSV itself, or the JSON list of its rows that a deployed
    Mini-Conf site serves as `/serve_{name}.json` (its `#` lines already dropped)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise FeedError(f"{where} is not UTF-8 (byte {e.start})", "save it as UTF-8 and ingest it again") from None
    if text.lstrip().startswith("["):
        return _json_rows(text, where, required)
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in reader.fieldnames or []]
    missing = [c for c in required if c not in header]
    if missing:
        raise FeedError(
            f"{where} has no column {', '.join(missing)} (its header: {','.join(header) or 'none'})",
            f"a Mini-Conf file here starts with the header {','.join(required)}",
        )
    reader.fieldnames = header
    out = []
    for row in reader:
        out.append({k: (v or "").strip() for k, v in row.items() if isinstance(k, str)})
        if len(out) > MAX_ROWS:
            raise FeedError(
                f"{where} holds more than {MAX_ROWS:,} rows", "check the file: this is not one conference's programme"
            )
    return out


def _json_rows(text: str, where: str, required: tuple[str, ...]) -> list[dict[str, str]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise FeedError(
            f"{where} is not valid JSON ({e.msg} at line {e.lineno}, column {e.colno}): it may have been cut off",
            "fetch it again (a re-run starts over)",
        ) from None
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise FeedError(f"{where} is not a list of rows", "a Mini-Conf site serves each sitedata file as a JSON list")
    if len(data) > MAX_ROWS:
        raise FeedError(f"{where} holds more than {MAX_ROWS:,} rows", "check the URL: this is not one conference's")
    if data:
        missing = [c for c in required if c not in data[0]]
        if missing:
            raise FeedError(
                f"{where} has no field {', '.join(missing)} (its fields: {','.join(map(str, data[0])) or 'none'})",
                f"a Mini-Conf file here has the fields {','.join(required)}",
            )
    return [{str(k): str(v if v is not None else "").strip() for k, v in r.items()} for r in data]


def read_sitedata(calendar: str | Path) -> tuple[Feed, str, int | None]:
    """The events of a Mini-Conf calendar file and of the `papers.csv` and `track_*.csv` beside it;
    also the conference (papers.csv's `event` column) and its year (from the first time)."""
    cal = Path(calendar)
    folder = cal.parent
    papers_file = folder / "papers.csv"
    if not papers_file.is_file():
        raise FeedError(
            f"{cal} has no papers.csv beside it: its rows name papers by UID only",
            "ingest the calendar from the sitedata folder that holds papers.csv",
        )
    try:
        tracks = {str(p): p.read_bytes() for p in sorted(folder.glob("track_*.csv")) if p.name != "track_array.csv"}
        feed = parse_sitedata(cal.read_bytes(), papers_file.read_bytes(), tracks, str(cal), str(papers_file))
    except OSError as e:
        raise FeedError(f"cannot read {e.filename}: {e.strerror}", "check the path") from None
    conf = feed.conf
    year = next((ev.start.year for ev in feed.events if ev.start), None)
    return feed, conf, year


def parse_sitedata(
    calendar: bytes,
    papers: bytes,
    tracks: dict[str, bytes] | None = None,
    where: str = "calendar_papers.csv",
    papers_where: str = "papers.csv",
) -> Feed:
    """The programme of a Mini-Conf site: one event per calendar row that names a known paper."""
    cal_rows = sitedata_rows(calendar, where, CALENDAR_COLUMNS)
    paper_rows = sitedata_rows(papers, papers_where, ("UID", "title"))
    sessions: dict[str, dict[str, str]] = {}
    for name, data in (tracks or {}).items():
        for r in sitedata_rows(data, name, ("UID", "title")):
            if r["UID"] and not r["UID"].startswith("#"):
                sessions[r["UID"]] = r
    # a repeated session (PLDI's "mirror" twelve hours later) keeps its title: the first one keeps
    # it as it is, the repeats are told apart
    names: dict[str, str] = {}
    taken: set[str] = set()
    for uid, sess in sessions.items():
        title = sess["title"]
        names[uid] = title if title not in taken else f"{title} ({'mirror' if uid.endswith('_mirror') else uid})"
        taken.add(title)
    by_uid = {r["UID"]: r for r in paper_rows if r["UID"]}
    # the conference names the feed (and so calendar UIDs): a short name or none
    conf = Counter(e for r in paper_rows if _CONF.match(e := r.get("event", "").lower())).most_common(1)
    feed = Feed([], len(cal_rows), conf=conf[0][0] if conf else "")
    unknown_paper: list[int] = []
    untimed: Counter[str] = Counter()
    no_session: set[str] = set()
    seen: set[str] = set()
    dupes = 0
    for line, r in enumerate(cal_rows, start=2):
        b = Bounds(where, f"line {line}")
        uid, sid = b.ident("paperUID", r.get("paperUID", ""), strict=True), b.ident("session", r.get("session", ""))
        paper = by_uid.get(uid)
        if paper is None or not paper.get("title"):
            unknown_paper.append(line)
            continue
        eid = f"{sid}:{uid}"
        if eid in seen:
            dupes += 1
            continue
        seen.add(eid)
        s = sessions.get(sid, {})
        if sid and not s:
            no_session.add(sid)
        start, why = parse_time(b.text("start", r.get("start") or s.get("start"), 100))
        end, _ = parse_time(b.text("end", r.get("end") or s.get("end"), 100))
        start, end = span(b.time("start", start), b.time("end", end))
        if start is None:
            untimed[why] += 1
        category = s.get("category", "").lower()
        kind = "poster" if "poster" in category or "poster" in sid.lower() else "oral"
        pb = Bounds(papers_where, f"the paper {uid}")
        doi = pb.ident("DOI", paper.get("DOI", ""))
        authors = pb.items("authors", [a for a in paper.get("authors", "").split("|") if a.strip()], MAX_AUTHORS)
        keywords = pb.items("keywords", [k for k in paper.get("keywords", "").split("|") if k.strip()], MAX_KEYWORDS)
        feed.events.append(
            FeedEvent(
                event_id=eid,
                name=pb.text("title", paper["title"], MAX_NAME),
                type=kind,
                session=b.text("session", names.get(sid, sid)),
                start=start,
                end=end,
                # the video track of a talk, the hall (Gather) of a poster session
                room=b.text("room", s.get("trackUID") or s.get("gather") or ""),
                poster_position=b.position(r.get("posterNumber", "")),
                paper_url=safe_url(f"https://doi.org/{doi}") if doi else "",
                url=f"/poster_{uid}.html",  # the paper's page on the site (Mini-Conf's route), a path as the feed's
                abstract=pb.long_text("abstract", paper.get("abstract", "")),
                authors=[FeedAuthor(pb.text("authors", a)) for a in authors if pb.text("authors", a)],
                keywords=[pb.text("keywords", k) for k in keywords if pb.text("keywords", k)],
                paper_key=uid,
            )
        )
    if unknown_paper:
        lines = ", ".join(str(n) for n in unknown_paper[:5]) + (" ..." if len(unknown_paper) > 5 else "")
        feed.notes.append(
            f"{len(unknown_paper)} row{'s' if len(unknown_paper) != 1 else ''} of {where} name a paper"
            f" that {papers_where} does not hold (line {lines}): left out"
        )
    if dupes:
        feed.notes.append(f"{dupes} row{'s' if dupes != 1 else ''} repeat a paper in the same session: left out")
    if no_session:
        feed.notes.append(
            f"{len(no_session)} session{'s' if len(no_session) != 1 else ''} not in any track_*.csv"
            f" ({', '.join(sorted(no_session)[:3])}): named by their id, without a room"
        )
    n = sum(untimed.values())
    if n:
        reasons = ", ".join(f"{k} {w}" for w, k in sorted(untimed.items()))
        feed.notes.append(
            f"{n} event{'s' if n != 1 else ''} kept without a time ({reasons}):"
            " they show their session and poster but stay off the calendar"
        )
    return feed
