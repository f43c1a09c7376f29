"""A programme feed is untrusted input, as a paper list is: hostile variants of the real recorded feeds
(the NeurIPS 2025 virtual-site records and PLDI 2021's Mini-Conf sitedata, tests/data/programme/README.md)
are derived here and read through the CLI. Fields are cleaned and bounded like a list's, out-of-bounds
records stop the read with exit 3 naming the file and the record, and the .ics of what was read back by
`icalendar` holds only the properties paperatlas wrote."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import icalendar
import pytest
from click.testing import CliRunner

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.programme.feed import poster_number
from paperatlas.programme.ics import uid

DATA = Path(__file__).parent / "data" / "programme"
SITE = DATA / "pldi-2021"
FEED = DATA / "neurips-2025-orals-posters.json"
INJECT = "\r\nATTENDEE:mailto:attacker@example.com\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nEND:VALARM\r\nX-INJ:1"
ESC = "\x1b]0;owned\x07\x1b[2J"  # a window title and a clear-screen


def run(db: Path, *args: str):
    return CliRunner().invoke(cli, ["--db", str(db), *args])


def ok(db: Path, *args: str) -> str:
    res = run(db, *args)
    assert res.exit_code == 0, res.output
    return res.output


def records() -> list[dict]:
    return json.loads(FEED.read_text())["results"]


def write_feed(folder: Path, events: list[dict], name: str = "neurips-2025-orals-posters.json", **top) -> Path:
    p = folder / name
    p.write_text(json.dumps({"count": len(events), "results": events, **top}))
    return p


def rewrite_csv(path: Path, change) -> None:
    """Rewrite a sitedata CSV with `change(row)` applied to each row (the csv module quotes line breaks)."""
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields, rows = reader.fieldnames, list(reader)
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    for r in rows:
        change(r)
        w.writerow(r)
    path.write_text(out.getvalue(), encoding="utf-8")


def calendar_of(db: Path) -> list[icalendar.Event]:
    text = ok(db, "agenda", "--reader", "me", "--recommended", "0", "--ics")
    return list(icalendar.Calendar.from_ical(text).walk("VEVENT"))


def assert_only_our_properties(events: list[icalendar.Event]) -> None:
    assert events
    for ev in events:
        names = {name for name, _ in ev.property_items(recursive=False)}
        assert not {"ATTENDEE", "X-INJ", "ORGANIZER"} & names, names
        assert not ev.subcomponents, [c.name for c in ev.subcomponents]  # no VALARM
        urls = [v for name, v in ev.property_items(recursive=False) if name == "URL"]
        assert len(urls) <= 1 and all(str(u).startswith(("http://", "https://")) for u in urls), urls


# -- Mini-Conf ------------------------------------------------------------------------------------


def test_hostile_miniconf_cells_are_cleaned_and_the_ics_holds_no_injection(tmp_path):
    site = tmp_path / "site"
    shutil.copytree(SITE, site)

    def paper(r):
        if r["UID"] == "pldi.255":
            r["title"] = ESC + r["title"] + INJECT
            r["authors"] = "Alice\x1b[31m Red|" + r["authors"]

    def track(r):
        if r["UID"] == "pldi_talks1A":
            r["title"] += INJECT

    rewrite_csv(site / "papers.csv", paper)
    rewrite_csv(site / "track_pldi.csv", track)
    db = tmp_path / "lib.db"
    ok(db, "ingest", str(site / "calendar_papers.csv"), "--no-embed")
    ok(db, "like", "pldi2021/pldi.255")
    with Library(str(db)) as lib:
        p = lib.get("pldi2021/pldi.255")
        assert "\x1b" not in p.title and "\x07" not in p.title and "\r" not in p.title and "\n" not in p.title
        assert p.authors[0] == "Alice[31m Red"  # the ESC is gone, the printable rest is plain text
        events = lib.programme.events_for(p.id)
        assert events and all("\n" not in e.session and "\r" not in e.session for e in events)
        assert {e.paper_url for e in events} == {"https://doi.org/10.1145/3453483.3454067"}
    show = ok(db, "show", "pldi2021/pldi.255")
    assert "\x1b" not in show
    events = calendar_of(db)
    assert_only_our_properties(events)
    talk = next(e for e in events if "Talks 1A" in str(e["DESCRIPTION"]))
    assert "ATTENDEE:mailto" in str(talk["DESCRIPTION"])  # the text is kept, as text, inside the value


@pytest.mark.parametrize(
    ("file", "column", "value", "said"),
    [
        ("calendar_papers.csv", "paperUID", "pldi.255\nX-INJ:1", "`paperUID`"),
        ("calendar_papers.csv", "paperUID", "pldi.255 evil", "`paperUID`"),
        ("calendar_papers.csv", "session", "pldi_talks1A\x1b[2J", "`session`"),
        ("calendar_papers.csv", "posterNumber", "#" + "9" * 5000, "`poster_position`"),
        ("calendar_papers.csv", "start", "0001-01-01T00:00:00+05:00", "year 1,"),
        ("calendar_papers.csv", "end", "9999-12-31T23:00:00-08:00", "year 9999,"),
        ("papers.csv", "DOI", "10.1145/1" + INJECT + "\r\nURL:javascript:alert(5)", "`DOI`"),
    ],
)
def test_hostile_miniconf_records_exit_3_naming_the_line(tmp_path, file, column, value, said):
    site = tmp_path / "site"
    shutil.copytree(SITE, site)
    first = {"done": False}

    def change(r):
        if not first["done"]:
            r[column] = value
            first["done"] = True

    if file == "papers.csv":  # the paper of the first calendar row
        first["done"] = True
        rewrite_csv(site / file, lambda r: r.update({column: value}) if r["UID"] == "pldi.255" else None)
    else:
        rewrite_csv(site / file, change)
    db = tmp_path / "lib.db"
    res = run(db, "ingest", str(site / "calendar_papers.csv"), "--no-embed")
    assert res.exit_code == 3, res.output
    where = "papers.csv, the paper pldi.255:" if file == "papers.csv" else "calendar_papers.csv, line 2:"
    assert where in res.output and said in res.output, res.output
    assert "Fix:" in res.output and "Traceback" not in res.output
    assert not db.exists() or Library(str(db)).count() == 0  # nothing stored


# -- virtual-site feed ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("authors", 5, "`authors` is a int"),
        ("keywords", 5, "`keywords` is a int"),
        ("keywords", [5], "an entry of `keywords`"),
        ("authors", ["Jane Doe"], "an entry of `authors`"),
        ("poster_position", "#" + "9" * 5000, "`poster_position`"),
        ("starttime", "0001-01-01T00:00:00+05:00", "the year 1,"),
        ("starttime", "9999-12-31T23:00:00-08:00", "the year 9999,"),
        ("endtime", "9999-12-31T23:00:00-08:00", "the year 9999,"),
        ("id", "119718\nX-INJ:1", "`id`"),
        ("id", "1\x01\x1b", "`id`"),
        ("name", "x" * 5000, "`name` is longer than 2,000"),
        ("session", {"a": 1}, "`session` is a dict"),
    ],
)
def test_hostile_virtual_records_exit_3_naming_the_record(tmp_path, field, value, said):
    events = records()
    events[1][field] = value
    feed = write_feed(tmp_path, events)
    db = tmp_path / "lib.db"
    res = run(db, "ingest", str(feed), "--no-embed")
    assert res.exit_code == 3, res.output
    assert f"{feed}, event 2" in res.output and said in res.output, res.output
    assert "Fix:" in res.output and "Traceback" not in res.output
    assert not db.exists() or Library(str(db)).count() == 0


def test_hostile_virtual_feed_is_cleaned_and_its_javascript_url_reaches_no_calendar(tmp_path):
    events = records()
    events[0]["name"] = ESC + events[0]["name"] + INJECT
    events[0]["session"] += INJECT
    events[0]["room_name"] = "Hall\x1b[8m C"
    events[0]["paper_url"] = "javascript:alert(5)"
    events[0]["authors"][0]["fullname"] += "\x1b[2J"
    events[0]["abstract"] = "First line.\n\x1b[31mSecond\x00 line."
    feed = write_feed(tmp_path, events)
    db = tmp_path / "lib.db"
    ok(db, "ingest", str(feed), "--no-embed")
    with Library(str(db)) as lib:
        (p,) = [p for p in lib.papers() if "Coloring" in p.title]
        assert "\x1b" not in p.title + "".join(p.authors) + p.abstract and "\x00" not in p.abstract
        assert p.abstract == "First line. [31mSecond line." and not p.url.startswith("javascript")
        (e,) = lib.programme.events_for(p.id)
        assert e.room == "Hall[8m C" and e.paper_url == "" and "\n" not in e.session
        pid = p.id
    listing = ok(db, "list")
    assert "\x1b" not in listing
    ok(db, "like", pid)
    events = calendar_of(db)
    assert_only_our_properties(events)
    assert all("javascript" not in str(e.get("URL", "")) for e in events)


def test_a_spring_forward_gap_keeps_its_length_in_the_calendar(tmp_path):
    """America/Chicago skipped 02:00-03:00 on 2023-03-12: an event at 02:30-03:30 wall time is read as
    RFC 5545 reads a skipped time (the offset before the change: 02:30 CST = 08:30 UTC) and keeps its
    hour, instead of DTSTART = DTEND (02:30 CST and 03:30 CDT are the same instant)."""
    events = records()[:1]
    events[0].update(starttime="2023-03-12T02:30:00", endtime="2023-03-12T03:30:00")
    feed = write_feed(tmp_path, events, "neurips-2023-orals-posters.json", timezone="America/Chicago")
    db = tmp_path / "lib.db"
    ok(db, "ingest", str(feed), "--no-embed")
    with Library(str(db)) as lib:
        ok(db, "like", next(iter(lib.papers())).id)
    (ev,) = calendar_of(db)
    assert ev.decoded("DTSTART").isoformat() == "2023-03-12T08:30:00+00:00"
    assert ev.decoded("DTEND").isoformat() == "2023-03-12T09:30:00+00:00"


def test_a_fall_back_fold_takes_the_first_occurrence(tmp_path):
    """01:30 happened twice in Chicago on 2023-11-05: RFC 5545 takes the first (CDT, 06:30 UTC)."""
    events = records()[:1]
    events[0].update(starttime="2023-11-05T01:30:00", endtime="2023-11-05T02:30:00")
    feed = write_feed(tmp_path, events, "neurips-2023-orals-posters.json", timezone="America/Chicago")
    db = tmp_path / "lib.db"
    ok(db, "ingest", str(feed), "--no-embed")
    with Library(str(db)) as lib:
        ok(db, "like", next(iter(lib.papers())).id)
    (ev,) = calendar_of(db)
    assert ev.decoded("DTSTART").isoformat() == "2023-11-05T06:30:00+00:00"
    assert ev.decoded("DTEND").isoformat() == "2023-11-05T08:30:00+00:00"  # 02:30 CST


def test_uids_and_poster_numbers_are_bounded():
    assert uid("neurips 2025", "119718") == "neurips-2025-119718@paperatlas"
    assert uid("x\r\nATTENDEE:a;b", "1\n2") == "x-ATTENDEE:a-b-1-2@paperatlas"
    assert uid("pldi 2021", "pldi_talks1A:pldi.255") == "pldi-2021-pldi_talks1A:pldi.255@paperatlas"  # as before
    assert poster_number("#2504") == 2504
    assert poster_number("#" + "9" * 5000) is None  # never a 5,000-digit int


def test_the_ics_writer_escapes_what_an_older_library_stored_raw():
    """Events stored before feeds were cleaned may still hold line breaks and a `javascript:` link:
    the writer alone keeps them inside their values (a unit test of the writer: no library needed)."""
    from paperatlas.programme.ics import to_ics
    from paperatlas.programme.models import Agenda, AgendaItem, AgendaSession, Event, SessionInfo

    e = Event(
        event_id="1" + INJECT,
        feed="neurips 2025",
        paper_id="p1",
        name="Title" + INJECT,
        type="poster",
        session="S" + INJECT,
        session_id="s",
        start="2025-12-05T16:30:00-08:00",
        end="2025-12-05T19:30:00-08:00",
        room="Hall;C," + INJECT,
        poster_position="#1" + INJECT,
        url="javascript:alert(5)",
        paper_url="javascript:alert(6)\r\nURL:https://evil.example",
    )
    info = SessionInfo("s", e.session, e.feed, "poster", e.start, e.end, [e.room], 1)
    item = AgendaItem("p1", "Title" + INJECT, e, ["liked" + INJECT])
    text = to_ics(Agenda("me" + INJECT, [AgendaSession(info, [item])]), base_url="")
    cal = icalendar.Calendar.from_ical(text)
    assert not {"ATTENDEE", "X-INJ"} & {n for n, _ in cal.property_items(recursive=False)}
    (ev,) = cal.walk("VEVENT")
    assert_only_our_properties([ev])
    assert "URL" not in ev and "\n" not in str(ev["UID"]) and str(ev["LOCATION"]).startswith("Hall;C,")
    assert all(len(line.encode()) <= 75 for line in text.split("\r\n"))  # folded


def test_a_hostile_record_in_a_fetched_feed_is_exit_3_without_retries(tmp_path):
    from sourceserver import SourceServer

    path = "/static/virtual/data/neurips-2025-orals-posters.json"
    events = records()
    events[2]["poster_position"] = "#" + "9" * 5000
    srv = SourceServer({path: json.dumps({"count": 3, "results": events}).encode()}).start()
    try:
        db = tmp_path / "lib.db"
        args = ["fetch", "virtual", "neurips", "2025", "--base-url", srv.url, "--no-embed", "--retries", "2"]
        res = run(db, *args)
        assert res.exit_code == 3, res.output
        assert f"{srv.url}{path}, event 3 (id '114995')" in res.output and "Traceback" not in res.output
        assert len(srv.seen) == 1  # the same bytes fail the same way: not fetched again
        assert not db.exists() or Library(str(db)).count() == 0
    finally:
        srv.stop()
